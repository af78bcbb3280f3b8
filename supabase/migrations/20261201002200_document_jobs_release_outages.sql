-- Releases for a cause that is not the job's own (a key, a setting, a quota) give the attempt
-- back and wait: a deleted RESEND_API_KEY released every job every 10 minutes, forever, while
-- the worker answered 200 and the health check said nothing. Now the health check raises an
-- outage for such a cause when its releases keep happening: at least 2 in the last 2 hours with
-- no job completed since the latest; once (de-duplicated as every outage, at most once an hour)
-- naming the cause and the setting to check, and "recovered" when a job completes after the
-- last such release.
--
-- The causes and what to check are lib/failures.py's (the rules with a `check`);
-- tests/test_constants.py holds this table to them. Releases for the time budget are not here
-- (20261201002100 bounds them), nor are releases for throttling (no outage: the rate limit).

create table document_jobs_internal.release_causes (
    code text primary key,
    check_what text not null,
    advice text not null
);
comment on table document_jobs_internal.release_causes is
    'The error codes of releases that are not the job''s fault, each an outage cause of the health check.';

insert into document_jobs_internal.release_causes (code, check_what, advice) values
    ('resend_unauthorized', 'RESEND_API_KEY',
     'Resend refuses RESEND_API_KEY: it was deleted or mistyped, or it is a sending-only key (receiving needs '
     'full access). Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on '
     'Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.'),
    ('resend_quota_exceeded', 'the Resend team''s plan (its daily and monthly quota)',
     'Resend says the team''s daily or monthly quota is used up. Raise the plan in the Resend dashboard '
     '(Billing), or wait for the quota to reset: the waiting jobs are tried again every hour.'),
    ('resend_misconfigured', 'RESEND_API_URL',
     'RESEND_API_URL does not point at Resend''s API: it answers with a redirect, 405, or 404 for the '
     'endpoint itself. Unset it on Vercel (the default is https://api.resend.com) and redeploy.'),
    ('storage_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)',
     'Supabase Storage refuses the server key (401/403). Set SUPABASE_SECRET_KEY on Vercel to a secret key '
     'of this project (Project Settings, API Keys; or the legacy service_role key in '
     'SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy.'),
    ('storage_bucket_not_found', 'ATTACHMENTS_BUCKET',
     'Supabase Storage has no bucket named as ATTACHMENTS_BUCKET says (the migrations create fax-attachments, '
     'the default). Fix or unset ATTACHMENTS_BUCKET on Vercel and redeploy, or create the bucket.'),
    ('database_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)',
     'The database (PostgREST) refuses the server key, or its role lacks a privilege (401/403). Set '
     'SUPABASE_SECRET_KEY on Vercel to a secret key of this project (or the legacy service_role key in '
     'SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy.');

-- One outage row per cause; the list of causes is no longer a check of its own (the queue's four,
-- and these).
alter table document_jobs_internal.outages drop constraint outages_cause_check;
insert into document_jobs_internal.outages (cause)
select r.code from document_jobs_internal.release_causes r
on conflict (cause) do nothing;

-- The health check reads the releases of the last 2 hours every minute: releases are few, and
-- this keeps that read from scanning the whole attempt history.
create index document_job_attempts_released
    on public.document_job_attempts (error_code, finished_at)
    where outcome = 'released';

-- As in 20261130002100, with the release causes' advice; 503 also names the database's refusal.
create or replace function document_jobs_internal.outage_advice(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
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
            'https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL '
            'in Vault and the deployment on Vercel.'
        else
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot '
            'reach the database, or the database refuses its key, stopped_because database_unauthorized: '
            'check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check '
            '(select status_code, content from net._http_response order by created desc limit 5) and the '
            'worker''s logs on Vercel.'
        end)
$$;

-- As in 20261130002100, then one outage per release cause.
create or replace function document_jobs_internal.check_health()
returns int
language plpgsql
set search_path = ''
as $$
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
                   to_char(v_completed at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), v_cause.code),
            jsonb_build_object('releases', v_releases.releases, 'jobs', v_releases.jobs,
                               'latest_release', v_releases.latest, 'completed_at', v_completed,
                               'check', v_cause.check_what, 'last_error', v_releases.last_error));
    end loop;
    return v_sent;
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
