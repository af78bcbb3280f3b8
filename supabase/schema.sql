-- The current schema of document-jobs: every function, table, view, index, grant, policy, seeded
-- row and cron job of a database that applied supabase/migrations, each object once, in pg_dump's
-- stable order. GENERATED, never edited: a change is a new migration, then `python -m devstack schema`
-- (make schema). tests/test_schema.py fails when this file is not what the migrations build.

--
-- Name: document_jobs_internal; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA document_jobs_internal;


ALTER SCHEMA document_jobs_internal OWNER TO postgres;


--
-- Name: SCHEMA document_jobs_internal; Type: COMMENT; Schema: -; Owner: postgres
--

COMMENT ON SCHEMA document_jobs_internal IS 'Helpers of the document_jobs functions: not exposed by PostgREST, callable by their owner only.';


--
-- Name: public; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA public;


ALTER SCHEMA public OWNER TO postgres;


--
-- Name: SCHEMA public; Type: COMMENT; Schema: -; Owner: postgres
--

COMMENT ON SCHEMA public IS 'standard public schema';


--
-- Name: limits; Type: TYPE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TYPE document_jobs_internal.limits AS (
	lease_max interval,
	lease_rule text,
	retry_after_max interval,
	retry_after_rule text,
	free_budget_releases integer,
	jobs_per_invocation integer,
	invocation_header text
);


ALTER TYPE document_jobs_internal.limits OWNER TO postgres;


--
-- Name: alert_body(jsonb, jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return p_fields || document_jobs_internal.chat_message(
        p_lines, (select s.alert_receiver from public.document_jobs_settings s));
end;
$$;


ALTER FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) OWNER TO postgres;


--
-- Name: alert_job_failed(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.alert_job_failed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if new.attempt_outcome = 'cancelled' and current_setting('document_jobs.bulk_action', true) = 'on' then
        return null;
    end if;
    begin
        perform document_jobs_internal.post_alert(document_jobs_internal.job_failed_alert(new));
    exception
        when others then
            raise warning 'document jobs: the failure alert of job % could not be queued: %', new.id, sqlerrm;
    end;
    return null;
end;
$$;


ALTER FUNCTION document_jobs_internal.alert_job_failed() OWNER TO postgres;


--
-- Name: backoff(integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) RETURNS interval
    LANGUAGE sql
    SET search_path TO ''
    AS $$
    select s.backoff_base
           * (case
                  when p_failed_attempt <= 1 then 1
                  when p_failed_attempt = 2 then 5
                  when p_failed_attempt = 3 then 15
                  else 60
              end)
           * (0.9 + 0.2 * random())
      from public.document_jobs_settings s
$$;


ALTER FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) OWNER TO postgres;


--
-- Name: bulk_action_progress(uuid); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) OWNER TO postgres;


--
-- Name: bulk_cancel_batch(uuid, uuid[], text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) RETURNS uuid[]
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) OWNER TO postgres;


--
-- Name: bulk_retry_batch(uuid, uuid[]); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) RETURNS uuid[]
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) OWNER TO postgres;


--
-- Name: cancel_live(uuid[], text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    return query
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'cancelled',
           last_error_code = 'cancelled',
           last_error_message = coalesce(left(p_reason, 4000), 'cancelled by an operator')
     where j.id = any (p_job_ids) and j.status in ('queued', 'running')
    returning j.id;
end;
$$;


ALTER FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) OWNER TO postgres;


