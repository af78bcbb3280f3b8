-- The admin screen's text search, sender and subject apart (make bench, section "Admin screen").
--
-- One trigram index over sender and subject together (20261201004000) made a rare sender slow:
-- every sender of a Japanese fax inbox is some 株式会社, so a sender's name such as
-- 取引先0417株式会社 read the posting lists of 株式会 and 式会社, one entry per e-mail, to find its
-- thousand e-mails (about 95 ms of index scan on a million e-mails). Senders repeat: a fax inbox
-- hears from a few thousand senders, not a million. So the search looks for the term in the
-- distinct senders (a small table with its own trigram index, where 株式会 has one entry per
-- sender), and finds their e-mails by equality on the sender (a hash index); the subject keeps a
-- trigram index of its own, which no longer holds the senders' trigrams.
--
-- What matches does not change: the term anywhere in the sender or in the subject, ILIKE. The old
-- expression, sender || E'\n' || subject, matched exactly that, since a term holds no control
-- character (job_filter) and so no newline; supabase/tests/013_admin_search.sql compares the two
-- on a data set of its own.
--
-- What it costs the webhook: one probe of email_senders' unique index per recorded e-mail (a row
-- only for a sender not seen before), one hash entry instead of the sender's trigrams. A sender
-- stays in email_senders when its e-mails are deleted: a search then probes the hash index for it
-- and finds nothing.

-- Every sender (the From line as recorded) that an e-mail has or had. Unique by the SHA-256 of
-- the text: a b-tree over the text itself would refuse a From line longer than about 2,700 bytes,
-- and with it the e-mail. The text's bytes: convert_to() is only stable, so they come from the
-- text's cast to bytea, which reads a backslash as an escape; doubled, every backslash stands for
-- itself, and the bytes are the text's own (supabase/tests/013_admin_search.sql).
create table document_jobs_internal.email_senders (
    from_address text not null
);
create unique index email_senders_unique
    on document_jobs_internal.email_senders (sha256(replace(from_address, '\', '\\')::bytea));
create index email_senders_text_search
    on document_jobs_internal.email_senders using gin (from_address extensions.gin_trgm_ops);

create function document_jobs_internal.note_sender()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.from_address is not null then
        insert into document_jobs_internal.email_senders (from_address) values (new.from_address)
        on conflict do nothing;
    end if;
    return null;
end;
$$;

-- Created before the backfill: it waits for the inserts in flight and blocks new ones until this
-- migration commits, so no sender is missed between the two.
create trigger fax_received_emails_note_sender
    after insert or update of from_address on public.fax_received_emails
    for each row execute function document_jobs_internal.note_sender();

insert into document_jobs_internal.email_senders (from_address)
select distinct e.from_address from public.fax_received_emails e where e.from_address is not null
on conflict do nothing;

-- A sender's e-mails. Hash, not b-tree: it holds a hash of the text, so no From line is too long
-- for it.
create index fax_received_emails_by_sender on public.fax_received_emails using hash (from_address);

create index fax_received_emails_subject_search
    on public.fax_received_emails using gin (subject extensions.gin_trgm_ops);

drop index public.fax_received_emails_text_search;

-- The term anywhere in an e-mail row's sender or subject, as SQL over alias p_alias (the walk's
-- check, job by job).
drop function document_jobs_internal.job_search_sql(text);
drop function document_jobs_internal.email_text_sql(text);

create function document_jobs_internal.email_matches_sql(p_alias text, p_q text)
returns text
language sql
immutable
set search_path = ''
as $$
    select format('(%1$s.from_address ilike %2$L or %1$s.subject ilike %2$L)', p_alias,
                  document_jobs_internal.like_pattern(p_q))
$$;

-- A normalized filter's search term as SQL over a job row "j": the job's id or its e-mail's id
-- (when the term is a UUID), the provider's e-mail id, or the term anywhere in the sender or the
-- subject.
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
        ' and (e.provider_email_id = %L or %s)))',
        case when v_is_uuid then format('j.id = %L::uuid or j.fax_received_email_id = %L::uuid or', p_q, p_q) else '' end,
        p_q,
        document_jobs_internal.email_matches_sql('e', p_q));
end;
$$;

-- The e-mails whose sender or subject holds the term, or whose provider's id is the term: at most
-- p_limit of them (p_limit means "maybe more"). The senders come from email_senders and their
-- e-mails from the hash index, each part's read stopping at p_limit; the subjects from their
-- trigram index, which needs three characters of the term. The term goes into the statement as a
-- literal, so that the planner sees the pattern (and its trigrams) it plans for.
create function document_jobs_internal.emails_matching(p_q text, p_limit int)
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
             limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_q), p_q)
       into v_emails;
    return v_emails;
