-- The alerts' times in the form the CLI and the admin screen print them, 2026-12-02 06:29:59 +09:00,
-- rather than ISO 8601 with a Z: an operator reading an alert beside the CLI's output compared
-- two spellings of a time. The database does not know the reader's zone, so it prints UTC with
-- its offset, 2026-12-01 21:29:59 +00:00: the same form, and the offset says which zone it is.
-- One function formats them all (alert_time); the four functions that wrote a time in an alert
-- or an outage's words call it, otherwise as they were (20261203140000, 20261203000000).

create function document_jobs_internal.alert_time(p_at timestamptz)
returns text
language sql
immutable
set search_path = ''
as $$
    select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')
$$;
revoke all on function document_jobs_internal.alert_time(timestamptz) from public;
comment on function document_jobs_internal.alert_time(p_at timestamp with time zone) is
    'A time as the alerts print it: UTC in the form the CLI and the admin screen use, 2026-12-01 21:29:59 +00:00 (the database does not know the reader''s zone; the offset says which it is). Null for null.';

create or replace function document_jobs_internal.check_health() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_window constant interval := interval '5 minutes';
    c_window_text constant text := '5 minutes';
    c_release_window constant interval := interval '2 hours';
    v_stall_after interval;
    v_oldest timestamptz;
    v_claimable bigint;
    v_answers record;
    v_wait text;
    v_recovered text;
    v_cause record;
    v_releases record;
    v_since timestamptz;
    v_completed timestamptz;
    v_sent int := 0;
begin
    delete from document_jobs_internal.worker_requests w where w.created_at < now() - interval '7 hours';

    select s.alert_stall_after into v_stall_after from public.document_jobs_settings s;
    select min(c.run_after), count(*) into v_oldest, v_claimable from public.document_jobs_claimable c;
    v_wait := coalesce(round(extract(epoch from now() - v_oldest) / 60)::text || ' min', 'nothing');
    v_sent := v_sent + document_jobs_internal.set_outage(
        'queue_stalled',
        v_oldest is not null and v_oldest < now() - v_stall_after,
        format('the oldest claimable job has waited %s (threshold %s); %s jobs are claimable',
               v_wait, round(extract(epoch from v_stall_after) / 60) || ' min', v_claimable),
        format('the oldest claimable job now waits %s; %s jobs are claimable', v_wait, v_claimable),
        jsonb_build_object('oldest_claimable_since', v_oldest, 'claimable', v_claimable,
                           'threshold', v_stall_after));

    select count(*) as total,
           count(*) filter (where r.status_code between 200 and 299) as ok,
           count(*) filter (where r.status_code in (401, 403)) as unauthorized,
           count(*) filter (where r.status_code in (404, 405)
                               or (r.status_code is null and not coalesce(r.timed_out, false))) as not_found,
           count(*) filter (where r.status_code >= 500 or r.timed_out) as failing
      into v_answers
      from document_jobs_internal.worker_requests w
      join net._http_response r on r.id = w.request_id
     where w.created_at > now() - c_window - interval '5 minutes'  -- a call may take 300 s to answer
       and r.created > now() - c_window;
    v_recovered := format('the worker answered %s of its %s calls in the last %s with success',
                          v_answers.ok, v_answers.total, c_window_text);

    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_unauthorized',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.unauthorized > 0 end,
        format('%s of the worker''s %s answers in the last %s were 401/403, none a success',
               v_answers.unauthorized, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'unauthorized', v_answers.unauthorized));
    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_not_found',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.not_found > 0 end,
        format('%s of the worker''s %s answers in the last %s were 404 or no answer at all, none a success',
               v_answers.not_found, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'not_found', v_answers.not_found));
    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_failing',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.failing > 0 end,
        format('%s of the worker''s %s answers in the last %s were 5xx or timed out, none a success',
               v_answers.failing, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'failing', v_answers.failing));

    -- Each release cause holds while its releases keep happening (2 or more in the window) and no
    -- job has completed since the latest; a job completed after the latest release (or, with none
    -- left in the window, since the outage began) clears it; otherwise there is no evidence.
    for v_cause in select r.code, r.check_what from document_jobs_internal.release_causes r order by r.code loop
        select count(*) as releases,
               count(distinct a.job_id) as jobs,
               max(a.finished_at) as latest,
               (array_agg(a.error_message order by a.finished_at desc))[1] as last_error
          into v_releases
          from public.document_job_attempts a
         where a.outcome = 'released' and a.error_code = v_cause.code
           and a.finished_at > now() - c_release_window;
        select o.since into v_since from document_jobs_internal.outages o where o.cause = v_cause.code;
        select max(j.finished_at) into v_completed
          from public.document_jobs j
         where j.status = 'completed' and j.finished_at > coalesce(v_releases.latest, v_since);
        v_sent := v_sent + document_jobs_internal.set_outage(
            v_cause.code,
            case when v_completed is not null then false when v_releases.releases >= 2 then true end,
            format('%s releases of %s jobs for %s in the last %s, no job completed since the latest (check %s)',
                   v_releases.releases, v_releases.jobs, v_cause.code, '2 hours', v_cause.check_what),
            format('a job completed at %s, after the last release for %s',
                   document_jobs_internal.alert_time(v_completed), v_cause.code),
            jsonb_build_object('releases', v_releases.releases, 'jobs', v_releases.jobs,
                               'latest_release', v_releases.latest, 'completed_at', v_completed,
                               'check', v_cause.check_what, 'last_error', v_releases.last_error));
    end loop;
    return v_sent;
