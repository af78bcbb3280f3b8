-- One signal for "the lease is lost", the attempt's outcome stored, one owner per bound.
--
-- 1. Every fenced call (extend, complete, complete and claim the next, record an attachment,
--    fail, release, start a fetch_email job, and the ..._and_follow_up forms of complete, fail
--    and release) gets a _v2 function with ONE answer shape, a jsonb object:
--        {"held": true,  "state": "<the job's status after the call>"}   the call was applied
--        {"held": false, "state": null}                                   the job is no longer ours
--    complete_document_job_and_claim_next_v2 adds "next_job" (as a claim of 1, or null) to either:
--    the next job is claimed even when the completed one was lost; the ..._and_follow_up_v2
--    writes add "follow_ups" to either; start_fetch_email_v2 adds what the job needs when held.
--    Before, the lost lease was false (extend, complete, record), null (fail, release,
--    start_fetch_email), {"completed": false} or {"left_in": null, ...}.
--    The old names stay, as thin wrappers answering exactly as before, because a deploy is not
--    atomic: `supabase db push` runs first, and a worker of the previous deploy keeps calling
--    them until the new Vercel deploy replaces it. A later migration drops them (README: the
--    upgrade order).
-- 2. The attempt's outcome is written by the function that ends the attempt, in
--    document_jobs.attempt_outcome, and the history trigger copies it; it no longer infers it
--    from last_error_code ('cancelled', 'lease_expired'). Existing jobs get it from their history.
-- 3. The bounds and timings the functions share are defined once, in document_jobs_internal.
--    limits(); the next attempt's time is decided in one function, next_run_after(). The unused
--    require_lease goes.

-- The bounds. An immutable function without arguments that returns a named composite type (not
-- a record: the planner cannot fold those) is folded into a constant once per statement plan, so
-- reading them costs nothing per call. tests/test_constants.py pins the Python side
-- (lib/queue.py, lib/failures.py, lib/worker.py, lib/supabase_client.py) to them.
create type document_jobs_internal.limits as (
    lease_max interval,
    lease_rule text,
    retry_after_max interval,
    retry_after_rule text,
    free_budget_releases int,
    jobs_per_invocation int,
    invocation_header text
);
create function document_jobs_internal.limits()
returns document_jobs_internal.limits
language sql
immutable
set search_path = ''
as $$
    select
        -- a live worker renews its lease with every attachment, and an invocation lives 300 s:
        -- a longer lease only parks a dead worker's job
        interval '1 hour',
        'p_lease must be more than 0 and at most 1 hour',
        -- a provider asking for more (a monthly quota) is asked again after a day
        interval '1 day',
        'p_retry_after must be between 0 and 1 day',
        -- time-budget releases in a row (no attachment stored between them) that give their
        -- attempt back; from the next one on, each counts
        3,
        -- what one worker invocation handles at most (the fan-out divides by it)
        3,
        -- the request header (lowercased, as PostgREST gives request.headers) naming the invocation
        'x-document-jobs-invocation'
$$;
comment on function document_jobs_internal.limits() is
    'The bounds and timings the queue functions share, each defined once (tests/test_constants.py pins Python to them).';

-- When the next attempt may start: River's NextRetry, for every path that puts a job back.
-- A failure (p_failed_attempt given) waits for its backoff or the provider's retry-after,
-- whichever is longer; a release (p_failed_attempt null) waits for its delay only.
create function document_jobs_internal.next_run_after(p_failed_attempt int, p_retry_after interval)
returns timestamptz
language sql
volatile  -- backoff's jitter
set search_path = ''
as $$
    select now() + case
        when p_failed_attempt is null then coalesce(p_retry_after, interval '0')
        else greatest(document_jobs_internal.backoff(p_failed_attempt), coalesce(p_retry_after, interval '0'))
    end
$$;

-- The outcome of the attempt, stored by whatever ends it.
alter table public.document_jobs
    add column attempt_outcome text
        constraint document_jobs_attempt_outcome_check
        check (attempt_outcome in ('completed', 'retried', 'released', 'failed', 'lease_expired', 'cancelled'));
comment on column public.document_jobs.attempt_outcome is
    'How the last attempt ended, null while one runs (a claim clears it): written by the function that ended it '
    '(complete, fail, release, cancel, the expired-lease sweep); document_job_attempts copies it.';