--
-- Name: chat_message(jsonb, text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_line jsonb;
    v_segment jsonb;
    v_value text;
    v_shown text;
    v_lines text[] := '{}'::text[];
    v_blocks jsonb := '[]'::jsonb;
    v_inlines jsonb;
begin
    for v_line in select l.value from jsonb_array_elements(p_lines) l loop
        v_shown := '';
        v_inlines := '[]'::jsonb;
        for v_segment in select s.value from jsonb_array_elements(v_line) s loop
            if jsonb_typeof(v_segment) = 'string' then
                v_value := v_segment #>> '{}';
                v_shown := v_shown || case p_receiver
                    when 'slack' then replace(replace(replace(v_value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                    when 'teams' then v_value
                    else regexp_replace(v_value, '([\\`*_{}\[\]<>#|~!])', '\\\1', 'g')
                end;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            v_value := document_jobs_internal.one_line(v_segment ->> 'quote', coalesce((v_segment ->> 'max')::int, 200));
            if coalesce(v_value, '') = '' then
                v_value := case when v_segment ->> 'quote' is null then '(none)' else '(empty)' end;
                v_shown := v_shown || v_value;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            v_shown := v_shown || case p_receiver
                when 'slack' then
                    '`' || replace(replace(replace(replace(v_value, '`', 'ˋ'), '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                        || '`'
                when 'teams' then v_value
                else '`' || replace(v_value, '`', 'ˋ') || '`'
            end;
            v_inlines := v_inlines || jsonb_build_array(
                jsonb_build_object('type', 'TextRun', 'text', v_value, 'fontType', 'Monospace'));
        end loop;
        v_lines := v_lines || v_shown;
        v_blocks := v_blocks || jsonb_build_array(jsonb_build_object('type', 'RichTextBlock', 'inlines', v_inlines));
    end loop;
    return case p_receiver
        when 'discord' then jsonb_build_object(
            'content', array_to_string(v_lines, E'\n'),
            'allowed_mentions', jsonb_build_object('parse', '[]'::jsonb))
        when 'teams' then jsonb_build_object(
            'type', 'message',
            'attachments', jsonb_build_array(jsonb_build_object(
                'contentType', 'application/vnd.microsoft.card.adaptive',
                'contentUrl', null,
                'content', jsonb_build_object(
                    '$schema', 'http://adaptivecards.io/schemas/adaptive-card.json',
                    'type', 'AdaptiveCard',
                    'version', '1.4',
                    'body', v_blocks))))
        else jsonb_build_object('text', array_to_string(v_lines, E'\n'))
    end;
end;
$_$;


ALTER FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) OWNER TO postgres;


--
-- Name: check_health(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.check_health() RETURNS integer
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
                   to_char(v_completed at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), v_cause.code),
            jsonb_build_object('releases', v_releases.releases, 'jobs', v_releases.jobs,
                               'latest_release', v_releases.latest, 'completed_at', v_completed,
                               'check', v_cause.check_what, 'last_error', v_releases.last_error));
    end loop;
    return v_sent;
end;
$$;


ALTER FUNCTION document_jobs_internal.check_health() OWNER TO postgres;


--
-- Name: current_pg_net_generation(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.current_pg_net_generation() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_generation bigint;
begin
    select g.generation into v_generation from document_jobs_internal.pg_net_generation g;
    if v_generation is null then
        v_generation := nextval('document_jobs_internal.pg_net_generations');
        insert into document_jobs_internal.pg_net_generation (generation) values (v_generation);
        update document_jobs_internal.worker_requests w
           set request_id = null
         where w.request_id is not null
           and w.pg_net_generation is distinct from v_generation;
    end if;
    return v_generation;
end;
$$;


ALTER FUNCTION document_jobs_internal.current_pg_net_generation() OWNER TO postgres;


--
-- Name: email_matches_sql(text, text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
    select format('(%1$s.from_address ilike %2$L or %1$s.subject ilike %2$L)', p_alias,
                  document_jobs_internal.like_pattern(p_q))
$_$;


ALTER FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) OWNER TO postgres;


--
-- Name: emails_matching(text, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
    v_emails uuid[];
begin
    execute format(
        'select array(
             (select e.id
                from document_jobs_internal.email_senders s
               cross join lateral (select e.id from public.fax_received_emails e
                                    where e.from_address = s.from_address limit %1$s) e
               where s.from_address ilike %2$L
               limit %1$s)
             union
             (select e.id from public.fax_received_emails e where e.subject ilike %2$L limit %1$s)
             union
             select x from document_jobs_internal.emails_with_provider_id(%3$L) x
             limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_q), p_q)
       into v_emails;
    return v_emails;
end;
$_$;


ALTER FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) OWNER TO postgres;


--
-- Name: emails_with_provider_id(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) RETURNS SETOF uuid
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    with recursive providers (provider) as (
        select min(e.provider) from public.fax_received_emails e
        union all
        select (select min(e.provider) from public.fax_received_emails e where e.provider > p.provider)
          from providers p
         where p.provider is not null
    )
    select e.id
      from providers p
      join public.fax_received_emails e on e.provider = p.provider and e.provider_email_id = p_provider_email_id
$$;


ALTER FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) OWNER TO postgres;


--
-- Name: fail_expired(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.fail_expired() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_failed int;
begin
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'lease_expired',
           last_error_code = 'lease_expired',
           last_error_message = 'the lease of the last attempt expired before the job finished'
     where j.id = any (array(
               select e.id
                 from public.document_jobs e
                where e.status = 'running'
                  and e.lease_until < now()
                  and e.attempts >= e.max_attempts
                  for update skip locked));
    get diagnostics v_failed = row_count;
    return v_failed;
end;
$$;


ALTER FUNCTION document_jobs_internal.fail_expired() OWNER TO postgres;


--
-- Name: fill_hourly_outcomes(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.fill_hourly_outcomes() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_first_missing timestamptz;
    v_last_missing timestamptz;
    v_filled int;
begin
    delete from document_jobs_internal.hourly_outcomes h where h.hour < v_settled - interval '8 days';
    select min(s.hour), max(s.hour) into v_first_missing, v_last_missing
      from generate_series(v_settled - interval '168 hours', v_settled - interval '1 hour', interval '1 hour') s(hour)
     where not exists (select 1 from document_jobs_internal.hourly_outcomes h where h.hour = s.hour);
    if v_first_missing is null then
        return 0;
    end if;
    insert into document_jobs_internal.hourly_outcomes (hour, completed, failed, retried, latency_p50_ms, latency_p95_ms)
    select s.hour, coalesce(o.completed, 0), coalesce(o.failed, 0), coalesce(o.retried, 0), o.latency_p50_ms,
           o.latency_p95_ms
      from generate_series(v_first_missing, v_last_missing, interval '1 hour') s(hour)
      left join document_jobs_internal.outcomes_by_hour(v_first_missing, v_last_missing + interval '1 hour') o
        on o.hour = s.hour
    on conflict (hour) do nothing;
    get diagnostics v_filled = row_count;
    return v_filled;
end;
$$;


ALTER FUNCTION document_jobs_internal.fill_hourly_outcomes() OWNER TO postgres;


--
-- Name: invocation_cap(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.invocation_cap() RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return (
        select coalesce(
            s.max_invocations_in_flight,
            (select least(20, greatest(1, ceil(3 * l.requests_per_second * (1 - l.share_for_others))))::int
               from public.document_jobs_rate_limits l
              where l.provider = 'resend'),
            12)
          from public.document_jobs_settings s);
end;
$$;


ALTER FUNCTION document_jobs_internal.invocation_cap() OWNER TO postgres;


--
-- Name: invocations_in_flight(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.invocations_in_flight() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_max_duration constant interval := interval '300 seconds';  -- vercel.json: the worker's maxDuration
    v_since timestamptz := clock_timestamp() - c_max_duration;
    v_generation bigint := document_jobs_internal.pg_net_generation_in_use();
begin
    return (
        select count(*)::int
          from document_jobs_internal.worker_requests w
         where w.created_at > v_since
           and w.pg_net_generation = v_generation
           and not exists (select 1 from net._http_response r where r.created > v_since and r.id = w.request_id));
end;
$$;


ALTER FUNCTION document_jobs_internal.invocations_in_flight() OWNER TO postgres;


--
-- Name: document_jobs; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text NOT NULL,
    fax_received_email_id uuid,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 5 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    lease_until timestamp with time zone,
    generation integer DEFAULT 0 NOT NULL,
    last_error_code text,
    last_error_message text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    attempt_started_at timestamp with time zone,
    attempt_invocation_id text,
    budget_releases integer DEFAULT 0 NOT NULL,
    attempt_outcome text,
    CONSTRAINT document_jobs_attempt_outcome_check CHECK ((attempt_outcome = ANY (ARRAY['completed'::text, 'retried'::text, 'released'::text, 'failed'::text, 'lease_expired'::text, 'cancelled'::text]))),
    CONSTRAINT document_jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT document_jobs_lease_only_while_running CHECK (((status = 'running'::text) = (lease_until IS NOT NULL))),
    CONSTRAINT document_jobs_max_attempts_check CHECK ((max_attempts > 0)),
    CONSTRAINT document_jobs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text])))
);


ALTER TABLE public.document_jobs OWNER TO postgres;


--
-- Name: COLUMN document_jobs.attempts; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.attempts IS 'Claims that counted: +1 per claim, -1 when a job is released through no fault of its own.';


--
-- Name: COLUMN document_jobs.generation; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.generation IS 'Fencing token: +1 on every claim. Every later write by a worker names it and changes nothing once it no longer matches.';


--
-- Name: COLUMN document_jobs.attempt_started_at; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.attempt_started_at IS 'When the current (or last) attempt was claimed; set by every claim.';


--
-- Name: COLUMN document_jobs.attempt_invocation_id; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.attempt_invocation_id IS 'The worker invocation that made the current (or last) claim: its x-document-jobs-invocation request header.';


--
-- Name: COLUMN document_jobs.budget_releases; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.budget_releases IS 'Releases for the time budget since the job last stored an attachment (or was retried by hand); from the 4th on, each counts an attempt.';


--
-- Name: COLUMN document_jobs.attempt_outcome; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs.attempt_outcome IS 'How the last attempt ended, null while one runs (a claim clears it): written by the function that ended it (complete, fail, release, cancel, the expired-lease sweep); document_job_attempts copies it.';


--
-- Name: job_failed_alert(public.document_jobs); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    c_files constant int := 5;
    v_email public.fax_received_emails;
    v_names text[];
    v_files jsonb := '[]'::jsonb;
    v_retry text := format('python -m lib.admin retry %s', p_job.id);
    v_history text := format('python -m lib.admin show %s', p_job.id);
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


ALTER FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) OWNER TO postgres;


--
-- Name: job_filter(jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.job_filter(p_filter jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_key text;
    v_filter jsonb := '{}'::jsonb;
    v_text text;
    v_from timestamptz;
    v_to timestamptz;
begin
    if p_filter is null or p_filter = 'null'::jsonb then
        return v_filter;
    end if;
    perform document_jobs_internal.require(jsonb_typeof(p_filter) = 'object', 'p_filter must be a JSON object');
    for v_key in select jsonb_object_keys(p_filter) loop
        perform document_jobs_internal.require(
            v_key = any (array['states', 'kind', 'error_code', 'received_from', 'received_to', 'q']),
            format('p_filter has an unknown key %s (known: states, kind, error_code, received_from, received_to, q)',
                   to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);

    if p_filter ? 'states' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'states') = 'array' and jsonb_array_length(p_filter -> 'states') > 0
            and not exists (select 1 from jsonb_array_elements(p_filter -> 'states') s
                             where jsonb_typeof(s) <> 'string'
                                or s #>> '{}' not in ('queued', 'running', 'completed', 'failed')),
            'p_filter.states must be a non-empty array of queued, running, completed, failed');
        v_filter := v_filter || jsonb_build_object('states',
            (select jsonb_agg(distinct s) from jsonb_array_elements_text(p_filter -> 'states') s));
    end if;

    foreach v_key in array array['kind', 'error_code'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(p_filter ->> v_key) between 1 and 100,
                format('p_filter.%s must be a string of 1 to 100 characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, p_filter ->> v_key);
        end if;
    end loop;

    begin
        v_from := (p_filter ->> 'received_from')::timestamptz;
        v_to := (p_filter ->> 'received_to')::timestamptz;
    exception
        when invalid_datetime_format or datetime_field_overflow or invalid_text_representation then
            raise exception using errcode = '22023',
                message = 'p_filter.received_from and received_to must be timestamps (ISO 8601, e.g. 2026-12-01T09:00:00+09:00)';
    end;
    perform document_jobs_internal.require(v_from is null or v_to is null or v_from < v_to,
        'p_filter.received_from must be before received_to');
    if v_from is not null then
        v_filter := v_filter || jsonb_build_object('received_from', v_from);
    end if;
    if v_to is not null then
        v_filter := v_filter || jsonb_build_object('received_to', v_to);
    end if;

    if p_filter ? 'q' then
        v_text := btrim(p_filter ->> 'q');
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'q') = 'string' and length(v_text) between 1 and 200 and v_text !~ '[[:cntrl:]]',
            'p_filter.q must be 1 to 200 characters, with no control characters');
        v_filter := v_filter || jsonb_build_object('q', v_text);
    end if;
    return v_filter;
end;
$$;


ALTER FUNCTION document_jobs_internal.job_filter(p_filter jsonb) OWNER TO postgres;


--
-- Name: job_filter_sql(jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select concat_ws(' and ',
        'true',
        case when p_filter ? 'states' then format('j.status = any (%L::text[])',
            array(select jsonb_array_elements_text(p_filter -> 'states'))) end,
        case when p_filter ? 'kind' then format('j.kind = %L', p_filter ->> 'kind') end,
        case when p_filter ? 'error_code' then format('j.last_error_code = %L', p_filter ->> 'error_code') end,
        case when p_filter ? 'received_from' then format('j.created_at >= %L::timestamptz', p_filter ->> 'received_from') end,
        case when p_filter ? 'received_to' then format('j.created_at < %L::timestamptz', p_filter ->> 'received_to') end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') end)
$$;


ALTER FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) OWNER TO postgres;


--
-- Name: job_search_sql(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.job_search_sql(p_q text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_is_uuid boolean := p_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
begin
    return format(
        '(%s exists (select 1 from public.fax_received_emails e where e.id = j.fax_received_email_id'
        ' and (e.provider_email_id = %L or %s)))',
        case when v_is_uuid then format('j.id = %L::uuid or j.fax_received_email_id = %L::uuid or', p_q, p_q) else '' end,
        p_q,
        document_jobs_internal.email_matches_sql('e', p_q));
end;
$_$;


ALTER FUNCTION document_jobs_internal.job_search_sql(p_q text) OWNER TO postgres;


--
-- Name: fax_received_emails; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.fax_received_emails (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    provider text DEFAULT 'resend'::text NOT NULL,
    provider_email_id text NOT NULL,
    webhook_id text,
    from_address text,
    to_addresses text[] DEFAULT '{}'::text[] NOT NULL,
    cc_addresses text[] DEFAULT '{}'::text[] NOT NULL,
    subject text,
    message_id text,
    received_at timestamp with time zone,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_received_emails_provider_email_id_check CHECK ((provider_email_id <> ''::text))
);


ALTER TABLE public.fax_received_emails OWNER TO postgres;


--
-- Name: TABLE fax_received_emails; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.fax_received_emails IS 'One row per inbound e-mail; data is the webhook''s verbatim "data" object.';


--
-- Name: COLUMN fax_received_emails.received_at; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.fax_received_emails.received_at IS 'The provider''s created_at, when it parses as a timestamp.';


--
-- Name: job_summary(public.document_jobs, public.fax_received_emails); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
        'max_attempts', p_job.max_attempts, 'created_at', p_job.created_at, 'run_after', p_job.run_after,
        'started_at', p_job.started_at, 'finished_at', p_job.finished_at, 'last_error_code', p_job.last_error_code,
        'last_error_message', left(p_job.last_error_message, 300),
        'email', case when p_email.id is not null then jsonb_build_object(
            'id', p_email.id, 'provider_email_id', p_email.provider_email_id, 'from', p_email.from_address,
            'subject', left(p_email.subject, 300), 'received_at', p_email.received_at) end)
$$;


ALTER FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) OWNER TO postgres;


--
-- Name: jobs_by_state_sql(jsonb, text, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select string_agg(format(
               '(select j.id, j.created_at, j.fax_received_email_id from public.document_jobs j'
               ' where j.status = %L and %s and %s order by j.created_at desc, j.id desc limit %s)',
               s, document_jobs_internal.job_filter_sql(p_filter - 'states'), p_extra, p_limit), ' union all ')
      from jsonb_array_elements_text(coalesce(p_filter -> 'states', '["queued", "running", "completed", "failed"]')) s
$$;


ALTER FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) OWNER TO postgres;


--
-- Name: like_pattern(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.like_pattern(p_q text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select '%' || replace(replace(replace(p_q, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;


ALTER FUNCTION document_jobs_internal.like_pattern(p_q text) OWNER TO postgres;


--
-- Name: limits(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.limits() RETURNS document_jobs_internal.limits
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select
        -- a live worker renews its lease with every attachment, and an invocation lives 300 s:
        -- a longer lease only parks a dead worker's job
        interval '1 hour',
        'p_lease must be more than 0 and at most 1 hour',
        -- a provider asking for more (a monthly quota) is asked again after a day
        interval '1 day',
        'p_retry_after must be between 0 and 1 day',
        -- time-budget releases in a row (no attachment stored between them) that give their
        -- attempt back; from the next one on, each counts
        3,
        -- what one worker invocation handles at most (the fan-out divides by it)
        3,
        -- the request header (lowercased, as PostgREST gives request.headers) naming the invocation
        'x-document-jobs-invocation'
$$;


ALTER FUNCTION document_jobs_internal.limits() OWNER TO postgres;


--
-- Name: FUNCTION limits(); Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON FUNCTION document_jobs_internal.limits() IS 'The bounds and timings the queue functions share, each defined once (tests/test_constants.py pins Python to them).';


--
-- Name: next_run_after(integer, interval); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) RETURNS timestamp with time zone
    LANGUAGE sql
    SET search_path TO ''
    AS $$
    select now() + case
        when p_failed_attempt is null then coalesce(p_retry_after, interval '0')
        else greatest(document_jobs_internal.backoff(p_failed_attempt), coalesce(p_retry_after, interval '0'))
    end
$$;


ALTER FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) OWNER TO postgres;


--
-- Name: note_sender(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.note_sender() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if new.from_address is not null then
        insert into document_jobs_internal.email_senders (from_address) values (new.from_address)
        on conflict do nothing;
    end if;
    return null;
end;
$$;


ALTER FUNCTION document_jobs_internal.note_sender() OWNER TO postgres;


--
-- Name: one_line(text, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
    v_line text;
begin
    v_line := regexp_replace(p_text, '[\t\n\v\f\r\u0085\u2028\u2029]', ' ', 'g');
    v_line := regexp_replace(v_line, '[\u0001-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', '', 'g');
    v_line := btrim(regexp_replace(v_line, ' {2,}', ' ', 'g'));
    return case when length(v_line) > p_max then left(v_line, p_max - 1) || '…' else v_line end;
end;
$$;


ALTER FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) OWNER TO postgres;


--
-- Name: outage_advice(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.outage_advice(p_cause text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION document_jobs_internal.outage_advice(p_cause text) OWNER TO postgres;


--
-- Name: outcomes_by_hour(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, completed integer, failed integer, retried integer, latency_p50_ms double precision, latency_p95_ms double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return query
    select date_trunc('hour', a.finished_at, 'UTC'),
           (count(*) filter (where a.outcome = 'completed'))::int,
           (count(*) filter (where a.outcome = 'failed'))::int,
           (count(*) filter (where a.outcome = 'retried'))::int,
           percentile_cont(0.5) within group (order by extract(epoch from a.finished_at - j.created_at) * 1000)
               filter (where a.outcome = 'completed'),
           percentile_cont(0.95) within group (order by extract(epoch from a.finished_at - j.created_at) * 1000)
               filter (where a.outcome = 'completed')
      from public.document_job_attempts a
      left join public.document_jobs j on a.outcome = 'completed' and j.id = a.job_id
     where a.finished_at >= p_from and a.finished_at < p_to
     group by 1;
end;
$$;


ALTER FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) OWNER TO postgres;


--
-- Name: pg_net_generation_in_use(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.pg_net_generation_in_use() RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select g.generation from document_jobs_internal.pg_net_generation g
$$;


ALTER FUNCTION document_jobs_internal.pg_net_generation_in_use() OWNER TO postgres;


--
-- Name: post_alert(jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.post_alert(p_body jsonb) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION document_jobs_internal.post_alert(p_body jsonb) OWNER TO postgres;


--
-- Name: post_worker(integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.post_worker(p_count integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_url text;
    v_secret text;
    v_count int;
    v_generation bigint;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    -- One caller at a time counts and adds, until its transaction ends: two webhooks at once must
    -- not both take the last free place. (A transaction-level advisory lock of this function's own.)
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('document_jobs_internal.post_worker', 0));
    v_generation := document_jobs_internal.current_pg_net_generation();
    v_count := least(p_count, document_jobs_internal.invocation_cap() - document_jobs_internal.invocations_in_flight());
    for i in 1..v_count loop
        insert into document_jobs_internal.worker_requests (request_id, created_at, pg_net_generation)
        values (net.http_post(
                    url => v_url,
                    body => '{}'::jsonb,
                    headers => jsonb_build_object('Content-Type', 'application/json',
                                                  'Authorization', 'Bearer ' || v_secret),
                    timeout_milliseconds => 300000  -- the worker's maxDuration
                ),
                clock_timestamp(),
                v_generation);
    end loop;
    return greatest(v_count, 0);
end;
$$;


ALTER FUNCTION document_jobs_internal.post_worker(p_count integer) OWNER TO postgres;


--
-- Name: purge_cutoff(interval); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_older_than interval := coalesce(p_older_than,
                                      (select s.completed_job_retention from public.document_jobs_settings s));
begin
    perform document_jobs_internal.require_retention('p_older_than', v_older_than);
    return now() - v_older_than;
end;
$$;


ALTER FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) OWNER TO postgres;


--
-- Name: document_jobs_rate_limits; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_jobs_rate_limits (
    provider text NOT NULL,
    requests_per_second integer DEFAULT 5 NOT NULL,
    share_for_others numeric DEFAULT 0.2 NOT NULL,
    burst integer DEFAULT 0 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    learned_at timestamp with time zone,
    next_at timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL,
    paused_until timestamp with time zone,
    CONSTRAINT document_jobs_rate_limits_burst CHECK (((burst >= 0) AND (burst <= 1))),
    CONSTRAINT document_jobs_rate_limits_requests_per_second CHECK (((requests_per_second >= 1) AND (requests_per_second <= 1000))),
    CONSTRAINT document_jobs_rate_limits_share_for_others CHECK (((share_for_others >= (0)::numeric) AND (share_for_others <= 0.9)))
);


ALTER TABLE public.document_jobs_rate_limits OWNER TO postgres;


--
-- Name: TABLE document_jobs_rate_limits; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.document_jobs_rate_limits IS 'The shared rate limit of each provider API the jobs call: settings (by hand) and the schedule (by the workers).';


--
-- Name: rate_limit_slot(public.document_jobs_rate_limits, timestamp with time zone); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
    v_rate numeric := p_limit.requests_per_second * (1 - p_limit.share_for_others);
    v_interval_us numeric := ceil(1000000 / v_rate);
    v_interval interval := v_interval_us * interval '1 microsecond';
    v_tolerance interval := floor(least(p_limit.burst, p_limit.requests_per_second - v_rate) * v_interval_us)
                            * interval '1 microsecond';
begin
    slot_at := greatest(p_now, p_limit.next_at - v_tolerance, p_limit.paused_until);
    next_at := greatest(p_limit.next_at, slot_at) + v_interval;
end;
$$;


ALTER FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) OWNER TO postgres;


--
-- Name: record_attempt(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.record_attempt() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_outcome text;
    v_lease_passed boolean;
begin
    -- A claim that changed the generation of a running job took it over: the lease had passed.
    -- Otherwise the function that ended the attempt said how; an UPDATE by hand that did not is
    -- recorded as failed.
    v_outcome := case
        when new.generation <> old.generation then 'lease_expired'
        else coalesce(new.attempt_outcome, 'failed')
    end;
    v_lease_passed := v_outcome = 'lease_expired';
    insert into public.document_job_attempts
           (job_id, generation, attempt, started_at, finished_at, outcome, error_code, error_message, invocation_id)
    values (old.id, old.generation, old.attempts, old.attempt_started_at,
            case when v_lease_passed then least(old.lease_until, now()) else now() end,
            v_outcome,
            case when v_lease_passed then 'lease_expired' when v_outcome <> 'completed' then new.last_error_code end,
            case when v_lease_passed then 'the lease passed before the attempt finished (the worker died or was stopped)'
                 when v_outcome <> 'completed' then new.last_error_message end,
            old.attempt_invocation_id)
    on conflict (job_id, generation) do nothing;
    return null;
end;
$$;


ALTER FUNCTION document_jobs_internal.record_attempt() OWNER TO postgres;


--
-- Name: refuse_attempt_update(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.refuse_attempt_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_job_attempts is append-only: its rows are never updated';
end;
$$;


ALTER FUNCTION document_jobs_internal.refuse_attempt_update() OWNER TO postgres;


--
-- Name: refuse_audit_change(); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.refuse_audit_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_jobs_audit is append-only: its rows are never updated or deleted';
end;
$$;


ALTER FUNCTION document_jobs_internal.refuse_audit_change() OWNER TO postgres;


--
-- Name: requeue_failed(uuid[]); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    return query
    update public.document_jobs j
       set status = 'queued',
           attempts = 0,
           budget_releases = 0,
           run_after = now(),
           lease_until = null,
           finished_at = null
     where j.id = any (p_job_ids) and j.status = 'failed'
    returning j.id;
end;
$$;


ALTER FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) OWNER TO postgres;


--
-- Name: require(boolean, text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    if p_ok is not true then
        raise exception using errcode = '22023', message = p_message;
    end if;
end;
$$;


ALTER FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) OWNER TO postgres;


--
-- Name: require_actor(uuid, text, boolean); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.require(
        not p_reason_required or nullif(btrim(p_reason), '') is not null, 'p_reason must not be empty');
    perform document_jobs_internal.require(
        p_reason is null or length(p_reason) <= 500, 'p_reason must be at most 500 characters');
end;
$$;


ALTER FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) OWNER TO postgres;


--
-- Name: require_holder(uuid, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require(p_generation is not null, 'p_generation must not be null');
end;
$$;


ALTER FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) OWNER TO postgres;


--
-- Name: require_kind(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require_kind(p_kind text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        exists (select 1 from public.document_job_kinds k where k.kind = p_kind),
        format('unknown job kind %L (see table document_job_kinds)', p_kind));
end;
$$;


ALTER FUNCTION document_jobs_internal.require_kind(p_kind text) OWNER TO postgres;


--
-- Name: require_retention(text, interval); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        p_retention between interval '1 hour' and interval '10 years',
        p_name || ' must be between 1 hour and 10 years');
    return true;
end;
$$;


ALTER FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) OWNER TO postgres;


--
-- Name: require_retry_after(interval); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        p_retry_after is null or p_retry_after between interval '0' and (document_jobs_internal.limits()).retry_after_max,
        (document_jobs_internal.limits()).retry_after_rule);
end;
$$;


ALTER FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) OWNER TO postgres;


--
-- Name: reserve_request(text, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_limit public.document_jobs_rate_limits;
    v_now timestamptz;
    v_slot_at timestamptz;
    v_next_at timestamptz;
    v_wait_ms int;
begin
    -- No worker waits longer than its function may run (vercel.json maxDuration, 300 s).
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select * into v_limit from public.document_jobs_rate_limits l where l.provider = p_provider for update;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    if not v_limit.enabled then
        return jsonb_build_object('reserved', true, 'wait_ms', 0, 'limit', v_limit.requests_per_second);
    end if;
    -- Read once the row is ours: a clock read before waiting for the lock would hand out a slot
    -- in the past, as much too early as the wait lasted.
    v_now := clock_timestamp();
    select s.slot_at, s.next_at into v_slot_at, v_next_at from document_jobs_internal.rate_limit_slot(v_limit, v_now) s;
    v_wait_ms := ceil(extract(epoch from v_slot_at - v_now) * 1000)::int;
    if v_wait_ms <= p_max_wait_ms then
        update public.document_jobs_rate_limits l set next_at = v_next_at where l.provider = p_provider;
    end if;
    return jsonb_build_object(
        'reserved', v_wait_ms <= p_max_wait_ms, 'wait_ms', v_wait_ms, 'limit', v_limit.requests_per_second);
end;
$$;


ALTER FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) OWNER TO postgres;


--
-- Name: search_walk(jsonb, timestamp with time zone, uuid, integer, integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_keyset text := 'true';
begin
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;
    execute format(
        'select array(select j.id from (select q.id, q.created_at, q.fax_received_email_id from (%s) q
                                        order by q.created_at desc, q.id desc limit %s) j
                       where %s order by j.created_at desc, j.id desc limit %s)',
        document_jobs_internal.jobs_by_state_sql(p_filter - 'q', v_keyset, p_walk), p_walk,
        document_jobs_internal.job_search_sql(p_filter ->> 'q'), p_limit + 1)
       into ids;
    if cardinality(ids) <= p_limit then
        execute format(
            'select q.created_at, q.id from (%s) q order by q.created_at desc, q.id desc offset %s limit 1',
            document_jobs_internal.jobs_by_state_sql(p_filter - 'q', v_keyset, p_walk), p_walk - 1)
           into oldest_created_at, oldest_id;
    end if;
end;
$$;


ALTER FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) OWNER TO postgres;


--
-- Name: set_outage(text, boolean, text, text, jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) RETURNS integer
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
                       to_char(v_outage.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))))));
        return 1;
    end if;
    return 0;
end;
$$;


ALTER FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) OWNER TO postgres;


--
-- Name: start_workers(integer); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.start_workers(p_at_most integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_jobs_per_invocation constant int := (document_jobs_internal.limits()).jobs_per_invocation;
    c_most constant int := 20;  -- the highest cap
    v_claimable bigint;
begin
    select count(*) into v_claimable
      from (select 1 from public.document_jobs_claimable
             limit coalesce(p_at_most, c_most) * c_jobs_per_invocation) c;
    if v_claimable = 0 then
        return 0;
    end if;
    return document_jobs_internal.post_worker(ceil(v_claimable::numeric / c_jobs_per_invocation)::int);
end;
$$;


ALTER FUNCTION document_jobs_internal.start_workers(p_at_most integer) OWNER TO postgres;


--
-- Name: text_array(jsonb); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.text_array(p_value jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case jsonb_typeof(p_value)
               when 'array' then array(select jsonb_array_elements_text(p_value))
               when 'string' then array[p_value #>> '{}']
               else '{}'::text[]
           end
$$;


ALTER FUNCTION document_jobs_internal.text_array(p_value jsonb) OWNER TO postgres;


--
-- Name: try_timestamptz(text); Type: FUNCTION; Schema: document_jobs_internal; Owner: postgres
--

CREATE FUNCTION document_jobs_internal.try_timestamptz(p_value text) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
begin
    if p_value !~ '^\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?$' then
        return null;  -- also for null
    end if;
    return p_value::timestamptz;
exception
    when others then  -- 2026-02-30
        return null;
end;
$_$;


ALTER FUNCTION document_jobs_internal.try_timestamptz(p_value text) OWNER TO postgres;


--
-- Name: admin_cancel_document_job(uuid, uuid, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], btrim(p_reason));
    if v_cancelled = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_live' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'cancel', p_job_id, 1, btrim(p_reason));
    return jsonb_build_object('changed', true);
end;
$$;


ALTER FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) OWNER TO postgres;


--
-- Name: admin_retry_document_job(uuid, uuid, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text DEFAULT NULL::text, p_reason text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, false);
    begin
        select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    exception
        when unique_violation then
            return jsonb_build_object('changed', false, 'reason', 'another_live_job');
    end;
    if v_retried = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_failed' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'retry', p_job_id, 1, nullif(btrim(p_reason), ''));
    perform document_jobs_internal.post_worker(1);
    return jsonb_build_object('changed', true);
end;
$$;


ALTER FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) OWNER TO postgres;


--
-- Name: apply_document_jobs_bulk_action(uuid, uuid, text, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text DEFAULT NULL::text, p_batch_size integer DEFAULT 500) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) OWNER TO postgres;


--
-- Name: cancel_document_job(uuid, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], p_reason);
    return v_cancelled > 0;
end;
$$;


ALTER FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) OWNER TO postgres;


