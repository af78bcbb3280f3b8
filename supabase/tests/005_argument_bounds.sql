-- Every count or interval argument that can fan out or park work has an upper bound, refused
-- with 22023 and a message naming the argument and its bounds (PostgREST: HTTP 400). A job
-- parked for centuries is lost work; a claim or a fan-out without a bound is a crowd.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(45);

select t.add_emails('em_bounds');
select lives_ok($$select enqueue_document_job('fetch_email', (select id from fax_received_emails))$$, 'a job');

-- leases: (0, 1 hour]
select throws_ok($$select * from claim_document_jobs('fetch_email', 1, '1000 years')$$, '22023',
                 'p_lease must be more than 0 and at most 1 hour', 'a claim with a lease of 1000 years is refused');
select throws_ok($$select * from claim_document_jobs('fetch_email', 1, '1 hour 1 second')$$, '22023',
                 'p_lease must be more than 0 and at most 1 hour', '... and one second over an hour');
select throws_ok($$select * from claim_document_jobs('fetch_email', 1, '0 seconds')$$, '22023',
                 'p_lease must be more than 0 and at most 1 hour', '... and no lease at all');
select throws_ok($$select * from claim_document_jobs('fetch_email', 1, null)$$, '22023',
                 'p_lease must be more than 0 and at most 1 hour', '... and a null lease');
select is((select status from document_jobs), 'queued', 'the refused claims took nothing');
select is((select lease_until from claim_document_jobs('fetch_email', 1, '1 hour')), now() + interval '1 hour',
          'a lease of exactly an hour is granted');
select throws_ok(format('select extend_document_job_lease_v2(%L, 1, %L)', (job()).id, '1000 years'), '22023',
                 'p_lease must be more than 0 and at most 1 hour', 'extending by 1000 years is refused');
select throws_ok(format('select extend_document_job_lease_v2(%L, 1, %L)', (job()).id, '61 minutes'), '22023',
                 'p_lease must be more than 0 and at most 1 hour', '... and by 61 minutes');
select is((job()).lease_until, now() + interval '1 hour', '... and the lease is unchanged');
select ok((extend_document_job_lease_v2((job()).id, 1, '1 hour') ->> 'held')::boolean, 'extending by an hour works');

-- retry_after of fail and release: [0, 1 day]
select throws_ok(format('select fail_document_job_v2(%L, 1, %L, null, true, %L)', (job()).id, 'x', '1000 years'),
                 '22023', 'p_retry_after must be between 0 and 1 day', 'fail: a retry after 1000 years is refused');
select throws_ok(format('select fail_document_job_v2(%L, 1, %L, null, true, %L)', (job()).id, 'x', '1 day 1 second'),
                 '22023', 'p_retry_after must be between 0 and 1 day', '... and one second over a day');
select throws_ok(format('select fail_document_job_v2(%L, 1, %L, null, true, %L)', (job()).id, 'x', '-1 second'),
                 '22023', 'p_retry_after must be between 0 and 1 day', '... and a negative wait');
select throws_ok(format('select release_document_job_v2(%L, 1, %L)', (job()).id, '1000 years'),
                 '22023', 'p_retry_after must be between 0 and 1 day', 'release: a delay of 1000 years is refused');
select throws_ok(format('select release_document_job_v2(%L, 1, %L)', (job()).id, '25 hours'),
                 '22023', 'p_retry_after must be between 0 and 1 day', '... and of 25 hours');
select throws_ok(format('select release_document_job_v2(%L, 1, %L)', (job()).id, '-1 second'),
                 '22023', 'p_retry_after must be between 0 and 1 day', '... and a negative one');
select is(((job()).status, (job()).generation), ('running'::text, 1), 'the refused writes left the job running');
select is(fail_document_job_v2((job()).id, 1, 'resend_rate_limited', null, true, '1 day') ->> 'state',
          'queued', 'fail: a retry after exactly a day is recorded');
