-- The export from the screen (20261207230000_export_faxes.sql): an admin's request, audited, makes
-- an export and its export_faxes job (claimed after every other kind), one live at a time; a clerk
-- or a viewer may neither ask nor read; the job's calls are fenced by its generation (a stale
-- holder records nothing); parts are recorded in order under the export's own prefix, their files'
-- names once per export whatever their case, and a start again goes on after the last part.
--
-- Auth's rows are written as Auth writes them, as supabase_auth_admin (019_operator_reads.sql).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(35);

delete from public.document_jobs;
select vault.create_secret('http://127.0.0.1:9/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('secret', 'internal_function_secret');

create table t.people (name text primary key, role text, user_id uuid not null default gen_random_uuid(),
                       session_id uuid not null default gen_random_uuid());
insert into t.people (name, role) values ('admin', 'admin'), ('clerk', 'clerk'), ('viewer', 'viewer');
grant usage on schema t to supabase_auth_admin;
grant select on t.people to supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, created_at, updated_at)
select p.user_id, 'authenticated', 'authenticated', 'xp-' || p.name || '@example.com',
       jsonb_build_object('provider', 'email', 'document_jobs_role', p.role), now(), now()
  from t.people p;
insert into auth.sessions (id, user_id, created_at, updated_at, aal)
select p.session_id, p.user_id, now(), now(), 'aal1' from t.people p;
set local role postgres;
create function t.who(p_name text) returns uuid language sql as $$ select user_id from t.people where name = p_name $$;
create function t.session(p_name text) returns uuid language sql as $$
    select session_id from t.people where name = p_name $$;

-- Two faxes of March 2001 (the year keeps them apart from any other row), three originals.
insert into public.fax_received_emails (provider_email_id, data, from_address, received_at)
values ('em_xp_a', '{}', 'a@example.jp', '2001-03-02 10:00:00+09'),
       ('em_xp_b', '{}', 'b@example.jp', '2001-03-20 10:00:00+09');
insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
            content_type, size_bytes, sha256, bucket, storage_path, created_at, updated_at)
values (t.email_id('em_xp_a'), 'att_1', 'a.pdf', 'application/pdf', 1, repeat('1', 64), 'fax-attachments', 'xp/a1',
        '2001-03-02 01:00:00+00', '2001-03-02 01:00:00+00'),
       (t.email_id('em_xp_a'), 'att_2', 'b.pdf', 'application/pdf', 2, repeat('2', 64), 'fax-attachments', 'xp/a2',
        '2001-03-02 01:00:01+00', '2001-03-02 01:00:01+00'),
       (t.email_id('em_xp_b'), 'att_1', 'c.pdf', 'application/pdf', 3, repeat('3', 64), 'fax-attachments', 'xp/b1',
        '2001-03-20 01:00:00+00', '2001-03-20 01:00:00+00');

-- The kind.
select is((select claim_order from document_job_kinds where kind = 'export_faxes'), 5,
          'export_faxes is claimed after every other kind (claim_order 5)');

-- Who may ask.
select throws_ok($$ select admin_request_fax_export(t.who('clerk'), 'clerk@example.com', '2001-03-01', '2001-03-31') $$,
                 '42501', null, 'a clerk may not ask for an export');
select throws_ok($$ select admin_request_fax_export(t.who('viewer'), null, '2001-03-01', '2001-03-31') $$,
                 '42501', null, '... nor a viewer');
select throws_ok($$ select admin_request_fax_export(t.who('admin'), null, '2001-03-31', '2001-03-01') $$,
                 '22023', 'p_from must be on or before p_to', 'a range that ends before it starts is refused');
select is((select count(*)::int from document_jobs where kind = 'export_faxes'), 0, '... and nothing was enqueued');

create temporary table asked as
select admin_request_fax_export(t.who('admin'), 'admin@example.com', '2001-03-01', '2001-03-10') as answer;
select is((select (answer ->> 'requested')::boolean from asked), true, 'an admin asks for an export');
select is((select (answer ->> 'total')::int from asked), 2, '... of the two originals filed 1 to 10 March');
select is((select status from document_jobs where kind = 'export_faxes'), 'queued', '... as a queued export_faxes job');
select is((select count(*)::int from net.http_request_queue q where q.url like '%/api/internal/document-jobs'), 1,
          '... with a kick of the worker');
