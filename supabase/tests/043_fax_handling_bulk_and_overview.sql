-- A bulk mark done (20261207140100_fax_handling_bulk.sql) and the overview's open problems
-- (20261207140200_overview_counts_open_problems.sql).
--
-- The count comes first: prepare_fax_handling_bulk counts the faxes whose jobs the job list's
-- filter matches (each fax once, however many of its jobs match; a fax already done not at all)
-- and keeps them; apply_fax_handling_bulk marks exactly those done, in batches, with the note of
-- its first call (required), audited once (bulk_handle, the filter, the count, the note), each
-- mark in the history under that audit row. A fax marked done since the count is skipped. Only the
-- operator who counted applies it; a viewer may not count; a clerk banned after the count is
-- refused at the next batch and nothing more is marked.
--
-- The overview counts a failed job as a problem until its fax is marked done: failed and failed by
-- error code count the open ones, failed_closed the others; once every failure's fax is done, no
-- failure is left to show (the screen's 「失敗はありません。」).
--
-- The inbox (20261207140300) lists each fax with its handling and filters by it: the handling
-- states wanted (a fax never marked is new) and whose it is; and a bulk mark done takes the
-- inbox's filter too (scope faxes).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback (see 009).
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(35);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       ord int generated always as identity,
                       email text generated always as ('bulk-handle-' || ord || '@example.com') stored);
insert into t.people (name) values ('a clerk'), ('another clerk'), ('a viewer');
grant usage on schema t to service_role, supabase_auth_admin;
grant create on schema t to service_role;  -- the snapshot's answer, kept in t.bulk
grant select on t.people to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
select p.user_id, 'authenticated', 'authenticated', p.email,
       jsonb_build_object('provider', 'email',
                          'document_jobs_role', case when p.name = 'a viewer' then 'viewer' else 'clerk' end),
       '{}', now(), now()
  from t.people p;
set local role postgres;
create function t.person(p_name text) returns uuid language sql as $$ select user_id from t.people where name = p_name $$;
create function t.email_of(p_name text) returns text language sql as $$ select email from t.people where name = p_name $$;
create function t.ban(p_name text, p_until timestamptz) returns void language sql as $$
    update auth.users set banned_until = p_until where id = t.person(p_name) $$;

-- Five faxes the provider lost (two jobs failed for one of them), two failed otherwise, and one
-- completed; one of the lost ones is already done.
select t.add_emails('lost-1', 'lost-2', 'lost-3', 'lost-4', 'lost-5', 'other-1', 'other-2', 'fine-1');
insert into public.document_jobs (kind, fax_received_email_id, status, attempts, finished_at, last_error_code)
select 'fetch_email', t.email_id(e), 'failed', 5, now(), c
  from (values ('lost-1', 'resend_not_found'), ('lost-2', 'resend_not_found'), ('lost-3', 'resend_not_found'),
               ('lost-4', 'resend_not_found'), ('lost-5', 'resend_not_found'), ('other-1', 'storage_too_large'),
               ('other-2', 'resend_rejected')) v(e, c);
insert into public.document_jobs (kind, fax_received_email_id, status, attempts, finished_at, last_error_code)
values ('prepare_fax', t.email_id('lost-1'), 'failed', 1, now(), 'resend_not_found');
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at)
values ('fetch_email', t.email_id('fine-1'), 'completed', now());
grant execute on function t.person(text), t.email_of(text), t.email_id(text) to service_role;

set local role service_role;
select is((public.document_jobs_admin_overview() -> 'states') - 'completed' - 'completed_estimated' - 'queued' - 'running',
          '{"failed": 8, "failed_closed": 0}', 'before any mark, every failed job is an open problem');
select is(public.mark_fax_handling(t.email_id('lost-5'), t.person('another clerk'), 'done', 'printed from the PDF')
          ->> 'changed', 'true', 'one lost fax is marked done by hand');
select is((public.document_jobs_admin_overview() -> 'failed_by_error_code'),
          '[{"count": 5, "error_code": "resend_not_found"}, {"count": 1, "error_code": "resend_rejected"},
            {"count": 1, "error_code": "storage_too_large"}]',
          '... and its failure is no longer counted by its error code');

-- The count comes first, of faxes not jobs, and leaves the done one out.
select throws_ok(format($$ select public.prepare_fax_handling_bulk('jobs', '{"error_code": "resend_not_found"}', %L) $$,
                        t.person('a viewer')),
                 '42501', null, 'a viewer may not count a bulk mark');
create table t.bulk as
select public.prepare_fax_handling_bulk('jobs', '{"states": ["failed"], "error_code": "resend_not_found"}',
                                        t.person('a clerk')) as prepared;
select is((select (prepared ->> 'fax_count')::int from t.bulk), 4,
          'four faxes, counted once each (lost-1 has two failed jobs), lost-5 left out as done');
