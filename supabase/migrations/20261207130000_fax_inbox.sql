-- The inbox (受信FAX): one row per fax, the e-mail, for as long as its row is kept. The job list
-- showed a fax only while one of its jobs existed, and completed jobs are purged after 30 days: the
-- inbox reads the e-mails themselves, so a fax whose jobs are gone stays listed, opened and
-- downloadable. What its jobs say (fetching, stored, cannot be fetched) is read beside it when
-- there is a job to read, and a fax with none left is one whose jobs completed.
--
-- The office's lines: which of its addresses received a fax (To), named by the admin (fax_lines,
-- set with set_fax_line by SQL or the CLI). The sender's number is read from the subject and the
-- From name by lib/fax/senders.py when a page is listed (lib/screen/calls.py): the parser is
-- Python, one owner, and a page is 50 faxes; the search by number goes through the digits of the
-- subject and the From line (fax_number_digits and its trigram index), which hold the number the
-- parser reads wherever a format writes it.
--
-- A page of the inbox follows (received, id) descending, received being the provider's time
-- (received_at) or, when that did not parse, when the e-mail was recorded: the order of
-- fax_received_emails_inbox, so the first page and every date range are one index range.

-- -- the office's lines ------------------------------------------------------------------------

create table public.fax_lines (
    address text primary key,
    name text not null,
    number text,
    updated_at timestamptz not null default now(),
    constraint fax_lines_address check (address = lower(btrim(address)) and address ~ '^[^@\s<>]+@[^@\s<>]+$'
                                        and length(address) <= 254),
    constraint fax_lines_name check (length(btrim(name)) between 1 and 50 and name !~ '[[:cntrl:]]'),
    constraint fax_lines_number check (number ~ '^[0-9]{3,20}$')
);
alter table public.fax_lines enable row level security;
revoke all on table public.fax_lines from public, anon, authenticated;
grant select on table public.fax_lines to service_role;
comment on table public.fax_lines is
    'The office''s fax lines: the address a fax-to-mail service or an MFP sends each line''s faxes to (the To of the e-mail, lower case), the name the inbox shows for it (e.g. 本社, 営業部) and the line''s own number (ASCII digits), which the inbox never shows as a sender''s (an MFP may write its own station ID in the subject). Set by set_fax_line and remove_fax_line (SQL, or the CLI''s lines command).';
comment on column public.fax_lines.number is
    'The line''s own fax number, ASCII digits only (lib/fax/senders.py Number.canonical), or null.';

-- The address of a To entry as stored ("本社 <fax@example.jp>" or "fax@example.jp"), lower case.
create function document_jobs_internal.address_of(p_entry text)
returns text
language sql
immutable
set search_path = ''
as $$
    select lower(btrim(coalesce(substring(p_entry from '<([^<>]*)>\s*$'), p_entry)))
$$;
revoke all on function document_jobs_internal.address_of(text) from public;
comment on function document_jobs_internal.address_of(text) is
    'The address of a recipient as the e-mail row stores it (a bare address, or a display name and <address>), lower case: what fax_lines.address names.';