select results_eq(
    $$ select actor_id, actor_email, action, job_id, filter ->> 'export_id', filter ->> 'from', filter ->> 'to'
         from document_jobs_audit where action = 'export' $$,
    $$ select t.who('admin'), 'admin@example.com'::text, 'export'::text, (answer ->> 'job_id')::uuid,
              answer ->> 'export_id', '2001-03-01'::text, '2001-03-10'::text from asked $$,
    'the request is audited: who, the export, its range');
select is((select stored_before between now() - interval '5 minutes' and statement_timestamp() - interval '5 minutes'
             from fax_exports), true,
          'its window ends five minutes before the request, as the CLI''s');
select is((select admin_request_fax_export(t.who('admin'), null, '2001-01-01', '2001-12-31') ->> 'reason'),
          'export_running', 'another request while one is live is refused: export_running');
select is((select count(*)::int from fax_exports), 1, '... and makes no export');

-- Who may read.
select is((select jsonb_array_length(document_jobs_operator_fax_exports(t.who('admin'), t.session('admin')))), 1,
          'an admin reads the exports');
select throws_ok($$ select document_jobs_operator_fax_exports(t.who('clerk'), t.session('clerk')) $$, '42501', null,
                 'a clerk may not read them');
select throws_ok($$ select document_jobs_operator_fax_export(t.who('viewer'), t.session('viewer'),
                                                            (select id from fax_exports)) $$,
                 '42501', null, '... nor a viewer one export');

-- The job, claimed; its calls fenced.
create temporary table job as select * from claim_document_jobs('export_faxes', 1, interval '5 minutes');
create function t.gen() returns int language sql as $$ select generation from job $$;
create function t.job_id() returns uuid language sql as $$ select id from job $$;
create function t.key(p_part int) returns text language sql as $$
    select format('exports/%s/part-%s.zip', (select id from public.fax_exports), lpad(p_part::text, 4, '0')) $$;
create function t.file(p_name text, p_sha text) returns jsonb language sql as $$
    select jsonb_build_object('name', p_name, 'document_id', gen_random_uuid(), 'size_bytes', 1, 'sha256', p_sha,
                              'csv_row', jsonb_build_array(p_name, 1)) $$;
select is((select start_export_faxes_v1(t.job_id(), t.gen() + 1, 'fax-attachments') ->> 'held'), 'false',
          'a start by another generation is not held');
select is((select start_export_faxes_v1(t.job_id(), t.gen(), 'fax-attachments')
               - 'export_id' - 'stored_before' - 'held' - 'state'),
          jsonb_build_object('bucket', 'fax-attachments', 'date_from', '2001-03-01', 'date_to', '2001-03-10',
                             'finished', false, 'parts', 0, 'files', 0, 'after', null),
          'the first start: its range, the bucket given, no part yet');
select is((select start_export_faxes_v1(t.job_id(), t.gen(), 'another-bucket') ->> 'bucket'), 'fax-attachments',
          '... and the bucket stays the first start''s');

select throws_ok(format($$ select record_fax_export_part_v1(%L, %s, 1, 'fax_received_emails/x/att.pdf', 10,
                                                           repeat('a', 64), now(), gen_random_uuid(), %L) $$,
                        t.job_id(), t.gen(), jsonb_build_array(t.file('a.pdf', repeat('1', 64)))),
                 '22023', null, 'a part is never recorded outside the export''s prefix');
select throws_ok(format($$ select record_fax_export_part_v1(%L, %s, 2, %L, 10, repeat('a', 64), now(),
                                                           gen_random_uuid(), %L) $$,
                        t.job_id(), t.gen(), t.key(2), jsonb_build_array(t.file('a.pdf', repeat('1', 64)))),
                 '22023', null, 'nor a part 2 before part 1');
select is((select record_fax_export_part_v1(t.job_id(), t.gen() - 1, 1, t.key(1), 10, repeat('a', 64), now(),
                                            gen_random_uuid(), jsonb_build_array(t.file('x.pdf', repeat('1', 64))))
               ->> 'held'), 'false', 'a stale generation''s part is not held');
select is((select count(*)::int from fax_export_parts), 0, '... and nothing of it is recorded');

