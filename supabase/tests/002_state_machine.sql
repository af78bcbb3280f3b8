-- Every transition of the job state machine (docs/QUEUE.md, "The job's life") and the fencing of stale workers.
-- The whole file is one transaction, so now() stands still: time "passes" by moving run_after
-- and lease_until into the past.
begin;
set local client_min_messages = error;  -- the failure alerts' "no alert URL stored" warnings
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(63);

-- job() is em_1's: em_2 never gets one (helpers.psql).
select t.add_emails('em_1', 'em_2');

-- enqueue
select is((select created from enqueue_document_job('fetch_email', email_id('em_1'))), true, 'enqueue creates a job');
select is((job()).status, 'queued', 'a new job is queued');
select is((select (job_id, created) from enqueue_document_job('fetch_email', email_id('em_1'))),
          ((job()).id, false), 'enqueueing the same target again returns the live job, created = false');
select is((select count(*)::int from document_jobs), 1, '... and creates nothing');
select throws_ok($$select enqueue_document_job('fetch_email', null)$$, '22023',
                 'p_fax_received_email_id must not be null', 'enqueue needs a target');
select throws_ok($$select enqueue_document_job('make_coffee', email_id('em_2'))$$, '22023',
                 'unknown job kind ''make_coffee'' (see table document_job_kinds)',
                 'an unknown kind is refused');

-- claim
select is((select count(*)::int from claim_document_jobs('fetch_email', 1, '5 minutes')), 1, 'claim takes the job');
select is((job()).status, 'running', 'claimed: running');
select is(((job()).attempts, (job()).generation), (1, 1), 'claimed: attempts 1, generation 1');
select is((job()).lease_until, now() + interval '5 minutes', 'claimed: leased for p_lease');
select is((job()).started_at, now(), 'claimed: started_at set');
select is((select count(*)::int from claim_document_jobs('fetch_email')), 0, 'a leased job is not claimed again');

-- extend, complete
select ok((extend_document_job_lease_v2((job()).id, 1, '10 minutes') ->> 'held')::boolean, 'the holder extends its lease');
select is((job()).lease_until, now() + interval '10 minutes', 'extended: lease_until = now() + p_lease');
select ok((complete_document_job_v2((job()).id, 1) ->> 'held')::boolean, 'the holder completes');
select is(((job()).status, (job()).lease_until, (job()).finished_at), ('completed'::text, null::timestamptz, now()),
          'completed: finished_at set, lease cleared');
select ok(not (complete_document_job_v2((job()).id, 1) ->> 'held')::boolean, 'completing twice changes nothing');
select ok(not (extend_document_job_lease_v2((job()).id, 1, '5 minutes') ->> 'held')::boolean, 'a completed job has no lease to extend');
select is((select created from enqueue_document_job('fetch_email', email_id('em_1'))), true,
          'a target whose job completed can be enqueued again');
delete from document_jobs where status = 'completed';

-- transient failures: backoff 1, 5, 15, 60 minutes with ±10 % jitter, then failed
create table t.backoff (attempt int, delay interval, answer text);
do $$
declare
    j public.document_jobs;
    v_answer text;
begin
    for i in 1..5 loop
        perform public.claim_document_jobs('fetch_email');
        j := t.job();
        v_answer := public.fail_document_job_v2(j.id, j.generation, 'resend_unavailable', 'HTTP 503') ->> 'state';
        insert into backoff select i, (t.job()).run_after - now(), v_answer;
        perform t.expire();
    end loop;
end;
$$;
select ok((select delay between interval '54 seconds' and interval '66 seconds' from backoff where attempt = 1),
          'first failure: retry after 1 min ±10 %');
select ok((select delay between interval '270 seconds' and interval '330 seconds' from backoff where attempt = 2),
          'second failure: 5 min ±10 %');
select ok((select delay between interval '810 seconds' and interval '990 seconds' from backoff where attempt = 3),
          'third failure: 15 min ±10 %');
select ok((select delay between interval '54 minutes' and interval '66 minutes' from backoff where attempt = 4),
          'fourth failure: 60 min ±10 %');
select is(((job()).status, (job()).attempts), ('failed'::text, 5), 'the fifth failure is final: failed');
select is(array(select answer from backoff order by attempt), array['queued', 'queued', 'queued', 'queued', 'failed'],
          'fail answers where it left the job: queued while attempts are left, failed on the last');
select is(((job()).last_error_code, (job()).last_error_message), ('resend_unavailable'::text, 'HTTP 503'::text),
          'failed: the error is recorded');
select is((job()).finished_at, now(), 'failed: finished_at set');
select ok((select count(distinct d) > 40 and min(d) >= interval '54 seconds' and max(d) <= interval '66 seconds'
             from (select document_jobs_internal.backoff(1) d from generate_series(1, 50)) x),
          'the jitter spreads jobs that failed together across the ±10 % window');
update document_jobs_settings set backoff_base = '1 second';
select ok((select min(d) >= interval '13.5 seconds' and max(d) <= interval '16.5 seconds'
             from (select document_jobs_internal.backoff(3) d from generate_series(1, 20)) x),
          'backoff_base scales the schedule (third failure: 15 x 1 s)');
update document_jobs_settings set backoff_base = '1 minute';

-- manual retry
select ok(retry_document_job((job()).id), 'a failed job can be retried by hand');
select is(((job()).status, (job()).attempts, (job()).run_after, (job()).finished_at),
          ('queued'::text, 0, now(), null::timestamptz), 'retried: queued now with attempts 0');
