-- What an operator does from the admin screen (and, later, the CLI): retry a failed job, cancel a
-- live one, or either for every job a filter matches; each recorded in the audit with who, when,
-- what, the filter, how many jobs and the reason.
--
-- Retrying and cancelling are defined once, for a set of jobs (document_jobs_internal.requeue_failed
-- and cancel_live); retry_document_job and cancel_document_job (the CLI's) now call them too.
--
-- A bulk action is two calls: prepare_document_jobs_bulk_action counts the jobs the filter matches
-- now and keeps their ids (a snapshot: the confirmation shows that exact count, and the action
-- applies to exactly those jobs, never to the filter run again later); then
-- apply_document_jobs_bulk_action works through the snapshot in bounded batches, one transaction
-- each (at most 500 jobs by default, 1,000 at most), called until it answers done. It is idempotent:
-- a job is changed at most once whatever is called again, and the audit row is written once, by the
-- first call. Jobs it could not change are kept with the reason.

-- The audit: one row per operator action, never changed afterwards.
create table public.document_jobs_audit (
    id bigint generated always as identity primary key,
    at timestamptz not null default now(),
    -- The operator as Supabase Auth knows them (auth.users.id, and the e-mail at the time).
    actor_id uuid not null,
    actor_email text,
    action text not null check (action in ('retry', 'cancel', 'bulk_retry', 'bulk_cancel')),
    -- A single job's action names the job; a bulk action names its filter and its snapshot.
    job_id uuid,
    filter jsonb,
    job_count int not null check (job_count >= 0),
    reason text check (length(reason) <= 500),
    bulk_action_id uuid unique
);

comment on table public.document_jobs_audit is
    'Every operator action on jobs (admin screen, CLI): who, when, what, the filter, how many jobs, the reason. Append-only.';

alter table public.document_jobs_audit enable row level security;
revoke all on table public.document_jobs_audit from public, anon, authenticated, service_role;
grant select on table public.document_jobs_audit to service_role;

create function document_jobs_internal.refuse_audit_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_jobs_audit is append-only: its rows are never updated or deleted';
end;
$$;

create trigger document_jobs_audit_append_only
    before update or delete on public.document_jobs_audit
    for each statement execute function document_jobs_internal.refuse_audit_change();

-- A bulk action's snapshot: the filter it was counted with, and the jobs counted.
create table document_jobs_internal.bulk_actions (
    id uuid primary key default gen_random_uuid(),
    action text not null check (action in ('retry', 'cancel')),
    filter jsonb not null,
    actor_id uuid not null,
    actor_email text,
    job_count int not null default 0,
    changed int not null default 0,
    skipped int not null default 0,
    reason text,
    prepared_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
);

create table document_jobs_internal.bulk_action_jobs (
    bulk_action_id uuid not null references document_jobs_internal.bulk_actions (id) on delete cascade,
    -- No foreign key: a job may be purged while the action's record of it stays.
    job_id uuid not null,
    outcome text check (outcome in ('changed', 'skipped')),
    -- Why a job was not changed: not_failed, another_live_job, another_job_of_the_same_email
    -- (retry); not_live (cancel); job_deleted (either).
    reason text,
    applied_at timestamptz,
    primary key (bulk_action_id, job_id)
);

-- The next batch is read from here: its cost does not grow as the action proceeds.
create index bulk_action_jobs_pending
    on document_jobs_internal.bulk_action_jobs (bulk_action_id, job_id)
    where outcome is null;

-- failed -> queued with its attempts and time-budget releases reset (a retry by
-- hand starts the count afresh, as in 20261201002100), for every job of p_job_ids that is failed; the ids it
-- changed. The unique index on live jobs refuses a second live job for the same e-mail
-- (unique_violation): callers decide what that means.
create function document_jobs_internal.requeue_failed(p_job_ids uuid[])
returns setof uuid
language plpgsql
set search_path = ''
as $$
begin
    return query
    update public.document_jobs j
       set status = 'queued',
           attempts = 0,
           budget_releases = 0,
           run_after = now(),
           lease_until = null,
           finished_at = null
     where j.id = any (p_job_ids) and j.status = 'failed'
    returning j.id;
end;
$$;

-- queued/running -> failed with last_error_code 'cancelled', for every job of p_job_ids that is
-- live; the ids it changed. A running job's worker learns it at its next fenced write.
create function document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text)
returns setof uuid
language plpgsql
set search_path = ''
as $$
begin
    return query
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           last_error_code = 'cancelled',
           last_error_message = coalesce(left(p_reason, 4000), 'cancelled by an operator')
     where j.id = any (p_job_ids) and j.status in ('queued', 'running')
    returning j.id;
