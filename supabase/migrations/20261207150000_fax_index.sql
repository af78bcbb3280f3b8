-- A fax's index fields, which the Electronic Bookkeeping Act's search asks for (取引年月日,
-- 取引金額, 取引先) and the document's kind (書類の種類), entered by a clerk on the fax's page, and
-- every change of them kept in an append-only history (the value before and after, who, when, why):
-- the correction record the law's 真実性 asks of a system that allows a correction.
--
-- One set per fax (the e-mail). A fax-to-mail transmission is one sender's one sending, which is
-- one document in the offices this serves (an order, an invoice and its cover page); a fax that
-- carries several documents is indexed by the one it is filed as, and its history says so in a
-- reason. The received record's rows (fax_received_emails, its attachments) are never written
-- here: the index lives in a table of its own, and the received time it is searched and listed by
-- is copied into it when the first entry is made (it never changes in the record).
--
-- Writes go only through set_fax_index, a security definer function that checks its actor in
-- Auth's row as every action does (acting_operator: an admin or a clerk, not deleted, not banned),
-- takes a reason, and requires one when a value already entered is changed or removed (filling
-- in an empty field, e.g. the amount of a 納品書 that had none, is not a correction).

-- The kinds of document a fax is filed as, in the order the screen offers them.
create function document_jobs_internal.fax_document_types()
returns text[]
language sql
immutable
parallel safe
set search_path = ''
as $$
    select array['請求書', '注文書', '納品書', '見積書', '契約書', '領収書', 'その他']
$$;
revoke all on function document_jobs_internal.fax_document_types() from public;
comment on function document_jobs_internal.fax_document_types() is
    'The kinds of document a fax is filed as (書類の種類), in the order the screen offers them: what fax_index.doc_type and the search accept.';

-- Text folded for the counterparty search: NFKC (full-width letters and digits made ASCII,
-- half-width katakana made full-width, ㈱ made (株)), katakana made hiragana, white space dropped,
-- lower case; so 「ヤマダ商事」, 「やまだ 商事」 and 「ﾔﾏﾀﾞ商事」 are the same text. Immutable, for
-- the expression index fax_index_counterparty.
create function document_jobs_internal.kana_fold(p_text text)
returns text
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
    select lower(regexp_replace(
        translate(normalize(p_text, nfkc),
                  'ァアィイゥウェエォオカガキギクグケゲコゴサザシジスズセゼソゾタダチヂッツヅテデトドナニヌネノハバパヒビピフブプヘベペホボポマミムメモャヤュユョヨラリルレロヮワヰヱヲンヴヵヶ',
                  'ぁあぃいぅうぇえぉおかがきぎくぐけげこごさざしじすずせぜそぞただちぢっつづてでとどなにぬねのはばぱひびぴふぶぷへべぺほぼぽまみむめもゃやゅゆょよらりるれろゎわゐゑをんゔゕゖ'),
        '\s+', '', 'g'))
$$;
revoke all on function document_jobs_internal.kana_fold(text) from public;
comment on function document_jobs_internal.kana_fold(text) is
    'Text as the counterparty search compares it: NFKC, katakana made hiragana, white space dropped, lower case.';

-- The characters and pairs of characters of a folded text, for the counterparty index: pg_trgm
-- needs three characters of a term to use its index, and a Japanese name is often searched by two
-- (山田); a GIN index of the pairs (and the single characters, for a one-character term) answers
-- any partial match, which LIKE then confirms.
create function document_jobs_internal.text_grams(p_text text)
returns text[]
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
    select array(select distinct g from (
        select substr(p_text, i, 1) g from generate_series(1, length(p_text)) i
        union all
        select substr(p_text, i, 2) from generate_series(1, length(p_text) - 1) i) s)
$$;
revoke all on function document_jobs_internal.text_grams(text) from public;
comment on function document_jobs_internal.text_grams(text) is
    'The single characters and the pairs of adjacent characters of a text (distinct): what fax_index_counterparty indexes.';

-- The grams a search term must all have: its pairs, or the character itself for one character.
create function document_jobs_internal.term_grams(p_term text)
returns text[]
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
    select case when length(p_term) = 1 then array[p_term]
                else array(select distinct substr(p_term, i, 2) from generate_series(1, length(p_term) - 1) i) end
