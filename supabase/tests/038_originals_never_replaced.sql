-- Originals that are never replaced: an attachment's versions (recorded together, never updated,
-- the alert original_differs once for what one call adds), the raw message (stored, or noted
-- unavailable), the previous deploy's record_document_attachment_v2, and the discard of an object
-- found wrong, decided under the job's fence: only by the holder, only under the job's e-mail's
-- originals, only for an object no row records, and a key given up is never recorded afterwards.
begin;
set local client_min_messages = error;  -- the failure alerts' "no alert URL stored" warnings
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(48);

delete from vault.secrets where name = 'document_jobs_alert_url';
select vault.create_secret('https://chat.example/originals', 'document_jobs_alert_url');
create function t.alerts() returns setof jsonb language sql as $$
    select convert_from(q.body, 'utf8')::jsonb from net.http_request_queue q
     where q.url = 'https://chat.example/originals' order by q.id $$;

select t.add_emails('em_1', 'em_2');
select enqueue_document_job('fetch_email', email_id('em_1'));
update document_jobs set run_after = now() - interval '2 minutes';
select enqueue_document_job('fetch_email', email_id('em_2'));
update document_jobs set run_after = now() - interval '1 minute' where fax_received_email_id = email_id('em_2');
create table t.held (email text primary key, job public.document_jobs);
insert into t.held select 'em_1', j from claim_document_jobs('fetch_email', 1, '5 minutes') j;
insert into t.held select 'em_2', j from claim_document_jobs('fetch_email', 1, '5 minutes') j;
-- The same job as a worker that lost it holds it: another generation.
create function t.stale(p_job public.document_jobs) returns public.document_jobs language plpgsql as $$
begin
    p_job.generation := p_job.generation + 98;
    return p_job;
end $$;
create function t.h(p_email text default 'em_1') returns public.document_jobs language sql as $$
    select job from t.held where email = p_email $$;
create function t.key(p_email text, p_name text) returns text language sql as $$
    select format('fax_received_emails/%s/%s', t.email_id(p_email), p_name) $$;
create function t.version(p_version int, p_size bigint, p_digit text, p_name text, p_email text default 'em_1')
returns jsonb language sql as $$
    select jsonb_build_object('version', p_version, 'size_bytes', p_size, 'sha256', repeat(p_digit, 64),
                              'bucket', 'fax-attachments', 'storage_path', t.key(p_email, p_name)) $$;
create function t.record(p_versions jsonb, p_job public.document_jobs default t.h(), p_attachment text default 'att_1')
returns jsonb language sql as $$
    select record_document_attachment_v3(p_job.id, p_job.generation, p_attachment, '請求書.pdf', 'application/pdf',
                                         p_versions, '5 minutes') $$;
create function t.rows(p_attachment text default 'att_1') returns text language sql as $$
    select string_agg(format('%s:%s:%s:%s', a.version, a.size_bytes, left(a.sha256, 1),
                             split_part(a.storage_path, '/', 3)), ' ' order by a.version)
      from fax_received_email_attachments a where a.provider_attachment_id = p_attachment $$;

-- Versions, recorded together and never updated
select is(t.record(jsonb_build_array(t.version(1, 908, 'a', 'att_1.pdf'))),
          '{"held": true, "state": "running", "added": 1, "versions": 1}', 'the holder records version 1');
select is(t.rows(), '1:908:a:att_1.pdf', '... which is its row');
select is(t.record(jsonb_build_array(t.version(1, 908, 'a', 'att_1.pdf'))),
          '{"held": true, "state": "running", "added": 0, "versions": 1}',
          'recording the same version again is a no-op (a worker that died before its answer)');
select throws_ok($$ select t.record(jsonb_build_array(t.version(1, 300, 'c', 'att_1.pdf'))) $$, '23505', null,
                 'other bytes for a recorded version are refused, never written over it');
select is(t.rows(), '1:908:a:att_1.pdf', '... and the row is as it was recorded');
select is((select count(*)::int from t.alerts()), 0, 'one version: no alert');

select is(t.record(jsonb_build_array(t.version(1, 908, 'a', 'att_1.pdf'), t.version(2, 300, 'c', 'att_1.v2.pdf'))),
          '{"held": true, "state": "running", "added": 1, "versions": 2}',
          'a version beside the recorded one is added, the recorded one unchanged');
