-- The inbox at 1,000,000 faxes (bench/admin_views.py, senders of Zipf-like shares), two planner
-- traps found with EXPLAIN ANALYZE:
--
-- 1. "Mine only" (an assignee): the walk's check of the newest 2,000 e-mails was an EXISTS over
--    fax_handling, which PostgreSQL turned into a hash semi-join that read every fax the operator
--    ever took (124,278 rows, 18,000 pages, about 0.6 s on a loaded machine) to keep the 80 of them
--    among the 2,000: fax_handling_by_assignee's estimate of one clerk's faxes is the default 0.5 %.
--    The assignee is now read as the handling state is, a scalar subquery of the e-mail's row, which
--    the planner cannot pull up: one primary key probe per e-mail walked (and per candidate).
-- 2. A number: the inbox went to the digits' trigram index first, which for a frequent sender's
--    number (the busiest sends a tenth of the faxes) names tens of thousands of e-mails, each
--    rechecked through fax_number_digits' regular expressions until 5,001 were found (about 0.5 s),
--    only to give up and walk anyway. A number is now walked first, as a sender's name and a search
--    term are: a frequent number fills its page among the newest 2,000 e-mails, and a rare one is
--    then found through the index as before.
--
-- Otherwise as in 20261207140300 (faxes_match_sql) and 20261207150100 (document_jobs_admin_faxes).

