-- Reconciliation that always moves or says why, a retention window that is watched, and one
-- alert per outage.
--
-- Reconciliation is the only net once webhooks fail, and it could stall in silence: one item of
-- Resend's list it could not read failed its whole page, every run; a page that came back again
-- looped until the page bound and then in every follow-up; a run that failed sent the failure
-- alert of a fax job ("Fax not fetched", every field empty) every ten minutes; and nothing said
-- that Resend's retention was running out on the e-mails it had not listed. Now:
--
-- * An unreadable listing item (no id, a created_at that is not a time or lies more than a day
--   ahead of this database's clock) is judged by the worker (lib/worker/resend.py), left
--   unrecorded, and noted here once per item (unreadable_listed_emails, by a fingerprint the
--   worker gives) with what can be read of it; the outage reconciliation_unreadable alerts once
--   per new item and shows them (health, the overview) until each is recorded or past retention.
-- * A run cut short by a finding (the same page again, a cursor that does not advance, has_more
--   with an empty page) ends cleanly: the watermark stays (the gap it did not list is listed by
--   the next run, which starts from the newest page again), and last_finding says why.
-- * reconciliation_stalled opens when no run has listed back to its watermark within three of its
--   intervals (last_completed_at), or a run has been under way for over an hour; it closes when a
--   run completes. A failed reconcile_emails job sends no failure alert: it feeds this outage.
-- * retention: how long Resend keeps received e-mails on the office's plan. Resend's own pages read
--   (resend.com/inbound, resend.com/docs/knowledge-base/how-can-i-receive-emails-with-resend,
--   resend.com/docs/api-reference/emails/list-received-emails) do not say; third-party pages give
--   1 day on Free, 3 on Pro, 7 on Scale (flexprice.io/blog/detailed-resend-pricing-guide; Pro 3 and
--   Scale 7 also xmit.sh/blog/resend-vs-transmit), so the default is the shortest, 1 day. The
--   outage retention_window_closing warns when now less the watermark passes half of it, and once
--   more at three quarters, naming the date the gap's e-mails become unrecoverable and the command
--   to run. It replaces max_since as the bound of a run by hand (one setting for one fact).
-- * webhooks_missing reopens only for a late e-mail *received* after it closed; late ones received
--   before are counted (late_after_close) and alert nobody: their outage was already told.
--
-- An outage of these three alerts once per episode (and once more when its level rises),
-- through set_outage_once: set_outage's hourly reminder would page every hour for a window that
-- closes over a day, or for each run of a stall that has been told.

-- Settings and state -------------------------------------------------------------------------

alter table public.document_jobs_reconciliation
    add column retention interval not null default interval '1 day'
        constraint document_jobs_reconciliation_retention
            check (retention between interval '1 hour' and interval '1 year'),
    add column last_completed_at timestamptz,
    add column last_finding text,
    add column last_finding_at timestamptz,
    add column run_unreadable int not null default 0,
    add column last_unreadable int,
    add column missing_received_at timestamptz,
    add column late_after_close int not null default 0;
-- A run before this migration always listed back to its watermark or failed. Before a first run
-- completes it stays null: a first run that never completes is caught by its hour under way.
update public.document_jobs_reconciliation set last_completed_at = last_run_at;
update public.document_jobs_reconciliation r
   set missing_received_at = (select max(e.received_at) from public.fax_received_emails e
                               where e.found_by = 'reconciliation'
                                 and e.reconciled_at - e.received_at > r.webhooks_missing_after);
alter table public.document_jobs_reconciliation drop column max_since;

comment on table public.document_jobs_reconciliation is
    'The one row of reconciliation: its settings (every_minutes, the cron job document-jobs-reconcile; overlap; webhooks_missing_after; max_pages per job; retention, how long Resend keeps received e-mails, which bounds a run by hand and the window the health check watches; set_document_jobs_reconciliation) and its state: watermark, the newest created_at of Resend''s that a run listed fully (a run lists back to it less the overlap), the cursor of a run that stopped at max_pages (its follow-up continues after it), the current run''s counts, the last run''s, and when a run last completed.';
comment on column public.document_jobs_reconciliation.retention is
    'How long Resend keeps a received e-mail on the office''s plan (1 day unless set: the shortest reported; Resend''s own pages do not say). A run by hand (document-jobs-admin reconcile --since) goes back at most this far, and the health check''s retention_window_closing warns when the watermark is older than half of it, then three quarters.';
comment on column public.document_jobs_reconciliation.last_completed_at is
    'When a run last listed back to its watermark (or to the end of the list): what reconciliation_stalled watches; null until a run has (a first run that does not complete is stalled once under way for an hour). A run cut short by a finding does not count.';
comment on column public.document_jobs_reconciliation.last_finding is
    'Why the last run ended before its watermark (the same page again, a cursor that did not advance, has_more with an empty page), in the worker''s words; null when it completed.';
comment on column public.document_jobs_reconciliation.missing_received_at is
    'The newest Resend created_at of the e-mails reconciliation recorded late (webhooks_missing_after) that were received after webhooks_missing last closed: what opens that outage again.';
comment on column public.document_jobs_reconciliation.late_after_close is
    'E-mails recorded late since webhooks_missing last closed that were received before it closed: they belong to the outage already told, reopen nothing, and are counted here.';
comment on column public.document_jobs_reconciliation.missing_found_at is
    'When reconciliation last recorded an e-mail whose webhook was more than webhooks_missing_after late.';

alter table document_jobs_internal.outages add column alerted_level bigint;
comment on column document_jobs_internal.outages.alerted_level is
    'For a cause checked through set_outage_once: the level its last alert of this episode told (a window''s half or three quarters, the newest unreadable e-mail); null otherwise.';
insert into document_jobs_internal.outages (cause)
values ('reconciliation_stalled'), ('retention_window_closing'), ('reconciliation_unreadable');

create table document_jobs_internal.unreadable_listed_emails (
    id bigint generated always as identity primary key,
    fingerprint text not null constraint unreadable_listed_emails_fingerprint unique,
    provider_email_id text,
    reason text not null,
    item jsonb not null,
    listed_by text not null constraint unreadable_listed_emails_listed_by check (listed_by in ('reconciliation', 'operator')),
    first_listed_at timestamptz not null default now(),
    last_listed_at timestamptz not null default now()
);
comment on table document_jobs_internal.unreadable_listed_emails is
    'Items of Resend''s list of received e-mails that reconciliation could not read (lib/worker/resend.py: no id, or a created_at that is not a time or is more than a day ahead), one row per item (fingerprint: the id''s digest, or the whole item''s when it has no usable id), with what can be read of it (item) and why it could not (reason). Such an item is not recorded; the outage reconciliation_unreadable shows it until its id is recorded (a webhook, or a later listing that could read it) or it is older than retention.';
comment on column document_jobs_internal.unreadable_listed_emails.provider_email_id is
    'The item''s id as an e-mail row would store it (lib/storable.py storable_id), when it has one: it is resolved once an e-mail row has it.';
alter table document_jobs_internal.unreadable_listed_emails enable row level security;
revoke all on table document_jobs_internal.unreadable_listed_emails from public, anon, authenticated, service_role;

-- Recording ---------------------------------------------------------------------------------------

create function document_jobs_internal.note_unreadable(p_items jsonb, p_listed_by text) returns int
language plpgsql
set search_path = ''
as $$
declare
    v_item jsonb;
    v_id bigint;
    v_new int := 0;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_items) = 'array', 'p_unreadable must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_items) <= 100, 'p_unreadable holds at most 100 items');
    for v_item in select e.value from jsonb_array_elements(p_items) e loop
        perform document_jobs_internal.require(
            jsonb_typeof(v_item) = 'object' and nullif(v_item ->> 'fingerprint', '') is not null
            and length(v_item ->> 'fingerprint') <= 200 and nullif(v_item ->> 'reason', '') is not null
            and jsonb_typeof(v_item -> 'item') = 'object' and length((v_item -> 'item')::text) <= 20000,
            'every item of p_unreadable must be an object with a fingerprint, a reason and an item (at most 20,000 characters)');
        insert into document_jobs_internal.unreadable_listed_emails as u
               (fingerprint, provider_email_id, reason, item, listed_by)
        values (v_item ->> 'fingerprint', nullif(v_item ->> 'provider_email_id', ''), left(v_item ->> 'reason', 500),
                v_item -> 'item', p_listed_by)
        on conflict (fingerprint) do nothing
        returning u.id into v_id;
        if v_id is null then
            update document_jobs_internal.unreadable_listed_emails u
               set last_listed_at = now()
             where u.fingerprint = v_item ->> 'fingerprint';
        else
            v_new := v_new + 1;
        end if;
    end loop;
    return v_new;
