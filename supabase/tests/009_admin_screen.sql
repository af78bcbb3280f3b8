-- The admin screen's calls: the job list's filter and pages, a job, the audit, the overview, and
-- the actions (one job, and every job a filter matches, from a snapshot in bounded batches).
-- One transaction: now() stands still; time "passes" by moving timestamps back.
-- Every action checks its actor's row in auth.users (20261204110000): the admin who acts here is
-- written as Auth writes its users, as supabase_auth_admin, which postgres cannot become; so this
-- file runs on the stack's superuser connection, as postgres except for that row.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback: the reconciliation's job, enqueued on a
-- ten-minute mark, was once counted among this file's jobs.
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(78);

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
values ('a0000000-0000-0000-0000-00000000000a', 'authenticated', 'authenticated', 'op-009@example.com',
        '{"provider": "email", "document_jobs_role": "admin"}', '{}', now(), now());
set local role postgres;

-- p_n e-mails with a job each, received a minute apart from a minute (and p_ago) ago (the newest first
-- in the list). Written as they are to stay: an e-mail's row is never updated.
create function t.emails(p_prefix text, p_n int, p_subject text, p_from text default 'ABC商事 <fax@abc.example.jp>',
                         p_ago interval default interval '0')
returns void language sql as $$
    insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
    select p_prefix || i, p_from, p_subject || ' ' || i, '{}', now() - p_ago - make_interval(mins => i)
      from generate_series(1, p_n) i;
    insert into public.document_jobs (kind, fax_received_email_id, created_at, run_after)
    select 'fetch_email', e.id, e.created_at, e.created_at
      from public.fax_received_emails e where e.provider_email_id like p_prefix || '%';
$$;
create function t.set_status(p_prefix text, p_status text, p_code text default null) returns void language sql as $$
    update public.document_jobs j
       set status = p_status, finished_at = case when p_status in ('completed', 'failed') then now() end,
           attempts = case when p_status = 'failed' then 5 else j.attempts end,
           last_error_code = p_code, last_error_message = 'failed: ' || p_code
      from public.fax_received_emails e
     where e.id = j.fax_received_email_id and e.provider_email_id like p_prefix || '%' $$;
create function t.ids(p_page jsonb) returns uuid[] language sql as $$
    select coalesce(array_agg((x ->> 'id')::uuid order by n), '{}')
      from jsonb_array_elements(p_page -> 'jobs') with ordinality as y(x, n) $$;
create function t.page(p_filter jsonb, p_limit int, p_after jsonb default null) returns jsonb language sql as $$
    select public.document_jobs_admin_jobs(p_filter, (p_after ->> 'created_at')::timestamptz,
                                           (p_after ->> 'id')::uuid, p_limit) $$;
-- Every page of a filter, following "next": the ids in order.
create function t.all_pages(p_filter jsonb, p_limit int) returns uuid[] language plpgsql as $$
declare
    v_page jsonb := t.page(p_filter, p_limit);
    v_ids uuid[] := t.ids(v_page);
begin
    while v_page -> 'next' <> 'null'::jsonb loop
        v_page := t.page(p_filter, p_limit, v_page -> 'next');
        v_ids := v_ids || t.ids(v_page);
    end loop;
    return v_ids;
end;
$$;
-- The jobs, newest first, that match a condition, straight from the table.
create function t.expected(p_where text) returns uuid[] language plpgsql as $$
declare
    v_ids uuid[];
