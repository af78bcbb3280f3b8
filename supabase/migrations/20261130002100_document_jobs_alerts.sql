-- Alerts, sent by the database itself through pg_net to an operator URL kept in Vault
-- (document_jobs_alert_url, e.g. a Slack or Teams incoming webhook):
--
-- 1. a job failed: from a trigger on document_jobs, in the transaction that fails the job. pg_net
--    sends a request only after its transaction commits, so an alert is never sent for a change
--    that rolled back, and never lost for one that committed.
-- 2. an outage of the queue itself: an every-minute cron job compares the oldest claimable job's
--    wait with a threshold, and reads the worker's recent answers in net._http_response (401:
--    secret mismatch, 404: wrong URL, 5xx: worker failing). One alert per cause per hour at most,
--    and one "recovered" alert when the cause clears.
--
-- No URL stored: no alert, and a WARNING in the database log. The alert never carries a Vault
-- secret: neither the worker's secret nor its URL nor the alert URL.

-- How long the oldest claimable job may wait before the queue is reported stalled. By hand, like
-- backoff_base: update public.document_jobs_settings set alert_stall_after = '20 minutes'.
-- At least 2 minutes (the cron calls the worker once a minute: less would report every tick),
-- at most a day (longer is no alert at all).
alter table public.document_jobs_settings
    add column alert_stall_after interval not null default '10 minutes'
        constraint document_jobs_settings_alert_stall_after
        check (alert_stall_after between interval '2 minutes' and interval '1 day');

-- POSTs one alert; null (and a WARNING) when no alert URL is stored. Runs as postgres: from the
-- security definer trigger below, or from the cron job.
create function document_jobs_internal.post_alert(p_body jsonb)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
    v_url text;
