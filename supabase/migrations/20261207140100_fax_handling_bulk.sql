-- A bulk "mark done": every fax a filter matches marked done with one note, as the bulk retry and
-- cancel work (20261201004300): prepare_fax_handling_bulk counts the faxes and keeps their ids (a
-- snapshot: the confirmation shows that exact count, and the marks go to exactly those faxes), then
-- apply_fax_handling_bulk marks them in bounded batches, one transaction each, called until it
-- answers done; the audit row is written once, by the first call, with the count and the note.
--
-- The filter is the inbox's (scope faxes: document_jobs_internal.faxes_filter, the faxes it lists)
-- or the job list's (scope jobs: job_filter, the faxes whose jobs it matches, e.g. every fax whose
-- fetch failed with resend_not_found, the provider no longer having it, closed with
-- 送信元に再送を依頼済み). A fax counts once however many of its jobs match, and a fax already done
-- is not counted. A clerk or an admin may do it (acting_operator, on every call).

create table document_jobs_internal.handling_bulk_actions (
    id uuid primary key default gen_random_uuid(),
    -- Whose filter: the inbox's (faxes) or the job list's (jobs).
    scope text not null check (scope in ('faxes', 'jobs')),
    filter jsonb not null,
    actor_id uuid not null,
    actor_email text,
    fax_count int not null default 0,
    changed int not null default 0,
    skipped int not null default 0,
    note text check (length(note) <= 500),
    prepared_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
);
comment on table document_jobs_internal.handling_bulk_actions is
    'A bulk mark done''s snapshot: the filter it was counted with (the inbox''s or the job list''s: scope), who counted, how many faxes, how far it got, and the note it marks them with (given at its first apply).';

create table document_jobs_internal.handling_bulk_action_faxes (
    bulk_action_id uuid not null references document_jobs_internal.handling_bulk_actions (id) on delete cascade,
    fax_received_email_id uuid not null,
    outcome text check (outcome in ('changed', 'skipped')),
    -- Why a fax was not marked: already_done (someone marked it done since the count).
    reason text,
    applied_at timestamptz,
    primary key (bulk_action_id, fax_received_email_id)
);
comment on table document_jobs_internal.handling_bulk_action_faxes is
    'The faxes a bulk mark done counted, and what became of each (changed, or skipped with why).';

-- The next batch is read from here: its cost does not grow as the action proceeds.
create index handling_bulk_action_faxes_pending
    on document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
    where outcome is null;

-- Counts the faxes a filter matches (the inbox's, or the job list's: the faxes of the jobs it
-- matches) that are not done yet, and keeps their ids. At most 50,000 at once: more is refused
-- with 22023 (narrow the filter and count again). Answers {"bulk_action_id", "scope",
-- "fax_count", "filter", "prepared_at", "expires_at"}: apply it within 15 minutes, or count again.
create function public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_max_faxes constant int := 50000;
    c_not_done constant text := 'not exists (select 1 from public.fax_handling h'
                                ' where h.fax_received_email_id = %s and h.state = ''done'')';
    v_filter jsonb;
    v_email text;
    v_id uuid;
    v_count int;
