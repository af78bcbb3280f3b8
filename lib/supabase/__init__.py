"""Talking to the Supabase project: the keys' headers, the clients, RPC and table calls, Storage."""