update public.document_jobs j
   set attempt_outcome = a.outcome
  from public.document_job_attempts a
 where a.job_id = j.id and a.generation = j.generation and j.status <> 'running';

create or replace function document_jobs_internal.record_attempt()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_outcome text;
    v_lease_passed boolean;
begin
    -- A claim that changed the generation of a running job took it over: the lease had passed.
    -- Otherwise the function that ended the attempt said how; an UPDATE by hand that did not is
    -- recorded as failed.
    v_outcome := case
        when new.generation <> old.generation then 'lease_expired'
        else coalesce(new.attempt_outcome, 'failed')
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

create or replace function document_jobs_internal.alert_job_failed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.attempt_outcome = 'cancelled' and current_setting('document_jobs.bulk_action', true) = 'on' then
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

create or replace function document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text)
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
           attempt_outcome = 'cancelled',
           last_error_code = 'cancelled',
           last_error_message = coalesce(left(p_reason, 4000), 'cancelled by an operator')
     where j.id = any (p_job_ids) and j.status in ('queued', 'running')
    returning j.id;
end;
$$;

create or replace function document_jobs_internal.fail_expired()
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
           attempt_outcome = 'lease_expired',
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

create or replace function document_jobs_internal.require_retry_after(p_retry_after interval)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(
        p_retry_after is null or p_retry_after between interval '0' and (document_jobs_internal.limits()).retry_after_max,
        (document_jobs_internal.limits()).retry_after_rule);
end;
$$;

drop function document_jobs_internal.require_lease(interval);

-- The claim: as in 20261130004000, with the bound and the header from limits(), and the new
-- attempt's outcome cleared.
create or replace function public.claim_document_jobs(
    p_kind text,
    p_limit int default 1,
    p_lease interval default '5 minutes'  -- the worker's default too (tests/test_constants.py)
)
returns setof public.document_jobs
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    -- Real PostgREST gives SQL the request's headers as JSON with lowercased names in the setting
    -- request.headers; the worker sends its Vercel request id in limits().invocation_header.
    -- Outside a PostgREST request the setting is unset (null) or empty (''), and the id is null.
    v_invocation_id text := left(
        nullif(current_setting('request.headers', true), '')::jsonb
            ->> (document_jobs_internal.limits()).invocation_header, 200);
begin
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    if p_limit is null or p_limit not between 1 and 100 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 100';
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
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
           started_at = coalesce(j.started_at, now()),
           attempt_started_at = now(),
           attempt_invocation_id = v_invocation_id,
           attempt_outcome = null
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
    if not found then
        perform document_jobs_internal.require_kind(p_kind);
    end if;
end;
$$;

-- The fan-out (the cron's, and a stopping invocation's follow-up): as in 20261201003100, with the
-- jobs per invocation from limits().
create or replace function document_jobs_internal.start_workers(p_at_most int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_jobs_per_invocation constant int := (document_jobs_internal.limits()).jobs_per_invocation;
    c_most constant int := 20;  -- the highest cap
    v_claimable bigint;
begin
    select count(*) into v_claimable
      from (select 1 from public.document_jobs_claimable
             limit coalesce(p_at_most, c_most) * c_jobs_per_invocation) c;
    if v_claimable = 0 then
        return 0;
    end if;
    return document_jobs_internal.post_worker(ceil(v_claimable::numeric / c_jobs_per_invocation)::int);
end;
$$;

-- The fenced calls, v2. Each names the job (p_job_id, p_generation) and changes it only while
-- that generation is running; the answer is {"held", "state"} as above.

create function public.extend_document_job_lease_v2(p_job_id uuid, p_generation int, p_lease interval)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'running' end);
end;
$$;

create function public.complete_document_job_v2(p_job_id uuid, p_generation int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    update public.document_jobs j
       set status = 'completed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'completed'
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'completed' end);
end;
$$;

