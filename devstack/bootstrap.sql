-- Reproduces, on a fresh local cluster, what a new Supabase project has before its first
-- migration: the roles, their default privileges in schema public, the schemas the platform
-- owns and the extensions it installs. Run once by the cluster's superuser (supabase_admin,
-- as on hosted Supabase, where "postgres" is NOT a superuser).
\set ON_ERROR_STOP on

create role postgres login createrole createdb replication bypassrls;
create role anon nologin noinherit;
create role authenticated nologin noinherit;
create role service_role nologin noinherit bypassrls;
create role authenticator login noinherit;
grant anon, authenticated, service_role to authenticator;
grant anon, authenticated, service_role to postgres;

alter database postgres owner to postgres;
alter schema public owner to postgres;
grant usage on schema public to anon, authenticated, service_role;

-- The defaults that make every new table and function in public open to anon and
-- authenticated until a migration revokes it.
alter default privileges for role postgres in schema public
    grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges for role postgres in schema public
    grant all on functions to postgres, anon, authenticated, service_role;
alter default privileges for role postgres in schema public
    grant all on sequences to postgres, anon, authenticated, service_role;

create schema extensions;
grant usage on schema extensions to postgres, anon, authenticated, service_role;
alter database postgres set search_path = "$user", public, extensions;

-- Installed by the platform; the migrations' "create extension if not exists" are then no-ops,
-- as they are on hosted Supabase (where supautils lets postgres create the rest).
create extension pg_cron with schema pg_catalog;
grant usage on schema cron to postgres with grant option;
grant all on all tables in schema cron to postgres with grant option;
grant all on all functions in schema cron to postgres with grant option;
grant all on all sequences in schema cron to postgres with grant option;

create extension pg_net with schema extensions;
revoke all on all functions in schema net from public;
grant usage on schema net to postgres, service_role;
grant execute on all functions in schema net to postgres, service_role;
grant select on all tables in schema net to postgres, service_role;

create extension supabase_vault;
grant usage on schema vault to postgres, service_role;
grant select on vault.decrypted_secrets, vault.secrets to postgres, service_role;
grant execute on all functions in schema vault to postgres, service_role;

create extension pgtap with schema extensions;

-- Supabase Storage keeps its buckets in the database; migrations create buckets with an insert.
-- The Storage stand-in (devstack/storage.py) reads this table.
create schema storage;
grant usage on schema storage to postgres, anon, authenticated, service_role;
create table storage.buckets (
    id text primary key,
    name text not null unique,
    owner uuid,
    public boolean not null default false,
    file_size_limit bigint,
    allowed_mime_types text[],
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
grant all on storage.buckets to postgres, service_role;
