-- The public API: the queue's documented functions keep their names and parameters (other code
-- calls them by name through PostgREST), whatever the worker of this repository calls instead.
-- The fenced ones are thin wrappers of their _v2 function and answer as they always did; the one
-- that acts for an operator, retry_document_job, records its retry in the audit with its caller
-- unnamed (actor_id null), and only a retry may be recorded so.
-- tests/database/test_future_migrations.py runs this file again on a database the future drop was
-- applied to: what the drop removes must leave all of this true.
begin;
set local client_min_messages = error;  -- the failure alerts' "no alert URL stored" warnings
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(42);

-- Names, parameters (with their defaults) and answers, as documented (docs/QUEUE.md, "The public API").
create table t.documented (name text, arguments text, answer text);
insert into t.documented values
    ('claim_document_jobs', 'p_kind text, p_limit integer DEFAULT 1, p_lease interval DEFAULT ''00:05:00''::interval',
     'SETOF document_jobs'),
    ('extend_document_job_lease', 'p_job_id uuid, p_generation integer, p_lease interval DEFAULT ''00:05:00''::interval',
     'boolean'),
    ('complete_document_job', 'p_job_id uuid, p_generation integer', 'boolean'),
    ('fail_document_job', 'p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, '
     'p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval', 'text'),
    ('release_document_job', 'p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT ''00:00:00''::interval, '
     'p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text', 'text'),
    ('retry_document_job', 'p_job_id uuid', 'boolean'),
    ('enqueue_document_job', 'p_kind text, p_fax_received_email_id uuid, p_kick boolean DEFAULT false',
     'TABLE(job_id uuid, created boolean)'),
    ('record_inbound_email', 'p_provider_email_id text, p_webhook_id text, p_data jsonb',
     'TABLE(fax_received_email_id uuid, job_id uuid, duplicate boolean)'),
    ('invoke_document_jobs', 'p_max_invocations integer DEFAULT NULL::integer', 'integer');

select set_eq(
    $$ select name, arguments, answer from t.documented $$,
    $$ select p.proname::text, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
         from pg_proc p join t.documented d on d.name = p.proname
        where p.pronamespace = 'public'::regnamespace $$,
    'each documented function is there once, with its parameters, their defaults and its answer');
select is_empty(
    $$ select p.proname from pg_proc p join t.documented d on d.name = p.proname
        where p.pronamespace = 'public'::regnamespace and not has_function_privilege('service_role', p.oid, 'execute') $$,
    'service_role may call each of them (PostgREST''s callers)');

-- Thin: each fenced wrapper is one SQL statement over its _v2 function, so the two cannot drift.
select is_empty(
    $$ select p.proname from pg_proc p
        where p.pronamespace = 'public'::regnamespace
          and p.proname in ('extend_document_job_lease', 'complete_document_job', 'fail_document_job',
                            'release_document_job')
          and (p.prolang <> (select l.oid from pg_language l where l.lanname = 'sql')
               or p.prosrc not like '%public.' || p.proname || '\_v2(%') $$,
    'extend, complete, fail and release are SQL wrappers of their _v2 function');

select t.add_emails('em_1', 'em_2', 'em_3');
create function t.claimed(p_provider_email_id text) returns public.document_jobs language plpgsql as $$
begin
    perform public.enqueue_document_job('fetch_email', t.email_id(p_provider_email_id));
    perform t.expire();
    perform public.claim_document_jobs('fetch_email', 100, '5 minutes');
    return t.job(p_provider_email_id);
end $$;
create table t.held (job public.document_jobs);
insert into t.held select t.claimed('em_1');
create function t.h() returns public.document_jobs language sql as $$ select job from t.held $$;

-- extend
select ok(extend_document_job_lease((h()).id, (h()).generation, '10 minutes'), 'extend: true while held');
select is((job('em_1')).lease_until, now() + interval '10 minutes', '... the lease renewed for p_lease');
select ok(extend_document_job_lease((h()).id, (h()).generation), '... and p_lease defaults to 5 minutes');
select is((job('em_1')).lease_until, now() + interval '5 minutes', '... which it then is');
select ok(not extend_document_job_lease((h()).id, (h()).generation + 1), 'extend: false for another generation');

-- fail: transient with attempts left, then permanent
select is(fail_document_job((h()).id, (h()).generation, 'resend_unavailable', 'HTTP 503'), 'queued',
          'fail: a transient failure with attempts left answers queued');
select is(((job('em_1')).status, (job('em_1')).last_error_code, (job('em_1')).attempt_outcome),
          ('queued'::text, 'resend_unavailable'::text, 'retried'::text), '... and the job is queued again, the error kept');
select is(fail_document_job((h()).id, (h()).generation, 'x'), null, 'fail: null once the job is no longer held');
delete from t.held;
insert into t.held select t.claimed('em_1');
select is(fail_document_job((h()).id, (h()).generation, 'resend_not_found', 'HTTP 404', false), 'failed',
          'fail: a permanent failure answers failed');
select is((job('em_1')).status, 'failed', '... and the job is failed');

-- release
delete from t.held;
insert into t.held select t.claimed('em_2');
select is(release_document_job((h()).id, (h()).generation, '2 minutes', 'resend_forbidden', 'HTTP 403'), 'queued',
          'release: answers queued');
