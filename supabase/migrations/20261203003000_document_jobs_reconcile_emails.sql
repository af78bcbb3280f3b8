-- Reconciliation with Resend's list of received e-mails: the queue's second job kind.
--
-- Every guarantee used to start at the webhook, so an e-mail whose webhook never came (a wrong
-- RESEND_WEBHOOK_SECRET, Vercel's Deployment Protection) was lost without a trace. Resend keeps
-- the e-mails and lists them (GET /emails/receiving). A reconcile_emails job lists them back to a
-- watermark and records every one the database does not have (once it is older than
-- webhooks_missing_after, 15 minutes: a younger one may still get its webhook) through record_inbound_email, the
-- webhook's own path (one e-mail row, one fetch_email job, the kick), marking the row as found by
-- reconciliation. The provider's e-mail id is the key both ways: a webhook that comes after (or
-- during) a run is answered duplicate and creates nothing, and a run that lists an e-mail a
-- webhook recorded creates nothing either. An e-mail no webhook delivered keeps webhook_id null.
--
-- As a job kind it has the claim, the lease, the fencing and the failure table of every job; a
-- partial unique index on the kind keeps at most one live at a time (its target is no e-mail row,
-- and the index on (kind, fax_received_email_id) does not hold for null).

insert into public.document_job_kinds (kind, description)
values ('reconcile_emails', 'list the e-mails Resend received back to the watermark and record those no webhook delivered');

create unique index document_jobs_one_live_reconciliation
    on public.document_jobs (kind)
 where kind = 'reconcile_emails' and status in ('queued', 'running');

alter table public.fax_received_emails
    add column found_by text not null default 'webhook'
        constraint fax_received_emails_found_by check (found_by in ('webhook', 'reconciliation')),
    add column reconciled_at timestamptz;
comment on column public.fax_received_emails.found_by is
    'Who recorded the e-mail: webhook, or reconciliation (Resend listed it and no webhook had delivered it; webhook_id is then null). It stays so when the webhook comes later: that delivery is answered duplicate.';
comment on column public.fax_received_emails.reconciled_at is
    'When reconciliation recorded the e-mail (found_by reconciliation), else null.';

