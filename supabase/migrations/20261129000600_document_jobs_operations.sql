-- Operating the queue: cancel, queue health, and a configurable retention.

-- How long completed jobs are kept: an hour at least (a job that just completed may still be
-- looked at), ten years at most (long enough for any audit of the job history; a retention of
-- a million years is a typo that turns the purge off). The e-mails and their attachments are
-- never purged. True, for the check constraint below, or 22023 like every argument check.
create function document_jobs_internal.require_retention(p_name text, p_retention interval)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(
        p_retention between interval '1 hour' and interval '10 years',
        p_name || ' must be between 1 hour and 10 years');
    return true;
end;
$$;

-- Checked by the same function whether set through set_document_jobs_retention or by hand.
alter table public.document_jobs_settings
    add column completed_job_retention interval not null default '30 days'
        constraint document_jobs_settings_retention
        check (document_jobs_internal.require_retention('completed_job_retention', completed_job_retention));

-- Cancel a queued or running job: it stops in failed with last_error_code 'cancelled'. A
-- running job's worker learns it at its next lease extension (which returns false, the job no
-- longer being running) and writes nothing more.
create function public.cancel_document_job(p_job_id uuid, p_reason text default null)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           last_error_code = 'cancelled',
           last_error_message = coalesce(left(p_reason, 4000), 'cancelled by an operator')
     where j.id = p_job_id and j.status in ('queued', 'running');
    return found;
end;
$$;

-- Queue health in one call, for service_role (the admin CLI's "stats").
create function public.document_jobs_stats()
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select jsonb_build_object(
        'by_kind_and_status', coalesce((
            select jsonb_agg(jsonb_build_object('kind', kind, 'status', status, 'count', n) order by kind, status)
              from (select kind, status, count(*) as n from public.document_jobs group by kind, status) c), '[]'),
        -- Queue lag: how long the oldest claimable job has been claimable.
        'oldest_claimable_age_seconds', (
            select round(extract(epoch from now() - min(c.run_after))::numeric, 3)
              from public.document_jobs_claimable c),
        'claimable', (select count(*) from public.document_jobs_claimable),
        'in_backoff', (
            select count(*) from public.document_jobs j
             where j.status = 'queued' and j.run_after > now() and j.attempts > 0),
        'running', (select count(*) from public.document_jobs j where j.status = 'running'),
        'failed_last_hour', (
            select count(*) from public.document_jobs j
             where j.status = 'failed' and j.finished_at > now() - interval '1 hour'),
        'last_completed_at', (
            select max(j.finished_at) from public.document_jobs j where j.status = 'completed'),
        'retention', (select s.completed_job_retention from public.document_jobs_settings s),
        'measured_at', now()
    )
$$;

create function public.set_document_jobs_retention(p_completed_job_retention interval)
returns interval
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_retention('p_completed_job_retention', p_completed_job_retention);
    update public.document_jobs_settings set completed_job_retention = p_completed_job_retention;
    return p_completed_job_retention;
end;
$$;

-- Retention: the purge takes its age from the settings when called without one (as the daily cron
-- job does); an age given is held to the same bounds as the setting.
create function public.purge_document_jobs(p_older_than interval default null)
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_older_than interval := coalesce(p_older_than,
                                      (select s.completed_job_retention from public.document_jobs_settings s));
    v_deleted int;
begin
    perform document_jobs_internal.require_retention('p_older_than', v_older_than);
    -- Completed jobs only: queued, running and failed jobs, and the e-mails and attachments, stay.
    delete from public.document_jobs j
     where j.status = 'completed' and j.finished_at < now() - v_older_than;
    get diagnostics v_deleted = row_count;
    return v_deleted;
end;
$$;

revoke all on function
    public.cancel_document_job(uuid, text),
    public.document_jobs_stats(),
    public.set_document_jobs_retention(interval),
    public.purge_document_jobs(interval)
from public, anon, authenticated;
grant execute on function
    public.cancel_document_job(uuid, text),
    public.document_jobs_stats(),
    public.set_document_jobs_retention(interval),
    public.purge_document_jobs(interval)
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
