-- The failure alert's Retry and History lines name the CLI as `make cli` installs it,
-- document-jobs-admin (lib/admin/__init__.py PROGRAM, which tests/flow/test_alerts.py holds this
-- to): `python -m lib.admin ...` worked only inside a clone with the environment activated, and
-- failed when pasted anywhere else. Otherwise as in 20261201002300.
create or replace function document_jobs_internal.job_failed_alert(p_job public.document_jobs)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    c_files constant int := 5;
    c_program constant text := 'document-jobs-admin';
    v_email public.fax_received_emails;
    v_names text[];
    v_files jsonb := '[]'::jsonb;
    v_retry text := format('%s retry %s', c_program, p_job.id);
    v_history text := format('%s show %s', c_program, p_job.id);
begin
    select * into v_email from public.fax_received_emails e where e.id = p_job.fax_received_email_id;
    if jsonb_typeof(v_email.data -> 'attachments') = 'array' then
        v_names := array(select coalesce(a.value ->> 'filename', '(no name)')
                           from jsonb_array_elements(v_email.data -> 'attachments') a
                          where jsonb_typeof(a.value) = 'object');
    end if;
    for i in 1..least(coalesce(cardinality(v_names), 0), c_files) loop
        v_files := v_files || case when i > 1 then '[", "]'::jsonb else '[]'::jsonb end
                           || jsonb_build_array(jsonb_build_object('quote', v_names[i], 'max', 100));
    end loop;
    if cardinality(v_names) > c_files then
        v_files := v_files || jsonb_build_array(format(' and %s more', cardinality(v_names) - c_files));
    end if;
    return document_jobs_internal.alert_body(
        jsonb_build_object(
            'event', 'document_job_failed',
            'job', jsonb_build_object(
                'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
                'max_attempts', p_job.max_attempts, 'generation', p_job.generation, 'created_at', p_job.created_at,
                'finished_at', p_job.finished_at, 'fax_received_email_id', p_job.fax_received_email_id),
            'email', case when v_email.id is not null then jsonb_build_object(
                'id', v_email.id, 'provider_email_id', v_email.provider_email_id, 'from', v_email.from_address,
                'subject', v_email.subject, 'received_at', coalesce(v_email.received_at, v_email.created_at),
                'filenames', to_jsonb(v_names)) end,
            'error', jsonb_build_object('code', p_job.last_error_code, 'message', p_job.last_error_message),
            'attempts', p_job.attempts,
            'retry_command', v_retry,
            'history_command', v_history,
            'sent_at', now()),
        jsonb_build_array(
            jsonb_build_array(
                format('Fax not fetched: job %s failed after %s of %s attempts (', p_job.id, p_job.attempts,
                       p_job.max_attempts),
                jsonb_build_object('quote', coalesce(p_job.last_error_code, 'no error code'), 'max', 100),
                ': ',
                jsonb_build_object('quote', p_job.last_error_message, 'max', 300),
                ').'),
            jsonb_build_array('From: ', jsonb_build_object('quote', v_email.from_address)),
            jsonb_build_array('Subject: ', jsonb_build_object('quote', v_email.subject)),
            jsonb_build_array('Files: ') || case when v_files = '[]' then '["(none)"]' else v_files end,
            jsonb_build_array('Received: ', coalesce(to_char(coalesce(v_email.received_at, v_email.created_at)
                                                             at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                                     '(unknown)')),
            jsonb_build_array('Retry: ', jsonb_build_object('quote', v_retry)),
            jsonb_build_array('History: ', jsonb_build_object('quote', v_history))));
end;
$$;

-- The CLI no longer calls the two names of its single retry and cancel: it acts through the
-- screen's audited admin_retry_document_job and admin_cancel_document_job. They keep answering
-- until supabase/future_migrations drops them.
comment on function public.retry_document_job(uuid) is
    'Retired: a failed job back to queued with its attempts and time-budget releases reset (requeue_failed), unaudited; answers whether a job was retried, and refuses another live job of the same target with a message that says what to do. The admin CLI called it before it retried through admin_retry_document_job (audited, a worker started); nothing in lib/ calls it, and supabase/future_migrations drops it.';
comment on function public.cancel_document_job(uuid, text) is
    'Retired: cancels a queued or running job (cancel_live), unaudited; answers whether a job was cancelled. The admin CLI called it before it cancelled through admin_cancel_document_job (audited); nothing in lib/ calls it, and supabase/future_migrations drops it.';
comment on function public.document_jobs_reconciliation_status() is
    'For the health output (document-jobs-admin health, the screen): when reconciliation last ran and what it found (listed, recorded, of those recorded late), its watermark, a run in progress, its settings, and how many e-mails reconciliation recorded in all.';
comment on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, integer) is
    'The CLI''s reconcile (document-jobs-admin reconcile --since): a batch of listed e-mails recorded as a reconcile_emails job records them (document_jobs_internal.record_reconciled), audited with the operator''s identity (action reconcile; its filter has since, listed and the recorded ids; job_count the e-mails recorded). p_since may go back max_since at most.';
