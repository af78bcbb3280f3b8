-- Preparing each fax for the screen: the queue's third kind, prepare_fax.
--
-- A stored fax was a file to download: a TIFF (what most fax-to-mail services send) shows in no
-- browser, and nothing said how many pages a fax had. A prepare_fax job, one per e-mail, reads
-- each stored original (never changing it), counts its pages, converts a TIFF once into a PDF a
-- browser's PDF viewer draws, and renders a thumbnail of page 1. What it derives lives under a
-- prefix of its own in the same bucket, fax_views/{e-mail row}/{attachment row}/, never at an
-- original's key (fax_received_emails/...), and what it found is a row of fax_attachment_views:
-- a table of its own that stays changeable, since the e-mail's and its attachments' rows are the
-- received record.
--
-- The job is enqueued in the database when the e-mail's fetch_email job completes (a trigger, as
-- a reconciliation's follow-up is), without a kick: the completing invocation claims it in its
-- chain (claim_order 3, after every fetch), or its follow-up or the cron does. A file the job
-- cannot prepare (damaged, encrypted, without pages, a page over the pixel cap) fails the job
-- for good with its own code; the fax stays listed and its original downloadable. The failure
-- alert ("Fax not fetched") is fetch_email's only: a fax that cannot be shown is not lost.

insert into public.document_job_kinds (kind, description, claim_order)
values ('prepare_fax', 'count a stored fax''s pages, convert a TIFF into a viewing PDF and render a thumbnail of page 1, under fax_views/', 3);

create table public.fax_attachment_views (
    attachment_id uuid primary key references public.fax_received_email_attachments (id) on delete cascade,
    source_sha256 text not null constraint fax_attachment_views_source_sha256 check (source_sha256 ~ '^[0-9a-f]{64}$'),
    page_count int constraint fax_attachment_views_page_count check (page_count > 0),
    view_path text constraint fax_attachment_views_view_path check (view_path like 'fax\_views/%'),
    thumbnail_path text constraint fax_attachment_views_thumbnail_path check (thumbnail_path like 'fax\_views/%'),
    error_code text constraint fax_attachment_views_error_code check (error_code <> ''),
    error_message text constraint fax_attachment_views_error_message check (length(error_message) <= 1000),
    prepared_at timestamptz not null default now(),
    constraint fax_attachment_views_nothing_derived_on_error
        check (error_code is null or (view_path is null and thumbnail_path is null))
);
comment on table public.fax_attachment_views is
    'What a prepare_fax job derived from a stored attachment, one row per attachment (its latest preparation): the page count, the viewing PDF and the thumbnail (keys in the attachment''s bucket, always under fax_views/, never an original''s), or why it could not be prepared. Written only through record_fax_attachment_view_v2; a table of its own, so that the received record''s rows never change for it.';
comment on column public.fax_attachment_views.source_sha256 is
    'The SHA-256 of the original the row was derived from, checked against the attachment''s own while it was read: a row whose digest is not the attachment''s is not its view.';
comment on column public.fax_attachment_views.page_count is
    'Pages of a PDF or a TIFF, 1 for a JPEG or PNG; null for any other type (listed, not paged) and when it could not be prepared.';
comment on column public.fax_attachment_views.view_path is
    'The viewing PDF (a TIFF''s pages, or an image whose two resolutions differ, drawn at their true shape); null when the original is viewed as it is (a PDF, a JPEG or PNG), or there is nothing to view.';
comment on column public.fax_attachment_views.thumbnail_path is
    'A WebP of page 1 fitted into 240 x 340 pixels (a phone''s list at twice its density); null when there are no pages.';
comment on column public.fax_attachment_views.error_code is
    'Why the attachment could not be prepared (lib/failures.py: fax_file_damaged, fax_file_encrypted, fax_file_empty, fax_page_too_large), else null. The original is untouched and downloadable either way.';
alter table public.fax_attachment_views enable row level security;
revoke all on table public.fax_attachment_views from anon, authenticated, service_role;
grant select on table public.fax_attachment_views to service_role;

