-- Every fenced call has one answer (the _v2 functions): {"held": true, "state": <the job's status
-- after it>} while the caller holds the job, {"held": false, "state": null} once it does not;
-- the old names answer exactly as before, through them (tests/database/test_upgrade_in_place.py calls them). The
-- attempt's outcome is written by the function that ends it, never read back from an error code.
begin;
set local client_min_messages = error;  -- the failure alerts' "no alert URL stored" warnings
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(47);

select t.add_emails('em_1', 'em_2');
create function t.claim() returns public.document_jobs language sql as $$
    select * from public.claim_document_jobs('fetch_email', 1, '5 minutes') $$;
create function t.record(p_job public.document_jobs, p_generation int, p_lease interval) returns jsonb
language sql as $$
    select public.record_document_attachment_v2(p_job.id, p_generation, 'att_' || p_generation, 'a.pdf',
                                                'application/pdf', 1, repeat('0', 64), 'fax-attachments',
                                                'x/att_' || p_generation || '.pdf', p_lease) $$;
create table t.held (job public.document_jobs);
-- The outcome of the held job's last recorded attempt, and the held job as it is now.
create function t.last_outcome() returns text language sql as $$
    select a.outcome from public.document_job_attempts a where a.job_id = (select (job).id from t.held)
     order by a.generation desc limit 1 $$;
create function t.current() returns public.document_jobs language sql as $$
    select j from public.document_jobs j where j.id = (select (job).id from t.held) $$;

select enqueue_document_job('fetch_email', email_id('em_1'));
insert into t.held select t.claim();
create function t.h() returns public.document_jobs language sql as $$ select job from t.held $$;

-- held: each call's state
select is(extend_document_job_lease_v2((h()).id, (h()).generation, '5 minutes'),
          '{"held": true, "state": "running"}', 'extend_v2 while held');
select is(t.record(h(), (h()).generation, '5 minutes'), '{"held": true, "state": "running"}',
          'record_document_attachment_v2 while held, renewing the lease');
select is(t.record(h(), (h()).generation, null), '{"held": true, "state": "running"}', '... and without renewing it');
select is(fail_document_job_v2((h()).id, (h()).generation, 'resend_unavailable', 'HTTP 503', true, null),
          '{"held": true, "state": "queued"}', 'fail_v2 with attempts left: queued');
select is((job('em_1')).attempt_outcome, 'retried', '... and the job says how the attempt ended');

-- not held: the same shape for every call, and nothing changes
select is(extend_document_job_lease_v2((h()).id, (h()).generation, '5 minutes'), '{"held": false, "state": null}',
          'extend_v2 of a job no longer running');
select is(complete_document_job_v2((h()).id, (h()).generation), '{"held": false, "state": null}', 'complete_v2 ...');
select is(t.record(h(), (h()).generation, '5 minutes'), '{"held": false, "state": null}',
          'record_document_attachment_v2 ...');
select is(t.record(h(), (h()).generation, null), '{"held": false, "state": null}', '... without a lease too');
select is(fail_document_job_v2((h()).id, (h()).generation, 'x', null, true, null), '{"held": false, "state": null}',
          'fail_v2 ...');
select is(release_document_job_v2((h()).id, (h()).generation, '0 seconds', null, null),
          '{"held": false, "state": null}', 'release_v2 ...');
select is((select count(*) from fax_received_email_attachments a where a.storage_path = 'x/att_' || (h()).generation || '.pdf'),
          1::bigint, '... and no attachment was recorded by the calls that no longer held the job');
select is((job('em_1')).status, 'queued', 'the job is as the fail left it');

-- held again: extend, a release for a cause, a permanent failure
select expire('em_1');
update t.held set job = t.claim();
select is(extend_document_job_lease_v2((h()).id, (h()).generation, '5 minutes'), '{"held": true, "state": "running"}',
          'extend_v2 while held');
select is(release_document_job_v2((h()).id, (h()).generation, '10 minutes', 'resend_unauthorized', 'key'),
          '{"held": true, "state": "queued"}', 'release_v2 for a cause: queued');
select is((job('em_1')).run_after, now() + interval '10 minutes', '... queued for its delay (next_run_after)');
select is((job('em_1')).attempt_outcome, 'released', '... and the job says the attempt was released');
select expire('em_1');
update t.held set job = t.claim();
select is(fail_document_job_v2((h()).id, (h()).generation, 'resend_rejected', 'no', false),
          '{"held": true, "state": "failed"}', 'fail_v2, permanent: failed');
select is((job('em_1')).attempt_outcome, 'failed', '... failed');

-- release_v2 and complete_v2 while held
select enqueue_document_job('fetch_email', email_id('em_2'));
update t.held set job = t.claim();
select is(release_document_job_v2((h()).id, (h()).generation, '0 seconds', 'time_budget', 'out of time'),
          '{"held": true, "state": "queued"}', 'release_v2 while held: queued');
select is((job('em_2')).attempt_outcome, 'released', '... released');
update t.held set job = t.claim();
select is((job('em_2')).attempt_outcome, null, 'a claim clears the outcome: the new attempt runs');
select is(complete_document_job_v2((h()).id, (h()).generation), '{"held": true, "state": "completed"}',
          'complete_v2 while held');
select is((job('em_2')).attempt_outcome, 'completed', '... completed');