select is(((job('em_2')).status, (job('em_2')).attempts, (job('em_2')).run_after),
          ('queued'::text, 0, now() + interval '2 minutes'), '... the attempt given back, run after p_retry_after');
select is(release_document_job((h()).id, (h()).generation), null, 'release: null once the job is no longer held');

-- complete
delete from t.held;
insert into t.held select t.claimed('em_2');
select ok(not complete_document_job((h()).id, (h()).generation - 1), 'complete: false for a stale generation');
select is((job('em_2')).status, 'running', '... which changes nothing');
select ok(complete_document_job((h()).id, (h()).generation), 'complete: true while held');
select is(((job('em_2')).status, (job('em_2')).attempt_outcome), ('completed'::text, 'completed'::text),
          '... and the job is completed');
select ok(not complete_document_job((h()).id, (h()).generation), 'complete: false the second time');

-- retry: audited, its caller unnamed
create table t.audit_before as select coalesce(max(id), 0) as id from document_jobs_audit;
create function t.new_audit() returns setof document_jobs_audit language sql as $$
    select * from public.document_jobs_audit where id > (select id from t.audit_before) order by id $$;
select ok(retry_document_job((job('em_1')).id), 'retry: a failed job is retried');
select is(((job('em_1')).status, (job('em_1')).attempts, (job('em_1')).run_after),
          ('queued'::text, 0, now()), '... queued now, its attempts reset');
select is((select count(*)::int from t.new_audit()), 1, '... and recorded in the audit once');
select is((select (actor_id, actor_email, action, job_id, job_count, reason) from t.new_audit()),
          (null::uuid, null::text, 'retry'::text, (job('em_1')).id, 1, null::text),
          '... as a retry of that job by the unnamed service: no actor, no e-mail, no reason');
select ok(not retry_document_job((job('em_1')).id), 'retry: a job that is not failed is not retried');
select ok(not retry_document_job(gen_random_uuid()), 'retry: an unknown job is not retried');
select is((select count(*)::int from t.new_audit()), 1, '... and neither is recorded');
select throws_ok($$ select retry_document_job(null) $$, '22023', 'p_job_id must not be null',
                 'retry: a job id is required');

-- retry while another job of the same target is live: the clear error, and no audit row
delete from t.held;
insert into t.held select t.claimed('em_1');
select is(fail_document_job((h()).id, (h()).generation, 'resend_not_found', null, false), 'failed',
          'em_1''s job failed again');
select is((select created from enqueue_document_job('fetch_email', email_id('em_1'))), true,
          'a new job for the same target is queued');
select throws_ok(
    format('select retry_document_job(%L)', (select id from document_jobs where status = 'failed'
                                               and fax_received_email_id = email_id('em_1'))),
    '23505',
    format('document job %s cannot be retried: another job for the same target is already queued or running',
           (select id from document_jobs where status = 'failed' and fax_received_email_id = email_id('em_1'))),
    'retry: another live job of the same target is refused, saying why');
select is((select count(*)::int from t.new_audit()), 1, '... and nothing more is recorded');

-- Only the public API's retry may be unnamed: every other row names who acted.
select throws_ok(
    $$ insert into document_jobs_audit (actor_id, action, job_id, job_count, reason)
       values (null, 'cancel', gen_random_uuid(), 1, 'why') $$,
    '23514', null, 'an unnamed cancel is refused by the table');
select throws_ok(
    $$ insert into document_jobs_audit (actor_id, action, filter, job_count) values (null, 'bulk_retry', '{}', 1) $$,
    '23514', null, 'an unnamed bulk retry is refused');
select throws_ok(
    $$ insert into document_jobs_audit (actor_id, actor_email, action, job_id, job_count)
       values (null, 'someone@example.com', 'retry', gen_random_uuid(), 1) $$,
    '23514', null, 'a retry with an e-mail but no actor is refused: an e-mail names someone');
select throws_ok(
    format('select admin_retry_document_job(%L, null)', (select id from document_jobs where status = 'failed'
                                                          and fax_received_email_id = email_id('em_1'))),
    '22023', 'p_actor_id must not be null',
    'the screen''s retry still requires its operator');
select lives_ok(
    $$ insert into document_jobs_audit (actor_id, actor_email, action, job_id, job_count)
       values ('a0000000-0000-0000-0000-00000000000a', 'op@example.com', 'retry', gen_random_uuid(), 1) $$,
    'a named retry is recorded as before');

-- enqueue, claim and the cron's entry point answer by their documented names too (their behaviour:
-- 002_state_machine.sql, 012_bounded_invocations.sql).
select is((select created from enqueue_document_job('fetch_email', email_id('em_3'))), true,
          'enqueue_document_job by its name');
select is((select count(*)::int from claim_document_jobs('fetch_email', 1)), 1, 'claim_document_jobs by its name');
select is((select duplicate from record_inbound_email('em_4', 'msg_4', '{}')), false,
          'record_inbound_email by its name');
select ok(invoke_document_jobs(1) >= 0, 'invoke_document_jobs by its name');

select * from finish();
rollback;
