-- The admin screen's reads, document_jobs_operator_* (20261203130000_admin_screen_operator_reads.sql):
-- each answers, as service_role calls it for the screen, the view of its document_jobs_admin_*
-- function for a live session of an admin or a viewer, and refuses, in the same call, a token
-- whose session or user no longer allows it, whatever the token itself still says: the session
-- row gone, past its not_after, or another user's; the user row gone, soft-deleted or banned
-- (28000, hint session_ended); no role, or one that is not admin or viewer, in raw_app_meta_data
-- (42501, hint no_role). Every read allows both roles: there is no admin-only read to refuse a
-- viewer. One assertion per read and refusal, each naming the exact SQLSTATE, hint and message.
--
-- Auth's rows are written as Auth writes them, as its role supabase_auth_admin: postgres may only
-- read auth's tables (as on hosted Supabase), so this file runs on the stack's superuser
-- connection (trust on the local socket), as postgres except for those rows.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(81);

-- A job with an attachment, for the job and attachment reads.
select t.add_emails('op-reads');
insert into public.document_jobs (kind, fax_received_email_id) values ('fetch_email', t.email_id('op-reads'));
insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                                   size_bytes, sha256, bucket, storage_path)
values (t.email_id('op-reads'), 'att_op', '注文書.pdf', 'application/pdf', 10, repeat('d', 64), 'fax-attachments',
        'fax_received_emails/op/att_op.pdf');
create function t.attachment_id() returns uuid language sql as $$
    select id from public.fax_received_email_attachments where provider_attachment_id = 'att_op' $$;

-- Who calls, one user and one session each, as Auth would have stored them, then changed as
-- each case says (the token names user_id and session_id either way).
create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       session_id uuid not null default gen_random_uuid(), ord int generated always as identity);
insert into t.people (name) values
    ('an admin'), ('a viewer'), ('a user whose ban is over'), ('a session with a not_after ahead'),
    ('a session row gone'), ('a session past its not_after'), ('another user''s session'), ('a user row gone'),
    ('a user with deleted_at'), ('a user banned until later'), ('a user with no role'),
    ('a user with a role that is not the screen''s'), ('a user with a role in user_metadata only');
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                        banned_until, deleted_at)
select p.user_id, 'authenticated', 'authenticated', 'op-' || p.ord || '@example.com',
       '{"provider": "email"}'::jsonb || case
           when p.name = 'an admin' then '{"document_jobs_role": "admin"}'::jsonb
           when p.name in ('a user with no role', 'a user with a role in user_metadata only') then '{}'
           when p.name = 'a user with a role that is not the screen''s' then '{"document_jobs_role": "owner"}'
           else '{"document_jobs_role": "viewer"}' end,
       case when p.name = 'a user with a role in user_metadata only' then '{"document_jobs_role": "admin"}'::jsonb
            else '{}' end,
       now(), now(),
       case p.name when 'a user whose ban is over' then now() - interval '1 minute'
                   when 'a user banned until later' then now() + interval '1 hour' end,
       case when p.name = 'a user with deleted_at' then now() - interval '1 minute' end
  from t.people p;
insert into auth.sessions (id, user_id, created_at, updated_at, aal, not_after)
select p.session_id, p.user_id, now(), now(), 'aal1',
       case p.name when 'a session with a not_after ahead' then now() + interval '1 hour'
                   when 'a session past its not_after' then now() - interval '1 second' end
  from t.people p where p.name <> 'a session row gone';
-- A user removed from Auth: their sessions go with the row (sessions_user_id_fkey ... on delete cascade).
delete from auth.users where id = (select user_id from t.people where name = 'a user row gone');
set local role postgres;
-- Another user's session: the token's user, with the session of the admin.
update t.people set session_id = (select session_id from t.people where name = 'an admin')
 where name = 'another user''s session';

-- One read, as the screen calls it (service_role, through PostgREST), for the user and session a token names.
create function t.read(p_view text, p_user_id uuid, p_session_id uuid) returns jsonb language plpgsql as $$
declare
    v_answer jsonb;
begin
    execute format('select public.document_jobs_operator_%s($1, $2%s)', p_view, case p_view
                       when 'jobs' then ', ''{}''::jsonb, null, null, 50'
                       when 'job' then ', $3'
                       when 'audit' then ', null, 50'
                       when 'attachment' then ', $4'
                       else '' end)
       into v_answer using p_user_id, p_session_id, (t.job('op-reads')).id, t.attachment_id();
    return v_answer;
