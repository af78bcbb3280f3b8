-- What the admin CLI needs to answer an operator on call without SQL: how many completed jobs a
-- purge would delete (its dry run), and the health of the whole flow in one call (the health
-- check's open outages, the worker's recent answers, which Vault secrets exist).

-- The cutoff of a purge: completed jobs that finished before it go. One definition for the purge
-- and its dry run; the age is the retention setting unless one is given, held to the same bounds.
create function document_jobs_internal.purge_cutoff(p_older_than interval)
returns timestamptz
language plpgsql
stable
set search_path = ''
as $$
declare
    v_older_than interval := coalesce(p_older_than,
                                      (select s.completed_job_retention from public.document_jobs_settings s));
begin
    perform document_jobs_internal.require_retention('p_older_than', v_older_than);
    return now() - v_older_than;
end;
$$;

-- As in 20261129000600, with the cutoff from purge_cutoff.
create or replace function public.purge_document_jobs(p_older_than interval default null)
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_cutoff timestamptz := document_jobs_internal.purge_cutoff(p_older_than);
    v_deleted int;
begin
    -- Completed jobs only: queued, running and failed jobs, and the e-mails and attachments, stay.
    delete from public.document_jobs j
     where j.status = 'completed' and j.finished_at < v_cutoff;
    get diagnostics v_deleted = row_count;
    return v_deleted;
end;
$$;

-- What purge_document_jobs(p_older_than) would delete now, deleting nothing.
create function public.count_purgeable_document_jobs(p_older_than interval default null)
returns bigint
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_cutoff timestamptz := document_jobs_internal.purge_cutoff(p_older_than);
begin
    return (select count(*) from public.document_jobs j where j.status = 'completed' and j.finished_at < v_cutoff);
end;
$$;

-- The flow's health for an operator (the admin CLI's "health"): the outages the health check
-- holds open now, with what to check; the worker's answers of the last hour by status (pg_net
-- keeps them 6 hours); and which of the Vault secrets the database reads exist (names only,
-- never a value). security definer: only postgres may read Vault and the health check's tables.
create function public.document_jobs_health()
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return jsonb_build_object(
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'advice', document_jobs_internal.outage_advice(o.cause))
                             order by o.since)
              from document_jobs_internal.outages o
             where o.active), '[]'::jsonb),
        'worker_answers_last_hour', coalesce((
            select jsonb_agg(jsonb_build_object('status_code', a.status_code, 'count', a.n) order by a.status_code)
              from (select r.status_code, count(*) as n
                      from document_jobs_internal.worker_requests w
                      join net._http_response r on r.id = w.request_id
                     where r.created > now() - interval '1 hour'
                     group by r.status_code) a), '[]'::jsonb),
        'vault_secrets', (
            select jsonb_object_agg(n.name, exists (select 1 from vault.secrets s where s.name = n.name))
              from unnest(array['document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url']) n(name)),
        'checked_at', now());
end;
$$;

revoke all on function
    public.purge_document_jobs(interval),
    public.count_purgeable_document_jobs(interval),
    public.document_jobs_health()
from public, anon, authenticated;
grant execute on function
    public.purge_document_jobs(interval),
    public.count_purgeable_document_jobs(interval),
    public.document_jobs_health()
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
