-- Attempt history: one row per claim of a job, written when that attempt ends (completed,
-- retried, released, failed, lease expired, cancelled), never updated afterwards.
--
-- It is kept by triggers on document_jobs rather than by the queue functions: every state
-- change of a job is an UPDATE of its row, whichever function (or operator) makes it, so the
-- history stays complete when those functions are rewritten, and no caller can forget it.
--
-- Cost: a claim runs one small BEFORE trigger (two columns of the same row, no extra row); the
-- end of an attempt inserts one row. A lease extension, the most frequent write, fires nothing
-- (the triggers' WHEN clauses are evaluated without calling any function).

-- When the current attempt started, and which worker invocation made the claim. Kept on the job
-- row (set by the claim trigger below) because the attempt row is written only when the attempt
-- ends, possibly by someone else: a claimer that finds the lease passed, or the sweep.
alter table public.document_jobs
    add column attempt_started_at timestamptz,
    add column attempt_invocation_id text;

comment on column public.document_jobs.attempt_started_at is
    'When the current (or last) attempt was claimed; set by a trigger on every claim.';
comment on column public.document_jobs.attempt_invocation_id is
    'The worker invocation that made the current (or last) claim: its x-document-jobs-invocation request header.';

create table public.document_job_attempts (
    job_id uuid not null references public.document_jobs (id) on delete cascade,
    -- The claim's generation: every claim has its own, so (job, generation) names one attempt.
    generation int not null,
    -- The job's attempts count during this attempt (1 = first; it restarts after a manual retry).
    attempt int not null,
    started_at timestamptz,
    -- When the outcome was recorded; for lease_expired, when the lease passed.
    finished_at timestamptz not null,
    outcome text not null
        check (outcome in ('completed', 'retried', 'released', 'failed', 'lease_expired', 'cancelled')),
    error_code text,
    error_message text,
    invocation_id text,
    recorded_at timestamptz not null default now(),
    primary key (job_id, generation)
);

comment on table public.document_job_attempts is
    'Append-only history of every claim of a job and how it ended. Deleted with its job (the retention of completed jobs).';

alter table public.document_job_attempts enable row level security;
revoke all on table public.document_job_attempts from public, anon, authenticated, service_role;
-- Read-only for service_role (the admin CLI): rows are written by the trigger alone.
grant select on table public.document_job_attempts to service_role;

-- Append-only even for the table's owner: a history that can be rewritten is not one.
create function document_jobs_internal.refuse_attempt_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_job_attempts is append-only: its rows are never updated';
end;
$$;

create trigger document_job_attempts_append_only
    before update on public.document_job_attempts
    for each statement execute function document_jobs_internal.refuse_attempt_update();

-- On every claim (generation + 1): the attempt's start, and the invocation that claimed it.
-- Real PostgREST gives SQL the request's headers as JSON with lowercased names in the setting
-- request.headers; the worker sends its Vercel request id in x-document-jobs-invocation. Outside
-- a PostgREST request the setting is unset (null) or empty (''), and the id stays null.
create function document_jobs_internal.note_claim()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    new.attempt_started_at := now();
    new.attempt_invocation_id := left(
        nullif(current_setting('request.headers', true), '')::jsonb ->> 'x-document-jobs-invocation', 200);
    return new;
end;
$$;

create trigger document_jobs_note_claim
    before update on public.document_jobs
    for each row
    when (new.generation is distinct from old.generation)
    execute function document_jobs_internal.note_claim();

-- When an attempt ends: the row of a running job leaves running, or is claimed again (its lease
-- passed). The outcome is read from the transition, the same whichever function made it:
--   running -> completed                              completed
--   running -> queued, attempts unchanged             retried (transient failure, backoff)
--   running -> queued, attempts - 1                   released (not the job's fault)
--   running -> failed, last_error_code lease_expired  lease_expired (the sweep: no attempt left)
--   running -> failed, last_error_code cancelled      cancelled (an operator)
--   running -> failed, otherwise                      failed (permanent, or attempts used up)
--   running -> running, generation + 1                lease_expired (claimed again)
-- Security definer: service_role may update document_jobs directly, and still must not be able
-- to write history. It never raises on a duplicate (on conflict do nothing): a queue state change
-- must not fail over its history.
create function document_jobs_internal.record_attempt()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_outcome text;
    v_lease_passed boolean;
begin
    v_outcome := case
        when new.status = 'running' then 'lease_expired'
        when new.status = 'completed' then 'completed'
        when new.status = 'queued' and new.attempts < old.attempts then 'released'
        when new.status = 'queued' then 'retried'
        when new.last_error_code in ('lease_expired', 'cancelled') then new.last_error_code
        else 'failed'
    end;
    v_lease_passed := v_outcome = 'lease_expired';
    insert into public.document_job_attempts
           (job_id, generation, attempt, started_at, finished_at, outcome, error_code, error_message, invocation_id)
    values (old.id, old.generation, old.attempts, old.attempt_started_at,
            case when v_lease_passed then least(old.lease_until, now()) else now() end,
            v_outcome,
            case when v_lease_passed then 'lease_expired' when v_outcome <> 'completed' then new.last_error_code end,
            case when v_lease_passed then 'the lease passed before the attempt finished (the worker died or was stopped)'
                 when v_outcome <> 'completed' then new.last_error_message end,
            old.attempt_invocation_id)
    on conflict (job_id, generation) do nothing;
    return null;
end;
$$;

create trigger document_jobs_record_attempt
    after update on public.document_jobs
    for each row
    when (old.status = 'running' and (new.status <> 'running' or new.generation <> old.generation))
    execute function document_jobs_internal.record_attempt();

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
