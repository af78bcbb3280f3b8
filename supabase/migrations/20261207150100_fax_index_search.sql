-- The search the Electronic Bookkeeping Act asks for, in the inbox's own read: by transaction
-- date range (取引年月日), amount range (取引金額), counterparty (取引先, a partial match that does
-- not mind katakana or hiragana, full or half width: kana_fold) and document type, combined
-- freely with each other and with the inbox's filters, with the exact count (up to 10,000).
--
-- A filter with any of these keys reads fax_index, which holds the received time it is listed by
-- (newest first), so the page and its count come from that table's own indexes: the transaction
-- date's and the amount's ranges, the document type, the counterparty's characters and pairs
-- (GIN, then LIKE on the folded text), or a walk newest first; the planner picks with the
-- filter's values as constants (the statement is built for them). A fax with no index entry is
-- never found by these keys: the law's search is over what has been entered.

-- The index keys of an inbox filter, checked and normalized: {"date_from", "date_to" (YYYY-MM-DD,
-- both days included), "amount_min", "amount_max" (whole yen, both included), "counterparty"
-- (1 to 200 characters), "doc_type" (one of fax_document_types())}; the inbox's other keys are
-- left to faxes_filter, and a key neither knows is refused (22023).
create function document_jobs_internal.faxes_index_filter(p_filter jsonb)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_key text;
    v_filter jsonb := '{}'::jsonb;
    v_from date;
    v_to date;
    v_text text;
begin
    if p_filter is null or p_filter = 'null'::jsonb then
        return v_filter;
    end if;
    perform document_jobs_internal.require(jsonb_typeof(p_filter) = 'object', 'p_filter must be a JSON object');
    for v_key in select jsonb_object_keys(p_filter) loop
        perform document_jobs_internal.require(
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q', 'date_from', 'date_to',
                               'amount_min', 'amount_max', 'counterparty', 'doc_type']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q,'
                   ' date_from, date_to, amount_min, amount_max, counterparty, doc_type)', to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);
    foreach v_key in array array['date_from', 'date_to'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and (p_filter ->> v_key) ~ '^\d{4}-\d{2}-\d{2}$',
                format('p_filter.%s must be a date, YYYY-MM-DD', v_key));
            begin
                if v_key = 'date_from' then v_from := (p_filter ->> v_key)::date; else v_to := (p_filter ->> v_key)::date; end if;
            exception
                when datetime_field_overflow or invalid_datetime_format then
                    raise exception using errcode = '22023', message = format('p_filter.%s must be a date, YYYY-MM-DD', v_key);
            end;
            v_filter := v_filter || jsonb_build_object(v_key, p_filter -> v_key);
        end if;
    end loop;
    perform document_jobs_internal.require(v_from is null or v_to is null or v_from <= v_to,
        'p_filter.date_from must not be after date_to');
    foreach v_key in array array['amount_min', 'amount_max'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                (jsonb_typeof(p_filter -> v_key) = 'number' and (p_filter ->> v_key) ~ '^\d{1,12}$')
                or (jsonb_typeof(p_filter -> v_key) = 'string' and (p_filter ->> v_key) ~ '^\d{1,12}$'),
                format('p_filter.%s must be whole yen, 0 to 999,999,999,999', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, (p_filter ->> v_key)::bigint);
        end if;
    end loop;
    perform document_jobs_internal.require(
        not (v_filter ? 'amount_min' and v_filter ? 'amount_max')
        or (v_filter ->> 'amount_min')::bigint <= (v_filter ->> 'amount_max')::bigint,
        'p_filter.amount_min must not be more than amount_max');
    if p_filter ? 'counterparty' then
        v_text := btrim(p_filter ->> 'counterparty');
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'counterparty') = 'string' and length(v_text) between 1 and 200
            and v_text !~ '[[:cntrl:]]' and length(document_jobs_internal.kana_fold(v_text)) >= 1,
            'p_filter.counterparty must be 1 to 200 characters, with no control characters');
        v_filter := v_filter || jsonb_build_object('counterparty', v_text);
    end if;
    if p_filter ? 'doc_type' then
        perform document_jobs_internal.require(
            (p_filter ->> 'doc_type') = any (document_jobs_internal.fax_document_types()),
            format('p_filter.doc_type must be one of %s',
                   array_to_string(document_jobs_internal.fax_document_types(), ', ')));
        v_filter := v_filter || jsonb_build_object('doc_type', p_filter ->> 'doc_type');
    end if;
    return v_filter;
