-- The count of a sender's jobs, through the indexes the page already uses. The list's first page
-- for a sender of 5,000 e-mails or fewer counted that sender's jobs with one condition on the
-- e-mail over every state; the indexes on the e-mail are partial (the finished jobs', and the live
-- one of each kind), so the count read all 1,050,000 jobs of the benchmark: 108 ms at p50 where
-- every other view takes 11 to 31. It now counts the same union of index scans that gives the
-- page, capped as before (10,000), so the page and its count read the same rows.

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
    v_ids_counted uuid[];
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
            -- Counted through the same two indexes as the page (no index on the e-mail serves
            -- every state, so a count over all states read the whole table: about 100 ms).
            execute format(c_jobs_of_emails, document_jobs_internal.job_filter_sql(v_filter - 'sender'), 'true',
                           c_count_cap + 1)
               into v_ids_counted
              using v_emails, null::uuid;
            v_count := cardinality(v_ids_counted);
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