$$;
revoke all on function document_jobs_internal.term_grams(text) from public;
comment on function document_jobs_internal.term_grams(text) is
    'The grams a folded search term''s matches all hold (its pairs, or itself for one character): what the counterparty search asks fax_index_counterparty for before LIKE confirms.';

create table public.fax_index (
    fax_received_email_id uuid primary key references public.fax_received_emails (id),
    -- The fax's received time as the inbox orders it (coalesce(received_at, created_at)), copied
    -- at the first entry: the search lists faxes newest first from this table's own indexes.
    received timestamptz not null,
    transaction_date date,
    amount bigint,
    counterparty text,
    doc_type text,
    -- The counterparty as its search compares it (kana_fold), kept beside it: a walk of the newest
    -- faxes compares it without folding each row's text again.
    counterparty_folded text generated always as (document_jobs_internal.kana_fold(counterparty)) stored,
    version int not null default 1,
    updated_by uuid not null,
    updated_at timestamptz not null default now(),
    constraint fax_index_transaction_date check (transaction_date between date '1950-01-01' and date '2099-12-31'),
    constraint fax_index_amount check (amount between 0 and 999999999999),
    constraint fax_index_counterparty check (length(counterparty) between 1 and 200 and counterparty !~ '[[:cntrl:]]'
                                             and counterparty = btrim(counterparty)),
    constraint fax_index_doc_type check (doc_type = any (document_jobs_internal.fax_document_types()))
);
alter table public.fax_index enable row level security;
revoke all on table public.fax_index from public, anon, authenticated, service_role;
grant select on table public.fax_index to service_role;
comment on table public.fax_index is
    'A fax''s index fields for the Electronic Bookkeeping Act''s search: 取引年月日 (transaction_date), 取引金額 (amount, yen, optional), 取引先 (counterparty) and 書類の種類 (doc_type), one row per fax (the e-mail). Not the record: it changes, but only through set_fax_index, and every change is kept in fax_index_history.';
comment on column public.fax_index.counterparty_folded is
    'The counterparty folded as its search compares it (kana_fold: NFKC, katakana as hiragana, no white space, lower case); generated.';
comment on column public.fax_index.version is
    'How many times the fields were set: the screen sends the version it showed, and a write made since is not overwritten.';

-- Newest first, as the inbox lists: a broad search is a walk of this index.
create index fax_index_received on public.fax_index (received desc, fax_received_email_id desc);
create index fax_index_transaction_date on public.fax_index (transaction_date, received desc);
create index fax_index_amount on public.fax_index (amount, received desc);
create index fax_index_doc_type on public.fax_index (doc_type, received desc, fax_received_email_id desc);
create index fax_index_counterparty on public.fax_index using gin (document_jobs_internal.text_grams(counterparty_folded));

create table public.fax_index_history (
    id bigint generated always as identity primary key,
    fax_received_email_id uuid not null references public.fax_received_emails (id),
    at timestamptz not null default now(),
    actor_id uuid not null,
    actor_email text,
    -- The four fields before (null for the first entry) and after: {"transaction_date", "amount",
    -- "counterparty", "doc_type"}, each null when empty.
    before jsonb,
    after jsonb not null,
    reason text,
    version int not null,
    constraint fax_index_history_reason check (length(reason) between 1 and 500)
);
create index fax_index_history_fax on public.fax_index_history (fax_received_email_id, id);
comment on sequence public.fax_index_history_id_seq is
    'The identity of fax_index_history.id: the order of a fax''s changes, which its page lists them in.';
alter table public.fax_index_history enable row level security;
revoke all on table public.fax_index_history from public, anon, authenticated, service_role;
grant select on table public.fax_index_history to service_role;
comment on table public.fax_index_history is
    'Every change of a fax''s index fields, appended by set_fax_index and never changed or deleted (triggers refuse UPDATE and DELETE to every role): the fields before and after, who (the operator''s id and e-mail), when, why (required for a correction of a value entered before) and the version it made.';

create function document_jobs_internal.refuse_fax_index_history_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using errcode = '42501', hint = 'append_only',
        message = 'fax_index_history is append-only: a correction of a fax''s index is a new entry (set_fax_index), never a change of an old one';
end;
$$;
revoke all on function document_jobs_internal.refuse_fax_index_history_change() from public;
comment on function document_jobs_internal.refuse_fax_index_history_change() is
    'The trigger that keeps fax_index_history append-only: any UPDATE or DELETE of it fails (42501, hint append_only), whoever runs it.';
