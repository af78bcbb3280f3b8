-- A job's e-mail says how it was found: by its webhook, or by reconciliation (Resend listed it and no
-- webhook had delivered it) and when (fax_received_emails.found_by and reconciled_at, 20261203003000).
-- Only the health check counted them; the admin screen's job page and the CLI's show say it of each
-- e-mail now, from this read, which the screen reaches through document_jobs_operator_job: the fax's
-- own page reads it here too. As in 20261201004200, with the e-mail's two facts added.
create or replace function public.document_jobs_admin_job(p_job_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- as the other views (20261201004200_admin_screen_views.sql)
as $$
declare
    v_job public.document_jobs;
    v_email public.fax_received_emails;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select * into v_job from public.document_jobs j where j.id = p_job_id;
    if not found then
        return null;
    end if;
    select * into v_email from public.fax_received_emails e where e.id = v_job.fax_received_email_id;
    return jsonb_build_object(
        'job', document_jobs_internal.job_summary(v_job, null)
               || jsonb_build_object('last_error_message', v_job.last_error_message, 'generation', v_job.generation,
                                     'lease_until', v_job.lease_until,
                                     'fax_received_email_id', v_job.fax_received_email_id),
        'attempts', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'attempt', a.attempt, 'generation', a.generation, 'started_at', a.started_at,
                       'finished_at', a.finished_at, 'outcome', a.outcome, 'error_code', a.error_code,
                       'error_message', a.error_message, 'invocation_id', a.invocation_id,
                       'duration_ms', round(extract(epoch from a.finished_at - a.started_at) * 1000))
                   order by a.generation)
              from public.document_job_attempts a where a.job_id = p_job_id), '[]'),
        'email', case when v_email.id is not null then jsonb_build_object(
            'id', v_email.id, 'provider', v_email.provider, 'provider_email_id', v_email.provider_email_id,
            'from', v_email.from_address, 'to', to_jsonb(v_email.to_addresses), 'cc', to_jsonb(v_email.cc_addresses),
            'subject', v_email.subject, 'message_id', v_email.message_id, 'received_at', v_email.received_at,
            'created_at', v_email.created_at, 'found_by', v_email.found_by,
            'reconciled_at', v_email.reconciled_at) end,
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'filename', a.filename, 'content_type', a.content_type, 'size_bytes', a.size_bytes,
                       'sha256', a.sha256, 'stored_at', a.updated_at)
                   order by a.filename, a.id)
              from public.fax_received_email_attachments a where a.fax_received_email_id = v_email.id), '[]'));
end;
$$;

comment on function public.document_jobs_admin_job(uuid) is
    'One job for the admin screen: the job, its attempts (oldest first), its e-mail and its stored attachments; null when there is no such job. The e-mail says how it was found: found_by webhook, or reconciliation with reconciled_at, when reconciliation recorded it.';
