-- The inbox's search by number at 1,000,000 faxes (bench/admin_views.py): a number of middling
-- frequency (1 % to 0.1 % of the faxes, 18 of them among the newest 2,000) went, after the walk,
-- to the digits' trigram index, whose every candidate is rechecked through fax_number_digits'
-- regular expressions (about 15 us each): up to 5,001 for the candidates, then again for the page
-- and again for its count, 120 to 250 ms. The digits of a fax now also stand as the runs they are
-- made of (fax_number_runs: a number searched for, digits only, is in a fax's digits exactly when
-- it is in one of its runs), indexed as an array (exact: no recheck); the runs that hold the
-- number are found among the distinct ones (email_number_runs, kept by a trigger as email_senders
-- is), and the e-mails with one of them through fax_received_emails_number_runs. A number's
-- candidates are then its matches: the page and its count are one read of them, without the
-- regular expressions. A number's candidates are counted first from the index alone: more than
-- 5,000, the walk as before, where so frequent a number fills its page.
--
-- Otherwise as in 20261207220000 (faxes_candidates and document_jobs_admin_faxes).

-- Of the digits alone, not of the subject and From line: an index's expression runs as the role
-- that writes the row, which may not use this schema, so the body names no function of it.
create function document_jobs_internal.fax_number_runs(p_digits text) returns text[]
    language sql immutable parallel safe set search_path = ''
as $$
    select array(select distinct case when length(r) > 40 then '…' else r end
                   from regexp_split_to_table(p_digits, '\|') r
                  where length(r) >= 3)
$$;
revoke all on function document_jobs_internal.fax_number_runs(text) from public;
-- An index's expression runs as the role that writes the row: the service role writes e-mails too.
grant execute on function document_jobs_internal.fax_number_runs(text) to service_role;
comment on function document_jobs_internal.fax_number_runs(p_digits text) is
    'The runs of three digits or more in a fax''s digits (fax_number_digits: the digits between two "|"), distinct; a run of more than 40 digits as "…" (no number: an index entry has a size limit that a sender''s subject must never reach; fax_number_runs(repeat(''0'', 41)) names it), so that the search checks those e-mails in full. A search for three digits or more matches a fax exactly when one of its runs holds them. Indexed (fax_received_emails_number_runs).';

create table document_jobs_internal.email_number_runs (
    digits text primary key
);
alter table document_jobs_internal.email_number_runs enable row level security;
comment on table document_jobs_internal.email_number_runs is
    'Every run of digits (fax_number_runs) an e-mail has or had, kept by the triggers fax_received_emails_note_number_runs_*, so that a search by number finds the runs that hold it among the distinct ones, then their e-mails through fax_received_emails_number_runs.';

insert into document_jobs_internal.email_number_runs (digits)
select distinct r from public.fax_received_emails e
 cross join unnest(document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(e.subject, e.from_address))) r
on conflict do nothing;

create function document_jobs_internal.note_number_runs() returns trigger
    language plpgsql security definer set search_path = ''
as $$
begin
    insert into document_jobs_internal.email_number_runs (digits)
    select distinct r from new_rows n cross join unnest(document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(n.subject, n.from_address))) r
    on conflict do nothing;
    return null;
end;
$$;
revoke all on function document_jobs_internal.note_number_runs() from public;
comment on function document_jobs_internal.note_number_runs() is
    'Triggers fax_received_emails_note_number_runs_insert and _update: every run of digits an e-mail has is kept in email_number_runs (once per statement). Security definer: the e-mails are written as service_role, which has no privilege on the helpers'' tables.';

-- A transition table cannot go with a column list: one trigger per event.
create trigger fax_received_emails_note_number_runs_insert after insert on public.fax_received_emails
    referencing new table as new_rows for each statement execute function document_jobs_internal.note_number_runs();
create trigger fax_received_emails_note_number_runs_update after update on public.fax_received_emails
    referencing new table as new_rows for each statement execute function document_jobs_internal.note_number_runs();

create index fax_received_emails_number_runs on public.fax_received_emails
    using gin (document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(subject, from_address)));

create function document_jobs_internal.number_runs_sql(p_number text) returns text
    language plpgsql stable set search_path = ''
as $$
begin
    return format('document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(e.subject, e.from_address)) && %L::text[]',
                  array(select n.digits from document_jobs_internal.email_number_runs n
                         where n.digits like '%' || p_number || '%' order by n.digits));