-- The health check's two questions: the newest e-mail a webhook delivered, and the newest one
-- reconciliation found late (both by Resend's created_at).
create index fax_received_emails_delivered_by_webhook
    on public.fax_received_emails (received_at) where found_by = 'webhook';
create index fax_received_emails_found_by_reconciliation
    on public.fax_received_emails (received_at) where found_by = 'reconciliation';

create table public.document_jobs_reconciliation (
    singleton boolean primary key default true check (singleton),
    every_minutes int not null default 10
        constraint document_jobs_reconciliation_every check (every_minutes between 1 and 60),
    overlap interval not null default interval '1 hour'
        constraint document_jobs_reconciliation_overlap check (overlap between interval '0' and interval '1 day'),
    webhooks_missing_after interval not null default interval '15 minutes'
        constraint document_jobs_reconciliation_missing_after
            check (webhooks_missing_after between interval '1 minute' and interval '1 day'),
    max_pages int not null default 10
        constraint document_jobs_reconciliation_max_pages check (max_pages between 1 and 100),
    max_since interval not null default interval '30 days'
        constraint document_jobs_reconciliation_max_since check (max_since between interval '1 hour' and interval '1 year'),
    watermark timestamptz,
    cursor text,
    run_started_at timestamptz,
    run_listed int not null default 0,
    run_recorded int not null default 0,
    run_late int not null default 0,
    run_newest timestamptz,
    last_run_at timestamptz,
    last_listed int,
    last_recorded int,
    last_late int,
    missing_found_at timestamptz,
    outage_closed_at timestamptz
);
comment on table public.document_jobs_reconciliation is
    'The one row of reconciliation: its settings (every_minutes, the cron job document-jobs-reconcile; overlap; webhooks_missing_after; max_pages per job; max_since, the furthest back a run by hand may go; set_document_jobs_reconciliation) and its state: watermark, the newest created_at of Resend''s that a run listed fully (a run lists back to it less the overlap), the cursor of a run that stopped at max_pages (its follow-up continues after it), the current run''s counts, and the last run''s.';
comment on column public.document_jobs_reconciliation.missing_found_at is
    'When reconciliation last recorded an e-mail whose webhook was more than webhooks_missing_after late: what opens the outage webhooks_missing (unless it closed since).';
comment on column public.document_jobs_reconciliation.outage_closed_at is
    'When the outage webhooks_missing last closed: a finding before it opens nothing again.';
comment on column public.document_jobs_reconciliation.watermark is
    'The newest Resend created_at a finished run had listed everything up to; null before the first run (which lists back to now() less the overlap).';
alter table public.document_jobs_reconciliation enable row level security;
revoke all on table public.document_jobs_reconciliation from anon, authenticated, service_role;
grant select on table public.document_jobs_reconciliation to service_role;
insert into public.document_jobs_reconciliation default values;

insert into document_jobs_internal.outages (cause) values ('webhooks_missing');

-- The CLI's reconcile is audited like the bulk actions.
alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
alter table public.document_jobs_audit add constraint document_jobs_audit_action_check
    check (action in ('retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'reconcile'));

create function document_jobs_internal.record_reconciled(p_emails jsonb) returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_item jsonb;
    v_id text;
    v_row record;
    v_late_one boolean;
    v_missing_after interval;
    v_recorded int := 0;
    v_late int := 0;
    v_young int := 0;
    v_ids jsonb := '[]'::jsonb;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_emails) = 'array', 'p_emails must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_emails) <= 100, 'p_emails holds at most 100 e-mails');
    select r.webhooks_missing_after into v_missing_after from public.document_jobs_reconciliation r;
    for v_item in select e.value from jsonb_array_elements(p_emails) e loop
        v_id := v_item ->> 'id';
        perform document_jobs_internal.require(jsonb_typeof(v_item) = 'object' and nullif(v_id, '') is not null,
                                               'every item of p_emails must be an object with an id');
        -- An e-mail younger than webhooks_missing_after may still get its webhook: left for a
        -- later run (the watermark never passes it). One whose created_at does not parse is old.
        if document_jobs_internal.try_timestamptz(v_item ->> 'created_at') > now() - v_missing_after then
            v_young := v_young + 1;
            continue;
        end if;
        -- The webhook's path: the same row, the same fetch_email job, the same kick. The data
        -- keeps the item, with the webhook's name for the id beside it.
        select * into v_row
          from public.record_inbound_email(v_id, null, v_item || jsonb_build_object('email_id', v_id));
        if not v_row.duplicate then
            update public.fax_received_emails e
               set found_by = 'reconciliation', reconciled_at = now()
             where e.id = v_row.fax_received_email_id
            returning coalesce(e.received_at < now() - v_missing_after, false) into v_late_one;
            v_recorded := v_recorded + 1;
            v_late := v_late + case when v_late_one then 1 else 0 end;
            v_ids := v_ids || to_jsonb(v_id);
        end if;
    end loop;
    if v_late > 0 then
        update public.document_jobs_reconciliation r set missing_found_at = now();
    end if;
    return jsonb_build_object('recorded', v_recorded, 'late', v_late, 'young', v_young, 'recorded_ids', v_ids);
end;
$$;
comment on function document_jobs_internal.record_reconciled(jsonb) is
    'Records the listed e-mails (items of Resend''s GET /emails/receiving, at most 100) that the database does not have and that Resend received more than webhooks_missing_after ago (a younger one may still get its webhook: "young", left for a later run), each through record_inbound_email with a null webhook id, and marks those it created found_by reconciliation. Answers {"recorded", "late" (of those, received more than webhooks_missing_after before, by Resend''s created_at: all whose created_at parses), "young", "recorded_ids"}; an e-mail already recorded (by a webhook, before or during the run) is left as it is.';
revoke all on function document_jobs_internal.record_reconciled(jsonb) from public, anon, authenticated, service_role;

create function public.enqueue_document_jobs_reconciliation() returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id uuid;
begin
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('reconcile_emails', null)
    on conflict (kind) where kind = 'reconcile_emails' and status in ('queued', 'running') do nothing
    returning id into v_id;
    if v_id is not null then
        perform document_jobs_internal.post_worker(1);
    end if;
    return v_id;
end;
$$;
comment on function public.enqueue_document_jobs_reconciliation() is
    'The cron job document-jobs-reconcile''s call: enqueues a reconcile_emails job with a kick, unless one is queued or running (then null: at most one at a time).';
revoke all on function public.enqueue_document_jobs_reconciliation() from public, anon, authenticated;
grant execute on function public.enqueue_document_jobs_reconciliation() to service_role;

create function public.claim_document_job_of_kinds(p_kinds text[], p_lease interval default interval '5 minutes')
returns setof public.document_jobs
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_kind text;
begin
    if p_kinds is null or cardinality(p_kinds) not between 1 and 10 then
        raise exception using errcode = '22023', message = 'p_kinds must name 1 to 10 kinds';
    end if;
    foreach v_kind in array p_kinds loop
        return query select * from public.claim_document_jobs(v_kind, 1, p_lease);
        if found then
            return;
        end if;
    end loop;
end;
$$;
comment on function public.claim_document_job_of_kinds(text[], interval) is
    'One job, of the first of p_kinds that has one claimable (claim_document_jobs(kind, 1, p_lease) for each in turn), in one round trip: the worker''s own claims, reconcile_emails before fetch_email (at most one reconciliation is ever live, so it delays no fetch_email job by more than that one, and no backlog of them starves it).';
revoke all on function public.claim_document_job_of_kinds(text[], interval) from public, anon, authenticated;
grant execute on function public.claim_document_job_of_kinds(text[], interval) to service_role;

create function public.start_reconciliation_v2(p_job_id uuid, p_generation int) returns jsonb
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
        'max_pages', v_state.max_pages);
end;
$$;
comment on function public.start_reconciliation_v2(uuid, int) is
    'What a reconcile_emails job needs before it lists, fenced like every call after a claim: "stop_before" (the watermark less the overlap: the run stops at a page whose every e-mail is older), "cursor" (where a run that stopped at its page bound continues, else null) and "max_pages".';
revoke all on function public.start_reconciliation_v2(uuid, int) from public, anon, authenticated;
grant execute on function public.start_reconciliation_v2(uuid, int) to service_role;

create function public.record_reconciled_emails_v2(p_job_id uuid, p_generation int, p_emails jsonb,
                                                   p_lease interval default null) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
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
    update public.document_jobs_reconciliation r
       set run_recorded = r.run_recorded + (v_answer ->> 'recorded')::int,
           run_late = r.run_late + (v_answer ->> 'late')::int;
    return jsonb_build_object('held', true, 'state', 'running') || v_answer;
end;
$$;
comment on function public.record_reconciled_emails_v2(uuid, int, jsonb, interval) is
    'A page of listed e-mails recorded (document_jobs_internal.record_reconciled), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given; the run''s counts grow with it. Answers {"held", "state"} with "recorded", "late" and "recorded_ids".';
revoke all on function public.record_reconciled_emails_v2(uuid, int, jsonb, interval) from public, anon, authenticated;
grant execute on function public.record_reconciled_emails_v2(uuid, int, jsonb, interval) to service_role;

create function public.finish_reconciliation_v2(p_job_id uuid, p_generation int, p_listed int,
                                                p_newest timestamptz, p_cursor text) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(p_listed is not null and p_listed >= 0, 'p_listed must be 0 or more');
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
               run_newest = greatest(r.run_newest, p_newest);
        return jsonb_build_object('held', true, 'state', 'running', 'continues', true);
    end if;
    update public.document_jobs_reconciliation r
       set watermark = greatest(r.watermark,
                                least(greatest(r.run_newest, p_newest), now() - r.webhooks_missing_after)),
           cursor = null,
           last_run_at = now(),
           last_listed = r.run_listed + p_listed,
           last_recorded = r.run_recorded,
           last_late = r.run_late,
           run_started_at = null, run_listed = 0, run_recorded = 0, run_late = 0, run_newest = null;
    return jsonb_build_object('held', true, 'state', 'running', 'continues', false);
end;
$$;
comment on function public.finish_reconciliation_v2(uuid, int, int, timestamptz, text) is
    'The end of a reconcile_emails job''s listing, fenced, before the job completes: with p_cursor (it stopped at max_pages) the cursor is kept and a follow-up job is enqueued when this one completes; without, the run is over: the watermark becomes the newest created_at the run listed, but no later than webhooks_missing_after ago (the young e-mails it left are listed again) and never earlier than it was and the run''s counts become the last run''s. Answers {"held", "state", "continues"}.';
revoke all on function public.finish_reconciliation_v2(uuid, int, int, timestamptz, text) from public, anon, authenticated;
grant execute on function public.finish_reconciliation_v2(uuid, int, int, timestamptz, text) to service_role;

create function document_jobs_internal.continue_reconciliation() returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if exists (select 1 from public.document_jobs_reconciliation r where r.cursor is not null) then
        perform public.enqueue_document_jobs_reconciliation();
    end if;
    return null;
end;
$$;
comment on function document_jobs_internal.continue_reconciliation() is
    'Trigger: a reconcile_emails job that completes with a cursor kept (it stopped at its page bound) enqueues its follow-up with a kick; the unique index lets it in once this one is no longer live.';
revoke all on function document_jobs_internal.continue_reconciliation() from public, anon, authenticated, service_role;

create trigger document_jobs_continue_reconciliation
    after update on public.document_jobs
    for each row
    when (new.kind = 'reconcile_emails' and new.status = 'completed' and old.status <> 'completed')
    execute function document_jobs_internal.continue_reconciliation();

create function public.unrecorded_provider_emails(p_provider_email_ids text[]) returns text[]
language sql
stable
security definer
set search_path = ''
as $$
    select coalesce(array_agg(i.id order by i.n), '{}')
      from unnest(p_provider_email_ids) with ordinality i(id, n)
     where not exists (select 1 from public.fax_received_emails e
                        where e.provider = 'resend' and e.provider_email_id = i.id)
$$;
comment on function public.unrecorded_provider_emails(text[]) is
    'Of these Resend e-mail ids, those no e-mail row has, in the order given: what a reconciliation would record (the CLI''s dry run).';
revoke all on function public.unrecorded_provider_emails(text[]) from public, anon, authenticated;
grant execute on function public.unrecorded_provider_emails(text[]) to service_role;

create function public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb,
                                                      p_since timestamptz, p_listed int) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_max_since interval;
    v_answer jsonb;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select r.max_since into v_max_since from public.document_jobs_reconciliation r;
    perform document_jobs_internal.require(p_since is not null and p_since >= now() - v_max_since - interval '1 minute',
        format('p_since must be within max_since (%s) of now', v_max_since));
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'reconcile',
            jsonb_build_object('since', p_since, 'listed', p_listed, 'recorded_ids', v_answer -> 'recorded_ids'),
            (v_answer ->> 'recorded')::int);
    return v_answer;