select is(t.rows(), '1:908:a:att_1.pdf 2:300:c:att_1.v2.pdf', '... both are rows of the attachment');
select is((select count(*)::int from t.alerts()), 1, 'the second version posts the alert original_differs ...');
select is((select a ->> 'event' from t.alerts() a), 'original_differs', '... named so');
select is((select jsonb_path_query_array(a -> 'versions', '$[*].sha256') from t.alerts() a),
          jsonb_build_array(repeat('a', 64), repeat('c', 64)), '... with both versions'' SHA-256');
select is((select a ->> 'advice_ja' from t.alerts() a), document_jobs_internal.finding_advice_ja('original_differs'),
          '... and the advice in Japanese (and English)');
select ok((select (a - 'versions')::text from t.alerts() a) like '%' || repeat('c', 64) || '%',
          'the chat message quotes the versions too');
select is(t.record(jsonb_build_array(t.version(1, 908, 'a', 'att_1.pdf'), t.version(2, 300, 'c', 'att_1.v2.pdf'))),
          '{"held": true, "state": "running", "added": 0, "versions": 2}', 'recording both again adds nothing ...');
select is((select count(*)::int from t.alerts()), 1, '... and alerts no more: once per attachment');

select throws_ok($$ select t.record(jsonb_build_array(t.version(1, 5, 'd', 'att_1.pdf')), t.h(), 'att_other') $$,
                 '23505', null, 'an object another row records is refused: one object, one record');
select throws_ok($$ select t.record(jsonb_build_array(t.version(1, 5, 'd', 'att_9.pdf', 'em_2'))) $$, '22023', null,
                 'a key outside the job''s e-mail''s originals is refused');
select throws_ok($$ select t.record(jsonb_build_array(t.version(1, 5, 'd', 'att_9.pdf'), t.version(1, 6, 'e', 'x.pdf'))) $$,
                 '22023', 'p_versions names a version twice', 'a version named twice is refused');
select throws_ok($$ select t.record('[]') $$, '22023', 'p_versions must be an array of 1 to 100 versions',
                 'no version is refused');
select is(t.record(jsonb_build_array(t.version(1, 5, 'd', 'att_9.pdf')), t.stale(t.h())),
          '{"held": false, "state": null}', 'a worker that lost its job records nothing');
select is((select count(*)::int from fax_received_email_attachments a where a.storage_path like '%att_9%'), 0,
          '... no row');

-- The previous deploy's record_document_attachment_v2: version 1, never an update
select is(record_document_attachment_v2((t.h()).id, (t.h()).generation, 'att_2', 'b.pdf', 'application/pdf', 10,
                                         repeat('b', 64), 'fax-attachments', t.key('em_1', 'att_2.pdf')),
          '{"held": true, "state": "running"}', 'v2 records version 1');
select is(t.rows('att_2'), '1:10:b:att_2.pdf', '... as its row');
select lives_ok($$ select record_document_attachment_v2((t.h()).id, (t.h()).generation, 'att_2', 'b.pdf',
                   'application/pdf', 10, repeat('b', 64), 'fax-attachments', t.key('em_1', 'att_2.pdf')) $$,
                'v2 with the same values again is a no-op');
select throws_ok($$ select record_document_attachment_v2((t.h()).id, (t.h()).generation, 'att_2', 'b.pdf',
                    'application/pdf', 300, repeat('c', 64), 'fax-attachments', t.key('em_1', 'att_2.pdf')) $$,
                 '23505', null, 'v2 with other bytes is refused: its upsert no longer overwrites the row');
select is(t.rows('att_2'), '1:10:b:att_2.pdf', '... which stays as recorded');

-- The discard, decided under the fence
create function t.discard(p_name text, p_job public.document_jobs default t.h(), p_email text default 'em_1')
returns jsonb language sql as $$
    select discard_unrecorded_object_v2(p_job.id, p_job.generation, 'fax-attachments', t.key(p_email, p_name), 20,
                                        repeat('f', 64), 'DownloadError: more than the 20 bytes listed') $$;
select is(t.discard('att_1.pdf'), '{"held": true, "state": "running", "discard": false}',
          'a recorded object may not be deleted, even by the holder');
select is(t.discard('att_1.v2.pdf'), '{"held": true, "state": "running", "discard": false}', '... nor its version');
select is(t.discard('att_3.pdf', t.stale(t.h())), '{"held": false, "state": null, "discard": false}',
          'a worker that lost its job may delete nothing');
