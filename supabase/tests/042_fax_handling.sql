-- Who is dealing with a fax (20261207140000_fax_handling.sql): mark_fax_handling, as service_role
-- calls it for the screen and the CLI, lets a clerk and an admin mark a fax (new -> in_progress,
-- taken by them -> done, with a note) and refuses, in the same call and changing nothing, a viewer
-- (42501 role_not_allowed), a banned clerk (28000 operator_banned), a deleted one (28000
-- operator_deleted) and a user with no role (42501 no_role). Each mark is audited (action handle,
-- the note as its reason) and kept in fax_handling_history with who, when, from and to; a mark
-- the operator made on a state that has moved on since changes nothing (handling_changed), nor
-- does a mark that would change nothing (unchanged). The e-mail's row never changes. The history
-- cannot be changed, and neither table can be written by service_role. Every role reads the
-- handling (document_jobs_operator_fax_handling): a clerk reads whatever a viewer reads.
--
-- Auth's rows are written as Auth writes them, as its role supabase_auth_admin (see 025).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(40);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       session_id uuid not null default gen_random_uuid(),
                       ord int generated always as identity,
                       email text generated always as ('handle-' || ord || '@example.com') stored);
insert into t.people (name) values
    ('an admin'), ('a clerk'), ('another clerk'), ('a viewer'), ('a banned clerk'), ('a deleted clerk'),
    ('a user with no role');
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                        banned_until, deleted_at)
select p.user_id, 'authenticated', 'authenticated', p.email,
       '{"provider": "email"}'::jsonb || case
           when p.name = 'an admin' then '{"document_jobs_role": "admin"}'::jsonb
           when p.name = 'a viewer' then '{"document_jobs_role": "viewer"}'
           when p.name = 'a user with no role' then '{}'
           else '{"document_jobs_role": "clerk"}' end,
       '{}', now(), now(),
       case when p.name = 'a banned clerk' then now() + interval '1 hour' end,
       case when p.name = 'a deleted clerk' then now() - interval '1 minute' end
  from t.people p;
insert into auth.sessions (id, user_id, created_at, updated_at, aal)
select p.session_id, p.user_id, now(), now(), 'aal1' from t.people p;
set local role postgres;

select t.add_emails('hd-1', 'hd-2', 'hd-refused');
-- Each e-mail's row and where its version is (an update writes a new version elsewhere; a lock does not).
create table t.email_rows as select e::text || ' ' || e.ctid::text as row from public.fax_received_emails e;

create function t.person(p_name text) returns uuid language sql as $$ select user_id from t.people where name = p_name $$;
-- A mark's answer, or its refusal as 'SQLSTATE hint: message'.
create function t.mark(p_who text, p_email text, p_state text, p_note text default null, p_from text default null)
returns text language plpgsql as $$
declare
    v_answer jsonb;
    v_state text;
    v_hint text;
    v_message text;
begin
    v_answer := public.mark_fax_handling(t.email_id(p_email), t.person(p_who), p_state, p_note, p_from);
    return format('%s %s %s', v_answer ->> 'changed', coalesce(v_answer ->> 'reason', '-'), v_answer -> 'handling' ->> 'state');
exception when others then
    get stacked diagnostics v_state = returned_sqlstate, v_hint = pg_exception_hint, v_message = message_text;
    return format('%s %s: %s', v_state, v_hint, v_message);
end;
$$;
grant execute on function t.mark(text, text, text, text, text), t.person(text), t.email_id(text) to service_role;
create function t.handling(p_email text) returns text language sql as $$
    select coalesce(h.state, 'none') || ' ' || coalesce(h.assignee_email, '-') || ' ' || coalesce(h.note, '-')
      from (select t.email_id(p_email) as id) x left join public.fax_handling h on h.fax_received_email_id = x.id $$;

set local role service_role;

