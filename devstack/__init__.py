"""The local stack: a throwaway PostgreSQL with Supabase's roles, and stand-ins for the parts
of Supabase and Vercel that cannot run on this machine. Development and tests only; never
deployed (nothing in lib/ or api/ imports it)."""
