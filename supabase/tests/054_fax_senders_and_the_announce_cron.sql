-- The sender as the prepare_fax job reads it (start_prepare_fax_v3 gives it the subject and From,
-- record_fax_sender_v1 records what lib/fax/senders.py read, fenced like every write of a job),
-- the readiness noted whoever changes a job (service_role too), and the cron job that ticks.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(13);

delete from document_jobs_internal.fax_announcements;
select record_inbound_email('em_sender', 'msg_1', jsonb_build_object(
    'from', 'eFax <message@efax.example.jp>', 'subject', 'eFax from YAMADA SHOJI – 1 page(s), caller ID: 06-1111-2222',
    'to', '["fax@office.example"]'));
update document_jobs set status = 'completed' where kind = 'fetch_email';
-- No file: announced at once; a prepare_fax job of it, as the backfill enqueues one.
select is((select stood from document_jobs_internal.fax_announcements
            where fax_received_email_id = t.email_id('em_sender')), 'no_files', 'a fetch that stored no file is ready');
insert into document_jobs (kind, fax_received_email_id) values ('prepare_fax', t.email_id('em_sender'));
create table t.claimed as select * from claim_document_jobs('prepare_fax', 1, interval '5 minutes');

select is(start_prepare_fax_v3((select id from t.claimed), (select generation from t.claimed)) -> 'email',
          jsonb_build_object('id', t.email_id('em_sender'), 'subject', 'eFax from YAMADA SHOJI – 1 page(s), caller ID: 06-1111-2222',
                             'from', 'eFax <message@efax.example.jp>'),
          'start_prepare_fax_v3 gives the job its e-mail''s subject and From');
select is(start_prepare_fax_v3((select id from t.claimed), (select generation from t.claimed)) -> 'attachments', '[]',
          '... and its attachments, as v2 does');
select is(record_fax_sender_v1((select id from t.claimed), (select generation from t.claimed),
              '{"format": "efax", "name": "YAMADA SHOJI", "number": "0611112222", "number_display": "06-1111-2222",
                "number_source": "caller_id"}'),
          '{"held": true, "state": "running"}', 'the holder records the sender');
select is((select (name, number_display) from document_jobs_internal.fax_senders
            where fax_received_email_id = t.email_id('em_sender')), ('YAMADA SHOJI'::text, '06-1111-2222'::text),
          '... as read');
select is(record_fax_sender_v1((select id from t.claimed), (select generation from t.claimed), '{"name": "YAMADA"}')
          ->> 'held', 'true', 'recorded again (the job run again)');
select is((select (name, number) from document_jobs_internal.fax_senders
            where fax_received_email_id = t.email_id('em_sender')), ('YAMADA'::text, null::text), '... it is replaced');
select is(record_fax_sender_v1((select id from t.claimed), (select generation from t.claimed) + 1, '{"name": "X"}'),
          '{"held": false, "state": null}', 'a worker that lost the job records nothing');
select is((select name from document_jobs_internal.fax_senders where fax_received_email_id = t.email_id('em_sender')),
          'YAMADA', '... and nothing changed');
select throws_ok($$ select record_fax_sender_v1((select id from t.claimed), (select generation from t.claimed),
                                                '{"subject": "x"}') $$,
                 '22023', null, 'a key that is not a sender''s field is refused');

-- service_role changing a job by hand: the readiness is noted all the same (the trigger runs as its owner).
select record_inbound_email('em_by_hand', 'msg_2', '{}');
select set_config('t.by_hand', t.email_id('em_by_hand')::text, true);
set local role service_role;
update public.document_jobs set status = 'failed', last_error_code = 'cancelled'
 where fax_received_email_id = current_setting('t.by_hand')::uuid;
reset role;
select is((select stood from document_jobs_internal.fax_announcements
            where fax_received_email_id = t.email_id('em_by_hand')), 'unfetched',
          'a fetch failed by an UPDATE as service_role is noted (security definer trigger)');

select is((select (schedule, command) from cron.job where jobname = 'document-jobs-announce'),
          ('* * * * *'::text, 'select document_jobs_internal.announce_faxes()'::text),
          'the cron job document-jobs-announce ticks every minute');
select ok(not has_table_privilege('service_role', 'document_jobs_internal.fax_senders', 'select')
          and not has_table_privilege('service_role', 'document_jobs_internal.fax_announcements', 'select'),
          'service_role reads neither table directly');

select * from finish();
rollback;