-- A fax never marked is new, and reading it marks nothing.
select is(public.document_jobs_admin_fax_handling(t.email_id('hd-1')) ->> 'state', 'new', 'a fax never marked is new');
select is((select count(*)::int from public.fax_handling), 0, '... and reading it wrote nothing');
select is(public.document_jobs_admin_fax_handling(gen_random_uuid()), null, 'no such fax: null');

-- A clerk takes a fax (one tap from new), then closes it with a note.
select is(t.mark('a clerk', 'hd-1', 'in_progress', null, 'new'), 'true - in_progress', 'a clerk takes a new fax');
select is(t.handling('hd-1'), 'in_progress handle-2@example.com -', '... it is theirs now');
select is(t.mark('another clerk', 'hd-1', 'in_progress', null, 'new'),
          'false handling_changed in_progress', 'another clerk who saw it new changes nothing ...');
select is(t.handling('hd-1'), 'in_progress handle-2@example.com -', '... it stays the first clerk''s');
select is(t.mark('a clerk', 'hd-1', 'done', '送信元に再送を依頼済み', 'in_progress'), 'true - done',
          'the clerk closes it with a note');
select is(t.handling('hd-1'), 'done handle-2@example.com 送信元に再送を依頼済み', '... done, by them, with the note');
select is(t.mark('a clerk', 'hd-1', 'done', null, 'done'), 'false unchanged done', 'marking it done again changes nothing');
select is(t.mark('a clerk', 'hd-1', 'done', '  ', null), 'true - done', 'an empty note clears the note');
select is(t.handling('hd-1'), 'done handle-2@example.com -', '... and the state stays');

-- An admin does everything a clerk does: here, reopens the fax.
select is(t.mark('an admin', 'hd-1', 'new'), 'true - new', 'an admin reopens it');
select is(t.handling('hd-1'), 'new - -', '... new again, nobody''s');
select is(t.mark('an admin', 'hd-2', 'done', 'printed and filed'), 'true - done', 'an admin marks a new fax done at once');

-- The others are refused, changing nothing.
select is(t.mark('a viewer', 'hd-refused', 'done'),
          '42501 role_not_allowed: handle-4@example.com is a viewer: only an admin or a clerk may act',
          'a viewer may not mark');