end;
$$;
revoke all on function document_jobs_internal.number_runs_sql(text) from public;
comment on function document_jobs_internal.number_runs_sql(p_number text) is
    'A number''s condition (ASCII digits, three or more) over an e-mail row "e" that fax_received_emails_number_runs answers exactly: its runs of digits that hold the number, found among the distinct ones (email_number_runs) and written in. The e-mails whose run is too long to index ("…") are not in it.';

create or replace function document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit int)
returns uuid[]
language plpgsql stable
set search_path = ''
as $_$
declare
    v_found uuid[];
    v_long uuid[];
begin
    if p_filter ? 'number' and length(p_filter ->> 'number') >= 3 then
        -- The runs of digits that hold the number, among the distinct ones, then the e-mails with one
        -- of them (fax_received_emails_number_runs: exact, no regular expression per e-mail); and
        -- the few with a run too long to index, checked in full.
        execute format('select array(select e.id from public.fax_received_emails e where %s limit %s)',
                       document_jobs_internal.number_runs_sql(p_filter ->> 'number'), p_limit)
           into v_found;
        execute format('select array(select e.id from public.fax_received_emails e'
                       ' where document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(e.subject, e.from_address)) @> %L::text[]'
                       ' and document_jobs_internal.fax_number_digits(e.subject, e.from_address) like %L limit %s)',
                       document_jobs_internal.fax_number_runs(repeat('0', 41)),
                       '%' || (p_filter ->> 'number') || '%', p_limit)
           into v_long;
        return array(select distinct f.id from unnest(v_found || v_long) f(id) limit p_limit);
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
$_$;


create or replace function public.document_jobs_admin_faxes(p_filter jsonb default '{}', p_after_received_at timestamptz default null,
                                                         p_after_id uuid default null, p_limit int default 50)
returns jsonb
language plpgsql stable security definer
set search_path = ''
set jit = off
as $_$
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
    v_number boolean := v_filter ? 'number' and length(v_filter ->> 'number') >= 3;
    v_from_candidates boolean := false;
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
        -- A number of three digits or more: its candidates first, now that they are exact and cheap
        -- (fax_number_runs: up to 5,001 e-mails read, no regular expression). 5,000 or fewer: the
        -- page and its count are theirs. More: the walk, where so frequent a number fills its page.
        if v_number then
            -- How many first, from the index alone (a count reads no row of a page all visible).
            execute format('select count(*) from (select 1 from public.fax_received_emails e where %s limit %s) c',
                           document_jobs_internal.number_runs_sql(v_filter ->> 'number'), c_candidates + 1)
               into v_count;
            if v_count <= c_candidates then
                v_candidates := document_jobs_internal.faxes_candidates(v_filter, c_candidates + 1);
                v_from_candidates := cardinality(v_candidates) <= c_candidates;
            end if;
            v_count := null;
        end if;
        if not v_from_candidates then
            -- The walk: the newest e-mails of the range, in the index's order, checked one by one;
            -- a common sender or term fills a page there sooner than its index lists it.
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
            if v_partial and not v_number then
                -- Less than a page there: the filter's index, when it names 5,000 e-mails or fewer;
                -- otherwise (a term of fewer than three characters, or more than 5,000 e-mails;
                -- a number's were counted above) the walk's page stands, partial.
                v_candidates := document_jobs_internal.faxes_candidates(v_filter, c_candidates + 1);
                v_from_candidates := v_candidates is not null and cardinality(v_candidates) <= c_candidates;
            end if;
        end if;
        if v_from_candidates then
            v_partial := false;
            -- A number's candidates are its matches already (fax_number_runs, exact): its
            -- condition is not checked again, each check being fax_number_digits' regular
            -- expressions. The first page and its count are one read of the candidates.
            if v_number then
                v_match := document_jobs_internal.faxes_match_sql(v_filter - 'number');
            end if;
            execute format('select array(select e.id from public.fax_received_emails e where e.id = any ($1)'
                           ' and %s and %s and %s order by coalesce(e.received_at, e.created_at) desc, e.id desc'
                           ' %s)', v_time, v_match, v_keyset,
                           case when p_after_id is null then '' else format('limit %s', p_limit + 1) end)
               into v_ids using v_candidates;
            if p_after_id is null then
                v_count := cardinality(v_ids);
                v_ids := v_ids[1:p_limit + 1];
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
$_$;