end;
$$;
revoke all on function document_jobs_internal.faxes_index_filter(jsonb) from public;
comment on function document_jobs_internal.faxes_index_filter(jsonb) is
    'The index keys of an inbox filter, checked and normalized: date_from, date_to (YYYY-MM-DD, included), amount_min, amount_max (whole yen, included), counterparty (partial, kana_fold), doc_type; 22023 for a key no inbox filter knows.';

-- A normalized index filter's conditions as SQL over a fax_index row "i"; "true" when none.
create function document_jobs_internal.faxes_index_sql(p_filter jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
    select concat_ws(' and ', 'true',
        case when p_filter ? 'date_from' then format('i.transaction_date >= %L::date', p_filter ->> 'date_from') end,
        case when p_filter ? 'date_to' then format('i.transaction_date <= %L::date', p_filter ->> 'date_to') end,
        case when p_filter ? 'amount_min' then format('i.amount >= %s', (p_filter ->> 'amount_min')::bigint) end,
        case when p_filter ? 'amount_max' then format('i.amount <= %s', (p_filter ->> 'amount_max')::bigint) end,
        case when p_filter ? 'doc_type' then format('i.doc_type = %L', p_filter ->> 'doc_type') end,
        case when p_filter ? 'counterparty' then format(
            'document_jobs_internal.text_grams(i.counterparty_folded) @> %L::text[] and i.counterparty_folded like %L',
            document_jobs_internal.term_grams(document_jobs_internal.kana_fold(p_filter ->> 'counterparty')),
            document_jobs_internal.like_pattern(document_jobs_internal.kana_fold(p_filter ->> 'counterparty'))) end)
$$;
revoke all on function document_jobs_internal.faxes_index_sql(jsonb) from public;
comment on function document_jobs_internal.faxes_index_sql(jsonb) is
    'A normalized index filter''s conditions as SQL over a fax_index row "i" (the values written in, for the planner): the date and amount ranges, the type, and the counterparty''s grams (fax_index_counterparty) confirmed by LIKE on the folded text; "true" when there are none.';

-- A fax as the inbox lists it: as in 20261207130000, and its index fields (null before any entry).
create or replace function document_jobs_internal.fax_summary(p_email public.fax_received_emails)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return jsonb_build_object(
        'id', p_email.id,
        'received_at', coalesce(p_email.received_at, p_email.created_at),
        'from', left(p_email.from_address, 300),
        'subject', left(p_email.subject, 300),
        'to', (select left(t, 300) from unnest(p_email.to_addresses) t limit 1),
        'line', (select jsonb_build_object('address', l.address, 'name', l.name, 'number', l.number)
                   from unnest(p_email.to_addresses) with ordinality t(entry, n)
                   join public.fax_lines l on l.address = document_jobs_internal.address_of(t.entry)
                  order by t.n limit 1),
        'found_by', p_email.found_by,
        'reconciled_at', p_email.reconciled_at,
        'attachments', (select count(*) from public.fax_received_email_attachments a
                         where a.fax_received_email_id = p_email.id),
        'pages', (select sum(v.page_count) from public.fax_received_email_attachments a
                    join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
                   where a.fax_received_email_id = p_email.id),
        'thumbnail', (select jsonb_build_object('bucket', a.bucket, 'path', v.thumbnail_path)
                        from public.fax_received_email_attachments a
                        join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
                       where a.fax_received_email_id = p_email.id and v.thumbnail_path is not null
                       order by a.created_at, a.id limit 1),
        'view_error_code', (select v.error_code from public.fax_received_email_attachments a
                              join public.fax_attachment_views v on v.attachment_id = a.id
                             where a.fax_received_email_id = p_email.id and v.error_code is not null
                             order by a.created_at, a.id limit 1))
        || document_jobs_internal.fax_storing(p_email.id)
        || jsonb_build_object('index', (select document_jobs_internal.fax_index_json(i) from public.fax_index i
                                              where i.fax_received_email_id = p_email.id));
end;
$$;

-- A page of the inbox, as in 20261207130000; a filter with an index key (faxes_index_filter) reads
-- fax_index: its page newest first and its exact count up to 10,000, through its indexes.
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
        if not v_filter ? 'number' then
            -- The walk first: the newest e-mails of the range, in the index's order, checked one by
            -- one; a common sender or term fills a page there sooner than its index lists it.
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
        end if;
        if v_ids is null or v_partial then
            -- Less than a page there, or a number: its index, when it names 5,000 e-mails or fewer.
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
            elsif v_ids is null then
                -- A number of fewer than three digits, or in more than 5,000 e-mails: walked.
                execute format(
                    'select array(select e.id from (select e.* from public.fax_received_emails e where %1$s and %2$s'
                    '   order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %3$s) e where %4$s'
                    ' order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %5$s)',
                    v_time, v_keyset, c_walk, v_match, p_limit + 1)
                   into v_ids;
                if cardinality(v_ids) <= p_limit then
                    execute format('select coalesce(e.received_at, e.created_at), e.id'
                                   ' from public.fax_received_emails e where %s and %s'
                                   ' order by coalesce(e.received_at, e.created_at) desc, e.id desc offset %s limit 1',
                                   v_time, v_keyset, c_walk - 1)
                       into v_oldest_at, v_oldest_id;
                    v_partial := v_oldest_id is not null;
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
comment on function public.document_jobs_admin_faxes(jsonb, timestamptz, uuid, int) is
    'A page of the inbox: one row per received e-mail (a fax), newest first by its received time, for as long as the e-mail row is kept, whatever became of its jobs; filters by received time, sender text, number digits, line and search term (faxes_filter); keyset pages after p_after_received_at/p_after_id; "partial" when a walk of 2,000 e-mails ended short of a page; "lines" the office''s lines (their own numbers are never shown as a sender''s); and by the index fields (transaction date and amount ranges, counterparty, document type: faxes_index_filter), read from fax_index with an exact count up to 10,000.';


-- One fax for its page, as in 20261207130000, and its index fields, their version and history.
create or replace function public.document_jobs_admin_fax(p_fax_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
declare
    v_email public.fax_received_emails;
begin
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    select * into v_email from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        return null;
    end if;
    return jsonb_build_object(
        'fax', document_jobs_internal.fax_summary(v_email) || jsonb_build_object(
            'to_all', to_jsonb(v_email.to_addresses), 'cc', to_jsonb(v_email.cc_addresses),
            'provider_email_id', v_email.provider_email_id, 'message_id', v_email.message_id,
            'recorded_at', v_email.created_at, 'provider_received_at', v_email.received_at,
            'rotation', coalesce((select r.rotation from public.fax_view_rotations r
                                   where r.fax_received_email_id = v_email.id), 0)),
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'filename', a.filename, 'content_type', a.content_type,
                       'size_bytes', a.size_bytes, 'sha256', a.sha256, 'bucket', a.bucket,
                       'storage_path', a.storage_path,
                       'page_count', v.page_count, 'view_path', v.view_path, 'thumbnail_path', v.thumbnail_path,
                       'view_error_code', v.error_code)
                   order by a.created_at, a.id)
              from public.fax_received_email_attachments a
              left join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
             where a.fax_received_email_id = v_email.id), '[]'),
        'jobs', coalesce((
            select jsonb_agg(jsonb_build_object('id', j.id, 'kind', j.kind, 'status', j.status,
                                                'last_error_code', j.last_error_code, 'created_at', j.created_at,
                                                'finished_at', j.finished_at)
                   order by j.created_at, j.id)
              from public.document_jobs j where j.fax_received_email_id = v_email.id), '[]'),
        'own_numbers', coalesce((select jsonb_agg(l.number order by l.number) from public.fax_lines l
                                  where l.number is not null), '[]'))
        || document_jobs_internal.fax_index_read(v_email.id);
end;
$$;
comment on function public.document_jobs_admin_fax(uuid) is
    'One fax for its page: its summary as the inbox lists it (with its index fields), its To, Cc, ids and how it was found (found_by, reconciled_at), its attachments in order with their views, the rotation it is read at, its jobs as far as they are kept, its index fields (index, index_version) and their history (index_history, the latest 500, index_history_total) and the document types offered; null for no such fax.';
