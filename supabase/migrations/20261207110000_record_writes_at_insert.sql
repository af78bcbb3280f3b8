-- The rows that record a received fax (fax_received_emails, fax_received_email_attachments) are
-- written once, by an INSERT, and never updated: the next migration makes the database refuse any
-- UPDATE of them. The product's own writes are made to fit first.
--
-- 1. How an e-mail was found is known when it is recorded: reconciliation recorded it through
--    record_inbound_email and then updated found_by and reconciled_at. Both are now written by the
--    insert, through one internal function the webhook's call and reconciliation share.
-- 2. record_document_attachment_v2 upserted: a second record of the same attachment overwrote
--    sha256, size_bytes and the key with no trace of the old values. Now a second record with the
--    same values changes nothing and answers as before (held), so a worker of the previous deploy
--    that records an attachment again, after a crash between its upload and its record, keeps
--    working during an upgrade; one with other values is refused, naming both, and the row stays as
--    first recorded.

create function document_jobs_internal.record_email(p_provider_email_id text, p_webhook_id text, p_data jsonb,
                                                    p_found_by text)
returns table (fax_received_email_id uuid, job_id uuid, duplicate boolean)
language plpgsql
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require(
        nullif(p_provider_email_id, '') is not null, 'p_provider_email_id must not be empty');
    perform document_jobs_internal.require(jsonb_typeof(p_data) = 'object', 'p_data must be a JSON object');
    perform document_jobs_internal.require(p_found_by in ('webhook', 'reconciliation'),
                                           'p_found_by must be webhook or reconciliation');

    insert into public.fax_received_emails as e
           (provider, provider_email_id, webhook_id, from_address, to_addresses, cc_addresses,
            subject, message_id, received_at, data, found_by, reconciled_at)
    values ('resend', p_provider_email_id, p_webhook_id, p_data ->> 'from',
            document_jobs_internal.text_array(p_data -> 'to'), document_jobs_internal.text_array(p_data -> 'cc'),
            p_data ->> 'subject', p_data ->> 'message_id',
            document_jobs_internal.try_timestamptz(p_data ->> 'created_at'), p_data,
            p_found_by, case when p_found_by = 'reconciliation' then now() end)
    on conflict (provider, provider_email_id) do nothing
    returning e.id into v_email_id;

    if v_email_id is null then
        -- Recorded before (a redelivery, or found both ways): report what exists, create nothing.
        return query
        select e.id,
               (select j.id from public.document_jobs j
                 where j.fax_received_email_id = e.id and j.kind = 'fetch_email'
                 order by j.created_at desc limit 1),
               true
          from public.fax_received_emails e
         where e.provider = 'resend' and e.provider_email_id = p_provider_email_id;
        return;
    end if;

    return query
    select v_email_id, q.job_id, false
      from public.enqueue_document_job('fetch_email', v_email_id, p_kick => true) q;
end;
$$;

revoke all on function document_jobs_internal.record_email(text, text, jsonb, text) from public;

comment on function document_jobs_internal.record_email(text, text, jsonb, text) is
    'Records an inbound e-mail and enqueues its fetch_email job with a kick, atomically: the webhook''s record_inbound_email (found_by webhook) and reconciliation''s record_reconciled (found_by reconciliation, reconciled_at now) both call it, so that everything the row says is written by its one INSERT (the row is never updated). Keeps the data verbatim and never fails on a field it merely copies (a date that does not parse is stored as null). An e-mail recorded before answers duplicate = true with the existing rows and creates nothing.';

create or replace function public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb)
returns table (fax_received_email_id uuid, job_id uuid, duplicate boolean)
language plpgsql
security definer
set search_path = ''
as $$
begin
    return query
    select r.fax_received_email_id, r.job_id, r.duplicate
      from document_jobs_internal.record_email(p_provider_email_id, p_webhook_id, p_data, 'webhook') r;
end;
$$;

