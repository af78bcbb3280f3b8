-- What the admin screen shows, one call per view: the overview, a page of the job list, a job,
-- and the audit. Read by the admin function (api/admin.py) with the service-role key after it
-- has verified the operator's token; never by the browser.
--
-- The job list's filter is defined once (job_filter, job_filter_sql) and used both to list jobs
-- and to take a bulk action's snapshot (20261201004300), so the jobs an operator sees are the jobs
-- an action counts.
--
-- The views' functions run with JIT off: they read pages of index entries, and compiling a plan
-- costs hundreds of milliseconds, which a misestimate alone (document_job_kinds, a table of one
-- row that is never analyzed, is guessed at 880 rows) was enough to trigger (make bench).

-- A filter, checked and normalized: {"states": [...], "kind", "error_code", "received_from",
-- "received_to", "q"}, every key optional; anything else is refused with 22023 and a message
-- naming the key. "Received" is when the webhook recorded the e-mail (the job's created_at).
create function document_jobs_internal.job_filter(p_filter jsonb)
returns jsonb
language plpgsql
stable  -- timestamps are read in the session's time zone when they name none
set search_path = ''
as $$
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

-- The searched text of an e-mail row: sender and subject (see fax_received_emails_text_search).
create function document_jobs_internal.email_text_sql(p_alias text)
returns text
language sql
immutable
set search_path = ''
as $$
    select format('(coalesce(%1$s.from_address, '''') || E''\n'' || coalesce(%1$s.subject, ''''))', p_alias)
$$;

-- '%term%' for ILIKE, with the term's own %, _ and \ taken literally.
create function document_jobs_internal.like_pattern(p_q text)
returns text
language sql
immutable
set search_path = ''
as $$
    select '%' || replace(replace(replace(p_q, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

-- A normalized filter's search term as SQL over a job row "j": the job's id or its e-mail's id
-- (when the term is a UUID), the provider's e-mail id, or the term anywhere in the sender or the
-- subject (ILIKE; the expression is the one fax_received_emails_text_search indexes).
create function document_jobs_internal.job_search_sql(p_q text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_is_uuid boolean := p_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
begin
    return format(
        '(%s exists (select 1 from public.fax_received_emails e where e.id = j.fax_received_email_id'
        ' and (e.provider_email_id = %L or %s ilike %L)))',
        case when v_is_uuid then format('j.id = %L::uuid or j.fax_received_email_id = %L::uuid or', p_q, p_q) else '' end,
        p_q,
        document_jobs_internal.email_text_sql('e'),
        document_jobs_internal.like_pattern(p_q));
end;
$$;

-- A normalized filter as one SQL condition over a job row "j" (states, kind, error code,
-- received time, search); "true" when it has none. The meaning of a filter, in one place.
create function document_jobs_internal.job_filter_sql(p_filter jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
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

-- The newest p_limit jobs that match a filter and p_extra (a keyset condition), as a query of
-- (id, created_at, fax_received_email_id) for the caller to order by (created_at desc, id desc)
-- and limit again: one branch per state, each with its own ORDER BY and LIMIT, so that each is a
-- range scan of document_jobs_by_status_received (or of document_jobs_by_error_code, with an
-- error code) that stops after p_limit entries, and the planner merges the branches in that
-- order (Merge Append). Without the branches' own LIMIT, PostgreSQL 15 plans the union of a
-- million completed jobs as a scan and a sort of all of them (make bench, section "Admin screen").
create function document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit int)
returns text
language sql
immutable
set search_path = ''
as $$
    select string_agg(format(
               '(select j.id, j.created_at, j.fax_received_email_id from public.document_jobs j'
               ' where j.status = %L and %s and %s order by j.created_at desc, j.id desc limit %s)',
               s, document_jobs_internal.job_filter_sql(p_filter - 'states'), p_extra, p_limit), ' union all ')
      from jsonb_array_elements_text(coalesce(p_filter -> 'states', '["queued", "running", "completed", "failed"]')) s
$$;

-- The e-mails whose provider's id is p_provider_email_id, whichever the provider: the unique
-- index is on (provider, provider_email_id), so the providers are listed first (a loose index
-- scan, one probe each), and each is looked up with its id. A plain search by the id alone would
-- read the whole table.
create function document_jobs_internal.emails_with_provider_id(p_provider_email_id text)
returns setof uuid
language sql
stable
set search_path = ''
as $$
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

-- A job as the list shows it.
create function document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails)
returns jsonb
language sql
immutable
set search_path = ''
as $$
    select jsonb_build_object(
        'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
        'max_attempts', p_job.max_attempts, 'created_at', p_job.created_at, 'run_after', p_job.run_after,
        'started_at', p_job.started_at, 'finished_at', p_job.finished_at, 'last_error_code', p_job.last_error_code,
        'last_error_message', left(p_job.last_error_message, 300),
        'email', case when p_email.id is not null then jsonb_build_object(
            'id', p_email.id, 'provider_email_id', p_email.provider_email_id, 'from', p_email.from_address,
            'subject', left(p_email.subject, 300), 'received_at', p_email.received_at) end)
$$;

-- A page of the job list: {"jobs": [...], "next": {"created_at", "id"} or null, "count", "partial",
-- "searched_until"}. Pages follow (created_at, id) descending, which is unique: a page starts
-- after p_after_created_at/p_after_id (both or neither), so no job is skipped or repeated while
-- jobs change. "count" is exact up to 10,000 ("count_capped" when there are more), for filters
-- without a search term, on the first page only.
--
-- A search term is looked for in the newest 1,000 jobs the other filters match first (cheap when
-- the term is common). When those hold less than a page, the term is looked up in its indexes
-- instead: the job and e-mail ids, the provider's e-mail id, and the trigram index on sender and
-- subject, which needs at least three characters; that answer is exact when it finds at most
-- 5,000 e-mails. Otherwise (a term shorter than three characters, such as most Japanese words of
-- two characters, or a term in more than 5,000 e-mails) the page holds what the 1,000 jobs held,
-- "partial" is true, "searched_until" says how far back it looked, and "next" continues the search
-- from there: nothing is skipped, it only takes more pages.
create function public.document_jobs_admin_jobs(
    p_filter jsonb default '{}',
    p_after_created_at timestamptz default null,
    p_after_id uuid default null,
    p_limit int default 50
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- see the top of this file
as $$
declare
    c_walk constant int := 1000;
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
            -- The newest jobs first: a common term fills a page here. The walk's jobs come in
            -- order, so the term is checked job by job and the check stops with a full page.
            execute format(
                'select array(select j.id from (select q.id, q.created_at, q.fax_received_email_id from (%s) q
                                                order by q.created_at desc, q.id desc limit %s) j
                               where %s order by j.created_at desc, j.id desc limit %s)',
                document_jobs_internal.jobs_by_state_sql(v_filter - 'q', v_keyset, c_walk), c_walk,
                document_jobs_internal.job_search_sql(v_q), p_limit + 1)
               into v_ids;
            if cardinality(v_ids) <= p_limit then
                -- Where the walk ended, when it read all of its jobs (the oldest of them); none
                -- when fewer jobs match the other filters, and the walk's answer is exact.
                execute format(
                    'select q.created_at, q.id from (%s) q order by q.created_at desc, q.id desc offset %s limit 1',
                    document_jobs_internal.jobs_by_state_sql(v_filter - 'q', v_keyset, c_walk), c_walk - 1)
                   into v_oldest_created_at, v_oldest_id;
            end if;
        end if;
        if v_ids is null or (cardinality(v_ids) <= p_limit and v_oldest_id is not null) then
            -- Not enough there: look the term up in the indexes, if they can answer exactly (the
            -- trigram index needs three characters; a UUID has 36).
            if length(v_q) >= 3 then
                execute format(
                    'select array(select e.id from public.fax_received_emails e where %s ilike %L
                                  union select x from document_jobs_internal.emails_with_provider_id(%L) x
                                  limit %s)',
                    document_jobs_internal.email_text_sql('e'), document_jobs_internal.like_pattern(v_q), v_q,
                    c_candidates + 1)
                   into v_emails;
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
                v_partial := coalesce(cardinality(v_ids) <= p_limit, false);
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
$$;

-- A job, its attempts (oldest first), its e-mail and its stored attachments; null when there is
-- no such job.
create function public.document_jobs_admin_job(p_job_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- see the top of this file
as $$
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

-- The audit, newest first: {"entries": [...], "next": <id> or null}. A bulk action's entry says
-- how far it got (changed, skipped, done).
create function public.document_jobs_admin_audit(p_before bigint default null, p_limit int default 50)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- see the top of this file
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

-- The overview's hourly series: how many attempts ended completed, failed (for good: a permanent
-- error or the attempts used up) and retried (a transient failure) per hour, and the latency from
-- the webhook recording the e-mail (the job's created_at, the same transaction) to the job's
-- completion (p50, p95). Hours in UTC. Computed from the attempt history, which never changes:
-- an hour that ended more than 10 minutes ago (no transaction that ended an attempt in it is
-- still open) is computed once and kept in hourly_outcomes; the last one or two are computed on
-- each call.
create table document_jobs_internal.hourly_outcomes (
    hour timestamptz primary key,
    completed int not null,
    failed int not null,
    retried int not null,
    latency_p50_ms double precision,
    latency_p95_ms double precision,
    computed_at timestamptz not null default now()
);

create function document_jobs_internal.outcomes_by_hour(p_from timestamptz, p_to timestamptz)
returns table (hour timestamptz, completed int, failed int, retried int, latency_p50_ms float8, latency_p95_ms float8)
language plpgsql
stable
set search_path = ''
as $$
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

-- The last 7 days of settled hours into hourly_outcomes, those missing only; returns how many it
-- computed (none, on almost every call).
create function document_jobs_internal.fill_hourly_outcomes()
returns int
language plpgsql
set search_path = ''
as $$
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

-- The overview: jobs by state, the oldest waiting job, failures by error code (last 24 hours),
-- failed jobs now by error code, the hourly series (7 days), and the health check's open outages.
-- Counts of queued, running and failed jobs are exact (index-only scans of their part of
-- document_jobs_by_status_received); completed jobs, most of the table, are the planner's estimate
-- from the table's statistics ("estimated": true), which autovacuum keeps current.
create function public.document_jobs_admin_overview()
returns jsonb
language plpgsql
security definer
set search_path = ''
set jit = off  -- see the top of this file
as $$
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

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
revoke all on function
    public.document_jobs_admin_jobs(jsonb, timestamptz, uuid, int),
    public.document_jobs_admin_job(uuid),
    public.document_jobs_admin_audit(bigint, int),
    public.document_jobs_admin_overview()
from public, anon, authenticated;
grant execute on function
    public.document_jobs_admin_jobs(jsonb, timestamptz, uuid, int),
    public.document_jobs_admin_job(uuid),
    public.document_jobs_admin_audit(bigint, int),
    public.document_jobs_admin_overview()
to service_role;
