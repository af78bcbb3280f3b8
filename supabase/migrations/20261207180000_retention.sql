-- Retention of received faxes (the Electronic Bookkeeping Act's 保存期間): a keep-until date per
-- fax, an admin's recorded deletion after it, and a recorded removal of its objects from Storage.
--
-- A corporation keeps its transaction documents for 7 years (10 for a year whose loss is carried
-- forward) from the day after the filing deadline of the return of the fiscal year they belong to
-- (法人税法施行規則 59 条; the NTA's 電子帳簿保存法一問一答【電子取引関係】 問 61 says the same of
-- 電子取引 data). The deadline is 2 months after the fiscal year's end, 3 with an extension
-- (法人税法 74 条, 75 条の 2). A fax belongs to the fiscal year of the day it was received on, that
-- day taken in the office's time zone (office_settings.time_zone): a fax received at 23:30 on the
-- last day of the year in Tokyo is that year's, though it is already 14:30 UTC.
--
-- keep_until is the one computation. With a fiscal year ending on the last day of month M of
-- year Y, a deadline D months later is the last day of month M + D (a year ends on a month's last
-- day, so the deadline is a month's last day too: February's 28th or 29th for M = 12, D = 2), the
-- period starts on the 1st of month M + D + 1 and ends the day before the same date N years
-- later: the last day of month M + D of year Y + N. For March (M = 3, D = 2, N = 7): a fax received
-- from 2026-04-01 to 2027-03-31 is kept until 2034-05-31.
--
-- The settings are read when the date is computed: a change applies to every fax, the ones
-- received before it too. That is what a switch to 10 years for a loss year needs; a change of the
-- fiscal year's end (a rare event with its own short year) moves past faxes' dates too, which the
-- documents tell the office to check with its tax accountant before deleting anything.

alter table public.office_settings
    -- Most Japanese companies close their year at the end of March (3), hence the default.
    add column fiscal_year_end_month int not null default 3
        constraint office_settings_fiscal_year_end_month check (fiscal_year_end_month between 1 and 12),
    add column filing_deadline_months int not null default 2
        constraint office_settings_filing_deadline_months check (filing_deadline_months in (2, 3)),
    add column retention_years int not null default 7
        constraint office_settings_retention_years check (retention_years in (7, 10));
comment on column public.office_settings.fiscal_year_end_month is
    'The month the office''s fiscal year ends in (1 to 12; the year ends on its last day). Default 3: most Japanese companies close in March.';
comment on column public.office_settings.filing_deadline_months is
    'Months from the fiscal year''s end to the return''s filing deadline: 2, or 3 with an extension of the deadline (申告期限の延長).';
comment on column public.office_settings.retention_years is
    'Years a fax is kept from the day after the filing deadline: 7, or 10 while a year''s loss is carried forward (欠損金の繰越し).';
comment on table public.office_settings is
    'The office''s settings, one row: time_zone (an IANA name, default Asia/Tokyo), the zone of every date the office reads (the inbox, announcements, keep-until dates, exports); and the retention of faxes: fiscal_year_end_month, filing_deadline_months, retention_years (document_jobs_internal.keep_until). Changed by hand as the project owner (update office_settings set ...), checked by constraints.';

create function document_jobs_internal.keep_until(p_received timestamptz)
returns date
language sql
stable
set search_path = ''
as $$
    select (make_date(y.end_year, s.fiscal_year_end_month, 1)
            + make_interval(years => s.retention_years, months => s.filing_deadline_months + 1))::date - 1
      from public.office_settings s
     cross join lateral (select (p_received at time zone s.time_zone)::date as day) d
     -- The fiscal year the day belongs to ends in month M of its own year, or of the next when the
     -- day is past M.
     cross join lateral (select extract(year from d.day)::int
                                + (extract(month from d.day)::int > s.fiscal_year_end_month)::int as end_year) y
$$;
revoke all on function document_jobs_internal.keep_until(timestamptz) from public;
comment on function document_jobs_internal.keep_until(timestamptz) is
    'The last day (in the office''s time zone) a fax received at p_received must be kept: retention_years from the day after the filing deadline (filing_deadline_months after the end of the fiscal year, ending in fiscal_year_end_month, that the day of p_received in office_settings.time_zone belongs to). The one computation of it; null for a null time.';

-- A fax's retention as its page and the deletion read it. Its received time is the inbox's
-- (coalesce(received_at, created_at)); deletable once the office's today is past keep_until.
create function document_jobs_internal.fax_retention(p_email public.fax_received_emails)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
               'keep_until', k.keep_until, 'time_zone', s.time_zone,
               'deletable', k.keep_until < (now() at time zone s.time_zone)::date,
               'fiscal_year_end_month', s.fiscal_year_end_month,
               'filing_deadline_months', s.filing_deadline_months, 'retention_years', s.retention_years)
      from public.office_settings s
     cross join lateral (select document_jobs_internal.keep_until(
                                    coalesce(p_email.received_at, p_email.created_at)) as keep_until) k
