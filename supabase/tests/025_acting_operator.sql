-- Every action checks the operator it names in Supabase Auth's own row, in the action's own call
-- (document_jobs_internal.acting_operator through require_actor, 20261204110000): the single retry
-- and cancel, the bulk action's count and each of its batches, and the reconciliation by hand act
-- for an admin whose row is there, not deleted and not banned, and refuse, changing nothing and
-- auditing nothing, a user banned until later (28000 operator_banned), one with deleted_at or whose
-- row is gone (28000 operator_deleted), a viewer (42501 role_not_allowed), and a user with no role
-- or one in user_metadata only (42501 no_role). A ban that is over allows it again. A bulk action
-- whose admin is banned after the count stops at its next call, first or later, and goes on once
-- the ban is lifted. The CLI, which has no session, relies on this: tests/cli/test_acting_operator.py.
--
-- Auth's rows are written as Auth writes them, as its role supabase_auth_admin: postgres may only
-- read auth's tables (as on hosted Supabase), so this file runs on the stack's superuser
-- connection, as postgres except for those rows; the actions are called as service_role, as
-- PostgREST calls them for the screen and the CLI.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback (see 009).
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(45);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       ord int generated always as identity, email text generated always as ('act-' || ord || '@example.com') stored);
insert into t.people (name) values
    ('an admin'), ('an admin whose ban is over'), ('an admin banned until later'), ('an admin with deleted_at'),
    ('an admin whose row is gone'), ('a viewer'), ('a user with no role'), ('a user with admin in user_metadata only');
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                        banned_until, deleted_at)
select p.user_id, 'authenticated', 'authenticated', p.email,
       '{"provider": "email"}'::jsonb || case
           when p.name = 'a viewer' then '{"document_jobs_role": "viewer"}'::jsonb
           when p.name in ('a user with no role', 'a user with admin in user_metadata only') then '{}'
           else '{"document_jobs_role": "admin"}' end,
       case when p.name = 'a user with admin in user_metadata only' then '{"document_jobs_role": "admin"}'::jsonb
            else '{}' end,
       now(), now(),
       case p.name when 'an admin whose ban is over' then now() - interval '1 minute'
                   when 'an admin banned until later' then now() + interval '1 hour' end,
       case when p.name = 'an admin with deleted_at' then now() - interval '1 minute' end
  from t.people p;
