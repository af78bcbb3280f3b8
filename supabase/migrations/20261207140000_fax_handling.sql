-- Who is dealing with a fax: its handling state, 未対応 (new), 対応中 (in progress, with whom) or
-- 対応済み (done), and a note, marked by a clerk or an admin from the screen or the CLI; every mark
-- audited (who, when, from what, to what).
--
-- The state lives in a table of its own, never on the e-mail's row: what the office received is a
-- legal record, and its row does not change for what the office did about it. A fax without a row
-- here is new; the row is written by the first mark. Both tables change only through the security
-- definer functions below (service_role may read them, never write them), and the history is
-- append-only, like the audit.
--
-- A third role: clerk. A clerk reads whatever a viewer reads and may mark faxes; a viewer only
-- reads; an admin does everything. The reads name the roles that may read (operator_role); a clerk
-- is now let in wherever a viewer is, so that every view of the screen (and those to come) is open
-- to clerks without naming them one by one. Marking checks its actor in Auth's row in its own call,
-- as every action does (acting_operator: an admin or a clerk, not deleted, not banned).

-- As in 20261203130000, but a clerk reads what a viewer reads.
create or replace function document_jobs_internal.operator_role(p_user_id uuid, p_session_id uuid, p_roles text[])
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
    if v_role is null or not (v_role = any (p_roles) or (v_role = 'clerk' and 'viewer' = any (p_roles))) then
        raise exception 'this account has no role on the admin screen that allows this (ask an admin)'
            using errcode = '42501', hint = 'no_role';
    end if;
    return v_role;
end;
$$;
comment on function document_jobs_internal.operator_role(uuid, uuid, text[]) is
    'The admin screen operator''s role now, from Supabase Auth''s own tables: refuses (28000 session_ended) a session that is gone, past not_after or another user''s, a user gone, deleted or banned, and (42501 no_role) a role not in p_roles. A clerk may read whatever a viewer may (a role list with viewer lets a clerk in).';

-- As in 20261204110000, with a refusal's message naming the roles that may act (an admin, or an
-- admin or a clerk), not always an admin.
create or replace function document_jobs_internal.acting_operator(p_user_id uuid, p_roles text[])
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
    v_who text := array_to_string(array(select case r when 'admin' then 'an admin' else 'a ' || r end
                                          from unnest(p_roles) with ordinality x(r, n) order by x.n), ' or ');
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
            message = format('%s has no role on the admin screen: only %s may act', v_email, v_who);
    end if;
    if not v_role = any (p_roles) then
        raise exception using errcode = '42501', hint = 'role_not_allowed',
            message = format('%s is a %s: only %s may act', v_email, v_role, v_who);
    end if;
    return v_role;
end;
$$;
comment on function document_jobs_internal.acting_operator(uuid, text[]) is
    'The role of the operator an action names, from Supabase Auth''s own row, in the action''s call: refuses (28000 operator_deleted) a user row gone or with deleted_at, (28000 operator_banned) a banned_until still ahead, (42501 no_role) no document_jobs_role in raw_app_meta_data, and (42501 role_not_allowed) a role not in p_roles; the message names the roles that may act. The CLI has no session: this is operator_role without one.';

-- The states, in the order a fax goes through them.
create function document_jobs_internal.handling_states() returns text[]
language sql
immutable
set search_path = ''
as $$
    select array['new', 'in_progress', 'done']
$$;
comment on function document_jobs_internal.handling_states() is
    'The handling states of a fax, in the order it goes through them: new (未対応, no one has taken it; a fax without a fax_handling row), in_progress (対応中, someone has), done (対応済み).';

