-- A job released for the time budget gives its attempt back: the next invocation resumes it,
-- skipping what is stored. But a download that trickles past the budget on every invocation was
-- released forever, attempts 0, nobody told. Now the releases for the time budget are counted
-- (budget_releases) until the job stores an attachment again (record_document_attachment, which
-- renews the lease as it records) or is retried by hand: the first 3 in a row are free, and from
-- the 4th on each one counts its attempt, so the job ends in `failed` (and its failure alert)
-- after its attempts, with the reason in its last_error_message and its history. Releases for
-- any other cause (a key, a quota, throttling) neither count nor reset the streak.
--
-- 3 is lib/failures.py's TIME_BUDGET_FREE_RELEASES (tests/test_constants.py compares them): with
-- the 240 s budget, 3 invocations of nothing stored is 12 minutes of a stuck download.

alter table public.document_jobs
    add column budget_releases int not null default 0;
comment on column public.document_jobs.budget_releases is
    'Releases for the time budget since the job last stored an attachment (or was retried by hand); '
    'from the 4th on, each counts an attempt.';

-- As in 20261130001300, but a time_budget release past the free ones keeps its attempt: back to
-- queued, or failed when that was the last attempt. Answers 'queued' or 'failed' (null: the
-- caller no longer holds the job).
create or replace function public.release_document_job(
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
declare
    c_free_budget_releases constant int := 3;
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
        return null;
    end if;
    v_counted := p_error_code = 'time_budget' and v_job.budget_releases >= c_free_budget_releases;
    v_failed := v_counted and v_job.attempts >= v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_failed then 'failed' else 'queued' end,
           attempts = case when v_counted then j.attempts else greatest(j.attempts - 1, 0) end,
           budget_releases = j.budget_releases + case when p_error_code = 'time_budget' then 1 else 0 end,
           run_after = case when v_failed then j.run_after else now() + coalesce(p_retry_after, interval '0') end,
           lease_until = null,
           finished_at = case when v_failed then now() end,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case
               when p_error_code is null then j.last_error_message
               when v_counted then left(format(
                   '%s (release %s in a row for the time budget with no attachment stored: after %s, each counts an attempt)',
                   p_error_message, v_job.budget_releases + 1, c_free_budget_releases), 4000)
               else left(p_error_message, 4000)
           end
     where j.id = p_job_id;
    return case when v_failed then 'failed' else 'queued' end;
end;
$$;

-- As in 20261130003100; storing an attachment is progress, so it ends a streak of time_budget
-- releases. Only with p_lease (the worker always passes it), in the UPDATE that renews the lease.
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
        if p_lease <= interval '0' or p_lease > interval '1 hour' then
            raise exception using errcode = '22023', message = 'p_lease must be more than 0 and at most 1 hour';
        end if;
        update public.document_jobs j
           set lease_until = now() + p_lease,
               budget_releases = 0
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
        returning j.fax_received_email_id into v_email_id;
    end if;
    if not found then
        return false;
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
    return true;
end;
$$;

-- As in 20261129000300; a retry by hand starts the count afresh.
create or replace function public.retry_document_job(p_job_id uuid)
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
           budget_releases = 0,
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