begin
    select nullif(s.decrypted_secret, '') into v_url
      from vault.decrypted_secrets s
     where s.name = 'document_jobs_alert_url';
    if v_url is null then
        raise warning 'document jobs: Vault secret document_jobs_alert_url is missing; alert % was not sent',
            coalesce(p_body ->> 'event', '?') || coalesce(' ' || (p_body #>> '{job,id}'), '')
                                              || coalesce(' ' || (p_body ->> 'cause'), '');
        return null;
    end if;
    return net.http_post(
        url => v_url,
        body => p_body,
        headers => jsonb_build_object('Content-Type', 'application/json'),
        timeout_milliseconds => 10000
    );
end;
$$;

-- Text from a sender (a subject) goes into a chat message: Slack's rules ask for &, < and > to be
-- escaped, which also keeps a subject such as "<!channel>" from notifying a whole channel.
-- Shortened to p_max characters: a chat line, not the record (the JSON fields carry it whole).
create function document_jobs_internal.chat_text(p_text text, p_max int)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
    return replace(replace(replace(
               case when length(p_text) > p_max then left(p_text, p_max - 1) || '…' else p_text end,
               '&', '&amp;'), '<', '&lt;'), '>', '&gt;');
end;
$$;

-- The alert for one job that ended failed. PL/pgSQL (here and in chat_text) rather than SQL: it
-- keeps its plans, where a SQL function with SET is planned again on every call.
create function document_jobs_internal.job_failed_alert(p_job public.document_jobs)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return (select jsonb_build_object(
        'event', 'document_job_failed',
        'text', format(
            E'Fax not fetched: job %s failed after %s of %s attempts (%s%s).\n'
            'From: %s\nSubject: %s\nReceived: %s\n'
            'Retry: python -m lib.admin retry %s\nHistory: python -m lib.admin show %s',
            p_job.id, p_job.attempts, p_job.max_attempts, coalesce(p_job.last_error_code, 'no error code'),
            coalesce(': ' || document_jobs_internal.chat_text(p_job.last_error_message, 300), ''),
            coalesce(document_jobs_internal.chat_text(e.from_address, 200), '(unknown)'),
            coalesce(document_jobs_internal.chat_text(e.subject, 200), '(none)'),
            coalesce(to_char(coalesce(e.received_at, e.created_at) at time zone 'UTC',
                             'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '(unknown)'),
            p_job.id, p_job.id),
        'job', jsonb_build_object(
            'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
            'max_attempts', p_job.max_attempts, 'generation', p_job.generation, 'created_at', p_job.created_at,
            'finished_at', p_job.finished_at, 'fax_received_email_id', p_job.fax_received_email_id),
        'email', case when e.id is not null then jsonb_build_object(
            'id', e.id, 'provider_email_id', e.provider_email_id, 'from', e.from_address, 'subject', e.subject,
            'received_at', coalesce(e.received_at, e.created_at)) end,
        'error', jsonb_build_object('code', p_job.last_error_code, 'message', p_job.last_error_message),
        'attempts', p_job.attempts,
        'retry_command', format('python -m lib.admin retry %s', p_job.id),
        'history_command', format('python -m lib.admin show %s', p_job.id),
        'sent_at', now())
      from (select 1) one
      left join public.fax_received_emails e on e.id = p_job.fax_received_email_id);
end;
$$;

-- Fires when a job becomes failed, whatever made it so (fail_document_job, the expired-lease
-- sweep, cancel_document_job, an operator's UPDATE). Security definer: it reads Vault, and the
-- UPDATE may come from service_role, which may not. A failure of the alert itself (it should
-- have none) is a WARNING and never undoes the job's state change: a queue that cannot fail a
-- job because it cannot alert would stop claiming altogether (the sweep runs in every claim).
create function document_jobs_internal.alert_job_failed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    begin
        perform document_jobs_internal.post_alert(document_jobs_internal.job_failed_alert(new));
    exception
        when others then
            raise warning 'document jobs: the failure alert of job % could not be queued: %', new.id, sqlerrm;
    end;
    return null;
end;
$$;

create trigger document_jobs_alert_failed
    after update on public.document_jobs
    for each row
    when (new.status = 'failed' and old.status <> 'failed')
    execute function document_jobs_internal.alert_job_failed();

-- The worker's calls, so that its answers can be told apart in net._http_response (which has
-- the request id, not the URL). Kept as long as pg_net keeps answers (6 hours), and a little more.
create table document_jobs_internal.worker_requests (
    request_id bigint primary key,
    created_at timestamptz not null default now()
);

-- As in the invoke migration, plus the request ids.
create or replace function document_jobs_internal.post_worker(p_count int)
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
        insert into document_jobs_internal.worker_requests (request_id)
        values (net.http_post(
                    url => v_url,
                    body => '{}'::jsonb,
                    headers => jsonb_build_object('Content-Type', 'application/json',
                                                  'Authorization', 'Bearer ' || v_secret),
                    timeout_milliseconds => 300000  -- the worker's maxDuration
                ));
    end loop;
    return greatest(p_count, 0);
end;
$$;

-- One row per cause the health check can report: whether it holds now, since when, and when it
-- was last alerted (at most once an hour; a "recovered" alert only after a "down" alert of the
-- same episode, so a flapping cause sends at most two alerts an hour).
create table document_jobs_internal.outages (
    cause text primary key
        check (cause in ('queue_stalled', 'worker_unauthorized', 'worker_not_found', 'worker_failing')),
    active boolean not null default false,
    since timestamptz,
    alerted_at timestamptz
);
insert into document_jobs_internal.outages (cause)
values ('queue_stalled'), ('worker_unauthorized'), ('worker_not_found'), ('worker_failing')
on conflict (cause) do nothing;

-- What each cause means for the operator: the likely fault, and what to check.
create function document_jobs_internal.outage_advice(p_cause text)
returns text
language sql
immutable
set search_path = ''
as $$
    select case p_cause
        when 'queue_stalled' then
            'No worker is taking the waiting jobs. Check that the cron job document-jobs runs '
            '(select * from cron.job_run_details order by start_time desc limit 5), that Vault holds '
            'document_jobs_url and internal_function_secret, the worker''s answers '
            '(select status_code, count(*) from net._http_response group by 1) and its logs on Vercel.'
        when 'worker_unauthorized' then
            'Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET '
            'on Vercel (or that variable is unset: the worker''s log then names it). Store the same value '
            'in both (README: Rotating INTERNAL_FUNCTION_SECRET).'
        when 'worker_not_found' then
            'Likely cause: the Vault secret document_jobs_url is wrong (it must be '
            'https://<app>/api/internal/document-jobs) or the deployment is gone. Check the URL in Vault '
            'and the deployment on Vercel.'
        else
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot '
            'reach the database; 504 or a timeout: it ran past maxDuration). Check '
            '(select status_code, content from net._http_response order by created desc limit 5) and the '
            'worker''s logs on Vercel.'
    end
$$;

-- Moves one cause to what the check found (true: holds; false: cleared; null: no evidence either
-- way, e.g. no call answered lately) and sends what that calls for. Returns the alerts queued.
create function document_jobs_internal.set_outage(
    p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb)
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_repeat constant interval := interval '1 hour';
    v_outage document_jobs_internal.outages;
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
        if (v_outage.alerted_at is null or v_outage.alerted_at <= now() - c_repeat)
           and document_jobs_internal.post_alert(jsonb_build_object(
                   'event', 'document_jobs_outage',
                   'cause', p_cause,
                   'text', format(E'Fax queue problem (%s): %s\n%s', p_cause, p_summary,
                                  document_jobs_internal.outage_advice(p_cause)),
                   'summary', p_summary,
                   'advice', document_jobs_internal.outage_advice(p_cause),
                   'since', v_outage.since,
                   'evidence', p_evidence,
                   'sent_at', now())) is not null then
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
        perform document_jobs_internal.post_alert(jsonb_build_object(
            'event', 'document_jobs_recovered',
            'cause', p_cause,
            'text', format('Fax queue recovered (%s): %s. The problem began at %s.', p_cause, p_recovered,
                           to_char(v_outage.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
            'summary', p_recovered,
            'since', v_outage.since,
            'evidence', p_evidence,
            'sent_at', now()));
        return 1;
    end if;
    return 0;
end;
$$;

-- The health check the every-minute cron job runs (document-jobs-health). Returns the alerts it
-- queued. The worker's answers are those of the last 5 minutes: the worker is called every
-- minute while work waits, so a cause seen in them is current. A cause holds while those answers
-- hold it and none is a success; one success clears every worker cause.
create function document_jobs_internal.check_health()
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_window constant interval := interval '5 minutes';
    c_window_text constant text := '5 minutes';
    v_stall_after interval;
    v_oldest timestamptz;
    v_claimable bigint;
    v_answers record;
    v_wait text;
    v_recovered text;
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
    return v_sent;
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;

-- Every minute, next to the worker's cron job (a separate job: a fault in the check can never
-- keep the worker from being called). Unscheduled by name first: applying this twice leaves one.
select cron.unschedule(j.jobid) from cron.job j where j.jobname = 'document-jobs-health';
select cron.schedule('document-jobs-health', '* * * * *', 'select document_jobs_internal.check_health()');
