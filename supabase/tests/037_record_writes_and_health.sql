-- The product's own writes fit the record's rule (every one an INSERT, with the guards on: an UPDATE
-- would be refused, so a write that succeeds here updated nothing): an e-mail found by
-- reconciliation says so from its insert, and recording an attachment again with the same values
-- changes nothing (a worker of the previous deploy keeps working during an upgrade) while other
-- values are refused. And the health check: every guard the owner can still take away is reported
-- (document_jobs_health, the outage records_unguarded through the cron job's own command), and
-- guard_record_tables puts them all back.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(35);

delete from document_jobs_internal.worker_requests;
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url');
select vault.create_secret('https://chat.example/hook', 'document_jobs_alert_url');
create function t.alerts() returns int language sql as $$
    select count(*)::int from net.http_request_queue where url = 'https://chat.example/hook' $$;
create function t.problems() returns jsonb language sql as $$
    select jsonb_agg(p - 'table' order by p ->> 'guard', p ->> 'problem')
      from jsonb_array_elements(document_jobs_internal.record_guard_problems()) p
     where p ->> 'table' = 'public.fax_received_email_attachments' $$;
update document_jobs_internal.outages set active = false, since = null, alerted_at = null;

-- The guards are on for all of it.
select is(document_jobs_internal.record_guard_problems(), '[]'::jsonb, 'every guard is in place');

-- found_by and reconciled_at are written by the insert.
select record_inbound_email('em_hook', 'msg_1', '{}');
select is((select (found_by, reconciled_at) from fax_received_emails e where e.provider_email_id = 'em_hook'),
          ('webhook'::text, null::timestamptz), 'the webhook''s e-mail: found_by webhook');
select enqueue_document_jobs_reconciliation();
create table t.reconcile as select * from claim_document_jobs('reconcile_emails', 1, interval '5 minutes');
select is(record_reconciled_emails_v3((select id from t.reconcile), (select generation from t.reconcile),
              jsonb_build_array(jsonb_build_object('id', 'em_found', 'created_at', now() - interval '1 hour'),
                                jsonb_build_object('id', 'em_hook', 'created_at', now() - interval '1 hour')))
          -> 'recorded_ids', '["em_found"]', 'reconciliation records what no webhook delivered');
select is((select (found_by, reconciled_at, webhook_id) from fax_received_emails where provider_email_id = 'em_found'),
          ('reconciliation'::text, now(), null::text), '... found_by reconciliation and when, from its insert');
select is((select found_by from fax_received_emails where provider_email_id = 'em_hook'), 'webhook',
          '... and the webhook''s e-mail stays as it was recorded');

-- An attachment recorded again.
create table t.fetch as select * from claim_document_jobs('fetch_email', 10, interval '5 minutes');
delete from t.fetch where fax_received_email_id <> email_id('em_hook');
create function t.record(p_size bigint, p_sha256 text, p_filename text default 'a.pdf')
returns jsonb language sql as $$
    select record_document_attachment_v2(f.id, f.generation, 'att_1', p_filename, 'application/pdf', p_size,
                                         p_sha256, 'fax-attachments',
                                         'fax_received_emails/' || f.fax_received_email_id || '/att_1.pdf',
                                         interval '5 minutes')
      from t.fetch f $$;
create function t.row() returns jsonb language sql as $$
    select jsonb_agg(to_jsonb(a)) from fax_received_email_attachments a
     where a.fax_received_email_id = t.email_id('em_hook') $$;
select is((select fax_received_email_id from t.fetch), email_id('em_hook'), 'em_hook''s fetch is held');
select is(t.record(908, repeat('a', 64)), '{"held": true, "state": "running"}',
          'the worker records an attachment');
create table t.first as select t.row() as row;
select is(t.record(908, repeat('a', 64)), '{"held": true, "state": "running"}',
          'recording it again with the same values answers as before (a retry after a crash before the record)');
select is(t.row(), (select row from t.first), '... and changes nothing');
select ok(record_document_attachment((select id from t.fetch), (select generation from t.fetch), 'att_1', 'a.pdf',
                                     'application/pdf', 908, repeat('a', 64), 'fax-attachments',
                                     'fax_received_emails/' || email_id('em_hook') || '/att_1.pdf'),
          'the previous deploy''s name answers true for the same values: its worker keeps working during an upgrade');
select throws_like($$ select t.record(300, repeat('b', 64)) $$, '%recorded with other values%never changes',
                   'other bytes (a stale worker''s shorter download) are refused, saying why');
select throws_ok($$ select t.record(908, repeat('a', 64), 'b.pdf') $$, '23505', null,
                 'so is another name');
select is(t.row(), (select row from t.first), 'the first record stands: 908 bytes, its SHA-256');
select is((select count(*)::int from fax_received_email_attachments), 1, 'one row, never two');

-- Health: each way the owner can take a guard away is named. (The late e-mail above is forgotten
-- first: the health check's own command would open webhooks_missing for it.)
update document_jobs_reconciliation set missing_found_at = null, missing_received_at = null;
select is(public.document_jobs_health() -> 'record_guards', '{"guards": 20, "problems": []}',
          'document_jobs_health counts the guards and names none out of place');
select is(document_jobs_internal.check_record_guards(), 0, 'the health check finds nothing to tell');
alter table fax_received_email_attachments disable trigger record_not_updated;
select is(t.problems(), '[{"guard": "record_not_updated", "problem": "disabled"}]', 'a guard disabled by the owner');
select is(public.document_jobs_health() -> 'record_guards' -> 'problems',
          '[{"table": "public.fax_received_email_attachments", "guard": "record_not_updated", "problem": "disabled"}]',
          '... is what document_jobs_health (the CLI''s health) shows');
create function t.run_health_cron() returns void language plpgsql as $$
begin
    execute (select command from cron.job where jobname = 'document-jobs-health');
end;
$$;
create table t.alerts_before as select t.alerts() as n;
select lives_ok('select t.run_health_cron()', 'the every-minute health check runs');
select is((select active from document_jobs_internal.outages where cause = 'records_unguarded'), true,
          '... and opens the outage records_unguarded');
select is(t.alerts(), (select n + 1 from t.alerts_before), '... with an alert');
select ok((select convert_from(body, 'UTF8')::jsonb ->> 'summary' like '%public.fax_received_email_attachments record_not_updated disabled%'
             from net.http_request_queue
            where url = 'https://chat.example/hook' and convert_from(body, 'UTF8')::jsonb ->> 'cause' = 'records_unguarded' order by id desc limit 1),
          '... which names the guard and what became of it');
select is((public.document_jobs_health() -> 'outages' -> 0 ->> 'cause'), 'records_unguarded', 'health lists the outage');
alter table fax_received_email_attachments enable trigger record_not_updated;
select is(t.problems(), '[{"guard": "record_not_updated", "problem": "not_always"}]',
          're-enabled without ALWAYS: a replica session would skip it');
drop trigger record_not_truncated on fax_received_email_attachments;
create trigger record_not_truncated before truncate on fax_received_email_attachments
    for each statement execute function document_jobs_internal.refuse_record_change();
alter table fax_received_email_attachments enable always trigger record_not_truncated;
select is(t.problems(), '[{"guard": "record_not_updated", "problem": "not_always"}]',
          'a guard dropped and written anew as it was is in place (its definition is compared, not its words)');
drop trigger record_deleted_only_as_approved on fax_received_email_attachments;
create trigger record_deleted_only_as_approved before delete on fax_received_email_attachments
    for each row when (old.size_bytes > 1000000000)
    execute function document_jobs_internal.refuse_record_delete('fax_received_email_id');
alter table fax_received_email_attachments enable always trigger record_deleted_only_as_approved;
drop trigger record_not_updated_by_statement on fax_received_email_attachments;
grant update (filename), delete on fax_received_email_attachments to service_role;
select is(t.problems(),
          '[{"guard": "privileges", "problem": "granted", "grantee": "service_role", "privilege": "DELETE"},
            {"guard": "privileges", "problem": "granted", "grantee": "service_role", "privilege": "UPDATE (filename)"},
            {"guard": "record_deleted_only_as_approved", "problem": "altered"},
            {"guard": "record_not_updated", "problem": "not_always"},
            {"guard": "record_not_updated_by_statement", "problem": "missing"}]',
          'an altered guard (a WHEN that lets nearly everything through), a dropped one, privileges granted back');
select is(document_jobs_internal.check_record_guards(), 0, 'the outage stays open, alerting at most once an hour');

-- What the outage's advice says to run puts every guard back.
select is(document_jobs_internal.guard_record_tables(), 3, 'guard_record_tables puts back the three triggers');
select is(document_jobs_internal.record_guard_problems(), '[]'::jsonb, '... and revokes the privileges: all in place');
select throws_ok($$ set local role service_role; delete from fax_received_email_attachments $$, '42501', null,
                 'service_role may not delete again');
reset role;
select throws_ok($$ delete from fax_received_email_attachments $$, '23001', null, 'the owner meets the guard again');
select is(document_jobs_internal.check_record_guards(), 1, 'the health check closes the outage, with a recovered alert');
select is((select active from document_jobs_internal.outages where cause = 'records_unguarded'), false, '... closed');
select ok((select convert_from(body, 'UTF8')::jsonb ->> 'event' = 'document_jobs_recovered'
                   and convert_from(body, 'UTF8')::jsonb ->> 'summary' = 'every guard of the record of received faxes is in place again'
             from net.http_request_queue where url = 'https://chat.example/hook' order by id desc limit 1),
          '... saying so');
select is(document_jobs_internal.guard_record_tables(), 0, 'run again, it has nothing to put back');

select * from finish();
rollback;