create function public.set_fax_line(p_address text, p_name text, p_number text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_line public.fax_lines;
begin
    perform document_jobs_internal.require(p_address is not null and p_name is not null,
                                           'p_address and p_name must not be null');
    insert into public.fax_lines as l (address, name, number)
    values (document_jobs_internal.address_of(p_address), btrim(p_name), nullif(p_number, ''))
    on conflict (address) do update set name = excluded.name, number = excluded.number, updated_at = now()
    returning * into v_line;
    return to_jsonb(v_line);
exception
    when check_violation then
        raise exception using errcode = '22023', message = format(
            'not a line: the address must be one e-mail address, the name 1 to 50 characters, the number 3 to 20 ASCII digits (%s)',
            sqlerrm);
end;
$$;
comment on function public.set_fax_line(text, text, text) is
    'Names one of the office''s fax lines: the address its faxes are sent to (its To; a display name and <address> is taken too), the name the inbox shows, and the line''s own number as ASCII digits (optional). Adds the line or changes it; 22023 for a value fax_lines refuses.';

create function public.remove_fax_line(p_address text)
returns boolean
language sql
security definer
set search_path = ''
as $$
    with gone as (delete from public.fax_lines l where l.address = document_jobs_internal.address_of(p_address)
                  returning 1)
    select exists (select 1 from gone)
$$;
comment on function public.remove_fax_line(text) is
    'Forgets one of the office''s lines (its faxes stay, shown by their To address); true when there was one.';

revoke all on function public.set_fax_line(text, text, text), public.remove_fax_line(text)
    from public, anon, authenticated;
grant execute on function public.set_fax_line(text, text, text), public.remove_fax_line(text) to service_role;

-- -- what the inbox searches by ----------------------------------------------------------------

-- The digits of a subject and a From line for the search by number: full-width digits and the
-- dashes a number is written with made ASCII (as lib/fax/senders.py reads them), separators
-- between the groups of a number dropped (the prolonged sound mark and the box line an IME gives
-- for "-" among them), and any other text a break ("|"), so that
-- 「送信元 ０６－１１１１－２２２２」 holds 0611112222 and two numbers far apart do not run together.
-- The clerk's input is made digits by lib/fax/senders.py search_digits before it comes here.
create function document_jobs_internal.fax_number_digits(p_subject text, p_from text)
returns text
language sql
immutable
parallel safe
set search_path = ''
as $$
    select regexp_replace(
               regexp_replace(
                   translate(coalesce(p_subject, '') || '|' || coalesce(p_from, ''),
                             '０１２３４５６７８９（）＋‐‑‒–—―−﹘﹣－ーｰ─　',
                             '0123456789()+------------- '),
                   '[^0-9()+ -]+', '|', 'g'),
               '[()+ -]+', '', 'g')
$$;
revoke all on function document_jobs_internal.fax_number_digits(text, text) from public;
-- An index's expression runs as the role that writes the row: the service role writes e-mails too.
grant execute on function document_jobs_internal.fax_number_digits(text, text) to service_role;
comment on function document_jobs_internal.fax_number_digits(text, text) is
    'The digits of a fax''s subject and From line as the inbox''s search by number reads them: full-width digits and dashes made ASCII, the separators inside a number ((, ), +, spaces, dashes) dropped, any other text a "|". Indexed (fax_received_emails_number_digits).';

-- Newest first, as the inbox lists: the first page and a date range are one range of this index.
create index fax_received_emails_inbox
    on public.fax_received_emails ((coalesce(received_at, created_at)) desc, id desc);
-- The search by number: the digits as a substring (a trigram index answers LIKE '%...%' for three
-- digits or more).
create index fax_received_emails_number_digits
    on public.fax_received_emails
 using gin (document_jobs_internal.fax_number_digits(subject, from_address) extensions.gin_trgm_ops);

-- -- the rotation a fax is read at --------------------------------------------------------------

create table public.fax_view_rotations (
    fax_received_email_id uuid primary key references public.fax_received_emails (id) on delete cascade,
    rotation int not null check (rotation in (0, 90, 180, 270)),
    set_by uuid not null,
    set_at timestamptz not null default now()
);
alter table public.fax_view_rotations enable row level security;
revoke all on table public.fax_view_rotations from public, anon, authenticated;
grant select on table public.fax_view_rotations to service_role;
comment on table public.fax_view_rotations is
    'The rotation a fax''s pages are shown at (degrees clockwise), remembered per fax once an operator turned it (faxes arrive sideways and upside down): set only through admin_set_fax_rotation, audited. A table of its own: the received record''s rows never change for it.';

alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
alter table public.document_jobs_audit add constraint document_jobs_audit_action_check
    check (action = any (array['retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'reconcile', 'prepare', 'rotate']));
comment on column public.document_jobs_audit.filter is
    'A bulk action''s filter, as the database normalized it; for a rotation, the fax and the rotation before and after ({"fax_received_email_id", "from", "to"}).';

-- Turns a fax's pages (every document of it) for everyone who opens it, audited: {"changed",
-- "rotation"}; changed false when it was already at that rotation. Admins only, as every action.
create function public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_before int;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin']);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    perform document_jobs_internal.require(p_rotation in (0, 90, 180, 270), 'p_rotation must be 0, 90, 180 or 270');
    perform 1 from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    select r.rotation into v_before from public.fax_view_rotations r where r.fax_received_email_id = p_fax_id
       for update;
    if coalesce(v_before, 0) = p_rotation then
        return jsonb_build_object('changed', false, 'rotation', p_rotation);
    end if;
    insert into public.fax_view_rotations (fax_received_email_id, rotation, set_by)
    values (p_fax_id, p_rotation, p_actor_id)
    on conflict (fax_received_email_id) do update set rotation = excluded.rotation, set_by = excluded.set_by,
                                                      set_at = now();
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'rotate',
            jsonb_build_object('fax_received_email_id', p_fax_id, 'from', coalesce(v_before, 0), 'to', p_rotation), 0);
    return jsonb_build_object('changed', true, 'rotation', p_rotation);
end;
$$;
comment on function public.admin_set_fax_rotation(uuid, text, uuid, int) is
    'Remembers the rotation a fax is shown at (0, 90, 180 or 270 degrees clockwise) and audits it (action rotate, the rotation before and after); the actor must be an admin of Supabase Auth now (acting_operator). {"changed", "rotation"}; P0002 for no such fax.';
revoke all on function public.admin_set_fax_rotation(uuid, text, uuid, int) from public, anon, authenticated;
grant execute on function public.admin_set_fax_rotation(uuid, text, uuid, int) to service_role;

-- -- the list ----------------------------------------------------------------------------------

-- A filter of the inbox, checked and normalized: {"received_from", "received_to", "sender",
-- "number", "line", "q"}, every key optional, anything else refused (22023). "sender" is text of
-- the From line or the subject; "number" the digits of a number or of its start (the screen
-- makes a typed number digits: lib/fax/senders.py search_digits); "line" a line's address.
create function document_jobs_internal.faxes_filter(p_filter jsonb)
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
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q)',
                   to_jsonb(v_key)));
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
    if p_filter ? 'number' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'number') = 'string' and (p_filter ->> 'number') ~ '^[0-9]{1,20}$',
            'p_filter.number must be 1 to 20 ASCII digits');
        v_filter := v_filter || jsonb_build_object('number', p_filter ->> 'number');
    end if;
    return v_filter;
