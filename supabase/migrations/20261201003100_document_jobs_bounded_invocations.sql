-- A bounded number of worker invocations in flight, and no waiting for the minute.
--
-- Before: every received e-mail kicked a worker invocation of its own (a burst of 10,000 e-mails
-- started 10,000 functions, whose listings then met Resend's rate limit), and the cron's fan-out
-- took at most 4 invocations a minute. Now:
--
-- - document_jobs_internal.post_worker, the one path every start of the worker takes (the kick of
--   a new job, the cron's fan-out, a follow-up, an operator's retry), starts an invocation only
--   while fewer than the cap are in flight. An invocation is in flight from its POST until pg_net
--   has its answer (net._http_response), or, if none ever comes, until its maxDuration has passed.
--   The cap is a setting; by default three times the requests per second the Resend limiter lets
--   this queue make (12 at 5 requests/s with 20 % left to others, at most 20). Each invocation
--   works one job at a time and waits for each job's slot, and invocations started together end
--   together: their follow-ups then start cold at once (1 to 3 s each, measured), during which
--   only the others keep the schedule busy; and an invocation stopping at the cap starts no
--   follow-up (it counts itself until it has answered): the next one to stop, or the cron, does.
--   make bench's burst section drains the same burst with two per request a second (8) and three.
-- - An invocation that stops at its job cap or time budget while work is claimable starts what
--   the cron would start (one invocation per 3 claimable jobs, within the cap) in the same
--   transaction as its last queue call: complete_document_job_and_follow_up, and the same for
--   fail and release. The cron stays the safety net for lost kicks and follow-ups.
-- - invoke_document_jobs fans out up to the cap; p_max_invocations is now only an extra bound.

alter table public.document_jobs_settings
    add column max_invocations_in_flight int
        constraint document_jobs_settings_max_invocations_in_flight check (max_invocations_in_flight between 1 and 20);
comment on column public.document_jobs_settings.max_invocations_in_flight is
    'Worker invocations in flight at most (1 to 20); null: three times the requests per second the Resend limiter allows this queue.';

-- In-flight counting reads the last maxDuration of worker POSTs.
create index worker_requests_created_at on document_jobs_internal.worker_requests (created_at);

create function document_jobs_internal.invocation_cap()
returns int
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
        select coalesce(
            s.max_invocations_in_flight,
            (select least(20, greatest(1, ceil(3 * l.requests_per_second * (1 - l.share_for_others))))::int
               from public.document_jobs_rate_limits l
              where l.provider = 'resend'),
            12)
          from public.document_jobs_settings s);
end;
$$;

-- Worker invocations in flight: POSTed within the last maxDuration and not answered. An answer is
-- recorded after its request, so only the answers of that same span need looking at (pg_net's
-- answer table keeps 6 hours of everyone's answers, indexed on created).
create function document_jobs_internal.invocations_in_flight()
returns int
language plpgsql
volatile
set search_path = ''
as $$
declare
    c_max_duration constant interval := interval '300 seconds';  -- vercel.json: the worker's maxDuration
    v_since timestamptz := clock_timestamp() - c_max_duration;
begin
    return (
        select count(*)::int
          from document_jobs_internal.worker_requests w
         where w.created_at > v_since
           and not exists (select 1 from net._http_response r where r.created > v_since and r.id = w.request_id));
end;
$$;

-- POSTs to the worker through pg_net, at most p_count and only while fewer than the cap are in
-- flight; the requests are sent only if and after the calling transaction commits. Returns how
-- many were queued (0 and a WARNING when Vault lacks the URL or the secret). As in the alerts
-- migration otherwise: each request id is recorded in worker_requests, here with the time it was
-- counted in, so that the in-flight count and the request's own span agree.
create or replace function document_jobs_internal.post_worker(p_count int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_url text;
    v_secret text;
    v_count int;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    -- One caller at a time counts and adds, until its transaction ends: two webhooks at once must
    -- not both take the last free place. (A transaction-level advisory lock of this function's own.)
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('document_jobs_internal.post_worker', 0));
    v_count := least(p_count, document_jobs_internal.invocation_cap() - document_jobs_internal.invocations_in_flight());
    for i in 1..v_count loop
        insert into document_jobs_internal.worker_requests (request_id, created_at)
        values (net.http_post(
                    url => v_url,
                    body => '{}'::jsonb,
                    headers => jsonb_build_object('Content-Type', 'application/json',
                                                  'Authorization', 'Bearer ' || v_secret),
                    timeout_milliseconds => 300000  -- the worker's maxDuration
                ),
                clock_timestamp());
    end loop;
    return greatest(v_count, 0);
end;
$$;

-- One invocation per 3 claimable jobs (what one invocation handles), at most p_at_most (null: no
-- bound but the cap) and within the cap: the cron's fan-out, and a stopping invocation's follow-up.
create function document_jobs_internal.start_workers(p_at_most int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_jobs_per_invocation constant int := 3;  -- lib/worker.py: MAX_JOBS_PER_INVOCATION
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

-- The cron entry point: sweeps expired-and-exhausted jobs, then fans out within the cap (nothing
-- claimable: no HTTP at all). p_max_invocations, when given, bounds the fan-out further (1 to 20).
create or replace function public.invoke_document_jobs(p_max_invocations int default null)
returns int
language plpgsql
security definer
set search_path = ''
as $$
begin
    if p_max_invocations is not null and p_max_invocations not between 1 and 20 then
        raise exception using errcode = '22023', message = 'p_max_invocations must be between 1 and 20';
    end if;
    perform document_jobs_internal.fail_expired();
    return document_jobs_internal.start_workers(p_max_invocations);
end;
$$;

-- The last queue call of an invocation that stops at its job cap or its time budget: the write,
-- exactly as the function it names, and in the same transaction the follow-up invocations
-- (start_workers: only when work is claimable, within the cap; the asking invocation is still in
-- flight and counts). Answer: the write's own answer and "follow_ups", how many were started.
create function public.complete_document_job_and_follow_up(p_job_id uuid, p_generation int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_completed boolean;
begin
    v_completed := public.complete_document_job(p_job_id, p_generation);
    return jsonb_build_object('completed', v_completed, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

create function public.fail_document_job_and_follow_up(
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
    v_left_in text;
begin
    v_left_in := public.fail_document_job(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

create function public.release_document_job_and_follow_up(
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
    v_left_in text;
begin
    v_left_in := public.release_document_job(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;

revoke all on function
    public.complete_document_job_and_follow_up(uuid, int),
    public.fail_document_job_and_follow_up(uuid, int, text, text, boolean, interval),
    public.release_document_job_and_follow_up(uuid, int, interval, text, text)
from public, anon, authenticated;
grant execute on function
    public.complete_document_job_and_follow_up(uuid, int),
    public.fail_document_job_and_follow_up(uuid, int, text, text, boolean, interval),
    public.release_document_job_and_follow_up(uuid, int, interval, text, text)
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