end;
$$;
comment on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int) is
    'The CLI''s reconcile (python -m lib.admin reconcile --since): a batch of listed e-mails recorded as a reconcile_emails job records them (document_jobs_internal.record_reconciled), audited with the operator''s identity (action reconcile; its filter has since, listed and the recorded ids; job_count the e-mails recorded). p_since may go back max_since at most.';
revoke all on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int) from public, anon, authenticated;
grant execute on function public.admin_record_reconciled_emails(uuid, text, jsonb, timestamptz, int) to service_role;

create function public.set_document_jobs_reconciliation(p_every_minutes int default null,
                                                        p_overlap interval default null,
                                                        p_webhooks_missing_after interval default null,
                                                        p_max_pages int default null) returns jsonb
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
           max_pages = coalesce(p_max_pages, r.max_pages)
    returning * into v_state;
    perform cron.schedule('document-jobs-reconcile',
                          document_jobs_internal.reconcile_schedule(v_state.every_minutes),
                          'select public.enqueue_document_jobs_reconciliation()');
    return jsonb_build_object('every_minutes', v_state.every_minutes, 'overlap', v_state.overlap,
                              'webhooks_missing_after', v_state.webhooks_missing_after,
                              'max_pages', v_state.max_pages);
end;
$$;
comment on function public.set_document_jobs_reconciliation(int, interval, interval, int) is
    'Sets reconciliation''s settings (null: unchanged), held to the table''s constraints, and schedules the cron job document-jobs-reconcile every p_every_minutes. Answers the settings.';