create or replace function document_jobs_internal.faxes_match_sql(p_filter jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
    select concat_ws(' and ', 'true',
        case when p_filter ? 'sender' then format('(e.from_address ilike %1$L or e.subject ilike %1$L)',
            document_jobs_internal.like_pattern(p_filter ->> 'sender')) end,
        case when p_filter ? 'number' then format(
            'document_jobs_internal.fax_number_digits(e.subject, e.from_address) like %L',
            '%' || (p_filter ->> 'number') || '%') end,
        case when p_filter ? 'line' then format(
            'exists (select 1 from unnest(e.to_addresses) t where document_jobs_internal.address_of(t) = %L)',
            p_filter ->> 'line') end,
        case when p_filter ? 'q' then format(
            '(%s e.provider_email_id = %L or e.from_address ilike %3$L or e.subject ilike %3$L)',
            case when (p_filter ->> 'q') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                 then format('e.id = %L::uuid or', p_filter ->> 'q') else '' end,
            p_filter ->> 'q', document_jobs_internal.like_pattern(p_filter ->> 'q')) end,
        case when p_filter ? 'handling' then format(
            'coalesce((select h.state from public.fax_handling h where h.fax_received_email_id = e.id), ''new'')'
            ' = any (%L::text[])', array(select jsonb_array_elements_text(p_filter -> 'handling'))) end,
        case when p_filter ? 'assignee' then format(
            '(select lower(h.assignee_email) from public.fax_handling h where h.fax_received_email_id = e.id'
            ' and h.state <> ''new'') = %L', p_filter ->> 'assignee') end)
$$;


create or replace function public.document_jobs_admin_faxes(
    p_filter jsonb default '{}',
    p_after_received_at timestamptz default null,
    p_after_id uuid default null,
    p_limit int default 50
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- as the other views (20261201004200_admin_screen_views.sql)
as $$
declare
    c_walk constant int := 2000;
    c_candidates constant int := 5000;
    c_count_cap constant int := 10000;
    c_index_keys constant text[] := array['date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty',
                                          'doc_type'];
    v_index jsonb := document_jobs_internal.faxes_index_filter(p_filter);
    v_filter jsonb := document_jobs_internal.faxes_filter(coalesce(p_filter, '{}') - c_index_keys) || v_index;
    v_match text := document_jobs_internal.faxes_match_sql(v_filter);
    v_time text := document_jobs_internal.faxes_time_sql(v_filter);
    v_keyset text := 'true';
    v_candidates uuid[];
    v_ids uuid[];
    v_count int;
    v_partial boolean := false;
    v_oldest_at timestamptz;
    v_oldest_id uuid;
    v_next jsonb;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    perform document_jobs_internal.require((p_after_received_at is null) = (p_after_id is null),
        'p_after_received_at and p_after_id go together');
    if p_after_id is not null then
        v_keyset := format('(coalesce(e.received_at, e.created_at), e.id) < (%L::timestamptz, %L::uuid)',
                           p_after_received_at, p_after_id);
    end if;

    if v_index <> '{}'::jsonb then
        -- The law's search: fax_index's own rows, newest first by the received time it holds; the
        -- e-mail joined only for the inbox's other conditions.
        v_time := replace(v_time, 'coalesce(e.received_at, e.created_at)', 'i.received');
        v_keyset := replace(replace(v_keyset, 'coalesce(e.received_at, e.created_at)', 'i.received'), 'e.id',
                            'i.fax_received_email_id');
        v_match := format('%s and %s', document_jobs_internal.faxes_index_sql(v_index),
            case when v_match = 'true' then 'true'
                 else format('exists (select 1 from public.fax_received_emails e where e.id = i.fax_received_email_id'
                             ' and %s)', v_match) end);
        execute format('select array(select i.fax_received_email_id from public.fax_index i where %s and %s and %s'
                       ' order by i.received desc, i.fax_received_email_id desc limit %s)',
                       v_match, v_time, v_keyset, p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from public.fax_index i where %s and %s limit %s) c',
                           v_match, v_time, c_count_cap + 1)
               into v_count;
        end if;
    elsif v_match = 'true' then
        -- No condition but the time: the page is a range of the index.
        execute format('select array(select e.id from public.fax_received_emails e where %s and %s'
                       ' order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %s)',
                       v_time, v_keyset, p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from public.fax_received_emails e where %s limit %s) c',
                           v_time, c_count_cap + 1)
               into v_count;
        end if;
    else
        -- The walk first, a number's too: the newest e-mails of the range, in the index's order,
        -- checked one by one; a common sender, number or term fills a page there sooner than its
        -- index lists it.
        execute format(
            'select array(select e.id from (select e.* from public.fax_received_emails e where %1$s and %2$s'
            '   order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %3$s) e where %4$s'
            ' order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %5$s)',
            v_time, v_keyset, c_walk, v_match, p_limit + 1)
           into v_ids;
        if cardinality(v_ids) <= p_limit then
            execute format('select coalesce(e.received_at, e.created_at), e.id from public.fax_received_emails e'
                           ' where %s and %s order by coalesce(e.received_at, e.created_at) desc, e.id desc'
                           ' offset %s limit 1', v_time, v_keyset, c_walk - 1)
               into v_oldest_at, v_oldest_id;
            v_partial := v_oldest_id is not null;
        end if;
        if v_partial then
            -- Less than a page there: the filter's index, when it names 5,000 e-mails or fewer;
            -- otherwise (a number of fewer than three digits, a term of fewer than three characters,
            -- or more than 5,000 e-mails) the walk's page stands, partial.
            v_candidates := document_jobs_internal.faxes_candidates(v_filter, c_candidates + 1);
            if v_candidates is not null and cardinality(v_candidates) <= c_candidates then
                v_partial := false;
                execute format('select array(select e.id from public.fax_received_emails e where e.id = any ($1)'
                               ' and %s and %s and %s order by coalesce(e.received_at, e.created_at) desc, e.id desc'
                               ' limit %s)', v_time, v_match, v_keyset, p_limit + 1)
                   into v_ids using v_candidates;
                if p_after_id is null then
                    execute format('select count(*) from public.fax_received_emails e where e.id = any ($1)'
                                   ' and %s and %s', v_time, v_match)
                       into v_count using v_candidates;
                end if;
            end if;
        end if;
        if p_after_id is null and v_count is null and not v_partial and cardinality(v_ids) <= p_limit then
            v_count := cardinality(v_ids);
        end if;
    end if;

    if v_partial then
        v_next := jsonb_build_object('received_at', v_oldest_at, 'id', v_oldest_id);
    elsif cardinality(v_ids) > p_limit then
        v_ids := v_ids[1:p_limit];
        select jsonb_build_object('received_at', coalesce(e.received_at, e.created_at), 'id', e.id) into v_next
          from public.fax_received_emails e where e.id = v_ids[p_limit];
    end if;

    return jsonb_build_object(
        'faxes', coalesce((
            select jsonb_agg(document_jobs_internal.fax_summary(e)
                             order by coalesce(e.received_at, e.created_at) desc, e.id desc)
              from public.fax_received_emails e where e.id = any (v_ids)), '[]'),
        'next', v_next,
        'partial', v_partial,
        'searched_until', case when v_partial then v_oldest_at end,
        'count', case when v_count <= c_count_cap then v_count end,
        'count_capped', coalesce(v_count > c_count_cap, false),
        'filter', v_filter,
        'lines', coalesce((select jsonb_agg(jsonb_build_object('address', l.address, 'name', l.name,
                                                               'number', l.number) order by l.name, l.address)
                             from public.fax_lines l), '[]'));
end;
$$;

comment on function document_jobs_internal.faxes_match_sql(jsonb) is
    'A normalized inbox filter''s conditions as SQL over an e-mail row "e", the time range excepted: sender text, number digits, line, search term, handling state (new for a fax never marked) and assignee, the last two read by a scalar subquery of the e-mail''s row (a primary key probe each: an EXISTS became a join that read all of one clerk''s faxes); "true" when there are none.';
comment on function public.document_jobs_admin_faxes(jsonb, timestamptz, uuid, int) is
    'A page of the inbox: one row per received e-mail (a fax), newest first by its received time, for as long as the e-mail row is kept, whatever became of its jobs; filters by received time, sender text, number digits, line and search term (faxes_filter; the newest 2,000 e-mails of the range walked first, a number''s too, then the filter''s index when the walk found less than a page); keyset pages after p_after_received_at/p_after_id; "partial" when neither filled a page; "lines" the office''s lines (their own numbers are never shown as a sender''s); and by the index fields (transaction date and amount ranges, counterparty, document type: faxes_index_filter), read from fax_index with an exact count up to 10,000.';