select is((select count(*)::int from document_jobs_internal.discarded_objects), 0, '... and nothing is listed');
select throws_ok($$ select t.discard('att_1.pdf', t.h('em_1'), 'em_2') $$, '22023', null,
                 'another e-mail''s object may not be deleted by this job');
select throws_ok($$ select discard_unrecorded_object_v2((t.h()).id, (t.h()).generation, 'fax-attachments',
                    format('fax_views/%s/x/view.pdf', email_id('em_1')), 1, repeat('f', 64), 'x') $$,
                 '22023', null, 'nor a derived file: only originals of the job''s own e-mail');
select is(t.discard('att_3.pdf'), '{"held": true, "state": "running", "discard": true}',
          'an object no row records may be deleted by the holder');
select is((select (d.storage_path, d.job_id, d.generation, d.size_bytes, d.reason)
             from document_jobs_internal.discarded_objects d),
          (t.key('em_1', 'att_3.pdf'), (t.h()).id, (t.h()).generation, 20::bigint,
           'DownloadError: more than the 20 bytes listed'::text),
          '... which is listed with what was sent and why');
select throws_ok($$ select t.record(jsonb_build_array(t.version(1, 20, 'f', 'att_3.pdf')), t.h(), 'att_3') $$,
                 '55000', null, 'a key given up is never recorded afterwards, by the holder either');
select throws_ok($$ select record_document_attachment_v2((t.h()).id, (t.h()).generation, 'att_3', 'c.pdf',
                    'application/pdf', 20, repeat('f', 64), 'fax-attachments', t.key('em_1', 'att_3.pdf')) $$,
                 '55000', null, '... nor through v2');
select is((select s -> 'discarded_paths'
             from start_fetch_email_v2((t.h()).id, (t.h()).generation, 0) s),
          jsonb_build_array(jsonb_build_object('bucket', 'fax-attachments', 'storage_path', t.key('em_1', 'att_3.pdf'))),
          'start_fetch_email_v2 names the keys given up, for the next attempt to store beside');
select is((select s -> 'stored_attachment_ids' from start_fetch_email_v2((t.h()).id, (t.h()).generation, 0) s),
          '["att_1", "att_2"]', '... and each stored attachment once, whatever its versions');

-- The raw message
create function t.raw(p_versions jsonb, p_unavailable text default null, p_email text default 'em_1')
returns jsonb language sql as $$
    select record_raw_message_v2((t.h(p_email)).id, (t.h(p_email)).generation, p_versions, p_unavailable) $$;
select is((select s -> 'raw_message_recorded' from start_fetch_email_v2((t.h()).id, (t.h()).generation, 0) s),
          'false', 'no raw message recorded yet');
select is(t.raw(jsonb_build_array(t.version(1, 4000, 'e', 'raw/message.eml'))),
          '{"held": true, "state": "running", "added": 1, "versions": 1}', 'the raw message is recorded');
select is((select (r.size_bytes, r.sha256, r.unavailable) from fax_received_email_raw_messages r
            where r.fax_received_email_id = email_id('em_1')),
          (4000::bigint, repeat('e', 64), null::text), '... with its own size and SHA-256');
select is((select s -> 'raw_message_recorded' from start_fetch_email_v2((t.h()).id, (t.h()).generation, 0) s),
          'true', '... which the next attempt is told');
select throws_ok($$ select t.raw(jsonb_build_array(t.version(1, 4000, 'e', 'message.eml'))) $$, '22023', null,
                 'a raw message''s key is under the e-mail''s raw/ folder');
select throws_ok($$ select t.raw(null, 'raw_null') $$, '23505', null,
                 'a stored raw message cannot be noted unavailable afterwards');
select is(t.raw(null, 'raw_null', 'em_2'), '{"held": true, "state": "running", "added": 1, "versions": 0}',
          'raw null: why there is none is noted');
select is(t.raw(null, 'raw_null', 'em_2'), '{"held": true, "state": "running", "added": 0, "versions": 0}',
          '... once');
select throws_ok($$ select t.raw(jsonb_build_array(t.version(1, 1, 'e', 'raw/message.eml', 'em_2')), null, 'em_2') $$,
                 '23505', null, 'a raw message noted unavailable is not replaced by one');

-- Records of the received fax: readable by service_role only, closed to clients
select table_privs_are('public', 'fax_received_email_raw_messages', 'service_role', array['SELECT'],
                       'service_role may read the raw messages, never write them but through the functions');

select * from finish();
rollback;