end;
$$;
comment on function document_jobs_internal.note_unreadable(jsonb, text) is
    'Notes the listing items reconciliation could not read (at most 100: {"fingerprint", "provider_email_id", "reason", "item"}), each once (a known fingerprint only gets its last_listed_at); returns how many were new.';
revoke all on function document_jobs_internal.note_unreadable(jsonb, text) from public, anon, authenticated, service_role;

create or replace function document_jobs_internal.record_reconciled(p_emails jsonb) returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_item jsonb;
    v_id text;
    v_row record;
    v_received timestamptz;
    v_late_one boolean;
    v_missing_after interval;
    v_closed_at timestamptz;
    v_recorded int := 0;
    v_late int := 0;
    v_young int := 0;
    v_after_close int := 0;
    v_newest_missing timestamptz;
    v_ids jsonb := '[]'::jsonb;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_emails) = 'array', 'p_emails must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_emails) <= 100, 'p_emails holds at most 100 e-mails');
    select r.webhooks_missing_after, r.outage_closed_at into v_missing_after, v_closed_at
      from public.document_jobs_reconciliation r;
    for v_item in select e.value from jsonb_array_elements(p_emails) e loop
        v_id := v_item ->> 'id';
        perform document_jobs_internal.require(jsonb_typeof(v_item) = 'object' and nullif(v_id, '') is not null,
                                               'every item of p_emails must be an object with an id');
        -- An e-mail younger than webhooks_missing_after may still get its webhook: left for a
        -- later run (the watermark never passes it). The worker sends only items whose
        -- created_at it could read (the others are noted as unreadable), so one that does not
        -- parse here is taken as old.
        if document_jobs_internal.try_timestamptz(v_item ->> 'created_at') > now() - v_missing_after then
            v_young := v_young + 1;
            continue;
        end if;
        select * into v_row
          from public.record_inbound_email(v_id, null, v_item || jsonb_build_object('email_id', v_id));
        if not v_row.duplicate then
            update public.fax_received_emails e
               set found_by = 'reconciliation', reconciled_at = now()
             where e.id = v_row.fax_received_email_id
            returning e.received_at, coalesce(e.received_at < now() - v_missing_after, false)
              into v_received, v_late_one;
            v_recorded := v_recorded + 1;
            v_ids := v_ids || to_jsonb(v_id);
            if v_late_one then
                v_late := v_late + 1;
                -- Received before webhooks_missing last closed: that outage was told and closed;
                -- the e-mail is counted, and reopens nothing.
                if v_received > coalesce(v_closed_at, '-infinity') then
                    v_newest_missing := greatest(v_newest_missing, v_received);
                else
                    v_after_close := v_after_close + 1;
                end if;
            end if;
        end if;
    end loop;
    if v_late > 0 then
        update public.document_jobs_reconciliation r
           set missing_found_at = now(),
               missing_received_at = greatest(r.missing_received_at, v_newest_missing),
               late_after_close = r.late_after_close + v_after_close;
    end if;
    return jsonb_build_object('recorded', v_recorded, 'late', v_late, 'young', v_young,
                              'late_after_close', v_after_close, 'recorded_ids', v_ids);
