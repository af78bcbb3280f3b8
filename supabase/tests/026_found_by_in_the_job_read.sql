-- A job's read says how its e-mail was found (20261204110100): by its webhook, or by reconciliation
-- and when, as document_jobs_admin_job answers it to the CLI's show and, through
-- document_jobs_operator_job, to the admin screen's job page (019 holds the two reads to one answer).
begin;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback (see 009).
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(4);

-- One e-mail by its webhook, one that Resend listed an hour after it received it and no webhook delivered.
select record_inbound_email('em_by_webhook', 'msg_by_webhook',
                            '{"email_id": "em_by_webhook", "created_at": "2026-12-04T01:00:00Z"}');
select document_jobs_internal.record_reconciled(jsonb_build_array(jsonb_build_object(
    'id', 'em_by_listing', 'created_at', to_char((now() - interval '1 hour') at time zone 'UTC',
                                                  'YYYY-MM-DD HH24:MI:SS.US"+00"'),
    'from', 'fax@example.jp', 'to', '["faxes@example.com"]'::jsonb, 'subject', 'FAX', 'attachments', '[]'::jsonb)));
create function t.email_of(p_provider_email_id text) returns jsonb language sql as $$
    select public.document_jobs_admin_job((t.job(p_provider_email_id)).id) -> 'email' $$;

select is(t.email_of('em_by_webhook') ->> 'found_by', 'webhook', 'an e-mail its webhook delivered says so ...');
select ok(t.email_of('em_by_webhook') ? 'reconciled_at' and t.email_of('em_by_webhook') -> 'reconciled_at' = 'null',
          '... with no time of a reconciliation');
select is(t.email_of('em_by_listing') ->> 'found_by', 'reconciliation', 'an e-mail reconciliation recorded says so ...');
select is((t.email_of('em_by_listing') ->> 'reconciled_at')::timestamptz, now(), '... and when it recorded it');

select * from finish();
rollback;
