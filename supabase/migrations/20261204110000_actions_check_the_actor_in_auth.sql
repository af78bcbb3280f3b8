-- Every action checks, in its own database call, that the operator it names may act now, as Supabase
-- Auth stores them: their user row is there and not deleted (deleted_at), not banned (banned_until
-- ahead), and its role (raw_app_meta_data, which users cannot write) is admin. Until now the actions
-- took the actor id on trust: the CLI, which acts with the secret key and has no session, looked the
-- operator up through Auth's admin API and checked the role only; a banned admin's retry, cancel,
-- bulk action or reconciliation succeeded and the audit named them, while the screen refused the
-- same person (401 session_ended). The screen's reads check the session, the user and the role in
-- the same statement (document_jobs_internal.operator_role, 20261203130000); an action has no
-- session to check when the CLI calls it, so it checks the user row, as Auth's own checks read it
-- (github.com/supabase/auth internal/models/user.go: IsBanned is banned_until after now;
-- SoftDeleteUser sets deleted_at; a hard delete removes the row).
--
-- The check is made where every action already names its actor, require_actor: the single retry and
-- cancel, the bulk action's count (prepare) and its application (apply: now on every call, not only
-- the first, so that a bulk action stops at the next batch once its admin is banned), and the
-- reconciliation by hand (admin_record_reconciled_emails). The screen calls the same functions after
-- confirming the admin with Auth (lib/screen/auth.py confirm_admin); the check closes the window
-- between that answer and the action, and the screen answers its refusal as 401 session_ended.
--
-- Refusals, in SQLSTATE and hint (the CLI names each one, lib/admin/commands.py refused):
--   28000 operator_deleted  the user row is gone or has deleted_at
--   28000 operator_banned   banned_until is ahead (a ban that is over does not count)
--   42501 no_role           no document_jobs_role in raw_app_meta_data (user_metadata is never read)
--   42501 role_not_allowed  a role that may not do this (a viewer acting)

create function document_jobs_internal.acting_operator(p_user_id uuid, p_roles text[])
returns text
language plpgsql
stable
set search_path = ''  -- runs as its caller, a security definer function of public
as $$
declare
    v_email text;
    v_deleted_at timestamptz;
    v_banned_until timestamptz;
    v_role text;
begin
    select u.email::text, u.deleted_at, u.banned_until, u.raw_app_meta_data ->> 'document_jobs_role'
      into v_email, v_deleted_at, v_banned_until, v_role
      from auth.users u
     where u.id = p_user_id;
    if not found or v_deleted_at is not null then
        raise exception using errcode = '28000', hint = 'operator_deleted',
            message = format('the operator %s was deleted from Supabase Auth: a deleted user may not act', p_user_id);
    end if;
    if v_banned_until > now() then
        raise exception using errcode = '28000', hint = 'operator_banned',
            message = format('%s is banned in Supabase Auth until %s: a banned user may not act', v_email,
                             document_jobs_internal.alert_time(v_banned_until));
    end if;
    if v_role is null then
        raise exception using errcode = '42501', hint = 'no_role',
            message = format('%s has no role on the admin screen: only an admin may act', v_email);
    end if;
    if not v_role = any (p_roles) then
        raise exception using errcode = '42501', hint = 'role_not_allowed',
            message = format('%s is a %s: only an admin may act', v_email, v_role);
    end if;
    return v_role;
end;
$$;

create or replace function document_jobs_internal.require_actor(p_actor_id uuid, p_reason text,
                                                                 p_reason_required boolean)
returns void
language plpgsql
stable  -- it reads auth.users now
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.require(
        not p_reason_required or nullif(btrim(p_reason), '') is not null, 'p_reason must not be empty');
    perform document_jobs_internal.require(
        p_reason is null or length(p_reason) <= 500, 'p_reason must be at most 500 characters');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin']);
end;
$$;

