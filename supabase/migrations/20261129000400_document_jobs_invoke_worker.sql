-- Calling the worker from the database: the POST through pg_net (the kick of a new job, and the
-- fan-out of the cron entry point) and invoke_document_jobs, which the every-minute cron job
-- calls (scheduled in the cron migration).

-- POSTs to the worker through pg_net; the requests are sent only if and after the calling
-- transaction commits. Returns how many were queued (0 and a WARNING when Vault lacks the URL
-- or the secret: migrations may run before the operator stores them). Internal: how many POSTs
-- is decided by its callers, one for a kick and a bounded fan-out for the cron job.
create function document_jobs_internal.post_worker(p_count int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_url text;
    v_secret text;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    for i in 1..p_count loop
        perform net.http_post(
            url => v_url,
            body => '{}'::jsonb,
            headers => jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || v_secret),
            timeout_milliseconds => 300000  -- the worker's maxDuration
        );
    end loop;
    return greatest(p_count, 0);
end;
$$;

-- The cron entry point: sweeps expired-and-exhausted jobs, then calls the worker once per
-- 3 claimable jobs (what one invocation handles), at most p_max_invocations times. Nothing
-- claimable: no HTTP at all. At most 20 invocations a call (60 jobs in flight): beyond that the
-- workers would mostly collect 429s from Resend's rate limit (about 5 requests a second per
-- team), and one call must not be able to start an unbounded crowd of workers.
create function public.invoke_document_jobs(p_max_invocations int default 4)
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_jobs_per_invocation constant int := 3;  -- lib/worker.py: MAX_JOBS_PER_INVOCATION
    v_claimable bigint;
begin
    perform document_jobs_internal.require(
        p_max_invocations between 1 and 20, 'p_max_invocations must be between 1 and 20');
    perform document_jobs_internal.fail_expired();
    select count(*) into v_claimable
      from (select 1 from public.document_jobs_claimable limit p_max_invocations * c_jobs_per_invocation) c;
    if v_claimable = 0 then
        return 0;
    end if;
    return document_jobs_internal.post_worker(
        least(ceil(v_claimable::numeric / c_jobs_per_invocation)::int, p_max_invocations));
end;
$$;

revoke all on function public.invoke_document_jobs(int) from public, anon, authenticated;
grant execute on function public.invoke_document_jobs(int) to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