end;
$$;
revoke all on function document_jobs_internal.faxes_filter(jsonb) from public;
comment on function document_jobs_internal.faxes_filter(jsonb) is
    'The inbox''s filter, checked and normalized: {"received_from", "received_to", "sender", "number", "line", "q"}, every key optional; anything else is refused with 22023 naming the key.';

-- A normalized filter's conditions as SQL over an e-mail row "e", the time range excepted (the
-- walk bounds the index range with it): the sender's text in the From line or the subject, the
-- number's digits, the line, the search term (the e-mail's id, the provider's id, or text of the
-- From line or the subject). "true" when there are none.
create function document_jobs_internal.faxes_match_sql(p_filter jsonb)
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
            p_filter ->> 'q', document_jobs_internal.like_pattern(p_filter ->> 'q')) end)
$$;
revoke all on function document_jobs_internal.faxes_match_sql(jsonb) from public;

create function document_jobs_internal.faxes_time_sql(p_filter jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
    select concat_ws(' and ', 'true',
        case when p_filter ? 'received_from' then format('coalesce(e.received_at, e.created_at) >= %L::timestamptz',
                                                         p_filter ->> 'received_from') end,
        case when p_filter ? 'received_to' then format('coalesce(e.received_at, e.created_at) < %L::timestamptz',
                                                       p_filter ->> 'received_to') end)
$$;
revoke all on function document_jobs_internal.faxes_time_sql(jsonb) from public;

-- The e-mails that may match a filter, found through its indexes, at most p_limit of them (p_limit
-- means "maybe more"), or null when no index can answer (a term shorter than three characters):
-- by number, the digits' trigram index; by sender or search term, the distinct senders, the
-- subjects' trigram index and the provider's id (emails_matching); an id as itself.
create function document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit int)
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
    return null;
end;
$$;
revoke all on function document_jobs_internal.faxes_candidates(jsonb, int) from public;

-- How a fax stands, from its jobs as far as they are kept: "storing" is "fetching" while its
-- fetch_email job is queued or running, "failed" when the last one failed (with its code), and
-- "stored" otherwise: completed, or no job left, which only the purge of completed jobs leaves.
-- "preparing" while its prepare_fax job is live. "job_id" is the fetch job shown (the live one, or
-- the last), for an admin's link.
-- PL/pgSQL rather than SQL, here and in fax_summary: a SQL function that is not inlined plans its
-- statement on every call, a few milliseconds a fax of the page (make bench); PL/pgSQL keeps its plans.
create function document_jobs_internal.fax_storing(p_email_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
    with fetch_job as (
        select f.id, f.status, f.last_error_code
          from (select j.id, j.status, j.last_error_code, 0 as rank, j.created_at from public.document_jobs j
                 where j.kind = 'fetch_email' and j.fax_received_email_id = p_email_id
                   and j.status in ('queued', 'running')
                union all
                (select j.id, j.status, j.last_error_code, 1, j.created_at from public.document_jobs j
                  where j.fax_received_email_id = p_email_id and j.status in ('completed', 'failed')
                    and j.kind = 'fetch_email'
                  order by j.created_at desc limit 1)) f
         order by f.rank, f.created_at desc
         limit 1
    )
    select jsonb_build_object(
        'storing', coalesce((select case f.status when 'failed' then 'failed' when 'completed' then 'stored'
                                                  else 'fetching' end from fetch_job f), 'stored'),
        'error_code', (select f.last_error_code from fetch_job f where f.status = 'failed'),
        'job_id', (select f.id from fetch_job f),
        'preparing', exists (select 1 from public.document_jobs j
                              where j.kind = 'prepare_fax' and j.fax_received_email_id = p_email_id
                                and j.status in ('queued', 'running'))));
