-- Fewer round trips per job. Deployed, every call of the worker is an HTTP request through
-- PostgREST; a job with n attachments used to cost claim, n x (extend the lease, record the
-- attachment), complete, and one more claim that found nothing: 2n + 3 calls. Two calls now do
-- the work of two each, fenced exactly as before:
--
-- - record_document_attachment extends the lease in the same call (p_lease), so the worker need
--   not extend it again before the next attachment;
-- - complete_document_job_and_claim_next completes the job and claims the next one in the same
--   call (the worker asks for it only when its time budget and job cap allow another job).
--
-- That is claim + n x record + complete-and-claim: n + 2 calls for the first job of an
-- invocation, n + 1 for each job after it.

-- Adding a parameter changes the signature: drop and create, then restore the grants.
drop function public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text);

-- Records a stored attachment for the job's e-mail, fenced like every other write of a worker:
-- only while (p_job_id, p_generation) still holds the job (status running). A stale worker's
-- upload may still have overwritten the object (same key, same bytes), but its row is refused.
-- With p_lease, the same guarded statement also sets lease_until = now() + p_lease: the worker
-- records an attachment and renews its lease for the next one in one round trip.
create function public.record_document_attachment(
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
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
           for share;
    else
        perform document_jobs_internal.require_lease(p_lease);
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

-- Completes the job while (p_job_id, p_generation) holds it, exactly as complete_document_job,
-- then claims the next job of p_kind exactly as claim_document_jobs(p_kind, 1, p_lease) (the same
-- function: "claimable" stays defined once), in one transaction. Answers
-- {"completed": <as complete_document_job>, "next_job": <the claimed row, or null>}. The claim
-- does not depend on the completion: a worker that lost its job may still take the next one.
-- The arguments of the claim are checked before anything is written.
create function public.complete_document_job_and_claim_next(
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
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require_lease(p_lease);
    v_completed := public.complete_document_job(p_job_id, p_generation);
    select * into v_next from public.claim_document_jobs(p_kind, 1, p_lease);
    return jsonb_build_object(
        'completed', v_completed,
        'next_job', case when v_next.id is null then null else to_jsonb(v_next) end);
end;
$$;

revoke all on function
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text, interval),
    public.complete_document_job_and_claim_next(uuid, int, text, interval)
from public, anon, authenticated;
grant execute on function
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text, interval),
    public.complete_document_job_and_claim_next(uuid, int, text, interval)
to service_role;
