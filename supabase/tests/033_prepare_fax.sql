-- The prepare_fax kind: enqueued when an e-mail's fetch_email job completes (once, without a kick,
-- only for an e-mail with stored attachments), its two fenced calls (what it needs; what it
-- derived, under the attachment's fax_views/ prefix only, from the recorded bytes only), the
-- table of views (changeable, read-only to service_role, closed to clients), and the failure
-- alert, fetch_email's alone.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(32);

delete from document_jobs_internal.worker_requests;
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url');
select vault.create_secret('https://app.example/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('prepare-fax-test-secret', 'internal_function_secret');
select vault.create_secret('https://chat.example/hook', 'document_jobs_alert_url');

create function t.posts(p_url text) returns int language sql as $$
    select count(*)::int from net.http_request_queue where url = p_url $$;
create function t.attach(p_email text, p_id text) returns uuid language sql as $$
    insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
                                                       size_bytes, sha256, bucket, storage_path)
    values (t.email_id(p_email), p_id, 'image/tiff', 1, repeat('b', 64), 'fax-attachments',
            'fax_received_emails/' || t.email_id(p_email) || '/' || p_id || '.tif')
    returning id $$;
create function t.of_kind(p_email text, p_kind text) returns public.document_jobs language sql as $$
    select * from public.document_jobs where kind = p_kind and fax_received_email_id = t.email_id(p_email)
     order by created_at desc limit 1 $$;
create function t.held(p_job public.document_jobs) returns public.document_jobs language sql as $$
    select * from public.claim_document_jobs(p_job.kind, 1, interval '5 minutes') $$;

-- Enqueued by the fetch's completion
-- em_1 was received long ago (kept until 2023-05-31): its deletion may be approved at the end.
insert into public.fax_received_emails (provider_email_id, data, received_at) values ('em_1', '{}', '2015-06-01 10:00+09');
select t.add_emails('em_empty');
select record_inbound_email('em_2', 'msg_2', '{}');
select t.attach('em_1', 'att_1');
select enqueue_document_job('fetch_email', email_id('em_1'));
select enqueue_document_job('fetch_email', email_id('em_empty'));
create temporary table kicks as select t.posts('https://app.example/api/internal/document-jobs') as n;
update document_jobs set status = 'completed', finished_at = now() where kind = 'fetch_email'
   and fax_received_email_id in (email_id('em_1'), email_id('em_empty'));
select is((t.of_kind('em_1', 'prepare_fax')).status, 'queued', 'a fetch_email job that completes enqueues its e-mail''s prepare_fax job');
select is(t.of_kind('em_empty', 'prepare_fax'), null, '... not for an e-mail with nothing stored');
select is(t.posts('https://app.example/api/internal/document-jobs'), (select n from kicks),
          '... and without a kick: the completing invocation''s chain, its follow-up or the cron claims it');
select enqueue_document_job('fetch_email', email_id('em_1'));
update document_jobs set status = 'completed', finished_at = now() where kind = 'fetch_email' and status = 'queued';
select is((select count(*)::int from document_jobs where kind = 'prepare_fax'), 1,
          'a second completion while the prepare job is live adds none (one live job per kind and e-mail)');
update document_jobs set status = 'failed', finished_at = now() where kind = 'fetch_email' and fax_received_email_id = email_id('em_2');
select is((select count(*)::int from document_jobs where kind = 'prepare_fax'), 1, 'a fetch that fails enqueues nothing');

-- The failure alert is fetch_email's only
create temporary table alerts as select t.posts('https://chat.example/hook') as n;
select is(t.posts('https://chat.example/hook'), (select n from alerts), 'baseline');
update document_jobs set status = 'failed', finished_at = now(), last_error_code = 'fax_file_damaged'
 where kind = 'prepare_fax';
select is(t.posts('https://chat.example/hook'), (select n from alerts), 'a prepare_fax job that fails sends no "Fax not fetched" alert');
update document_jobs set status = 'queued', finished_at = null where kind = 'fetch_email' and fax_received_email_id = email_id('em_2');
update document_jobs set status = 'failed', finished_at = now(), last_error_code = 'resend_not_found'
 where kind = 'fetch_email' and fax_received_email_id = email_id('em_2');
select is(t.posts('https://chat.example/hook'), (select n + 1 from alerts), 'a fetch_email job that fails still does');
delete from document_jobs where kind = 'prepare_fax';

-- start_prepare_fax_v2
select enqueue_document_job('prepare_fax', email_id('em_1'));
create temporary table job as select * from t.held(t.of_kind('em_1', 'prepare_fax'));
create function t.prep() returns public.document_jobs language sql as $$ select * from job $$;
select is(start_prepare_fax_v2((t.prep()).id, (t.prep()).generation + 1), '{"held": false, "state": null}',
          'start is fenced: another generation is not the holder');
select is(start_prepare_fax_v2((t.prep()).id, (t.prep()).generation) -> 'email' ->> 'id', email_id('em_1')::text,
          'the holder gets its e-mail ...');
select is(start_prepare_fax_v2((t.prep()).id, (t.prep()).generation) -> 'attachments',
          jsonb_build_array(jsonb_build_object(
              'id', (select id from fax_received_email_attachments where provider_attachment_id = 'att_1'),
              'content_type', 'image/tiff', 'bucket', 'fax-attachments',
              'storage_path', 'fax_received_emails/' || email_id('em_1') || '/att_1.tif', 'size_bytes', 1,
              'sha256', repeat('b', 64), 'prepared', false)),
          '... and its stored attachments, none prepared yet');
select is(start_prepare_fax_v2((t.of_kind('em_2', 'fetch_email')).id, (t.of_kind('em_2', 'fetch_email')).generation)
          ->> 'held', 'false', 'a job of another kind is not a prepare_fax job''s holder');

-- record_fax_attachment_view_v2
create function t.record(p_generation int, p_attachment uuid, p_sha text, p_view text, p_thumbnail text,
                         p_error text default null, p_pages int default 3) returns jsonb language sql as $$
    select public.record_fax_attachment_view_v2((t.prep()).id, p_generation, p_attachment, p_sha, p_pages, p_view,
                                                p_thumbnail, p_error, null, interval '10 minutes') $$;
create function t.att(p_id text) returns uuid language sql as $$
    select id from public.fax_received_email_attachments where provider_attachment_id = p_id $$;
create function t.prefix(p_id text) returns text language sql as $$
    select 'fax_views/' || t.email_id('em_1') || '/' || t.att(p_id) || '/' $$;

update document_jobs set lease_until = now() + interval '1 minute', budget_releases = 2 where id = (t.prep()).id;
select is(t.record((t.prep()).generation, t.att('att_1'), repeat('b', 64), prefix('att_1') || 'view.pdf',
                   prefix('att_1') || 'thumbnail.webp'), '{"held": true, "state": "running"}',
          'the holder records what it derived');
select is((select (page_count, view_path, thumbnail_path, error_code) from fax_attachment_views where attachment_id = t.att('att_1')),
          (3, prefix('att_1') || 'view.pdf', prefix('att_1') || 'thumbnail.webp', null::text),
          '... as a row of fax_attachment_views');
select is(((select lease_until from document_jobs where id = (t.prep()).id), (select budget_releases from document_jobs where id = (t.prep()).id)),
          (now() + interval '10 minutes', 0), '... renewing the lease and ending a streak of time-budget releases (progress)');
select is(start_prepare_fax_v2((t.prep()).id, (t.prep()).generation) -> 'attachments' -> 0 ->> 'prepared', 'true',
          'a job run again skips it');
select is(t.record((t.prep()).generation + 1, t.att('att_1'), repeat('b', 64), null, null), '{"held": false, "state": null}',
          'a stale generation records nothing');
select throws_ok($$ select t.record((t.prep()).generation, t.att('att_1'), repeat('b', 64),
                                    'fax_received_emails/' || t.email_id('em_1') || '/att_1.tif', null) $$,
                 '22023', null, 'a derived file at an original''s key is refused');
select throws_ok($$ select t.record((t.prep()).generation, t.att('att_1'), repeat('b', 64),
                                    t.prefix('att_1') || '../../x/view.pdf', null) $$,
                 '22023', null, '... so is one that climbs out of the attachment''s prefix');
select t.add_emails('em_other');
select t.attach('em_other', 'att_other');
select throws_ok($$ select t.record((t.prep()).generation, t.att('att_other'), repeat('b', 64), null, null) $$,
                 '22023', null, 'an attachment of another e-mail is refused');
select throws_ok($$ select t.record((t.prep()).generation, t.att('att_1'), repeat('c', 64), null, null) $$,
                 '22023', null, 'a view of other bytes than the recorded ones is refused');
select throws_ok($$ select t.record((t.prep()).generation, t.att('att_1'), repeat('b', 64),
                                    t.prefix('att_1') || 'view.pdf', null, 'fax_file_damaged') $$,
                 '22023', null, 'a file that could not be prepared has no derived files');
select is(t.record((t.prep()).generation, t.att('att_1'), repeat('b', 64), null, null, 'fax_file_damaged', null),
          '{"held": true, "state": "running"}', 'the error of a file that cannot be prepared is recorded ...');
select is((select (page_count, view_path, error_code) from fax_attachment_views where attachment_id = t.att('att_1')),
          (null::int, null::text, 'fax_file_damaged'::text), '... replacing the earlier preparation');
select is(start_prepare_fax_v2((t.prep()).id, (t.prep()).generation) -> 'attachments' -> 0 ->> 'prepared', 'false',
          '... and a run again tries it again');
select is((select count(*)::int from fax_received_email_attachments where provider_attachment_id = 'att_1'
              and updated_at = created_at and sha256 = repeat('b', 64)), 1, 'the attachment''s own row never changes');

-- The table: changeable through the function only; closed to clients.
select throws_ok($$ set local role service_role; insert into public.fax_attachment_views (attachment_id, source_sha256)
                    values (t.att('att_other'), repeat('b', 64)) $$, '42501', null,
                 'service_role reads the views but writes them only through the fenced call');
reset role;
select ok(has_table_privilege('service_role', 'public.fax_attachment_views', 'select'), 'service_role may read them');
select ok(not has_table_privilege('anon', 'public.fax_attachment_views', 'select')
          and not has_table_privilege('authenticated', 'public.fax_attachment_views', 'select'),
          'anon and authenticated may not');
select ok((select relrowsecurity from pg_class where oid = 'public.fax_attachment_views'::regclass), 'row level security is on');
select throws_ok($$ update public.fax_attachment_views set view_path = 'fax_received_emails/x' $$, '23514', null,
                 'the table itself refuses a derived key outside fax_views/');
-- An attachment goes only with an approved deletion of its e-mail (fax_deletions).
insert into public.fax_deletions (fax_received_email_id, actor_id, reason, what)
values (email_id('em_1'), gen_random_uuid(), 'kept past its keep-until date', '{}');
delete from fax_received_email_attachments where provider_attachment_id = 'att_1';
select is((select count(*)::int from fax_attachment_views), 0, 'a view goes with its attachment');

select * from finish();
rollback;