create table public.fax_handling (
    fax_received_email_id uuid primary key references public.fax_received_emails (id),
    state text not null check (state in ('new', 'in_progress', 'done')),
    -- Who took it (in progress) or closed it (done); nobody while it is new.
    assignee_id uuid,
    assignee_email text check (length(assignee_email) <= 320),
    note text check (length(note) <= 500),
    updated_at timestamptz not null default now(),
    updated_by uuid not null,
    updated_by_email text check (length(updated_by_email) <= 320),
    constraint fax_handling_assignee check ((state = 'new') = (assignee_id is null))
);
comment on table public.fax_handling is
    'Who is dealing with a received fax (one row per e-mail, written by its first mark; a fax without one is new): its state, who took or closed it, and the note. Changed only through mark_fax_handling and the bulk mark (apply_fax_handling_bulk), every change kept in fax_handling_history; the e-mail''s own row never changes for it.';
comment on column public.fax_handling.assignee_id is
    'The Supabase Auth user who took the fax (in_progress) or closed it (done); null while it is new.';
comment on column public.fax_handling.note is
    'The note the office keeps with the fax (e.g. 送信元に再送を依頼済み): the last one given; a mark without a note keeps it.';

alter table public.fax_handling enable row level security;
revoke all on table public.fax_handling from public, anon, authenticated, service_role;
grant select on table public.fax_handling to service_role;