end;
$$;
comment on function document_jobs_internal.record_reconciled(jsonb) is
    'Records the listed e-mails (items of Resend''s GET /emails/receiving, at most 100) that the database does not have and that Resend received more than webhooks_missing_after ago (a younger one may still get its webhook: "young", left for a later run), each through record_inbound_email with a null webhook id, and marks those it created found_by reconciliation. Answers {"recorded", "late" (of those, received more than webhooks_missing_after before, by Resend''s created_at), "late_after_close" (of the late, those received before webhooks_missing last closed: counted, they reopen nothing), "young", "recorded_ids"}; an e-mail already recorded (by a webhook, before or during the run) is left as it is.';

create function public.record_reconciled_emails_v3(p_job_id uuid, p_generation int, p_emails jsonb,
                                                   p_unreadable jsonb default '[]'::jsonb,
                                                   p_lease interval default null) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
    v_new int;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until)
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    v_new := document_jobs_internal.note_unreadable(coalesce(p_unreadable, '[]'::jsonb), 'reconciliation');
    update public.document_jobs_reconciliation r
       set run_recorded = r.run_recorded + (v_answer ->> 'recorded')::int,
           run_late = r.run_late + (v_answer ->> 'late')::int;
    return jsonb_build_object('held', true, 'state', 'running', 'unreadable_new', v_new) || v_answer;
end;
$$;
comment on function public.record_reconciled_emails_v3(uuid, int, jsonb, jsonb, interval) is
    'A batch of a listed page recorded (document_jobs_internal.record_reconciled: at most 100 e-mails) and its unreadable items noted once each (note_unreadable: at most 100), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given; the run''s counts grow with it. Answers {"held", "state"} with "recorded", "late", "late_after_close", "recorded_ids" and "unreadable_new".';
revoke all on function public.record_reconciled_emails_v3(uuid, int, jsonb, jsonb, interval) from public, anon, authenticated;
grant execute on function public.record_reconciled_emails_v3(uuid, int, jsonb, jsonb, interval) to service_role;

-- The database's clock in the answer: the worker holds created_at to at most a day past it.
create or replace function public.start_reconciliation_v2(p_job_id uuid, p_generation int) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_state public.document_jobs_reconciliation;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    update public.document_jobs_reconciliation r
       set run_started_at = coalesce(r.run_started_at, now())
    returning * into v_state;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'stop_before', coalesce(v_state.watermark, now()) - v_state.overlap,
        'cursor', v_state.cursor,
        'max_pages', v_state.max_pages,
        'now', now());
end;
$$;
comment on function public.start_reconciliation_v2(uuid, int) is
    'What a reconcile_emails job needs before it lists, fenced like every call after a claim: "stop_before" (the watermark less the overlap: the run stops at a page whose every e-mail is older), "cursor" (where a run that stopped at its page bound continues, else null), "max_pages", and "now", the database''s clock (an item created more than a day after it is unreadable).';

create function public.finish_reconciliation_v3(p_job_id uuid, p_generation int, p_listed int,
                                                p_newest timestamptz, p_cursor text,
                                                p_finding text default null, p_unreadable int default 0) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(p_listed is not null and p_listed >= 0, 'p_listed must be 0 or more');
    perform document_jobs_internal.require(p_unreadable is not null and p_unreadable >= 0, 'p_unreadable must be 0 or more');
    perform document_jobs_internal.require(p_cursor is null or p_finding is null,
                                           'a run cut short by a finding has no cursor to continue after');
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    if p_cursor is not null then
        -- Stopped at its page bound: the follow-up (enqueued when this job completes) goes on after it.
        update public.document_jobs_reconciliation r
           set cursor = p_cursor,
               run_listed = r.run_listed + p_listed,
               run_unreadable = r.run_unreadable + p_unreadable,
               run_newest = greatest(r.run_newest, p_newest);
        return jsonb_build_object('held', true, 'state', 'running', 'continues', true);
    end if;
    -- The run is over. Cut short by a finding, it did not list back to the watermark: the
    -- watermark stays (what it did not list is listed by the next run, from the newest page).
    update public.document_jobs_reconciliation r
       set watermark = case when p_finding is null
                            then greatest(r.watermark, least(greatest(r.run_newest, p_newest),
                                                             now() - r.webhooks_missing_after))
                            else r.watermark end,
           last_completed_at = case when p_finding is null then now() else r.last_completed_at end,
           last_finding = left(p_finding, 500),
           last_finding_at = case when p_finding is null then r.last_finding_at else now() end,
           cursor = null,
           last_run_at = now(),
           last_listed = r.run_listed + p_listed,
           last_recorded = r.run_recorded,
           last_late = r.run_late,
           last_unreadable = r.run_unreadable + p_unreadable,
           run_started_at = null, run_listed = 0, run_recorded = 0, run_late = 0, run_unreadable = 0,
           run_newest = null;
    return jsonb_build_object('held', true, 'state', 'running', 'continues', false);
end;
$$;
comment on function public.finish_reconciliation_v3(uuid, int, int, timestamptz, text, text, int) is
    'The end of a reconcile_emails job''s listing, fenced, before the job completes: with p_cursor (it stopped at max_pages) the cursor is kept and a follow-up job is enqueued when this one completes; with p_finding (the worker''s words for what cut the run short: the same page again, a cursor that does not advance, has_more with an empty page) the run ends and the watermark stays; with neither the run completed: the watermark becomes the newest created_at the run listed, but no later than webhooks_missing_after ago (the young e-mails it left are listed again) and never earlier than it was, and last_completed_at is now. Either end makes the run''s counts the last run''s (p_unreadable: the items it could not read). Answers {"held", "state", "continues"}.';
