-- The inbox shows who is dealing with each fax, and filters by it: every fax's handling (its
-- state, who took or closed it, its note, as fax_handling_summary answers it; one index probe a
-- fax, read from the row in hand) in the inbox's rows and on a fax's page (fax_summary, which both
-- read), and two filters, its handling state ("handling": the states
-- wanted; the screen's 未完了 is new and in_progress) and whose it is ("assignee": the e-mail of
-- the clerk or admin who took or closed it; the screen's 自分の担当 is the operator's own). A fax
-- never marked is new. The walk checks a fax's handling by its row (a primary key lookup); a
-- filter of faxes marked so (whose, or not new) is answered from fax_handling's indexes when it
-- names 5,000 faxes or fewer, as the other indexed filters are. Otherwise as in 20261207130000.

-- As in 20261207140000, in PL/pgSQL: the inbox reads it for every fax of a page, and a SQL function
-- that is not inlined plans its statement on every call (see fax_storing).
create or replace function document_jobs_internal.fax_handling_summary(p_fax_received_email_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return (select case when e.id is not null then jsonb_build_object(
                       'fax_received_email_id', e.id,
                       'state', coalesce(h.state, 'new'),
                       'assignee_id', h.assignee_id,
                       'assignee_email', h.assignee_email,
                       'note', h.note,
                       'updated_at', h.updated_at,
                       'updated_by_email', h.updated_by_email) end
              from (select p_fax_received_email_id as id) x
              left join public.fax_received_emails e on e.id = x.id
              left join public.fax_handling h on h.fax_received_email_id = e.id);
end;
$$;

-- The faxes marked in a state, and those of one assignee (lower case: the filter's form).
create index fax_handling_by_state on public.fax_handling (state);
create index fax_handling_by_assignee on public.fax_handling (lower(assignee_email)) where state <> 'new';

create or replace function document_jobs_internal.faxes_filter(p_filter jsonb)
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
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q', 'handling',
                               'assignee']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q, '
                   'handling, assignee)', to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);
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
    foreach v_key in array array['sender', 'q', 'line'] loop
        if p_filter ? v_key then
            v_text := btrim(p_filter ->> v_key);
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(v_text) between 1 and 200
                and v_text !~ '[[:cntrl:]]',
                format('p_filter.%s must be 1 to 200 characters, with no control characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key,
                case when v_key = 'line' then document_jobs_internal.address_of(v_text) else v_text end);
        end if;
    end loop;
    if p_filter ? 'handling' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'handling') = 'array' and jsonb_array_length(p_filter -> 'handling') > 0
            and not exists (select 1 from jsonb_array_elements(p_filter -> 'handling') s
                             where jsonb_typeof(s) <> 'string'
                                or not (s #>> '{}') = any (document_jobs_internal.handling_states())),
            'p_filter.handling must be a non-empty array of new, in_progress, done');
        v_filter := v_filter || jsonb_build_object('handling',
            (select jsonb_agg(distinct s) from jsonb_array_elements_text(p_filter -> 'handling') s));
    end if;
    if p_filter ? 'assignee' then
        v_text := lower(btrim(p_filter ->> 'assignee'));
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'assignee') = 'string' and length(v_text) between 1 and 320
            and v_text !~ '[[:cntrl:]]',
            'p_filter.assignee must be an e-mail address of 1 to 320 characters');
        v_filter := v_filter || jsonb_build_object('assignee', v_text);
    end if;
    if p_filter ? 'number' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'number') = 'string' and (p_filter ->> 'number') ~ '^[0-9]{1,20}$',
            'p_filter.number must be 1 to 20 ASCII digits');
        v_filter := v_filter || jsonb_build_object('number', p_filter ->> 'number');
    end if;
    return v_filter;
end;
$$;


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
            'exists (select 1 from public.fax_handling h where h.fax_received_email_id = e.id'
            ' and h.state <> ''new'' and lower(h.assignee_email) = %L)', p_filter ->> 'assignee') end)
$$;


create or replace function document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit int)
returns uuid[]
language plpgsql
stable
set search_path = ''
as $$
declare
    v_found uuid[];
begin
    if p_filter ? 'number' and length(p_filter ->> 'number') >= 3 then
        execute format('select array(select e.id from public.fax_received_emails e'
                       ' where document_jobs_internal.fax_number_digits(e.subject, e.from_address) like %L limit %s)',
                       '%' || (p_filter ->> 'number') || '%', p_limit)
           into v_found;
        return v_found;
    end if;
    if p_filter ? 'q' and (p_filter ->> 'q') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        return array[(p_filter ->> 'q')::uuid] || document_jobs_internal.emails_matching(p_filter ->> 'q', p_limit);
    end if;
    if p_filter ? 'sender' and length(p_filter ->> 'sender') >= 3 then
        return document_jobs_internal.emails_matching(p_filter ->> 'sender', p_limit);
    end if;
    if p_filter ? 'q' and length(p_filter ->> 'q') >= 3 then
        return document_jobs_internal.emails_matching(p_filter ->> 'q', p_limit);
    end if;
    -- Whose a fax is, or a handling that is not new: the faxes marked so, from fax_handling's
    -- indexes (a new fax is one with no row: only a walk finds those).
    if p_filter ? 'assignee' then
        return array(select h.fax_received_email_id from public.fax_handling h
                      where lower(h.assignee_email) = p_filter ->> 'assignee' and h.state <> 'new' limit p_limit);
    end if;
    if p_filter ? 'handling' and not p_filter -> 'handling' ? 'new' then
        return array(select h.fax_received_email_id from public.fax_handling h
                      where h.state = any (array(select jsonb_array_elements_text(p_filter -> 'handling')))
                      limit p_limit);
    end if;
    return null;
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
        || document_jobs_internal.fax_storing(p_email.id);
end;
$$;


comment on function document_jobs_internal.faxes_filter(jsonb) is
    'The inbox''s filter, checked and normalized: {"received_from", "received_to", "sender", "number", "line", "q", "handling" (the handling states wanted), "assignee" (the e-mail of whom a fax is, lower case)}, every key optional; anything else is refused with 22023 naming the key.';
comment on function document_jobs_internal.faxes_match_sql(jsonb) is
    'A normalized inbox filter''s conditions as SQL over an e-mail row "e", the time range excepted: sender text, number digits, line, search term, handling state (new for a fax never marked) and assignee; "true" when there are none.';
comment on function document_jobs_internal.faxes_candidates(jsonb, integer) is
    'The e-mails that may match an inbox filter, through its indexes, at most p_limit (p_limit means "maybe more"), or null when no index can answer: a number''s digits, an id, a sender or term of three characters or more, an assignee, or handling states without new (fax_handling''s indexes).';
comment on function document_jobs_internal.fax_summary(public.fax_received_emails) is
    'A fax as the inbox lists it: the e-mail''s facts, its line, its pages and page-1 thumbnail (the key: the screen signs it), a view that could not be made, how it stands (fax_storing) and who is dealing with it ("handling", as fax_handling_summary answers it: new for a fax never marked).';
