-- After a crash pg_net's unlogged tables are empty and its request ids start again: no kick fails
-- on a repeated id, the POSTs whose answers the crash erased are not in flight, and an answer is
-- matched to its own request only. The crash is simulated here as crash recovery leaves things:
-- the unlogged tables (pg_net's and our generation marker) emptied and pg_net's sequence set back
-- (tests/flow/test_database_crash.py crashes a real server).
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(16);

create function t.in_flight() returns int language sql as $$ select document_jobs_internal.invocations_in_flight() $$;
create function t.rows() returns bigint language sql as $$ select count(*) from document_jobs_internal.worker_requests $$;

delete from document_jobs_internal.worker_requests;
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret');
select vault.create_secret('https://app.example/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('pg-net-crash-test-secret', 'internal_function_secret');
update document_jobs_settings set max_invocations_in_flight = 12;

select is(document_jobs_internal.post_worker(3), 3, 'three POSTs before the crash');
create table t.before as select id, request_id, pg_net_generation from document_jobs_internal.worker_requests;
-- What crash recovery does to unlogged tables and their sequences (sequence changes are not
-- transactional: the file puts pg_net's sequence back past every id it used at the end).
create function t.crash() returns void language sql as $$
    delete from net.http_request_queue;
    delete from net._http_response;
    delete from document_jobs_internal.pg_net_generation;
    select setval('net.http_request_queue_id_seq', (select min(request_id) from t.before), false);
$$;

select is(t.in_flight(), 3, '... in flight while unanswered');

select t.crash();
select is(t.in_flight(), 0, 'after a crash, the POSTs whose answers it erased are not in flight');
select lives_ok($$select document_jobs_internal.post_worker(3)$$, 'the kicks after the crash get the same pg_net ids and are recorded');
select is((select count(*) from document_jobs_internal.worker_requests w
            where w.request_id in (select request_id from t.before) and w.id not in (select id from t.before)),
          3::bigint, '... the ids repeat indeed');
select is(t.rows(), 6::bigint, 'the rows from before the crash are kept');
select ok((select bool_and(w.request_id is null) from document_jobs_internal.worker_requests w
            where w.id in (select id from t.before)),
          '... without their pg_net ids, which name the new requests now');
select is((select count(distinct w.pg_net_generation) from document_jobs_internal.worker_requests w
            where w.id not in (select id from t.before)), 1::bigint, 'the new POSTs are of one generation');
select ok((select max(w.pg_net_generation) from document_jobs_internal.worker_requests w)
            > (select max(pg_net_generation) from t.before), '... a newer one than before the crash');
select is(t.in_flight(), 3, 'the new POSTs are in flight');

-- pg_net answers one of them.
insert into net._http_response (id, status_code)
select min(w.request_id), 200 from document_jobs_internal.worker_requests w where w.request_id is not null;
select is(t.in_flight(), 2, 'an answer ends the one invocation it answers');
select is((select count(*) from document_jobs_internal.worker_requests w join net._http_response r on r.id = w.request_id),
          1::bigint, 'an answer matches one row, its own request''s, as the health check reads them');

-- Without a crash the generation stays and nothing gives up its id.
select is(document_jobs_internal.post_worker(2), 2, 'two more POSTs');
select is((select count(distinct w.pg_net_generation) from document_jobs_internal.worker_requests w
            where w.id not in (select id from t.before)), 1::bigint, '... of the same generation');
select is(t.in_flight(), 4, '... counted with the others still in flight');

-- A second crash before any new POST: nothing of the old generation stays in flight.
select t.crash();
select is(t.in_flight(), 0, 'a crash erases every answer: nothing is in flight before the next POST');

select setval('net.http_request_queue_id_seq', (select max(request_id) from t.before) + 100);
select * from finish();
rollback;