-- A fetch_email job that completes, for an e-mail with stored attachments, enqueues its
-- prepare_fax job; the unique index on live jobs keeps one per e-mail. No kick: see above.
create function document_jobs_internal.enqueue_prepare_fax() returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if exists (select 1 from public.fax_received_email_attachments a
                where a.fax_received_email_id = new.fax_received_email_id) then
        insert into public.document_jobs (kind, fax_received_email_id)
        values ('prepare_fax', new.fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing;
    end if;
    return null;
end;
$$;
comment on function document_jobs_internal.enqueue_prepare_fax() is
    'Trigger document_jobs_prepare_fax: a fetch_email job that completes for an e-mail with stored attachments enqueues the e-mail''s prepare_fax job (none when one is live), without a kick: the invocation that completed the fetch claims it in its chain, or its follow-up or the cron does.';
revoke all on function document_jobs_internal.enqueue_prepare_fax() from public, anon, authenticated, service_role;

create trigger document_jobs_prepare_fax
    after update on public.document_jobs
    for each row
    when (new.kind = 'fetch_email' and new.status = 'completed' and old.status <> 'completed')
    execute function document_jobs_internal.enqueue_prepare_fax();

-- The failure alert says "Fax not fetched": fetch_email's alone. A prepare_fax failure loses
-- nothing (the original is stored and downloadable); the screen lists it with its advice.
drop trigger document_jobs_alert_failed on public.document_jobs;
create trigger document_jobs_alert_failed
    after update on public.document_jobs
    for each row
    when (new.kind = 'fetch_email' and new.status = 'failed' and old.status <> 'failed')
    execute function document_jobs_internal.alert_job_failed();
comment on function document_jobs_internal.alert_job_failed() is
    'Trigger document_jobs_alert_failed: when a fetch_email job becomes failed (the only kind whose failure can lose a fax), whatever made it so (a failure, the expired-lease sweep, a cancel, an UPDATE by hand), its failure alert is posted; jobs cancelled by a bulk action (document_jobs.bulk_action on for that transaction) are not, that being one decision of one operator, in the audit once. Security definer: it reads Vault, and the UPDATE may come from service_role, which may not. A failure of the alert itself is a WARNING and never undoes the job''s state change: a queue that cannot fail a job because it cannot alert would stop claiming altogether.';

create function public.start_prepare_fax_v2(p_job_id uuid, p_generation int) returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', (select jsonb_build_object('id', e.id) from public.fax_received_emails e where e.id = v_email_id),
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'content_type', a.content_type, 'bucket', a.bucket,
                       'storage_path', a.storage_path, 'size_bytes', a.size_bytes, 'sha256', a.sha256,
                       'prepared', v.attachment_id is not null)
                   order by a.created_at, a.id)
              from public.fax_received_email_attachments a
              left join public.fax_attachment_views v
                on v.attachment_id = a.id and v.source_sha256 = a.sha256 and v.error_code is null
             where a.fax_received_email_id = v_email_id), '[]'::jsonb));
end;
$$;
comment on function public.start_prepare_fax_v2(uuid, int) is
    'What a prepare_fax job needs, fenced like every call after a claim: its e-mail ("email", null when the row is gone) and the e-mail''s stored attachments ("attachments": id, content_type, bucket, storage_path, size_bytes, sha256, and "prepared" when a view of those very bytes was recorded without an error: a job run again skips it). {"held": false, "state": null} once (p_job_id, p_generation) no longer holds the job.';
revoke all on function public.start_prepare_fax_v2(uuid, int) from public, anon, authenticated;
grant execute on function public.start_prepare_fax_v2(uuid, int) to service_role;

create function public.record_fax_attachment_view_v2(
    p_job_id uuid,
    p_generation int,
    p_attachment_id uuid,
    p_source_sha256 text,
    p_page_count int,
    p_view_path text,
    p_thumbnail_path text,
    p_error_code text,
    p_error_message text,
    p_lease interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
    v_sha256 text;
    v_prefix text;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    -- Preparing an attachment is progress: it ends a streak of time-budget releases, as storing one does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until),
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax'
    returning j.fax_received_email_id into v_email_id;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select a.sha256 into v_sha256
      from public.fax_received_email_attachments a
     where a.id = p_attachment_id and a.fax_received_email_id = v_email_id;
    perform document_jobs_internal.require(v_sha256 is not null,
        format('attachment %s is not one of the job''s e-mail', p_attachment_id));
    perform document_jobs_internal.require(p_source_sha256 = v_sha256,
        'p_source_sha256 must be the attachment''s sha256: a view is derived from the recorded bytes');
    -- Derived files live under the attachment's own prefix, never at an original's key.
    v_prefix := format('fax_views/%s/%s/', v_email_id, p_attachment_id);
    perform document_jobs_internal.require(
        coalesce(starts_with(p_view_path, v_prefix), true) and coalesce(starts_with(p_thumbnail_path, v_prefix), true)
        and coalesce(p_view_path, '') !~ '(^|/)\.\.?(/|$)' and coalesce(p_thumbnail_path, '') !~ '(^|/)\.\.?(/|$)',
        format('derived files must be under %s', v_prefix));
    perform document_jobs_internal.require(p_page_count is null or p_page_count > 0, 'p_page_count must be positive');
    perform document_jobs_internal.require(
        nullif(p_error_code, '') is null or (p_view_path is null and p_thumbnail_path is null),
        'an attachment that could not be prepared has no derived files');
    insert into public.fax_attachment_views as v
           (attachment_id, source_sha256, page_count, view_path, thumbnail_path, error_code, error_message, prepared_at)
    values (p_attachment_id, p_source_sha256, p_page_count, p_view_path, p_thumbnail_path, nullif(p_error_code, ''),
            left(p_error_message, 1000), now())
    on conflict (attachment_id) do update
       set source_sha256 = excluded.source_sha256,
           page_count = excluded.page_count,
           view_path = excluded.view_path,
           thumbnail_path = excluded.thumbnail_path,
           error_code = excluded.error_code,
           error_message = excluded.error_message,
           prepared_at = excluded.prepared_at;
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
comment on function public.record_fax_attachment_view_v2(uuid, int, uuid, text, int, text, text, text, text, interval) is
    'Records what the prepare_fax job derived from one attachment of its e-mail (its page count, viewing PDF and thumbnail keys, or the error code of a file it could not prepare), replacing an earlier preparation, fenced by (p_job_id, p_generation). The attachment must be the job''s e-mail''s and p_source_sha256 its recorded digest; the keys must lie under fax_views/{e-mail}/{attachment}/ (never an original''s). With p_lease (the worker always passes it) the lease is renewed in the same statement, and a streak of time-budget releases ends. Answers {"held", "state"}.';