--
-- Name: claim_document_jobs(text, integer, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.claim_document_jobs(p_kind text, p_limit integer DEFAULT 1, p_lease interval DEFAULT '00:05:00'::interval) RETURNS SETOF public.document_jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
    -- Real PostgREST gives SQL the request's headers as JSON with lowercased names in the setting
    -- request.headers; the worker sends its Vercel request id in limits().invocation_header.
    -- Outside a PostgREST request the setting is unset (null) or empty (''), and the id is null.
    v_invocation_id text := left(
        nullif(current_setting('request.headers', true), '')::jsonb
            ->> (document_jobs_internal.limits()).invocation_header, 200);
begin
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    if p_limit is null or p_limit not between 1 and 100 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 100';
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    perform document_jobs_internal.fail_expired();

    -- Postgres has no UPDATE ... LIMIT: pick and lock in a sub-select. SKIP LOCKED lets
    -- concurrent claimers pass each other's rows; a row claimed and committed by another
    -- worker since our snapshot is re-checked against the view's condition and dropped.
    return query
    update public.document_jobs j
       set status = 'running',
           attempts = j.attempts + 1,
           generation = j.generation + 1,
           lease_until = now() + p_lease,
           started_at = coalesce(j.started_at, now()),
           attempt_started_at = now(),
           attempt_invocation_id = v_invocation_id,
           attempt_outcome = null
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
    if not found then
        perform document_jobs_internal.require_kind(p_kind);
    end if;
end;
$$;


ALTER FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) OWNER TO postgres;