select ok(not retry_document_job((job()).id), 'only a failed job can be retried');
select ok(not retry_document_job(gen_random_uuid()), 'retrying an unknown job changes nothing');

-- permanent failure
select is((select count(*)::int from claim_document_jobs('fetch_email')), 1, 'claim the retried job');
select is(fail_document_job_v2((job()).id, (job()).generation, 'resend_not_found', 'HTTP 404', p_retryable => false) ->> 'state',
          'failed', 'a permanent failure is recorded, and fail says the job is failed');
select is(((job()).status, (job()).attempts), ('failed'::text, 1), 'permanent: failed after one attempt');

-- manual retry while another job for the same target is live: a clear error, not a raw violation
select lives_ok($$select enqueue_document_job('fetch_email', email_id('em_1'))$$, 'a new job for the same target');
select throws_ok(
    format('select retry_document_job(%L)', (select id from document_jobs where status = 'failed')),
    '23505',
    format('document job %s cannot be retried: another job for the same target is already queued or running',
           (select id from document_jobs where status = 'failed')),
    'retrying while another job is live says why');
delete from document_jobs where status = 'failed';

-- the provider's retry-after, when longer than the backoff
select is((select count(*)::int from claim_document_jobs('fetch_email')), 1, 'claim the new job');
select is(fail_document_job_v2((job()).id, (job()).generation, 'resend_rate_limited', null, true, '2 hours') ->> 'state',
          'queued', 'transient failure with retry-after: fail says the job is queued again');
select is((job()).run_after, now() + interval '2 hours', 'retry-after longer than the backoff wins');
do $$ begin perform t.expire(); end $$;
select is((select count(*)::int from claim_document_jobs('fetch_email')), 1, 'claim again');
select is(fail_document_job_v2((job()).id, (job()).generation, 'resend_rate_limited', null, true, '1 second') ->> 'state',
          'queued', 'transient failure with a short retry-after');
select ok((job()).run_after - now() > interval '4 minutes', 'retry-after shorter than the backoff: the backoff wins');
do $$ begin perform t.expire(); end $$;

-- release: not the job's fault, no attempt spent
select is((select attempts from claim_document_jobs('fetch_email')), 3, 'claim: attempt 3');
select is(release_document_job_v2((job()).id, (job()).generation, '10 minutes', 'resend_forbidden', 'HTTP 403') ->> 'state',
          'queued', 'the holder releases the job: release says it is queued');
select is(((job()).status, (job()).attempts, (job()).run_after, (job()).lease_until),
          ('queued'::text, 2, now() + interval '10 minutes', null::timestamptz), 'released: queued, attempt given back');
select is((job()).last_error_code, 'resend_forbidden', 'released: the reason is recorded');
do $$ begin perform t.expire(); end $$;

-- lease expiry: the job is claimed again, and the old generation is fenced off
select is((select (attempts, generation) from claim_document_jobs('fetch_email')), (3, 4), 'claim: generation 4');
do $$ begin perform t.expire(); end $$;
update document_jobs set started_at = now() - interval '1 hour';
select is((select (attempts, generation) from claim_document_jobs('fetch_email')), (4, 5),
          'an expired lease is claimable again: attempts + 1, generation + 1');
select is((job()).started_at, now() - interval '1 hour', 'started_at of the first claim is kept');
create table t.before as select * from job();
select ok(not (extend_document_job_lease_v2((job()).id, 4, '5 minutes') ->> 'held')::boolean, 'stale generation: extend returns false');
select ok(not (complete_document_job_v2((job()).id, 4) ->> 'held')::boolean, 'stale generation: complete returns false');
select is(fail_document_job_v2((job()).id, 4, 'x', 'y', false) ->> 'state', null, 'stale generation: fail returns null');
select is(release_document_job_v2((job()).id, 4) ->> 'state', null, 'stale generation: release returns null');
select ok(not (record_document_attachment_v2((job()).id, 4, 'att_1', 'a.pdf', 'application/pdf', 1, repeat('0', 64),
                                         'fax-attachments', 'x/att_1.pdf') ->> 'held')::boolean,
          'stale generation: recording an attachment returns false');
select is(job()::text, (select b::text from t.before b), 'the stale writes changed nothing');
select is((select count(*)::int from fax_received_email_attachments), 0, '... and recorded no attachment');
select ok((record_document_attachment_v2((job()).id, 5, 'att_1', '請求書.pdf', 'application/pdf', 1, repeat('0', 64),
                                     'fax-attachments', 'x/att_1.pdf') ->> 'held')::boolean, 'the live holder records an attachment');
select is((select (filename, fax_received_email_id) from fax_received_email_attachments),
          ('請求書.pdf'::text, email_id('em_1')), '... for the job''s e-mail');

-- expired with no attempt left: failed with lease_expired, not claimed
do $$ begin perform t.expire(); end $$;
select is((select attempts from claim_document_jobs('fetch_email')), 5, 'the last attempt');
do $$ begin perform t.expire(); end $$;
select is((select count(*)::int from claim_document_jobs('fetch_email')), 0, 'an exhausted expired job is not claimed');
select is(((job()).status, (job()).last_error_code, (job()).lease_until),
          ('failed'::text, 'lease_expired'::text, null::timestamptz), '... it is failed with lease_expired');

select * from finish();
rollback;