begin
    execute format('select coalesce(array_agg(j.id order by j.created_at desc, j.id desc), ''{}'') from
                    public.document_jobs j left join public.fax_received_emails e on e.id = j.fax_received_email_id
                    where %s', p_where) into v_ids;
    return v_ids;
end;
$$;
create function t.explain(p_sql text) returns text language plpgsql as $$
declare
    v_plan json;
begin
    execute 'explain (format json) ' || p_sql into v_plan;
    return v_plan::text;
end;
$$;
create function t.audit_rows() returns int language sql as $$ select count(*)::int from public.document_jobs_audit $$;
create function t.requests() returns int language sql as $$ select count(*)::int from net.http_request_queue $$;

select t.emails('ok', 30, 'FAX受信: 注文書');
select t.set_status('ok2', 'completed');  -- ok2, ok20..ok29
select t.emails('nf', 5, '請求書');
select t.set_status('nf', 'failed', 'resend_not_found');
select t.emails('to', 3, '100% done_now', p_ago => interval '1 hour');
select t.set_status('to', 'failed', 'resend_timeout');

-- The filter
select throws_ok($$select public.document_jobs_admin_jobs('{"stat": ["failed"]}')$$, '22023',
                 'p_filter has an unknown key "stat" (known: states, kind, error_code, received_from, received_to, sender, q, fax_jobs_only)',
                 'an unknown filter key is refused, by name');
select throws_ok($$select public.document_jobs_admin_jobs('{"states": ["lost"]}')$$, '22023',
                 'p_filter.states must be a non-empty array of queued, running, completed, failed',
                 'a state that does not exist is refused');
select throws_ok($$select public.document_jobs_admin_jobs('{"received_from": "yesterday-ish"}')$$, '22023', null,
                 'a received time that is not a timestamp is refused');
select throws_ok($$select public.document_jobs_admin_jobs('{"received_from": "2026-12-02", "received_to": "2026-12-01"}')$$,
                 '22023', 'p_filter.received_from must be before received_to', 'an empty time range is refused');
select throws_ok($$select public.document_jobs_admin_jobs(jsonb_build_object('q', E'a\u0007b'))$$, '22023',
                 'p_filter.q must be 1 to 200 characters, with no control characters', 'control characters in a search are refused');

-- Pages
select is(t.ids(t.page('{}', 200)), t.expected('true'), 'the list is every job, newest first');
select is(t.all_pages('{}', 7), t.expected('true'), 'pages of 7, following next, give every job once, in order');
select is((t.page('{}', 200) ->> 'count')::int, 38, 'the first page counts the jobs of the filter');
select is(t.all_pages('{"states": ["failed"]}', 3), t.expected($$j.status = 'failed'$$), 'filtered by state');
select is(t.all_pages('{"states": ["queued", "failed"]}', 4), t.expected($$j.status in ('queued', 'failed')$$),
          'filtered by two states: merged in order');
select is(t.all_pages('{"error_code": "resend_not_found"}', 2), t.expected($$j.last_error_code = 'resend_not_found'$$),
          'filtered by error code');
select is(t.all_pages(jsonb_build_object('received_to', now() - interval '20 minutes', 'kind', 'fetch_email'), 4),
          t.expected($$j.created_at < now() - interval '20 minutes'$$), 'filtered by received time and kind');
select is(t.all_pages('{"kind": "no_such_kind"}', 4), '{}'::uuid[], 'a kind with no jobs gives none');

-- Keyset: a job arriving between two pages neither shifts nor repeats anything.
create temporary table first_page as select t.page('{}', 5) as page;
select t.emails('late', 1, 'arrived between pages');
update public.document_jobs set created_at = now() + interval '1 minute' where id = (t.job('late1')).id;
select is(t.ids((select page from first_page)) || t.ids(t.page('{}', 5, (select page -> 'next' from first_page))),
          (t.expected($$e.provider_email_id is distinct from 'late1'$$))[1:10],
          'the second page starts right after the first, whatever arrived meanwhile');

-- Search
select is(t.all_pages('{"q": "請求書"}', 2), t.expected($$e.subject like '請求書%'$$), 'a Japanese subject term');
select is(cardinality(t.all_pages('{"q": "abc商事"}', 10)), 39, 'a sender, case-insensitively');
select is(t.ids(t.page('{"q": "nf1"}', 10)), array[(t.job('nf1')).id], 'the provider''s e-mail id');
select is(t.ids(t.page(jsonb_build_object('q', (t.job('nf2')).id), 10)), array[(t.job('nf2')).id], 'a job id');
select is(t.ids(t.page(jsonb_build_object('q', (t.job('nf3')).fax_received_email_id), 10)), array[(t.job('nf3')).id],
          'an e-mail id');
select is(t.all_pages('{"q": "0% done"}', 10), t.expected($$e.subject like '100%% done%%'$$),
          '% in a term is a percent sign ...');
select is(t.all_pages('{"q": "e_n"}', 10), t.expected($$e.subject like '%%done_now%%'$$), '... and _ an underscore');
select is(t.all_pages('{"q": "請求書", "states": ["completed"]}', 10), '{}'::uuid[], 'a search with a state filter');

-- A term in none of the newest 1,000 jobs: one of three characters or more is found through the
-- trigram index at once; a shorter one is searched 1,000 jobs at a time, every page saying so.
insert into public.fax_received_emails (provider_email_id, subject, data, created_at)
select 'filler' || i, 'nothing to see', '{}', now() + make_interval(secs => i) from generate_series(1, 1100) i;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, created_at)
select 'fetch_email', e.id, 'completed', now(), e.created_at
  from public.fax_received_emails e where e.provider_email_id like 'filler%';