--
-- Name: complete_document_job(uuid, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$ select (public.complete_document_job_v2(p_job_id, p_generation) ->> 'held')::boolean $$;


ALTER FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) OWNER TO postgres;


--
-- Name: complete_document_job_and_claim_next(uuid, integer, text, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval DEFAULT '00:05:00'::interval) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select jsonb_build_object('completed', a -> 'held', 'next_job', a -> 'next_job')
      from public.complete_document_job_and_claim_next_v2(p_job_id, p_generation, p_kind, p_lease) a
$$;


ALTER FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) OWNER TO postgres;


--
-- Name: complete_document_job_and_claim_next_v2(uuid, integer, text, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
    v_next public.document_jobs;
begin
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    select * into v_next from public.claim_document_jobs(p_kind, 1, p_lease);
    return v_answer || jsonb_build_object('next_job', case when v_next.id is null then null else to_jsonb(v_next) end);
end;
$$;


ALTER FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) OWNER TO postgres;


--
-- Name: complete_document_job_and_follow_up(uuid, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_completed boolean;
begin
    v_completed := public.complete_document_job(p_job_id, p_generation);
    return jsonb_build_object('completed', v_completed, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) OWNER TO postgres;


--
-- Name: complete_document_job_and_follow_up_v2(uuid, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) OWNER TO postgres;


--
-- Name: complete_document_job_v2(uuid, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    update public.document_jobs j
       set status = 'completed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'completed'
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'completed' end);
end;
$$;


ALTER FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) OWNER TO postgres;


--
-- Name: count_purgeable_document_jobs(interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.count_purgeable_document_jobs(p_older_than interval DEFAULT NULL::interval) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cutoff timestamptz := document_jobs_internal.purge_cutoff(p_older_than);
begin
    return (select count(*) from public.document_jobs j where j.status = 'completed' and j.finished_at < v_cutoff);
end;
$$;


ALTER FUNCTION public.count_purgeable_document_jobs(p_older_than interval) OWNER TO postgres;


--
-- Name: document_jobs_admin_audit(bigint, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_admin_audit(p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_entries jsonb;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    select jsonb_agg(jsonb_build_object(
               'id', a.id, 'at', a.at, 'actor_id', a.actor_id, 'actor_email', a.actor_email, 'action', a.action,
               'job_id', a.job_id, 'filter', a.filter, 'job_count', a.job_count, 'reason', a.reason,
               'bulk', case when b.id is not null then jsonb_build_object(
                   'id', b.id, 'changed', b.changed, 'skipped', b.skipped, 'done', b.finished_at is not null,
                   'finished_at', b.finished_at) end)
           order by a.id desc)
      into v_entries
      from (select * from public.document_jobs_audit x
             where p_before is null or x.id < p_before
             order by x.id desc limit p_limit + 1) a
      left join document_jobs_internal.bulk_actions b on b.id = a.bulk_action_id;
    v_entries := coalesce(v_entries, '[]');
    return jsonb_build_object(
        'entries', (select coalesce(jsonb_agg(e order by n), '[]')
                      from jsonb_array_elements(v_entries) with ordinality as x(e, n) where n <= p_limit),
        'next', case when jsonb_array_length(v_entries) > p_limit then v_entries -> (p_limit - 1) -> 'id' end);
end;
$$;


ALTER FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) OWNER TO postgres;


--
-- Name: document_jobs_admin_job(uuid); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_admin_job(p_job_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
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
            'created_at', v_email.created_at) end,
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'filename', a.filename, 'content_type', a.content_type, 'size_bytes', a.size_bytes,
                       'sha256', a.sha256, 'stored_at', a.updated_at)
                   order by a.filename, a.id)
              from public.fax_received_email_attachments a where a.fax_received_email_id = v_email.id), '[]'));
end;
$$;


ALTER FUNCTION public.document_jobs_admin_job(p_job_id uuid) OWNER TO postgres;


--
-- Name: document_jobs_admin_jobs(jsonb, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_admin_jobs(p_filter jsonb DEFAULT '{}'::jsonb, p_after_created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $_$
declare
    c_walk constant int := 1000;
    c_first_walk constant int := 200;
    v_walk int;
    c_candidates constant int := 5000;
    c_count_cap constant int := 10000;
    v_filter jsonb := document_jobs_internal.job_filter(p_filter);
    v_q text := v_filter ->> 'q';
    v_keyset text := 'true';
    v_ids uuid[];
    v_oldest_created_at timestamptz;
    v_oldest_id uuid;
    v_emails uuid[];
    v_job_id uuid;
    v_partial boolean := false;
    v_count int;
    v_next jsonb;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    perform document_jobs_internal.require((p_after_created_at is null) = (p_after_id is null),
        'p_after_created_at and p_after_id go together');
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;

    if v_q is null then
        execute format('select array(select q.id from (%s) q order by q.created_at desc, q.id desc limit %s)',
                       document_jobs_internal.jobs_by_state_sql(v_filter, v_keyset, p_limit + 1), p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from (%s) q limit %s) c',
                           document_jobs_internal.jobs_by_state_sql(v_filter, 'true', c_count_cap + 1), c_count_cap + 1)
               into v_count;
        end if;
    else
        if v_q !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
            -- The newest jobs first: a common term fills a page here. A term of three characters
            -- or more is tried on the newest 200 first: a rare one (the indexes answer it sooner
            -- than 1,000 jobs are read) goes to the indexes; one that is common there, whose
            -- 1,000 jobs would at that rate hold a page, walks the 1,000.
            v_walk := case when length(v_q) >= 3 then c_first_walk else c_walk end;
            select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
              from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, v_walk, p_limit) w;
            if v_walk < c_walk and v_oldest_id is not null and cardinality(v_ids) * c_walk / v_walk > p_limit then
                v_walk := c_walk;
                select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
                  from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, v_walk, p_limit) w;
            end if;
        end if;
        if v_ids is null or (cardinality(v_ids) <= p_limit and v_oldest_id is not null) then
            -- Not enough there: look the term up in the indexes, if they can answer exactly (the
            -- trigram index needs three characters; a UUID has 36).
            if length(v_q) >= 3 then
                v_emails := document_jobs_internal.emails_matching(v_q, c_candidates + 1);
            end if;
            if v_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
                v_job_id := v_q::uuid;  -- a job's id, or an e-mail's: its jobs are found as the others'
                v_emails := v_emails || v_job_id;
            end if;
            if v_emails is not null and cardinality(v_emails) <= c_candidates then
                -- Their jobs that the other filters keep, newest first (each branch through an
                -- index on the e-mail: the finished ones, and the live one of each kind, probed one
                -- e-mail at a time; "limit 1", which the unique index makes exact, keeps the planner
                -- from hashing every live job instead), and a job named by its id. Every one of
                -- them matches the term already.
                execute format(
                    'select array(select c.id from (
                         select j.id, j.created_at from public.document_jobs j
                          where j.fax_received_email_id = any ($1) and j.status in (''completed'', ''failed'')
                            and %1$s and %2$s
                         union
                         select l.id, l.created_at
                           from unnest($1) x(email_id)
                          cross join public.document_job_kinds k
                          cross join lateral (
                                select j.id, j.created_at from public.document_jobs j
                                 where j.kind = k.kind and j.fax_received_email_id = x.email_id
                                   and j.status in (''queued'', ''running'') and %1$s and %2$s
                                 limit 1) l
                         union
                         select j.id, j.created_at from public.document_jobs j where j.id = $2 and %1$s and %2$s
                     ) c order by c.created_at desc, c.id desc limit %3$s)',
                    document_jobs_internal.job_filter_sql(v_filter - 'q'), v_keyset, p_limit + 1)
                   into v_ids
                  using v_emails, v_job_id;
            else
                if v_walk < c_walk then
                    -- Too many e-mails to list: the search walks 1,000 jobs at a time, as for a
                    -- short term.
                    select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
                      from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, c_walk, p_limit) w;
                end if;
                v_partial := coalesce(cardinality(v_ids) <= p_limit and v_oldest_id is not null, false);
            end if;
        end if;
    end if;

    if v_partial then
        v_next := jsonb_build_object('created_at', v_oldest_created_at, 'id', v_oldest_id);
    elsif cardinality(v_ids) > p_limit then
        v_ids := v_ids[1:p_limit];
        select jsonb_build_object('created_at', j.created_at, 'id', j.id) into v_next
          from public.document_jobs j where j.id = v_ids[p_limit];
    end if;

    return jsonb_build_object(
        'jobs', coalesce((
            select jsonb_agg(document_jobs_internal.job_summary(j, e) order by j.created_at desc, j.id desc)
              from public.document_jobs j
              left join public.fax_received_emails e on e.id = j.fax_received_email_id
             where j.id = any (v_ids)), '[]'),
        'next', v_next,
        'partial', v_partial,
        'searched_until', case when v_partial then v_oldest_created_at end,
        'count', case when v_count <= c_count_cap then v_count end,
        'count_capped', coalesce(v_count > c_count_cap, false),
        'filter', v_filter);
