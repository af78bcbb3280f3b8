-- Bulk retry and cancel of every job a filter matches (see 20261201004100 for the tables): count
-- and keep the ids, then apply in bounded batches.

-- Counts the jobs a filter (document_jobs_internal.job_filter) matches that the action can
-- change (retry: failed ones; cancel: queued and running ones) and keeps their ids. At most
-- 50,000 at once: more is refused with 22023 (narrow the filter, by received time say, and count
-- again). Answers {"bulk_action_id", "action", "job_count", "states", "filter", "prepared_at",
-- "expires_at"}: apply it within 15 minutes, or count again (the count would be stale).
create function public.prepare_document_jobs_bulk_action(
    p_action text,
    p_filter jsonb,
    p_actor_id uuid,
    p_actor_email text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_max_jobs constant int := 50000;
    v_filter jsonb := document_jobs_internal.job_filter(p_filter);
    v_states jsonb;
    v_id uuid;
    v_count int := 0;
begin
    perform document_jobs_internal.require(p_action in ('retry', 'cancel'), 'p_action must be retry or cancel');
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select coalesce(jsonb_agg(s), '[]') into v_states
      from jsonb_array_elements_text(case p_action when 'retry' then '["failed"]'::jsonb
                                                    else '["queued", "running"]'::jsonb end) s
     where not v_filter ? 'states' or v_filter -> 'states' ? s;

    -- Snapshots never applied are of no use after a day.
    delete from document_jobs_internal.bulk_actions b where b.started_at is null and b.prepared_at < now() - interval '1 day';

    insert into document_jobs_internal.bulk_actions (action, filter, actor_id, actor_email)
    values (p_action, v_filter, p_actor_id, left(p_actor_email, 320))
    returning id into v_id;
    if jsonb_array_length(v_states) > 0 then
        execute format(
            'insert into document_jobs_internal.bulk_action_jobs (bulk_action_id, job_id)
             select %L::uuid, j.id from public.document_jobs j where %s limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter || jsonb_build_object('states', v_states)),
            c_max_jobs + 1);
        get diagnostics v_count = row_count;
    end if;
    if v_count > c_max_jobs then
        raise exception using errcode = '22023',
            message = format('more than %s jobs match: narrow the filter (received time, error code) and count again',
                             c_max_jobs);
    end if;
    update document_jobs_internal.bulk_actions b set job_count = v_count where b.id = v_id;
    return jsonb_build_object(
        'bulk_action_id', v_id, 'action', p_action, 'job_count', v_count, 'states', v_states, 'filter', v_filter,
        'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;

-- Where a bulk action stands: counts so far, skips by reason, and the first 100 jobs it could not
-- change, with why.
create function document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
        select jsonb_build_object(
                   'bulk_action_id', b.id, 'action', b.action, 'filter', b.filter, 'job_count', b.job_count,
                   'changed', b.changed, 'skipped', b.skipped, 'processed', b.changed + b.skipped,
                   'done', b.finished_at is not null, 'started_at', b.started_at, 'finished_at', b.finished_at,
                   'skipped_by_reason', coalesce((
                       select jsonb_object_agg(r.reason, r.n)
                         from (select x.reason, count(*) as n from document_jobs_internal.bulk_action_jobs x
                                where x.bulk_action_id = b.id and x.outcome = 'skipped' group by x.reason) r), '{}'),
                   'not_changed', coalesce((
                       select jsonb_agg(jsonb_build_object('job_id', x.job_id, 'reason', x.reason)
                                        order by x.applied_at, x.job_id)
                         from (select * from document_jobs_internal.bulk_action_jobs y
                                where y.bulk_action_id = b.id and y.outcome = 'skipped'
                                order by y.applied_at, y.job_id limit 100) x), '[]'))
          from document_jobs_internal.bulk_actions b
         where b.id = p_bulk_action_id);
end;
$$;