end;
$$;
revoke all on function document_jobs_internal.fax_storing(uuid) from public;

-- A fax as the inbox lists it: the e-mail's facts, the line that received it, its pages (those of
-- its attachments' views that were derived from the stored bytes), its page-1 thumbnail (the key
-- in its bucket: the screen signs it), the code of a view that could not be made, and how it stands.
create function document_jobs_internal.fax_summary(p_email public.fax_received_emails)
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
        || document_jobs_internal.fax_storing(p_email.id);
end;
$$;
revoke all on function document_jobs_internal.fax_summary(public.fax_received_emails) from public;

-- A page of the inbox: {"faxes": [...], "next": {"received_at", "id"} or null, "count",
-- "count_capped", "partial", "searched_until", "filter", "own_numbers"}. Pages follow (received,
-- id) descending, after p_after_received_at/p_after_id (both or neither).
--
-- With no condition but the time, the page is a range of fax_received_emails_inbox. Otherwise the
-- newest 2,000 e-mails of the time range (after the cursor) are walked and checked one by one (a
-- number goes to its index first): a common sender or term fills a page there. When they hold less
-- than a page, a filter that an index can answer (a number of three digits or more, a sender or a
-- term of three characters or more, an id) is looked up there if it names 5,000 e-mails or fewer,
-- and the page and its exact count come from those; else the page holds what the walk found,
-- "partial" says it is not full and more may be older, "searched_until" how far back it looked,
-- and "next" continues from there. "count" (first page only) is exact up to 10,000 for a time range alone and for an
-- index's answer, else null. "own_numbers": the lines' own numbers, which the screen never shows
-- as a sender's (lib/screen/calls.py).
create function public.document_jobs_admin_faxes(
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
    v_filter jsonb := document_jobs_internal.faxes_filter(p_filter);
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

    if v_match = 'true' then
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
    'A page of the inbox: one row per received e-mail (a fax), newest first by its received time, for as long as the e-mail row is kept, whatever became of its jobs; filters by received time, sender text, number digits, line and search term (faxes_filter); keyset pages after p_after_received_at/p_after_id; "partial" when a walk of 2,000 e-mails ended short of a page; "lines" the office''s lines (their own numbers are never shown as a sender''s).';

-- One fax for its page: the list's facts, the e-mail's (To, Cc, ids, how it was found), its
-- attachments in their order with their views (keys in their bucket: the screen signs them), the
-- rotation it is read at, its jobs as they are kept (the admin's links), and the lines' own numbers
-- (never shown as a sender's); null for no such fax.
create function public.document_jobs_admin_fax(p_fax_id uuid)
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
                                  where l.number is not null), '[]'));
end;
$$;
comment on function public.document_jobs_admin_fax(uuid) is
    'One fax for its page: its summary as the inbox lists it, its To, Cc, ids and how it was found (found_by, reconciled_at), its attachments in order with their views, the rotation it is read at, and its jobs as far as they are kept; null for no such fax.';

create function public.document_jobs_operator_faxes(
    p_user_id uuid,
    p_session_id uuid,
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
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_faxes(p_filter, p_after_received_at, p_after_id, p_limit);
end;
$$;
comment on function public.document_jobs_operator_faxes(uuid, uuid, jsonb, timestamptz, uuid, int) is
    'document_jobs_admin_faxes for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';

create function public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_fax(p_fax_id);
end;
$$;
comment on function public.document_jobs_operator_fax(uuid, uuid, uuid) is
    'document_jobs_admin_fax for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';

revoke all on function
    public.document_jobs_admin_faxes(jsonb, timestamptz, uuid, int),
    public.document_jobs_admin_fax(uuid),
    public.document_jobs_operator_faxes(uuid, uuid, jsonb, timestamptz, uuid, int),
    public.document_jobs_operator_fax(uuid, uuid, uuid)
from public, anon, authenticated;
grant execute on function
    public.document_jobs_admin_faxes(jsonb, timestamptz, uuid, int),
    public.document_jobs_admin_fax(uuid),
    public.document_jobs_operator_faxes(uuid, uuid, jsonb, timestamptz, uuid, int),
    public.document_jobs_operator_fax(uuid, uuid, uuid)
to service_role;