create trigger fax_index_history_append_only
    before update or delete on public.fax_index_history
    for each row execute function document_jobs_internal.refuse_fax_index_history_change();

-- The audit lists an index change too (action "index"): the audit's actions as they are now, and
-- "index" (read from the constraint, so that an action another change added stays).
do $$
declare
    v_actions text[];
begin
    select array(select distinct m[1] from pg_constraint c,
                 regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') m
                  where c.conrelid = 'public.document_jobs_audit'::regclass
                    and c.conname = 'document_jobs_audit_action_check' order by 1)
      into v_actions;
    if not 'rotate' = any (v_actions) then
        raise exception 'document_jobs_audit_action_check does not read as expected: %', v_actions;
    end if;
    alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
    -- Written as the earlier migrations write it (array['retry', ...]), which the next change reads.
    execute format('alter table public.document_jobs_audit add constraint document_jobs_audit_action_check'
                   ' check (action = any (array[%s]))',
                   (select string_agg(quote_literal(a), ', ')
                      from unnest(array_append(array_remove(v_actions, 'index'), 'index')) a));
end;
$$;

-- The fields of an index entry, checked and normalized: {"transaction_date": "YYYY-MM-DD",
-- "amount": whole yen, "counterparty": text, "doc_type": one of fax_document_types()}, each
-- optional or null (empty text is null); anything else refused with 22023.
create function document_jobs_internal.fax_index_values(p_values jsonb)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_key text;
    v_date date;
    v_amount numeric;
    v_text text;
    v_type text;
begin
    perform document_jobs_internal.require(p_values is not null and jsonb_typeof(p_values) = 'object',
                                           'p_values must be a JSON object');
    for v_key in select jsonb_object_keys(p_values) loop
        perform document_jobs_internal.require(
            v_key = any (array['transaction_date', 'amount', 'counterparty', 'doc_type']),
            format('p_values has an unknown key %s (known: transaction_date, amount, counterparty, doc_type)',
                   to_jsonb(v_key)));
    end loop;
    if jsonb_typeof(p_values -> 'transaction_date') is distinct from 'null'
       and nullif(p_values ->> 'transaction_date', '') is not null then
        perform document_jobs_internal.require(
            jsonb_typeof(p_values -> 'transaction_date') = 'string'
            and (p_values ->> 'transaction_date') ~ '^\d{4}-\d{2}-\d{2}$',
            'transaction_date must be a date, YYYY-MM-DD');
        begin
            v_date := (p_values ->> 'transaction_date')::date;
        exception
            when datetime_field_overflow or invalid_datetime_format then
                raise exception using errcode = '22023', message = 'transaction_date must be a date, YYYY-MM-DD';
        end;
        perform document_jobs_internal.require(v_date between date '1950-01-01' and date '2099-12-31',
                                               'transaction_date must be between 1950-01-01 and 2099-12-31');
    end if;
    if jsonb_typeof(p_values -> 'amount') is distinct from 'null' and p_values ? 'amount' then
        perform document_jobs_internal.require(jsonb_typeof(p_values -> 'amount') = 'number',
                                               'amount must be a number of yen');
        v_amount := (p_values ->> 'amount')::numeric;
        perform document_jobs_internal.require(v_amount = trunc(v_amount) and v_amount between 0 and 999999999999,
                                               'amount must be whole yen, 0 to 999,999,999,999');
    end if;
    if jsonb_typeof(p_values -> 'counterparty') is distinct from 'null' and p_values ? 'counterparty' then
        perform document_jobs_internal.require(jsonb_typeof(p_values -> 'counterparty') = 'string',
                                               'counterparty must be text');
        v_text := nullif(btrim(p_values ->> 'counterparty'), '');
        perform document_jobs_internal.require(
            v_text is null or (length(v_text) <= 200 and v_text !~ '[[:cntrl:]]'),
            'counterparty must be at most 200 characters, with no control characters');
    end if;
    if jsonb_typeof(p_values -> 'doc_type') is distinct from 'null' and nullif(p_values ->> 'doc_type', '') is not null
    then
        v_type := p_values ->> 'doc_type';
        perform document_jobs_internal.require(v_type = any (document_jobs_internal.fax_document_types()),
            format('doc_type must be one of %s', array_to_string(document_jobs_internal.fax_document_types(), ', ')));
    end if;
    return jsonb_build_object('transaction_date', v_date, 'amount', v_amount::bigint, 'counterparty', v_text,
                              'doc_type', v_type);
