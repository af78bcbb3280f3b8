-- The backfill of the faxes stored before prepare_fax existed (document-jobs-admin prepare):
-- counted first, enqueued a batch of e-mails at a time by a cursor, audited, workers started
-- within the cap, and idempotent: a run again enqueues nothing twice, skips an e-mail with a live
-- job or one already looked at (prepared, or found unpreparable), and any without attachments.
-- Its run by hand checks its actor's row in auth.users (20261204110000): the admin is written as
-- Auth writes its users, as supabase_auth_admin, on the stack's superuser connection (as 021 does).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(16);

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
values ('a0000000-0000-0000-0000-00000000000a', 'authenticated', 'authenticated', 'op-034@example.com',
        '{"provider": "email", "document_jobs_role": "admin"}', '{}', now(), now());
set local role postgres;

delete from document_jobs_internal.worker_requests;
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret');
select vault.create_secret('https://app.example/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('backfill-test-secret', 'internal_function_secret');

create function t.attach(p_email text, p_id text) returns uuid language sql as $$
    insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
                                                       size_bytes, sha256, bucket, storage_path)
    values (t.email_id(p_email), p_id, 'application/pdf', 1, repeat('d', 64), 'fax-attachments',
            'fax_received_emails/' || t.email_id(p_email) || '/' || p_id || '.pdf')
    returning id $$;
-- A view of the attachment, as a prepare_fax job records it (here as the table's owner).
create function t.viewed(p_attachment uuid, p_sha text, p_error text default null) returns void language sql as $$
    insert into public.fax_attachment_views (attachment_id, source_sha256, page_count, error_code)
    values (p_attachment, p_sha, case when p_error is null then 1 end, p_error) $$;
create function t.backfill(p_after uuid, p_limit int) returns jsonb language sql as $$
    select public.admin_enqueue_prepare_fax_jobs('a0000000-0000-0000-0000-00000000000a', 'op@example.com',
                                                 p_after, p_limit) $$;
create function t.enqueued() returns setof text language sql as $$
    select e.provider_email_id from public.document_jobs j join public.fax_received_emails e on e.id = j.fax_received_email_id
     where j.kind = 'prepare_fax' order by 1 $$;

-- Six e-mails stored before the upgrade: two never looked at, one prepared, one whose file could not be
-- prepared, one prepared from other bytes (its view is stale), one with nothing stored, one with a live job.
select t.add_emails('em_new_1', 'em_new_2', 'em_prepared', 'em_failed', 'em_stale', 'em_empty', 'em_live');
select t.attach('em_new_1', 'a1'), t.attach('em_new_2', 'a2'), t.attach('em_live', 'a7');
select t.viewed(t.attach('em_prepared', 'a3'), repeat('d', 64));
select t.viewed(t.attach('em_failed', 'a4'), repeat('d', 64), 'fax_file_damaged');
select t.viewed(t.attach('em_stale', 'a5'), repeat('e', 64));
select enqueue_document_job('prepare_fax', email_id('em_live'));

select is(count_unprepared_faxes(), '{"faxes": 7, "unprepared": 4, "live_jobs": 1}'::jsonb,
          'the count: e-mails, those with an attachment no job has looked at (live job or not), live prepare jobs');

create temporary table first as
select t.backfill(null, 4) as answer, (select array_agg(id order by id) from fax_received_emails) as ids;
select is((select (answer ->> 'scanned')::int from first), 4, 'a batch scans at most p_limit e-mails');
select is((select (answer ->> 'last_id')::uuid from first), (select ids[4] from first),
          '... and answers the last as the cursor of the next');
create temporary table second as select t.backfill((select (answer ->> 'last_id')::uuid from first), 4) as answer;
select is((select (answer ->> 'scanned')::int from second), 3, 'the next batch goes on after it, to the end');
select is(((select (answer ->> 'enqueued')::int from first) + (select (answer ->> 'enqueued')::int from second)), 3,
          'between them they enqueue three jobs ...');
select set_eq($$ select * from t.enqueued() $$, array['em_live', 'em_new_1', 'em_new_2', 'em_stale'],
              '... for the never-prepared and the stale, beside the one already live');
select is(t.backfill((select (answer ->> 'last_id')::uuid from second), 4) -> 'scanned', '0',
          'past the last e-mail, a batch scans nothing');
select is((select count(*)::int from document_jobs where kind = 'prepare_fax' and status = 'queued'), 4,
          'the jobs are queued');
select ok((select count(*) from document_jobs_internal.worker_requests) > 0, 'workers are started for them');
select is((select (answer ->> 'follow_ups')::int from first) + (select (answer ->> 'follow_ups')::int from second),
          (select count(*)::int from document_jobs_internal.worker_requests), '... as many as the answers say');

-- Audited: who, what, how many, which e-mails.
-- Which batch enqueues what follows the e-mails' random ids: one batch may hold all three.
select is((select count(*)::int from document_jobs_audit where action = 'prepare'),
          (select count(*)::int from (select answer from first union all select answer from second) b
            where (answer ->> 'enqueued')::int > 0),
          'each batch that enqueued is audited, and no other');
select is((select sum(job_count)::int from document_jobs_audit where action = 'prepare'), 3, '... with the jobs it enqueued');
select is((select actor_email from document_jobs_audit where action = 'prepare' limit 1), 'op@example.com',
          '... and the operator');

-- Run again: nothing twice.
create temporary table again as select t.backfill(null, 1000) as answer;
select is((select (answer ->> 'enqueued')::int from again), 0, 'a run again enqueues nothing while the jobs are live');
update document_jobs set status = 'completed', finished_at = now() where kind = 'prepare_fax';
insert into fax_attachment_views (attachment_id, source_sha256, page_count)
select a.id, a.sha256, 1 from fax_received_email_attachments a
on conflict (attachment_id) do update set source_sha256 = excluded.source_sha256;
select is(t.backfill(null, 1000) ->> 'enqueued', '0', '... nor once they prepared their faxes');
select throws_ok($$ select t.backfill(null, 0) $$, '22023', 'p_limit must be between 1 and 1000', 'a batch has bounds');

select * from finish();
rollback;