revoke all on function public.finish_reconciliation_v3(uuid, int, int, timestamptz, text, text, int) from public, anon, authenticated;
grant execute on function public.finish_reconciliation_v3(uuid, int, int, timestamptz, text, text, int) to service_role;

-- The worker of the previous deploy finishes through v3 too (its runs complete or stop at the bound).
create or replace function public.finish_reconciliation_v2(p_job_id uuid, p_generation int, p_listed int,
                                                           p_newest timestamptz, p_cursor text) returns jsonb
language sql
security definer
set search_path = ''
as $$
    select public.finish_reconciliation_v3(p_job_id, p_generation, p_listed, p_newest, p_cursor, null, 0)
$$;
comment on function public.finish_reconciliation_v2(uuid, int, int, timestamptz, text) is
    'finish_reconciliation_v3 without a finding: what the worker called before it reported findings, kept for a deploy that is not atomic.';

-- The unreadable items of a run by hand go with its batches: a new last argument with a default,
-- so that the CLI of the previous version, which names the five others, is still answered.
drop function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int);
create function public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb,
                                                      p_since timestamptz, p_listed int,
                                                      p_unreadable jsonb default '[]'::jsonb) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_retention interval;
    v_answer jsonb;
    v_new int;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select r.retention into v_retention from public.document_jobs_reconciliation r;
    perform document_jobs_internal.require(p_since is not null and p_since >= now() - v_retention - interval '1 minute',
        format('p_since must be within retention (%s, how long Resend keeps received e-mails) of now', v_retention));
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    v_new := document_jobs_internal.note_unreadable(coalesce(p_unreadable, '[]'::jsonb), 'operator');
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'reconcile',
            jsonb_build_object('since', p_since, 'listed', p_listed, 'recorded_ids', v_answer -> 'recorded_ids',
                               'unreadable', jsonb_array_length(coalesce(p_unreadable, '[]'::jsonb))),
            (v_answer ->> 'recorded')::int);
    return v_answer || jsonb_build_object('unreadable_new', v_new);
end;
$$;
comment on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int, jsonb) is
    'The CLI''s reconcile (document-jobs-admin reconcile --since): a batch of listed e-mails recorded as a reconcile_emails job records them (document_jobs_internal.record_reconciled) and its unreadable items (p_unreadable) noted once each (note_unreadable), audited with the operator''s identity (action reconcile; its filter has since, listed, the recorded ids and how many items were unreadable; job_count the e-mails recorded). p_since may go back retention at most.';
revoke all on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int, jsonb) from public, anon, authenticated;
grant execute on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int, jsonb) to service_role;

drop function public.set_document_jobs_reconciliation(int, interval, interval, int);
create function public.set_document_jobs_reconciliation(p_every_minutes int default null,
                                                        p_overlap interval default null,
                                                        p_webhooks_missing_after interval default null,
                                                        p_max_pages int default null,
                                                        p_retention interval default null) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_state public.document_jobs_reconciliation;
begin
    update public.document_jobs_reconciliation r
       set every_minutes = coalesce(p_every_minutes, r.every_minutes),
           overlap = coalesce(p_overlap, r.overlap),
           webhooks_missing_after = coalesce(p_webhooks_missing_after, r.webhooks_missing_after),
           max_pages = coalesce(p_max_pages, r.max_pages),
           retention = coalesce(p_retention, r.retention)
    returning * into v_state;
    perform cron.schedule('document-jobs-reconcile',
                          document_jobs_internal.reconcile_schedule(v_state.every_minutes),
                          'select public.enqueue_document_jobs_reconciliation()');
    return jsonb_build_object('every_minutes', v_state.every_minutes, 'overlap', v_state.overlap,
                              'webhooks_missing_after', v_state.webhooks_missing_after,
                              'max_pages', v_state.max_pages, 'retention', v_state.retention);
end;
$$;
comment on function public.set_document_jobs_reconciliation(int, interval, interval, int, interval) is
    'Sets reconciliation''s settings (null: unchanged), held to the table''s constraints, and schedules the cron job document-jobs-reconcile every p_every_minutes. p_retention: how long Resend keeps received e-mails on the office''s plan (1 day on Free, 3 on Pro, 7 on Scale as reported). Answers the settings.';
revoke all on function public.set_document_jobs_reconciliation(int, interval, interval, int, interval) from public, anon, authenticated;
grant execute on function public.set_document_jobs_reconciliation(int, interval, interval, int, interval) to service_role;

-- What health, the screen and the checks read ----------------------------------------------------

create function document_jobs_internal.open_unreadable() returns setof document_jobs_internal.unreadable_listed_emails
language sql
stable
set search_path = ''
as $$
    select u.*
      from document_jobs_internal.unreadable_listed_emails u
     where u.first_listed_at > now() - (select r.retention from public.document_jobs_reconciliation r)
       and not exists (select 1 from public.fax_received_emails e
                        where e.provider = 'resend' and e.provider_email_id = u.provider_email_id)
$$;
comment on function document_jobs_internal.open_unreadable() is
    'The unreadable listing items still to act on: first listed within retention (Resend may still have the e-mail) and whose id no e-mail row has (a webhook, or a later listing that could read it, records it).';
revoke all on function document_jobs_internal.open_unreadable() from public, anon, authenticated, service_role;

create function document_jobs_internal.unreadable_shown(p_limit int) returns jsonb
language sql
stable
set search_path = ''
as $$
    select coalesce(jsonb_agg(jsonb_build_object('reason', u.reason, 'item', u.item, 'first_listed_at', u.first_listed_at,
                                                 'last_listed_at', u.last_listed_at, 'listed_by', u.listed_by)
                              order by u.id desc), '[]'::jsonb)
      from (select * from document_jobs_internal.open_unreadable() o order by o.id desc limit p_limit) u