select is((select prepared -> 'filter' from t.bulk), '{"states": ["failed"], "error_code": "resend_not_found"}',
          'the filter as counted');
create function t.bulk_id() returns uuid language sql as $$ select (prepared ->> 'bulk_action_id')::uuid from t.bulk $$;
select is((select count(*)::int from public.fax_handling h where h.state = 'done'), 1, 'counting marked nothing');

-- Applying: the counting clerk only, with a note on the first call; then in batches.
select throws_ok(format($$ select public.apply_fax_handling_bulk(%L, %L, 'not mine') $$, t.bulk_id(),
                        t.person('another clerk')),
                 '42501', 'only the operator who counted these faxes may mark them', 'another clerk may not apply it');
select throws_ok(format($$ select public.apply_fax_handling_bulk(%L, %L, ' ') $$, t.bulk_id(), t.person('a clerk')),
                 '22023', 'p_note must not be empty', 'the first call needs a note');
select is((public.apply_fax_handling_bulk(t.bulk_id(), t.person('a clerk'), '送信元に再送を依頼済み', 2)
           - 'started_at' - 'finished_at' - 'bulk_action_id' - 'filter'),
          '{"scope": "jobs", "fax_count": 4, "changed": 2, "skipped": 0, "processed": 2, "done": false, "note": "送信元に再送を依頼済み",
            "not_changed": [], "batch_size": 2}',
          'its first batch of two marks two faxes');
-- Someone marks one of the rest done by hand meanwhile.
set local role postgres;
create table t.rest as
select f.fax_received_email_id from document_jobs_internal.handling_bulk_action_faxes f
 where f.bulk_action_id = t.bulk_id() and f.outcome is null order by 1 limit 1;
grant select on t.rest to service_role;
set local role service_role;
select is(public.mark_fax_handling((select fax_received_email_id from t.rest), t.person('another clerk'), 'done',
                                   '送信元に再送を依頼済み') ->> 'changed',
          'true', 'another clerk marks one of the rest done by hand');

-- The clerk is banned: the next batch is refused, and marks nothing.
set local role supabase_auth_admin;
select t.ban('a clerk', now() + interval '1 hour');
set local role service_role;
select throws_ok(format($$ select public.apply_fax_handling_bulk(%L, %L, null, 2) $$, t.bulk_id(), t.person('a clerk')),
                 '28000', null, 'a clerk banned after the count is refused at the next batch');
select is((select count(*)::int from public.fax_handling h where h.state = 'done'), 4, '... and nothing more is marked');
set local role supabase_auth_admin;
select t.ban('a clerk', null);
set local role service_role;
select is((public.apply_fax_handling_bulk(t.bulk_id(), t.person('a clerk'), 'a later note', 2)
           - 'started_at' - 'finished_at' - 'bulk_action_id' - 'filter' - 'not_changed'),
          '{"scope": "jobs", "fax_count": 4, "changed": 3, "skipped": 1, "processed": 4, "done": true, "note": "送信元に再送を依頼済み",
            "batch_size": 2}',
          'the ban lifted, the last batch marks one and skips the one done meanwhile; the first note stays');
select is(public.apply_fax_handling_bulk(t.bulk_id(), t.person('a clerk')) -> 'not_changed',
          jsonb_build_array(jsonb_build_object('fax_received_email_id', (select fax_received_email_id from t.rest),
                                               'reason', 'already_done')),
          'called again once done, it changes nothing and says which fax it skipped and why');

-- What it wrote: the faxes done with the note, one audit row, every mark under it.
select is(array(select e.provider_email_id || ' ' || coalesce(h.state, 'new') || ' ' || coalesce(h.note, '-')
                  from public.fax_received_emails e left join public.fax_handling h on h.fax_received_email_id = e.id
                 order by e.provider_email_id),
          array['fine-1 new -', 'lost-1 done 送信元に再送を依頼済み', 'lost-2 done 送信元に再送を依頼済み',
                'lost-3 done 送信元に再送を依頼済み', 'lost-4 done 送信元に再送を依頼済み', 'lost-5 done printed from the PDF',
                'other-1 new -', 'other-2 new -'],
          'the lost faxes are done with their notes, the others untouched');
select is(array(select format('%s %s %s %s', a.action, a.actor_email, a.job_count, a.reason)
                  from public.document_jobs_audit a where a.action = 'bulk_handle'),
          array['bulk_handle bulk-handle-1@example.com 4 送信元に再送を依頼済み'], 'one audit row for the bulk mark');
select is((select count(*)::int from public.fax_handling_history h
             join public.document_jobs_audit a on a.id = h.audit_id and a.action = 'bulk_handle'), 3,
          'its three marks are in the history under it');