-- A hard delete (DELETE /admin/users/{id}, or the dashboard's): the row is gone.
delete from auth.users where id = (select user_id from t.people where name = 'an admin whose row is gone');
set local role postgres;

-- Each person's own jobs: one failed (to retry), one queued (to cancel), both of their own error
-- code and e-mail, and an e-mail for Resend to list that no webhook delivered.
insert into public.fax_received_emails (provider_email_id, data)
select format('em-%s-%s', s, p.ord), '{}' from t.people p cross join unnest(array['f', 'q']) s;
insert into public.document_jobs (kind, fax_received_email_id, status, attempts, finished_at, last_error_code)
select 'fetch_email', t.email_id(format('em-f-%s', p.ord)), 'failed', 5, now(), format('code_%s', p.ord) from t.people p;
insert into public.document_jobs (kind, fax_received_email_id) select 'fetch_email', t.email_id(format('em-q-%s', p.ord))
  from t.people p;
create function t.item(p_id text) returns jsonb language sql as $$
    select jsonb_build_object('id', p_id, 'created_at', to_char((now() - interval '1 hour') at time zone 'UTC',
                              'YYYY-MM-DD HH24:MI:SS.US"+00"'), 'from', 'fax@example.jp', 'to', '["faxes@example.com"]'::jsonb,
                              'subject', 'FAX', 'message_id', '<' || p_id || '@x>', 'attachments', '[]'::jsonb) $$;

-- Each action, as its door calls it, for each person: the SQL, written here where the jobs can be read.
create table t.cases as
select p.name, p.ord, a.action, a.ord as action_ord, format(a.call, p.user_id, p.email, (t.job(format('em-f-%s', p.ord))).id,
                                                   (t.job(format('em-q-%s', p.ord))).id, t.item(format('em-listed-%s', p.ord)),
                                                   p.ord) as sql
  from t.people p
 cross join (values
    (1, 'retry', 'select public.admin_retry_document_job(%3$L, %1$L, %2$L, null)'),
    (2, 'cancel', 'select public.admin_cancel_document_job(%4$L, %1$L, %2$L, ''duplicate fax'')'),
    (3, 'a bulk count', 'select public.prepare_document_jobs_bulk_action(''retry'', ''{"error_code": "code_%6$s"}'', %1$L, %2$L)'),
    (4, 'a reconciliation by hand',
        'select public.admin_record_reconciled_emails(%1$L, %2$L, jsonb_build_array(%5$L::jsonb), now() - interval ''1 day'', 1)')
 ) a(ord, action, call);
grant select on t.cases to service_role;
-- What a call answered, or its refusal as 'SQLSTATE hint: message'.
create function t.outcome(p_sql text) returns text language plpgsql as $$
declare
    v_state text;
    v_hint text;
    v_message text;
begin
    execute p_sql;
    return 'answered';
exception when others then
    get stacked diagnostics v_state = returned_sqlstate, v_hint = pg_exception_hint, v_message = message_text;
    return format('%s %s: %s', v_state, v_hint, v_message);
end;
$$;

set local role service_role;

-- An admin, and an admin whose ban is over, act.
select is(t.outcome(c.sql), 'answered', format('%s for %s', c.action, c.name))
  from t.cases c where c.name in ('an admin', 'an admin whose ban is over') order by c.ord, c.action_ord;

-- The others are refused, each with its SQLSTATE, hint and message.
select is(t.outcome(c.sql),
          format('28000 operator_banned: %s is banned in Supabase Auth until %s: a banned user may not act', p.email,
                 to_char((now() + interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')),
          format('%s refuses %s: operator_banned', c.action, c.name))
  from t.cases c join t.people p using (name) where c.name = 'an admin banned until later' order by c.action_ord;
select is(t.outcome(c.sql),
          format('28000 operator_deleted: the operator %s was deleted from Supabase Auth: a deleted user may not act',
                 p.user_id),
          format('%s refuses %s: operator_deleted', c.action, c.name))
  from t.cases c join t.people p using (name)
 where c.name in ('an admin with deleted_at', 'an admin whose row is gone') order by c.ord, c.action_ord;
select is(t.outcome(c.sql), format('42501 role_not_allowed: %s is a viewer: only an admin may act', p.email),
          format('%s refuses %s: role_not_allowed', c.action, c.name))
  from t.cases c join t.people p using (name) where c.name = 'a viewer' order by c.action_ord;
select is(t.outcome(c.sql), format('42501 no_role: %s has no role on the admin screen: only an admin may act', p.email),
          format('%s refuses %s: no_role', c.action, c.name))
  from t.cases c join t.people p using (name)
 where c.name in ('a user with no role', 'a user with admin in user_metadata only') order by c.ord, c.action_ord;
select throws_ok($$ select public.admin_retry_document_job(gen_random_uuid(), null) $$,
                 '22023', 'p_actor_id must not be null', 'no actor at all is still a bad argument');

set local role postgres;
-- What the refused calls did: nothing.
select is(array(select distinct actor_id from public.document_jobs_audit order by 1),
          array(select user_id from t.people where name in ('an admin', 'an admin whose ban is over') order by 1),
          'the audit names only the two who may act');
select is(array(select (t.job(format('em-%s-%s', s, p.ord))).status || ' ' || s from t.people p
                 cross join unnest(array['f', 'q']) s
                 where p.name not in ('an admin', 'an admin whose ban is over') order by p.ord, s),
          array(select x from t.people p cross join unnest(array['failed f', 'queued q']) x
                 where p.name not in ('an admin', 'an admin whose ban is over') order by p.ord, x),
          'their jobs are neither retried nor cancelled');
select is((select count(*)::int from public.fax_received_emails e join t.people p on e.provider_email_id = 'em-listed-' || p.ord
            where p.name not in ('an admin', 'an admin whose ban is over')), 0,
          'no e-mail is recorded for them');
select is((select count(*)::int from document_jobs_internal.bulk_actions b join t.people p on p.user_id = b.actor_id
            where p.name not in ('an admin', 'an admin whose ban is over')), 0, 'no bulk action is counted for them');

-- A bulk action whose admin is banned after the count: refused at its first call, and at a later one.
insert into public.document_jobs (kind, status, attempts, finished_at, last_error_code)
select 'fetch_email', 'failed', 5, now(), 'bulk_banned' from generate_series(1, 3);
create table t.bulk as
select (public.prepare_document_jobs_bulk_action('retry', '{"error_code": "bulk_banned"}', p.user_id, p.email)
        ->> 'bulk_action_id')::uuid as id, p.user_id, p.email
  from t.people p where p.name = 'an admin';
grant select on t.bulk to service_role, supabase_auth_admin;
create function t.ban(p_until timestamptz) returns void language sql as $$
    update auth.users set banned_until = p_until where id = (select user_id from t.bulk) $$;
create function t.apply(p_reason text) returns text language sql as $$
    select t.outcome(format('select public.apply_document_jobs_bulk_action(%L, %L, %L, 1)', b.id, b.user_id, p_reason))
      from t.bulk b $$;
create function t.changed() returns int language sql as $$
    select count(*)::int from public.document_jobs where last_error_code = 'bulk_banned' and status = 'queued' $$;
grant execute on function t.apply(text) to service_role;

set local role supabase_auth_admin;
select t.ban(now() + interval '1 hour');
set local role service_role;
select is(t.apply('key rotated'),
          format('28000 operator_banned: %s is banned in Supabase Auth until %s: a banned user may not act',
                 (select email from t.bulk), to_char((now() + interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')),
          'a bulk action''s first call is refused once its admin is banned ...');
set local role postgres;
select is((t.changed(), (select count(*)::int from public.document_jobs_audit a join t.bulk b on a.bulk_action_id = b.id)),
          (0, 0), '... changing nothing and auditing nothing');

set local role supabase_auth_admin;
select t.ban(null);  -- the ban lifted (ban_duration "none")
set local role service_role;
select is(t.apply('key rotated'), 'answered', 'the ban lifted, its first batch is applied ...');
set local role postgres;
select is((t.changed(), (select count(*)::int from public.document_jobs_audit a join t.bulk b on a.bulk_action_id = b.id)),
          (1, 1), '... one job changed, and the action audited');

set local role supabase_auth_admin;
select t.ban(now() + interval '1 hour');
set local role service_role;
select is(t.apply(null), format('28000 operator_banned: %s is banned in Supabase Auth until %s: a banned user may not act',
                 (select email from t.bulk), to_char((now() + interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')),
          'banned again, its next batch is refused ...');
set local role postgres;
select is(t.changed(), 1, '... and changes nothing more');

set local role supabase_auth_admin;
select t.ban(now() - interval '1 second');  -- a ban that is over
set local role service_role;
select is(t.apply(null), 'answered', 'once the ban is over, the next call goes on');
set local role postgres;
select is(t.changed(), 2, '... with the next batch');

select * from finish();
rollback;
