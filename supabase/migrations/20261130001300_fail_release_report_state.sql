-- fail_document_job and release_document_job answer the state they left the job in ('queued'
-- or 'failed'), or null when the caller no longer holds it, instead of a boolean. Whether a
-- failure is retried or final is the database's decision (attempts, max_attempts, p_retryable):
-- the worker logs and counts what it was told, so its log can never disagree with the row.
--
-- A function's return type cannot be changed in place: each is dropped and created again, with
-- the same arguments, the same fencing guard ((job id, generation) while running), and the same
-- grants (service_role only).

drop function public.fail_document_job(uuid, int, text, text, boolean, interval);
drop function public.release_document_job(uuid, int, interval, text, text);

-- Transient (p_retryable) with attempts left: back to queued after the backoff for this attempt,
-- or the provider's p_retry_after when longer. Otherwise: failed. The error is recorded either way.
create function public.fail_document_job(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns text
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
        return null;
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
    return case when v_retry then 'queued' else 'failed' end;
end;
$$;

-- For failures that are not the job's fault (the time budget ran out, the API key lacks a
-- permission): back to queued without spending an attempt. Answers 'queued', or null.
create function public.release_document_job(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0 seconds',
    p_error_code text default null,
    p_error_message text default null
)
returns text
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
    return case when found then 'queued' end;
end;
$$;

revoke all on function
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text)
from public, anon, authenticated;
grant execute on function
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text)
to service_role;