-- complete and claim the next: the next job comes with either answer
select retry_document_job((job('em_1')).id);
update t.held set job = (select j from public.document_jobs j where j.id = (job('em_2')).id);
select is(complete_document_job_and_claim_next_v2((h()).id, (h()).generation, 'fetch_email', '5 minutes') - 'next_job',
          '{"held": false, "state": null}', 'complete_and_claim_next_v2 of a job no longer running: not held');
select is((job('em_1')).status, 'running', '... and the next job is claimed all the same');
select is(complete_document_job_and_claim_next_v2((job('em_1')).id, (job('em_1')).generation, 'fetch_email',
                                                  '5 minutes'),
          '{"held": true, "state": "completed", "next_job": null}', '... held, with no next job: null');
select enqueue_document_job('fetch_email', email_id('em_2'));
select expire('em_2');
update t.held set job = t.claim();
select is(complete_document_job_and_claim_next_v2((h()).id, (h()).generation, 'fetch_email', '5 minutes'),
          '{"held": true, "state": "completed", "next_job": null}', '... and the next job, completed while held');

-- the outcome is stored, not read from the error code: a worker's own code that happens to be
-- 'cancelled' or 'lease_expired' is a failure like any other
select enqueue_document_job('fetch_email', email_id('em_1'));
update t.held set job = t.claim();
select is(fail_document_job_v2((h()).id, (h()).generation, 'cancelled', 'a code of the worker', false, null),
          '{"held": true, "state": "failed"}', 'a failure whose code is ''cancelled''');
select is(t.last_outcome(), 'failed', '... is recorded as failed');
select retry_document_job((h()).id);
update t.held set job = t.claim();
select is(cancel_document_job((h()).id, 'by hand'), true, 'an operator''s cancel');
select is((t.current()).attempt_outcome, 'cancelled', '... is recorded as cancelled');
select is(t.last_outcome(), 'cancelled', '... in the history too');

-- a claim that takes over a running job whose lease passed: lease_expired, by the generation
select retry_document_job((h()).id);
update t.held set job = t.claim();
select expire('em_1');
select is((t.claim()).generation, (h()).generation + 1, 'the job is claimed again once its lease passed');
select is(t.last_outcome(), 'lease_expired',
          '... and the attempt that lost it is lease_expired');
-- an UPDATE by hand that ends an attempt without saying how is recorded as failed
update document_jobs set status = 'failed', lease_until = null, finished_at = now(), last_error_code = 'lease_expired'
 where id = (h()).id;
select is(t.last_outcome(), 'failed',
          'an attempt ended by hand is failed, whatever its error code says');

-- the calls of the rate limit and the follow-ups (20261201003000, 20261201003100), v2
select t.add_emails('em_3');
select enqueue_document_job('fetch_email', email_id('em_3'));
update document_jobs set status = 'completed', lease_until = null where status in ('queued', 'running')
   and fax_received_email_id <> email_id('em_3');
update t.held set job = t.claim();
select is(start_fetch_email_v2((h()).id, (h()).generation, 0) - 'resend',
          jsonb_build_object('held', true, 'state', 'running', 'stored_attachment_ids', '[]'::jsonb,
                             'raw_message_recorded', false, 'discarded_paths', '[]'::jsonb,
                             'email', jsonb_build_object('id', email_id('em_3'), 'provider_email_id', 'em_3')),
          'start_fetch_email_v2 while held: what the job needs, added to the one answer');
select is(start_fetch_email_v2((h()).id, (h()).generation + 1, 0), '{"held": false, "state": null}',
          '... and the one answer when not held');
select is(fail_document_job_and_follow_up_v2((h()).id, (h()).generation + 1, 'x') - 'follow_ups',
          '{"held": false, "state": null}', 'fail_document_job_and_follow_up_v2 not held');
select is(jsonb_typeof(fail_document_job_and_follow_up_v2((h()).id, (h()).generation + 1, 'x') -> 'follow_ups'),
          'number', '... says the follow-ups it started all the same');
select is(release_document_job_and_follow_up_v2((h()).id, (h()).generation, '0 seconds', 'time_budget', 't')
              - 'follow_ups', '{"held": true, "state": "queued"}', 'release_document_job_and_follow_up_v2 held');
update t.held set job = t.claim();
select is(complete_document_job_and_follow_up_v2((h()).id, (h()).generation) - 'follow_ups',
          '{"held": true, "state": "completed"}', 'complete_document_job_and_follow_up_v2 held');

-- the bounds come from one place
select is((document_jobs_internal.limits()).lease_max, interval '1 hour', 'the longest lease');
select throws_ok(format('select extend_document_job_lease_v2(%L, 1, %L)', (h()).id, '61 minutes'), '22023',
                 (document_jobs_internal.limits()).lease_rule, 'extend_v2 refuses a longer lease with its rule');
select throws_ok(format('select release_document_job_v2(%L, 1, %L)', (h()).id, '25 hours'), '22023',
                 (document_jobs_internal.limits()).retry_after_rule, 'release_v2 refuses a longer delay with its rule');
select ok(document_jobs_internal.next_run_after(1, null) between now() + 0.9 * interval '1 minute'
                                                            and now() + 1.1 * interval '1 minute',
          'the first failure waits for the first backoff (1 minute, with jitter)');
select is(document_jobs_internal.next_run_after(1, interval '1 day'), now() + interval '1 day',
          '... or the provider''s retry-after when longer');

select * from finish();
rollback;
