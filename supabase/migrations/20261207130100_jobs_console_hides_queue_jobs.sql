-- The jobs console hides the queue's own jobs unless asked: reconciliation runs every 10 minutes
-- and its jobs (reconcile_emails, of no e-mail) were 144 rows a day among the faxes' jobs. A filter
-- key "fax_jobs_only" (true: only the jobs of an e-mail) that the screen sets by default; the CLI
-- and the API without it list every job as before. The list, its count and the bulk actions read
-- the one filter (job_filter_sql), so a bulk action counts what the list shows.
--
-- As in 20261203150000, with the key fax_jobs_only.
create or replace function document_jobs_internal.job_filter(p_filter jsonb)
returns jsonb
language plpgsql
stable
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
            v_key = any (array['states', 'kind', 'error_code', 'received_from', 'received_to', 'sender', 'q', 'fax_jobs_only']),
            format('p_filter has an unknown key %s (known: states, kind, error_code, received_from, received_to, sender, q, fax_jobs_only)',
                   to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);

    if p_filter ? 'states' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'states') = 'array' and jsonb_array_length(p_filter -> 'states') > 0
            and not exists (select 1 from jsonb_array_elements(p_filter -> 'states') s
                             where jsonb_typeof(s) <> 'string'
                                or s #>> '{}' not in ('queued', 'running', 'completed', 'failed')),
            'p_filter.states must be a non-empty array of queued, running, completed, failed');
        v_filter := v_filter || jsonb_build_object('states',
            (select jsonb_agg(distinct s) from jsonb_array_elements_text(p_filter -> 'states') s));
    end if;

    foreach v_key in array array['kind', 'error_code'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(p_filter ->> v_key) between 1 and 100,
                format('p_filter.%s must be a string of 1 to 100 characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, p_filter ->> v_key);
        end if;
    end loop;

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

    foreach v_key in array array['sender', 'q'] loop
        if p_filter ? v_key then
            v_text := btrim(p_filter ->> v_key);
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(v_text) between 1 and 200
                and v_text !~ '[[:cntrl:]]',
                format('p_filter.%s must be 1 to 200 characters, with no control characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, v_text);
        end if;
    end loop;
    if p_filter ? 'fax_jobs_only' then
        perform document_jobs_internal.require(jsonb_typeof(p_filter -> 'fax_jobs_only') = 'boolean',
            'p_filter.fax_jobs_only must be true or false');
        if (p_filter ->> 'fax_jobs_only')::boolean then
            v_filter := v_filter || jsonb_build_object('fax_jobs_only', true);
        end if;
    end if;
    return v_filter;
end;
$$;
comment on function document_jobs_internal.job_filter(p_filter jsonb) is
    'A filter, checked and normalized: {"states": [...], "kind", "error_code", "received_from", "received_to", "sender", "q", "fax_jobs_only"}, every key optional; anything else is refused with 22023 and a message naming the key. "Received" is when the webhook recorded the e-mail (the job''s created_at); "sender" is text of the e-mail''s sender (its From line), "q" the search term (ids, sender or subject), "fax_jobs_only" true leaves out the jobs of no e-mail (the queue''s own: reconcile_emails).';

-- As in 20261203150000, with fax_jobs_only.
create or replace function document_jobs_internal.job_filter_sql(p_filter jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
    select concat_ws(' and ',
        'true',
        case when p_filter ? 'states' then format('j.status = any (%L::text[])',
            array(select jsonb_array_elements_text(p_filter -> 'states'))) end,
        case when p_filter ? 'kind' then format('j.kind = %L', p_filter ->> 'kind') end,
        case when p_filter ? 'error_code' then format('j.last_error_code = %L', p_filter ->> 'error_code') end,
        case when p_filter ? 'received_from' then format('j.created_at >= %L::timestamptz', p_filter ->> 'received_from') end,
        case when p_filter ? 'received_to' then format('j.created_at < %L::timestamptz', p_filter ->> 'received_to') end,
        case when p_filter ? 'sender' then format(
            'j.fax_received_email_id in (select se.id from document_jobs_internal.email_senders ss'
            ' join public.fax_received_emails se on se.from_address = ss.from_address where ss.from_address ilike %L)',
            document_jobs_internal.like_pattern(p_filter ->> 'sender')) end,
        case when p_filter ? 'fax_jobs_only' then 'j.fax_received_email_id is not null' end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') end)
$$;
comment on function document_jobs_internal.job_filter_sql(p_filter jsonb) is
    'A normalized filter as one SQL condition over a job row "j" (states, kind, error code, received time, sender, search, the jobs of an e-mail only); "true" when it has none. The meaning of a filter, in one place: the sender as the set of its e-mails (email_senders and the hash index on the sender), the walks check it job by job (sender_match_sql), with the same meaning.';
