-- The admin screen's smaller findings (issue 31): what the clients' roles hold, cancelled jobs in a
-- bulk retry, and the ids people see.

-- The audit's identity sequence: 20261201004100 revoked the table, but Supabase's default
-- privileges had given anon and authenticated ALL on the sequence it made (USAGE, SELECT, UPDATE:
-- they could read and move the audit's ids). Nothing uses it but the table's own default, under
-- the owner. supabase/tests/015_no_client_grants.sql checks every object of both schemas.
revoke all on sequence public.document_jobs_audit_id_seq from public, anon, authenticated, service_role;

-- A bulk retry leaves the jobs an admin cancelled out (a cancel is stored as failed with code
-- cancelled), unless its filter names the error code cancelled; the answer says so
-- ("cancelled_left_out"). The screen's and the CLI's bulk retry both count here. Otherwise as in
-- 20261201004300.
create or replace function public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text DEFAULT NULL::text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_max_jobs constant int := 50000;
    v_filter jsonb := document_jobs_internal.job_filter(p_filter);
    v_states jsonb;
    v_id uuid;
    v_count int := 0;
    -- A cancel is stored as failed with code cancelled: an admin stopped that job on purpose, and
    -- "retry every failed job" must not start it again; a filter that names an error code matches only that
    -- code's jobs, so cancelled ones only when it names cancelled.
    v_leaves_cancelled boolean := p_action = 'retry' and not v_filter ? 'error_code';
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
             select %L::uuid, j.id from public.document_jobs j where %s and %s limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter || jsonb_build_object('states', v_states)),
            case when v_leaves_cancelled then 'j.last_error_code is distinct from ''cancelled''' else 'true' end,
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
        'cancelled_left_out', v_leaves_cancelled,
        'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;

comment on function public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) IS 'Counts the jobs a filter (job_filter) matches that the action can change (retry: failed ones, but not those an admin cancelled, failed with code cancelled, unless the filter names that code; cancel: queued and running ones) and keeps their ids: a snapshot, so the action applies to exactly the jobs the operator confirmed, never to the filter run again. At most 50,000 at once: more is refused with 22023 (narrow the filter and count again). Answers {"bulk_action_id", "action", "job_count", "states", "filter", "cancelled_left_out", "prepared_at", "expires_at"}: apply it within 15 minutes, or count again.';

-- The ids people see work everywhere: the list's 8-character id, or any prefix of at least 6 hex
-- characters of a job's id, an e-mail row's id or the provider's e-mail id (case and hyphens do
-- not matter), finds its jobs in the screen's search and in every CLI command that takes an id.
-- Each id is indexed as the text a prefix is compared with (lower case, no hyphens); a prefix is a
-- range of that text, [prefix, the prefix with its last character's successor), which a b-tree
-- with text_pattern_ops (byte order, so the range is the prefix's whatever the collation) serves
-- as one short index range scan at any table size (supabase/tests/016_id_prefix.sql, EXPLAIN).
create index document_jobs_by_id_text
    on public.document_jobs ((replace(id::text, '-', '')) text_pattern_ops);
create index fax_received_emails_by_id_text
    on public.fax_received_emails ((replace(id::text, '-', '')) text_pattern_ops);
create index fax_received_emails_by_provider_id_text
    on public.fax_received_emails ((lower(replace(provider_email_id, '-', ''))) text_pattern_ops);

create function document_jobs_internal.id_prefix(p_text text)
returns text
language sql
immutable
set search_path = ''
as $$
    select case when v ~ '^[0-9a-f]{6,32}$' then v end
      from (select lower(replace(btrim(p_text), '-', '')) v) s
$$;
comment on function document_jobs_internal.id_prefix(p_text text) is
    'A term as an id prefix: lower case, without hyphens, when it is 6 to 32 hex characters then; else null.';

-- The jobs an id prefix names, and what it matched; at most p_limit of each kind of match.
create function document_jobs_internal.jobs_with_id_prefix(p_prefix text, p_limit int)
returns table (job_id uuid, matched text)
language sql
stable
set search_path = ''
as $$
    with bounds (low, high) as (
        select p_prefix, left(p_prefix, -1) || chr(ascii(right(p_prefix, 1)) + 1) where p_prefix is not null
    )
    (select j.id, 'job_id' from bounds b, public.document_jobs j
      where replace(j.id::text, '-', '') ~>=~ b.low and replace(j.id::text, '-', '') ~<~ b.high limit p_limit)
    union all
    (select j.id, 'email_id' from bounds b, public.fax_received_emails e
       join public.document_jobs j on j.fax_received_email_id = e.id
      where replace(e.id::text, '-', '') ~>=~ b.low and replace(e.id::text, '-', '') ~<~ b.high limit p_limit)
    union all
    (select j.id, 'provider_email_id' from bounds b, public.fax_received_emails e
       join public.document_jobs j on j.fax_received_email_id = e.id
      where lower(replace(e.provider_email_id, '-', '')) ~>=~ b.low
        and lower(replace(e.provider_email_id, '-', '')) ~<~ b.high limit p_limit)
$$;
comment on function document_jobs_internal.jobs_with_id_prefix(p_prefix text, p_limit integer) is
    'The jobs whose id, e-mail row id or provider''s e-mail id starts with p_prefix (an id_prefix), and which of the three matched: at most p_limit per kind, each one range scan of its text index (document_jobs_by_id_text, fax_received_emails_by_id_text, fax_received_emails_by_provider_id_text). A null prefix matches nothing.';

-- The screen's search: as in 20261201007000, and the e-mails of the jobs an id prefix names.
create or replace function document_jobs_internal.emails_matching(p_q text, p_limit int)
returns uuid[]
language plpgsql
stable
set search_path = ''
as $$
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
             union
             (select j.fax_received_email_id
                from document_jobs_internal.jobs_with_id_prefix(%4$L, %1$s) p
                join public.document_jobs j on j.id = p.job_id
               where j.fax_received_email_id is not null)
             limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_q), p_q, document_jobs_internal.id_prefix(p_q))
       into v_emails;
    return v_emails;