end;
$_$;


ALTER FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) OWNER TO postgres;


--
-- Name: document_jobs_admin_overview(); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_admin_overview() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_now_hour timestamptz := date_trunc('hour', now(), 'UTC');
    v_completed bigint;
    v_estimated boolean := true;
    v_failed bigint;
    v_coded bigint;
    v_failed_by_code jsonb;
begin
    perform document_jobs_internal.fill_hourly_outcomes();

    select count(*) into v_failed from public.document_jobs j where j.status = 'failed';
    -- By error code from document_jobs_by_error_code alone (an index-only scan); failed jobs
    -- without a code, if any, are the difference.
    select coalesce(jsonb_agg(jsonb_build_object('error_code', f.code, 'count', f.n) order by f.n desc, f.code), '[]'),
           coalesce(sum(f.n), 0)::bigint
      into v_failed_by_code, v_coded
      from (select j.last_error_code as code, count(*) as n from public.document_jobs j
             where j.last_error_code is not null and j.status = 'failed' group by 1) f;
    if v_failed > v_coded then
        v_failed_by_code := v_failed_by_code
                            || jsonb_build_array(jsonb_build_object('error_code', '(none)', 'count', v_failed - v_coded));
    end if;

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
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at)
                   order by o.since)
              from document_jobs_internal.outages o where o.active), '[]'),
        'kinds', (select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k));
end;
$$;


ALTER FUNCTION public.document_jobs_admin_overview() OWNER TO postgres;


--
-- Name: document_jobs_health(); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_health() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION public.document_jobs_health() OWNER TO postgres;


--
-- Name: document_jobs_stats(); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.document_jobs_stats() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION public.document_jobs_stats() OWNER TO postgres;


--
-- Name: enqueue_document_job(text, uuid, boolean); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean DEFAULT false) RETURNS TABLE(job_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_id uuid;
begin
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require(
        p_fax_received_email_id is not null, 'p_fax_received_email_id must not be null');
    if not exists (select 1 from public.fax_received_emails e where e.id = p_fax_received_email_id) then
        raise exception using errcode = 'foreign_key_violation',
            message = format('fax_received_emails %s does not exist', p_fax_received_email_id);
    end if;
    loop
        insert into public.document_jobs (kind, fax_received_email_id)
        values (p_kind, p_fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing
        returning id into v_id;
        if v_id is not null then
            if p_kick then
                -- Defined with the rest of calling the worker, in the next migration.
                perform document_jobs_internal.post_worker(1);
            end if;
            return query select v_id, true;
            return;
        end if;

        select j.id into v_id
          from public.document_jobs j
         where j.kind = p_kind and j.fax_received_email_id = p_fax_received_email_id
           and j.status in ('queued', 'running');
        if v_id is not null then
            return query select v_id, false;
            return;
        end if;
        -- The live job finished between the two statements: insert again.
    end loop;
end;
$$;


ALTER FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) OWNER TO postgres;


--
-- Name: extend_document_job_lease(uuid, integer, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval DEFAULT '00:05:00'::interval) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$ select (public.extend_document_job_lease_v2(p_job_id, p_generation, p_lease) ->> 'held')::boolean $$;


ALTER FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) OWNER TO postgres;


--
-- Name: extend_document_job_lease_v2(uuid, integer, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'running' end);
end;
$$;


ALTER FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) OWNER TO postgres;


--
-- Name: fail_document_job(uuid, integer, text, text, boolean, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                       p_retry_after) ->> 'state'
$$;


ALTER FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) OWNER TO postgres;


--
-- Name: fail_document_job_and_follow_up(uuid, integer, text, text, boolean, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_left_in text;
begin
    v_left_in := public.fail_document_job(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) OWNER TO postgres;


--
-- Name: fail_document_job_and_follow_up_v2(uuid, integer, text, text, boolean, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) OWNER TO postgres;


--
-- Name: fail_document_job_v2(uuid, integer, text, text, boolean, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_job public.document_jobs;
    v_retry boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(nullif(p_error_code, '') is not null, 'p_error_code must not be empty');
    perform document_jobs_internal.require(p_retryable is not null, 'p_retryable must not be null');
    perform document_jobs_internal.require_retry_after(p_retry_after);

    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;

    v_retry := p_retryable and v_job.attempts < v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_retry then 'queued' else 'failed' end,
           run_after = case
                           when v_retry then document_jobs_internal.next_run_after(v_job.attempts, p_retry_after)
                           else j.run_after
                       end,
           lease_until = null,
           finished_at = case when v_retry then null else now() end,
           attempt_outcome = case when v_retry then 'retried' else 'failed' end,
           last_error_code = p_error_code,
           last_error_message = left(p_error_message, 4000)
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_retry then 'queued' else 'failed' end);
end;
$$;


ALTER FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) OWNER TO postgres;


--
-- Name: invoke_document_jobs(integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.invoke_document_jobs(p_max_invocations integer DEFAULT NULL::integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_max_invocations is not null and p_max_invocations not between 1 and 20 then
        raise exception using errcode = '22023', message = 'p_max_invocations must be between 1 and 20';
    end if;
    perform document_jobs_internal.fail_expired();
    return document_jobs_internal.start_workers(p_max_invocations);
end;
$$;


ALTER FUNCTION public.invoke_document_jobs(p_max_invocations integer) OWNER TO postgres;


--
-- Name: note_provider_rate_limit(text, integer, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer DEFAULT NULL::integer, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_state jsonb;
begin
    if p_limit is not null and p_limit not between 1 and 1000 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 1000';
    end if;
    if p_retry_after is not null and p_retry_after not between interval '0' and interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_retry_after must be between 0 and 1 hour';
    end if;
    update public.document_jobs_rate_limits l
       set requests_per_second = coalesce(p_limit, l.requests_per_second),
           learned_at = case when p_limit is null then l.learned_at else now() end,
           paused_until = case when p_retry_after is null then l.paused_until
                               else greatest(l.paused_until, clock_timestamp() + p_retry_after) end
     where l.provider = p_provider
    returning jsonb_build_object('limit', l.requests_per_second, 'paused_until', l.paused_until) into v_state;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    return v_state;
end;
$$;


ALTER FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) OWNER TO postgres;


--
-- Name: prepare_document_jobs_bulk_action(text, jsonb, uuid, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) OWNER TO postgres;


--
-- Name: purge_document_jobs(interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.purge_document_jobs(p_older_than interval DEFAULT NULL::interval) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


ALTER FUNCTION public.purge_document_jobs(p_older_than interval) OWNER TO postgres;


--
-- Name: record_document_attachment(uuid, integer, text, text, text, bigint, text, text, text, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval DEFAULT NULL::interval) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select (public.record_document_attachment_v2(p_job_id, p_generation, p_provider_attachment_id, p_filename,
                                                 p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path,
                                                 p_lease) ->> 'held')::boolean
$$;


ALTER FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) OWNER TO postgres;


--
-- Name: record_document_attachment_v2(uuid, integer, text, text, text, bigint, text, text, text, interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
           for share;
    else
        if p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
            raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
        end if;
        -- Storing an attachment ends a streak of time-budget releases (release_document_job_v2).
        update public.document_jobs j
           set lease_until = now() + p_lease,
               budget_releases = 0
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
        returning j.fax_received_email_id into v_email_id;
    end if;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    insert into public.fax_received_email_attachments as a
           (fax_received_email_id, provider_attachment_id, filename, content_type, size_bytes, sha256, bucket,
            storage_path)
    values (v_email_id, p_provider_attachment_id, p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket,
            p_storage_path)
    on conflict (fax_received_email_id, provider_attachment_id) do update
       set filename = excluded.filename,
           content_type = excluded.content_type,
           size_bytes = excluded.size_bytes,
           sha256 = excluded.sha256,
           bucket = excluded.bucket,
           storage_path = excluded.storage_path,
           updated_at = now();
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;


ALTER FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) OWNER TO postgres;


--
-- Name: record_inbound_email(text, text, jsonb); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) RETURNS TABLE(fax_received_email_id uuid, job_id uuid, duplicate boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require(
        nullif(p_provider_email_id, '') is not null, 'p_provider_email_id must not be empty');
    perform document_jobs_internal.require(jsonb_typeof(p_data) = 'object', 'p_data must be a JSON object');

    insert into public.fax_received_emails as e
           (provider, provider_email_id, webhook_id, from_address, to_addresses, cc_addresses,
            subject, message_id, received_at, data)
    values ('resend', p_provider_email_id, p_webhook_id, p_data ->> 'from',
            document_jobs_internal.text_array(p_data -> 'to'), document_jobs_internal.text_array(p_data -> 'cc'),
            p_data ->> 'subject', p_data ->> 'message_id',
            document_jobs_internal.try_timestamptz(p_data ->> 'created_at'), p_data)
    on conflict (provider, provider_email_id) do nothing
    returning e.id into v_email_id;

    if v_email_id is null then
        -- A redelivery: report what exists, create nothing.
        return query
        select e.id,
               (select j.id from public.document_jobs j
                 where j.fax_received_email_id = e.id and j.kind = 'fetch_email'
                 order by j.created_at desc limit 1),
               true
          from public.fax_received_emails e
         where e.provider = 'resend' and e.provider_email_id = p_provider_email_id;
        return;
    end if;

    return query
    select v_email_id, q.job_id, false
      from public.enqueue_document_job('fetch_email', v_email_id, p_kick => true) q;
end;
$$;


ALTER FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) OWNER TO postgres;


--
-- Name: release_document_job(uuid, integer, interval, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message)
           ->> 'state'
$$;


ALTER FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) OWNER TO postgres;


--
-- Name: release_document_job_and_follow_up(uuid, integer, interval, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_left_in text;
begin
    v_left_in := public.release_document_job(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) OWNER TO postgres;


--
-- Name: release_document_job_and_follow_up_v2(uuid, integer, interval, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;


ALTER FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) OWNER TO postgres;


--
-- Name: release_document_job_v2(uuid, integer, interval, text, text); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    c_free_budget_releases constant int := (document_jobs_internal.limits()).free_budget_releases;
    v_job public.document_jobs;
    v_counted boolean;
    v_failed boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require_retry_after(p_retry_after);
    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    -- A time-budget release past the free ones counts its attempt, and may be the last.
    v_counted := p_error_code = 'time_budget' and v_job.budget_releases >= c_free_budget_releases;
    v_failed := v_counted and v_job.attempts >= v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_failed then 'failed' else 'queued' end,
           attempts = case when v_counted then j.attempts else greatest(j.attempts - 1, 0) end,
           budget_releases = j.budget_releases + case when p_error_code = 'time_budget' then 1 else 0 end,
           run_after = case
                           when v_failed then j.run_after
                           else document_jobs_internal.next_run_after(null, p_retry_after)
                       end,
           lease_until = null,
           finished_at = case when v_failed then now() end,
           attempt_outcome = case when v_failed then 'failed' when v_counted then 'retried' else 'released' end,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case
               when p_error_code is null then j.last_error_message
               when v_counted then left(format(
                   '%s (release %s in a row for the time budget with no attachment stored: after %s, each counts an attempt)',
                   p_error_message, v_job.budget_releases + 1, c_free_budget_releases), 4000)
               else left(p_error_message, 4000)
           end
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_failed then 'failed' else 'queued' end);
end;
$$;


