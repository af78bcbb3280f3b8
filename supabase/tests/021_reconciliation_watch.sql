-- Reconciliation watched: an unreadable listing item noted once, a run cut short by a finding
-- that keeps the watermark, the outages reconciliation_stalled, retention_window_closing and
-- reconciliation_unreadable (each alerts once, no hourly reminder, once more when its level
-- rises), webhooks_missing reopening only for an e-mail received after it closed, and no failure
-- alert for a failed reconcile_emails job.
-- The run by hand checks its actor's row in auth.users (20261204110000): the admin is written as
-- Auth writes its users, as supabase_auth_admin, which postgres cannot become; so this file runs on
-- the stack's superuser connection, as postgres except for that row (as 018 does).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs (the reconciliation's enqueue, the health check) wait for this file's rollback.
lock table public.document_jobs, public.document_jobs_reconciliation, document_jobs_internal.outages in exclusive mode;
set local search_path = public, extensions, t;
select plan(41);

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
values ('a0000000-0000-0000-0000-00000000000a', 'authenticated', 'authenticated', 'op-021@example.com',
        '{"provider": "email", "document_jobs_role": "admin"}', '{}', now(), now());
set local role postgres;

select vault.create_secret('http://127.0.0.1:9/chat', 'document_jobs_alert_url');
-- The alerts queued for pg_net in this transaction, of one event (and one cause).
create function t.alerts(p_event text, p_cause text default null) returns int language sql as $$
    select count(*)::int from net.http_request_queue q
     where convert_from(q.body, 'UTF8')::jsonb ->> 'event' = p_event
       and (p_cause is null or convert_from(q.body, 'UTF8')::jsonb ->> 'cause' = p_cause) $$;
create function t.last_alert(p_cause text) returns jsonb language sql as $$
    select convert_from(q.body, 'UTF8')::jsonb from net.http_request_queue q
     where convert_from(q.body, 'UTF8')::jsonb ->> 'cause' = p_cause order by q.id desc limit 1 $$;
create function t.active(p_cause text) returns boolean language sql as $$
    select o.active from document_jobs_internal.outages o where o.cause = p_cause $$;
create function t.check() returns int language sql as $$ select document_jobs_internal.check_reconciliation() $$;
create function t.item(p_id text, p_age interval) returns jsonb language sql as $$
    select jsonb_build_object('id', p_id, 'created_at', to_char((now() - p_age) at time zone 'UTC',
                              'YYYY-MM-DD HH24:MI:SS.US"+00"'), 'from', 'fax@example.jp', 'subject', 'FAX') $$;
create function t.unreadable(p_fingerprint text, p_id text default null) returns jsonb language sql as $$
    select jsonb_build_array(jsonb_build_object('fingerprint', p_fingerprint, 'provider_email_id', p_id,
        'reason', 'a created_at that is not a time',
        'item', jsonb_build_object('id', p_id, 'created_at', 'null', 'from', 'ABC商事 <fax@abc.example.jp>'))) $$;

truncate document_jobs_internal.unreadable_listed_emails;
update document_jobs_internal.outages set active = false, since = null, alerted_at = null, alerted_level = null;
update public.document_jobs_reconciliation
   set watermark = now() - interval '20 minutes', last_completed_at = now(), run_started_at = null,
       cursor = null, retention = default, every_minutes = 10, outage_closed_at = null, missing_received_at = null,
       late_after_close = 0, last_finding = null;
delete from public.document_jobs;
select is(t.check(), 0, 'a reconciliation that keeps up: nothing to tell');

-- The run, and an unreadable item noted once however often it is listed.
select isnt(public.enqueue_document_jobs_reconciliation(), null, 'a run');
create temporary table claimed as select * from public.claim_document_jobs('reconcile_emails', 1, interval '5 minutes');
select is(public.record_reconciled_emails_v3((select id from claimed), (select generation from claimed),
              jsonb_build_array(t.item('em_ok', interval '30 minutes')), t.unreadable('id:a', 'em_odd')) ->> 'unreadable_new',
          '1', 'an unreadable item is noted');