select is(t.mark('a banned clerk', 'hd-refused', 'in_progress'),
          format('28000 operator_banned: handle-5@example.com is banned in Supabase Auth until %s: a banned user may not act',
                 to_char((now() + interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')),
          'a banned clerk may not mark');
select is(t.mark('a deleted clerk', 'hd-refused', 'in_progress'),
          format('28000 operator_deleted: the operator %s was deleted from Supabase Auth: a deleted user may not act',
                 t.person('a deleted clerk')),
          'a deleted clerk may not mark');
select is(t.mark('a user with no role', 'hd-refused', 'in_progress'),
          '42501 no_role: handle-7@example.com has no role on the admin screen: only an admin or a clerk may act',
          'a user with no role may not mark');
select is(t.handling('hd-refused'), 'none - -', 'the refused marks wrote nothing');

-- Bad arguments.
select is(t.mark('a clerk', 'hd-refused', 'archived'), '22023 : p_state must be new, in_progress or done',
          'an unknown state');
select is(t.mark('a clerk', 'hd-refused', 'done', repeat('x', 501)), '22023 : p_note must be at most 500 characters',
          'a note of more than 500 characters');
select is(t.mark('a clerk', 'hd-refused', 'done', E'bell\x07'),
          '22023 : p_note must hold no control characters but line breaks and tabs', 'a control character in a note');
select is(t.mark('a clerk', 'hd-refused', 'done', E'line one\nline two'), 'true - done', 'a note of two lines');
select throws_ok(format($$ select public.mark_fax_handling(%L, %L, 'done') $$, gen_random_uuid(), t.person('a clerk')),
                 'P0002', null, 'no such fax');

-- Each mark in the history: who, from, to, the note given; the audit names each once.
select is(array(select format('%s %s>%s %s %s', h.actor_email, h.from_state, h.to_state, coalesce(h.to_assignee_email, '-'),
                              coalesce(h.note, '-'))
                  from public.fax_handling_history h where h.fax_received_email_id = t.email_id('hd-1') order by h.id),
          array['handle-2@example.com new>in_progress handle-2@example.com -',
                'handle-2@example.com in_progress>done handle-2@example.com 送信元に再送を依頼済み',
                'handle-2@example.com done>done handle-2@example.com -',
                'handle-1@example.com done>new - -'],
          'the history of the first fax, in order');
select is(array(select format('%s %s %s %s', a.action, a.actor_email, a.job_count, coalesce(a.reason, '-'))
                  from public.document_jobs_audit a order by a.id),
          array['handle handle-2@example.com 1 -', 'handle handle-2@example.com 1 送信元に再送を依頼済み',
                'handle handle-2@example.com 1 -', 'handle handle-1@example.com 1 -',
                'handle handle-1@example.com 1 printed and filed', E'handle handle-2@example.com 1 line one\nline two'],
          'one audit row per mark that changed something, none for a refused or unchanged one');
select is((select count(*)::int from public.fax_handling_history h
             join public.document_jobs_audit a on a.id = h.audit_id and a.action = 'handle'),
          6, 'every mark''s history row names its audit row');
select is((public.document_jobs_admin_audit(null, 1) -> 'entries' -> 0 -> 'handling') - 'fax_received_email_id',
          '{"from": "new", "to": "done", "to_assignee_email": "handle-2@example.com"}',
          'the audit''s view of a mark says from, to and whose');

-- Every role reads the handling through the screen's read; a clerk as a viewer does.
select is(public.document_jobs_operator_fax_handling(p.user_id, p.session_id, t.email_id('hd-2')) ->> 'state', 'done',
          format('%s reads the handling', p.name))
  from t.people p where p.name in ('an admin', 'a clerk', 'a viewer') order by p.ord;
select is(public.document_jobs_operator_me(p.user_id, p.session_id) ->> 'role', 'clerk', 'a clerk signs in as a clerk')
  from t.people p where p.name = 'a clerk';
select is(jsonb_array_length(public.document_jobs_operator_fax_handling(p.user_id, p.session_id, t.email_id('hd-1'))
                             -> 'history'), 4, 'the read holds the fax''s marks')
  from t.people p where p.name = 'a viewer';
select throws_ok(format($$ select public.document_jobs_operator_fax_handling(%L, %L, %L) $$, p.user_id, p.session_id,
                        t.email_id('hd-1')), '28000', null, 'a banned clerk reads nothing')
  from t.people p where p.name = 'a banned clerk';

-- Nothing else writes them, and the history stays as it was written.
select throws_ok($$ insert into public.fax_handling (fax_received_email_id, state, updated_by)
                    values (t.email_id('hd-refused'), 'new', gen_random_uuid()) $$,
                 '42501', null, 'service_role may not write the handling directly');
select throws_ok($$ delete from public.fax_handling_history $$, '42501', null, 'nor the history');
set local role postgres;
select throws_ok($$ update public.fax_handling_history set note = 'changed' $$, '42501',
                 'fax_handling_history is append-only: its rows are never updated or deleted',
                 'the history is append-only, whoever asks');
-- (the record's guard refuses first; past an approved deletion, the handling's foreign key would)
select throws_ok($$ delete from public.fax_received_emails where provider_email_id = 'hd-1' $$, '23001', null,
                 'a fax with a handling cannot be deleted from under it');
select is(array(select e::text || ' ' || e.ctid::text from public.fax_received_emails e order by 1), array(select r.row from t.email_rows r order by 1),
          'the e-mails'' rows are the versions recorded: no mark updated them');

select * from finish();
rollback;
