"""Stand-ins for the products that cannot run on this machine (Supabase's gateway, PostgREST,
Storage and Auth; Resend; Vercel's function host; pg_net's background worker), each following the
product's current reference. The local stack starts each as a process of its own."""