select is(t.page('{"q": "注文書"}', 10) -> 'partial', 'false', 'a term of three characters behind 1,000 newer jobs ...');
select is(t.ids(t.page('{"q": "注文書"}', 10)), (t.expected($$e.subject like '%%注文書%%'$$))[1:10],
          '... gives its first page exactly');
select is(t.page('{"q": "注文"}', 10) - 'filter' - 'searched_until',
          jsonb_build_object('jobs', '[]'::jsonb, 'next', jsonb_build_object(
              'created_at', (select min(created_at) from (select created_at from public.document_jobs
                                                           order by created_at desc limit 1000) n),
              'id', (select id from public.document_jobs order by created_at desc, id desc offset 999 limit 1)),
                             'partial', true, 'count', null, 'count_capped', false),
          'a term of two characters says its page is partial, and where to go on from');
select is(t.all_pages('{"q": "注文"}', 10), t.expected($$e.subject like '%%注文%%'$$),
          'following next, it finds every match, in order, none twice');
select is(t.ids(t.page('{"q": "nf1"}', 10)), array[(t.job('nf1')).id],
          'the provider''s e-mail id behind 1,000 newer jobs, through its index');
insert into public.fax_received_emails (provider, provider_email_id, subject, data, created_at)
values ('another_provider', 'xp1', 'elsewhere', '{}', now() - interval '2 hours');
insert into public.document_jobs (kind, fax_received_email_id, created_at, run_after)
select 'fetch_email', e.id, e.created_at, e.created_at from public.fax_received_emails e where e.provider_email_id = 'xp1';
select is(t.ids(t.page('{"q": "xp1"}', 10)), array[(t.job('xp1')).id], '... whichever the provider');
-- The jobs go (the e-mails stay: they are the record, and without a job no list shows them).
delete from public.document_jobs j using public.fax_received_emails e
 where e.id = j.fax_received_email_id and (e.provider_email_id like 'filler%' or e.provider_email_id = 'xp1');

-- The index lookup reads the subjects' trigram index and the senders' hash index.
set local enable_seqscan = off;
select ok((select bool_and(t.explain(format(q, '%注文書%')) like '%' || i || '%')
                 from (values ('select e.id from public.fax_received_emails e where e.subject ilike %L',
                               'fax_received_emails_subject_search'),
                              ('select e.id from document_jobs_internal.email_senders s join public.fax_received_emails e
                                 on e.from_address = s.from_address where s.from_address ilike %L',
                               'fax_received_emails_by_sender')) v(q, i)),
          'the subject search uses its trigram index, and a sender''s e-mails the hash index');
reset enable_seqscan;

-- A job
select is((public.document_jobs_admin_job((t.job('nf1')).id) -> 'email' ->> 'subject'), '請求書 1', 'a job and its e-mail');
select is(public.document_jobs_admin_job('00000000-0000-0000-0000-000000000000'), null, 'no such job: null');
insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                                   size_bytes, sha256, bucket, storage_path)
values ((t.job('nf1')).fax_received_email_id, 'att_1', '請求書.pdf', 'application/pdf', 618, repeat('a', 64),
        'fax-attachments', 'fax_received_emails/x/att_1.pdf');
select is(public.document_jobs_admin_job((t.job('nf1')).id) -> 'attachments' -> 0 ->> 'filename', '請求書.pdf',
          'its attachments, with their original names');

