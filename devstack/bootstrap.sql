-- Reproduces, on a fresh local cluster, what a new Supabase project has before its first
-- migration: the roles, their privileges, the schemas the platform owns and the extensions it
-- installs, as a database built from Supabase's own init scripts and migrations has them. Run
-- once by the cluster's superuser (supabase_admin, as on hosted Supabase, where "postgres" is
-- NOT a superuser). Where this file is more generous than hosted Supabase, a test passes here
-- and the same code fails there: keep it exactly as strict.
\set ON_ERROR_STOP on

create role postgres login createrole createdb replication bypassrls;
-- The API roles inherit, as on hosted Supabase; only authenticator, which PostgREST logs in as,
-- does not (it takes a role per request with SET ROLE).
create role anon nologin;
create role authenticated nologin;
create role service_role nologin bypassrls;
create role authenticator login noinherit;
grant anon, authenticated, service_role to authenticator;
grant anon, authenticated, service_role to postgres;
grant pg_read_all_data, pg_monitor, pg_signal_backend to postgres;

alter database postgres owner to postgres;
alter schema public owner to postgres;
grant usage on schema public to anon, authenticated, service_role;

-- The defaults that make every new table and function in public open to anon and
-- authenticated (and service_role) until a migration revokes it.
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

-- pg_cron: postgres schedules and unschedules through the functions, and may only read the
-- job table (an UPDATE of cron.job is refused on hosted Supabase).
create extension pg_cron with schema pg_catalog;
grant usage on schema cron to postgres with grant option;
grant all on all tables in schema cron to postgres with grant option;
grant all on all functions in schema cron to postgres with grant option;
grant all on all sequences in schema cron to postgres with grant option;
revoke all on table cron.job from postgres;
grant select on table cron.job to postgres with grant option;

-- pg_net: open to everyone, as pg_net itself leaves it; what matters is who may call the
-- functions that call it.
create extension pg_net with schema extensions;
grant usage on schema net to public;
grant execute on all functions in schema net to public;
grant all on all tables in schema net to public;
grant all on all sequences in schema net to public;

-- Vault: postgres only. service_role gets "permission denied for schema vault": secrets are
-- stored by an operator (as postgres) and read by security definer functions owned by postgres.
create extension supabase_vault;
grant usage on schema vault to postgres with grant option;
grant select, delete, truncate, references on vault.secrets, vault.decrypted_secrets to postgres with grant option;
grant execute on function vault.create_secret(text, text, text, uuid), vault.update_secret(uuid, text, text, text, uuid)
    to postgres with grant option;

create extension pgtap with schema extensions;
-- What `supabase db lint` checks the functions with. On hosted Supabase the CLI creates it (supautils
-- lets postgres); here only a superuser can, so it is there before the CLI asks.
create extension plpgsql_check with schema extensions;
-- pg_trgm (the admin screen's text search): on hosted Supabase supautils creates it, as the
-- superuser, when a migration asks; here only a superuser can, so it is there before the
-- migration's "create extension if not exists" asks.
create extension pg_trgm with schema extensions;

-- Supabase Storage keeps its buckets in the database, in a table owned by Storage's own role;
-- migrations create buckets with an insert. The Storage stand-in (devstack/standins/storage.py) reads it.
create role supabase_storage_admin nologin noinherit createrole;
create schema storage;
grant all on schema storage to supabase_storage_admin with grant option;
grant usage on schema storage to postgres with grant option;
grant usage on schema storage to anon, authenticated, service_role;

create type storage.buckettype as enum ('STANDARD', 'ANALYTICS');
create table storage.buckets (
    id text not null primary key,
    name text not null,
    owner uuid,
    created_at timestamptz default now(),
    updated_at timestamptz default now(),
    public boolean default false,
    avif_autodetection boolean default false,
    file_size_limit bigint,
    allowed_mime_types text[],
    owner_id text,
    type storage.buckettype not null default 'STANDARD'
);
create unique index bname on storage.buckets (name);
comment on column storage.buckets.owner is 'Field is deprecated, use owner_id instead';
alter table storage.buckets enable row level security;

-- Deleting a bucket's row would orphan its objects: Storage refuses it unless its own API set
-- storage.allow_delete_query for the transaction.
create function storage.protect_delete() returns trigger
language plpgsql
as $$
begin
    if coalesce(current_setting('storage.allow_delete_query', true), 'false') != 'true' then
        raise exception 'Direct deletion from storage tables is not allowed. Use the Storage API instead.'
            using hint = 'This prevents accidental data loss from orphaned objects.',
                  errcode = '42501';
    end if;
    return null;
end;
$$;
create trigger protect_buckets_delete before delete on storage.buckets
    for each statement execute function storage.protect_delete();
alter table storage.buckets owner to supabase_storage_admin;
alter function storage.protect_delete() owner to supabase_storage_admin;
grant all on table storage.buckets to postgres with grant option;
grant all on table storage.buckets to anon, authenticated, service_role;
