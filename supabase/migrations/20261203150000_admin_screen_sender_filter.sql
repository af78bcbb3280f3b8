-- A filter by sender: the jobs whose e-mail's sender (the From line as recorded) holds the text,
-- case-insensitive (ILIKE, the text's own %, _ and \ taken literally). Until now the CLI's --sender
-- went into the search term "q", which also matches subjects and ids: `retry --sender X` retried
-- the jobs whose subject holds X too. The list, the bulk actions and the CLI now share this key.
--
-- It is served by the sender lookup of 20261201007000: the text is looked for in the distinct
-- senders (email_senders, with its trigram index; a text of fewer than three characters reads that
-- small table), and their e-mails are found by equality on the sender (its hash index), so a
-- sender's jobs are found without reading every e-mail. The list takes the jobs of those e-mails
-- through the index on the e-mail (as the search's index path does) when they are 5,000 e-mails
-- or fewer; a sender of more e-mails is common enough that the newest jobs, checked one by one
-- (the search's walk, 1,000 jobs a page at most, its page "partial" when it found less), fill a
-- page soon, and its count is not given (it would read every job). A bulk action's count reads
-- the sender's e-mails through the same lookup.

create function document_jobs_internal.emails_from_sender(p_sender text, p_limit int)
returns uuid[]
language plpgsql
stable
set search_path = ''
as $$
declare
    v_emails uuid[];
begin
    execute format(
        'select array(select e.id
                        from document_jobs_internal.email_senders s
                       cross join lateral (select e.id from public.fax_received_emails e
                                            where e.from_address = s.from_address limit %1$s) e
                       where s.from_address ilike %2$L
                       limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_sender))
       into v_emails;
    return v_emails;
end;
$$;
revoke all on function document_jobs_internal.emails_from_sender(text, int) from public;
comment on function document_jobs_internal.emails_from_sender(p_sender text, p_limit integer) is
    'The e-mails whose sender holds p_sender (ILIKE, its own %, _ and \ taken literally): at most p_limit of them (p_limit means "maybe more"). The senders come from email_senders (its trigram index, for three characters or more) and their e-mails from the hash index on the sender. The text goes into the statement as a literal, so that the planner sees the pattern it plans for.';

-- As in 20261201004200, with the key sender.
create or replace function document_jobs_internal.job_filter(p_filter jsonb)
returns jsonb
language plpgsql
stable
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
            v_key = any (array['states', 'kind', 'error_code', 'received_from', 'received_to', 'sender', 'q']),
            format('p_filter has an unknown key %s (known: states, kind, error_code, received_from, received_to, sender, q)',
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

    foreach v_key in array array['sender', 'q'] loop
        if p_filter ? v_key then
            v_text := btrim(p_filter ->> v_key);
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(v_text) between 1 and 200
                and v_text !~ '[[:cntrl:]]',
                format('p_filter.%s must be 1 to 200 characters, with no control characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, v_text);
        end if;
    end loop;
    return v_filter;
end;
$$;
comment on function document_jobs_internal.job_filter(p_filter jsonb) is
    'A filter, checked and normalized: {"states": [...], "kind", "error_code", "received_from", "received_to", "sender", "q"}, every key optional; anything else is refused with 22023 and a message naming the key. "Received" is when the webhook recorded the e-mail (the job''s created_at); "sender" is text of the e-mail''s sender (its From line), "q" the search term (ids, sender or subject).';

-- As in 20261201004200, with the sender: the jobs of the e-mails of the senders that hold the
-- text, through the distinct senders (their trigram index) and the hash index on the sender, as a
-- set (a bulk action's count, a page's count).
create or replace function document_jobs_internal.job_filter_sql(p_filter jsonb)
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
        case when p_filter ? 'sender' then format(
            'j.fax_received_email_id in (select se.id from document_jobs_internal.email_senders ss'
            ' join public.fax_received_emails se on se.from_address = ss.from_address where ss.from_address ilike %L)',
            document_jobs_internal.like_pattern(p_filter ->> 'sender')) end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') end)
$$;
comment on function document_jobs_internal.job_filter_sql(p_filter jsonb) is
    'A normalized filter as one SQL condition over a job row "j" (states, kind, error code, received time, sender, search); "true" when it has none. The meaning of a filter, in one place: the sender as the set of its e-mails (email_senders and the hash index on the sender), the walks check it job by job (sender_match_sql), with the same meaning.';

create function document_jobs_internal.sender_match_sql(p_sender text)
returns text
language sql
immutable
set search_path = ''
as $$
    select format('exists (select 1 from public.fax_received_emails se where se.id = j.fax_received_email_id'
                  ' and se.from_address ilike %L)', document_jobs_internal.like_pattern(p_sender))
$$;
revoke all on function document_jobs_internal.sender_match_sql(text) from public;
comment on function document_jobs_internal.sender_match_sql(p_sender text) is
    'A filter''s sender as SQL over a job row "j", checked job by job (its e-mail by its primary key): the walk''s check, which means what job_filter_sql''s sender means.';

-- As in 20261201007000, with the sender: the walk goes through the jobs that the filter's other
-- conditions keep and checks the sender and the term job by job.
create or replace function document_jobs_internal.search_walk(
    p_filter jsonb, p_after_created_at timestamptz, p_after_id uuid, p_walk int, p_limit int,
    out ids uuid[], out oldest_created_at timestamptz, out oldest_id uuid)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_keyset text := 'true';
    v_walked text;
begin
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;
    v_walked := document_jobs_internal.jobs_by_state_sql(p_filter - 'q' - 'sender', v_keyset, p_walk);
    execute format(
        'select array(select j.id from (select q.id, q.created_at, q.fax_received_email_id from (%s) q
                                        order by q.created_at desc, q.id desc limit %s) j
                       where %s and %s order by j.created_at desc, j.id desc limit %s)',
        v_walked, p_walk,
        case when p_filter ? 'sender' then document_jobs_internal.sender_match_sql(p_filter ->> 'sender') else 'true' end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') else 'true' end,
        p_limit + 1)
       into ids;
    if cardinality(ids) <= p_limit then
        execute format(
            'select q.created_at, q.id from (%s) q order by q.created_at desc, q.id desc offset %s limit 1',
            v_walked, p_walk - 1)
           into oldest_created_at, oldest_id;
    end if;
end;
$$;
comment on function document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) is
    'The walk of a search, or of a sender of many e-mails: of the newest p_walk jobs that the filter''s other conditions keep (after p_after_created_at/p_after_id, when given), the first p_limit + 1 that match its sender and its term, newest first; and, when those are p_limit or fewer and the walk read all p_walk jobs, the oldest of them (where a partial page ends). The walk''s jobs come in order, so the sender and the term are checked job by job and the check stops with a full page.';

-- As in 20261201007000, with the sender: when it names 5,000 e-mails or fewer, the page (and its
-- exact count, up to 10,000, search term or not) comes from their jobs, through the index on the
-- e-mail; otherwise it is walked as a search term is, job by job, and with a term the term's
-- e-mails are checked for the sender one by one.
create or replace function public.document_jobs_admin_jobs(
    p_filter jsonb default '{}'::jsonb,
    p_after_created_at timestamptz default null,
    p_after_id uuid default null,
    p_limit int default 50
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
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
    -- The jobs of the e-mails $1 and the job $2 that the filter %1$s and the keyset %2$s keep, newest
    -- first (each branch through an index on the e-mail: the finished ones, and the live one of each
    -- kind, probed one e-mail at a time; "limit 1", which the unique index makes exact, keeps the
    -- planner from hashing every live job instead).
    c_jobs_of_emails constant text :=
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
         ) c order by c.created_at desc, c.id desc limit %3$s)';
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    perform document_jobs_internal.require((p_after_created_at is null) = (p_after_id is null),
        'p_after_created_at and p_after_id go together');
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;

    if v_filter ? 'sender' then
        v_emails := document_jobs_internal.emails_from_sender(v_filter ->> 'sender', c_candidates + 1);
    end if;

    if cardinality(v_emails) <= c_candidates then
        -- The sender's e-mails: their jobs, with the other conditions (the search term too) checked
        -- job by job.
        execute format(c_jobs_of_emails, document_jobs_internal.job_filter_sql(v_filter - 'sender'), v_keyset,
                       p_limit + 1)
           into v_ids
          using v_emails, null::uuid;
        if p_after_id is null then
            execute format(
                'select count(*) from (select 1 from public.document_jobs j
                                        where j.fax_received_email_id = any ($1) and %s limit %s) c',
                document_jobs_internal.job_filter_sql(v_filter - 'sender'), c_count_cap + 1)
               into v_count
              using v_emails;
        end if;
    elsif v_q is null and not v_filter ? 'sender' then
        execute format('select array(select q.id from (%s) q order by q.created_at desc, q.id desc limit %s)',
                       document_jobs_internal.jobs_by_state_sql(v_filter, v_keyset, p_limit + 1), p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from (%s) q limit %s) c',
                           document_jobs_internal.jobs_by_state_sql(v_filter, 'true', c_count_cap + 1), c_count_cap + 1)
               into v_count;
        end if;
    else
        -- A search term, or a sender of more than 5,000 e-mails.
        v_emails := null;
        if v_q is null or v_q !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
            -- The newest jobs first: a common term fills a page here. A term of three characters
            -- or more is tried on the newest 200 first: a rare one (the indexes answer it sooner
            -- than 1,000 jobs are read) goes to the indexes; one that is common there, whose
            -- 1,000 jobs would at that rate hold a page, walks the 1,000.
            v_walk := case when length(v_q) >= 3 then c_first_walk else c_walk end;  -- a sender alone: 1,000
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
                -- Their jobs that the other filters keep (the sender checked job by job), and a job
                -- named by its id; every one of them matches the term already.
                execute format(c_jobs_of_emails, concat_ws(' and ',
                                   document_jobs_internal.job_filter_sql(v_filter - 'q' - 'sender'),
                                   case when v_filter ? 'sender'
                                        then document_jobs_internal.sender_match_sql(v_filter ->> 'sender') end),
                               v_keyset, p_limit + 1)
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
$$;
comment on function public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) is
    'A page of the job list for a filter (job_filter): {"jobs", "next", "count", "partial", "searched_until"}, in (created_at, id) descending order, which is unique, so pages never skip or repeat a job while jobs change; "count" is exact up to 10,000, on the first page, without a search term or with a sender of 5,000 e-mails or fewer. A sender of 5,000 e-mails or fewer (emails_from_sender) gives the page from those e-mails'' jobs; a more common one is walked as a term is (search_walk, 1,000 jobs a page). A search term is looked for in the newest jobs the other filters match (search_walk), then, when those hold less than a page, in its indexes (emails_matching, exact up to 5,000 e-mails). When neither can answer (a term of fewer than three characters, or one in too many e-mails) the page is "partial" and "next" continues from "searched_until": nothing is skipped, it only takes more pages.';