revoke all on function public.set_document_jobs_reconciliation(int, interval, interval, int) from public, anon, authenticated;
grant execute on function public.set_document_jobs_reconciliation(int, interval, interval, int) to service_role;

create function document_jobs_internal.reconcile_schedule(p_every_minutes int) returns text
language sql
immutable
set search_path = ''
as $$
    select case when p_every_minutes >= 60 then '0 * * * *'
                when p_every_minutes <= 1 then '* * * * *'
                else format('*/%s * * * *', p_every_minutes) end
$$;
comment on function document_jobs_internal.reconcile_schedule(int) is
    'The cron schedule of document-jobs-reconcile for a period in minutes (1 to 60).';
revoke all on function document_jobs_internal.reconcile_schedule(int) from public, anon, authenticated, service_role;

create function public.document_jobs_reconciliation_status() returns jsonb
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
        'watermark', r.watermark,
        'running_since', r.run_started_at,
        'continues_after', r.cursor,
        'every_minutes', r.every_minutes,
        'overlap', r.overlap,
        'webhooks_missing_after', r.webhooks_missing_after,
        'max_pages', r.max_pages,
        'max_since', r.max_since,
        'found_by_reconciliation', (select count(*) from public.fax_received_emails e
                                     where e.found_by = 'reconciliation'))
      from public.document_jobs_reconciliation r