$$;
comment on function document_jobs_internal.unreadable_shown(int) is
    'The newest p_limit open unreadable items as health and the screen show them: what could be read of each (item: id, created_at, from, to, subject, message_id, file names, as listed), why it could not be recorded, and when it was first and last listed.';
revoke all on function document_jobs_internal.unreadable_shown(int) from public, anon, authenticated, service_role;

create function document_jobs_internal.retention_window() returns jsonb
language sql
stable
set search_path = ''
as $$
    select case when r.watermark is not null then jsonb_build_object(
        'watermark', r.watermark,
        'retention', r.retention,
        'share', round((extract(epoch from now() - r.watermark) / extract(epoch from r.retention))::numeric, 3),
        'unrecoverable_from', r.watermark + r.retention,
        -- Back to the watermark less the overlap, the run's own reach; once that is past what Resend
        -- keeps, an age of the whole retention, which stays valid however late it is pasted.
        'command', 'document-jobs-admin reconcile --since '
                   || case when r.watermark - r.overlap > now() - r.retention
                           then to_char((r.watermark - r.overlap) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')
                           else floor(extract(epoch from r.retention) / 60)::text || 'm' end) end
      from public.document_jobs_reconciliation r
$$;
comment on function document_jobs_internal.retention_window() is
    'How much of Resend''s retention the gap since the watermark has used ("share": 0.5 is half), the time from which the gap''s e-mails are unrecoverable (watermark + retention), and the run by hand that lists the gap ("command"); null before a run has completed.';
revoke all on function document_jobs_internal.retention_window() from public, anon, authenticated, service_role;

create function document_jobs_internal.outage_details(p_cause text) returns jsonb
language sql
stable
set search_path = ''
as $$
    select case p_cause
        when 'reconciliation_unreadable' then jsonb_build_object(
            'emails', document_jobs_internal.unreadable_shown(20),
            'count', (select count(*) from document_jobs_internal.open_unreadable()))
        when 'retention_window_closing' then document_jobs_internal.retention_window()
        when 'reconciliation_stalled' then (
            select jsonb_build_object('last_completed_at', r.last_completed_at, 'running_since', r.run_started_at,
                                      'last_finding', r.last_finding, 'every_minutes', r.every_minutes)
              from public.document_jobs_reconciliation r)
        end
$$;
comment on function document_jobs_internal.outage_details(text) is
    'What an open outage shows beside its explanation on the screen''s overview, for the causes that have more to show: reconciliation_unreadable its e-mails (unreadable_shown), retention_window_closing its window and command (retention_window), reconciliation_stalled the last completed run and finding; null for the others.';
revoke all on function document_jobs_internal.outage_details(text) from public, anon, authenticated, service_role;

create or replace function public.document_jobs_reconciliation_status() returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select jsonb_build_object(
        'last_run_at', r.last_run_at,
        'last_listed', r.last_listed,
        'last_recorded', r.last_recorded,
        'last_late', r.last_late,
        'last_unreadable', r.last_unreadable,
        'last_completed_at', r.last_completed_at,
        'last_finding', r.last_finding,
        'last_finding_at', r.last_finding_at,
        'watermark', r.watermark,
        'running_since', r.run_started_at,
        'continues_after', r.cursor,
        'every_minutes', r.every_minutes,
        'overlap', r.overlap,
        'webhooks_missing_after', r.webhooks_missing_after,
        'max_pages', r.max_pages,
        'retention', r.retention,
        'max_since', r.retention,
        'window', document_jobs_internal.retention_window(),
        'late_after_close', r.late_after_close,
        'unreadable', document_jobs_internal.unreadable_shown(20),
        'unreadable_open', (select count(*) from document_jobs_internal.open_unreadable()),
        'found_by_reconciliation', (select count(*) from public.fax_received_emails e
                                     where e.found_by = 'reconciliation'),
        'now', now())
      from public.document_jobs_reconciliation r
$$;
comment on function public.document_jobs_reconciliation_status() is
    'For the health output (document-jobs-admin health, the screen) and a run by hand: when reconciliation last ran and what it found (listed, recorded, of those recorded late, unreadable), when a run last completed and what cut the last one short (last_finding), its watermark and the retention window (window), a run in progress, its settings (max_since: retention, the bound of a run by hand), the e-mails recorded late after webhooks_missing closed, the unreadable items still open (the newest 20, and how many), how many e-mails reconciliation recorded in all, and the database''s clock (now).';

-- Checks and alerts ---------------------------------------------------------------------------------

create function document_jobs_internal.set_outage_once(p_cause text, p_level bigint, p_summary text,
                                                       p_recovered text, p_evidence jsonb) returns int
language plpgsql
set search_path = ''
as $$
declare
    v_outage document_jobs_internal.outages;
    v_sent int;
begin
    if p_level is null then
        return 0;  -- no evidence either way
    end if;
    select * into strict v_outage from document_jobs_internal.outages o where o.cause = p_cause for update;
    if p_level > 0 and v_outage.active and v_outage.alerted_at >= v_outage.since then
        if p_level <= coalesce(v_outage.alerted_level, 0) then
            return 0;  -- this episode was told, at this level: no hourly reminder
        end if;
        -- The level rose (three quarters of the window, a new unreadable e-mail): tell it now.
        update document_jobs_internal.outages o set alerted_at = null where o.cause = p_cause;
    end if;
    v_sent := document_jobs_internal.set_outage(p_cause, p_level > 0, p_summary, p_recovered, p_evidence);
    if p_level = 0 then
        update document_jobs_internal.outages o set alerted_level = null where o.cause = p_cause;
    elsif v_sent > 0 then
        update document_jobs_internal.outages o set alerted_level = p_level where o.cause = p_cause;
    end if;
    return v_sent;
end;
$$;
comment on function document_jobs_internal.set_outage_once(text, bigint, text, text, jsonb) is
    'set_outage for a cause that alerts once per episode: p_level null is no evidence, 0 clears it (with a recovered alert after a down alert, as set_outage sends), above 0 holds it; a down alert goes out when the episode opens (set_outage''s one-an-hour rule still holds it back after a recent alert of the same cause, until the hour passes) and once more each time the level rises, never as an hourly reminder.';
revoke all on function document_jobs_internal.set_outage_once(text, bigint, text, text, jsonb) from public, anon, authenticated, service_role;

create function document_jobs_internal.check_reconciliation() returns int
language plpgsql
set search_path = ''
as $$
declare
    v_state public.document_jobs_reconciliation;
    v_job record;
    v_error text;
    v_stalled boolean;
    v_window jsonb;
    v_level int;
    v_open record;
    v_sent int := 0;
begin
    select * into v_state from public.document_jobs_reconciliation r;

    -- Stalled: no run listed back to its watermark within three of its intervals, or a run (its
    -- follow-ups included) has been under way for over an hour. A failed run feeds it: its error
    -- is the evidence (no failure alert is sent for a reconcile_emails job).
    select j.status, j.last_error_code, j.last_error_message into v_job
      from public.document_jobs j
     where j.kind = 'reconcile_emails'
     order by j.created_at desc
     limit 1;
    v_error := case when v_job.status is distinct from 'completed' and v_job.last_error_code is not null
                    then format('%s: %s', v_job.last_error_code, v_job.last_error_message)
                    when v_state.last_finding is not null
                    then 'the last run stopped early: ' || v_state.last_finding end;
    v_stalled := coalesce(v_state.last_completed_at < now() - make_interval(mins => 3 * v_state.every_minutes), false)
                 or coalesce(v_state.run_started_at < now() - interval '1 hour', false);
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'reconciliation_stalled',
        case when v_stalled then 1 else 0 end,
        format('no reconciliation run has listed back to its watermark since %s (it runs every %s minutes)%s',
               coalesce(document_jobs_internal.alert_time(v_state.last_completed_at), 'it was set up'),
               v_state.every_minutes,
               case when v_state.run_started_at < now() - interval '1 hour'
                    then format('; a run has been under way since %s',
                                document_jobs_internal.alert_time(v_state.run_started_at))
                    else '' end),
        format('a reconciliation run listed back to its watermark at %s',
               document_jobs_internal.alert_time(v_state.last_completed_at)),
        jsonb_build_object('last_completed_at', v_state.last_completed_at, 'running_since', v_state.run_started_at,
                           'every_minutes', v_state.every_minutes, 'last_finding', v_state.last_finding)
        || case when v_error is not null then jsonb_build_object('last_error', v_error) else '{}'::jsonb end);

    -- The window: the share of Resend's retention the gap since the watermark has used.
    v_window := document_jobs_internal.retention_window();
    v_level := case when v_window is null then 0
                    when (v_window ->> 'share')::numeric >= 0.75 then 2
                    when (v_window ->> 'share')::numeric >= 0.5 then 1
                    else 0 end;
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'retention_window_closing',
        v_level,
        format('reconciliation has listed the e-mails Resend received only up to %s, %s hours ago: more than %s of the %s Resend keeps them. An e-mail received since then that no webhook delivered is unrecoverable from %s; to list them now, run: %s',
               document_jobs_internal.alert_time(v_state.watermark),
               round(extract(epoch from now() - v_state.watermark) / 3600),
               case when v_level = 2 then 'three quarters' else 'half' end, v_state.retention,
               document_jobs_internal.alert_time(v_state.watermark + v_state.retention), v_window ->> 'command'),
        format('reconciliation has listed everything up to %s', document_jobs_internal.alert_time(v_state.watermark)),
        coalesce(v_window, '{}'::jsonb));

    -- Unreadable e-mails: the level is the newest one's id, so each new one is told once.
    select count(*) as n, max(u.id) as newest, string_agg(distinct u.reason, '; ') as reasons into v_open
      from document_jobs_internal.open_unreadable() u;
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'reconciliation_unreadable',
        coalesce(v_open.newest, 0),
        format('Resend listed %s e-mails that reconciliation cannot read (%s): they are not recorded, and they may be faxes. What can be read of them: document-jobs-admin health, or the overview of the admin screen',
               v_open.n, v_open.reasons),
        'every e-mail reconciliation could not read is recorded now, or older than Resend''s retention',
        jsonb_build_object('count', v_open.n, 'emails', document_jobs_internal.unreadable_shown(20)));
    return v_sent;
