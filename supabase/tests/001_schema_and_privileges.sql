-- The schema's contract: tables, columns, indexes, RLS, and who may do what.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions;
select plan(55);

select has_table('public', 'document_jobs', 'document_jobs exists');
select columns_are('public', 'document_jobs', array[
    'id', 'kind', 'fax_received_email_id', 'status', 'attempts', 'max_attempts', 'run_after', 'lease_until',
    'generation', 'last_error_code', 'last_error_message', 'created_at', 'started_at', 'finished_at',
    'attempt_started_at', 'attempt_invocation_id', 'budget_releases', 'attempt_outcome']);
select col_type_is('public', 'document_jobs', 'id', 'uuid', 'id is uuid');
select col_default_is('public', 'document_jobs', 'id', 'gen_random_uuid()', 'id defaults to gen_random_uuid()');
select col_default_is('public', 'document_jobs', 'status', 'queued', 'status defaults to queued');
select col_default_is('public', 'document_jobs', 'max_attempts', '5', 'max_attempts defaults to 5');
select col_type_is('public', 'document_jobs', 'run_after', 'timestamp with time zone', 'run_after is timestamptz');
select col_not_null('public', 'document_jobs', 'generation', 'generation is not null');
select throws_ok($$insert into public.document_jobs (kind, status) values ('fetch_email', 'lost')$$, '23514',
                 null, 'status outside (queued, running, completed, failed) is refused');

select has_index('public', 'document_jobs', 'document_jobs_one_active_per_target', array['kind', 'fax_received_email_id']);
select index_is_unique('public', 'document_jobs', 'document_jobs_one_active_per_target');
select is(pg_get_expr(i.indpred, i.indrelid), '(status = ANY (ARRAY[''queued''::text, ''running''::text]))',
          'the unique index covers queued and running jobs only')
  from pg_index i where i.indexrelid = 'public.document_jobs_one_active_per_target'::regclass;
select has_index('public', 'document_jobs', 'document_jobs_claim', array['kind', 'run_after', 'created_at']);
select is(pg_get_expr(i.indpred, i.indrelid), '(status = ANY (ARRAY[''queued''::text, ''running''::text]))',
          'the claim index leaves finished jobs out')
  from pg_index i where i.indexrelid = 'public.document_jobs_claim'::regclass;

select has_table('public', 'fax_received_emails', 'fax_received_emails exists');
select has_table('public', 'fax_received_email_attachments', 'fax_received_email_attachments exists');
select col_is_unique('public', 'fax_received_emails', array['provider', 'provider_email_id']);
select col_is_unique('public', 'fax_received_email_attachments', array['fax_received_email_id', 'provider_attachment_id', 'version']);
select has_column('public', 'fax_received_email_attachments', 'sha256', 'attachments keep their sha256');
select has_column('public', 'fax_received_email_attachments', 'filename', 'attachments keep their original name');

-- RLS on, no policies, nothing for anon and authenticated (Supabase's default privileges gave them ALL).
select ok(bool_and(c.relrowsecurity), 'RLS is enabled on every table')
  from pg_class c
 where c.oid in ('public.document_jobs'::regclass, 'public.document_job_kinds'::regclass,
                 'public.document_jobs_settings'::regclass, 'public.fax_received_emails'::regclass,
                 'public.fax_received_email_attachments'::regclass, 'public.document_job_attempts'::regclass,
                 'public.document_jobs_rate_limits'::regclass);
select is((select count(*)::int from pg_policies where schemaname = 'public'), 0, 'no RLS policies');
select table_privs_are('public', t, r, array[]::text[], format('%s has no privilege on %s', r, t))
  from unnest(array['document_jobs', 'document_jobs_claimable', 'document_job_kinds', 'document_jobs_settings',
                    'fax_received_emails', 'fax_received_email_attachments', 'document_job_attempts',
                    'document_jobs_rate_limits']) t,
       unnest(array['anon', 'authenticated']) r;
select table_privs_are('public', 'document_job_attempts', 'service_role', array['SELECT'],
                       'service_role may read the attempt history, never write it');
select has_pk('public', 'document_job_attempts', 'an attempt is one (job, generation)');

-- Functions: exactly the contract's signatures.
select has_function('public', 'claim_document_jobs', array['text', 'integer', 'interval']);
select function_returns('public', 'claim_document_jobs', array['text', 'integer', 'interval'], 'setof document_jobs');
select has_function('public', 'extend_document_job_lease_v2', array['uuid', 'integer', 'interval']);
select has_function('public', 'complete_document_job_v2', array['uuid', 'integer']);
select has_function('public', 'fail_document_job_v2', array['uuid', 'integer', 'text', 'text', 'boolean', 'interval']);
select has_function('public', 'release_document_job_v2', array['uuid', 'integer', 'interval', 'text', 'text']);
-- The one answer of a fenced call: {"held", "state"} (where a failure or a release left the job).
select function_returns('public', 'fail_document_job_v2',
                        array['uuid', 'integer', 'text', 'text', 'boolean', 'interval'], 'jsonb');
select function_returns('public', 'release_document_job_v2', array['uuid', 'integer', 'interval', 'text', 'text'],
                        'jsonb');
select has_function('public', 'retry_document_job', array['uuid']);
select has_function('public', 'enqueue_document_job', array['text', 'uuid', 'boolean']);
select has_function('public', 'record_inbound_email', array['text', 'text', 'jsonb']);
select has_function('public', 'invoke_document_jobs', array['integer']);
select function_returns('public', 'invoke_document_jobs', array['integer'], 'integer');

-- Who may call which function: 003_api_surface.sql.

-- Cron: the safety net every minute and the purge, one of each.
select is((select count(*)::int from cron.job where jobname = 'document-jobs' and schedule = '* * * * *'
                                              and command = 'select public.invoke_document_jobs()'),
          1, 'one document-jobs cron job calls invoke_document_jobs every minute');
select is((select count(*)::int from cron.job where jobname = 'document-jobs-purge'), 1, 'one purge cron job');

select * from finish();
rollback;