select is((select (e -> 'bulk') - 'id' - 'finished_at'
             from jsonb_array_elements(public.document_jobs_admin_audit(null, 50) -> 'entries') e
            where e ->> 'action' = 'bulk_handle'),
          '{"changed": 3, "skipped": 1, "done": true}', 'the audit says how far the bulk mark got');

-- A count applied more than 15 minutes later must be counted again.
select is((public.prepare_fax_handling_bulk('jobs', '{"error_code": "storage_too_large"}', t.person('another clerk'))
           ->> 'fax_count')::int, 1, 'another count');
set local role postgres;
update document_jobs_internal.handling_bulk_actions set prepared_at = now() - interval '16 minutes'
 where started_at is null;
set local role service_role;
set local role postgres;
create table t.late as select id from document_jobs_internal.handling_bulk_actions where started_at is null;
grant select on t.late to service_role;
set local role service_role;
select throws_ok(format($$ select public.apply_fax_handling_bulk((select id from t.late), %L, 'late') $$,
                        t.person('another clerk')),
                 '22023', 'these faxes were counted more than 15 minutes ago: count them again',
                 '... and a stale count is refused');

-- The overview: the resend_not_found failures are closed; the two others stay open problems.
select is((public.document_jobs_admin_overview() -> 'states') - 'completed' - 'completed_estimated' - 'queued' - 'running',
          '{"failed": 2, "failed_closed": 6}', 'six failed jobs closed by their fax, two open');
select is((public.document_jobs_admin_overview() -> 'failed_by_error_code'),
          '[{"count": 1, "error_code": "resend_rejected"}, {"count": 1, "error_code": "storage_too_large"}]',
          'failed by error code counts the open ones only');

-- The inbox: each fax's handling, and its filters.
create function t.inbox(p_filter jsonb) returns text[] language sql as $$
    select array(select e.provider_email_id || ' ' || (f -> 'handling' ->> 'state')
                   from jsonb_array_elements(public.document_jobs_admin_faxes(p_filter) -> 'faxes') f
                   join public.fax_received_emails e on e.id = (f ->> 'id')::uuid order by 1) $$;
select is(t.inbox('{}'), array['fine-1 new', 'lost-1 done', 'lost-2 done', 'lost-3 done', 'lost-4 done', 'lost-5 done',
                               'other-1 new', 'other-2 new'], 'the inbox shows each fax''s handling');
select is(t.inbox('{"handling": ["new"]}'), array['fine-1 new', 'other-1 new', 'other-2 new'],
          'filtered by handling: the faxes never marked are new');
select is(public.document_jobs_admin_faxes('{"handling": ["done"]}') -> 'count', '5'::jsonb,
          'the faxes done, counted exactly through fax_handling''s index');
select is(public.document_jobs_admin_faxes(jsonb_build_object('assignee', upper(t.email_of('another clerk'))))
          -> 'count', '2'::jsonb, 'whose: the faxes another clerk closed, however the address is written');
select throws_ok($$ select public.document_jobs_admin_faxes('{"handling": ["archived"]}') $$, '22023',
                 'p_filter.handling must be a non-empty array of new, in_progress, done', 'an unknown handling state');

-- Beside the law's index fields (20261207150100): a filter of both, and a bulk mark of both.
select is((public.set_fax_index(t.person('a clerk'), null, t.email_id('other-1'), '{"doc_type": "請求書"}', null, 0)
           ->> 'changed'), 'true', 'a clerk files a fax as an invoice');
select is(t.inbox('{"doc_type": "請求書", "handling": ["new"]}'), array['other-1 new'],
          'the inbox filters by the index and the handling together');
select is((public.prepare_fax_handling_bulk('faxes', '{"doc_type": "請求書", "handling": ["new"]}',
                                            t.person('a clerk')) ->> 'fax_count')::int, 1,
          'a bulk mark counts what that list shows');

-- A bulk mark done of the inbox's filter: every fax not done yet, and then no open problem is left.
create table t.inbox_bulk as
select public.prepare_fax_handling_bulk('faxes', '{"handling": ["new", "in_progress"]}', t.person('a clerk'))
           as prepared;
select is((select (prepared ->> 'fax_count')::int from t.inbox_bulk), 3, 'the inbox''s filter counts three faxes');
select is((public.apply_fax_handling_bulk((select (prepared ->> 'bulk_action_id')::uuid from t.inbox_bulk),
                                          t.person('a clerk'), 'checked by phone') ->> 'changed')::int, 3,
          '... and marks them done');
select is((public.document_jobs_admin_overview() -> 'states') - 'completed' - 'completed_estimated' - 'queued' - 'running',
          '{"failed": 0, "failed_closed": 8}', 'every failure dealt with: no open problem');
select is(public.document_jobs_admin_overview() -> 'failed_by_error_code', '[]', '... none to show by error code');

select * from finish();
rollback;
