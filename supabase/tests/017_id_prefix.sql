-- The ids people see work everywhere (issue 31): a job's id, an e-mail row's id or the provider's
-- e-mail id, whole or any prefix of 6 or more hex characters, case and hyphens ignored, finds its
-- jobs, in the CLI (document_jobs_find_by_id) and in the screen's search; and the prefix is read
-- from an index, as a range (EXPLAIN), never by reading every id.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(14);

insert into public.fax_received_emails (id, provider_email_id, data) values
    ('aaaa1111-0000-4000-8000-000000000001', '4ec0ffee-1234-4abc-9def-000000000001', '{}'),
    ('bbbb2222-0000-4000-8000-000000000002', 'em_not_hex', '{}');
insert into public.document_jobs (id, kind, fax_received_email_id, status, finished_at) values
    ('0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b', 'fetch_email', 'aaaa1111-0000-4000-8000-000000000001', 'failed', now()),
    ('0b0e5e1c-9999-4d3e-9a1b-2c3d4e5f6a7b', 'fetch_email', 'bbbb2222-0000-4000-8000-000000000002', 'failed', now()),
    ('c0ffee00-0000-4000-8000-00000000000c', 'fetch_email', 'aaaa1111-0000-4000-8000-000000000001', 'queued', null);

create function t.found(p_id text) returns text[] language sql as $$
    select array(select x ->> 'id' from jsonb_array_elements(public.document_jobs_find_by_id(p_id) -> 'jobs') x
                 order by 1) $$;

select is(t.found('0b0e5e1c-4b5a'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b'], 'a job id''s prefix, with a hyphen');
select is(t.found('0B0E5E1C4B'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b'], 'upper case, no hyphen');
select is(t.found('0b0e5e1c'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b', '0b0e5e1c-9999-4d3e-9a1b-2c3d4e5f6a7b'],
          'the list''s 8 characters shared by two jobs: both');
select is(t.found('0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b'], 'a whole id');
select is(t.found('aaaa1111'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b', 'c0ffee00-0000-4000-8000-00000000000c'],
          'an e-mail row id''s prefix: its jobs');
select is(t.found('4ec0ffee12'), array['0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b', 'c0ffee00-0000-4000-8000-00000000000c'],
          'the provider''s e-mail id''s prefix: its jobs');
select is(public.document_jobs_find_by_id('c0ffee') -> 'jobs' -> 0 -> 'matched', '["job_id"]',
          'what matched is told');
select is(t.found('ffffff'), '{}'::text[], 'a prefix of nothing');
select throws_ok($$ select public.document_jobs_find_by_id('0b0e5') $$, '22023', null, 'fewer than 6 hex characters');
select throws_ok($$ select public.document_jobs_find_by_id('em_not_hex') $$, '22023', null, 'not hex');

-- The screen's search: the list's short id finds its job.
select is(array(select x ->> 'id' from jsonb_array_elements(
              public.document_jobs_admin_jobs('{"q": "C0FFEE00"}') -> 'jobs') x),
          array['c0ffee00-0000-4000-8000-00000000000c'], 'the search finds a job by its short id');

-- The plans: each prefix is one range of its text index (seq scans off: the table is tiny here;
-- the question is whether an index can serve the prefix at all, as it must at 1,000,000 jobs).
set local enable_seqscan = off;
create function t.plan(p_sql text) returns text language plpgsql as $$
declare
    v_line text;
    v_plan text := '';
begin
    for v_line in execute 'explain ' || p_sql loop
        v_plan := v_plan || v_line || E'\n';
    end loop;
    return v_plan;
end;
$$;
select matches(t.plan($$ select j.id from public.document_jobs j
                          where replace(j.id::text, '-', '') ~>=~ '0b0e5e1c' and replace(j.id::text, '-', '') ~<~ '0b0e5e1d' $$),
               'Index (Only )?Scan using document_jobs_by_id_text|Bitmap Index Scan on document_jobs_by_id_text',
               'a job id prefix is a range of document_jobs_by_id_text');
select matches(t.plan($$ select e.id from public.fax_received_emails e
                          where replace(e.id::text, '-', '') ~>=~ 'aaaa1111' and replace(e.id::text, '-', '') ~<~ 'aaaa1112' $$),
               'fax_received_emails_by_id_text', 'an e-mail id prefix is a range of fax_received_emails_by_id_text');
select matches(t.plan($$ select e.id from public.fax_received_emails e
                          where lower(replace(e.provider_email_id, '-', '')) ~>=~ '4ec0ff'
                            and lower(replace(e.provider_email_id, '-', '')) ~<~ '4ec0fg' $$),
               'fax_received_emails_by_provider_id_text',
               'a provider id prefix is a range of fax_received_emails_by_provider_id_text');

select * from finish();
rollback;