end;
$$;
comment on function document_jobs_internal.check_reconciliation() is
    'The health check''s watch over reconciliation, each cause alerting once (set_outage_once): reconciliation_stalled (no run completed within three of its intervals, or a run under way for over an hour; the last job''s error or the last finding as evidence; closes when a run completes), retention_window_closing (the watermark older than half of retention, and again at three quarters; closes when a run moves it back under half) and reconciliation_unreadable (listing items that could not be read and are neither recorded nor past retention; each new one alerts). The cron job document-jobs-health calls it.';
revoke all on function document_jobs_internal.check_reconciliation() from public, anon, authenticated, service_role;

-- webhooks_missing opens only for a late e-mail received after it last closed (missing_received_at):
-- a run after a recovery that records e-mails received during the outage (the schedule's, or one
-- by hand) reopens nothing and pages nobody. Otherwise as in 20261203150100.
create or replace function document_jobs_internal.check_webhooks_missing() returns int
language plpgsql
set search_path = ''
as $$
declare
    v_outage document_jobs_internal.outages;
    v_state public.document_jobs_reconciliation;
    v_late record;
    v_delivered timestamptz;
    v_active boolean;
    v_sent int;
begin
    select * into v_outage from document_jobs_internal.outages o where o.cause = 'webhooks_missing';
    select * into v_state from public.document_jobs_reconciliation r;
    -- The newest e-mail reconciliation found whose webhook was that late (evidence for the alert).
    select e.received_at, e.provider_email_id into v_late
      from public.fax_received_emails e
     where e.found_by = 'reconciliation' and e.received_at is not null
       and e.reconciled_at - e.received_at > v_state.webhooks_missing_after
     order by e.received_at desc
     limit 1;
    if v_outage.active then
        -- Closes once a webhook delivers an e-mail received after the outage opened.
        select max(e.received_at) into v_delivered
          from public.fax_received_emails e
         where e.found_by = 'webhook' and e.received_at > v_outage.since;
        v_active := v_delivered is null;
    else
        -- Opens on a late e-mail received after it last closed.
        v_active := coalesce(v_state.missing_received_at > coalesce(v_state.outage_closed_at, '-infinity'), false);
    end if;
    v_sent := document_jobs_internal.set_outage(
        'webhooks_missing',
        v_active,
        format('reconciliation recorded e-mails that Resend received more than %s before and no webhook delivered (the newest received at %s); until webhooks come again, reconciliation alone records new faxes',
               v_state.webhooks_missing_after, document_jobs_internal.alert_time(v_late.received_at)),
        format('a webhook delivered an e-mail received at %s, after the outage began',
               document_jobs_internal.alert_time(v_delivered)),
        jsonb_build_object('newest_missing_received_at', v_late.received_at,
                           'newest_missing_email', v_late.provider_email_id,
                           'found_at', v_state.missing_found_at,
                           'delivered_received_at', v_delivered));
    if v_outage.active and not v_active then
        update public.document_jobs_reconciliation r set outage_closed_at = now(), late_after_close = 0;
    end if;
    return v_sent;