select is(public.record_reconciled_emails_v3((select id from claimed), (select generation from claimed),
              '[]', t.unreadable('id:a', 'em_odd')) ->> 'unreadable_new', '0', 'listed again, it is not noted twice');
select is((select count(*)::int from document_jobs_internal.unreadable_listed_emails), 1, 'one row for it');
select is((select count(*)::int from fax_received_emails where provider_email_id = 'em_ok'), 1, 'the readable one is recorded');
select throws_ok($$ select public.record_reconciled_emails_v3((select id from claimed), (select generation from claimed),
                          (select jsonb_agg(t.item('em_' || n, interval '1 hour')) from generate_series(1, 101) n)) $$,
                 '22023', null, 'the database takes at most 100 e-mails a call (the worker sends batches)');

-- A finding ends the run and keeps the watermark; the next run starts from the newest page.
select is(public.finish_reconciliation_v3((select id from claimed), (select generation from claimed), 200,
                                          now(), null, 'Resend answered the same page again', 1) ->> 'continues',
          'false', 'a run cut short by a finding does not continue');
select results_eq(
    $$ select watermark = now() - interval '20 minutes', cursor, last_finding, last_completed_at = now(), last_unreadable,
              run_started_at from document_jobs_reconciliation $$,
    $$ values (true, null::text, 'Resend answered the same page again', true, 1, null::timestamptz) $$,
    'the watermark stays, no cursor is kept, the finding and the unreadable count are the last run''s');
select public.complete_document_job_v2((select id from claimed), (select generation from claimed));
select is((select count(*)::int from document_jobs where kind = 'reconcile_emails' and status = 'queued'), 0,
          'no follow-up: the next scheduled run starts again from the newest page');

-- reconciliation_unreadable: one alert per unreadable item, shown with what can be read of it.
select is(t.check(), 1, 'the unreadable item alerts');
select is(t.active('reconciliation_unreadable'), true, 'reconciliation_unreadable opens');
select matches(t.last_alert('reconciliation_unreadable') ->> 'text', 'cannot read \(a created_at that is not a time\)',
               'the alert says why, in the check''s words');
select is(strpos(t.last_alert('reconciliation_unreadable') ->> 'text', 'ABC商事'), 0,
          'the sender''s text is never a line of the alert');
select is((public.document_jobs_admin_overview() -> 'outages' -> 0 -> 'details' -> 'emails' -> 0 -> 'item' ->> 'from'),
          'ABC商事 <fax@abc.example.jp>', 'the overview shows what can be read of it');
update document_jobs_internal.outages set since = now() - interval '3 hours', alerted_at = now() - interval '2 hours'
 where cause = 'reconciliation_unreadable';  -- two hours pass
select is(t.check(), 0, 'no hourly reminder');
select public.admin_record_reconciled_emails('a0000000-0000-0000-0000-00000000000a', 'op@example.com', '[]',
                                             now() - interval '1 hour', 1, t.unreadable('item:b'));
select is(t.check(), 1, 'a new unreadable item alerts once more');
select t.add_emails('em_odd');
update document_jobs_internal.unreadable_listed_emails set first_listed_at = now() - interval '2 days'
 where fingerprint = 'item:b';
select is(t.check(), 1, 'recorded (its webhook came) or past retention, none is open: closed, with a recovered alert');
select is(t.alerts('document_jobs_recovered', 'reconciliation_unreadable'), 1, 'the recovered alert');

-- reconciliation_stalled: three intervals without a completed run, alert once, close on completion.
update public.document_jobs_reconciliation set last_completed_at = now() - interval '29 minutes';
select is(t.check(), 0, 'within three intervals: not stalled');
update public.document_jobs_reconciliation set last_completed_at = now() - interval '31 minutes';
select is(t.check(), 1, 'three intervals without a completed run: stalled, one alert');
select matches(t.last_alert('reconciliation_stalled') ->> 'text', 'Last error: .*the same page again',
               'the last finding is its evidence, quoted');