end;
$$;

-- As in 20261201002100, through requeue_failed.
create or replace function public.retry_document_job(p_job_id uuid)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    return v_retried > 0;
exception
    when unique_violation then
        raise exception using
            errcode = 'unique_violation',
            message = format('document job %s cannot be retried: another job for the same target is already queued or running', p_job_id),
            hint = 'Wait for that job to finish, or cancel it, then retry.';
end;
$$;

-- As in 20261129000600, through cancel_live.
create or replace function public.cancel_document_job(p_job_id uuid, p_reason text default null)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], p_reason);
    return v_cancelled > 0;
end;
$$;

-- As in 20261130002100, but for the jobs a bulk cancel cancels: that is one decision of one
-- operator, in the audit once, and one alert per job would flood the operators' channel with
-- their own action. apply_document_jobs_bulk_action sets document_jobs.bulk_action for its
-- transaction only; every other failure alerts as before, cancellations included.
create or replace function document_jobs_internal.alert_job_failed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.last_error_code = 'cancelled' and current_setting('document_jobs.bulk_action', true) = 'on' then
        return null;
    end if;
    begin
        perform document_jobs_internal.post_alert(document_jobs_internal.job_failed_alert(new));
    exception
        when others then
            raise warning 'document jobs: the failure alert of job % could not be queued: %', new.id, sqlerrm;
    end;
    return null;
end;
$$;

-- The actor and the reason every action names.
create function document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.require(
        not p_reason_required or nullif(btrim(p_reason), '') is not null, 'p_reason must not be empty');
    perform document_jobs_internal.require(
        p_reason is null or length(p_reason) <= 500, 'p_reason must be at most 500 characters');
end;
$$;

-- One job, from the admin screen: retried (and a worker started for it, as the webhook's kick
-- does), recorded in the audit. {"changed": true} or {"changed": false, "reason": ...}.
create function public.admin_retry_document_job(
    p_job_id uuid,
    p_actor_id uuid,
    p_actor_email text default null,
    p_reason text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, false);
    begin
        select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    exception
        when unique_violation then
            return jsonb_build_object('changed', false, 'reason', 'another_live_job');
    end;
    if v_retried = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_failed' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'retry', p_job_id, 1, nullif(btrim(p_reason), ''));
    perform document_jobs_internal.post_worker(1);
    return jsonb_build_object('changed', true);
end;
$$;

-- One job, from the admin screen: cancelled with a reason, recorded in the audit.
create function public.admin_cancel_document_job(
    p_job_id uuid,
    p_actor_id uuid,
    p_actor_email text,
    p_reason text
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], btrim(p_reason));
    if v_cancelled = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_live' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'cancel', p_job_id, 1, btrim(p_reason));
    return jsonb_build_object('changed', true);
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
revoke all on function
    public.admin_retry_document_job(uuid, uuid, text, text),
    public.admin_cancel_document_job(uuid, uuid, text, text)
from public, anon, authenticated;
grant execute on function
    public.admin_retry_document_job(uuid, uuid, text, text),
    public.admin_cancel_document_job(uuid, uuid, text, text)
to service_role;
