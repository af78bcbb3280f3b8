-- The inbox's read (20261207130000): one row per e-mail, newest first by its received time, in
-- keyset pages that neither skip nor repeat; filters by received time, sender text, number digits
-- (a full-width number in a subject found by ASCII digits), line (a To with a display name too)
-- and search term, each through an index or a walk; how each fax stands (stored, fetching, failed
-- with its code) from its jobs, and a fax whose completed jobs were purged still listed as stored,
-- with its pages and thumbnail from its attachments' views. A filter key it does not know is
-- refused.
begin;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback (see 009).
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(28);

-- Nothing else in the inbox (the stack's own e-mails, if any, are older than these and left out by time).
create function t.received(p_minutes_ago int) returns text language sql as $$
    select to_char((now() - make_interval(mins => p_minutes_ago)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;
create function t.fax(p_id text, p_minutes_ago int, p_from text, p_subject text, p_to text) returns void language sql as $$
    select null from public.record_inbound_email(p_id, 'msg_' || p_id, jsonb_build_object(
        'email_id', p_id, 'created_at', t.received(p_minutes_ago), 'from', p_from, 'subject', p_subject,
        'to', jsonb_build_array(p_to))) $$;
select t.fax('em_inbox_1', 50, 'eFax <message@efax.example.jp>', 'eFax メッセージ 送信元 ０６－１１１１－２２２２ - 3 ページ',
             'fax-honsha@office.example.jp');
select t.fax('em_inbox_2', 40, '株式会社山田商事 <seikyu@yamada-shoji.example.jp>', '【請求書】2026年11月分',
             '営業部 <FAX-Eigyo@office.example.jp>');
select t.fax('em_inbox_3', 30, 'scanner@office.example.jp', 'From "0312345678" ("YAMADA") (Fax Message No. 12)',
             'fax-honsha@office.example.jp');
select t.fax('em_inbox_4', 20, 'fax@sato.example.jp', 'FAX 佐藤工業', 'other@office.example.jp');
select t.fax('em_inbox_5', 10, 'fax@sato.example.jp', 'FAX 佐藤工業 2', 'fax-honsha@office.example.jp');
select set_fax_line('fax-honsha@office.example.jp', '本社', '0312345678');
select set_fax_line('営業部 <fax-eigyo@office.example.jp>', '営業部', null);

create function t.ids(p_page jsonb) returns text[] language sql as $$
    select array(select (select e.provider_email_id from fax_received_emails e where e.id = (f ->> 'id')::uuid)
                   from jsonb_array_elements(p_page -> 'faxes') f) $$;
create function t.page(p_filter jsonb, p_limit int default 50) returns jsonb language sql as $$
    select document_jobs_admin_faxes(p_filter || jsonb_build_object('received_from', now() - interval '2 hours'),
                                     null, null, p_limit) $$;
create function t.row_of(p_provider_email_id text) returns jsonb language sql as $$
    select f from jsonb_array_elements(t.page('{}') -> 'faxes') f
     where (f ->> 'id')::uuid = t.email_id(p_provider_email_id) $$;

-- Order, pages and counts.
select is(t.ids(t.page('{}')), array['em_inbox_5', 'em_inbox_4', 'em_inbox_3', 'em_inbox_2', 'em_inbox_1'],
          'the inbox lists every e-mail, newest received first');
select is((t.page('{}') ->> 'count')::int, 5, '... counted on the first page');
select is(t.ids(t.page('{}', 2)), array['em_inbox_5', 'em_inbox_4'], 'a page holds p_limit faxes ...');
select is(t.ids(document_jobs_admin_faxes(jsonb_build_object('received_from', now() - interval '2 hours'),
                                          (t.page('{}', 2) -> 'next' ->> 'received_at')::timestamptz,
                                          (t.page('{}', 2) -> 'next' ->> 'id')::uuid, 2)),
          array['em_inbox_3', 'em_inbox_2'], '... and the next page starts after its last one');
select is(t.ids(document_jobs_admin_faxes(jsonb_build_object('received_from', now() - interval '2 hours'),
                                          now() - interval '20 minutes', t.email_id('em_inbox_4'), 50)),
          array['em_inbox_3', 'em_inbox_2', 'em_inbox_1'], '... whatever the page size');
select is(t.ids(document_jobs_admin_faxes(jsonb_build_object('received_from', now() - interval '35 minutes',
                                                             'received_to', now() - interval '15 minutes'))),
          array['em_inbox_4', 'em_inbox_3'], 'received_from and received_to bound the received time');

-- Filters.
select is(t.ids(t.page('{"number": "0611112222"}')), array['em_inbox_1'],
          'a number in full-width characters in the subject is found by its ASCII digits ...');
select is(t.ids(t.page('{"number": "061111"}')), array['em_inbox_1'], '... and by the start of it');
select is(t.ids(t.page('{"number": "06"}')), array['em_inbox_1'], '... and by two digits (a walk, not the index)');
select is(t.ids(t.page('{"sender": "山田商事"}')), array['em_inbox_2'], 'a sender''s name in the From line is found');
select is(t.ids(t.page('{"sender": "佐藤工業"}')), array['em_inbox_5', 'em_inbox_4'], '... and in the subject');
select is(t.ids(t.page('{"sender": "佐藤"}')), array['em_inbox_5', 'em_inbox_4'],
          '... by two characters too (a walk: the trigram index needs three)');
select is(t.ids(t.page('{"line": "fax-honsha@office.example.jp"}')), array['em_inbox_5', 'em_inbox_3', 'em_inbox_1'],
          'a line is the To address its faxes were sent to ...');
select is(t.ids(t.page('{"line": "FAX-EIGYO@office.example.jp"}')), array['em_inbox_2'],
          '... in any case, and a To with a display name is that address');
select is(t.row_of('em_inbox_2') -> 'line', '{"name": "営業部", "number": null, "address": "fax-eigyo@office.example.jp"}',
          'the row names the line that received it');
select is(t.row_of('em_inbox_4') -> 'line', 'null', '... none when no line is named for its To ...');
select is(t.row_of('em_inbox_4') ->> 'to', 'other@office.example.jp', '... whose address it shows instead');
select is(t.ids(t.page('{"q": "em_inbox_3"}')), array['em_inbox_3'], 'the search finds the provider''s e-mail id');
select is(t.ids(t.page(jsonb_build_object('q', t.email_id('em_inbox_2')::text))), array['em_inbox_2'],
          '... and the fax''s own id');
select is(t.page('{"sender": "佐藤", "line": "fax-honsha@office.example.jp"}') -> 'faxes' -> 0 ->> 'subject', 'FAX 佐藤工業 2',
          'filters combine');
select throws_ok($$ select document_jobs_admin_faxes('{"states": ["failed"]}') $$, '22023', null,
                 'a key the inbox does not know is refused');

-- How each fax stands, whatever became of its jobs.
update document_jobs set status = 'failed', attempts = 5, finished_at = now(), last_error_code = 'resend_not_found'
 where id = (t.job('em_inbox_2')).id;
update document_jobs set status = 'completed', attempts = 1, finished_at = now() - interval '40 days'
 where id = (t.job('em_inbox_1')).id;
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                            size_bytes, sha256, bucket, storage_path)
values (t.email_id('em_inbox_1'), 'att_tif', 'fax.tif', 'image/tiff', 100, repeat('a', 64), 'fax-attachments',
        'fax_received_emails/x/att_tif.tif');
insert into fax_attachment_views (attachment_id, source_sha256, page_count, view_path, thumbnail_path)
select a.id, a.sha256, 3, 'fax_views/x/view.pdf', 'fax_views/x/thumbnail.webp' from fax_received_email_attachments a
 where a.provider_attachment_id = 'att_tif';
select is(t.row_of('em_inbox_3') ->> 'storing', 'fetching', 'a fax whose fetch is queued is being fetched');
select is(array[t.row_of('em_inbox_2') ->> 'storing', t.row_of('em_inbox_2') ->> 'error_code'],
          array['failed', 'resend_not_found'], 'one whose fetch failed says so, with the code');
select is(purge_document_jobs(interval '30 days'), 1, 'the completed fetch of 40 days ago is purged ...');
select is(t.ids(t.page('{"number": "0611112222"}')), array['em_inbox_1'], '... and its fax is still listed ...');
select is(array[t.row_of('em_inbox_1') ->> 'storing', t.row_of('em_inbox_1') ->> 'job_id'], array['stored', null],
          '... as stored, no job left to link');
select is((t.row_of('em_inbox_1') ->> 'pages')::int, 3, '... with its pages');
select is(t.row_of('em_inbox_1') -> 'thumbnail', '{"path": "fax_views/x/thumbnail.webp", "bucket": "fax-attachments"}',
          '... and its page-1 thumbnail');

select * from finish();
rollback;