comment on function public.record_inbound_email(text, text, jsonb) is
    'What the webhook calls: records the e-mail (found_by webhook) and enqueues its fetch_email job with a kick, atomically, in one round trip (document_jobs_internal.record_email). Keeps the data verbatim and never fails on a field it merely copies (a date that does not parse is stored as null): an e-mail must not be lost over metadata. A redelivered webhook answers duplicate = true with the existing rows and creates nothing.';

create or replace function document_jobs_internal.record_reconciled(p_emails jsonb)
returns jsonb
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
          from document_jobs_internal.record_email(v_id, null, v_item || jsonb_build_object('email_id', v_id),
                                                   'reconciliation');
        if not v_row.duplicate then
            select e.received_at, coalesce(e.received_at < now() - v_missing_after, false)
              into v_received, v_late_one
              from public.fax_received_emails e
             where e.id = v_row.fax_received_email_id;
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
    'Records the listed e-mails (items of Resend''s GET /emails/receiving, at most 100) that the database does not have and that Resend received more than webhooks_missing_after ago (a younger one may still get its webhook: "young", left for a later run), each through record_email with a null webhook id and found_by reconciliation, written by the insert. Answers {"recorded", "late" (of those, received more than webhooks_missing_after before, by Resend''s created_at), "late_after_close" (of the late, those received before webhooks_missing last closed: counted, they reopen nothing), "young", "recorded_ids"}; an e-mail already recorded (by a webhook, before or during the run) is left as it is.';

create or replace function public.record_document_attachment_v2(
    p_job_id uuid, p_generation int, p_provider_attachment_id text, p_filename text, p_content_type text,
    p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
    v_recorded public.fax_received_email_attachments;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
           for share;
    else
        if p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
            raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
        end if;
        -- Storing an attachment ends a streak of time-budget releases (release_document_job_v2).
        update public.document_jobs j
           set lease_until = now() + p_lease,
               budget_releases = 0
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
        returning j.fax_received_email_id into v_email_id;
    end if;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    insert into public.fax_received_email_attachments as a
           (fax_received_email_id, provider_attachment_id, filename, content_type, size_bytes, sha256, bucket,
            storage_path)
    values (v_email_id, p_provider_attachment_id, p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket,
            p_storage_path)
    on conflict (fax_received_email_id, provider_attachment_id) do nothing;
    if not found then
        -- Recorded before: the same values again change nothing (a retry after a crash between the
        -- upload and this call); other values are refused, and the first record stands.
        select * into strict v_recorded
          from public.fax_received_email_attachments a
         where a.fax_received_email_id = v_email_id and a.provider_attachment_id = p_provider_attachment_id;
        if (v_recorded.filename, v_recorded.content_type, v_recorded.size_bytes, v_recorded.sha256,
            v_recorded.bucket, v_recorded.storage_path)
           is distinct from (p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path) then
            raise exception using errcode = 'unique_violation',
                message = format('attachment %s of e-mail %s is recorded already, with other values: a recorded '
                                 'attachment never changes', p_provider_attachment_id, v_email_id),
                detail = format('recorded: %s bytes, SHA-256 %s, %s/%s, %s, %s; offered: %s bytes, SHA-256 %s, '
                                '%s/%s, %s, %s',
                                v_recorded.size_bytes, v_recorded.sha256, v_recorded.bucket, v_recorded.storage_path,
                                coalesce(v_recorded.content_type, 'no type'), coalesce(v_recorded.filename, 'no name'),
                                p_size_bytes, p_sha256, p_bucket, p_storage_path, coalesce(p_content_type, 'no type'),
                                coalesce(p_filename, 'no name'));
        end if;
    end if;
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;

comment on function public.record_document_attachment_v2(uuid, int, text, text, text, bigint, text, text, text, interval) is
    'Records a stored attachment of the job''s e-mail, fenced by (p_job_id, p_generation): a stale worker''s row is refused. The row is written once and never changed: recording it again with the same values changes nothing and answers held (a retry after a crash between the upload and the record, or a worker of the previous deploy), and with any other value (size, SHA-256, key, type, name) is refused (unique_violation, naming both), the first record standing. With p_lease (the worker always passes it) the same statement renews the lease for the next attachment and ends a streak of time-budget releases, storing an attachment being progress. Answers {"held", "state"}.';