ALTER FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) OWNER TO postgres;


--
-- Name: reserve_provider_request(text, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    return document_jobs_internal.reserve_request(p_provider, p_max_wait_ms);
end;
$$;


ALTER FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) OWNER TO postgres;


--
-- Name: retry_document_job(uuid); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.retry_document_job(p_job_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    return v_retried > 0;
exception
    when unique_violation then
        raise exception using
            errcode = 'unique_violation',
            message = format('document job %s cannot be retried: another job for the same target is already queued or running', p_job_id),
            hint = 'Wait for that job to finish, or cancel it, then retry.';
end;
$$;


ALTER FUNCTION public.retry_document_job(p_job_id uuid) OWNER TO postgres;


--
-- Name: set_document_jobs_retention(interval); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) RETURNS interval
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require_retention('p_completed_job_retention', p_completed_job_retention);
    update public.document_jobs_settings set completed_job_retention = p_completed_job_retention;
    return p_completed_job_retention;
end;
$$;


ALTER FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) OWNER TO postgres;


--
-- Name: start_fetch_email(uuid, integer, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select case when (a ->> 'held')::boolean then a - 'held' - 'state' end
      from public.start_fetch_email_v2(p_job_id, p_generation, p_max_wait_ms) a
$$;


ALTER FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) OWNER TO postgres;


--
-- Name: start_fetch_email_v2(uuid, integer, integer); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_row_id uuid;
    v_email jsonb;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select j.fax_received_email_id into v_email_row_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select jsonb_build_object('id', e.id, 'provider_email_id', e.provider_email_id) into v_email
      from public.fax_received_emails e
     where e.id = v_email_row_id;
    if v_email is null then
        return jsonb_build_object('held', true, 'state', 'running', 'email', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', v_email,
        'stored_attachment_ids', coalesce(
            (select jsonb_agg(a.provider_attachment_id order by a.provider_attachment_id)
               from public.fax_received_email_attachments a
              where a.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'resend', document_jobs_internal.reserve_request('resend', p_max_wait_ms));
end;
$$;


ALTER FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) OWNER TO postgres;


--
-- Name: bulk_action_jobs; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.bulk_action_jobs (
    bulk_action_id uuid NOT NULL,
    job_id uuid NOT NULL,
    outcome text,
    reason text,
    applied_at timestamp with time zone,
    CONSTRAINT bulk_action_jobs_outcome_check CHECK ((outcome = ANY (ARRAY['changed'::text, 'skipped'::text])))
);


ALTER TABLE document_jobs_internal.bulk_action_jobs OWNER TO postgres;


--
-- Name: bulk_actions; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.bulk_actions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    action text NOT NULL,
    filter jsonb NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    job_count integer DEFAULT 0 NOT NULL,
    changed integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    reason text,
    prepared_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT bulk_actions_action_check CHECK ((action = ANY (ARRAY['retry'::text, 'cancel'::text])))
);


ALTER TABLE document_jobs_internal.bulk_actions OWNER TO postgres;


--
-- Name: email_senders; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.email_senders (
    from_address text NOT NULL
);


ALTER TABLE document_jobs_internal.email_senders OWNER TO postgres;


--
-- Name: hourly_outcomes; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.hourly_outcomes (
    hour timestamp with time zone NOT NULL,
    completed integer NOT NULL,
    failed integer NOT NULL,
    retried integer NOT NULL,
    latency_p50_ms double precision,
    latency_p95_ms double precision,
    computed_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE document_jobs_internal.hourly_outcomes OWNER TO postgres;


--
-- Name: outages; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.outages (
    cause text NOT NULL,
    active boolean DEFAULT false NOT NULL,
    since timestamp with time zone,
    alerted_at timestamp with time zone
);


ALTER TABLE document_jobs_internal.outages OWNER TO postgres;


--
-- Name: pg_net_generation; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE UNLOGGED TABLE document_jobs_internal.pg_net_generation (
    generation bigint NOT NULL,
    began_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);


ALTER TABLE document_jobs_internal.pg_net_generation OWNER TO postgres;


--
-- Name: TABLE pg_net_generation; Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON TABLE document_jobs_internal.pg_net_generation IS 'Unlogged like pg_net''s tables: empty after a crash, when pg_net''s request ids restart. One row: the generation of pg_net ids in use.';


--
-- Name: pg_net_generations; Type: SEQUENCE; Schema: document_jobs_internal; Owner: postgres
--

CREATE SEQUENCE document_jobs_internal.pg_net_generations
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE document_jobs_internal.pg_net_generations OWNER TO postgres;


--
-- Name: release_causes; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.release_causes (
    code text NOT NULL,
    check_what text NOT NULL,
    advice text NOT NULL
);


ALTER TABLE document_jobs_internal.release_causes OWNER TO postgres;


--
-- Name: TABLE release_causes; Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON TABLE document_jobs_internal.release_causes IS 'The error codes of releases that are not the job''s fault, each an outage cause of the health check.';


--
-- Name: worker_requests; Type: TABLE; Schema: document_jobs_internal; Owner: postgres
--

CREATE TABLE document_jobs_internal.worker_requests (
    request_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    id bigint NOT NULL,
    pg_net_generation bigint DEFAULT document_jobs_internal.pg_net_generation_in_use()
);


ALTER TABLE document_jobs_internal.worker_requests OWNER TO postgres;


--
-- Name: COLUMN worker_requests.request_id; Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON COLUMN document_jobs_internal.worker_requests.request_id IS 'pg_net''s request id (net.http_request_queue, net._http_response); null once a crash erased its answer and pg_net may hand the id out again.';


--
-- Name: COLUMN worker_requests.created_at; Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON COLUMN document_jobs_internal.worker_requests.created_at IS 'When the POST was queued.';


--
-- Name: COLUMN worker_requests.pg_net_generation; Type: COMMENT; Schema: document_jobs_internal; Owner: postgres
--

COMMENT ON COLUMN document_jobs_internal.worker_requests.pg_net_generation IS 'The pg_net generation (document_jobs_internal.pg_net_generation) the POST was queued in.';


--
-- Name: worker_requests_id_seq; Type: SEQUENCE; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE document_jobs_internal.worker_requests ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME document_jobs_internal.worker_requests_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: document_job_attempts; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_job_attempts (
    job_id uuid NOT NULL,
    generation integer NOT NULL,
    attempt integer NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone NOT NULL,
    outcome text NOT NULL,
    error_code text,
    error_message text,
    invocation_id text,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT document_job_attempts_outcome_check CHECK ((outcome = ANY (ARRAY['completed'::text, 'retried'::text, 'released'::text, 'failed'::text, 'lease_expired'::text, 'cancelled'::text])))
);


ALTER TABLE public.document_job_attempts OWNER TO postgres;


--
-- Name: TABLE document_job_attempts; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.document_job_attempts IS 'Append-only history of every claim of a job and how it ended. Deleted with its job (the retention of completed jobs).';


--
-- Name: document_job_kinds; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_job_kinds (
    kind text NOT NULL,
    description text NOT NULL
);


ALTER TABLE public.document_job_kinds OWNER TO postgres;


--
-- Name: document_jobs_audit; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_jobs_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    action text NOT NULL,
    job_id uuid,
    filter jsonb,
    job_count integer NOT NULL,
    reason text,
    bulk_action_id uuid,
    CONSTRAINT document_jobs_audit_action_check CHECK ((action = ANY (ARRAY['retry'::text, 'cancel'::text, 'bulk_retry'::text, 'bulk_cancel'::text]))),
    CONSTRAINT document_jobs_audit_job_count_check CHECK ((job_count >= 0)),
    CONSTRAINT document_jobs_audit_reason_check CHECK ((length(reason) <= 500))
);


ALTER TABLE public.document_jobs_audit OWNER TO postgres;


--
-- Name: TABLE document_jobs_audit; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.document_jobs_audit IS 'Every operator action on jobs (admin screen, CLI): who, when, what, the filter, how many jobs, the reason. Append-only.';


--
-- Name: document_jobs_audit_id_seq; Type: SEQUENCE; Schema: public; Owner: postgres
--

ALTER TABLE public.document_jobs_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.document_jobs_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: document_jobs_claimable; Type: VIEW; Schema: public; Owner: postgres
--

CREATE VIEW public.document_jobs_claimable AS
 SELECT j.id,
    j.kind,
    j.fax_received_email_id,
    j.status,
    j.attempts,
    j.max_attempts,
    j.run_after,
    j.lease_until,
    j.generation,
    j.last_error_code,
    j.last_error_message,
    j.created_at,
    j.started_at,
    j.finished_at
   FROM public.document_jobs j
  WHERE ((j.status = ANY (ARRAY['queued'::text, 'running'::text])) AND (j.run_after <= now()) AND (j.attempts < j.max_attempts) AND ((j.status = 'queued'::text) OR (j.lease_until < now())));


ALTER TABLE public.document_jobs_claimable OWNER TO postgres;


--
-- Name: document_jobs_settings; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.document_jobs_settings (
    singleton boolean DEFAULT true NOT NULL,
    backoff_base interval DEFAULT '00:01:00'::interval NOT NULL,
    completed_job_retention interval DEFAULT '30 days'::interval NOT NULL,
    alert_stall_after interval DEFAULT '00:10:00'::interval NOT NULL,
    alert_receiver text DEFAULT 'slack'::text NOT NULL,
    max_invocations_in_flight integer,
    CONSTRAINT document_jobs_settings_alert_receiver CHECK ((alert_receiver = ANY (ARRAY['slack'::text, 'mattermost'::text, 'discord'::text, 'teams'::text]))),
    CONSTRAINT document_jobs_settings_alert_stall_after CHECK (((alert_stall_after >= '00:02:00'::interval) AND (alert_stall_after <= '1 day'::interval))),
    CONSTRAINT document_jobs_settings_backoff_base_check CHECK (((backoff_base > '00:00:00'::interval) AND (backoff_base <= '01:00:00'::interval))),
    CONSTRAINT document_jobs_settings_max_invocations_in_flight CHECK (((max_invocations_in_flight >= 1) AND (max_invocations_in_flight <= 20))),
    CONSTRAINT document_jobs_settings_retention CHECK (document_jobs_internal.require_retention('completed_job_retention'::text, completed_job_retention)),
    CONSTRAINT document_jobs_settings_singleton_check CHECK (singleton)
);


ALTER TABLE public.document_jobs_settings OWNER TO postgres;


--
-- Name: COLUMN document_jobs_settings.max_invocations_in_flight; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.document_jobs_settings.max_invocations_in_flight IS 'Worker invocations in flight at most (1 to 20); null: three times the requests per second the Resend limiter allows this queue.';


--
-- Name: fax_received_email_attachments; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.fax_received_email_attachments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    fax_received_email_id uuid NOT NULL,
    provider_attachment_id text NOT NULL,
    filename text,
    content_type text,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    bucket text NOT NULL,
    storage_path text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_received_email_attachments_provider_attachment_id_check CHECK ((provider_attachment_id <> ''::text)),
    CONSTRAINT fax_received_email_attachments_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_received_email_attachments_size_bytes_check CHECK ((size_bytes >= 0))
);