-- As in 20261201004300, but the actor is checked on every call (the reason only on the first, which
-- starts the action and writes the audit).
create or replace function public.apply_document_jobs_bulk_action(
    p_bulk_action_id uuid,
    p_actor_id uuid,
    p_reason text default null,
    p_batch_size int default 500
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_action document_jobs_internal.bulk_actions;
    v_batch uuid[];
    v_changed uuid[] := '{}'::uuid[];
    v_workers int := 0;
begin
    perform document_jobs_internal.require(p_bulk_action_id is not null, 'p_bulk_action_id must not be null');
    perform document_jobs_internal.require(p_batch_size between 1 and 1000, 'p_batch_size must be between 1 and 1000');
    -- One caller at a time per action: a second waits, then finds the batch done.
    select * into v_action from document_jobs_internal.bulk_actions b where b.id = p_bulk_action_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('no bulk action %s', p_bulk_action_id),
            hint = 'Count again: prepare_document_jobs_bulk_action.';
    end if;
    if v_action.actor_id is distinct from p_actor_id then
        raise exception using errcode = '42501',
            message = 'only the operator who counted these jobs may apply the action';
    end if;
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, v_action.started_at is null);
    if v_action.started_at is null then
        if v_action.prepared_at < now() - interval '15 minutes' then
            raise exception using errcode = '22023',
                message = 'these jobs were counted more than 15 minutes ago: count them again';
        end if;
        v_action.reason := btrim(p_reason);
        update document_jobs_internal.bulk_actions b
           set started_at = now(), reason = v_action.reason, finished_at = case when b.job_count = 0 then now() end
         where b.id = p_bulk_action_id;
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason, bulk_action_id)
        values (v_action.actor_id, v_action.actor_email, 'bulk_' || v_action.action, v_action.filter, v_action.job_count,
                v_action.reason, p_bulk_action_id);
    end if;

    v_batch := array(
        select b.job_id from document_jobs_internal.bulk_action_jobs b
         where b.bulk_action_id = p_bulk_action_id and b.outcome is null
         order by b.job_id limit p_batch_size);
    if cardinality(v_batch) > 0 then
        if v_action.action = 'retry' then
            v_changed := document_jobs_internal.bulk_retry_batch(p_bulk_action_id, v_batch);
            if cardinality(v_changed) > 0 then
                v_workers := public.invoke_document_jobs();
            end if;
        else
            v_changed := document_jobs_internal.bulk_cancel_batch(p_bulk_action_id, v_batch, v_action.reason);
        end if;
        update document_jobs_internal.bulk_actions b
           set changed = b.changed + cardinality(v_changed),
               skipped = b.skipped + cardinality(v_batch) - cardinality(v_changed),
               finished_at = case when not exists (
                                      select 1 from document_jobs_internal.bulk_action_jobs x
                                       where x.bulk_action_id = b.id and x.outcome is null) then now() end
         where b.id = p_bulk_action_id;
    end if;
    return document_jobs_internal.bulk_action_progress(p_bulk_action_id)
           || jsonb_build_object('workers_started', v_workers, 'batch_size', p_batch_size);
end;
$$;

comment on function document_jobs_internal.acting_operator(uuid, text[]) is
    'The role of the operator an action names, from Supabase Auth''s own row, in the action''s call: refuses (28000 operator_deleted) a user row gone or with deleted_at, (28000 operator_banned) a banned_until still ahead, (42501 no_role) no document_jobs_role in raw_app_meta_data, and (42501 role_not_allowed) a role not in p_roles. The CLI has no session: this is operator_role without one.';
comment on function document_jobs_internal.require_actor(uuid, text, boolean) is
    'The operator and the reason every operator action names: an actor id, and a reason of at most 500 characters (not empty when p_reason_required), 22023 otherwise; and the actor an admin of Supabase Auth now, not deleted nor banned (acting_operator''s refusals).';
comment on function public.apply_document_jobs_bulk_action(uuid, uuid, text, integer) is
    'Applies the next batch (at most p_batch_size jobs, 1 to 1,000) of a prepared bulk action in one transaction and answers where it stands (bulk_action_progress, and "workers_started"): call it again until "done"; a job is changed at most once, however often it is called. Only the operator who prepared it may apply it, within 15 minutes of counting, and only while Auth has them as a live admin (checked on every call: require_actor); the first call records it in the audit, once, with its count and the reason (required). A retry starts workers for what it re-queued through invoke_document_jobs, whose cap on invocations holds.';

revoke all on function document_jobs_internal.acting_operator(uuid, text[])
    from public, anon, authenticated, service_role;
