-- The overview counts open problems, not history: a failed job is a problem until its fax is
-- marked done (fax_handling, 20261207140000), e.g. a fax the provider no longer has, closed with
-- 送信元に再送を依頼済み once the sender was asked to send it again. "failed" and "failed by error
-- code" count the open ones; "failed_closed" the failed jobs whose fax is done. The morning check's
-- 「失敗はありません。」 comes back once every failure is dealt with, while the jobs stay listed
-- (and the last 24 hours' failures, a history by their name, stay as they were). Otherwise as in
-- 20261204100000.
--
-- The audit shows marks: a mark's fax and its from and to (its fax_handling_history row), and a
-- bulk mark's progress as a bulk action's. Otherwise as in 20261201004200.

create or replace function public.document_jobs_admin_overview()
returns jsonb
language plpgsql
security definer
set search_path = ''
set jit = off  -- as the other views (20261201004200_admin_screen_views.sql)
as $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_now_hour timestamptz := date_trunc('hour', now(), 'UTC');
    v_completed bigint;
    v_estimated boolean := true;
    v_failed bigint;
    v_failed_closed bigint;
    v_failed_by_code jsonb;
begin
    perform document_jobs_internal.fill_hourly_outcomes();

    -- Failed jobs are problems until their fax is marked done: those are history, counted apart.
    select coalesce(jsonb_agg(jsonb_build_object('error_code', f.code, 'count', f.n) order by f.n desc, f.code)
                        filter (where f.n > 0), '[]'),
           coalesce(sum(f.n), 0)::bigint, coalesce(sum(f.closed), 0)::bigint
      into v_failed_by_code, v_failed, v_failed_closed
      from (select coalesce(c.last_error_code, '(none)') as code, count(*) filter (where not c.closed) as n,
                   count(*) filter (where c.closed) as closed
              from (select j.last_error_code,
                           exists (select 1 from public.fax_handling h
                                    where h.fax_received_email_id = j.fax_received_email_id and h.state = 'done')
                               as closed
                      from public.document_jobs j where j.status = 'failed') c
             group by 1) f;

    select round(c.reltuples * s.most_common_freqs[array_position(s.most_common_vals::text::text[], 'completed')])::bigint
      into v_completed
      from pg_catalog.pg_class c
      join pg_catalog.pg_stats s on s.schemaname = 'public' and s.tablename = 'document_jobs' and s.attname = 'status'
     where c.oid = 'public.document_jobs'::regclass and c.reltuples >= 0;
    if v_completed is null then
        -- Never analyzed (a new, small table): count, up to a bound.
        select count(*) into v_completed
          from (select 1 from public.document_jobs j where j.status = 'completed' limit 100000) c;
        v_estimated := v_completed >= 100000;
    end if;

    return jsonb_build_object(
        'measured_at', now(),
        'states', jsonb_build_object(
            'queued', (select count(*) from public.document_jobs j where j.status = 'queued'),
            'running', (select count(*) from public.document_jobs j where j.status = 'running'),
            'failed', v_failed,
            'failed_closed', v_failed_closed,
            'completed', v_completed,
            'completed_estimated', v_estimated),
        'oldest_waiting', (
            select jsonb_build_object('id', c.id, 'kind', c.kind, 'status', c.status, 'run_after', c.run_after,
                                      'created_at', c.created_at,
                                      'waiting_seconds', round(extract(epoch from now() - c.run_after)::numeric, 1))
              from public.document_job_kinds k
             cross join lateral (
                   select w.id, w.kind, w.status, w.run_after, w.created_at from public.document_jobs_claimable w
                    where w.kind = k.kind order by w.run_after, w.created_at limit 1) c
             order by c.run_after limit 1),
        'failures_24h', coalesce((
            select jsonb_agg(jsonb_build_object('error_code', f.error_code, 'failed', f.failed, 'retried', f.retried,
                                                'released', f.released, 'other', f.other)
                   order by f.failed desc, f.retried desc, f.error_code)
              from (select coalesce(a.error_code, '(none)') as error_code,
                           count(*) filter (where a.outcome = 'failed') as failed,
                           count(*) filter (where a.outcome = 'retried') as retried,
                           count(*) filter (where a.outcome = 'released') as released,
                           count(*) filter (where a.outcome in ('lease_expired', 'cancelled')) as other
                      from public.document_job_attempts a
                     where a.outcome <> 'completed' and a.finished_at > now() - interval '24 hours'
                     group by 1) f), '[]'),
        'failed_by_error_code', v_failed_by_code,
        'hours', coalesce((
            select jsonb_agg(jsonb_build_object('hour', h.hour, 'completed', h.completed, 'failed', h.failed,
                                                'retried', h.retried, 'latency_p50_ms', round(h.latency_p50_ms),
                                                'latency_p95_ms', round(h.latency_p95_ms))
                   order by h.hour)
              from (select c.hour, c.completed, c.failed, c.retried, c.latency_p50_ms, c.latency_p95_ms
                      from document_jobs_internal.hourly_outcomes c
                     where c.hour >= v_now_hour - interval '167 hours' and c.hour < v_settled
                    union all
                    select s.hour, coalesce(o.completed, 0), coalesce(o.failed, 0), coalesce(o.retried, 0),
                           o.latency_p50_ms, o.latency_p95_ms
                      from generate_series(v_settled, v_now_hour, interval '1 hour') s(hour)
                      left join document_jobs_internal.outcomes_by_hour(v_settled, now() + interval '1 second') o
                        on o.hour = s.hour) h), '[]'),
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'details', document_jobs_internal.outage_details(o.cause))
                   order by o.since)
              from document_jobs_internal.outages o where o.active), '[]'),
        'kinds', (select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k));