end;
$$;
comment on function document_jobs_internal.check_webhooks_missing() is
    'The health check''s webhooks_missing: opens when reconciliation recorded an e-mail that Resend had received more than webhooks_missing_after before, received after the outage last closed (missing_received_at: one received before belongs to the outage already told, and is only counted, late_after_close); closes once a webhook delivers an e-mail received after the outage opened. Alerts through set_outage like every outage; the cron job document-jobs-health calls it after check_health.';

-- A failed reconcile_emails job is no fax that was not fetched: no failure alert (it had every
-- field empty, and came every ten minutes); check_reconciliation's reconciliation_stalled tells.
drop trigger document_jobs_alert_failed on public.document_jobs;
create trigger document_jobs_alert_failed
    after update on public.document_jobs
    for each row
    when (new.status = 'failed' and old.status <> 'failed' and new.kind <> 'reconcile_emails')
    execute function document_jobs_internal.alert_job_failed();

-- The advice of the three new causes, lib/failures.py OUTAGES' word for word (as 20261203150200
-- copied the others; tests/database/test_advice_is_lib_advice.py holds them to it).
create or replace function document_jobs_internal.outage_advice(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'Check that the cron job document-jobs runs (select * from cron.job_run_details order by start_time desc limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker''s answers (select status_code, count(*) from net._http_response group by 1) and the worker''s logs on Vercel.'
        when 'worker_unauthorized' then
            'Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on Vercel (or that variable is unset: the worker''s log then names it). Store the same value in both (README: Rotating INTERNAL_FUNCTION_SECRET).'
        when 'worker_not_found' then
            'Likely cause: the Vault secret document_jobs_url is wrong (it must be https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in Vault and the deployment on Vercel.'
        when 'webhooks_missing' then
            'Check the webhook in Resend''s dashboard (Webhooks: its URL must be https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and redeploy), and Vercel''s Deployment Protection, which answers 401 before the function runs (docs/DEPLOY.md).'
        when 'reconciliation_stalled' then
            'Run document-jobs-admin health: its reconciliation lines name the last run''s finding or error. A refused key or a wrong URL is an outage of its own (resend_unauthorized, resend_misconfigured); an outage of Resend''s shows on resend-status.com. Meanwhile a fax whose webhook fails is recorded by nothing: if webhooks_missing is open too, run document-jobs-admin reconcile --since with the time of the last complete run.'
        when 'retention_window_closing' then
            'Before the date the alert names, run the command it names (document-jobs-admin reconcile --since ...; health prints it too), then find why the scheduled reconciliation does not keep up (reconciliation_stalled).'
        when 'reconciliation_unreadable' then
            'Look each one up in the Resend dashboard (Emails, Receiving) by what health and the overview show of it (id, time, sender, subject). If it is a fax, save its attachments from there or ask the sender to send it again. Report the listing to the developers: Resend''s list did not have its documented shape.'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the database, or the database refuses its key, stopped_because database_unauthorized: check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content from net._http_response order by created desc limit 5) and the worker''s logs on Vercel.'
        end)
$$;

create or replace function document_jobs_internal.outage_advice_ja(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice_ja from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time desc limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。'
        when 'worker_unauthorized' then
            'Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う（または未設定で、その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください（README: Rotating INTERNAL_FUNCTION_SECRET）。'
        when 'worker_not_found' then
            'Vault のシークレット document_jobs_url が誤っている（https://YOUR-APP.vercel.app/api/internal/document-jobs でなければなりません）か、デプロイがなくなっている可能性が高いです。Vault のURLと Vercel のデプロイを確認してください。'
        when 'webhooks_missing' then
            'Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。'
        when 'reconciliation_stalled' then
            'document-jobs-admin health を実行してください。照合の行に、前回の実行が止まった理由またはエラーが出ます。キーの拒否やURLの誤りはそれぞれ別の障害（resend_unauthorized、resend_misconfigured）として出ます。Resend 側の障害は resend-status.com で確認できます。その間、Webhook が届かなかったファクスを記録するものはありません。webhooks_missing も出ている場合は、最後に完了した実行の時刻を指定して document-jobs-admin reconcile --since を実行してください。'
        when 'retention_window_closing' then
            '通知に書かれた日時より前に、通知に書かれたコマンド（document-jobs-admin reconcile --since ...。health にも表示されます）を実行してください。そのうえで、定期的な照合が追いつかない原因を確認してください（reconciliation_stalled）。'
        when 'reconciliation_unreadable' then
            'health と概要画面に表示される情報（ID、日時、送信者、件名）で、Resend のダッシュボード（Emails → Receiving）から1件ずつ探してください。ファクスであれば、そこから添付ファイルを保存するか、送信者に再送を依頼してください。Resend の一覧が仕様どおりの形ではなかったことを開発者に連絡してください。'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by created desc limit 5) と Vercel のワーカーのログを確認してください。'
        end)