select is(((job()).status, (job()).run_after), ('queued'::text, now() + interval '1 day'), '... queued for a day');
update document_jobs set run_after = now() - interval '1 second';
select is((select generation from claim_document_jobs('fetch_email')), 2, 'claimed again');
select is(release_document_job_v2((job()).id, 2, '1 day') ->> 'state', 'queued', 'release: a delay of exactly a day is recorded');
select is(((job()).status, (job()).run_after), ('queued'::text, now() + interval '1 day'), '... queued for a day');
select lives_ok($$select release_document_job_v2('00000000-0000-0000-0000-000000000000', 1, null)$$,
                'release: a null delay is no delay');
update document_jobs set run_after = now() - interval '1 second';

-- claim limit: [1, 100]
select throws_ok($$select * from claim_document_jobs('fetch_email', 101)$$, '22023',
                 'p_limit must be between 1 and 100', 'a claim of 101 jobs is refused');
select throws_ok($$select * from claim_document_jobs('fetch_email', 0)$$, '22023',
                 'p_limit must be between 1 and 100', '... and of none');
select is((select count(*)::int from claim_document_jobs('fetch_email', 100)), 1, 'a claim of up to 100 works');

-- fan-out of the cron entry point: [1, 20]
select throws_ok($$select invoke_document_jobs(21)$$, '22023', 'p_max_invocations must be between 1 and 20',
                 '21 invocations at once are refused');
select throws_ok($$select invoke_document_jobs(1000000)$$, '22023', 'p_max_invocations must be between 1 and 20',
                 '... and a million');
select throws_ok($$select invoke_document_jobs(0)$$, '22023', 'p_max_invocations must be between 1 and 20',
                 '... and none');
select is(invoke_document_jobs(20), 0, '20 is allowed (nothing is claimable here: no POST)');

-- retention: [1 hour, 10 years], for the setting and for a purge
select throws_ok($$select set_document_jobs_retention('1000000 years')$$, '22023',
                 'p_completed_job_retention must be between 1 hour and 10 years',
                 'a retention of a million years is refused');
select throws_ok($$select set_document_jobs_retention('10 years 1 day')$$, '22023',
                 'p_completed_job_retention must be between 1 hour and 10 years', '... and just over 10 years');
select throws_ok($$select set_document_jobs_retention('59 minutes')$$, '22023',
                 'p_completed_job_retention must be between 1 hour and 10 years', '... and under an hour');
select is(set_document_jobs_retention('10 years'), interval '10 years', 'ten years is allowed');
select is(set_document_jobs_retention('1 hour'), interval '1 hour', 'an hour is allowed');
select throws_ok($$update document_jobs_settings set completed_job_retention = '1000000 years'$$, '22023',
                 'completed_job_retention must be between 1 hour and 10 years',
                 'the same bounds hold when the setting is changed by hand');
select is((select completed_job_retention from document_jobs_settings), interval '1 hour', '... which changed nothing');
select throws_ok($$select purge_document_jobs('1000000 years')$$, '22023',
                 'p_older_than must be between 1 hour and 10 years', 'a purge older than a million years is refused');
select throws_ok($$select purge_document_jobs('-1 day')$$, '22023',
                 'p_older_than must be between 1 hour and 10 years', '... and a negative age');
select is(purge_document_jobs('10 years'), 0, 'a purge of jobs older than ten years is allowed');

-- backoff_base (by hand only): (0, 1 hour], so the longest backoff is 60 hours
select throws_ok($$update document_jobs_settings set backoff_base = '2 hours'$$, '23514', null,
                 'a backoff base over an hour is refused');
select throws_ok($$update document_jobs_settings set backoff_base = '0 seconds'$$, '23514', null,
                 '... and one of zero');
select lives_ok($$update document_jobs_settings set backoff_base = '1 hour'$$, 'an hour is allowed');
select is((select backoff_base from document_jobs_settings), interval '1 hour', '... and set');

select * from finish();
rollback;