ALTER TABLE public.fax_received_email_attachments OWNER TO postgres;


--
-- Name: COLUMN fax_received_email_attachments.filename; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON COLUMN public.fax_received_email_attachments.filename IS 'The original file name (often Japanese); the storage path is built from ASCII ids only.';


--
-- Name: bulk_action_jobs bulk_action_jobs_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.bulk_action_jobs
    ADD CONSTRAINT bulk_action_jobs_pkey PRIMARY KEY (bulk_action_id, job_id);


--
-- Name: bulk_actions bulk_actions_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.bulk_actions
    ADD CONSTRAINT bulk_actions_pkey PRIMARY KEY (id);


--
-- Name: hourly_outcomes hourly_outcomes_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.hourly_outcomes
    ADD CONSTRAINT hourly_outcomes_pkey PRIMARY KEY (hour);


--
-- Name: outages outages_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.outages
    ADD CONSTRAINT outages_pkey PRIMARY KEY (cause);


--
-- Name: pg_net_generation pg_net_generation_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.pg_net_generation
    ADD CONSTRAINT pg_net_generation_pkey PRIMARY KEY (generation);


--
-- Name: release_causes release_causes_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.release_causes
    ADD CONSTRAINT release_causes_pkey PRIMARY KEY (code);


--
-- Name: worker_requests worker_requests_pkey; Type: CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.worker_requests
    ADD CONSTRAINT worker_requests_pkey PRIMARY KEY (id);


--
-- Name: document_job_attempts document_job_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_job_attempts
    ADD CONSTRAINT document_job_attempts_pkey PRIMARY KEY (job_id, generation);


--
-- Name: document_job_kinds document_job_kinds_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_job_kinds
    ADD CONSTRAINT document_job_kinds_pkey PRIMARY KEY (kind);


--
-- Name: document_jobs_audit document_jobs_audit_bulk_action_id_key; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs_audit
    ADD CONSTRAINT document_jobs_audit_bulk_action_id_key UNIQUE (bulk_action_id);


--
-- Name: document_jobs_audit document_jobs_audit_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs_audit
    ADD CONSTRAINT document_jobs_audit_pkey PRIMARY KEY (id);


--
-- Name: document_jobs document_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_pkey PRIMARY KEY (id);


--
-- Name: document_jobs_rate_limits document_jobs_rate_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs_rate_limits
    ADD CONSTRAINT document_jobs_rate_limits_pkey PRIMARY KEY (provider);


--
-- Name: document_jobs_settings document_jobs_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs_settings
    ADD CONSTRAINT document_jobs_settings_pkey PRIMARY KEY (singleton);


--
-- Name: fax_received_email_attachments fax_received_email_attachment_fax_received_email_id_provide_key; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachment_fax_received_email_id_provide_key UNIQUE (fax_received_email_id, provider_attachment_id);


--
-- Name: fax_received_email_attachments fax_received_email_attachments_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachments_pkey PRIMARY KEY (id);


--
-- Name: fax_received_emails fax_received_emails_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.fax_received_emails
    ADD CONSTRAINT fax_received_emails_pkey PRIMARY KEY (id);


--
-- Name: fax_received_emails fax_received_emails_provider_provider_email_id_key; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.fax_received_emails
    ADD CONSTRAINT fax_received_emails_provider_provider_email_id_key UNIQUE (provider, provider_email_id);


--
-- Name: bulk_action_jobs_pending; Type: INDEX; Schema: document_jobs_internal; Owner: postgres
--

CREATE INDEX bulk_action_jobs_pending ON document_jobs_internal.bulk_action_jobs USING btree (bulk_action_id, job_id) WHERE (outcome IS NULL);


--
-- Name: email_senders_text_search; Type: INDEX; Schema: document_jobs_internal; Owner: postgres
--

CREATE INDEX email_senders_text_search ON document_jobs_internal.email_senders USING gin (from_address extensions.gin_trgm_ops);


--
-- Name: email_senders_unique; Type: INDEX; Schema: document_jobs_internal; Owner: postgres
--

CREATE UNIQUE INDEX email_senders_unique ON document_jobs_internal.email_senders USING btree (sha256((replace(from_address, '\'::text, '\\'::text))::bytea));


--
-- Name: worker_requests_created_at; Type: INDEX; Schema: document_jobs_internal; Owner: postgres
--

CREATE INDEX worker_requests_created_at ON document_jobs_internal.worker_requests USING btree (created_at);


--
-- Name: worker_requests_request_id; Type: INDEX; Schema: document_jobs_internal; Owner: postgres
--

CREATE INDEX worker_requests_request_id ON document_jobs_internal.worker_requests USING btree (request_id);


--
-- Name: document_job_attempts_by_finished; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_job_attempts_by_finished ON public.document_job_attempts USING btree (finished_at);


--
-- Name: document_job_attempts_errors_by_finished; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_job_attempts_errors_by_finished ON public.document_job_attempts USING btree (finished_at) INCLUDE (outcome, error_code) WHERE (outcome <> 'completed'::text);


--
-- Name: document_job_attempts_released; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_job_attempts_released ON public.document_job_attempts USING btree (error_code, finished_at) WHERE (outcome = 'released'::text);


--
-- Name: document_jobs_by_error_code; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_by_error_code ON public.document_jobs USING btree (last_error_code, status, created_at DESC, id DESC) WHERE (last_error_code IS NOT NULL);


--
-- Name: document_jobs_by_status_received; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_by_status_received ON public.document_jobs USING btree (status, created_at DESC, id DESC);


--
-- Name: document_jobs_claim; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_claim ON public.document_jobs USING btree (kind, run_after, created_at) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));


--
-- Name: document_jobs_completed; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_completed ON public.document_jobs USING btree (finished_at) WHERE (status = 'completed'::text);


--
-- Name: document_jobs_finished_by_email; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_finished_by_email ON public.document_jobs USING btree (fax_received_email_id) WHERE (status = ANY (ARRAY['completed'::text, 'failed'::text]));


--
-- Name: document_jobs_lease; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX document_jobs_lease ON public.document_jobs USING btree (lease_until) WHERE (status = 'running'::text);


--
-- Name: document_jobs_one_active_per_target; Type: INDEX; Schema: public; Owner: postgres
--

CREATE UNIQUE INDEX document_jobs_one_active_per_target ON public.document_jobs USING btree (kind, fax_received_email_id) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));


--
-- Name: fax_received_emails_by_sender; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX fax_received_emails_by_sender ON public.fax_received_emails USING hash (from_address);


--
-- Name: fax_received_emails_subject_search; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX fax_received_emails_subject_search ON public.fax_received_emails USING gin (subject extensions.gin_trgm_ops);


--
-- Name: document_job_attempts document_job_attempts_append_only; Type: TRIGGER; Schema: public; Owner: postgres
--

CREATE TRIGGER document_job_attempts_append_only BEFORE UPDATE ON public.document_job_attempts FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_attempt_update();


--
-- Name: document_jobs document_jobs_alert_failed; Type: TRIGGER; Schema: public; Owner: postgres
--

CREATE TRIGGER document_jobs_alert_failed AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((new.status = 'failed'::text) AND (old.status <> 'failed'::text))) EXECUTE FUNCTION document_jobs_internal.alert_job_failed();


--
-- Name: document_jobs_audit document_jobs_audit_append_only; Type: TRIGGER; Schema: public; Owner: postgres
--

CREATE TRIGGER document_jobs_audit_append_only BEFORE DELETE OR UPDATE ON public.document_jobs_audit FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_audit_change();


--
-- Name: document_jobs document_jobs_record_attempt; Type: TRIGGER; Schema: public; Owner: postgres
--

CREATE TRIGGER document_jobs_record_attempt AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((old.status = 'running'::text) AND ((new.status <> 'running'::text) OR (new.generation <> old.generation)))) EXECUTE FUNCTION document_jobs_internal.record_attempt();


--
-- Name: fax_received_emails fax_received_emails_note_sender; Type: TRIGGER; Schema: public; Owner: postgres
--

CREATE TRIGGER fax_received_emails_note_sender AFTER INSERT OR UPDATE OF from_address ON public.fax_received_emails FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.note_sender();


--
-- Name: bulk_action_jobs bulk_action_jobs_bulk_action_id_fkey; Type: FK CONSTRAINT; Schema: document_jobs_internal; Owner: postgres
--

ALTER TABLE ONLY document_jobs_internal.bulk_action_jobs
    ADD CONSTRAINT bulk_action_jobs_bulk_action_id_fkey FOREIGN KEY (bulk_action_id) REFERENCES document_jobs_internal.bulk_actions(id) ON DELETE CASCADE;


--
-- Name: document_job_attempts document_job_attempts_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_job_attempts
    ADD CONSTRAINT document_job_attempts_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.document_jobs(id) ON DELETE CASCADE;


--
-- Name: document_jobs document_jobs_fax_received_email_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;


--
-- Name: document_jobs document_jobs_kind_fkey; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_kind_fkey FOREIGN KEY (kind) REFERENCES public.document_job_kinds(kind);


--
-- Name: fax_received_email_attachments fax_received_email_attachments_fax_received_email_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachments_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;


--
-- Name: document_job_attempts; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_job_attempts ENABLE ROW LEVEL SECURITY;


--
-- Name: document_job_kinds; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_job_kinds ENABLE ROW LEVEL SECURITY;


--
-- Name: document_jobs; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_jobs ENABLE ROW LEVEL SECURITY;


--
-- Name: document_jobs_audit; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_jobs_audit ENABLE ROW LEVEL SECURITY;


--
-- Name: document_jobs_rate_limits; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_jobs_rate_limits ENABLE ROW LEVEL SECURITY;


--
-- Name: document_jobs_settings; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.document_jobs_settings ENABLE ROW LEVEL SECURITY;


--
-- Name: fax_received_email_attachments; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.fax_received_email_attachments ENABLE ROW LEVEL SECURITY;


--
-- Name: fax_received_emails; Type: ROW SECURITY; Schema: public; Owner: postgres
--

ALTER TABLE public.fax_received_emails ENABLE ROW LEVEL SECURITY;


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA public TO anon;
GRANT USAGE ON SCHEMA public TO authenticated;
GRANT USAGE ON SCHEMA public TO service_role;


--
-- Name: FUNCTION alert_body(p_fields jsonb, p_lines jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) FROM PUBLIC;


--
-- Name: FUNCTION alert_job_failed(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.alert_job_failed() FROM PUBLIC;


--
-- Name: FUNCTION backoff(p_failed_attempt integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) FROM PUBLIC;


--
-- Name: FUNCTION bulk_action_progress(p_bulk_action_id uuid); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) FROM PUBLIC;


--
-- Name: FUNCTION bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) FROM PUBLIC;


--
-- Name: FUNCTION bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) FROM PUBLIC;


--
-- Name: FUNCTION cancel_live(p_job_ids uuid[], p_reason text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) FROM PUBLIC;


--
-- Name: FUNCTION chat_message(p_lines jsonb, p_receiver text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) FROM PUBLIC;


