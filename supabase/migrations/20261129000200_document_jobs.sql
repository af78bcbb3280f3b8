-- The job queue: its tables, indexes and the one view that defines "claimable". The functions
-- that move jobs through their states are in the next migration.

-- The kinds of job there are: a new kind is a row added by a migration (and a worker for it).
create table public.document_job_kinds (
    kind text primary key,
    description text not null
);
insert into public.document_job_kinds (kind, description)
values ('fetch_email', 'fetch a received e-mail''s attachments from Resend into Storage');

create table public.document_jobs (
    id uuid primary key default gen_random_uuid(),
    kind text not null references public.document_job_kinds (kind),
    fax_received_email_id uuid references public.fax_received_emails (id) on delete cascade,
    status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
    attempts int not null default 0 check (attempts >= 0),
    max_attempts int not null default 5 check (max_attempts > 0),
    run_after timestamptz not null default now(),
    lease_until timestamptz,
    generation int not null default 0,
    last_error_code text,
    last_error_message text,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz,
    -- A lease means something only while running; a stale one elsewhere would be a trap.
    constraint document_jobs_lease_only_while_running check ((status = 'running') = (lease_until is not null))
);

comment on column public.document_jobs.generation is
    'Fencing token: +1 on every claim. Every later write by a worker names it and changes nothing once it no longer matches.';
comment on column public.document_jobs.attempts is
    'Claims that counted: +1 per claim, -1 when a job is released through no fault of its own.';

-- At most one live job per target: enqueueing twice returns the same job.
create unique index document_jobs_one_active_per_target
    on public.document_jobs (kind, fax_received_email_id)
    where status in ('queued', 'running');

-- A claim reads the head of this index: its cost stays flat however long the backlog or the
-- history grows (finished jobs are not in it at all).
create index document_jobs_claim
    on public.document_jobs (kind, run_after, created_at)
    where status in ('queued', 'running');

-- Finding expired leases reads only running jobs.
create index document_jobs_lease
    on public.document_jobs (lease_until)
    where status = 'running';

-- The purge reads only completed jobs, oldest first.
create index document_jobs_completed
    on public.document_jobs (finished_at)
    where status = 'completed';

-- THE definition of "claimable", used by claim_document_jobs (which locks through it) and by
-- invoke_document_jobs (which counts through it), so that the two can never disagree.
-- A running job's run_after is always in the past (it was claimable when it was claimed), so
-- "run_after <= now()" holds for both arms and bounds the index scan.
create view public.document_jobs_claimable as
select *
  from public.document_jobs j
 where j.status in ('queued', 'running')
   and j.run_after <= now()
   and j.attempts < j.max_attempts
   and (j.status = 'queued' or j.lease_until < now());

-- One row of settings an operator may change by hand (the operations migration adds the
-- retention, with a function to set it). backoff_base scales the backoff schedule (1, 5, 15, 60
-- times it); tests and the chaos run shorten it instead of changing code. At most an hour, so
-- the longest backoff is 60 hours: a longer one parks the job where no one is waiting for it.
create table public.document_jobs_settings (
    singleton boolean primary key default true check (singleton),
    backoff_base interval not null default '1 minute'
        check (backoff_base > interval '0' and backoff_base <= interval '1 hour')
);
insert into public.document_jobs_settings default values;

alter table public.document_jobs enable row level security;
alter table public.document_job_kinds enable row level security;
alter table public.document_jobs_settings enable row level security;

revoke all on table public.document_jobs, public.document_jobs_claimable, public.document_job_kinds,
    public.document_jobs_settings from public, anon, authenticated;
grant select, insert, update, delete on table public.document_jobs to service_role;
grant select on table public.document_jobs_claimable, public.document_job_kinds, public.document_jobs_settings
    to service_role;