begin
    perform document_jobs_internal.require(p_scope in ('faxes', 'jobs'), 'p_scope must be faxes or jobs');
    v_filter := case p_scope when 'faxes' then document_jobs_internal.faxes_filter(p_filter)
                             else document_jobs_internal.job_filter(p_filter) end;
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    select left(u.email::text, 320) into v_email from auth.users u where u.id = p_actor_id;

    -- Snapshots never applied are of no use after a day.
    delete from document_jobs_internal.handling_bulk_actions b
     where b.started_at is null and b.prepared_at < now() - interval '1 day';

    insert into document_jobs_internal.handling_bulk_actions (scope, filter, actor_id, actor_email)
    values (p_scope, v_filter, p_actor_id, v_email)
    returning id into v_id;
    if p_scope = 'faxes' then
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select %L::uuid, e.id from public.fax_received_emails e where %s and %s and %s limit %s',
            v_id, document_jobs_internal.faxes_time_sql(v_filter), document_jobs_internal.faxes_match_sql(v_filter),
            format(c_not_done, 'e.id'), c_max_faxes + 1);
    else
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select distinct %L::uuid, j.fax_received_email_id from public.document_jobs j
              where %s and j.fax_received_email_id is not null and %s
              limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter), format(c_not_done, 'j.fax_received_email_id'),
            c_max_faxes + 1);
    end if;
    get diagnostics v_count = row_count;
    if v_count > c_max_faxes then
        raise exception using errcode = '22023',
            message = format('more than %s faxes match: narrow the filter (received time, error code) and count again',
                             c_max_faxes);
    end if;
    update document_jobs_internal.handling_bulk_actions b set fax_count = v_count where b.id = v_id;
    return jsonb_build_object('bulk_action_id', v_id, 'scope', p_scope, 'fax_count', v_count, 'filter', v_filter,
                              'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;
comment on function public.prepare_fax_handling_bulk(text, jsonb, uuid) is
    'A bulk mark done''s count: the faxes the inbox''s filter matches (p_scope faxes), or those whose jobs the job list''s filter matches (jobs; each fax once), that are not done yet, at most 50,000 (22023 beyond: narrow the filter), kept as a snapshot for apply_fax_handling_bulk within 15 minutes. For an admin or a clerk of Supabase Auth (acting_operator, in this call). Answers {"bulk_action_id", "scope", "fax_count", "filter", "prepared_at", "expires_at"}.';

-- Where a bulk mark done stands: counts so far, and the first 100 faxes it did not mark, with why.
create function document_jobs_internal.handling_bulk_progress(p_bulk_action_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
               'bulk_action_id', b.id, 'scope', b.scope, 'filter', b.filter, 'fax_count', b.fax_count, 'changed', b.changed,
               'skipped', b.skipped, 'processed', b.changed + b.skipped, 'done', b.finished_at is not null,
               'started_at', b.started_at, 'finished_at', b.finished_at, 'note', b.note,
               'not_changed', coalesce((
                   select jsonb_agg(jsonb_build_object('fax_received_email_id', x.fax_received_email_id,
                                                      'reason', x.reason)
                                    order by x.applied_at, x.fax_received_email_id)
                     from (select * from document_jobs_internal.handling_bulk_action_faxes y
                            where y.bulk_action_id = b.id and y.outcome = 'skipped'
                            order by y.applied_at, y.fax_received_email_id limit 100) x), '[]'))
      from document_jobs_internal.handling_bulk_actions b
     where b.id = p_bulk_action_id
$$;
comment on function document_jobs_internal.handling_bulk_progress(uuid) is
    'Where a bulk mark done stands: {"bulk_action_id", "scope", "filter", "fax_count", "changed", "skipped", "processed", "done", "started_at", "finished_at", "note", "not_changed" (the first 100 faxes it did not mark, with why)}.';

-- Marks the next batch (at most p_batch_size faxes, 1 to 1,000) of a counted bulk mark done, in one
-- transaction, and answers where it stands; call it again until "done". Only the operator who
-- counted may apply it, within 15 minutes of counting, while Auth has them as an admin or a clerk
-- (every call); the first call gives the note (required) and writes the audit row, once. A fax
-- someone marked done since the count is skipped (already_done); a fax is marked at most once.
create function public.apply_fax_handling_bulk(
    p_bulk_action_id uuid,
    p_actor_id uuid,
    p_note text default null,
    p_batch_size int default 500
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_action document_jobs_internal.handling_bulk_actions;
    v_audit_id bigint;
    v_batch uuid[];
    v_fax uuid;
    v_before public.fax_handling;
    v_after public.fax_handling;
    v_changed int := 0;
begin
    perform document_jobs_internal.require(p_bulk_action_id is not null, 'p_bulk_action_id must not be null');
    perform document_jobs_internal.require(p_batch_size between 1 and 1000, 'p_batch_size must be between 1 and 1000');
    perform document_jobs_internal.require_note(p_note);
    -- One caller at a time per action: a second waits, then finds the batch done.
    select * into v_action from document_jobs_internal.handling_bulk_actions b where b.id = p_bulk_action_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('no bulk mark %s', p_bulk_action_id),
            hint = 'Count again: prepare_fax_handling_bulk.';
    end if;
    if v_action.actor_id is distinct from p_actor_id then
        raise exception using errcode = '42501',
            message = 'only the operator who counted these faxes may mark them';
    end if;
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    if v_action.started_at is null then
        perform document_jobs_internal.require(nullif(btrim(p_note), '') is not null, 'p_note must not be empty');
        if v_action.prepared_at < now() - interval '15 minutes' then
            raise exception using errcode = '22023',
                message = 'these faxes were counted more than 15 minutes ago: count them again';
        end if;
        v_action.note := btrim(p_note);
        v_action.started_at := now();
        update document_jobs_internal.handling_bulk_actions b
           set started_at = v_action.started_at, note = v_action.note,
               finished_at = case when b.fax_count = 0 then now() end
         where b.id = p_bulk_action_id;
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason, bulk_action_id)
        values (v_action.actor_id, v_action.actor_email, 'bulk_handle', v_action.filter, v_action.fax_count,
                v_action.note, p_bulk_action_id);
    end if;
    select a.id into v_audit_id from public.document_jobs_audit a where a.bulk_action_id = p_bulk_action_id;

    v_batch := array(
        select f.fax_received_email_id from document_jobs_internal.handling_bulk_action_faxes f
         where f.bulk_action_id = p_bulk_action_id and f.outcome is null
         order by f.fax_received_email_id limit p_batch_size);
    if cardinality(v_batch) > 0 then
        -- The faxes' locks, in one order: a mark of one of them at the same time waits, or is waited for.
        perform from public.fax_received_emails e where e.id = any (v_batch) order by e.id for no key update;
        foreach v_fax in array v_batch loop
            select * into v_before from public.fax_handling h where h.fax_received_email_id = v_fax;
            if coalesce(v_before.state, 'new') = 'done' then
                update document_jobs_internal.handling_bulk_action_faxes f
                   set outcome = 'skipped', reason = 'already_done', applied_at = now()
                 where f.bulk_action_id = p_bulk_action_id and f.fax_received_email_id = v_fax;
            else
                v_after := document_jobs_internal.handling_after(v_before, v_fax, 'done', v_action.note,
                                                                 v_action.actor_id, v_action.actor_email);
                perform document_jobs_internal.write_handling(v_before, v_after, v_action.note, v_audit_id);
                update document_jobs_internal.handling_bulk_action_faxes f
                   set outcome = 'changed', applied_at = now()
                 where f.bulk_action_id = p_bulk_action_id and f.fax_received_email_id = v_fax;
                v_changed := v_changed + 1;
            end if;
        end loop;
        update document_jobs_internal.handling_bulk_actions b
           set changed = b.changed + v_changed,
               skipped = b.skipped + cardinality(v_batch) - v_changed,
               finished_at = case when not exists (
                                      select 1 from document_jobs_internal.handling_bulk_action_faxes x
                                       where x.bulk_action_id = b.id and x.outcome is null) then now() end
         where b.id = p_bulk_action_id;
    end if;
    return document_jobs_internal.handling_bulk_progress(p_bulk_action_id) || jsonb_build_object('batch_size', p_batch_size);
end;
$$;
comment on function public.apply_fax_handling_bulk(uuid, uuid, text, integer) is
    'Marks done the next batch (at most p_batch_size faxes, 1 to 1,000) of a bulk mark done that prepare_fax_handling_bulk counted, in one transaction, with the note of its first call (required; kept as the faxes'' note), and answers where it stands (handling_bulk_progress): call it again until "done". Only the operator who counted may apply it, within 15 minutes of counting, while Auth has them as an admin or a clerk (acting_operator, every call). The first call writes the audit row (bulk_handle: the filter, the fax count, the note), once; every mark is kept in fax_handling_history under it. A fax marked done since the count is skipped (already_done).';

revoke all on function
    document_jobs_internal.handling_bulk_progress(uuid)
from public, anon, authenticated, service_role;
revoke all on function
    public.prepare_fax_handling_bulk(text, jsonb, uuid),
    public.apply_fax_handling_bulk(uuid, uuid, text, int)
from public, anon, authenticated;
grant execute on function
    public.prepare_fax_handling_bulk(text, jsonb, uuid),
    public.apply_fax_handling_bulk(uuid, uuid, text, int)
to service_role;
revoke all on table document_jobs_internal.handling_bulk_actions, document_jobs_internal.handling_bulk_action_faxes
from public, anon, authenticated, service_role;
