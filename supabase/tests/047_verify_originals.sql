-- Verification of the stored originals in the database: the weekly cron job and its enqueue (one
-- live job, a kick), the kind claimed after every other, the sample (half among the recent
-- originals), each read judged against its row and recorded once per run, a job's run kept across
-- a start again and fenced, and the outage original_mismatch: one alert for a mismatch not known
-- before, none for the same one found again, one for a new one, a recovered alert when all read
-- as recorded again.
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs (the health check, a tick's kick) wait for this file's rollback.
lock table public.document_jobs, document_jobs_internal.outages in exclusive mode;
set local search_path = public, extensions, t;
select plan(35);

select vault.create_secret('http://127.0.0.1:9/chat', 'document_jobs_alert_url');
select vault.create_secret('http://127.0.0.1:9/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('secret', 'internal_function_secret');
create function t.alerts(p_event text) returns int language sql as $$
    select count(*)::int from net.http_request_queue q
     where convert_from(q.body, 'UTF8')::jsonb ->> 'event' = p_event
       and convert_from(q.body, 'UTF8')::jsonb ->> 'cause' = 'original_mismatch' $$;
create function t.active() returns boolean language sql as $$
    select o.active from document_jobs_internal.outages o where o.cause = 'original_mismatch' $$;
update document_jobs_internal.outages set active = false, since = null, alerted_at = null, alerted_level = null;
delete from public.document_jobs;

-- The schedule and the enqueue.
select results_eq(
    $$ select schedule, command from cron.job where jobname = 'document-jobs-verify' $$,
    $$ values ('0 18 * * 6'::text, 'select public.enqueue_original_verification()'::text) $$,
    'a weekly cron job (Sunday 03:00 in Japan) enqueues the verification');
select is((select count(*)::int from net.http_request_queue), 0, 'no request queued yet');
select isnt(enqueue_original_verification(), null, 'the cron''s call enqueues a verify_originals job');
select is((select count(*)::int from net.http_request_queue q where q.url like '%/api/internal/document-jobs'), 1,
          '... and kicks a worker');
select is(enqueue_original_verification(), null, 'one is live: the next call enqueues nothing');
select is((select count(*)::int from document_jobs where kind = 'verify_originals'), 1, 'one verify_originals job');

-- The claim order: every other kind first.
select results_eq(
    $$ select kind, claim_order from document_job_kinds where claim_order is not null order by claim_order $$,
    $$ values ('reconcile_emails', 1), ('fetch_email', 2), ('prepare_fax', 3), ('verify_originals', 4),
               ('export_faxes', 5) $$,
    'the claim order: reconciliation, fetching, preparing, then verifying');
select t.add_emails('em_a', 'em_b', 'em_old1', 'em_old2', 'em_old3', 'em_old4');
select enqueue_document_job('prepare_fax', email_id('em_a'));
update document_jobs set created_at = now() - interval '1 day', run_after = now() - interval '1 day'
 where kind = 'verify_originals';
select is((select kind from claim_document_job_of_kinds(array['verify_originals', 'prepare_fax'])), 'prepare_fax',
          'a prepare job is claimed before the older verification, named first');
select is((select kind from claim_document_job_of_kinds(array['verify_originals', 'prepare_fax'])), 'verify_originals',
          '... and the verification then');
delete from document_jobs where kind = 'prepare_fax';

-- Six originals: two stored today, four a month ago (each SHA-256 a digit or letter repeated).
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
                                            size_bytes, sha256, bucket, storage_path, created_at)
select email_id(e), 'att_1', 'application/pdf', 10, repeat(d, 64), 'fax-attachments',
       'fax_received_emails/' || email_id(e) || '/att_1.pdf', now() - age
  from (values ('em_a', 'a', interval '0'), ('em_b', 'b', interval '0'), ('em_old1', '1', interval '30 days'),
               ('em_old2', '2', interval '30 days'), ('em_old3', '3', interval '30 days'),
               ('em_old4', '4', interval '30 days')) v(e, d, age);
create function t.att(p_email text) returns uuid language sql as $$
    select id from public.fax_received_email_attachments where fax_received_email_id = t.email_id(p_email) $$;
create function t.read(p_email text, p_size bigint, p_sha text, p_found boolean default true) returns jsonb
language sql as $$
    select jsonb_build_object('attachment_id', t.att(p_email), 'found', p_found, 'size_bytes', p_size, 'sha256', p_sha) $$;

-- The sample: half among the originals stored in the last week, drawn whatever the luck.
select is((select count(*)::int from unnest(document_jobs_internal.original_sample(4, null, interval '7 days')) s(id)
            where id in (t.att('em_a'), t.att('em_b'))), 2, 'a sample of 4 holds both recent originals');
select is(cardinality(document_jobs_internal.original_sample(4, null, interval '7 days')), 4, '... and 4 in all');
select is(cardinality(document_jobs_internal.original_sample(100, null, interval '7 days')), 6,
          'a sample larger than what is stored: every original once');
select is(cardinality(document_jobs_internal.original_sample(10, now() - interval '1 day', interval '7 days')), 2,
          'a sample since a time draws among those stored since');

-- The job: a run drawn on its first start, the same on a start again.
update original_verification set sample = 3;
create temporary table job as select * from document_jobs where kind = 'verify_originals';
create temporary table started as select start_verify_originals_v2((select id from job), (select generation from job)) as s;
select is((select (s ->> 'total')::int from started), 3, 'the job''s run is the sample the setting asks for');
select is((select jsonb_array_length(s -> 'items') from started), 3, '... each original to read');
select ok((select (s -> 'items' -> 0) ?& array['id', 'fax_received_email_id', 'bucket', 'storage_path', 'size_bytes', 'sha256'] from started),
          '... with where it is and what it must be');
select is(start_verify_originals_v2((select id from job), (select generation from job)) ->> 'run_id',
          (select s ->> 'run_id' from started), 'a start again: the same run');
select is(start_verify_originals_v2((select id from job), (select generation from job) + 1) ->> 'held', 'false',
          'another generation holds nothing');
select throws_ok(
    format($$ select record_verified_originals(%s, '[]') $$, (select s ->> 'run_id' from started)), '22023', null,
    'the CLI''s call cannot record a job''s run');

-- A CLI run of every original: a match, a replaced one, a missing one.
create temporary table cli as select start_original_verification() as s;
select is((select (s ->> 'total')::int from cli), 6, 'a run of every stored original');
select is(jsonb_array_length(original_verification_items((select (s ->> 'run_id')::bigint from cli), null, 4)), 4,
          'its items come in pages');
create function t.record(p_checks jsonb) returns jsonb language sql as $$
    select public.record_verified_originals((select (s ->> 'run_id')::bigint from cli), p_checks) $$;
select is(t.record(jsonb_build_array(t.read('em_old1', 10, repeat('1', 64)))) -> 'mismatched', '0'::jsonb,
          'an original read as recorded matches');
select is(t.alerts('document_jobs_outage'), 0, '... and tells nobody');
select is(t.record(jsonb_build_array(t.read('em_old2', 10, repeat('f', 64)), t.read('em_old3', null, null, false)))
              -> 'mismatches',
          jsonb_build_array(jsonb_build_object('attachment_id', t.att('em_old2'), 'outcome', 'sha256_differs'),
                            jsonb_build_object('attachment_id', t.att('em_old3'), 'outcome', 'missing')),
          'another SHA-256, and a missing object, are judged here by what was read');
select ok(t.active(), 'the outage original_mismatch opens');
select is(t.alerts('document_jobs_outage'), 1, '... with one alert for both');
select is(t.record(jsonb_build_array(t.read('em_old2', 10, repeat('f', 64)))) -> 'checked', '0'::jsonb,
          'an original read twice in one run: the first read stands');
select is(jsonb_array_length(original_verification_items((select (s ->> 'run_id')::bigint from cli), null, 100)), 3,
          'the three read are left out of the next page');

-- The job's run finds the same mismatch again (next week): no alert. A new one: one alert.
create function t.job_record(p_checks jsonb) returns jsonb language sql as $$
    select public.record_original_checks_v2((select id from job), (select generation from job),
                                            (select (s ->> 'run_id')::bigint from started), p_checks, interval '5 minutes') $$;
update document_jobs_internal.outages set since = now() - interval '2 hours', alerted_at = now() - interval '2 hours'
 where cause = 'original_mismatch';
create temporary table mine as select jsonb_array_elements(s -> 'items') ->> 'id' as id from started;
-- Each of the job's items read as recorded, but em_old2's, which is still replaced.
select is(t.job_record(coalesce((
    select jsonb_agg(jsonb_build_object('attachment_id', a.id, 'found', true, 'size_bytes', a.size_bytes,
                     'sha256', case when a.id = t.att('em_old2') then repeat('f', 64) else a.sha256 end))
      from fax_received_email_attachments a where a.id::text in (select id from mine)), '[]')) ->> 'held', 'true',
          'the job records its reads, fenced');
select is(t.alerts('document_jobs_outage'), 1, 'a mismatch already known: no alert again, even hours later');
select is((select finished_at is not null from original_verify_runs where job_id = (select id from job)), true,
          'the job''s run is finished once all it drew was read');
select is(t.job_record('[]') ->> 'held', 'true', 'nothing more to record is no error');
update document_jobs_internal.outages set since = now() - interval '2 hours', alerted_at = now() - interval '2 hours'
 where cause = 'original_mismatch';
select t.record(jsonb_build_array(t.read('em_a', 11, repeat('a', 64))));
select is(t.alerts('document_jobs_outage'), 2, 'a mismatch not known before: one more alert');

-- Put back: read as recorded again, each known mismatch goes; the last one closes the outage.
create temporary table cli2 as select start_original_verification() as s;
select public.record_verified_originals((select (s ->> 'run_id')::bigint from cli2), jsonb_build_array(
    t.read('em_old2', 10, repeat('2', 64)), t.read('em_old3', 10, repeat('3', 64)), t.read('em_a', 10, repeat('a', 64))));
select ok(not t.active(), 'every original read as recorded again: the outage closes');
select is(t.alerts('document_jobs_recovered'), 1, '... with a recovered alert');

select * from finish();
rollback;