create function public.complete_document_job_and_claim_next_v2(
    p_job_id uuid,
    p_generation int,
    p_kind text,
    p_lease interval
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
    v_next public.document_jobs;
begin
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    select * into v_next from public.claim_document_jobs(p_kind, 1, p_lease);
    return v_answer || jsonb_build_object('next_job', case when v_next.id is null then null else to_jsonb(v_next) end);
end;
$$;

create function public.record_document_attachment_v2(
    p_job_id uuid,
    p_generation int,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_size_bytes bigint,
    p_sha256 text,
    p_bucket text,
    p_storage_path text,
    p_lease interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
           for share;
    else
        if p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
            raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
        end if;
        -- Storing an attachment ends a streak of time-budget releases (release_document_job_v2).
        update public.document_jobs j
           set lease_until = now() + p_lease,
               budget_releases = 0
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
        returning j.fax_received_email_id into v_email_id;
    end if;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    insert into public.fax_received_email_attachments as a
           (fax_received_email_id, provider_attachment_id, filename, content_type, size_bytes, sha256, bucket,
            storage_path)
    values (v_email_id, p_provider_attachment_id, p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket,
            p_storage_path)
    on conflict (fax_received_email_id, provider_attachment_id) do update
       set filename = excluded.filename,
           content_type = excluded.content_type,
           size_bytes = excluded.size_bytes,
           sha256 = excluded.sha256,
           bucket = excluded.bucket,
           storage_path = excluded.storage_path,
           updated_at = now();
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;

create function public.fail_document_job_v2(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns jsonb
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
        return jsonb_build_object('held', false, 'state', null);
    end if;

    v_retry := p_retryable and v_job.attempts < v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_retry then 'queued' else 'failed' end,
           run_after = case
                           when v_retry then document_jobs_internal.next_run_after(v_job.attempts, p_retry_after)
                           else j.run_after
                       end,
           lease_until = null,
           finished_at = case when v_retry then null else now() end,
           attempt_outcome = case when v_retry then 'retried' else 'failed' end,
           last_error_code = p_error_code,
           last_error_message = left(p_error_message, 4000)
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_retry then 'queued' else 'failed' end);
end;
$$;

create function public.release_document_job_v2(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0',
    p_error_code text default null,
    p_error_message text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_free_budget_releases constant int := (document_jobs_internal.limits()).free_budget_releases;
    v_job public.document_jobs;
    v_counted boolean;
    v_failed boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require_retry_after(p_retry_after);
    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    -- A time-budget release past the free ones counts its attempt, and may be the last.
    v_counted := p_error_code = 'time_budget' and v_job.budget_releases >= c_free_budget_releases;
    v_failed := v_counted and v_job.attempts >= v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_failed then 'failed' else 'queued' end,
           attempts = case when v_counted then j.attempts else greatest(j.attempts - 1, 0) end,
           budget_releases = j.budget_releases + case when p_error_code = 'time_budget' then 1 else 0 end,
           run_after = case
                           when v_failed then j.run_after
                           else document_jobs_internal.next_run_after(null, p_retry_after)
                       end,
           lease_until = null,
           finished_at = case when v_failed then now() end,
           attempt_outcome = case when v_failed then 'failed' when v_counted then 'retried' else 'released' end,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case
               when p_error_code is null then j.last_error_message
               when v_counted then left(format(
                   '%s (release %s in a row for the time budget with no attachment stored: after %s, each counts an attempt)',
                   p_error_message, v_job.budget_releases + 1, c_free_budget_releases), 4000)
               else left(p_error_message, 4000)
           end
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_failed then 'failed' else 'queued' end);
end;
$$;

-- What a fetch_email job needs before it calls Resend (20261201003000), fenced the same way: the
-- answer of a held job adds its members to {"held": true, "state": "running"}.
create function public.start_fetch_email_v2(p_job_id uuid, p_generation int, p_max_wait_ms int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_row_id uuid;
    v_email jsonb;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select j.fax_received_email_id into v_email_row_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select jsonb_build_object('id', e.id, 'provider_email_id', e.provider_email_id) into v_email
      from public.fax_received_emails e
     where e.id = v_email_row_id;
    if v_email is null then
        return jsonb_build_object('held', true, 'state', 'running', 'email', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', v_email,
        'stored_attachment_ids', coalesce(
            (select jsonb_agg(a.provider_attachment_id order by a.provider_attachment_id)
               from public.fax_received_email_attachments a
              where a.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'resend', document_jobs_internal.reserve_request('resend', p_max_wait_ms));
end;
$$;

-- An invocation's last write (20261201003100), v2: the write's answer plus "follow_ups", the
-- invocations started in the same transaction (held or not).
create function public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

create function public.fail_document_job_and_follow_up_v2(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

create function public.release_document_job_and_follow_up_v2(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0 seconds',
    p_error_code text default null,
    p_error_message text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

-- The old names, answering exactly as before through the v2 functions (one body for each call).
-- (The ..._and_follow_up ones of 20261201003100 call the old complete, fail and release: they
-- answer as before unchanged.)
create or replace function public.extend_document_job_lease(
    p_job_id uuid, p_generation int, p_lease interval default '5 minutes'
)
returns boolean
language sql
security definer
set search_path = ''
as $$ select (public.extend_document_job_lease_v2(p_job_id, p_generation, p_lease) ->> 'held')::boolean $$;

create or replace function public.complete_document_job(p_job_id uuid, p_generation int)
returns boolean
language sql
security definer
set search_path = ''
as $$ select (public.complete_document_job_v2(p_job_id, p_generation) ->> 'held')::boolean $$;

create or replace function public.complete_document_job_and_claim_next(
    p_job_id uuid, p_generation int, p_kind text, p_lease interval default '5 minutes'
)
returns jsonb
language sql
security definer
set search_path = ''
as $$
    select jsonb_build_object('completed', a -> 'held', 'next_job', a -> 'next_job')
      from public.complete_document_job_and_claim_next_v2(p_job_id, p_generation, p_kind, p_lease) a
$$;

create or replace function public.record_document_attachment(
    p_job_id uuid,
    p_generation int,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_size_bytes bigint,
    p_sha256 text,
    p_bucket text,
    p_storage_path text,
    p_lease interval default null
)
returns boolean
language sql
security definer
set search_path = ''
as $$
    select (public.record_document_attachment_v2(p_job_id, p_generation, p_provider_attachment_id, p_filename,
                                                 p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path,
                                                 p_lease) ->> 'held')::boolean
$$;

create or replace function public.fail_document_job(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns text
language sql
security definer
set search_path = ''
as $$
    select public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                       p_retry_after) ->> 'state'
$$;

create or replace function public.release_document_job(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0',
    p_error_code text default null,
    p_error_message text default null
)
returns text
language sql
security definer
set search_path = ''
as $$
    select public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message)
           ->> 'state'
$$;

create or replace function public.start_fetch_email(p_job_id uuid, p_generation int, p_max_wait_ms int)
returns jsonb
language sql
security definer
set search_path = ''
as $$
    select case when (a ->> 'held')::boolean then a - 'held' - 'state' end
      from public.start_fetch_email_v2(p_job_id, p_generation, p_max_wait_ms) a
$$;

-- Privileges: the v2 calls are the worker's (service_role); the helpers nobody's but the owner's.
revoke all on function
    public.extend_document_job_lease_v2(uuid, int, interval),
    public.complete_document_job_v2(uuid, int),
    public.complete_document_job_and_claim_next_v2(uuid, int, text, interval),
    public.record_document_attachment_v2(uuid, int, text, text, text, bigint, text, text, text, interval),
    public.fail_document_job_v2(uuid, int, text, text, boolean, interval),
    public.release_document_job_v2(uuid, int, interval, text, text),
    public.start_fetch_email_v2(uuid, int, int),
    public.complete_document_job_and_follow_up_v2(uuid, int),
    public.fail_document_job_and_follow_up_v2(uuid, int, text, text, boolean, interval),
    public.release_document_job_and_follow_up_v2(uuid, int, interval, text, text)
    from public, anon, authenticated;
grant execute on function
    public.extend_document_job_lease_v2(uuid, int, interval),
    public.complete_document_job_v2(uuid, int),
    public.complete_document_job_and_claim_next_v2(uuid, int, text, interval),
    public.record_document_attachment_v2(uuid, int, text, text, text, bigint, text, text, text, interval),
    public.fail_document_job_v2(uuid, int, text, text, boolean, interval),
    public.release_document_job_v2(uuid, int, interval, text, text),
    public.start_fetch_email_v2(uuid, int, int),
    public.complete_document_job_and_follow_up_v2(uuid, int),
    public.fail_document_job_and_follow_up_v2(uuid, int, text, text, boolean, interval),
    public.release_document_job_and_follow_up_v2(uuid, int, interval, text, text)
    to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