update document_jobs set budget_releases = 2 where id = t.job_id();
select is((select record_fax_export_part_v1(t.job_id(), t.gen(), 1, t.key(1), 10, repeat('a', 64),
                                            '2001-03-02 01:00:01+00', gen_random_uuid(),
                                            jsonb_build_array(t.file('20010302_A.pdf', repeat('1', 64)),
                                                              t.file('20010302_B.pdf', repeat('2', 64))),
                                            interval '5 minutes') ->> 'written'), '2',
          'part 1 is recorded with its two files');
select is((select budget_releases from document_jobs where id = t.job_id()), 0,
          '... and a stored part ends a streak of time-budget releases');
select results_eq($$ select part, storage_path, originals from fax_export_parts $$,
                  $$ values (1, t.key(1), 2) $$, '... under the export''s prefix');
select is((select fax_export_names_taken_v1(t.job_id(), t.gen(), array['20010302_a.PDF', '20010302_C.pdf'])
               -> 'taken'), '["20010302_a.PDF"]'::jsonb, 'a name an earlier part took, in another case, is taken');
select throws_ok(format($$ select record_fax_export_part_v1(%L, %s, 2, %L, 10, repeat('a', 64), now(),
                                                           gen_random_uuid(), %L) $$,
                        t.job_id(), t.gen(), t.key(2), jsonb_build_array(t.file('20010302_b.PDF', repeat('1', 64)))),
                 '23505', null, '... and a part that names it again is refused');
select is((select start_export_faxes_v1(t.job_id(), t.gen(), 'fax-attachments') -> 'after' ->> 'at')::timestamptz,
          '2001-03-02 01:00:01+00'::timestamptz, 'a start again goes on after the last recorded part''s cursor');
select is((select jsonb_path_query_array(fax_export_files_v1(t.job_id(), t.gen(), 0, 10), '$.files[*].name')),
          '["20010302_A.pdf", "20010302_B.pdf"]'::jsonb, 'the files are read back in order, for index.csv');
select is((select jsonb_path_query_array(fax_export_files_v1(t.job_id(), t.gen(), 1, 10), '$.files[*].seq')),
          '[2]'::jsonb, '... a page after a cursor');

select throws_ok(format($$ select finish_fax_export_v1(%L, %s, '{"path": "index.csv"}', '{"path": "SHA256SUMS"}') $$,
                        t.job_id(), t.gen()),
                 '22023', null, 'index.csv and SHA256SUMS are only recorded under the export''s prefix');
select is((select finish_fax_export_v1(t.job_id(), t.gen(),
              jsonb_build_object('path', format('exports/%s/index.csv', (select id from fax_exports)),
                                 'size_bytes', 100, 'sha256', repeat('c', 64)),
              jsonb_build_object('path', format('exports/%s/SHA256SUMS', (select id from fax_exports)),
                                 'size_bytes', 50, 'sha256', repeat('d', 64))) ->> 'held'), 'true',
          'the export is finished');
select is((select document_jobs_operator_fax_export(t.who('admin'), t.session('admin'), (select id from fax_exports))
               - 'id' - 'job_id' - 'requested_at' - 'stored_before' - 'finished_at' - 'parts'),
          jsonb_build_object('requested_by_email', 'admin@example.com', 'date_from', '2001-03-01',
                             'date_to', '2001-03-10', 'total', 2, 'written', 2, 'bytes', 2,
                             'bucket', 'fax-attachments', 'state', 'running', 'error_code', null,
                             'index', jsonb_build_object('path', format('exports/%s/index.csv', (select id from fax_exports)),
                                                         'size_bytes', 100, 'sha256', repeat('c', 64)),
                             'sums', jsonb_build_object('path', format('exports/%s/SHA256SUMS', (select id from fax_exports)),
                                                        'size_bytes', 50, 'sha256', repeat('d', 64))),
          'an admin reads it finished: progress, index.csv and SHA256SUMS');
select throws_ok(format($$ select record_fax_export_part_v1(%L, %s, 2, %L, 10, repeat('a', 64), now(),
                                                           gen_random_uuid(), %L) $$,
                        t.job_id(), t.gen(), t.key(2), jsonb_build_array(t.file('z.pdf', repeat('1', 64)))),
                 '22023', 'the export is finished', 'a finished export takes no more parts');

select * from finish();
rollback;