end;
$$;

-- The walk of a search: of the newest p_walk jobs that the filter's other conditions keep (after
-- p_after_created_at/p_after_id, when given), the first p_limit + 1 that match its term, newest first; and,
-- when those are p_limit or fewer and the walk read all p_walk jobs, the oldest of them (where a
-- partial page ends). The walk's jobs come in order, so the term is checked job by job and the
-- check stops with a full page.
create function document_jobs_internal.search_walk(
    p_filter jsonb, p_after_created_at timestamptz, p_after_id uuid, p_walk int, p_limit int,
    out ids uuid[], out oldest_created_at timestamptz, out oldest_id uuid)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_keyset text := 'true';
begin
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;
    execute format(
        'select array(select j.id from (select q.id, q.created_at, q.fax_received_email_id from (%s) q
                                        order by q.created_at desc, q.id desc limit %s) j
                       where %s order by j.created_at desc, j.id desc limit %s)',
        document_jobs_internal.jobs_by_state_sql(p_filter - 'q', v_keyset, p_walk), p_walk,
        document_jobs_internal.job_search_sql(p_filter ->> 'q'), p_limit + 1)
       into ids;
    if cardinality(ids) <= p_limit then
        execute format(
            'select q.created_at, q.id from (%s) q order by q.created_at desc, q.id desc offset %s limit 1',
            document_jobs_internal.jobs_by_state_sql(p_filter - 'q', v_keyset, p_walk), p_walk - 1)
           into oldest_created_at, oldest_id;
    end if;
end;
$$;

-- The job list, its walk through search_walk (200 jobs first for a term the indexes can look up,
-- then 1,000 when the term is common in those 200)
-- and its index lookup through emails_matching; otherwise as in 20261201004200.
--
-- A page of the job list: {"jobs": [...], "next": {"created_at", "id"} or null, "count", "partial",
-- "searched_until"}. Pages follow (created_at, id) descending, which is unique: a page starts
-- after p_after_created_at/p_after_id (both or neither), so no job is skipped or repeated while
-- jobs change. "count" is exact up to 10,000 ("count_capped" when there are more), for filters
-- without a search term, on the first page only.
--
-- A search term is looked for in the newest jobs the other filters match first (cheap when the
-- term is common): 1,000 of them; for a term of three characters or more, the newest 200 first,
-- and the 1,000 only when the term is common enough in those to fill a page from 1,000.
-- When those hold less than a page, the term is looked up in its indexes instead: the job and
-- e-mail ids, the provider's e-mail id, the distinct senders and the subjects' trigram index
-- (emails_matching), which needs at least three characters; that answer is exact when it finds at
-- most 5,000 e-mails. Otherwise (a term shorter than three characters, such as most Japanese words
-- of two characters, or a term in more than 5,000 e-mails) the page holds what the newest 1,000
-- jobs held, "partial" is true, "searched_until" says how far back it looked, and "next" continues
-- the search from there: nothing is skipped, it only takes more pages.
create or replace function public.document_jobs_admin_jobs(
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
set jit = off  -- see the top of 20261201004200_admin_screen_views.sql
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
            -- The newest jobs first: a common term fills a page here. A term of three characters
            -- or more is tried on the newest 200 first: a rare one (the indexes answer it sooner
            -- than 1,000 jobs are read) goes to the indexes; one that is common there, whose
            -- 1,000 jobs would at that rate hold a page, walks the 1,000.
            v_walk := case when length(v_q) >= 3 then c_first_walk else c_walk end;
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

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