create table public.fax_handling_history (
    id bigint generated always as identity primary key,
    fax_received_email_id uuid not null references public.fax_received_emails (id),
    at timestamptz not null default now(),
    actor_id uuid not null,
    actor_email text check (length(actor_email) <= 320),
    from_state text not null check (from_state in ('new', 'in_progress', 'done')),
    to_state text not null check (to_state in ('new', 'in_progress', 'done')),
    from_assignee_email text,
    to_assignee_email text,
    -- The note given with this mark (null: none given, the fax's note stayed as it was).
    note text check (length(note) <= 500),
    audit_id bigint not null references public.document_jobs_audit (id)
);
comment on table public.fax_handling_history is
    'Every mark of a fax''s handling, never changed afterwards: who, when, from which state and assignee to which, the note given, and the audit row of the action it was part of (a mark, or a bulk mark).';
comment on column public.fax_handling_history.audit_id is
    'The document_jobs_audit row of the action: one per mark, one for all the marks of a bulk mark.';

-- A fax's marks, newest first (the fax's handling read); the marks of an audit row (the audit's view).
create index fax_handling_history_of_fax on public.fax_handling_history (fax_received_email_id, id);
create index fax_handling_history_of_audit on public.fax_handling_history (audit_id);

alter table public.fax_handling_history enable row level security;
revoke all on table public.fax_handling_history from public, anon, authenticated, service_role;
grant select on table public.fax_handling_history to service_role;
revoke all on sequence public.fax_handling_history_id_seq from public, anon, authenticated, service_role;
comment on sequence public.fax_handling_history_id_seq is
    'The identity of fax_handling_history.id: the order of a fax''s marks.';

create function document_jobs_internal.refuse_handling_history_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'fax_handling_history is append-only: its rows are never updated or deleted';
end;
$$;
comment on function document_jobs_internal.refuse_handling_history_change() is
    'Trigger fax_handling_history_append_only: the history of marks is never updated or deleted, whoever asks.';

create trigger fax_handling_history_append_only
    before update or delete on public.fax_handling_history
    for each statement execute function document_jobs_internal.refuse_handling_history_change();

-- The audit names marks too: one row per mark (handle), one per bulk mark (bulk_handle).
alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
alter table public.document_jobs_audit add constraint document_jobs_audit_action_check
    check (action in ('retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'reconcile', 'prepare', 'rotate', 'handle',
                      'bulk_handle'));
comment on column public.document_jobs_audit.job_count is
    'How many jobs the action counted or changed; for a mark (handle, bulk_handle), how many faxes.';

-- A fax's handling as the screen shows it beside the fax: its state (new without a row), who took
-- or closed it, its note, and when and by whom it was last marked. Null when there is no such e-mail.
create function document_jobs_internal.fax_handling_summary(p_fax_received_email_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select case when e.id is not null then jsonb_build_object(
               'fax_received_email_id', e.id,
               'state', coalesce(h.state, 'new'),
               'assignee_id', h.assignee_id,
               'assignee_email', h.assignee_email,
               'note', h.note,
               'updated_at', h.updated_at,
               'updated_by_email', h.updated_by_email) end
      from (select p_fax_received_email_id as id) x
      left join public.fax_received_emails e on e.id = x.id
      left join public.fax_handling h on h.fax_received_email_id = e.id
$$;
comment on function document_jobs_internal.fax_handling_summary(uuid) is
    'A fax''s handling as the screen shows it beside the fax: {"fax_received_email_id", "state" (new when never marked), "assignee_id", "assignee_email", "note", "updated_at", "updated_by_email"}; null when there is no such e-mail. For every view that lists or shows a fax.';

-- The handling and its marks, newest first (at most p_limit).
create function document_jobs_internal.fax_handling_read(p_fax_received_email_id uuid, p_limit int)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_summary jsonb := document_jobs_internal.fax_handling_summary(p_fax_received_email_id);
begin
    perform document_jobs_internal.require(p_fax_received_email_id is not null,
                                           'p_fax_received_email_id must not be null');
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    if v_summary is null then
        return null;
    end if;
    return v_summary || jsonb_build_object('history', coalesce((
        select jsonb_agg(jsonb_build_object(
                   'at', x.at, 'actor_id', x.actor_id, 'actor_email', x.actor_email, 'from', x.from_state,
                   'to', x.to_state, 'from_assignee_email', x.from_assignee_email,
                   'to_assignee_email', x.to_assignee_email, 'note', x.note, 'audit_id', x.audit_id)
               order by x.id desc)
          from (select * from public.fax_handling_history y
                 where y.fax_received_email_id = p_fax_received_email_id
                 order by y.id desc limit p_limit) x), '[]'));
end;
$$;
comment on function document_jobs_internal.fax_handling_read(uuid, int) is
    'A fax''s handling (fax_handling_summary) with its marks, newest first, at most p_limit (1 to 200): who, when, from and to which state and assignee, the note given. Null when there is no such e-mail.';

create function public.document_jobs_admin_fax_handling(p_fax_received_email_id uuid)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select document_jobs_internal.fax_handling_read(p_fax_received_email_id, 50)
$$;
comment on function public.document_jobs_admin_fax_handling(uuid) is
    'A fax''s handling and its last 50 marks (fax_handling_read), for the CLI (the server key); null when there is no such e-mail.';

create function public.document_jobs_operator_fax_handling(p_user_id uuid, p_session_id uuid,
                                                           p_fax_received_email_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return document_jobs_internal.fax_handling_read(p_fax_received_email_id, 50);
end;
$$;
comment on function public.document_jobs_operator_fax_handling(uuid, uuid, uuid) is
    'A fax''s handling and its last 50 marks for a signed-in operator (every role reads it), refused (operator_role) once their session, user or role no longer allows it; null when there is no such e-mail.';

-- What a mark leaves of a fax's handling: p_before (the fax's row; all null when it has none)
-- marked p_state by the actor, who becomes its assignee (nobody, for new), with p_note (null keeps
-- the note, an empty one clears it).
create function document_jobs_internal.handling_after(
    p_before public.fax_handling,
    p_fax_received_email_id uuid,
    p_state text,
    p_note text,
    p_actor_id uuid,
    p_actor_email text
)
returns public.fax_handling
language plpgsql
stable  -- now()
set search_path = ''
as $$
declare
    v_after public.fax_handling;
begin
    v_after.fax_received_email_id := p_fax_received_email_id;
    v_after.state := p_state;
    v_after.assignee_id := case when p_state <> 'new' then p_actor_id end;
    v_after.assignee_email := case when p_state <> 'new' then p_actor_email end;
    v_after.note := case when p_note is null then p_before.note else nullif(btrim(p_note), '') end;
    v_after.updated_at := now();
    v_after.updated_by := p_actor_id;
    v_after.updated_by_email := p_actor_email;
    return v_after;
end;
$$;
comment on function document_jobs_internal.handling_after(public.fax_handling, uuid, text, text, uuid, text) is
    'The handling a mark leaves: p_before (the fax''s row, all null when it has none) marked p_state by the actor, who becomes its assignee (nobody for new), with p_note (null keeps the note, an empty one clears it). Writes nothing.';

-- Whether a mark changes anything a person sees: the state, who has it, the note.
create function document_jobs_internal.handling_changes(p_before public.fax_handling, p_after public.fax_handling)
returns boolean
language sql
immutable
set search_path = ''
as $$
    select (coalesce(p_before.state, 'new'), p_before.assignee_id, p_before.note)
           is distinct from (p_after.state, p_after.assignee_id, p_after.note)
$$;
comment on function document_jobs_internal.handling_changes(public.fax_handling, public.fax_handling) is
    'Whether a mark changes what a person sees of a fax''s handling (its state, who has it, its note): a mark that does not is neither written nor audited.';

-- A mark written: the history row (under the audit row of its action) and the fax's row. The
-- caller holds the fax's lock (its e-mail row, for no key update) and has written the audit row.
create function document_jobs_internal.write_handling(p_before public.fax_handling, p_after public.fax_handling,
                                                      p_note text, p_audit_id bigint)
returns void
language plpgsql
set search_path = ''
as $$
begin
    insert into public.fax_handling_history (fax_received_email_id, actor_id, actor_email, from_state, to_state,
                                             from_assignee_email, to_assignee_email, note, audit_id)
    values (p_after.fax_received_email_id, p_after.updated_by, p_after.updated_by_email,
            coalesce(p_before.state, 'new'), p_after.state, p_before.assignee_email, p_after.assignee_email,
            nullif(btrim(p_note), ''), p_audit_id);
    insert into public.fax_handling (fax_received_email_id, state, assignee_id, assignee_email, note, updated_at,
                                     updated_by, updated_by_email)
    values (p_after.fax_received_email_id, p_after.state, p_after.assignee_id, p_after.assignee_email, p_after.note,
            p_after.updated_at, p_after.updated_by, p_after.updated_by_email)
    on conflict (fax_received_email_id) do update
       set state = excluded.state, assignee_id = excluded.assignee_id, assignee_email = excluded.assignee_email,
           note = excluded.note, updated_at = excluded.updated_at, updated_by = excluded.updated_by,
           updated_by_email = excluded.updated_by_email;
end;
$$;
comment on function document_jobs_internal.write_handling(public.fax_handling, public.fax_handling, text, bigint) is
    'A mark written: its fax_handling_history row (from p_before to p_after, the note given, under the audit row p_audit_id) and the fax''s fax_handling row. The caller holds the fax''s lock and has written the audit row.';

-- A note as a mark takes it: at most 500 characters, no control characters but line breaks and tabs.
create function document_jobs_internal.require_note(p_note text)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_note is null or length(p_note) <= 500,
                                           'p_note must be at most 500 characters');
    perform document_jobs_internal.require(p_note is null or p_note !~ '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]',
                                           'p_note must hold no control characters but line breaks and tabs');
end;
$$;
comment on function document_jobs_internal.require_note(text) is
    'A mark''s note: at most 500 characters, with no control characters but line breaks and tabs (22023 otherwise).';

-- One fax marked by a clerk or an admin: one tap on the screen (new -> in_progress with the
-- operator as its assignee -> done), or a note. p_from_state is the state the operator saw: when
-- the fax has moved on since (another clerk took it), nothing changes and the answer says so,
-- with the fax's handling now ("handling_changed"), so that two clerks' taps do not overwrite
-- each other unseen. The marks of one fax take turns on a lock of its e-mail's row (for no key
-- update: a lock, not a change of the row; nothing else takes it). Answers {"changed": true,
-- "handling"} or {"changed": false, "reason" (handling_changed, unchanged), "handling"}.
create function public.mark_fax_handling(
    p_fax_received_email_id uuid,
    p_actor_id uuid,
    p_state text,
    p_note text default null,
    p_from_state text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email text;
    v_before public.fax_handling;
    v_after public.fax_handling;
    v_audit_id bigint;
begin
    perform document_jobs_internal.require(p_fax_received_email_id is not null,
                                           'p_fax_received_email_id must not be null');
    perform document_jobs_internal.require(p_state = any (document_jobs_internal.handling_states()),
                                           'p_state must be new, in_progress or done');
    perform document_jobs_internal.require(
        p_from_state is null or p_from_state = any (document_jobs_internal.handling_states()),
        'p_from_state must be new, in_progress or done');
    perform document_jobs_internal.require_note(p_note);
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    select left(u.email::text, 320) into v_email from auth.users u where u.id = p_actor_id;

    perform from public.fax_received_emails e where e.id = p_fax_received_email_id for no key update;
    if not found then
        raise exception using errcode = 'P0002', message = format('there is no fax %s', p_fax_received_email_id);
    end if;
    select * into v_before from public.fax_handling h where h.fax_received_email_id = p_fax_received_email_id;
    if p_from_state is not null and p_from_state <> coalesce(v_before.state, 'new') then
        return jsonb_build_object('changed', false, 'reason', 'handling_changed',
                                  'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
    end if;
    v_after := document_jobs_internal.handling_after(v_before, p_fax_received_email_id, p_state, p_note, p_actor_id,
                                                     v_email);
    if not document_jobs_internal.handling_changes(v_before, v_after) then
        return jsonb_build_object('changed', false, 'reason', 'unchanged',
                                  'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_count, reason)
    values (p_actor_id, v_email, 'handle', 1, nullif(btrim(p_note), ''))
    returning id into v_audit_id;
    perform document_jobs_internal.write_handling(v_before, v_after, p_note, v_audit_id);
    return jsonb_build_object('changed', true,
                              'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
end;
$$;
comment on function public.mark_fax_handling(uuid, uuid, text, text, text) is
    'One fax''s handling marked by an admin or a clerk of Supabase Auth (checked in this call: acting_operator; a viewer is refused, 42501 role_not_allowed): p_state new, in_progress (the actor takes it) or done (the actor closes it), with p_note (at most 500 characters; null keeps the note, empty clears it). p_from_state, the state the operator saw: when the fax has moved on since, nothing changes ("handling_changed"). Audited (action handle, the note as its reason) and kept in fax_handling_history (from, to, who, when); a mark that changes nothing is neither. Answers {"changed", "reason"?, "handling"}; 22023 for a bad argument, P0002 for no such fax. Opening or reading a fax marks nothing.';

revoke all on function
    document_jobs_internal.handling_states(),
    document_jobs_internal.fax_handling_summary(uuid),
    document_jobs_internal.fax_handling_read(uuid, int),
    document_jobs_internal.handling_after(public.fax_handling, uuid, text, text, uuid, text),
    document_jobs_internal.handling_changes(public.fax_handling, public.fax_handling),
    document_jobs_internal.write_handling(public.fax_handling, public.fax_handling, text, bigint),
    document_jobs_internal.require_note(text),
    document_jobs_internal.refuse_handling_history_change()
from public, anon, authenticated, service_role;
revoke all on function
    public.document_jobs_admin_fax_handling(uuid),
    public.document_jobs_operator_fax_handling(uuid, uuid, uuid),
    public.mark_fax_handling(uuid, uuid, text, text, text)
from public, anon, authenticated;
grant execute on function
    public.document_jobs_admin_fax_handling(uuid),
    public.document_jobs_operator_fax_handling(uuid, uuid, uuid),
    public.mark_fax_handling(uuid, uuid, text, text, text)
to service_role;
