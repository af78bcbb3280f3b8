-- The admin screen's smaller findings (issue 31): what the clients' roles hold, cancelled jobs in a
-- bulk retry, and the ids people see.

-- The audit's identity sequence: 20261201004100 revoked the table, but Supabase's default
-- privileges had given anon and authenticated ALL on the sequence it made (USAGE, SELECT, UPDATE:
-- they could read and move the audit's ids). Nothing uses it but the table's own default, under
-- the owner. supabase/tests/015_no_client_grants.sql checks every object of both schemas.
revoke all on sequence public.document_jobs_audit_id_seq from public, anon, authenticated, service_role;

-- A bulk retry leaves the jobs an admin cancelled out (a cancel is stored as failed with code
-- cancelled), unless its filter names the error code cancelled; the answer says so
-- ("cancelled_left_out"). The screen's and the CLI's bulk retry both count here. Otherwise as in
-- 20261201004300.
create or replace function public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text DEFAULT NULL::text)
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
    -- A cancel is stored as failed with code cancelled: an admin stopped that job on purpose, and
    -- "retry every failed job" must not start it again; a filter that names an error code matches only that
    -- code's jobs, so cancelled ones only when it names cancelled.
    v_leaves_cancelled boolean := p_action = 'retry' and not v_filter ? 'error_code';
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
             select %L::uuid, j.id from public.document_jobs j where %s and %s limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter || jsonb_build_object('states', v_states)),
            case when v_leaves_cancelled then 'j.last_error_code is distinct from ''cancelled''' else 'true' end,
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
        'cancelled_left_out', v_leaves_cancelled,
        'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;

comment on function public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) IS 'Counts the jobs a filter (job_filter) matches that the action can change (retry: failed ones, but not those an admin cancelled, failed with code cancelled, unless the filter names that code; cancel: queued and running ones) and keeps their ids: a snapshot, so the action applies to exactly the jobs the operator confirmed, never to the filter run again. At most 50,000 at once: more is refused with 22023 (narrow the filter and count again). Answers {"bulk_action_id", "action", "job_count", "states", "filter", "cancelled_left_out", "prepared_at", "expires_at"}: apply it within 15 minutes, or count again.';
