-- The attempt history (document_job_attempts): one row per claim, written when the attempt ends,
-- whichever function ends it; append-only; deleted with its job. One transaction: now() stands
-- still, and time "passes" by moving run_after and lease_until into the past.
begin;
set local client_min_messages = error;  -- the failure alerts' "no alert URL" warnings
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(20);

select t.add_emails('em_1', 'em_2');
create function t.attempts(text)
returns table (attempt int, generation int, outcome text, error_code text, invocation_id text)
language sql as
    $$ select a.attempt, a.generation, a.outcome, a.error_code, a.invocation_id
         from public.document_job_attempts a where a.job_id = (t.job($1)).id order by a.generation $$;

select enqueue_document_job('fetch_email', id) from fax_received_emails;
update document_jobs set run_after = now() + interval '1 hour' where id = (job('em_2')).id;  -- em_1 first

-- claim: nothing recorded yet, the attempt's start noted on the job
select is((select count(*)::int from claim_document_jobs('fetch_email', 1)), 1, 'claim em_1');
select is(((job('em_1')).attempt_started_at, (job('em_1')).attempt_invocation_id), (now(), null::text),
          'a claim notes its start; no PostgREST request, no invocation id');
select is_empty($$ select * from document_job_attempts $$, 'a running attempt has no row yet');
select ok((extend_document_job_lease_v2((job('em_1')).id, 1, '5 minutes') ->> 'held')::boolean, 'extend');
select is_empty($$ select * from document_job_attempts $$, '... and an extension writes none');

-- transient failure, release, lease passed and claimed again (with an invocation id), complete
select is(fail_document_job_v2((job('em_1')).id, 1, 'resend_unavailable', 'HTTP 503') ->> 'state', 'queued', 'transient failure');
select results_eq($$ select * from attempts('em_1') $$,
                  $$ values (1, 1, 'retried', 'resend_unavailable', null::text) $$, 'recorded as retried');
select expire('em_1');
select claim_document_jobs('fetch_email', 1);
select is(release_document_job_v2((job('em_1')).id, 2, '0 seconds', 'time_budget', 'out of time') ->> 'state', 'queued', 'release');
select expire('em_1');
select set_config('request.headers', '{"x-document-jobs-invocation": "iad1::abc-123", "accept": "*/*"}', true);
select claim_document_jobs('fetch_email', 1);
select is((job('em_1')).attempt_invocation_id, 'iad1::abc-123', 'the claim notes the invocation PostgREST names');
select set_config('request.headers', '', true);
update document_jobs set lease_until = now() - interval '2 seconds' where id = (job('em_1')).id;
select is((select generation from claim_document_jobs('fetch_email', 1)), 4, 'the lease passed: claimed again');
select ok((complete_document_job_v2((job('em_1')).id, 4) ->> 'held')::boolean, 'complete');
select results_eq($$ select * from attempts('em_1') $$,
                  $$ values (1, 1, 'retried', 'resend_unavailable', null::text),
                            (2, 2, 'released', 'time_budget', null),
                            (2, 3, 'lease_expired', 'lease_expired', 'iad1::abc-123'),
                            (3, 4, 'completed', null, null) $$,
                  'every attempt, in order, with its outcome, error and invocation');
select is((select (started_at, finished_at) from document_job_attempts
            where job_id = (job('em_1')).id and generation = 3),
          (now(), now() - interval '2 seconds'), 'a lost attempt ends when its lease passed');

-- the ways to end failed: permanent failure, cancel of a running job, the expired-lease sweep
select expire('em_2');
select claim_document_jobs('fetch_email', 1);
select is(fail_document_job_v2((job('em_2')).id, 1, 'resend_not_found', 'HTTP 404', p_retryable => false) ->> 'state', 'failed', 'fail');
select retry_document_job((job('em_2')).id);
select claim_document_jobs('fetch_email', 1);
select cancel_document_job((job('em_2')).id, 'duplicate fax');
select retry_document_job((job('em_2')).id);
select claim_document_jobs('fetch_email', 1);
update document_jobs set attempts = max_attempts, lease_until = now() - interval '1 second'
 where id = (job('em_2')).id;
select document_jobs_internal.fail_expired();
select results_eq($$ select attempt, generation, outcome, error_code from attempts('em_2') $$,
                  $$ values (1, 1, 'failed', 'resend_not_found'), (1, 2, 'cancelled', 'cancelled'),
                            (5, 3, 'lease_expired', 'lease_expired') $$,
                  'permanent failure, cancel and the sweep each end their attempt');

-- append-only, read-only for service_role, deleted with its job
select throws_ok($$ update document_job_attempts set outcome = 'completed' $$, '42501', null,
                 'history is never updated, not even by its owner');
set local role service_role;
select is((select count(*)::int from document_job_attempts), 7, 'service_role reads the history');
select throws_ok($$ insert into document_job_attempts (job_id, generation, attempt, finished_at, outcome)
                    select id, 99, 1, now(), 'completed' from document_jobs limit 1 $$, '42501', null,
                 '... and cannot write it');
reset role;
update document_jobs set finished_at = now() - interval '31 days' where status = 'completed';
select is(purge_document_jobs(), 1, 'the purge deletes the completed job');
select is((select count(*)::int from document_job_attempts), 3, '... and its history with it');

select * from finish();
rollback;
