-- Cheaper calls on the worker's path: claim, extend, record an attachment, complete. Measured by
-- make bench (the throughput section runs these against the functions as they were before, in one
-- run): each helper call (document_jobs_internal.require_*) is a PL/pgSQL function call with its
-- own SET search_path, so a claim made four nested calls and read document_job_kinds before it
-- did anything, and a completion made three calls to check two arguments for null.
--
-- Now the checks are plain IF statements in the function itself, with the same SQLSTATE (22023)
-- and the same messages; the bounds are those of the helpers (see 20261129000300 for why). The
-- claim checks the kind only when it found no job: a job's kind references document_job_kinds,
-- so a claim that found one had a known kind, and an unknown kind still gets its clear error.
-- The other functions (enqueue, fail, release, retry, ...) keep the helpers: they are not called
-- once per job step.

create or replace function public.claim_document_jobs(
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
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    if p_limit is null or p_limit not between 1 and 100 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 100';
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_lease must be more than 0 and at most 1 hour';
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
           started_at = coalesce(j.started_at, now())
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

create or replace function public.extend_document_job_lease(
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
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_lease must be more than 0 and at most 1 hour';
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

create or replace function public.complete_document_job(p_job_id uuid, p_generation int)
returns boolean
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
           finished_at = now()
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

-- As in 20261130003000: fenced by (p_job_id, p_generation) + running; p_lease renews the lease.
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
           set lease_until = now() + p_lease
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

-- As in 20261130003000, without checking the claim's arguments first: the completion and the
-- claim are one transaction, so a claim refused for a bad argument undoes the completion too.
create or replace function public.complete_document_job_and_claim_next(
    p_job_id uuid,
    p_generation int,
    p_kind text,
    p_lease interval default '5 minutes'
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_completed boolean;
    v_next public.document_jobs;
begin
    v_completed := public.complete_document_job(p_job_id, p_generation);
    select * into v_next from public.claim_document_jobs(p_kind, 1, p_lease);
    return jsonb_build_object(
        'completed', v_completed,
        'next_job', case when v_next.id is null then null else to_jsonb(v_next) end);
end;
$$;
