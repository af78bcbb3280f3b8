-- export_documents, the export's read: service_role's alone; a cursor over (created_at, id) that
-- hands out every row of its window once (the attachments and the stored raw messages, not a raw
-- message's record of why there is none), ties included, a bounded number read per call; the
-- filter by the day a document is filed on (its 取引年月日, else the day it was received in the
-- office's time zone), the received time with the office's offset, which of its fax's originals
-- each is, the first call's count, and a window that ends five minutes ago unless told.
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(18);

select ok(has_function_privilege('service_role',
          'public.export_documents(date,date,timestamptz,timestamptz,timestamptz,uuid,integer)', 'execute'),
          'service_role may call export_documents');
select ok(not has_function_privilege('authenticated',
              'public.export_documents(date,date,timestamptz,timestamptz,timestamptz,uuid,integer)', 'execute')
          and not has_function_privilege('anon',
              'public.export_documents(date,date,timestamptz,timestamptz,timestamptz,uuid,integer)', 'execute'),
          'authenticated and anon may not');

-- Fax A, received at 23:30 UTC on 1 March 2001 (the 2nd in Tokyo), not indexed, three originals
-- (two versions of one attachment and a second attachment; two of them recorded in one
-- transaction, so at one time); fax B, indexed as a transaction of 27 February, one original.
-- The year keeps them apart from any other row of the database.
insert into public.fax_received_emails (provider_email_id, data, from_address, received_at)
values ('em_export_a', '{}', 'a@example.jp', '2001-03-01 23:30:00+00'),
       ('em_export_b', '{}', 'b@example.jp', '2001-03-05 10:00:00+09');
insert into public.fax_index (fax_received_email_id, received, transaction_date, amount, counterparty, doc_type, updated_by)
values (t.email_id('em_export_b'), '2001-03-05 10:00:00+09', '2001-02-27', 500, 'ヤマダ商事', '請求書', gen_random_uuid());
insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
            content_type, size_bytes, sha256, bucket, storage_path, version, created_at, updated_at)
values (t.email_id('em_export_a'), 'att_1', 'a.pdf', 'application/pdf', 1, repeat('1', 64), 'fax-attachments', 'export/a1',
        1, '2001-03-02 00:00:00+00', '2001-03-02 00:00:00+00'),
       (t.email_id('em_export_a'), 'att_2', 'b.pdf', 'application/pdf', 2, repeat('2', 64), 'fax-attachments', 'export/a2',
        1, '2001-03-02 00:00:00+00', '2001-03-02 00:00:00+00'),
       (t.email_id('em_export_a'), 'att_1', 'a.pdf', 'application/pdf', 3, repeat('3', 64), 'fax-attachments', 'export/a3',
        2, '2001-03-02 00:00:05+00', '2001-03-02 00:00:05+00'),
       (t.email_id('em_export_b'), 'att_1', 'c.pdf', 'application/pdf', 4, repeat('4', 64), 'fax-attachments', 'export/b1',
        1, '2001-03-05 01:00:00+00', '2001-03-05 01:00:00+00');
-- A's e-mail itself is stored; B's could not be had (no raw URL), which leaves nothing to export.
insert into public.fax_received_email_raw_messages (fax_received_email_id, bucket, storage_path, size_bytes, sha256,
            created_at)
values (t.email_id('em_export_a'), 'fax-attachments', 'export/a-raw', 9, repeat('9', 64), '2001-03-02 00:00:02+00');
insert into public.fax_received_email_raw_messages (fax_received_email_id, unavailable, created_at)
values (t.email_id('em_export_b'), 'raw_null', '2001-03-05 01:00:00+00');

-- Every page of a walk with one row read per call, into t.walked.
create table t.walked (n int generated always as identity, page jsonb);
create function t.walk(p_from date, p_to date) returns void language plpgsql as $$
declare
    v_page jsonb;
    v_after jsonb;
begin
    delete from t.walked;
    loop
        v_page := public.export_documents(p_from, p_to, '2001-01-01', '2001-12-31', (v_after ->> 'at')::timestamptz,
                                          (v_after ->> 'id')::uuid, 1);
        insert into t.walked (page) values (v_page);
        v_after := v_page -> 'next';
        exit when v_after is null or jsonb_typeof(v_after) = 'null';
    end loop;
end $$;
create function t.rows() returns setof jsonb language sql as $$
    select r from t.walked w, jsonb_array_elements(w.page -> 'rows') with ordinality e(r, i) order by w.n, e.i $$;

select t.walk(null, null);
select results_eq($$ select r ->> 'storage_path' from t.rows() r $$,
                  $$ select storage_path from (
                         select storage_path, created_at, id from public.fax_received_email_attachments
                         union all
                         select storage_path, created_at, id from public.fax_received_email_raw_messages
                          where unavailable is null) o
                      where storage_path like 'export/%' order by created_at, id $$,
                  'one call at a time, the cursor hands out every original and stored raw message of the window once, in recording order');
select is((select count(*)::int from t.walked), 6, 'one row read per call: five pages and the last, empty');
select results_eq($$ select r ->> 'kind' from t.rows() r where r ->> 'storage_path' in ('export/a-raw', 'export/a1') order by 1 $$,
                  $$ values ('attachment'), ('raw_message') $$, 'each row says what it is');
select is((select (page ->> 'total')::int from t.walked order by n limit 1), 5, 'the first call counts the whole export');
select is((select count(*)::int from t.walked where page ? 'total' and page -> 'total' <> 'null'), 1,
          '... and only the first');

select t.walk('2001-03-02', '2001-03-02');
select results_eq($$ select r ->> 'storage_path', r ->> 'filed_on', r ->> 'dated_by', r ->> 'received',
                            (r ->> 'of_fax')::int from t.rows() r order by r ->> 'storage_path' $$,
                  $$ values ('export/a-raw', '2001-03-02', 'received', '2001-03-02T08:30:00+09:00', 1),
                            ('export/a1', '2001-03-02', 'received', '2001-03-02T08:30:00+09:00', 3),
                            ('export/a2', '2001-03-02', 'received', '2001-03-02T08:30:00+09:00', 3),
                            ('export/a3', '2001-03-02', 'received', '2001-03-02T08:30:00+09:00', 3) $$,
                  'without an index a document is filed by the day it was received in the office''s time zone');
select results_eq($$ select (r ->> 'nth')::int from t.rows() r where r ->> 'kind' = 'attachment' $$,
                  $$ values (1), (2), (3) $$,
                  'each original of a fax has its own number, by the order they were recorded');
select is((select (page ->> 'total')::int from t.walked order by n limit 1), 4, 'the count holds the filter');

select t.walk('2001-02-27', '2001-02-27');
select results_eq($$ select r ->> 'storage_path', r ->> 'dated_by', (r ->> 'amount')::int, r ->> 'counterparty',
                            r ->> 'doc_type', r ->> 'transaction_date', r ->> 'sender' from t.rows() r $$,
                  $$ values ('export/b1', 'transaction', 500, 'ヤマダ商事', '請求書', '2001-02-27', 'b@example.jp') $$,
                  'an indexed fax is filed by its 取引年月日, with its index and its sender');

update public.office_settings set time_zone = 'America/New_York';
select t.walk('2001-03-01', '2001-03-01');
select results_eq($$ select r ->> 'received', r ->> 'filed_on' from t.rows() r limit 1 $$,
                  $$ values ('2001-03-01T18:30:00-05:00', '2001-03-01') $$,
                  'the office''s time zone decides the received day and the offset');
select is((select page ->> 'time_zone' from t.walked order by n limit 1), 'America/New_York', 'and is answered');

-- The default window's end: five minutes ago, so a row recorded now is left for the next export.
insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
            size_bytes, sha256, bucket, storage_path)
values (t.email_id('em_export_b'), 'att_now', 'application/pdf', 5, repeat('5', 64), 'fax-attachments', 'export/now');
select ok((export_documents() ->> 'stored_before')::timestamptz
          between statement_timestamp() - interval '5 minutes 1 second' and statement_timestamp() - interval '5 minutes',
          'without p_stored_before the window ends five minutes ago');
select is((select count(*)::int from jsonb_array_elements(
              export_documents(null, null, now() - interval '1 hour') -> 'rows') r
           where r ->> 'storage_path' = 'export/now'), 0,
          'a row recorded in the last five minutes is not in it');

select throws_ok($$ select export_documents(null, null, null, null, null, null, 0) $$, '22023',
                 'p_scan must be between 1 and 1000', 'p_scan is bounded');
select throws_ok($$ select export_documents(null, null, null, null, now(), null) $$, '22023',
                 'p_after_at and p_after_id go together (the cursor)', 'a cursor is whole');
select throws_ok($$ select export_documents('2001-03-02', '2001-03-01') $$, '22023',
                 'p_from must be on or before p_to', 'a date range runs forward');

select * from finish();
rollback;
