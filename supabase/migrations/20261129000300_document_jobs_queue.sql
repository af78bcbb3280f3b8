-- The queue's core: enqueue, claim, and the writes of the worker that holds a job (extend,
-- complete, fail, release), and the manual retry.
--
-- The functions callers use are in public: security definer with an empty search_path (every
-- name is schema-qualified), EXECUTE for service_role only. Their helpers live in schema
-- document_jobs_internal, which PostgREST does not expose and on which no API role has any
-- privilege: only their owner runs them, from inside the public functions.
--
-- Every write a worker makes after its claim names (job id, generation) and changes the row
-- only while that generation still holds the job (status running); "false" tells the worker it
-- has lost the job and must stop.

create schema document_jobs_internal;
comment on schema document_jobs_internal is
    'Helpers of the document_jobs functions: not exposed by PostgREST, callable by their owner only.';
revoke all on schema document_jobs_internal from public;

-- Bad arguments are refused with SQLSTATE 22023 (invalid_parameter_value): PostgREST answers
-- them with HTTP 400 and this message.
create function document_jobs_internal.require(p_ok boolean, p_message text)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    if p_ok is not true then
        raise exception using errcode = '22023', message = p_message;
    end if;
end;
$$;

-- The arguments every write of a worker names.
create function document_jobs_internal.require_holder(p_job_id uuid, p_generation int)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require(p_generation is not null, 'p_generation must not be null');
end;
$$;

-- A lease is how long a dead worker's job waits before it can be claimed again. A live worker
-- extends its lease as it goes (before every attachment), and a worker invocation lives 300 s
-- (maxDuration; 800 s is the most Vercel allows): a lease beyond an hour only parks the job of
-- a worker that died, and one of centuries loses it.
create function document_jobs_internal.require_lease(p_lease interval)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(
        p_lease > interval '0' and p_lease <= interval '1 hour', 'p_lease must be more than 0 and at most 1 hour');
end;
$$;

-- How long a failed or released job waits before its next attempt (a provider's retry-after, or
-- a delay chosen by the worker). A day at most: a longer wait parks the job where no one is
-- looking for it; a provider that asks for more (a monthly quota) is simply asked again then.
create function document_jobs_internal.require_retry_after(p_retry_after interval)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(
        p_retry_after is null or p_retry_after between interval '0' and interval '1 day',
        'p_retry_after must be between 0 and 1 day');
end;
$$;

-- A kind must be one of document_job_kinds.
create function document_jobs_internal.require_kind(p_kind text)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(
        exists (select 1 from public.document_job_kinds k where k.kind = p_kind),
        format('unknown job kind %L (see table document_job_kinds)', p_kind));
end;
$$;

-- Delay before the next attempt after the n-th failed one: 1, 5, 15, 60 times backoff_base (a
-- minute), ±10 % jitter so that jobs that failed together (a provider outage) do not all retry
-- in the same second.
create function document_jobs_internal.backoff(p_failed_attempt int)
returns interval
language sql
volatile
set search_path = ''
as $$
    select s.backoff_base
           * (case
                  when p_failed_attempt <= 1 then 1
                  when p_failed_attempt = 2 then 5
                  when p_failed_attempt = 3 then 15
                  else 60
              end)
           * (0.9 + 0.2 * random())
      from public.document_jobs_settings s
$$;

-- The sweep: running jobs whose lease has passed with no attempt left would otherwise stay
-- running forever (they are not claimable): they end in failed. SKIP LOCKED: concurrent
-- sweepers never wait for each other, and whoever holds a row sweeps it. PL/pgSQL rather than
-- SQL: it keeps its plan, where a SQL function with SET is planned again on every call.
create function document_jobs_internal.fail_expired()
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_failed int;
begin
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           last_error_code = 'lease_expired',
           last_error_message = 'the lease of the last attempt expired before the job finished'
     where j.id = any (array(
               select e.id
                 from public.document_jobs e
                where e.status = 'running'
                  and e.lease_until < now()
                  and e.attempts >= e.max_attempts
                  for update skip locked));
    get diagnostics v_failed = row_count;
    return v_failed;
end;
$$;

