-- Reconciliation with Resend's list of received e-mails: the reconcile_emails kind (at most one
-- live), recording through the webhook's path (idempotent both ways), the watermark and the
-- follow-up of a run that stops at its page bound, the audited run by hand, and the outage
-- webhooks_missing (opens once, closes on a webhook's e-mail received after it opened).
-- The run by hand checks its actor's row in auth.users (20261204110000): the admin is written
-- as Auth writes its users, as supabase_auth_admin, which postgres cannot become; so this file runs
-- on the stack's superuser connection, as postgres except for that row.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(30);

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
values ('a0000000-0000-0000-0000-00000000000a', 'authenticated', 'authenticated', 'op-018@example.com',
        '{"provider": "email", "document_jobs_role": "admin"}', '{}', now(), now());
set local role postgres;

-- A listed item as Resend's GET /emails/receiving answers it, received p_age ago.
create function t.item(p_id text, p_age interval default interval '0') returns jsonb language sql as $$
    select jsonb_build_object('id', p_id, 'created_at', to_char((now() - p_age) at time zone 'UTC',
                              'YYYY-MM-DD HH24:MI:SS.US"+00"'), 'from', 'fax@example.jp', 'to', '["faxes@example.com"]'::jsonb,
                              'subject', 'FAX', 'message_id', '<' || p_id || '@x>', 'attachments', '[]'::jsonb) $$;

-- The reconcile job, claimed.
create function t.claim_reconcile() returns public.document_jobs language sql as $$
    select * from public.claim_document_jobs('reconcile_emails', 1, interval '5 minutes') $$;

select isnt(public.enqueue_document_jobs_reconciliation(), null, 'the cron''s call enqueues a reconcile_emails job');
select is(public.enqueue_document_jobs_reconciliation(), null, 'a second one is not enqueued while one is live');
select is((select count(*)::int from document_jobs where kind = 'reconcile_emails'), 1, 'one live job, no target');
select throws_ok(
    $$ insert into public.document_jobs (kind) values ('reconcile_emails') $$, '23505', null,
    'the partial unique index holds although the target is null');

create temporary table claimed as select * from t.claim_reconcile();
select is((select count(*)::int from claimed), 1, 'the claim takes it as any job');
select is(public.start_reconciliation_v2((select id from claimed), (select generation from claimed)) ->> 'held',
          'true', 'start is fenced: held');
select is(public.start_reconciliation_v2((select id from claimed), 99) ->> 'held', 'false', 'another generation is not');
select ok((public.start_reconciliation_v2((select id from claimed), (select generation from claimed))
           ->> 'stop_before')::timestamptz between now() - interval '1 hour 1 minute' and now() - interval '59 minutes',
          'with no watermark yet, the run lists back to now() less the overlap (1 hour)');

-- A webhook recorded em_hook before the run; the run lists it, em_a and em_b.
select t.add_emails('em_hook');
create temporary table recorded as
select public.record_reconciled_emails_v2((select id from claimed), (select generation from claimed),
       jsonb_build_array(t.item('em_hook', interval '20 minutes'), t.item('em_a', interval '20 minutes'),
                         t.item('em_b', interval '30 minutes'), t.item('em_young', interval '5 minutes')),
       interval '5 minutes') as answer;
select is((select answer -> 'recorded_ids' from recorded), '["em_a", "em_b"]'::jsonb,
          'the e-mails not recorded are recorded, the webhook''s is not');
select is((select (answer ->> 'late') || ' late, ' || (answer ->> 'young') || ' young' from recorded), '2 late, 1 young',
          'both were received more than 15 minutes before; the one received 5 minutes ago is left for its webhook');
select results_eq(
    $$ select provider_email_id, found_by, webhook_id is null, reconciled_at is not null, received_at is not null
         from fax_received_emails order by provider_email_id $$,
    $$ values ('em_a', 'reconciliation', true, true, true), ('em_b', 'reconciliation', true, true, true),
              ('em_hook', 'webhook', true, false, false) $$,
    'marked found by reconciliation, no webhook id, Resend''s created_at as received_at');
select is((select count(*)::int from document_jobs where kind = 'fetch_email' and status = 'queued'
             and fax_received_email_id in (t.email_id('em_a'), t.email_id('em_b'))), 2,
          'each has its fetch_email job, as the webhook''s path makes it');

-- The webhook comes after reconciliation: a duplicate, nothing twice, the mark stays.
select is((select duplicate from record_inbound_email('em_a', 'msg_late', t.item('em_a'))), true,
          'a webhook after reconciliation is answered duplicate');
select is((select count(*)::int from document_jobs where fax_received_email_id = t.email_id('em_a')), 1,
          'and creates no second job');
select is((select found_by from fax_received_emails where provider_email_id = 'em_a'), 'reconciliation',
          'the row stays found by reconciliation');
select is((select (answer ->> 'recorded')::int
             from (select public.record_reconciled_emails_v2((select id from claimed), (select generation from claimed),
                          jsonb_build_array(t.item('em_a', interval '1 hour'), t.item('em_b', interval '1 hour'))) as answer) a), 0,
          'listing them again records nothing');

-- The page bound: the cursor is kept and a follow-up is enqueued when the job completes.
select is(public.finish_reconciliation_v2((select id from claimed), (select generation from claimed), 100,
          now() - interval '1 minute', 'em_b') ->> 'continues', 'true', 'a run stopped at its bound continues');
select is(public.complete_document_job_v2((select id from claimed), (select generation from claimed)) ->> 'held', 'true',
          'the job completes as any');
select is((select count(*)::int from document_jobs where kind = 'reconcile_emails' and status = 'queued'), 1,
          'its follow-up is queued');
delete from claimed;
insert into claimed select * from t.claim_reconcile();
select is(public.start_reconciliation_v2((select id from claimed), (select generation from claimed)) ->> 'cursor',
          'em_b', 'the follow-up continues after the cursor');
select is(public.finish_reconciliation_v2((select id from claimed), (select generation from claimed), 3, null, null)
          ->> 'continues', 'false', 'the run ends');
select results_eq(
    $$ select cursor, last_listed, last_recorded, last_late, watermark > now() - interval '2 minutes'
         from document_jobs_reconciliation $$,
    $$ values (null::text, 103, 2, 2, false) $$,
    'the last run''s counts add its jobs up');
select ok((select watermark between now() - interval '16 minutes' and now() - interval '14 minutes'
             from document_jobs_reconciliation),
          'the watermark is the newest created_at listed, but not past webhooks_missing_after ago (young ones are listed again)');

-- The outage: opens on the late e-mail, alerts once, closes on a webhook's e-mail received after.
select is(document_jobs_internal.check_webhooks_missing(), 0, 'no alert receiver in Vault here: nothing sent');
select is((select active from document_jobs_internal.outages where cause = 'webhooks_missing'), true,
          'webhooks_missing opens');
select matches(document_jobs_internal.outage_advice('webhooks_missing'),
               'RESEND_WEBHOOK_SECRET.*Deployment Protection', 'its advice names the secret and Deployment Protection');
update document_jobs_internal.outages set since = now() - interval '1 minute' where cause = 'webhooks_missing';
select is((select duplicate from record_inbound_email('em_new', 'msg_new', t.item('em_new'))), false,
          'the webhook delivers a new e-mail');
select is(document_jobs_internal.check_webhooks_missing(), 0, 'the health check runs again');
select is((select active from document_jobs_internal.outages where cause = 'webhooks_missing'), false,
          'a webhook''s e-mail received after it opened closes it');

-- By hand: audited with the operator, bounded by max_since.
select throws_ok(
    $$ select public.admin_record_reconciled_emails('a0000000-0000-0000-0000-00000000000a', 'op@example.com', '[]', now() - interval '90 days', 0) $$,
    '22023', null, 'a run by hand goes back max_since at most');
select * from finish();
rollback;