end;
$$;
revoke all on function document_jobs_internal.fax_index_values(jsonb) from public;
comment on function document_jobs_internal.fax_index_values(jsonb) is
    'A fax''s index fields as set_fax_index takes them, checked and normalized to all four keys (transaction_date, amount, counterparty, doc_type; null for empty); 22023 naming the field otherwise.';

create function document_jobs_internal.fax_index_json(p_index public.fax_index)
returns jsonb
language sql
immutable
set search_path = ''
as $$
    select case when p_index.fax_received_email_id is not null then jsonb_build_object(
        'transaction_date', p_index.transaction_date, 'amount', p_index.amount,
        'counterparty', p_index.counterparty, 'doc_type', p_index.doc_type) end
$$;
revoke all on function document_jobs_internal.fax_index_json(public.fax_index) from public;
comment on function document_jobs_internal.fax_index_json(public.fax_index) is
    'A fax_index row''s four fields as JSON, as the history and the reads give them; null for no row.';

-- Sets a fax's index fields (all four: a field left out or null is empty), kept in the history
-- with the fields before and after, the actor and the reason. A correction (a field that had a
-- value changes or is emptied) needs a reason (22023, hint reason_required); the first entry, or
-- filling in an empty field, may have none. p_version, the version the operator saw (0 for none):
-- when the fields were set since, nothing changes ("index_changed"). Answers {"changed",
-- "reason"?, "index", "version"}.
create function public.set_fax_index(
    p_actor_id uuid,
    p_actor_email text,
    p_fax_id uuid,
    p_values jsonb,
    p_reason text default null,
    p_version int default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_after jsonb;
    v_before jsonb;
    v_row public.fax_index;
    v_received timestamptz;
    v_reason text := nullif(btrim(p_reason), '');
    v_corrected text[];
    v_version int;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    perform document_jobs_internal.require(
        v_reason is null or (length(v_reason) <= 500 and v_reason !~ '[\x01-\x09\x0b-\x1f\x7f]'),
        'p_reason must be at most 500 characters, with no control characters but line breaks');
    v_after := document_jobs_internal.fax_index_values(p_values);
    select coalesce(e.received_at, e.created_at) into v_received
      from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    -- One writer of a fax's index at a time: the first entry has no row to lock.
    perform pg_advisory_xact_lock(hashtextextended('fax_index:' || p_fax_id::text, 0));
    select * into v_row from public.fax_index i where i.fax_received_email_id = p_fax_id;
    v_before := document_jobs_internal.fax_index_json(v_row);
    v_version := coalesce(v_row.version, 0);
    if p_version is not null and p_version <> v_version then
        return jsonb_build_object('changed', false, 'reason', 'index_changed', 'index', v_before,
                                  'version', v_version);
    end if;
    if v_after = coalesce(v_before, '{"transaction_date": null, "amount": null, "counterparty": null, "doc_type": null}') then
        return jsonb_build_object('changed', false, 'reason', 'unchanged', 'index', v_before, 'version', v_version);
    end if;
    v_corrected := array(select b.key from jsonb_each(coalesce(v_before, '{}')) b
                          where b.value <> 'null'::jsonb and b.value is distinct from v_after -> b.key
                          order by b.key);
    if cardinality(v_corrected) > 0 and v_reason is null then
        raise exception using errcode = '22023', hint = 'reason_required',
            message = format('a correction of %s needs a reason: the history keeps why a value entered before was changed',
                             array_to_string(v_corrected, ', '));
    end if;
    insert into public.fax_index as i (fax_received_email_id, received, transaction_date, amount, counterparty,
                                       doc_type, version, updated_by)
    values (p_fax_id, v_received, (v_after ->> 'transaction_date')::date, (v_after ->> 'amount')::bigint,
            v_after ->> 'counterparty', v_after ->> 'doc_type', 1, p_actor_id)
    on conflict (fax_received_email_id) do update
       set transaction_date = excluded.transaction_date, amount = excluded.amount,
           counterparty = excluded.counterparty, doc_type = excluded.doc_type, version = i.version + 1,
           updated_by = excluded.updated_by, updated_at = now()
    returning * into v_row;
    insert into public.fax_index_history (fax_received_email_id, actor_id, actor_email, before, after, reason, version)
    values (p_fax_id, p_actor_id, p_actor_email, v_before, v_after, v_reason, v_row.version);
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason)
    values (p_actor_id, p_actor_email, 'index',
            jsonb_build_object('fax_received_email_id', p_fax_id, 'corrected', to_jsonb(v_corrected)), 0, v_reason);
    return jsonb_build_object('changed', true, 'index', v_after, 'version', v_row.version);