end;
$$;

create or replace function document_jobs_internal.check_webhooks_missing() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_outage document_jobs_internal.outages;
    v_state public.document_jobs_reconciliation;
    v_late record;
    v_delivered timestamptz;
    v_active boolean;
    v_sent int;
begin
    select * into v_outage from document_jobs_internal.outages o where o.cause = 'webhooks_missing';
    select * into v_state from public.document_jobs_reconciliation r;
    -- The newest e-mail reconciliation found whose webhook was that late (evidence for the alert).
    select e.received_at, e.provider_email_id into v_late
      from public.fax_received_emails e
     where e.found_by = 'reconciliation' and e.received_at is not null
       and e.reconciled_at - e.received_at > v_state.webhooks_missing_after
     order by e.received_at desc
     limit 1;
    if v_outage.active then
        -- Closes once a webhook delivers an e-mail received after the outage opened.
        select max(e.received_at) into v_delivered
          from public.fax_received_emails e
         where e.found_by = 'webhook' and e.received_at > v_outage.since;
        v_active := v_delivered is null;
    else
        -- Opens on a finding since it last closed.
        v_active := v_state.missing_found_at > coalesce(v_state.outage_closed_at, '-infinity');
    end if;
    v_sent := document_jobs_internal.set_outage(
        'webhooks_missing',
        v_active,
        format('reconciliation recorded e-mails that Resend received more than %s before and no webhook delivered (the newest received at %s)',
               v_state.webhooks_missing_after, document_jobs_internal.alert_time(v_late.received_at)),
        format('a webhook delivered an e-mail received at %s, after the outage began',
               document_jobs_internal.alert_time(v_delivered)),
        jsonb_build_object('newest_missing_received_at', v_late.received_at,
                           'newest_missing_email', v_late.provider_email_id,
                           'found_at', v_state.missing_found_at,
                           'delivered_received_at', v_delivered));
    if v_outage.active and not v_active then
        update public.document_jobs_reconciliation r set outage_closed_at = now();
    end if;
    return v_sent;
end;
$$;

create or replace function document_jobs_internal.job_failed_alert(p_job public.document_jobs) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
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
            jsonb_build_array('Received: ', coalesce(document_jobs_internal.alert_time(
                                                         coalesce(v_email.received_at, v_email.created_at)),
                                                     '(unknown)')),
            jsonb_build_array('Retry: ', jsonb_build_object('quote', v_retry)),
            jsonb_build_array('History: ', jsonb_build_object('quote', v_history))));
end;
$$;

create or replace function document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_repeat constant interval := interval '1 hour';
    v_outage document_jobs_internal.outages;
    v_lines jsonb;
begin
    if p_active is null then
        return 0;
    end if;
    select * into strict v_outage from document_jobs_internal.outages o where o.cause = p_cause for update;
    if p_active then
        if not v_outage.active then
            v_outage.active := true;
            v_outage.since := now();
        end if;
        v_lines := jsonb_build_array(
            jsonb_build_array('Fax queue problem (', jsonb_build_object('quote', p_cause), '): ', p_summary),
            jsonb_build_array(document_jobs_internal.outage_advice(p_cause)));
        if p_evidence ? 'last_error' then
            v_lines := v_lines || jsonb_build_array(jsonb_build_array(
                'Last error: ', jsonb_build_object('quote', p_evidence ->> 'last_error', 'max', 300)));
        end if;
        if (v_outage.alerted_at is null or v_outage.alerted_at <= now() - c_repeat)
           and document_jobs_internal.post_alert(document_jobs_internal.alert_body(
                   jsonb_build_object(
                       'event', 'document_jobs_outage',
                       'cause', p_cause,
                       'summary', p_summary,
                       'advice', document_jobs_internal.outage_advice(p_cause),
                       'since', v_outage.since,
                       'evidence', p_evidence,
                       'sent_at', now()),
                   v_lines)) is not null then
            v_outage.alerted_at := now();
            update document_jobs_internal.outages o
               set active = true, since = v_outage.since, alerted_at = v_outage.alerted_at
             where o.cause = p_cause;
            return 1;
        end if;
        update document_jobs_internal.outages o set active = true, since = v_outage.since where o.cause = p_cause;
        return 0;
    end if;
    if not v_outage.active then
        return 0;
    end if;
    update document_jobs_internal.outages o set active = false, since = null where o.cause = p_cause;
    if v_outage.alerted_at >= v_outage.since then  -- the operator was told of this episode
        perform document_jobs_internal.post_alert(document_jobs_internal.alert_body(
            jsonb_build_object(
                'event', 'document_jobs_recovered',
                'cause', p_cause,
                'summary', p_recovered,
                'since', v_outage.since,
                'evidence', p_evidence,
                'sent_at', now()),
            jsonb_build_array(jsonb_build_array(
                'Fax queue recovered (', jsonb_build_object('quote', p_cause), '): ', p_recovered,
                format('. The problem began at %s.',
                       document_jobs_internal.alert_time(v_outage.since))))));
        return 1;
    end if;
    return 0;
end;
$$;
