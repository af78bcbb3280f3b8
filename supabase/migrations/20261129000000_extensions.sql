-- As Supabase documents. On hosted projects pg_net and Vault are usually on already, and all
-- three statements are then no-ops.
create extension if not exists pg_cron with schema pg_catalog;
create extension if not exists pg_net with schema extensions;
create extension if not exists supabase_vault;