end;
$$;
comment on function document_jobs_internal.emails_matching(p_q text, p_limit integer) is
    'The e-mails whose sender or subject holds the term, whose provider''s id is the term, or (an id prefix of 6 or more hex characters) whose jobs jobs_with_id_prefix names: at most p_limit of them (p_limit means "maybe more"). The senders come from email_senders and their e-mails from the hash index, the subjects from their trigram index (which needs three characters of the term), the ids from their text indexes, each part''s read stopping at p_limit. The term goes into the statement as a literal, so that the planner sees the pattern (and its trigrams) it plans for.';

-- The CLI's id: the job a full id or a prefix names.
create function public.document_jobs_find_by_id(p_id text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    c_limit constant int := 20;
    v_prefix text := document_jobs_internal.id_prefix(p_id);
    v_found jsonb;
begin
    perform document_jobs_internal.require(v_prefix is not null,
        'an id is at least 6 hex characters of a job id, an e-mail id or the provider''s e-mail id');
    select coalesce(jsonb_agg(jsonb_build_object('id', j.id, 'status', j.status, 'kind', j.kind,
                                                 'created_at', j.created_at, 'matched', m.matched)
                              order by j.created_at desc, j.id desc), '[]')
      into v_found
      from (select p.job_id, jsonb_agg(distinct p.matched) matched
              from document_jobs_internal.jobs_with_id_prefix(v_prefix, c_limit + 1) p group by p.job_id) m
      join public.document_jobs j on j.id = m.job_id;
    return jsonb_build_object('jobs', (select coalesce(jsonb_agg(x), '[]')
                                         from (select x from jsonb_array_elements(v_found) x limit c_limit) s),
                              'more', jsonb_array_length(v_found) > c_limit, 'prefix', v_prefix);
end;
$$;
comment on function public.document_jobs_find_by_id(p_id text) is
    'The jobs an id names, for the admin CLI: p_id is a job id, an e-mail row id or the provider''s e-mail id, whole or any prefix of at least 6 hex characters (case and hyphens do not matter; else 22023). Answers {"jobs": [{"id", "status", "kind", "created_at", "matched": ["job_id" | "email_id" | "provider_email_id", ...]}], newest first, at most 20, "more", "prefix"}: one job is the one meant, several must be told apart by the operator.';
revoke all on function public.document_jobs_find_by_id(text) from public, anon, authenticated;
grant execute on function public.document_jobs_find_by_id(text) to service_role;
revoke all on function document_jobs_internal.id_prefix(text) from public, anon, authenticated, service_role;
revoke all on function document_jobs_internal.jobs_with_id_prefix(text, int) from public, anon, authenticated, service_role;

-- The walk's check, job by job, as in 20261201007000, and an id prefix: the job's id, its e-mail's
-- id or the provider's e-mail id starting with it (a walk that reads every job there is answers
-- the search alone, so it must match what the index lookup would).
create or replace function document_jobs_internal.job_search_sql(p_q text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_is_uuid boolean := p_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
    v_prefix text := document_jobs_internal.id_prefix(p_q);
begin
    return format(
        '(%s %s exists (select 1 from public.fax_received_emails e where e.id = j.fax_received_email_id'
        ' and (e.provider_email_id = %L or %s %s)))',
        case when v_is_uuid then format('j.id = %L::uuid or j.fax_received_email_id = %L::uuid or', p_q, p_q) else '' end,
        case when v_prefix is not null then format(
            'replace(j.id::text, ''-'', '''') like %1$L or replace(j.fax_received_email_id::text, ''-'', '''') like %1$L or',
            v_prefix || '%') else '' end,
        p_q,
        case when v_prefix is not null then format(
            'lower(replace(e.provider_email_id, ''-'', '''')) like %L or', v_prefix || '%') else '' end,
        document_jobs_internal.email_matches_sql('e', p_q));
end;
$$;
comment on function document_jobs_internal.job_search_sql(p_q text) is
    'A normalized filter''s search term as SQL over a job row "j": the job''s id or its e-mail''s id (when the term is a UUID), an id prefix (id_prefix: the job''s id, its e-mail''s id or the provider''s e-mail id starting with it), the provider''s e-mail id, or the term anywhere in the sender or the subject.';
