-- Worker invocations in flight are bounded on the one path that starts them (post_worker): the
-- kick, the cron's fan-out and a stopping invocation's follow-up all stop at the cap; an
-- invocation counts from its POST until pg_net has its answer, or until its maxDuration passed.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(27);

create function t.in_flight() returns int language sql as $$ select document_jobs_internal.invocations_in_flight() $$;
create function t.posts() returns bigint language sql as $$ select count(*) from document_jobs_internal.worker_requests $$;
-- pg_net answers the oldest p_count requests still in flight.
create function t.answer(p_count int) returns void language sql as $$
    insert into net._http_response (id, status_code)
    select w.request_id, 200 from document_jobs_internal.worker_requests w
     where not exists (select 1 from net._http_response r where r.id = w.request_id)
     order by w.request_id limit p_count
$$;

delete from document_jobs_internal.worker_requests;
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret');
select vault.create_secret('https://app.example/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('bounded-invocations-test-secret', 'internal_function_secret');
update document_jobs_settings set max_invocations_in_flight = null;
update document_jobs_rate_limits set requests_per_second = 5, share_for_others = 0.2 where provider = 'resend';

select is(document_jobs_internal.invocation_cap(), 12, 'the cap by default: three times the 4 requests a second the limiter allows');

-- A burst of 20 e-mails: each kicks, but only while fewer than the cap are in flight.
select record_inbound_email('em_burst_' || n, 'msg_' || n, '{}') from generate_series(1, 20) n;
select is(t.posts(), 12::bigint, '20 kicks queue 12 worker POSTs: the cap');
select is((select count(*) from net.http_request_queue where url like '%/api/internal/document-jobs'), 12::bigint,
          '... which are the requests pg_net will send');
select is((select count(*) from document_jobs where status = 'queued'), 20::bigint, 'every e-mail has its job');
select is(t.in_flight(), 12, 'all 12 are in flight until answered');
select is(invoke_document_jobs(), 0, 'the cron''s fan-out starts nothing more while the cap is reached');

select t.answer(3);
select is(t.in_flight(), 9, 'three answered: nine in flight');
select is(invoke_document_jobs(), 3, 'the fan-out (20 claimable: 7 invocations) starts only the 3 that fit');
select is(t.in_flight(), 12, '... up to the cap');

update document_jobs_internal.worker_requests
   set created_at = clock_timestamp() - interval '301 seconds'
 where request_id in (select request_id from document_jobs_internal.worker_requests
                       where request_id not in (select id from net._http_response) order by request_id limit 2);
select is(t.in_flight(), 10, 'a POST never answered stops counting once its maxDuration (300 s) has passed');
update document_jobs_internal.worker_requests set created_at = clock_timestamp() - interval '299 seconds'
 where created_at < clock_timestamp() - interval '300 seconds';
select is(t.in_flight(), 12, '... and not before');

update document_jobs_settings set max_invocations_in_flight = 2;
select is(document_jobs_internal.invocation_cap(), 2, 'the cap is a setting');
select t.answer(100);
select is(invoke_document_jobs(5), 2, 'with none in flight, p_max_invocations 5 and a cap of 2 start 2');
select is(document_jobs_internal.post_worker(1), 0, 'the kick''s path starts nothing beyond it either');
select throws_ok($$update document_jobs_settings set max_invocations_in_flight = 21$$, '23514', null,
                 'more than 20 in flight is refused');
select throws_ok($$update document_jobs_settings set max_invocations_in_flight = 0$$, '23514', null,
                 '... and none at all');

-- A stopping invocation's last write starts its follow-up, in the same transaction.
select t.answer(100);
create table t.jobs as select * from claim_document_jobs('fetch_email', 3);
select document_jobs_internal.post_worker(1);  -- the invocation that claimed them: in flight, unanswered
select is(complete_document_job_and_follow_up_v2((select id from t.jobs order by id limit 1), 1),
          '{"held": true, "state": "completed", "follow_ups": 1}'::jsonb,
          'work is claimable: the completion starts a follow-up, within the cap of 2 with the asker counted');
select is(t.in_flight(), 2, '... which fills the cap');
select is(fail_document_job_and_follow_up_v2((select id from t.jobs order by id limit 1 offset 1), 1,
                                             'resend_unavailable'),
          '{"held": true, "state": "queued", "follow_ups": 0}'::jsonb,
          'the cap reached: a failure records itself and starts nothing');
select t.answer(1);
select is(release_document_job_and_follow_up_v2((select id from t.jobs order by id limit 1 offset 2), 1, '0 seconds',
                                                 'time_budget', 'x'),
          '{"held": true, "state": "queued", "follow_ups": 1}'::jsonb, 'a release starts one as soon as there is room');
select is(complete_document_job_and_follow_up_v2(gen_random_uuid(), 1),
          '{"held": false, "state": null, "follow_ups": 0}'::jsonb,
          'a lost lease is reported as such; the follow-up is decided as for any other last call');
select is((select status from document_jobs where id = (select id from t.jobs order by id limit 1)), 'completed',
          'the wrapped writes are the queue''s own: completed');
select is((select (status, attempts) from document_jobs where id = (select id from t.jobs order by id limit 1 offset 2)),
          ('queued'::text, 0), '... and released with the attempt given back');

update document_jobs_settings set max_invocations_in_flight = null;
select t.answer(100);
update document_jobs set status = 'completed', finished_at = now(), lease_until = null
 where status in ('queued', 'running');
create table t.last as select * from document_jobs where status = 'completed' limit 1;
update document_jobs set status = 'running', lease_until = now() + interval '5 minutes', generation = 9
 where id = (select id from t.last);
select is(complete_document_job_and_follow_up_v2((select id from t.last), 9),
          '{"held": true, "state": "completed", "follow_ups": 0}'::jsonb,
          'nothing claimable: no follow-up');
select is(t.in_flight(), 0, '... and no POST');

select throws_ok($$select complete_document_job_and_follow_up_v2(null, 1)$$, '22023', 'p_job_id must not be null',
                 'the wrapped write checks its arguments as ever');
select throws_ok($$select release_document_job_and_follow_up_v2(gen_random_uuid(), 1, '2 days')$$, '22023',
                 'p_retry_after must be between 0 and 1 day', '... every one of them');

select * from finish();
rollback;