-- One batch of a retry: of the batch's jobs still failed, each one whose e-mail has no live job goes
-- back to queued; of several failed jobs of one e-mail in the action, only the newest (whichever
-- batch it falls in). Returns the ids it changed and records why the others were not.
create function document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[])
returns uuid[]
language plpgsql
set search_path = ''
as $$
declare
    v_eligible uuid[];
    v_blocked uuid[];
    v_second uuid[];
    v_changed uuid[] := '{}'::uuid[];
    v_job uuid;
begin
    with failed as (
        select j.id, j.kind, j.fax_received_email_id, j.created_at
          from public.document_jobs j
         where j.id = any (p_batch) and j.status = 'failed'
           for update
    ), checked as (
        -- Each branch names the states of a partial index on the e-mail, so that both are used.
        select f.id,
               f.fax_received_email_id is not null and (
                   exists (select 1 from public.document_jobs o
                             join document_jobs_internal.bulk_action_jobs x
                               on x.bulk_action_id = p_bulk_action_id and x.job_id = o.id
                            where o.kind = f.kind and o.fax_received_email_id = f.fax_received_email_id
                              and o.status in ('queued', 'running') and (o.created_at, o.id) > (f.created_at, f.id))
                   or exists (select 1 from public.document_jobs o
                                join document_jobs_internal.bulk_action_jobs x
                                  on x.bulk_action_id = p_bulk_action_id and x.job_id = o.id
                               where o.fax_received_email_id = f.fax_received_email_id and o.kind = f.kind
                                 and o.status in ('completed', 'failed') and (o.created_at, o.id) > (f.created_at, f.id)))
                   as second,
               f.fax_received_email_id is not null and exists (
                   select 1 from public.document_jobs l
                    where l.kind = f.kind and l.fax_received_email_id = f.fax_received_email_id
                      and l.status in ('queued', 'running')) as blocked
          from failed f
    )
    select coalesce(array_agg(c.id) filter (where not c.second and not c.blocked), '{}'),
           coalesce(array_agg(c.id) filter (where c.blocked and not c.second), '{}'),
           coalesce(array_agg(c.id) filter (where c.second), '{}')
      into v_eligible, v_blocked, v_second
      from checked c;

    begin
        v_changed := array(select document_jobs_internal.requeue_failed(v_eligible));
    exception
        when unique_violation then
            -- A live job for one of these e-mails appeared since the check (a webhook redelivery
            -- enqueued one, say): go one by one, and skip those.
            foreach v_job in array v_eligible loop
                begin
                    v_changed := v_changed || array(select document_jobs_internal.requeue_failed(array[v_job]));
                exception
                    when unique_violation then
                        v_blocked := v_blocked || v_job;
                end;
            end loop;
    end;

    update document_jobs_internal.bulk_action_jobs b
       set outcome = case when b.job_id = any (v_changed) then 'changed' else 'skipped' end,
           reason = case
                        when b.job_id = any (v_changed) then null
                        when b.job_id = any (v_blocked) then 'another_live_job'
                        when b.job_id = any (v_second) then 'another_job_of_the_same_email'
                        when not exists (select 1 from public.document_jobs j where j.id = b.job_id) then 'job_deleted'
                        else 'not_failed'
                    end,
           applied_at = now()
     where b.bulk_action_id = p_bulk_action_id and b.job_id = any (p_batch);
    return v_changed;
end;
$$;

-- One batch of a cancel: of the batch's jobs still queued or running, every one is cancelled with
-- the action's reason (without a failure alert each: see alert_job_failed).
create function document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text)
returns uuid[]
language plpgsql
set search_path = ''
as $$
declare
    v_changed uuid[];
begin
    perform pg_catalog.set_config('document_jobs.bulk_action', 'on', true);
    v_changed := array(select document_jobs_internal.cancel_live(p_batch, p_reason));
    perform pg_catalog.set_config('document_jobs.bulk_action', '', true);
    update document_jobs_internal.bulk_action_jobs b
       set outcome = case when b.job_id = any (v_changed) then 'changed' else 'skipped' end,
           reason = case
                        when b.job_id = any (v_changed) then null
                        when not exists (select 1 from public.document_jobs j where j.id = b.job_id) then 'job_deleted'
                        else 'not_live'
                    end,
           applied_at = now()
     where b.bulk_action_id = p_bulk_action_id and b.job_id = any (p_batch);
    return v_changed;