end;
$$;
comment on function public.set_fax_index(uuid, text, uuid, jsonb, text, int) is
    'Sets a fax''s index fields ({"transaction_date", "amount", "counterparty", "doc_type"}: the four as they are to be, a missing or null one empty) by an admin or a clerk of Supabase Auth (checked in this call: acting_operator; a viewer is refused, 42501 role_not_allowed). A change of a value entered before needs p_reason (22023, hint reason_required); every change is appended to fax_index_history (before, after, who, when, why) and audited (action index). p_version: the version the operator saw (0 for none); a write made since wins ("index_changed"). {"changed", "reason"?, "index", "version"}; 22023 for a bad value, P0002 for no such fax.';
revoke all on function public.set_fax_index(uuid, text, uuid, jsonb, text, int) from public, anon, authenticated;
grant execute on function public.set_fax_index(uuid, text, uuid, jsonb, text, int) to service_role;

-- A fax's index and its history, newest change last, for its page (at most 500 changes; a fax
-- corrected more often than that shows its latest 500 and says so).
create function document_jobs_internal.fax_index_read(p_fax_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_row public.fax_index;
begin
    select * into v_row from public.fax_index i where i.fax_received_email_id = p_fax_id;
    return jsonb_build_object(
        'index', document_jobs_internal.fax_index_json(v_row),
        'index_version', coalesce(v_row.version, 0),
        'index_history', coalesce((
            select jsonb_agg(jsonb_build_object('id', h.id, 'at', h.at, 'actor_id', h.actor_id,
                                                'actor_email', h.actor_email, 'before', h.before, 'after', h.after,
                                                'reason', h.reason, 'version', h.version) order by h.id)
              from (select * from public.fax_index_history h where h.fax_received_email_id = p_fax_id
                     order by h.id desc limit 500) h), '[]'),
        'index_history_total', (select count(*) from public.fax_index_history h
                                 where h.fax_received_email_id = p_fax_id),
        'document_types', to_jsonb(document_jobs_internal.fax_document_types()));
end;
$$;
revoke all on function document_jobs_internal.fax_index_read(uuid) from public;
comment on function document_jobs_internal.fax_index_read(uuid) is
    'A fax''s index for its page: its fields, their version, their history oldest first (the latest 500 changes) and its total, and the document types offered.';

-- The counterparties entered before for faxes from a number (its digits, as the inbox's search by
-- number reads them), the latest first: the page suggests them for a new fax from that number.
create function public.document_jobs_admin_counterparties(p_number text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.require(p_number ~ '^[0-9]{3,20}$', 'p_number must be 3 to 20 ASCII digits');
    return coalesce((
        select jsonb_agg(c.counterparty order by c.latest desc)
          from (select i.counterparty, max(i.received) latest
                  from (select e.id from public.fax_received_emails e
                         where document_jobs_internal.fax_number_digits(e.subject, e.from_address)
                               like '%' || p_number || '%'
                         order by coalesce(e.received_at, e.created_at) desc limit 200) e
                  join public.fax_index i on i.fax_received_email_id = e.id
                 where i.counterparty is not null
                 group by i.counterparty
                 order by max(i.received) desc limit 5) c), '[]');
end;
$$;
comment on function public.document_jobs_admin_counterparties(text) is
    'The counterparties (取引先) entered for the latest 200 faxes from a number (ASCII digits), at most 5, the latest first: what the fax''s page suggests.';

create function public.document_jobs_operator_counterparties(p_user_id uuid, p_session_id uuid, p_number text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'clerk', 'viewer']);
    return public.document_jobs_admin_counterparties(p_number);
end;
$$;
comment on function public.document_jobs_operator_counterparties(uuid, uuid, text) is
    'document_jobs_admin_counterparties for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
revoke all on function public.document_jobs_admin_counterparties(text),
    public.document_jobs_operator_counterparties(uuid, uuid, text) from public, anon, authenticated;
grant execute on function public.document_jobs_admin_counterparties(text),
    public.document_jobs_operator_counterparties(uuid, uuid, text) to service_role;
