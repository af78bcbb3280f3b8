-- One row per received e-mail (a fax), and one per attachment stored in Storage.
-- Only service_role reaches them: RLS on with no policies, and the privileges that Supabase's
-- default privileges grant to anon and authenticated revoked ("from public" alone leaves them).

create table public.fax_received_emails (
    id uuid primary key default gen_random_uuid(),
    provider text not null default 'resend',
    provider_email_id text not null check (provider_email_id <> ''),
    webhook_id text,
    from_address text,
    to_addresses text[] not null default '{}',
    cc_addresses text[] not null default '{}',
    subject text,
    message_id text,
    received_at timestamptz,
    data jsonb not null,
    created_at timestamptz not null default now(),
    unique (provider, provider_email_id)
);

comment on table public.fax_received_emails is
    'One row per inbound e-mail; data is the webhook''s verbatim "data" object.';
comment on column public.fax_received_emails.received_at is
    'The provider''s created_at, when it parses as a timestamp.';

create table public.fax_received_email_attachments (
    id uuid primary key default gen_random_uuid(),
    fax_received_email_id uuid not null references public.fax_received_emails (id) on delete cascade,
    provider_attachment_id text not null check (provider_attachment_id <> ''),
    filename text,
    content_type text,
    size_bytes bigint not null check (size_bytes >= 0),
    sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
    bucket text not null,
    storage_path text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (fax_received_email_id, provider_attachment_id)
);

comment on column public.fax_received_email_attachments.filename is
    'The original file name (often Japanese); the storage path is built from ASCII ids only.';

alter table public.fax_received_emails enable row level security;
alter table public.fax_received_email_attachments enable row level security;

revoke all on table public.fax_received_emails, public.fax_received_email_attachments
    from public, anon, authenticated;
grant select, insert, update, delete on table public.fax_received_emails, public.fax_received_email_attachments
    to service_role;

-- The private bucket the attachments go to (Storage keeps buckets in the database).
insert into storage.buckets (id, name, public)
values ('fax-attachments', 'fax-attachments', false)
on conflict (id) do nothing;