end;
$$;

comment on function public.document_jobs_admin_overview() is
    'The admin screen''s overview: jobs by state, the oldest waiting job, failures by error code (last 24 hours), failed jobs now by error code, the hourly series (7 days) and the health check''s open outages. A failed job is an open problem until its fax is marked done: "failed" and "failed_by_error_code" count the open ones, states.failed_closed the others. Queued, running and failed jobs are counted exactly; completed ones, most of the table, are the planner''s estimate ("estimated": true), which autovacuum keeps current.';

create or replace function public.document_jobs_admin_audit(p_before bigint default null, p_limit int default 50)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- as the other views (20261201004200_admin_screen_views.sql)
as $$
declare
    v_entries jsonb;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    select jsonb_agg(jsonb_build_object(
               'id', a.id, 'at', a.at, 'actor_id', a.actor_id, 'actor_email', a.actor_email, 'action', a.action,
               'job_id', a.job_id, 'filter', a.filter, 'job_count', a.job_count, 'reason', a.reason,
               'bulk', case when b.id is not null then jsonb_build_object(
                               'id', b.id, 'changed', b.changed, 'skipped', b.skipped, 'done', b.finished_at is not null,
                               'finished_at', b.finished_at)
                            when hb.id is not null then jsonb_build_object(
                               'id', hb.id, 'changed', hb.changed, 'skipped', hb.skipped,
                               'done', hb.finished_at is not null, 'finished_at', hb.finished_at) end,
               'handling', case when a.action = 'handle' then (
                   select jsonb_build_object('fax_received_email_id', x.fax_received_email_id, 'from', x.from_state,
                                             'to', x.to_state, 'to_assignee_email', x.to_assignee_email)
                     from public.fax_handling_history x where x.audit_id = a.id limit 1) end)
           order by a.id desc)
      into v_entries
      from (select * from public.document_jobs_audit x
             where p_before is null or x.id < p_before
             order by x.id desc limit p_limit + 1) a
      left join document_jobs_internal.bulk_actions b on b.id = a.bulk_action_id
      left join document_jobs_internal.handling_bulk_actions hb on a.action = 'bulk_handle' and hb.id = a.bulk_action_id;
    v_entries := coalesce(v_entries, '[]');
    return jsonb_build_object(
        'entries', (select coalesce(jsonb_agg(e order by n), '[]')
                      from jsonb_array_elements(v_entries) with ordinality as x(e, n) where n <= p_limit),
        'next', case when jsonb_array_length(v_entries) > p_limit then v_entries -> (p_limit - 1) -> 'id' end);
end;
$$;
comment on function public.document_jobs_admin_audit(bigint, integer) is
    'The audit, newest first: {"entries": [...], "next": <id> or null}. A bulk action''s entry (a bulk mark''s too) says how far it got (changed, skipped, done); a mark''s says which fax, from which state to which, and whose it became ("handling").';

