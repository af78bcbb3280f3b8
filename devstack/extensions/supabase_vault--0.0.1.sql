-- Stand-in for Supabase Vault (https://github.com/supabase/vault), local stack only.
-- Same public API (vault.create_secret, vault.update_secret, vault.secrets,
-- vault.decrypted_secrets), but the secret is stored as given: the local stack holds only
-- throwaway values, and the real Vault's encryption needs pgsodium's server key.
create table vault.secrets (
    id uuid primary key default gen_random_uuid(),
    name text,
    description text not null default '',
    secret text not null,
    key_id uuid,
    nonce bytea,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create unique index secrets_name_idx on vault.secrets (name) where name is not null;

create view vault.decrypted_secrets as
select id, name, description, secret, secret as decrypted_secret, key_id, nonce, created_at, updated_at
  from vault.secrets;

create function vault.create_secret(
    new_secret text,
    new_name text default null,
    new_description text default '',
    new_key_id uuid default null
)
returns uuid
language sql
security definer
set search_path = ''
as $$
    insert into vault.secrets (secret, name, description, key_id)
    values (new_secret, new_name, coalesce(new_description, ''), new_key_id)
    returning id
$$;

create function vault.update_secret(
    secret_id uuid,
    new_secret text default null,
    new_name text default null,
    new_description text default null,
    new_key_id uuid default null
)
returns void
language sql
security definer
set search_path = ''
as $$
    update vault.secrets
       set secret = coalesce(new_secret, secret),
           name = coalesce(new_name, name),
           description = coalesce(new_description, description),
           key_id = coalesce(new_key_id, key_id),
           updated_at = now()
     where id = secret_id
$$;

revoke all on all tables in schema vault from public;
revoke all on all functions in schema vault from public;