--
-- Name: FUNCTION check_health(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.check_health() FROM PUBLIC;


--
-- Name: FUNCTION current_pg_net_generation(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.current_pg_net_generation() FROM PUBLIC;


--
-- Name: FUNCTION email_matches_sql(p_alias text, p_q text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) FROM PUBLIC;


--
-- Name: FUNCTION emails_matching(p_q text, p_limit integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION emails_with_provider_id(p_provider_email_id text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) FROM PUBLIC;


--
-- Name: FUNCTION fail_expired(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.fail_expired() FROM PUBLIC;


--
-- Name: FUNCTION fill_hourly_outcomes(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.fill_hourly_outcomes() FROM PUBLIC;


--
-- Name: FUNCTION invocation_cap(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.invocation_cap() FROM PUBLIC;


--
-- Name: FUNCTION invocations_in_flight(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.invocations_in_flight() FROM PUBLIC;


--
-- Name: TABLE document_jobs; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.document_jobs TO service_role;


--
-- Name: FUNCTION job_failed_alert(p_job public.document_jobs); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) FROM PUBLIC;


--
-- Name: FUNCTION job_filter(p_filter jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.job_filter(p_filter jsonb) FROM PUBLIC;


--
-- Name: FUNCTION job_filter_sql(p_filter jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) FROM PUBLIC;


--
-- Name: FUNCTION job_search_sql(p_q text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.job_search_sql(p_q text) FROM PUBLIC;


--
-- Name: TABLE fax_received_emails; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.fax_received_emails TO service_role;


--
-- Name: FUNCTION job_summary(p_job public.document_jobs, p_email public.fax_received_emails); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) FROM PUBLIC;


--
-- Name: FUNCTION jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION like_pattern(p_q text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.like_pattern(p_q text) FROM PUBLIC;


--
-- Name: FUNCTION limits(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.limits() FROM PUBLIC;


--
-- Name: FUNCTION next_run_after(p_failed_attempt integer, p_retry_after interval); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) FROM PUBLIC;


--
-- Name: FUNCTION note_sender(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.note_sender() FROM PUBLIC;


--
-- Name: FUNCTION one_line(p_text text, p_max integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) FROM PUBLIC;


--
-- Name: FUNCTION outage_advice(p_cause text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.outage_advice(p_cause text) FROM PUBLIC;


--
-- Name: FUNCTION outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION pg_net_generation_in_use(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.pg_net_generation_in_use() FROM PUBLIC;


--
-- Name: FUNCTION post_alert(p_body jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.post_alert(p_body jsonb) FROM PUBLIC;


--
-- Name: FUNCTION post_worker(p_count integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.post_worker(p_count integer) FROM PUBLIC;


--
-- Name: FUNCTION purge_cutoff(p_older_than interval); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) FROM PUBLIC;


--
-- Name: TABLE document_jobs_rate_limits; Type: ACL; Schema: public; Owner: postgres
--

GRANT SELECT ON TABLE public.document_jobs_rate_limits TO service_role;


--
-- Name: FUNCTION rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION record_attempt(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.record_attempt() FROM PUBLIC;


--
-- Name: FUNCTION refuse_attempt_update(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.refuse_attempt_update() FROM PUBLIC;


--
-- Name: FUNCTION refuse_audit_change(); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.refuse_audit_change() FROM PUBLIC;


--
-- Name: FUNCTION requeue_failed(p_job_ids uuid[]); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) FROM PUBLIC;


--
-- Name: FUNCTION require(p_ok boolean, p_message text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) FROM PUBLIC;


--
-- Name: FUNCTION require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) FROM PUBLIC;


--
-- Name: FUNCTION require_holder(p_job_id uuid, p_generation integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) FROM PUBLIC;


--
-- Name: FUNCTION require_kind(p_kind text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require_kind(p_kind text) FROM PUBLIC;


--
-- Name: FUNCTION require_retention(p_name text, p_retention interval); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) FROM PUBLIC;


--
-- Name: FUNCTION require_retry_after(p_retry_after interval); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) FROM PUBLIC;


--
-- Name: FUNCTION reserve_request(p_provider text, p_max_wait_ms integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) FROM PUBLIC;


--
-- Name: FUNCTION search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) FROM PUBLIC;


--
-- Name: FUNCTION set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) FROM PUBLIC;


--
-- Name: FUNCTION start_workers(p_at_most integer); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.start_workers(p_at_most integer) FROM PUBLIC;


--
-- Name: FUNCTION text_array(p_value jsonb); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.text_array(p_value jsonb) FROM PUBLIC;


--
-- Name: FUNCTION try_timestamptz(p_value text); Type: ACL; Schema: document_jobs_internal; Owner: postgres
--

REVOKE ALL ON FUNCTION document_jobs_internal.try_timestamptz(p_value text) FROM PUBLIC;


--
-- Name: FUNCTION admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) TO service_role;


--
-- Name: FUNCTION admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) TO service_role;


--
-- Name: FUNCTION apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) TO service_role;


--
-- Name: FUNCTION cancel_document_job(p_job_id uuid, p_reason text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) TO service_role;


--
-- Name: FUNCTION claim_document_jobs(p_kind text, p_limit integer, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) TO service_role;


--
-- Name: FUNCTION complete_document_job(p_job_id uuid, p_generation integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) TO service_role;


--
-- Name: FUNCTION complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) TO service_role;


--
-- Name: FUNCTION complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) TO service_role;


--
-- Name: FUNCTION complete_document_job_and_follow_up(p_job_id uuid, p_generation integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) TO service_role;


--
-- Name: FUNCTION complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) TO service_role;


--
-- Name: FUNCTION complete_document_job_v2(p_job_id uuid, p_generation integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) TO service_role;


--
-- Name: FUNCTION count_purgeable_document_jobs(p_older_than interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.count_purgeable_document_jobs(p_older_than interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.count_purgeable_document_jobs(p_older_than interval) TO service_role;


--
-- Name: FUNCTION document_jobs_admin_audit(p_before bigint, p_limit integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) TO service_role;


--
-- Name: FUNCTION document_jobs_admin_job(p_job_id uuid); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_admin_job(p_job_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_job(p_job_id uuid) TO service_role;


--
-- Name: FUNCTION document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) TO service_role;


--
-- Name: FUNCTION document_jobs_admin_overview(); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_admin_overview() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_overview() TO service_role;


--
-- Name: FUNCTION document_jobs_health(); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_health() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_health() TO service_role;


--
-- Name: FUNCTION document_jobs_stats(); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.document_jobs_stats() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_stats() TO service_role;


--
-- Name: FUNCTION enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) TO service_role;


--
-- Name: FUNCTION extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) TO service_role;


--
-- Name: FUNCTION extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) TO service_role;


--
-- Name: FUNCTION fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;


--
-- Name: FUNCTION fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;


--
-- Name: FUNCTION fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;


--
-- Name: FUNCTION fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;


--
-- Name: FUNCTION invoke_document_jobs(p_max_invocations integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.invoke_document_jobs(p_max_invocations integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.invoke_document_jobs(p_max_invocations integer) TO service_role;


--
-- Name: FUNCTION note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) TO service_role;


--
-- Name: FUNCTION prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) TO service_role;


--
-- Name: FUNCTION purge_document_jobs(p_older_than interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.purge_document_jobs(p_older_than interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.purge_document_jobs(p_older_than interval) TO service_role;


--
-- Name: FUNCTION record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) TO service_role;


--
-- Name: FUNCTION record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) TO service_role;


--
-- Name: FUNCTION record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) TO service_role;


--
-- Name: FUNCTION release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;


--
-- Name: FUNCTION release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;


--
-- Name: FUNCTION release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;


--
-- Name: FUNCTION release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;


--
-- Name: FUNCTION reserve_provider_request(p_provider text, p_max_wait_ms integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) TO service_role;


--
-- Name: FUNCTION retry_document_job(p_job_id uuid); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.retry_document_job(p_job_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.retry_document_job(p_job_id uuid) TO service_role;


--
-- Name: FUNCTION set_document_jobs_retention(p_completed_job_retention interval); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) TO service_role;


--
-- Name: FUNCTION start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) TO service_role;


--
-- Name: FUNCTION start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer); Type: ACL; Schema: public; Owner: postgres
--

REVOKE ALL ON FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) TO service_role;


--
-- Name: TABLE document_job_attempts; Type: ACL; Schema: public; Owner: postgres
--

GRANT SELECT ON TABLE public.document_job_attempts TO service_role;


--
-- Name: TABLE document_job_kinds; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.document_job_kinds TO service_role;


--
-- Name: TABLE document_jobs_audit; Type: ACL; Schema: public; Owner: postgres
--

GRANT SELECT ON TABLE public.document_jobs_audit TO service_role;


--
-- Name: SEQUENCE document_jobs_audit_id_seq; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON SEQUENCE public.document_jobs_audit_id_seq TO anon;
GRANT ALL ON SEQUENCE public.document_jobs_audit_id_seq TO authenticated;
GRANT ALL ON SEQUENCE public.document_jobs_audit_id_seq TO service_role;


--
-- Name: TABLE document_jobs_claimable; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.document_jobs_claimable TO service_role;


--
-- Name: TABLE document_jobs_settings; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.document_jobs_settings TO service_role;


--
-- Name: TABLE fax_received_email_attachments; Type: ACL; Schema: public; Owner: postgres
--

GRANT ALL ON TABLE public.fax_received_email_attachments TO service_role;


--
-- Data for Name: outages; Type: TABLE DATA; Schema: document_jobs_internal; Owner: postgres
--

INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('database_unauthorized', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('queue_stalled', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('resend_misconfigured', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('resend_quota_exceeded', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('resend_unauthorized', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('storage_bucket_not_found', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('storage_unauthorized', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('worker_failing', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('worker_not_found', false, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at) VALUES ('worker_unauthorized', false, NULL, NULL);


--
-- Data for Name: release_causes; Type: TABLE DATA; Schema: document_jobs_internal; Owner: postgres
--

INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('database_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)', 'The database (PostgREST) refuses the server key, or its role lacks a privilege (401/403). Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy.');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('resend_misconfigured', 'RESEND_API_URL', 'RESEND_API_URL does not point at Resend''s API: it answers with a redirect, 405, or 404 for the endpoint itself. Unset it on Vercel (the default is https://api.resend.com) and redeploy.');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('resend_quota_exceeded', 'the Resend team''s plan (its daily and monthly quota)', 'Resend says the team''s daily or monthly quota is used up. Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting jobs are tried again every hour.');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('resend_unauthorized', 'RESEND_API_KEY', 'Resend refuses RESEND_API_KEY: it was deleted or mistyped, or it is a sending-only key (receiving needs full access). Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('storage_bucket_not_found', 'ATTACHMENTS_BUCKET', 'Supabase Storage has no bucket named as ATTACHMENTS_BUCKET says (the migrations create fax-attachments, the default). Fix or unset ATTACHMENTS_BUCKET on Vercel and redeploy, or create the bucket.');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice) VALUES ('storage_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)', 'Supabase Storage refuses the server key (401/403). Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy.');


--
-- Data for Name: document_job_kinds; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.document_job_kinds (kind, description) VALUES ('fetch_email', 'fetch a received e-mail''s attachments from Resend into Storage');


--
-- Data for Name: document_jobs_settings; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.document_jobs_settings (singleton, backoff_base, completed_job_retention, alert_stall_after, alert_receiver, max_invocations_in_flight) VALUES (true, '00:01:00', '30 days', '00:10:00', 'slack', NULL);


--
-- Storage buckets
--

INSERT INTO storage.buckets (id, name, public, file_size_limit, allowed_mime_types) VALUES ('fax-attachments', 'fax-attachments', 'f', NULL, NULL);


--
-- Cron jobs (cron.job)
--

SELECT cron.schedule('document-jobs', '* * * * *', 'select public.invoke_document_jobs()');  -- as postgres, active
SELECT cron.schedule('document-jobs-health', '* * * * *', 'select document_jobs_internal.check_health()');  -- as postgres, active
SELECT cron.schedule('document-jobs-purge', '17 3 * * *', 'select public.purge_document_jobs()');  -- as postgres, active