-- One job
select is(public.admin_retry_document_job((t.job('nf1')).id, 'a0000000-0000-0000-0000-00000000000a', 'op@example.com'),
          '{"changed": true}', 'an admin retries a failed job ...');
select is(((t.job('nf1')).status, (t.job('nf1')).attempts), ('queued'::text, 0), '... which is queued, attempts reset');
select is((select (actor_email, action, job_id, job_count) from public.document_jobs_audit),
          ('op@example.com'::text, 'retry'::text, (t.job('nf1')).id, 1), '... and the audit says who did what');
select is(public.admin_retry_document_job((t.job('nf1')).id, 'a0000000-0000-0000-0000-00000000000a'),
          '{"changed": false, "reason": "not_failed"}', 'a job that is not failed is not retried ...');
select is(t.audit_rows(), 1, '... and nothing is recorded');
select throws_ok($$select public.admin_cancel_document_job((t.job('ok1')).id, 'a0000000-0000-0000-0000-00000000000a',
                                                            'op@example.com', '  ')$$,
                 '22023', 'p_reason must not be empty', 'a cancel needs a reason');
select is(public.admin_cancel_document_job((t.job('ok1')).id, 'a0000000-0000-0000-0000-00000000000a', 'op@example.com',
                                           'duplicate fax'), '{"changed": true}', 'an admin cancels a queued job ...');
select is(((t.job('ok1')).status, (t.job('ok1')).last_error_code, (t.job('ok1')).last_error_message),
          ('failed'::text, 'cancelled'::text, 'duplicate fax'::text), '... with the reason');
select throws_ok($$update public.document_jobs_audit set reason = 'rewritten'$$, '42501',
                 'document_jobs_audit is append-only: its rows are never updated or deleted', 'the audit is never rewritten');

-- Bulk retry of every job failed with one error code.
select vault.create_secret('http://127.0.0.1:9/worker', 'document_jobs_url');
select vault.create_secret('a-secret', 'internal_function_secret');
select t.emails('br', 6, 'storage');
select t.set_status('br', 'failed', 'storage_rejected');
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, attempts, last_error_code, created_at)
values ('fetch_email', (t.job('br5')).fax_received_email_id, 'failed', now(), 5, 'storage_rejected',
        (t.job('br5')).created_at - interval '1 second');  -- an older failed job of the same e-mail
create temporary table bulk as
select public.prepare_document_jobs_bulk_action('retry', '{"error_code": "storage_rejected"}',
                                               'a0000000-0000-0000-0000-00000000000a', 'op@example.com') as prepared;
select is((select (prepared ->> 'job_count')::int from bulk), 7, 'the count is of the failed jobs the filter matches');
create function t.bulk_id() returns uuid language sql as $$ select (prepared ->> 'bulk_action_id')::uuid from bulk $$;
-- What happens between the count and the action:
insert into public.document_jobs (kind, fax_received_email_id) values ('fetch_email', (t.job('br2')).fax_received_email_id);
update public.document_jobs set status = 'queued', finished_at = null where id = (t.job('br3')).id;
delete from public.document_jobs where id = (t.job('br4')).id;
select t.emails('br9', 1, 'storage');
select t.set_status('br9', 'failed', 'storage_rejected');  -- failed after the count
select throws_ok(format('select public.apply_document_jobs_bulk_action(%L, %L, %L)', t.bulk_id(),
                        'b0000000-0000-0000-0000-00000000000b', 'new bucket'),
                 '42501', 'only the operator who counted these jobs may apply the action',
                 'only the operator who counted may apply');
select throws_ok(format('select public.apply_document_jobs_bulk_action(%L, %L)', t.bulk_id(),
                        'a0000000-0000-0000-0000-00000000000a'),
                 '22023', 'p_reason must not be empty', 'a bulk action needs a reason');
create temporary table first_batch as
select public.apply_document_jobs_bulk_action(t.bulk_id(), 'a0000000-0000-0000-0000-00000000000a', 'bucket created', 3)
       as progress;
select is((select (progress ->> 'processed', progress ->> 'done', progress ->> 'job_count') from first_batch),
          ('3'::text, 'false'::text, '7'::text), 'a batch of 3: not done yet');
