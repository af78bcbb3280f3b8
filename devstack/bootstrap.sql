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

-- Supabase Auth (GoTrue) keeps its users, sessions and refresh tokens in the auth schema of the
-- project's own database, owned by its role supabase_auth_admin, which the platform creates
-- before any migration of a project runs. These are the columns of GoTrue's tables that the Auth
-- stand-in (devstack/standins/auth/) and the admin screen's functions use, with GoTrue's names,
-- types and meaning, from github.com/supabase/auth migrations/: 00_init_auth_schema (users,
-- refresh_tokens), 20210710035447_alter_users (email_confirmed_at, phone),
-- 20210722035447_adds_confirmed_at, 20210927181326_add_refresh_token_parent,
-- 20220114185340_add_banned_until, 20220811173540_add_sessions_table (sessions,
-- refresh_tokens.session_id), 20221003041349_add_mfa_schema (aal_level),
-- 20221003041400_add_aal_and_factor_id_to_sessions, 20221020193600_add_sessions_user_id_index,
-- 20221021073300_add_refresh_tokens_session_id_revoked_index,
-- 20221114143122_add_session_not_after_column, 20221114143410_remove_parent_foreign_key_refresh_tokens,
-- 20230116124412_add_deleted_at, 20231027141322_add_session_refresh_columns,
-- 20240214120130_add_is_anonymous_column. The project's own migrations never create them.
-- pgcrypto: installed in extensions on every Supabase project; the stand-in hashes passwords
-- with its bcrypt (crypt/gen_salt('bf')), the hash GoTrue stores in encrypted_password.
create extension pgcrypto with schema extensions;
create role supabase_auth_admin login noinherit createrole;
create schema auth authorization supabase_auth_admin;
grant usage on schema extensions to supabase_auth_admin;
set role supabase_auth_admin;
create type auth.aal_level as enum ('aal1', 'aal2', 'aal3');
create table auth.users (
    instance_id uuid null,
    id uuid not null unique,
    aud varchar(255) null,
    "role" varchar(255) null,
    email varchar(255) null,
    encrypted_password varchar(255) null,
    email_confirmed_at timestamptz null,
    last_sign_in_at timestamptz null,
    raw_app_meta_data jsonb null,
    raw_user_meta_data jsonb null,
    created_at timestamptz null,
    updated_at timestamptz null,
    phone text null default null,
    phone_confirmed_at timestamptz null default null,
    confirmed_at timestamptz generated always as (least(users.email_confirmed_at, users.phone_confirmed_at)) stored,
    banned_until timestamptz null,
    deleted_at timestamptz null,
    is_anonymous boolean not null default false,
    -- The e-mailed links' token hashes and when they were sent (00_init_auth_schema), which
    -- /recover, /invite and /verify use.
    confirmation_token varchar(255) null,
    confirmation_sent_at timestamptz null,
    recovery_token varchar(255) null,
    recovery_sent_at timestamptz null,
    invited_at timestamptz null,
    constraint users_pkey primary key (id)
);
comment on table auth.users is 'Auth: Stores user login data within a secure schema.';
-- GoTrue's users_email_partial_key (20221215195500_modify_users_email_unique_index) is partial on
-- is_sso_user = false; there are no SSO users here.
create unique index users_email_partial_key on auth.users (email);
create table auth.sessions (
    id uuid not null,
    user_id uuid not null,
    created_at timestamptz null,
    updated_at timestamptz null,
    aal auth.aal_level null,
    not_after timestamptz,
    refreshed_at timestamp without time zone,
    constraint sessions_pkey primary key (id),
    constraint sessions_user_id_fkey foreign key (user_id) references auth.users(id) on delete cascade
);
comment on table auth.sessions is 'Auth: Stores session data associated to a user.';
comment on column auth.sessions.not_after is 'Auth: Not after is a nullable column that contains a timestamp after which the session should be regarded as expired.';
create index sessions_user_id_idx on auth.sessions (user_id);
create table auth.refresh_tokens (
    instance_id uuid null,
    id bigserial not null,
    "token" varchar(255) null,
    user_id varchar(255) null,
    revoked bool null,
    created_at timestamptz null,
    updated_at timestamptz null,
    parent varchar(255) null,
    session_id uuid null,
    constraint refresh_tokens_pkey primary key (id),
    constraint refresh_tokens_token_unique unique ("token"),
    constraint refresh_tokens_session_id_fkey foreign key (session_id) references auth.sessions(id) on delete cascade
);
comment on table auth.refresh_tokens is 'Auth: Store of tokens used to refresh JWT tokens once they expire.';
create index refresh_tokens_parent_idx on auth.refresh_tokens (parent);
create index refresh_tokens_session_id_revoked_idx on auth.refresh_tokens (session_id, revoked);
reset role;
-- The project's own functions (owned by postgres) read who is signed in; on hosted Supabase
-- postgres may read the auth tables but no longer change them.
grant usage on schema auth to postgres;
grant select on auth.users, auth.sessions, auth.refresh_tokens to postgres;

-- NOT on hosted Supabase: the mark of a test cluster, and its one way to empty the tables the tests
-- write. The record of received faxes (document_jobs_internal.record_tables) refuses TRUNCATE,
-- its owner's included; the guard lets a TRUNCATE through only where this schema exists and is
-- owned by a superuser, and only for a superuser who set document_jobs_test_cluster.resetting for
-- the statement, which reset_tables does. On hosted Supabase the superuser is the platform's and
-- postgres is not one: no project's role can make an object a superuser owns, so no project has
-- this schema, and there the guard refuses every TRUNCATE.
create schema document_jobs_test_cluster;
comment on schema document_jobs_test_cluster is
    'A test cluster''s (devstack/bootstrap.sql): its existence, owned by a superuser, is what lets reset_tables empty the record tables. Never on a hosted project.';
create function document_jobs_test_cluster.reset_tables(p_tables regclass[]) returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform pg_catalog.set_config('document_jobs_test_cluster.resetting', 'on', true);
    execute 'truncate ' || (select pg_catalog.string_agg(t::text, ', ') from unnest(p_tables) t) || ' cascade';
    perform pg_catalog.set_config('document_jobs_test_cluster.resetting', '', true);
end;
$$;
comment on function document_jobs_test_cluster.reset_tables(regclass[]) is
    'Empties p_tables, the record tables among them, in one TRUNCATE, with every table that refers to one of them (cascade: a new table of the flow is emptied too): the tests'' one reset (tests/support/database.py reset, bench/common.py).';
revoke all on function document_jobs_test_cluster.reset_tables(regclass[]) from public;
grant usage on schema document_jobs_test_cluster to postgres;
grant execute on function document_jobs_test_cluster.reset_tables(regclass[]) to postgres;