$$;

-- The overview's outages carry what there is to show of them (outage_details: the unreadable
-- e-mails, the window and its command, the stalled run). Otherwise as in 20261203000000.
create or replace function public.document_jobs_admin_overview() returns jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_now_hour timestamptz := date_trunc('hour', now(), 'UTC');
    v_completed bigint;
    v_estimated boolean := true;
    v_failed bigint;
    v_coded bigint;
    v_failed_by_code jsonb;
begin
    perform document_jobs_internal.fill_hourly_outcomes();

    select count(*) into v_failed from public.document_jobs j where j.status = 'failed';
    -- By error code from document_jobs_by_error_code alone (an index-only scan); failed jobs
    -- without a code, if any, are the difference.
    select coalesce(jsonb_agg(jsonb_build_object('error_code', f.code, 'count', f.n) order by f.n desc, f.code), '[]'),
           coalesce(sum(f.n), 0)::bigint
      into v_failed_by_code, v_coded
      from (select j.last_error_code as code, count(*) as n from public.document_jobs j
             where j.last_error_code is not null and j.status = 'failed' group by 1) f;
    if v_failed > v_coded then
        v_failed_by_code := v_failed_by_code
                            || jsonb_build_array(jsonb_build_object('error_code', '(none)', 'count', v_failed - v_coded));
    end if;

    select round(c.reltuples * s.most_common_freqs[array_position(s.most_common_vals::text::text[], 'completed')])::bigint
      into v_completed
      from pg_catalog.pg_class c
      join pg_catalog.pg_stats s on s.schemaname = 'public' and s.tablename = 'document_jobs' and s.attname = 'status'
     where c.oid = 'public.document_jobs'::regclass and c.reltuples >= 0;
    if v_completed is null then
        -- Never analyzed (a new, small table): count, up to a bound.
        select count(*) into v_completed
          from (select 1 from public.document_jobs j where j.status = 'completed' limit 100000) c;
        v_estimated := v_completed >= 100000;
    end if;

    return jsonb_build_object(
        'measured_at', now(),
        'states', jsonb_build_object(
            'queued', (select count(*) from public.document_jobs j where j.status = 'queued'),
            'running', (select count(*) from public.document_jobs j where j.status = 'running'),
            'failed', v_failed,
            'completed', v_completed,
            'completed_estimated', v_estimated),
        'oldest_waiting', (
            select jsonb_build_object('id', c.id, 'kind', c.kind, 'status', c.status, 'run_after', c.run_after,
                                      'created_at', c.created_at,
                                      'waiting_seconds', round(extract(epoch from now() - c.run_after)::numeric, 1))
              from public.document_job_kinds k
             cross join lateral (
                   select w.id, w.kind, w.status, w.run_after, w.created_at from public.document_jobs_claimable w
                    where w.kind = k.kind order by w.run_after, w.created_at limit 1) c
             order by c.run_after limit 1),
        'failures_24h', coalesce((
            select jsonb_agg(jsonb_build_object('error_code', f.error_code, 'failed', f.failed, 'retried', f.retried,
                                                'released', f.released, 'other', f.other)
                   order by f.failed desc, f.retried desc, f.error_code)
              from (select coalesce(a.error_code, '(none)') as error_code,
                           count(*) filter (where a.outcome = 'failed') as failed,
                           count(*) filter (where a.outcome = 'retried') as retried,
                           count(*) filter (where a.outcome = 'released') as released,
                           count(*) filter (where a.outcome in ('lease_expired', 'cancelled')) as other
                      from public.document_job_attempts a
                     where a.outcome <> 'completed' and a.finished_at > now() - interval '24 hours'
                     group by 1) f), '[]'),
        'failed_by_error_code', v_failed_by_code,
        'hours', coalesce((
            select jsonb_agg(jsonb_build_object('hour', h.hour, 'completed', h.completed, 'failed', h.failed,
                                                'retried', h.retried, 'latency_p50_ms', round(h.latency_p50_ms),
                                                'latency_p95_ms', round(h.latency_p95_ms))
                   order by h.hour)
              from (select c.hour, c.completed, c.failed, c.retried, c.latency_p50_ms, c.latency_p95_ms
                      from document_jobs_internal.hourly_outcomes c
                     where c.hour >= v_now_hour - interval '167 hours' and c.hour < v_settled
                    union all
                    select s.hour, coalesce(o.completed, 0), coalesce(o.failed, 0), coalesce(o.retried, 0),
                           o.latency_p50_ms, o.latency_p95_ms
                      from generate_series(v_settled, v_now_hour, interval '1 hour') s(hour)
                      left join document_jobs_internal.outcomes_by_hour(v_settled, now() + interval '1 second') o
                        on o.hour = s.hour) h), '[]'),
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'details', document_jobs_internal.outage_details(o.cause))
                   order by o.since)
              from document_jobs_internal.outages o where o.active), '[]'),
        'kinds', (select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k));
end;
$$;

-- The health check watches reconciliation too.
select cron.schedule('document-jobs-health', '* * * * *',
                     'select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing() + document_jobs_internal.check_reconciliation()');
