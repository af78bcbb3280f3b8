-- A database crash stalls nothing: worker POSTs no longer depend on pg_net's request ids being
-- unique for ever.
--
-- pg_net keeps its requests in net.http_request_queue (unlogged, id bigserial) and their answers in
-- net._http_response (unlogged). Crash recovery resets unlogged tables, and from PostgreSQL 15 on
-- their sequences too: after a crash (`pg_ctl -m immediate`, a backend killed by the OOM killer, a
-- failover) the answers are gone and request ids start again at 1. Before this migration:
--
-- - worker_requests (logged, rows kept 7 hours) had the pg_net id as its primary key, so every kick
--   after a crash failed with 23505 worker_requests_pkey until the sequence passed the ids still
--   kept: the webhook answered 500 and the cron's fan-out failed the same way;
-- - invocations_in_flight() counted every POST of the last 300 s without an answer, and the crash
--   had erased the answers: up to a whole cap of phantom invocations held back new kicks for 300 s;
-- - once ids repeated, an answer to a new request also matched the old row with the same id, in
--   the in-flight count and in the health check's reading of the worker's answers.
--
-- Now:
--
-- - worker_requests has its own identity key; request_id is a plain, nullable column (indexed).
-- - A pg_net "generation": a logged counter, and the current value in an unlogged table of our own,
--   which a crash empties exactly when it empties pg_net's tables and resets its sequence. Whoever
--   POSTs to the worker (post_worker, under its lock) first looks at that marker: empty, a crash
--   happened since the last POST, so a new generation begins and every older row gives up its
--   request_id (its answer was erased, and pg_net hands the same id to another request). Each row
--   records the generation it was queued in. A pg_net id then names at most one row, so every join
--   of worker_requests with net._http_response on the id (the health check's among them) pairs an
--   answer with its own request. The server's start time (pg_postmaster_start_time()) would not
--   tell a crash: crash recovery after one backend dies resets unlogged tables without restarting
--   the postmaster, and a clean restart, which keeps pg_net's tables and ids, moves it.
-- - In flight: a POST of the current generation, queued within the last maxDuration, with no
--   answer. A crash's erased answers no longer count; a POST that was being sent when the server
--   stopped cleanly still counts until its maxDuration, as before (the function may well still run).
--
-- Left as it was: between a crash and the first POST after it (a kick or the cron's fan-out), the
-- old rows still carry their ids, and an alert POST given one of them could be read by the health
-- check as a worker answer for those few minutes.

create sequence document_jobs_internal.pg_net_generations;

create unlogged table document_jobs_internal.pg_net_generation (
    generation bigint primary key,
    began_at timestamptz not null default clock_timestamp()
);
comment on table document_jobs_internal.pg_net_generation is
    'Unlogged like pg_net''s tables: empty after a crash, when pg_net''s request ids restart. One row: the generation of pg_net ids in use.';

-- The generation in use: null after a crash, until the next POST begins one.
create function document_jobs_internal.pg_net_generation_in_use()
returns bigint
language sql
stable
set search_path = ''
as $$
    select g.generation from document_jobs_internal.pg_net_generation g
$$;

-- The rows of today are of the first generation.
insert into document_jobs_internal.pg_net_generation (generation)
values (nextval('document_jobs_internal.pg_net_generations'));

alter table document_jobs_internal.worker_requests
    drop constraint worker_requests_pkey,
    add column id bigint generated always as identity primary key,
    add column pg_net_generation bigint,
    alter column request_id drop not null;
update document_jobs_internal.worker_requests set pg_net_generation = document_jobs_internal.pg_net_generation_in_use();
alter table document_jobs_internal.worker_requests
    alter column pg_net_generation set default document_jobs_internal.pg_net_generation_in_use();
create index worker_requests_request_id on document_jobs_internal.worker_requests (request_id);
comment on column document_jobs_internal.worker_requests.request_id is
    'pg_net''s request id (net.http_request_queue, net._http_response); null once a crash erased its answer and pg_net may hand the id out again.';
comment on column document_jobs_internal.worker_requests.created_at is 'When the POST was queued.';
comment on column document_jobs_internal.worker_requests.pg_net_generation is
    'The pg_net generation (document_jobs_internal.pg_net_generation) the POST was queued in.';

-- The current pg_net generation; a new one when a crash emptied the marker, and then the rows of
-- the older ones give up their pg_net ids. Call it under post_worker's lock.
create function document_jobs_internal.current_pg_net_generation()
returns bigint
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_generation bigint;
begin
    select g.generation into v_generation from document_jobs_internal.pg_net_generation g;
    if v_generation is null then
        v_generation := nextval('document_jobs_internal.pg_net_generations');
        insert into document_jobs_internal.pg_net_generation (generation) values (v_generation);
        update document_jobs_internal.worker_requests w
           set request_id = null
         where w.request_id is not null
           and w.pg_net_generation is distinct from v_generation;
    end if;
    return v_generation;
end;
$$;

-- Worker invocations in flight: POSTed in the pg_net generation in use, within the last
-- maxDuration, and not answered (none in flight when a crash emptied the marker). An answer is recorded after its
-- request, so only the answers of that same span need looking at (pg_net's answer table keeps 6
-- hours of everyone's answers, indexed on created).
create or replace function document_jobs_internal.invocations_in_flight()
returns int
language plpgsql
volatile
set search_path = ''
as $$
declare
    c_max_duration constant interval := interval '300 seconds';  -- vercel.json: the worker's maxDuration
    v_since timestamptz := clock_timestamp() - c_max_duration;
    v_generation bigint := document_jobs_internal.pg_net_generation_in_use();
begin
    return (
        select count(*)::int
          from document_jobs_internal.worker_requests w
         where w.created_at > v_since
           and w.pg_net_generation = v_generation
           and not exists (select 1 from net._http_response r where r.created > v_since and r.id = w.request_id));
end;
$$;

-- POSTs to the worker through pg_net, at most p_count and only while fewer than the cap are in
-- flight; the requests are sent only if and after the calling transaction commits. Returns how
-- many were queued (0 and a WARNING when Vault lacks the URL or the secret). Each is recorded in
-- worker_requests with its pg_net id, the time it was counted in and its pg_net generation.
create or replace function document_jobs_internal.post_worker(p_count int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_url text;
    v_secret text;
    v_count int;
    v_generation bigint;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    -- One caller at a time counts and adds, until its transaction ends: two webhooks at once must
    -- not both take the last free place. (A transaction-level advisory lock of this function's own.)
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('document_jobs_internal.post_worker', 0));
    v_generation := document_jobs_internal.current_pg_net_generation();
    v_count := least(p_count, document_jobs_internal.invocation_cap() - document_jobs_internal.invocations_in_flight());
    for i in 1..v_count loop
        insert into document_jobs_internal.worker_requests (request_id, created_at, pg_net_generation)
        values (net.http_post(
                    url => v_url,
                    body => '{}'::jsonb,
                    headers => jsonb_build_object('Content-Type', 'application/json',
                                                  'Authorization', 'Bearer ' || v_secret),
                    timeout_milliseconds => 300000  -- the worker's maxDuration
                ),
                clock_timestamp(),
                v_generation);
    end loop;
    return greatest(v_count, 0);
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;

comment on sequence document_jobs_internal.pg_net_generations is
    'Logged, so it keeps counting across a crash while the unlogged pg_net_generation is emptied: each crash gets a new generation of pg_net ids.';
comment on function document_jobs_internal.pg_net_generation_in_use() is
    'The generation of pg_net ids in use; null after a crash until the next POST begins one (worker_requests.pg_net_generation''s default).';
comment on function document_jobs_internal.current_pg_net_generation() is
    'The generation of pg_net ids in use, beginning a new one when a crash emptied the marker; the rows of older generations then give up their pg_net ids, which pg_net hands out again. Called under post_worker''s lock.';
comment on function document_jobs_internal.invocations_in_flight() is
    'Worker invocations in flight: POSTed in the pg_net generation in use within the last maxDuration (300 s) and not answered. A crash erases pg_net''s answers and restarts its ids, so only the current generation counts, and only the answers of that span are looked at (pg_net''s answer table keeps 6 hours of everyone''s answers, indexed on created).';
comment on sequence document_jobs_internal.worker_requests_id_seq is
    'worker_requests'' own key: pg_net''s request ids repeat after a crash, so they cannot be it.';