$$;
comment on function public.document_jobs_reconciliation_status() is
    'For the health output (lib.admin health, the screen): when reconciliation last ran and what it found (listed, recorded, of those recorded late), its watermark, a run in progress, its settings, and how many e-mails reconciliation recorded in all.';
revoke all on function public.document_jobs_reconciliation_status() from public, anon, authenticated;
grant execute on function public.document_jobs_reconciliation_status() to service_role;

create function document_jobs_internal.check_webhooks_missing() returns int
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
        -- Opens on a finding since it last closed.
        v_active := v_state.missing_found_at > coalesce(v_state.outage_closed_at, '-infinity');
    end if;
    v_sent := document_jobs_internal.set_outage(
        'webhooks_missing',
        v_active,
        format('reconciliation recorded e-mails that Resend received more than %s before and no webhook delivered (the newest received at %s)',
               v_state.webhooks_missing_after, to_char(v_late.received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
        format('a webhook delivered an e-mail received at %s, after the outage began',
               to_char(v_delivered at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
        jsonb_build_object('newest_missing_received_at', v_late.received_at,
                           'newest_missing_email', v_late.provider_email_id,
                           'found_at', v_state.missing_found_at,
                           'delivered_received_at', v_delivered));
    if v_outage.active and not v_active then
        update public.document_jobs_reconciliation r set outage_closed_at = now();
    end if;
    return v_sent;
end;
$$;
comment on function document_jobs_internal.check_webhooks_missing() is
    'The health check''s webhooks_missing: opens when reconciliation recorded an e-mail Resend had received more than webhooks_missing_after before (missing_found_at) since the outage last closed; closes once a webhook delivers an e-mail received after the outage opened. Alerts through set_outage like every outage; the cron job document-jobs-health calls it after check_health.';
revoke all on function document_jobs_internal.check_webhooks_missing() from public, anon, authenticated, service_role;

create or replace function document_jobs_internal.outage_advice(p_cause text) returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'No worker is taking the waiting jobs. Check that the cron job document-jobs runs '
            '(select * from cron.job_run_details order by start_time desc limit 5), that Vault holds '
            'document_jobs_url and internal_function_secret, the worker''s answers '
            '(select status_code, count(*) from net._http_response group by 1) and its logs on Vercel.'
        when 'worker_unauthorized' then
            'Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET '
            'on Vercel (or that variable is unset: the worker''s log then names it). Store the same value '
            'in both (README: Rotating INTERNAL_FUNCTION_SECRET).'
        when 'worker_not_found' then
            'Likely cause: the Vault secret document_jobs_url is wrong (it must be '
            'https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL '
            'in Vault and the deployment on Vercel.'
        when 'webhooks_missing' then
            'Resend received e-mails whose webhook never reached us; reconciliation recorded them (nothing is '
            'lost), but every new fax now waits for the next run. Check the webhook in Resend''s dashboard '
            '(Webhooks: its URL must be https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries '
            'answered 200; a 401 invalid_signature means its signing secret differs from '
            'RESEND_WEBHOOK_SECRET on Vercel: set the same value and redeploy), and Vercel''s Deployment '
            'Protection, which answers 401 before the function runs (docs/DEPLOY.md).'
        else
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot '
            'reach the database, or the database refuses its key, stopped_because database_unauthorized: '
            'check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check '
            '(select status_code, content from net._http_response order by created desc limit 5) and the '
            'worker''s logs on Vercel.'
        end)
$$;

select cron.schedule('document-jobs-reconcile', '*/10 * * * *', 'select public.enqueue_document_jobs_reconciliation()');
-- The health check also asks whether webhooks went missing (its statements are this file's last lines).
select cron.schedule('document-jobs-health', '* * * * *', 'select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing()');
