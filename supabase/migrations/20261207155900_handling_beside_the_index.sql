-- Who is dealing with a fax, beside the index fields the law's search reads (20261207150100): that
-- migration wrote the inbox's row (fax_summary) and its filter's check of keys (faxes_index_filter)
-- anew, without the handling of 20261207140300, so a row lost its "handling" and a filter by
-- handling or assignee was refused as an unknown key. Both again, with the index and the handling
-- together; what each reads is as in those two migrations. And a bulk mark done of the inbox's
-- filter (20261207140100) takes its index keys as the list does: the faxes whose index matches.

create or replace function document_jobs_internal.faxes_index_filter(p_filter jsonb)
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
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q', 'handling', 'assignee',
                               'date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty', 'doc_type']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q,'
                   ' handling, assignee, date_from, date_to, amount_min, amount_max, counterparty, doc_type)',
                   to_jsonb(v_key)));
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
                             order by a.created_at, a.id limit 1),
        -- fax_handling_summary's answer, read here from the row in hand (one index probe a fax).
        'handling', coalesce(
            (select jsonb_build_object('fax_received_email_id', h.fax_received_email_id, 'state', h.state,
                                       'assignee_id', h.assignee_id, 'assignee_email', h.assignee_email,
                                       'note', h.note, 'updated_at', h.updated_at,
                                       'updated_by_email', h.updated_by_email)
               from public.fax_handling h where h.fax_received_email_id = p_email.id),
            jsonb_build_object('fax_received_email_id', p_email.id, 'state', 'new', 'assignee_id', null,
                               'assignee_email', null, 'note', null, 'updated_at', null, 'updated_by_email', null)))
        || document_jobs_internal.fax_storing(p_email.id)
        || jsonb_build_object('index', (select document_jobs_internal.fax_index_json(i) from public.fax_index i
                                              where i.fax_received_email_id = p_email.id));
end;
$$;


create or replace function public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_max_faxes constant int := 50000;
    c_index_keys constant text[] := array['date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty',
                                          'doc_type'];
    v_index jsonb := '{}'::jsonb;
    c_not_done constant text := 'not exists (select 1 from public.fax_handling h'
                                ' where h.fax_received_email_id = %s and h.state = ''done'')';
    v_filter jsonb;
    v_email text;
    v_id uuid;
    v_count int;
begin
    perform document_jobs_internal.require(p_scope in ('faxes', 'jobs'), 'p_scope must be faxes or jobs');
    if p_scope = 'faxes' then
        v_index := document_jobs_internal.faxes_index_filter(p_filter);
        v_filter := document_jobs_internal.faxes_filter(coalesce(p_filter, '{}') - c_index_keys) || v_index;
    else
        v_filter := document_jobs_internal.job_filter(p_filter);
    end if;
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    select left(u.email::text, 320) into v_email from auth.users u where u.id = p_actor_id;

    -- Snapshots never applied are of no use after a day.
    delete from document_jobs_internal.handling_bulk_actions b
     where b.started_at is null and b.prepared_at < now() - interval '1 day';

    insert into document_jobs_internal.handling_bulk_actions (scope, filter, actor_id, actor_email)
    values (p_scope, v_filter, p_actor_id, v_email)
    returning id into v_id;
    if p_scope = 'faxes' then
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select %L::uuid, e.id from public.fax_received_emails e where %s and %s and %s and %s limit %s',
            v_id, document_jobs_internal.faxes_time_sql(v_filter), document_jobs_internal.faxes_match_sql(v_filter),
            case when v_index = '{}'::jsonb then 'true'
                 else format('exists (select 1 from public.fax_index i where i.fax_received_email_id = e.id and %s)',
                             document_jobs_internal.faxes_index_sql(v_index)) end,
            format(c_not_done, 'e.id'), c_max_faxes + 1);
    else
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select distinct %L::uuid, j.fax_received_email_id from public.document_jobs j
              where %s and j.fax_received_email_id is not null and %s
              limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter), format(c_not_done, 'j.fax_received_email_id'),
            c_max_faxes + 1);
    end if;
    get diagnostics v_count = row_count;
    if v_count > c_max_faxes then
        raise exception using errcode = '22023',
            message = format('more than %s faxes match: narrow the filter (received time, error code) and count again',
                             c_max_faxes);
    end if;
    update document_jobs_internal.handling_bulk_actions b set fax_count = v_count where b.id = v_id;
    return jsonb_build_object('bulk_action_id', v_id, 'scope', p_scope, 'fax_count', v_count, 'filter', v_filter,
                              'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;


comment on function document_jobs_internal.faxes_index_filter(jsonb) is
    'The index keys of an inbox filter, checked and normalized: date_from, date_to (YYYY-MM-DD, included), amount_min, amount_max (whole yen, included), counterparty (partial, kana_fold), doc_type; the inbox''s other keys (handling and assignee among them) are left to faxes_filter; 22023 for a key no inbox filter knows.';
comment on function document_jobs_internal.fax_summary(public.fax_received_emails) is
    'A fax as the inbox lists it: the e-mail''s facts, its line, its pages and page-1 thumbnail (the key: the screen signs it), a view that could not be made, how it stands (fax_storing), who is dealing with it ("handling", as fax_handling_summary answers it: new for a fax never marked) and its index fields ("index", null before any entry).';
comment on function public.prepare_fax_handling_bulk(text, jsonb, uuid) is
    'A bulk mark done''s count: the faxes the inbox''s filter matches (p_scope faxes; its index keys too, as the list reads them), or those whose jobs the job list''s filter matches (jobs; each fax once), that are not done yet, at most 50,000 (22023 beyond: narrow the filter), kept as a snapshot for apply_fax_handling_bulk within 15 minutes. For an admin or a clerk of Supabase Auth (acting_operator, in this call). Answers {"bulk_action_id", "scope", "fax_count", "filter", "prepared_at", "expires_at"}.';
