-- Who reads the inbox and acts on a fax (20261207130000), and what the jobs console leaves out
-- (20261207130100): the operator reads answer a live session of an admin or a viewer and refuse an
-- ended one (28000 session_ended) or a user with no role (42501 no_role); a fax's read holds its
-- attachments, its remembered rotation and its jobs, null for no fax; only an admin or a clerk turns a fax,
-- each change audited once with the rotation before and after (a viewer refused, changing and
-- auditing nothing; the same rotation again changes nothing); the lines are held to their rules;
-- a walk that finds less than a page within its 2,000 e-mails says so and continues from the
-- oldest it read; and the job filter's fax_jobs_only leaves reconciliation's jobs out of the list
-- and of a bulk action's count.
--
-- Auth's rows are written as Auth writes them, as supabase_auth_admin (see 025).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(23);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       session_id uuid not null default gen_random_uuid(), role text);
insert into t.people (name, role) values ('admin', 'admin'), ('clerk', 'clerk'), ('viewer', 'viewer'), ('nobody', null);
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, created_at, updated_at)
select p.user_id, 'authenticated', 'authenticated', p.name || '-041@example.com',
       jsonb_build_object('provider', 'email') || case when p.role is null then '{}'::jsonb
                                                       else jsonb_build_object('document_jobs_role', p.role) end,
       now(), now()
  from t.people p;
insert into auth.sessions (id, user_id, created_at, updated_at)
select p.session_id, p.user_id, now(), now() from t.people p;
set local role postgres;
create function t.ids_of(p_page jsonb) returns text[] language sql as $$
    select array(select (select e.provider_email_id from fax_received_emails e where e.id = (f ->> 'id')::uuid)
                   from jsonb_array_elements(p_page -> 'faxes') f) $$;
create function t.who(p_name text) returns t.people language sql as $$ select * from t.people where name = p_name $$;

select record_inbound_email('em_041', 'msg_041', jsonb_build_object('email_id', 'em_041', 'from', 'fax@example.jp',
                                                                    'subject', 'FAX', 'to', '["fax@office.example.jp"]'));
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                            size_bytes, sha256, bucket, storage_path)
values (t.email_id('em_041'), 'att_1', 'fax.pdf', 'application/pdf', 10, repeat('b', 64), 'fax-attachments', 'k/1.pdf');

set local role service_role;
select ok(document_jobs_operator_faxes((t.who('viewer')).user_id, (t.who('viewer')).session_id) -> 'faxes' @>
          jsonb_build_array(jsonb_build_object('id', t.email_id('em_041'))), 'a viewer reads the inbox');
select ok(document_jobs_operator_faxes((t.who('admin')).user_id, (t.who('admin')).session_id) ? 'faxes',
          '... and an admin');
select throws_ok(format('select document_jobs_operator_faxes(%L, %L)', (t.who('viewer')).user_id, gen_random_uuid()),
                 '28000', null, 'a session that is not there reads nothing');
select throws_ok(format('select document_jobs_operator_fax(%L, %L, %L)', (t.who('nobody')).user_id,
                        (t.who('nobody')).session_id, t.email_id('em_041')), '42501', null,
                 'a user with no role reads no fax');
select is(document_jobs_operator_fax((t.who('viewer')).user_id, (t.who('viewer')).session_id, t.email_id('em_041'))
          -> 'attachments' -> 0 ->> 'filename', 'fax.pdf', 'a fax''s read holds its files');
select is(document_jobs_admin_fax(t.email_id('em_041')) -> 'fax' ->> 'rotation', '0', '... its rotation, 0 at first');
select is(jsonb_array_length(document_jobs_admin_fax(t.email_id('em_041')) -> 'jobs'), 1, '... and its jobs');
select is(document_jobs_admin_fax(gen_random_uuid()), null, 'no fax, no read');

-- Turning a fax.
select throws_ok(format('select admin_set_fax_rotation(%L, null, %L, 90)', (t.who('viewer')).user_id,
                        t.email_id('em_041')), '42501', null, 'a viewer may not turn a fax for everyone');