select is((select count(*)::int from public.document_jobs_audit where action = 'bulk_retry'), 1,
          'the first batch records the action in the audit');
select is(public.apply_document_jobs_bulk_action(t.bulk_id(), 'a0000000-0000-0000-0000-00000000000a', null, 3) ->> 'done',
          'false', 'a second batch of 3 ...');
create temporary table finished as
select public.apply_document_jobs_bulk_action(t.bulk_id(), 'a0000000-0000-0000-0000-00000000000a', null, 3) as progress;
select is((select (progress ->> 'done', progress ->> 'processed', progress ->> 'changed') from finished),
          ('true'::text, '7'::text, '3'::text), '... and a third: done, 7 processed, 3 changed');
select is((select progress -> 'skipped_by_reason' from finished),
          '{"another_live_job": 1, "not_failed": 1, "job_deleted": 1, "another_job_of_the_same_email": 1}',
          'the others, and why');
select is((select jsonb_array_length(progress -> 'not_changed') from finished), 4, 'the jobs not changed are listed');
select is(array[(t.job('br1')).status, (t.job('br5')).status, (t.job('br6')).status], array['queued', 'queued', 'queued'],
          'the retried jobs are queued');
select is((select status from public.document_jobs where fax_received_email_id = (t.job('br5')).fax_received_email_id
            and id <> (t.job('br5')).id), 'failed', 'of two failed jobs of one e-mail, the newest is retried');
select is((t.job('br91')).status, 'failed', 'a job that failed after the count is left alone');
select is(public.apply_document_jobs_bulk_action(t.bulk_id(), 'a0000000-0000-0000-0000-00000000000a', null) -> 'changed',
          '3', 'applying it again changes nothing ...');
select is((select (count(*)::int, min(job_count), min(reason)) from public.document_jobs_audit where action = 'bulk_retry'),
          (1, 7, 'bucket created'::text), '... and it is in the audit once, with its count and reason');
select ok(t.requests() > 0, 'workers are started for what it re-queued (pg_net requests queued)');
select is((public.prepare_document_jobs_bulk_action('retry', '{"states": ["queued"]}',
                                                   'a0000000-0000-0000-0000-00000000000a') ->> 'job_count')::int,
          0, 'a retry counts failed jobs only: none among queued ones');
create temporary table stale as
select public.prepare_document_jobs_bulk_action('retry', '{"error_code": "resend_timeout"}',
                                               'a0000000-0000-0000-0000-00000000000a') as prepared;
update document_jobs_internal.bulk_actions set prepared_at = now() - interval '16 minutes'
 where id = (select (prepared ->> 'bulk_action_id')::uuid from stale);
select throws_ok(format('select public.apply_document_jobs_bulk_action(%L, %L, %L)',
                        (select prepared ->> 'bulk_action_id' from stale), 'a0000000-0000-0000-0000-00000000000a', 'x'),
                 '22023', 'these jobs were counted more than 15 minutes ago: count them again', 'a stale count is refused');
select throws_ok($$select public.apply_document_jobs_bulk_action('00000000-0000-0000-0000-000000000000',
                                                                 'a0000000-0000-0000-0000-00000000000a', 'x')$$,
                 'P0002', 'no bulk action 00000000-0000-0000-0000-000000000000', 'an unknown action');
insert into public.document_jobs (kind, status, finished_at, attempts, last_error_code)
select 'fetch_email', 'failed', now(), 5, 'many' from generate_series(1, 50001);
select throws_ok($$select public.prepare_document_jobs_bulk_action('retry', '{"error_code": "many"}',
                                                                   'a0000000-0000-0000-0000-00000000000a')$$,
                 '22023', 'more than 50000 jobs match: narrow the filter (received time, error code) and count again',
                 'more than 50,000 jobs at once are refused');
delete from public.document_jobs where last_error_code = 'many';

-- Bulk cancel, and its alerts
select vault.create_secret('http://127.0.0.1:9/chat', 'document_jobs_alert_url');
create temporary table requests_before as select t.requests() as n;
create temporary table cancel as
select public.prepare_document_jobs_bulk_action('cancel', jsonb_build_object('received_from', now() - interval '10 minutes'),
                                               'a0000000-0000-0000-0000-00000000000a', 'op@example.com') as prepared;