$$;
revoke all on function document_jobs_internal.fax_retention(public.fax_received_emails) from public;
comment on function document_jobs_internal.fax_retention(public.fax_received_emails) is
    'A fax''s retention: {"keep_until" (a date in the office''s zone), "time_zone", "deletable" (the office''s today is past it), and the settings it was computed with}.';

-- The fax's page shows it: the page's read, with the retention beside the fax (a fax that is not
-- there stays null).
create or replace function public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set jit = off
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_fax(p_fax_id)
        || jsonb_build_object('retention', (select document_jobs_internal.fax_retention(e)
                                              from public.fax_received_emails e where e.id = p_fax_id));
end;
$$;
comment on function public.document_jobs_operator_fax(uuid, uuid, uuid) is
    'document_jobs_admin_fax for a signed-in operator, with the fax''s retention (document_jobs_internal.fax_retention: its keep-until date), refused (operator_role) once their session, user or role no longer allows it.';

-- The removal of a deleted fax's objects from Storage, one row per object: the second step of a
-- deletion (SQL cannot delete an object; document-jobs-admin purge-deleted does, through
-- Storage's API, and records it here). A record table like fax_deletions: never updated or deleted.
create table public.fax_object_removals (
    id bigint generated always as identity primary key,
    deletion_id bigint not null references public.fax_deletions (id),
    bucket text not null,
    storage_path text not null,
    -- What the object was: an original, the raw e-mail, a derived viewing PDF or thumbnail, or an
    -- object a fetch job had discarded as wrong (its delete may not have reached Storage).
    kind text not null constraint fax_object_removals_kind
        check (kind in ('original', 'raw_message', 'view', 'thumbnail', 'discarded')),
    actor_id uuid not null,
    actor_email text,
    removed_at timestamptz not null default now(),
    constraint fax_object_removals_one_per_object unique (bucket, storage_path)
);
create index fax_object_removals_of_deletion on public.fax_object_removals (deletion_id);
comment on sequence public.fax_object_removals_id_seq is
    'The identity of fax_object_removals.id: the order in which objects were removed.';
alter table public.fax_object_removals enable row level security;
revoke all on table public.fax_object_removals from public, anon, authenticated, service_role;
-- Its ids are drawn only by record_fax_object_removal, as its owner (Supabase's default privileges
-- would give every new sequence of public to anon and authenticated).
revoke all on sequence public.fax_object_removals_id_seq from public, anon, authenticated, service_role;
grant select on table public.fax_object_removals to service_role;
comment on table public.fax_object_removals is
    'THE RECORD of the objects removed from Storage after an approved deletion (fax_deletions): which (bucket, key, kind), for which deletion, by whom (an admin, checked in Auth''s row) and when; written by record_fax_object_removal after Storage''s delete answered, never updated or deleted (record_guards).';

create or replace function document_jobs_internal.record_tables()
returns table (record_table text, email_column text)
language sql
immutable
set search_path = ''
as $$
    values ('public.fax_received_emails', 'id'),
           ('public.fax_received_email_attachments', 'fax_received_email_id'),
           ('public.fax_received_email_raw_messages', 'fax_received_email_id'),
           ('public.fax_deletions', null),
           ('public.fax_object_removals', null)
$$;
select document_jobs_internal.guard_record_tables();

-- The histories of a fax's handling and index are append-only; they go with the fax, and only
-- then: a row may be deleted when fax_deletions names its e-mail (whose row holds the history's
-- content, in what), as the record's own rows may. Their foreign keys to the e-mail would
-- otherwise block its deletion for ever.
create or replace function document_jobs_internal.refuse_fax_index_history_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'DELETE'
       and exists (select 1 from public.fax_deletions d where d.fax_received_email_id = old.fax_received_email_id) then
        return old;
    end if;
    raise exception using errcode = '42501', hint = 'append_only',
        message = 'fax_index_history is append-only: a correction of a fax''s index is a new entry (set_fax_index), never a change of an old one';
end;
$$;
comment on function document_jobs_internal.refuse_fax_index_history_change() is
    'The trigger that keeps fax_index_history append-only: any UPDATE or DELETE of it fails (42501, hint append_only), whoever runs it; but a row of a fax whose deletion fax_deletions records goes with it (admin_delete_fax).';

create or replace function document_jobs_internal.refuse_handling_history_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_level = 'ROW' and tg_op = 'DELETE'
       and exists (select 1 from public.fax_deletions d where d.fax_received_email_id = old.fax_received_email_id) then
        return old;
    end if;
    raise exception using errcode = 'insufficient_privilege',
        message = 'fax_handling_history is append-only: its rows are never updated or deleted';
end;
$$;
comment on function document_jobs_internal.refuse_handling_history_change() is
    'Triggers fax_handling_history_append_only (each UPDATE statement) and fax_handling_history_deleted_only_as_approved (each deleted row): the history of marks is never updated or deleted, whoever asks; but a row of a fax whose deletion fax_deletions records goes with it (admin_delete_fax).';
drop trigger fax_handling_history_append_only on public.fax_handling_history;
create trigger fax_handling_history_append_only
    before update on public.fax_handling_history
    for each statement execute function document_jobs_internal.refuse_handling_history_change();
create trigger fax_handling_history_deleted_only_as_approved
    before delete on public.fax_handling_history
    for each row execute function document_jobs_internal.refuse_handling_history_change();

comment on table public.fax_deletions is
    'THE RECORD of approved deletions: one row per received fax (e-mail) an admin deleted after its keep-until date (admin_delete_fax), with who, why, when and what went (what: the rows'' ids, the objects'' keys and SHA-256, the index values and their history, the handling and its history, the jobs, and the objects to remove). The guard of the record tables lets a row of fax_received_emails, fax_received_email_attachments or fax_received_email_raw_messages (and of the handling''s and the index''s histories) be deleted only when a row here names its e-mail; this table itself is never updated, deleted or truncated, and refuses an approval for a fax whose keep-until date is not past (fax_deletions_only_after_keep_until), whoever inserts it. Its objects are removed from Storage afterwards, each recorded in fax_object_removals.';

-- Nothing deletes a fax before its keep-until date: the one check, made by admin_delete_fax and
-- again by a trigger of fax_deletions, so that no approval can be recorded for a fax still to be
-- kept, whoever inserts it (the owner in the SQL editor too).
create function document_jobs_internal.require_past_keep_until(p_email public.fax_received_emails)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_retention jsonb := document_jobs_internal.fax_retention(p_email);
begin
    if not coalesce((v_retention ->> 'deletable')::boolean, false) then
        raise exception using errcode = '55000', hint = 'retention_not_over',
            message = format('fax %s must be kept until %s (%s): nothing may delete it before then',
                             left(replace(p_email.id::text, '-', ''), 8), v_retention ->> 'keep_until',
                             v_retention ->> 'time_zone');
    end if;
    return v_retention;
end;
$$;
revoke all on function document_jobs_internal.require_past_keep_until(public.fax_received_emails) from public;
comment on function document_jobs_internal.require_past_keep_until(public.fax_received_emails) is
    'The fax''s retention (fax_retention) when the office''s today is past its keep-until date; else 55000, hint retention_not_over, naming the date and the zone. admin_delete_fax and the trigger fax_deletions_only_after_keep_until check it.';

create function document_jobs_internal.refuse_early_deletion()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
    v_email public.fax_received_emails;
begin
    select * into v_email from public.fax_received_emails e where e.id = new.fax_received_email_id;
    if not found then
        raise exception using errcode = 'P0002',
            message = format('no fax %s: a deletion names a fax that is recorded', new.fax_received_email_id);
    end if;
    perform document_jobs_internal.require_past_keep_until(v_email);
    return new;
end;
$$;
revoke all on function document_jobs_internal.refuse_early_deletion() from public;
comment on function document_jobs_internal.refuse_early_deletion() is
    'Trigger fax_deletions_only_after_keep_until, before each approval inserted: refuses one for a fax that is not recorded (P0002) or whose keep-until date the office''s today is not past (55000 retention_not_over, require_past_keep_until), whoever inserts it.';
create trigger fax_deletions_only_after_keep_until
    before insert on public.fax_deletions
    for each row execute function document_jobs_internal.refuse_early_deletion();
alter table public.fax_deletions enable always trigger fax_deletions_only_after_keep_until;

-- What a deletion takes from Storage, in its order: the originals (every version), the raw
-- e-mail, what prepare_fax derived from each original, and what a fetch job discarded as wrong.
create function document_jobs_internal.fax_objects(p_email_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select coalesce(jsonb_agg(jsonb_build_object('bucket', o.bucket, 'key', o.key, 'kind', o.kind)
                              order by o.ord, o.key), '[]')
      from (select a.bucket, a.storage_path as key, 'original' as kind, 1 as ord
              from public.fax_received_email_attachments a where a.fax_received_email_id = p_email_id
            union
            select r.bucket, r.storage_path, 'raw_message', 2
              from public.fax_received_email_raw_messages r
             where r.fax_received_email_id = p_email_id and r.storage_path is not null
            union
            select a.bucket, v.view_path, 'view', 3
              from public.fax_received_email_attachments a
              join public.fax_attachment_views v on v.attachment_id = a.id
             where a.fax_received_email_id = p_email_id and v.view_path is not null
            union
            select a.bucket, v.thumbnail_path, 'thumbnail', 4
              from public.fax_received_email_attachments a
              join public.fax_attachment_views v on v.attachment_id = a.id
             where a.fax_received_email_id = p_email_id and v.thumbnail_path is not null
            union
            select d.bucket, d.storage_path, 'discarded', 5
              from document_jobs_internal.discarded_objects d where d.fax_received_email_id = p_email_id) o
$$;
revoke all on function document_jobs_internal.fax_objects(uuid) from public;
comment on function document_jobs_internal.fax_objects(uuid) is
    'The objects in Storage a fax has: its originals, its raw e-mail, the viewing PDFs and thumbnails derived from them (fax_views/), and any object a fetch job discarded as wrong; [{"bucket", "key", "kind"}], what admin_delete_fax records for the purge to remove.';

-- Refusals (SQLSTATE and hint; the CLI names each, lib/admin/retention.py):
--   55000 retention_not_over  the office's today is not past the fax's keep-until date
--   55000 jobs_live           a job of the fax is queued or running (it may store an object yet)
-- and the operator's (acting_operator), 22023 for a missing reason, P0002 for no such fax.
create function public.admin_delete_fax(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_reason text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email public.fax_received_emails;
    v_retention jsonb;
    v_attachments uuid[];
    v_what jsonb;
    v_deletion bigint;
begin
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    -- The fax and its jobs stay as they are while they are read and deleted: no job is added to
    -- it (the foreign key's lock waits for this one), and none is claimed or retried meanwhile.
    select * into v_email from public.fax_received_emails e where e.id = p_fax_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    perform 1 from public.document_jobs j where j.fax_received_email_id = p_fax_id for update;
    v_retention := document_jobs_internal.require_past_keep_until(v_email);
    if exists (select 1 from public.document_jobs j
                where j.fax_received_email_id = p_fax_id and j.status in ('queued', 'running')) then
        raise exception using errcode = '55000', hint = 'jobs_live',
            message = format('a job of fax %s is queued or running: let it end (or cancel it), then delete',
                             left(replace(p_fax_id::text, '-', ''), 8));
    end if;
    v_attachments := array(select a.id from public.fax_received_email_attachments a
                            where a.fax_received_email_id = p_fax_id);
    -- Everything that goes, as it is now: the record's rows (the e-mail's without its verbatim
    -- data, which the raw message's key and hash stand for), the index and the handling with their
    -- histories, the jobs, and the objects the purge removes.
    v_what := jsonb_build_object(
        'email', to_jsonb(v_email) - 'data',
        'retention', v_retention,
        'attachments', coalesce((select jsonb_agg(to_jsonb(a) - 'updated_at' || jsonb_build_object(
                                            'view', (select to_jsonb(v) - 'attachment_id'
                                                       from public.fax_attachment_views v where v.attachment_id = a.id))
                                        order by a.created_at, a.id)
                                   from public.fax_received_email_attachments a
                                  where a.fax_received_email_id = p_fax_id), '[]'),
        'raw_messages', coalesce((select jsonb_agg(to_jsonb(r) order by r.version)
                                    from public.fax_received_email_raw_messages r
                                   where r.fax_received_email_id = p_fax_id), '[]'),
        'index', (select to_jsonb(i) - 'counterparty_folded' from public.fax_index i
                   where i.fax_received_email_id = p_fax_id),
        'index_history', coalesce((select jsonb_agg(to_jsonb(h) order by h.id) from public.fax_index_history h
                                    where h.fax_received_email_id = p_fax_id), '[]'),
        'handling', (select to_jsonb(f) from public.fax_handling f where f.fax_received_email_id = p_fax_id),
        'handling_history', coalesce((select jsonb_agg(to_jsonb(h) order by h.id) from public.fax_handling_history h
                                       where h.fax_received_email_id = p_fax_id), '[]'),
        'rotation', (select r.rotation from public.fax_view_rotations r where r.fax_received_email_id = p_fax_id),
        'jobs', coalesce((select jsonb_agg(jsonb_build_object(
                                     'id', j.id, 'kind', j.kind, 'status', j.status, 'created_at', j.created_at,
                                     'finished_at', j.finished_at, 'last_error_code', j.last_error_code,
                                     'attempts', (select count(*) from public.document_job_attempts t
                                                   where t.job_id = j.id))
                                 order by j.created_at, j.id)
                            from public.document_jobs j where j.fax_received_email_id = p_fax_id), '[]'),
        'objects', document_jobs_internal.fax_objects(p_fax_id));
    insert into public.fax_deletions (fax_received_email_id, actor_id, actor_email, reason, what)
    values (p_fax_id, p_actor_id, p_actor_email, btrim(p_reason), v_what)
    returning id into v_deletion;
    -- What refers to the e-mail without a cascade, deliberately first; the rest goes with the
    -- e-mail's row: attachments and raw messages (the guard lets them, as approved above), their
    -- views, the jobs and their attempts, the rotation. What names the fax without a foreign key
    -- stays, saying what happened: the audit, the verifications' history, discarded_objects.
    delete from public.fax_handling_history h where h.fax_received_email_id = p_fax_id;
    delete from public.fax_handling f where f.fax_received_email_id = p_fax_id;
    delete from public.fax_index_history h where h.fax_received_email_id = p_fax_id;
    delete from public.fax_index i where i.fax_received_email_id = p_fax_id;
    delete from public.fax_received_emails e where e.id = p_fax_id;
    -- A mismatch known of an original that is gone is no longer one to watch.
    delete from document_jobs_internal.original_mismatches m where m.attachment_id = any (v_attachments);
    if found then
        perform document_jobs_internal.check_original_mismatches();
    end if;
    return jsonb_build_object('deletion_id', v_deletion, 'fax_received_email_id', p_fax_id,
                              'keep_until', v_retention -> 'keep_until', 'objects', v_what -> 'objects');
end;
$$;
revoke all on function public.admin_delete_fax(uuid, text, uuid, text) from public, anon, authenticated;
grant execute on function public.admin_delete_fax(uuid, text, uuid, text) to service_role;
comment on function public.admin_delete_fax(uuid, text, uuid, text) is
    'Deletes a fax after its keep-until date (keep_until), as an admin of Supabase Auth now (require_actor: acting_operator), with a reason: records first in fax_deletions what goes (the e-mail''s row without its data, the attachments with their keys and SHA-256 and views, the raw messages, the index and its history, the handling and its history, the rotation, the jobs, and the objects to remove from Storage), then deletes the handling, the index and their histories, and the e-mail''s row with all that cascades from it. Refuses (55000 retention_not_over) before the office''s today is past the keep-until date and (55000 jobs_live) while a job of the fax is queued or running. {"deletion_id", "fax_received_email_id", "keep_until", "objects"}. The objects stay in Storage until document-jobs-admin purge-deleted removes them.';

-- The second step's list: the objects of approved deletions that no removal records yet, oldest
-- deletion first. An object a row of the record still names is never listed (no key is shared by
-- two faxes; this says so where it matters).
create function public.fax_objects_to_remove(p_limit int default 1000)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require(p_limit between 1 and 10000, 'p_limit must be between 1 and 10,000');
    return coalesce((
        select jsonb_agg(jsonb_build_object('deletion_id', x.deletion_id,
                                            'fax_received_email_id', x.fax_received_email_id,
                                            'bucket', x.bucket, 'key', x.key, 'kind', x.kind)
                         order by x.deletion_id, x.ord)
          from (select d.id as deletion_id, d.fax_received_email_id, o.value ->> 'bucket' as bucket,
                       o.value ->> 'key' as key, o.value ->> 'kind' as kind, o.ord
                  from public.fax_deletions d
                 cross join lateral jsonb_array_elements(d.what -> 'objects') with ordinality o(value, ord)
                 where not exists (select 1 from public.fax_object_removals r
                                    where r.bucket = o.value ->> 'bucket' and r.storage_path = o.value ->> 'key')
                   and not exists (select 1 from public.fax_received_email_attachments a
                                    where a.bucket = o.value ->> 'bucket' and a.storage_path = o.value ->> 'key')
                   and not exists (select 1 from public.fax_received_email_raw_messages m
                                    where m.bucket = o.value ->> 'bucket' and m.storage_path = o.value ->> 'key')
                 order by d.id, o.ord
                 limit p_limit) x), '[]');
end;
$$;
revoke all on function public.fax_objects_to_remove(int) from public, anon, authenticated;
grant execute on function public.fax_objects_to_remove(int) to service_role;
comment on function public.fax_objects_to_remove(int) is
    'The objects of approved deletions (fax_deletions.what -> objects) that fax_object_removals does not record as removed yet, oldest deletion first, at most p_limit: [{"deletion_id", "fax_received_email_id", "bucket", "key", "kind"}]. Never an object a row of the record names. What document-jobs-admin purge-deleted removes through Storage''s API.';

create function public.record_fax_object_removal(p_actor_id uuid, p_actor_email text, p_deletion_id bigint,
                                                 p_bucket text, p_key text)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_kind text;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select o ->> 'kind' into v_kind
      from public.fax_deletions d, jsonb_array_elements(d.what -> 'objects') o
     where d.id = p_deletion_id and o ->> 'bucket' = p_bucket and o ->> 'key' = p_key;
    if v_kind is null then
        raise exception using errcode = 'P0002',
            message = format('deletion %s lists no object %s in %s', p_deletion_id, p_key, p_bucket);
    end if;
    insert into public.fax_object_removals (deletion_id, bucket, storage_path, kind, actor_id, actor_email)
    values (p_deletion_id, p_bucket, p_key, v_kind, p_actor_id, p_actor_email)
    on conflict (bucket, storage_path) do nothing;
    return found;
end;
$$;
revoke all on function public.record_fax_object_removal(uuid, text, bigint, text, text) from public, anon, authenticated;
grant execute on function public.record_fax_object_removal(uuid, text, bigint, text, text) to service_role;
comment on function public.record_fax_object_removal(uuid, text, bigint, text, text) is
    'Records that an object of an approved deletion was removed from Storage (after Storage''s delete answered; one that was already gone counts), by an admin of Supabase Auth now (require_actor). Only an object the deletion lists (P0002 otherwise); recording it again changes nothing (false).';