end;
$$;
-- What the read answered, or its refusal as 'SQLSTATE hint: message'.
create function t.outcome(p_view text, p_user_id uuid, p_session_id uuid) returns text language plpgsql as $$
declare
    v_state text;
    v_hint text;
    v_message text;
begin
    perform t.read(p_view, p_user_id, p_session_id);
    return 'answered';
exception when others then
    get stacked diagnostics v_state = returned_sqlstate, v_hint = pg_exception_hint, v_message = message_text;
    return format('%s %s: %s', v_state, v_hint, v_message);
end;
$$;
-- The view a read answers: its document_jobs_admin_* function's, or (me) who is asking.
create function t.view(p_view text, p_user_id uuid) returns jsonb language sql as $$
    select case p_view
        when 'me' then (select jsonb_build_object('user_id', u.id, 'email', u.email,
                                                  'role', u.raw_app_meta_data ->> 'document_jobs_role',
                                                  'kinds', (select jsonb_agg(kind order by kind) from public.document_job_kinds))
                          from auth.users u where u.id = p_user_id)
        when 'overview' then public.document_jobs_admin_overview()
        when 'jobs' then public.document_jobs_admin_jobs('{}', null, null, 50)
        when 'job' then public.document_jobs_admin_job((t.job('op-reads')).id)
        when 'audit' then public.document_jobs_admin_audit(null, 50)
        when 'attachment' then '{"bucket": "fax-attachments", "storage_path": "fax_received_emails/op/att_op.pdf",
                                 "filename": "注文書.pdf", "content_type": "application/pdf"}'::jsonb
    end $$;
create table t.views (view text primary key, ord int generated always as identity);
insert into t.views (view) values ('me'), ('overview'), ('jobs'), ('job'), ('audit'), ('attachment');
-- What each read should answer, taken here: service_role reads neither auth.users nor schema t's helpers' tables.
create table t.expected as
select v.view, v.ord as view_ord, p.name, p.ord as person_ord, p.user_id, p.session_id, t.view(v.view, p.user_id) as answer
  from t.views v cross join t.people p;
grant select on t.views, t.expected to service_role;
select ok((select bool_and(answer is not null) from t.expected where name = 'an admin'),
          'every view has something to answer (so that a read answering null would fail)');

set local role service_role;

-- They answer: an admin, a viewer, a ban that is over, a session whose not_after is still ahead.
select is(t.read(e.view, e.user_id, e.session_id), e.answer, format('%s answers %s', e.view, e.name))
  from t.expected e
 where e.name in ('an admin', 'a viewer', 'a user whose ban is over', 'a session with a not_after ahead')
 order by e.person_ord, e.view_ord;
select is(t.read('me', p.user_id, p.session_id) ->> 'role', 'viewer', 'me says a viewer is a viewer, as stored now')
  from t.people p where p.name = 'a viewer';

-- The session or the user no longer allows it: 28000 session_ended.
select is(t.outcome(v.view, p.user_id, p.session_id),
          '28000 session_ended: the session has ended, or its user was deleted or banned: sign in again',
          format('%s refuses %s: session_ended', v.view, p.name))
  from t.views v cross join t.people p
 where p.name in ('a session row gone', 'a session past its not_after', 'another user''s session', 'a user row gone',
                  'a user with deleted_at', 'a user banned until later')
 order by p.ord, v.ord;
-- The role, as stored now, does not allow it: 42501 no_role.
select is(t.outcome(v.view, p.user_id, p.session_id),
          '42501 no_role: this account has no role on the admin screen that allows this (ask an admin)',
          format('%s refuses %s: no_role', v.view, p.name))
  from t.views v cross join t.people p
 where p.name in ('a user with no role', 'a user with a role that is not the screen''s',
                  'a user with a role in user_metadata only')
 order by p.ord, v.ord;

-- The session is checked first: an ended session learns nothing, not even that its arguments are wrong.
select throws_ok(format('select public.document_jobs_operator_attachment(%L, %L, null)', p.user_id, p.session_id),
                 '28000', 'the session has ended, or its user was deleted or banned: sign in again',
                 'an ended session is refused before a missing attachment id is')
  from t.people p where p.name = 'a session row gone';
reset role;

select * from finish();
rollback;