select is(admin_set_fax_rotation((t.who('admin')).user_id, 'admin-041@example.com', t.email_id('em_041'), 90),
          '{"changed": true, "rotation": 90}', 'an admin may');
select is(document_jobs_admin_fax(t.email_id('em_041')) -> 'fax' ->> 'rotation', '90', '... and the fax reads at 90°');
select is(admin_set_fax_rotation((t.who('admin')).user_id, 'admin-041@example.com', t.email_id('em_041'), 90),
          '{"changed": false, "rotation": 90}', 'the same rotation again changes nothing');
select is(admin_set_fax_rotation((t.who('clerk')).user_id, 'clerk-041@example.com', t.email_id('em_041'), 180),
          '{"changed": true, "rotation": 180}', 'a clerk, who reads the faxes, may turn one too');
select is((select array_agg(a.filter order by a.id) from document_jobs_audit a where a.action = 'rotate'),
          array[jsonb_build_object('fax_received_email_id', t.email_id('em_041'), 'from', 0, 'to', 90),
                jsonb_build_object('fax_received_email_id', t.email_id('em_041'), 'from', 90, 'to', 180)],
          'each change is audited, with the rotation before and after');
select throws_ok(format('select admin_set_fax_rotation(%L, null, %L, 45)', (t.who('admin')).user_id,
                        t.email_id('em_041')), '22023', null, 'a rotation is a right angle');
select throws_ok(format('select admin_set_fax_rotation(%L, null, %L, 180)', (t.who('admin')).user_id,
                        gen_random_uuid()), 'P0002', null, 'no fax, no rotation');

-- Lines.
select throws_ok($$ select set_fax_line('not an address', 'x') $$, '22023', null, 'a line is an e-mail address');
select throws_ok($$ select set_fax_line('a@b.example', 'x', '03-1234') $$, '22023', null,
                 '... with its number as ASCII digits');
reset role;
set local role postgres;

-- A walk that ends short of a page: 2,100 e-mails of which only the oldest matches the line (each
-- recorded with its address: an e-mail's row is never updated).
insert into fax_received_emails (provider_email_id, data, to_addresses, received_at)
select 'em_walk_' || n, '{}', array[case when n = 1 then 'rare@office.example.jp' else 'bulk@office.example.jp' end],
       now() - interval '1 day' + make_interval(secs => n)
  from generate_series(1, 2100) n;
create temp table walked as
select document_jobs_admin_faxes(jsonb_build_object('line', 'rare@office.example.jp',
                                                    'received_from', now() - interval '2 days')) as page;
select is((select (page ->> 'partial')::boolean from walked), true,
          'a filter no index answers walks 2,000 e-mails and says the page is partial');
select is((select jsonb_array_length(page -> 'faxes') from walked), 0, '... with what it found in them');
select is(t.ids_of(document_jobs_admin_faxes(jsonb_build_object('line', 'rare@office.example.jp',
                                                                 'received_from', now() - interval '2 days'),
                                             (select (page -> 'next' ->> 'received_at')::timestamptz from walked),
                                             (select (page -> 'next' ->> 'id')::uuid from walked))),
          array['em_walk_1'], '... and its next page continues where it stopped');

-- The jobs console without the queue's own jobs.
insert into document_jobs (kind, status, attempts, finished_at, last_error_code)
values ('reconcile_emails', 'failed', 5, now(), 'resend_unauthorized');
update document_jobs set status = 'failed', attempts = 5, finished_at = now(), last_error_code = 'resend_unauthorized'
 where id = (t.job('em_041')).id;
select is((select array_agg(j ->> 'kind' order by j ->> 'kind') from jsonb_array_elements(
              document_jobs_admin_jobs('{"error_code": "resend_unauthorized"}') -> 'jobs') j),
          array['fetch_email', 'reconcile_emails'], 'the job list has every job by default ...');
select is((select array_agg(j ->> 'kind') from jsonb_array_elements(
              document_jobs_admin_jobs('{"error_code": "resend_unauthorized", "fax_jobs_only": true}') -> 'jobs') j),
          array['fetch_email'], '... and only the faxes'' jobs with fax_jobs_only');

select * from finish();
rollback;