end;
$$;

-- Applies the next batch (at most p_batch_size jobs, 1 to 1,000) of a prepared bulk action, in
-- one transaction, and answers where the action stands (bulk_action_progress, and
-- "workers_started"); call it again until "done". Only the operator who prepared it may apply it,
-- within 15 minutes of counting; the first call records it in the audit, once, with its count and
-- the reason (required). A retry starts workers for what it re-queued through the cron's own entry
-- point (invoke_document_jobs: its cap on invocations holds). Calling it after done changes nothing.
create function public.apply_document_jobs_bulk_action(
    p_bulk_action_id uuid,
    p_actor_id uuid,
    p_reason text default null,
    p_batch_size int default 500
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_action document_jobs_internal.bulk_actions;
    v_batch uuid[];
    v_changed uuid[] := '{}'::uuid[];
    v_workers int := 0;
begin
    perform document_jobs_internal.require(p_bulk_action_id is not null, 'p_bulk_action_id must not be null');
    perform document_jobs_internal.require(p_batch_size between 1 and 1000, 'p_batch_size must be between 1 and 1000');
    -- One caller at a time per action: a second waits, then finds the batch done.
    select * into v_action from document_jobs_internal.bulk_actions b where b.id = p_bulk_action_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('no bulk action %s', p_bulk_action_id),
            hint = 'Count again: prepare_document_jobs_bulk_action.';
    end if;
    if v_action.actor_id is distinct from p_actor_id then
        raise exception using errcode = '42501',
            message = 'only the operator who counted these jobs may apply the action';
    end if;
    if v_action.started_at is null then
        perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
        if v_action.prepared_at < now() - interval '15 minutes' then
            raise exception using errcode = '22023',
                message = 'these jobs were counted more than 15 minutes ago: count them again';
        end if;
        v_action.reason := btrim(p_reason);
        update document_jobs_internal.bulk_actions b
           set started_at = now(), reason = v_action.reason, finished_at = case when b.job_count = 0 then now() end
         where b.id = p_bulk_action_id;
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason, bulk_action_id)
        values (v_action.actor_id, v_action.actor_email, 'bulk_' || v_action.action, v_action.filter, v_action.job_count,
                v_action.reason, p_bulk_action_id);
    end if;

    v_batch := array(
        select b.job_id from document_jobs_internal.bulk_action_jobs b
         where b.bulk_action_id = p_bulk_action_id and b.outcome is null
         order by b.job_id limit p_batch_size);
    if cardinality(v_batch) > 0 then
        if v_action.action = 'retry' then
            v_changed := document_jobs_internal.bulk_retry_batch(p_bulk_action_id, v_batch);
            if cardinality(v_changed) > 0 then
                v_workers := public.invoke_document_jobs();
            end if;
        else
            v_changed := document_jobs_internal.bulk_cancel_batch(p_bulk_action_id, v_batch, v_action.reason);
        end if;
        update document_jobs_internal.bulk_actions b
           set changed = b.changed + cardinality(v_changed),
               skipped = b.skipped + cardinality(v_batch) - cardinality(v_changed),
               finished_at = case when not exists (
                                      select 1 from document_jobs_internal.bulk_action_jobs x
                                       where x.bulk_action_id = b.id and x.outcome is null) then now() end
         where b.id = p_bulk_action_id;
    end if;
    return document_jobs_internal.bulk_action_progress(p_bulk_action_id)
           || jsonb_build_object('workers_started', v_workers, 'batch_size', p_batch_size);
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
revoke all on function
    public.prepare_document_jobs_bulk_action(text, jsonb, uuid, text),
    public.apply_document_jobs_bulk_action(uuid, uuid, text, int)
from public, anon, authenticated;
grant execute on function
    public.prepare_document_jobs_bulk_action(text, jsonb, uuid, text),
    public.apply_document_jobs_bulk_action(uuid, uuid, text, int)
to service_role;
