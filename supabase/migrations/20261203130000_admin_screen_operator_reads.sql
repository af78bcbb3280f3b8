-- The admin screen's reads check, in their own database call, that the operator may still read:
-- a token stays valid for up to an hour after its user is removed, banned or deleted, or after
-- its session is signed out, but Supabase Auth keeps its users and sessions in this database
-- (auth.users, auth.sessions: GoTrue's tables, github.com/supabase/auth migrations/), so the
-- function that reads a view looks at them in the same statement: no extra round trip per read.
--
-- Each document_jobs_operator_* function takes the user id (the token's sub) and the session id
-- (its session_id claim) from the verified access token, and answers the view of the
-- document_jobs_admin_* function of the same name, or refuses:
--   SQLSTATE 28000 (invalid_authorization_specification), hint 'session_ended': the session row is
--     gone (signed out, a global sign-out, the user soft-deleted) or past its not_after, or it is
--     another user's; the user row is gone, has deleted_at, or a banned_until in the future. The
--     screen answers 401 session_ended: sign in again.
--   SQLSTATE 42501 (insufficient_privilege), hint 'no_role': the role in raw_app_meta_data
--     (document_jobs_role; users cannot write app metadata) does not allow the view. 403 no_role.
-- The document_jobs_admin_* functions stay as they were: the operator CLI calls them with the
-- project's secret key, which no person's session stands behind.

-- The operator's role now, or the refusal. p_roles: the roles that may use what is asked.
create function document_jobs_internal.operator_role(p_user_id uuid, p_session_id uuid, p_roles text[])
returns text
language plpgsql
stable
set search_path = ''  -- runs as its caller, a security definer function of public
as $$
declare
    v_role text;
    v_live boolean;
begin
    select u.deleted_at is null and (u.banned_until is null or u.banned_until <= now())
           and (s.not_after is null or s.not_after > now()),
           u.raw_app_meta_data ->> 'document_jobs_role'
      into v_live, v_role
      from auth.sessions s
      join auth.users u on u.id = s.user_id
     where s.id = p_session_id and s.user_id = p_user_id;
    if not coalesce(v_live, false) then
        raise exception 'the session has ended, or its user was deleted or banned: sign in again'
            using errcode = '28000', hint = 'session_ended';
    end if;
    if v_role is null or not v_role = any (p_roles) then
        raise exception 'this account has no role on the admin screen that allows this (ask an admin)'
            using errcode = '42501', hint = 'no_role';
    end if;
    return v_role;
end;
$$;

create function public.document_jobs_operator_me(p_user_id uuid, p_session_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_role text := document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
begin
    return jsonb_build_object(
        'user_id', p_user_id,
        'email', (select u.email from auth.users u where u.id = p_user_id),
        'role', v_role,
        'kinds', coalesce((select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k), '[]'));
end;
$$;

create function public.document_jobs_operator_overview(p_user_id uuid, p_session_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off  -- as the view's own function (20261201004200_admin_screen_views.sql)
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_overview();
end;
$$;

create function public.document_jobs_operator_jobs(
    p_user_id uuid,
    p_session_id uuid,
    p_filter jsonb default '{}',
    p_after_created_at timestamptz default null,
    p_after_id uuid default null,
    p_limit int default 50
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_jobs(p_filter, p_after_created_at, p_after_id, p_limit);
end;
$$;

create function public.document_jobs_operator_job(p_user_id uuid, p_session_id uuid, p_job_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_job(p_job_id);
end;
$$;

create function public.document_jobs_operator_audit(
    p_user_id uuid,
    p_session_id uuid,
    p_before bigint default null,
    p_limit int default 50
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_audit(p_before, p_limit);
end;
$$;

-- Where a stored attachment is, for a signed download URL: {"bucket", "storage_path", "filename",
-- "content_type"}, or null when there is no such attachment.
create function public.document_jobs_operator_attachment(p_user_id uuid, p_session_id uuid, p_attachment_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    perform document_jobs_internal.require(p_attachment_id is not null, 'p_attachment_id must not be null');
    return (select jsonb_build_object('bucket', a.bucket, 'storage_path', a.storage_path, 'filename', a.filename,
                                      'content_type', a.content_type)
              from public.fax_received_email_attachments a where a.id = p_attachment_id);
end;
$$;

comment on function document_jobs_internal.operator_role(uuid, uuid, text[]) is
    'The admin screen operator''s role now, from Supabase Auth''s own tables: refuses (28000 session_ended) a session that is gone, past not_after or another user''s, a user gone, deleted or banned, and (42501 no_role) a role not in p_roles.';
comment on function public.document_jobs_operator_me(uuid, uuid) is
    'The admin screen''s /me for the signed-in operator (user id and session id from the verified token): their e-mail and role as stored now, and the job kinds; refused as operator_role refuses.';
comment on function public.document_jobs_operator_overview(uuid, uuid) is
    'document_jobs_admin_overview for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
comment on function public.document_jobs_operator_jobs(uuid, uuid, jsonb, timestamptz, uuid, int) is
    'document_jobs_admin_jobs for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
comment on function public.document_jobs_operator_job(uuid, uuid, uuid) is
    'document_jobs_admin_job for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
comment on function public.document_jobs_operator_audit(uuid, uuid, bigint, int) is
    'document_jobs_admin_audit for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
comment on function public.document_jobs_operator_attachment(uuid, uuid, uuid) is
    'Where a stored attachment is (bucket, path, name, type) for a signed download URL, for a signed-in operator; refused (operator_role) once their session, user or role no longer allows it.';

revoke all on function document_jobs_internal.operator_role(uuid, uuid, text[])
    from public, anon, authenticated, service_role;
revoke all on function
    public.document_jobs_operator_me(uuid, uuid),
    public.document_jobs_operator_overview(uuid, uuid),
    public.document_jobs_operator_jobs(uuid, uuid, jsonb, timestamptz, uuid, int),
    public.document_jobs_operator_job(uuid, uuid, uuid),
    public.document_jobs_operator_audit(uuid, uuid, bigint, int),
    public.document_jobs_operator_attachment(uuid, uuid, uuid)
from public, anon, authenticated;
grant execute on function
    public.document_jobs_operator_me(uuid, uuid),
    public.document_jobs_operator_overview(uuid, uuid),
    public.document_jobs_operator_jobs(uuid, uuid, jsonb, timestamptz, uuid, int),
    public.document_jobs_operator_job(uuid, uuid, uuid),
    public.document_jobs_operator_audit(uuid, uuid, bigint, int),
    public.document_jobs_operator_attachment(uuid, uuid, uuid)
to service_role;