select is((select (prepared ->> 'job_count')::int from cancel),
          (select count(*)::int from public.document_jobs where status in ('queued', 'running')
              and created_at >= now() - interval '10 minutes'),
          'a cancel counts the live jobs the filter matches');
select is(public.apply_document_jobs_bulk_action((select (prepared ->> 'bulk_action_id')::uuid from cancel),
                                                 'a0000000-0000-0000-0000-00000000000a', 'sender resent') ->> 'done',
          'true', 'and cancels them ...');
select is((select count(*)::int from public.document_jobs where last_error_message = 'sender resent'
              and last_error_code = 'cancelled'), (select (prepared ->> 'job_count')::int from cancel), '... with the reason');
select is(t.requests(), (select n from requests_before), '... and no alert for each');
select public.admin_cancel_document_job((t.job('ok15')).id, 'a0000000-0000-0000-0000-00000000000a', null, 'one job');
select is(t.requests(), (select n + 1 from requests_before), 'a single cancel still alerts');

-- The overview
select is((public.document_jobs_admin_overview() -> 'states') - 'completed' - 'completed_estimated',
          jsonb_build_object('queued', (select count(*) from public.document_jobs where status = 'queued'),
                             'running', (select count(*) from public.document_jobs where status = 'running'),
                             'failed', (select count(*) from public.document_jobs where status = 'failed'),
                             'failed_closed', 0),
          'exact counts of queued, running and failed jobs (no fax is marked done here: none is closed)');
analyze public.document_jobs;
select is(public.document_jobs_admin_overview() -> 'states' -> 'completed',
          to_jsonb((select count(*) from public.document_jobs where status = 'completed')),
          'completed jobs: the statistics'' estimate (exact on a table this small)');
select is(jsonb_array_length(public.document_jobs_admin_overview() -> 'hours'), 168, 'seven days of hours');
select is(document_jobs_internal.fill_hourly_outcomes(), 0, 'settled hours are computed once');
update public.document_jobs set created_at = now() - interval '2 seconds', run_after = now() - interval '1 day'
 where id = (t.job('ok16')).id;
select is((public.document_jobs_admin_overview() -> 'oldest_waiting' ->> 'id')::uuid, (t.job('ok16')).id,
          'the oldest waiting job');
select claim_document_jobs('fetch_email', 1);
select complete_document_job_v2((t.job('ok16')).id, 1);
select is(public.document_jobs_admin_overview() -> 'hours' -> 167 -> 'latency_p50_ms', '2000',
          'the latency from webhook to stored, this hour');
select ok(public.document_jobs_admin_overview() -> 'failed_by_error_code' @> '[{"error_code": "resend_timeout", "count": 3}]',
          'failed jobs now, by error code');

-- The audit view
select is(jsonb_array_length(public.document_jobs_admin_audit() -> 'entries'), t.audit_rows(), 'the audit, all of it');
select is(public.document_jobs_admin_audit(null, 1) -> 'entries' -> 0 -> 'action', '"cancel"', 'newest first');
select is((public.document_jobs_admin_audit((public.document_jobs_admin_audit(null, 2) ->> 'next')::bigint, 200)
           -> 'entries' -> 0 -> 'id')::bigint, (select id from public.document_jobs_audit order by id desc offset 2 limit 1),
          'the next page starts after the last entry shown');
select is((public.document_jobs_admin_audit() -> 'entries' -> 1 -> 'bulk') - 'id' - 'finished_at',
          (select jsonb_build_object('changed', changed, 'skipped', skipped, 'done', true)
             from document_jobs_internal.bulk_actions where action = 'cancel'),
          'a bulk action''s entry says how it went');

-- Privileges
select table_privs_are('public', 'document_jobs_audit', 'service_role', array['SELECT'], 'service_role reads the audit only');
select ok((select relrowsecurity from pg_class where oid = 'public.document_jobs_audit'::regclass), 'the audit has RLS on');

select * from finish();
rollback;