create function public.enqueue_document_job(
    p_kind text,
    p_fax_received_email_id uuid,
    p_kick boolean default false
)
returns table (job_id uuid, created boolean)
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id uuid;
begin
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require(
        p_fax_received_email_id is not null, 'p_fax_received_email_id must not be null');
    if not exists (select 1 from public.fax_received_emails e where e.id = p_fax_received_email_id) then
        raise exception using errcode = 'foreign_key_violation',
            message = format('fax_received_emails %s does not exist', p_fax_received_email_id);
    end if;
    loop
        insert into public.document_jobs (kind, fax_received_email_id)
        values (p_kind, p_fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing
        returning id into v_id;
        if v_id is not null then
            if p_kick then
                -- Defined with the rest of calling the worker, in the next migration.
                perform document_jobs_internal.post_worker(1);
            end if;
            return query select v_id, true;
            return;
        end if;

        select j.id into v_id
          from public.document_jobs j
         where j.kind = p_kind and j.fax_received_email_id = p_fax_received_email_id
           and j.status in ('queued', 'running');
        if v_id is not null then
            return query select v_id, false;
            return;
        end if;
        -- The live job finished between the two statements: insert again.
    end loop;
end;
$$;

create function public.claim_document_jobs(
    p_kind text,
    p_limit int default 1,
    p_lease interval default '5 minutes'
)
returns setof public.document_jobs
language plpgsql
security definer
set search_path = ''
-- The claim's generic plan (the claim index, then the primary key) is the right one whatever
-- p_limit is: keep it rather than plan the statement again on every call.
set plan_cache_mode = force_generic_plan
as $$
begin
    perform document_jobs_internal.require_kind(p_kind);
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    perform document_jobs_internal.require(p_limit between 1 and 100, 'p_limit must be between 1 and 100');
    perform document_jobs_internal.require_lease(p_lease);
    perform document_jobs_internal.fail_expired();

    -- Postgres has no UPDATE ... LIMIT: pick and lock in a sub-select. SKIP LOCKED lets
    -- concurrent claimers pass each other's rows; a row claimed and committed by another
    -- worker since our snapshot is re-checked against the view's condition and dropped.
    return query
    update public.document_jobs j
       set status = 'running',
           attempts = j.attempts + 1,
           generation = j.generation + 1,
           lease_until = now() + p_lease,
           started_at = coalesce(j.started_at, now())
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
end;
$$;

create function public.extend_document_job_lease(
    p_job_id uuid,
    p_generation int,
    p_lease interval default '5 minutes'
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require_lease(p_lease);
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

create function public.complete_document_job(p_job_id uuid, p_generation int)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    update public.document_jobs j
       set status = 'completed',
           lease_until = null,
           finished_at = now()
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

create function public.fail_document_job(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_job public.document_jobs;
    v_retry boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(nullif(p_error_code, '') is not null, 'p_error_code must not be empty');
    perform document_jobs_internal.require(p_retryable is not null, 'p_retryable must not be null');
    perform document_jobs_internal.require_retry_after(p_retry_after);

    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return false;
    end if;

    v_retry := p_retryable and v_job.attempts < v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_retry then 'queued' else 'failed' end,
           run_after = case
                           when v_retry then now() + greatest(document_jobs_internal.backoff(v_job.attempts),
                                                              coalesce(p_retry_after, interval '0'))
                           else j.run_after
                       end,
           lease_until = null,
           finished_at = case when v_retry then null else now() end,
           last_error_code = p_error_code,
           last_error_message = left(p_error_message, 4000)
     where j.id = p_job_id;
    return true;
end;
$$;

-- For failures that are not the job's fault (the time budget ran out, the API key lacks a
-- permission): back to queued without spending an attempt.
create function public.release_document_job(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0 seconds',
    p_error_code text default null,
    p_error_message text default null
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require_retry_after(p_retry_after);
    update public.document_jobs j
       set status = 'queued',
           attempts = greatest(j.attempts - 1, 0),
           run_after = now() + coalesce(p_retry_after, interval '0'),
           lease_until = null,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case when p_error_code is null then j.last_error_message
                                     else left(p_error_message, 4000) end
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

-- Manual re-run of a failed job (admin tools). The unique index still guards the race of two
-- concurrent retries; its violation is turned into a message that says what to do.
create function public.retry_document_job(p_job_id uuid)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    update public.document_jobs j
       set status = 'queued',
           attempts = 0,
           run_after = now(),
           lease_until = null,
           finished_at = null
     where j.id = p_job_id and j.status = 'failed';
    return found;
exception
    when unique_violation then
        raise exception using
            errcode = 'unique_violation',
            message = format('document job %s cannot be retried: another job for the same target is already queued or running', p_job_id),
            hint = 'Wait for that job to finish, or cancel it, then retry.';
end;
$$;

-- Supabase's default privileges granted EXECUTE on the functions in public to anon,
-- authenticated and service_role, and Postgres grants it to PUBLIC everywhere: take it all
-- away, then give service_role what it calls. The helpers are for nobody but their owner.
revoke all on function
    public.enqueue_document_job(text, uuid, boolean),
    public.claim_document_jobs(text, int, interval),
    public.extend_document_job_lease(uuid, int, interval),
    public.complete_document_job(uuid, int),
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text),
    public.retry_document_job(uuid)
from public, anon, authenticated;
grant execute on function
    public.enqueue_document_job(text, uuid, boolean),
    public.claim_document_jobs(text, int, interval),
    public.extend_document_job_lease(uuid, int, interval),
    public.complete_document_job(uuid, int),
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text),
    public.retry_document_job(uuid)
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