update document_jobs_internal.outages set since = now() - interval '3 hours', alerted_at = now() - interval '2 hours'
 where cause = 'reconciliation_stalled';  -- two hours pass
select is(t.check(), 0, 'told once: no hourly reminder');
update public.document_jobs_reconciliation set last_completed_at = now(), run_started_at = now() - interval '61 minutes';
select is(t.check(), 0, 'a run under way for over an hour: still stalled, still told');
update public.document_jobs_reconciliation set run_started_at = null;
select is(t.check(), 1, 'a run completed: closed, with a recovered alert');
select is((t.alerts('document_jobs_outage', 'reconciliation_stalled'), t.alerts('document_jobs_recovered', 'reconciliation_stalled')),
          (1, 1), 'one alert down, one up');

-- The retention window (1 day): half, then three quarters, each once.
update public.document_jobs_reconciliation set watermark = now() - interval '13 hours';
select is(t.check(), 1, 'half of the window: a warning');
select matches(t.last_alert('retention_window_closing') ->> 'summary',
               'more than half of the 1 day .* unrecoverable from .*document-jobs-admin reconcile --since \d{4}-\d\d-\d\dT',
               'it names the date and the command');
select is(t.check(), 0, 'once');
update public.document_jobs_reconciliation set watermark = now() - interval '19 hours';
select is(t.check(), 1, 'three quarters: once more');
select matches(t.last_alert('retention_window_closing') ->> 'summary', 'three quarters', 'saying so');
update public.document_jobs_reconciliation set watermark = now() - interval '15 minutes';
select is(t.check(), 1, 'the watermark moved: closed, with a recovered alert');

-- A failed reconcile_emails job sends no failure alert (it feeds reconciliation_stalled).
select isnt(public.enqueue_document_jobs_reconciliation(), null, 'another run');
create temporary table failing as select * from public.claim_document_jobs('reconcile_emails', 1, interval '5 minutes');
select public.fail_document_job_v2((select id from failing), (select generation from failing),
                                   'resend_malformed_response', 'attachment list: not JSON', false);
select is(t.alerts('document_job_failed'), 0, 'no "Fax not fetched" for a failed reconciliation');

-- webhooks_missing: a late e-mail received before it closed reopens nothing and is counted.
create function t.by_hand(p_id text, p_age interval) returns jsonb language sql as $$
    select public.admin_record_reconciled_emails('a0000000-0000-0000-0000-00000000000a', 'op@example.com',
                                                 jsonb_build_array(t.item(p_id, p_age)), now() - interval '20 hours', 1) $$;
create function t.check_missing() returns int language sql as $$ select document_jobs_internal.check_webhooks_missing() $$;
update public.document_jobs_reconciliation set missing_received_at = null;  -- em_ok's, above, forgotten
select t.by_hand('em_late1', interval '3 hours');
select is(t.check_missing(), 1, 'a late e-mail opens webhooks_missing, with an alert');
select is((select duplicate from record_inbound_email('em_hook', 'msg_hook', t.item('em_hook', interval '-1 second'))),
          false, 'a webhook delivers an e-mail received after it opened');
select is(t.check_missing(), 1, 'it closes, with a recovered alert');
-- Two hours pass: the one-alert-an-hour rule no longer holds anything back.
update public.document_jobs_reconciliation set outage_closed_at = now() - interval '2 hours';
update document_jobs_internal.outages set alerted_at = now() - interval '3 hours' where cause = 'webhooks_missing';
select is((t.by_hand('em_late2', interval '2 hours') ->> 'late_after_close')::int, 1,
          'a run after the recovery records an e-mail received during the outage, late');
select is(t.check_missing(), 0, 'it reopens nothing and sends nothing');
select is((select (late_after_close, t.active('webhooks_missing')) from document_jobs_reconciliation), (1, false),
          'it is counted where reconciliation keeps its figures');
select t.by_hand('em_late3', interval '30 minutes');
select is((t.check_missing(), t.active('webhooks_missing')), (1, true),
          'an e-mail received after it closed and found late opens it again');
select * from finish();
rollback;