revoke all on function public.record_fax_attachment_view_v2(uuid, int, uuid, text, int, text, text, text, text, interval)
    from public, anon, authenticated;
grant execute on function public.record_fax_attachment_view_v2(uuid, int, uuid, text, int, text, text, text, text, interval)
    to service_role;

-- The faxes stored before this migration have no view: document-jobs-admin prepare enqueues
-- their jobs, a batch of e-mails at a time, audited.
alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
alter table public.document_jobs_audit add constraint document_jobs_audit_action_check
    check (action in ('retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'reconcile', 'prepare'));

create function document_jobs_internal.unprepared(p_email_id uuid) returns boolean
language sql
stable
set search_path = ''
as $$
    select exists (select 1
                     from public.fax_received_email_attachments a
                    where a.fax_received_email_id = p_email_id
                      and not exists (select 1 from public.fax_attachment_views v
                                       where v.attachment_id = a.id and v.source_sha256 = a.sha256))
$$;
comment on function document_jobs_internal.unprepared(uuid) is
    'Whether the e-mail has a stored attachment no prepare_fax job has looked at (no view of its bytes, prepared or failed): what the backfill enqueues a job for, so that a run again enqueues nothing twice and a file that could not be prepared is not tried again and again.';
revoke all on function document_jobs_internal.unprepared(uuid) from public, anon, authenticated, service_role;

create function public.count_unprepared_faxes() returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select jsonb_build_object(
        'faxes', (select count(*) from public.fax_received_emails),
        'unprepared', (select count(*) from public.fax_received_emails e where document_jobs_internal.unprepared(e.id)),
        'live_jobs', (select count(*) from public.document_jobs j
                       where j.kind = 'prepare_fax' and j.status in ('queued', 'running')))
$$;
comment on function public.count_unprepared_faxes() is
    'The backfill''s count (document-jobs-admin prepare): e-mails in all ("faxes"), those with a stored attachment no prepare_fax job has looked at ("unprepared"), and prepare_fax jobs queued or running ("live_jobs").';
revoke all on function public.count_unprepared_faxes() from public, anon, authenticated;
grant execute on function public.count_unprepared_faxes() to service_role;

create function public.admin_enqueue_prepare_fax_jobs(p_actor_id uuid, p_actor_email text, p_after uuid,
                                                      p_limit int) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_ids uuid[];
    v_enqueued int := 0;
    v_id uuid;
    v_started int := 0;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    perform document_jobs_internal.require(p_limit between 1 and 1000, 'p_limit must be between 1 and 1000');
    select coalesce(array_agg(e.id order by e.id), '{}') into v_ids
      from (select e.id from public.fax_received_emails e
             where p_after is null or e.id > p_after
             order by e.id
             limit p_limit) e;
    foreach v_id in array v_ids loop
        if document_jobs_internal.unprepared(v_id) then
            insert into public.document_jobs (kind, fax_received_email_id)
            values ('prepare_fax', v_id)
            on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing;
            v_enqueued := v_enqueued + case when found then 1 else 0 end;
        end if;
    end loop;
    if v_enqueued > 0 then
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
        values (p_actor_id, p_actor_email, 'prepare',
                jsonb_build_object('after', p_after, 'through', v_ids[cardinality(v_ids)], 'scanned', cardinality(v_ids)),
                v_enqueued);
        v_started := document_jobs_internal.start_workers(null);
    end if;
    return jsonb_build_object('scanned', cardinality(v_ids), 'enqueued', v_enqueued,
                              'last_id', v_ids[cardinality(v_ids)], 'follow_ups', v_started);
end;
$$;
comment on function public.admin_enqueue_prepare_fax_jobs(uuid, text, uuid, int) is
    'The backfill (document-jobs-admin prepare): of the next p_limit e-mails after p_after (by id; null: from the first), enqueues a prepare_fax job for each with a stored attachment no job has looked at and no live prepare_fax job, audited with the operator''s identity (action prepare; its filter has after, through and scanned; job_count the jobs enqueued), and starts workers for them within the cap. Answers {"scanned", "enqueued", "last_id" (the cursor of the next call; null when none was left), "follow_ups"}. Run again, it enqueues nothing twice.';
revoke all on function public.admin_enqueue_prepare_fax_jobs(uuid, text, uuid, int) from public, anon, authenticated;
grant execute on function public.admin_enqueue_prepare_fax_jobs(uuid, text, uuid, int) to service_role;
