-- Originals that are never replaced (issue 42, item 2), and the e-mail itself kept beside them.
--
-- The worker uploaded each original with x-upsert: true, so a later upload to its key replaced
-- its bytes: a stale worker (its lease lost while it was frozen, its download cut short) once
-- overwrote a recorded 908-byte original with 300 bytes, and the row still named the old SHA-256.
-- Now the worker uploads without upsert (Storage refuses an existing key: 409 Duplicate), and:
--
-- - an object already at the key whose SHA-256 is the download's counts as stored (a worker that
--   died between its upload and its record), and is recorded as it is;
-- - one that differs is kept: the new bytes go beside it under the next key
--   (fax_received_emails/{e-mail}/{id}.v{n}.{ext}) and both are recorded, each a version of the
--   attachment (a row of its own: the unique key is now e-mail, attachment and version), and the
--   database posts an alert, original_differs, once for the new versions of one attachment;
-- - a recorded row is never updated: recording the same values again is a no-op, other values
--   for a recorded version are refused;
-- - whether an object the worker found wrong right after uploading it may be deleted (a body that
--   went on past its listed size after Storage took the listed bytes) is decided here, under the
--   job's fence: only by the job's holder, only under its e-mail's originals' prefix, and only for
--   an object no row records. The decision is itself a record (discarded_objects), and a key once
--   given up is never recorded afterwards, by any worker: a delete that reaches Storage late (its
--   worker frozen after the decision) can only ever remove an object no row names.
--
-- The raw message: Resend's retrieve-received-email answer carries `raw`, a signed URL of the
-- original .eml (or null). The same job stores it at fax_received_emails/{e-mail}/raw/message.eml
-- with its own SHA-256 (the evidence of when and from whom the fax came), versioned like an
-- attachment, or notes why there is none (raw null, too large, refused for good).
--
-- Derived files (the prepare_fax job's viewing PDF and thumbnail) were already under their own
-- prefix, fax_views/ (20261204200100_prepare_fax.sql): record_fax_attachment_view_v2 refuses any
-- other key, and the discard below refuses any key outside an e-mail's originals.

-- --- Versions of an attachment -------------------------------------------------------------------

alter table public.fax_received_email_attachments
    add column version int not null default 1
        constraint fax_received_email_attachments_version check (version >= 1);
comment on column public.fax_received_email_attachments.version is
    'Which version of the provider''s attachment the row records: 1 for the object at the attachment''s key, n for the one beside it at {key}.v{n}.{ext}. A second version exists only when an object already at a key held other bytes than the download (the alert original_differs says so); a key given up as wrong (document_jobs_internal.discarded_objects) leaves its number unused.';
alter table public.fax_received_email_attachments
    drop constraint fax_received_email_attachment_fax_received_email_id_provide_key;
alter table public.fax_received_email_attachments
    add constraint fax_received_email_attachments_one_row_per_version
        unique (fax_received_email_id, provider_attachment_id, version);
-- One object, one record: no two rows name the same object.
create unique index fax_received_email_attachments_one_row_per_object
    on public.fax_received_email_attachments (bucket, storage_path);
comment on table public.fax_received_email_attachments is
    'One row per stored original (the private bucket fax-attachments), written by the worker through record_document_attachment_v3 (or _v2, a previous deploy''s worker), never updated: recording the same values again changes nothing, and other values for a recorded version are refused. Unique per e-mail, provider attachment id and version, and per object (bucket and key).';

-- --- The raw message -------------------------------------------------------------------------------

create table public.fax_received_email_raw_messages (
    id uuid primary key default gen_random_uuid(),
    fax_received_email_id uuid not null references public.fax_received_emails (id) on delete cascade,
    version int not null default 1 constraint fax_received_email_raw_messages_version check (version >= 1),
    bucket text,
    storage_path text,
    size_bytes bigint constraint fax_received_email_raw_messages_size_bytes check (size_bytes >= 0),
    sha256 text constraint fax_received_email_raw_messages_sha256 check (sha256 ~ '^[0-9a-f]{64}$'),
    unavailable text constraint fax_received_email_raw_messages_unavailable check (unavailable ~ '^[a-z0-9_]{1,64}$'),
    created_at timestamptz not null default now(),
    constraint fax_received_email_raw_messages_one_row_per_version unique (fax_received_email_id, version),
    constraint fax_received_email_raw_messages_stored_or_why_not check (
        (unavailable is null and bucket is not null and storage_path is not null and size_bytes is not null
         and sha256 is not null)
        or (unavailable is not null and version = 1 and bucket is null and storage_path is null
            and size_bytes is null and sha256 is null))
);
create unique index fax_received_email_raw_messages_one_row_per_object
    on public.fax_received_email_raw_messages (bucket, storage_path);
comment on table public.fax_received_email_raw_messages is
    'The e-mail itself, as Resend received it (the .eml behind the retrieve-received-email answer''s raw URL): one row per stored version, or one row saying why there is none (unavailable). Written by the fetch_email job through record_raw_message_v2, never updated. An e-mail fetched before this table, or older than Resend''s retention, has no row and cannot get one.';
comment on column public.fax_received_email_raw_messages.unavailable is
    'Why no raw message is stored: raw_null (Resend''s answer had none), or the failure code that refused it for good (attachment_too_large, storage_too_large, ...). Null for a stored version.';
alter table public.fax_received_email_raw_messages enable row level security;
revoke all on table public.fax_received_email_raw_messages from anon, authenticated, service_role;
grant select on table public.fax_received_email_raw_messages to service_role;

-- --- Objects given up as wrong ---------------------------------------------------------------------

create table document_jobs_internal.discarded_objects (
    bucket text not null,
    storage_path text not null,
    fax_received_email_id uuid not null,
    job_id uuid not null,
    generation int not null,
    size_bytes bigint,
    sha256 text constraint discarded_objects_sha256 check (sha256 ~ '^[0-9a-f]{64}$'),
    reason text not null constraint discarded_objects_reason check (length(reason) between 1 and 500),
    discarded_at timestamptz not null default now(),
    primary key (bucket, storage_path)
);
comment on table document_jobs_internal.discarded_objects is
    'Every object a fetch_email job was allowed to delete as wrong right after uploading it (discard_unrecorded_object_v2): which, by which job and generation, what it had sent (size_bytes and sha256 of the bytes Storage may hold) and why. Only an object no row recorded is ever listed, and a listed key is never recorded afterwards (record_document_attachment_v3 and record_raw_message_v2 refuse it): the delete that follows may reach Storage late, and it still removes nothing a row names. Kept (nothing deletes from it): it says what the product deleted, and that it was never a record.';
alter table document_jobs_internal.discarded_objects enable row level security;
revoke all on table document_jobs_internal.discarded_objects from public, anon, authenticated, service_role;

create function document_jobs_internal.object_recorded(p_bucket text, p_storage_path text) returns boolean
language sql
stable
set search_path = ''
as $$
    select exists (select 1 from public.fax_received_email_attachments a
                    where a.bucket = p_bucket and a.storage_path = p_storage_path)
        or exists (select 1 from public.fax_received_email_raw_messages r
                    where r.bucket = p_bucket and r.storage_path = p_storage_path)
$$;
comment on function document_jobs_internal.object_recorded(text, text) is
    'Whether a row of the received record (an attachment''s version, a raw message''s) names the object.';
revoke all on function document_jobs_internal.object_recorded(text, text) from public, anon, authenticated, service_role;

create function document_jobs_internal.require_not_discarded(p_bucket text, p_storage_path text) returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if exists (select 1 from document_jobs_internal.discarded_objects d
                where d.bucket = p_bucket and d.storage_path = p_storage_path) then
        -- 55000 (object_not_in_prerequisite_state): a worker's database error, retried; its next
        -- attempt sees the key in start_fetch_email_v2's discarded_paths and stores beside it.
        raise exception using errcode = '55000', hint = 'object_discarded',
            message = format('%s/%s was given up as wrong and may be deleted: it is never recorded',
                             p_bucket, p_storage_path);
    end if;
end;
$$;
comment on function document_jobs_internal.require_not_discarded(text, text) is
    'Refuses (55000, hint object_discarded) to record an object listed in discarded_objects: its delete may still be on its way.';
revoke all on function document_jobs_internal.require_not_discarded(text, text) from public, anon, authenticated, service_role;

-- --- Recording -------------------------------------------------------------------------------------

-- One version of an attachment: inserted, or found already recorded with the same values (a
-- no-op); another value for a recorded version, or an object another row names, is refused.
-- Answers whether a row was inserted. Its caller holds the job (the fence).
create function document_jobs_internal.record_attachment_version(
    p_email_id uuid,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_version int,
    p_size_bytes bigint,
    p_sha256 text,
    p_bucket text,
    p_storage_path text
)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
    v_row public.fax_received_email_attachments;
begin
    perform document_jobs_internal.require_not_discarded(p_bucket, p_storage_path);
    insert into public.fax_received_email_attachments
           (fax_received_email_id, provider_attachment_id, version, filename, content_type, size_bytes, sha256,
            bucket, storage_path)
    values (p_email_id, p_provider_attachment_id, p_version, p_filename, p_content_type, p_size_bytes, p_sha256,
            p_bucket, p_storage_path)
    on conflict do nothing;
    if found then
        return true;
    end if;
    select * into v_row from public.fax_received_email_attachments a
     where a.fax_received_email_id = p_email_id and a.provider_attachment_id = p_provider_attachment_id
       and a.version = p_version;
    if v_row.id is null then
        raise exception using errcode = '23505', hint = 'object_recorded',
            message = format('%s/%s is recorded for another attachment or version: one object, one record',
                             p_bucket, p_storage_path);
    end if;
    if (v_row.filename, v_row.content_type, v_row.size_bytes, v_row.sha256, v_row.bucket, v_row.storage_path)
       is distinct from (p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path) then
        raise exception using errcode = '23505', hint = 'version_recorded',
            message = format('version %s of attachment %s is recorded with other values (%s bytes, SHA-256 %s): '
                             'a recorded original never changes', p_version, p_provider_attachment_id,
                             v_row.size_bytes, v_row.sha256);
    end if;
    return false;
end;
$$;
comment on function document_jobs_internal.record_attachment_version(uuid, text, text, text, int, bigint, text, text, text) is
    'One version of an attachment recorded: inserted (true), or already recorded with the same values (false, nothing changes); other values for a recorded version, an object another row names (23505) and a key given up as wrong (55000) are refused.';
revoke all on function document_jobs_internal.record_attachment_version(uuid, text, text, text, int, bigint, text, text, text)
    from public, anon, authenticated, service_role;

-- The fence of every recording call: the fetch_email job held by (p_job_id, p_generation), its
-- lease renewed by p_lease (and a streak of time-budget releases ended: storing is progress) or
-- the row share-locked. Answers the job's e-mail, null when the job is not held.
create function document_jobs_internal.hold_fetch_job(p_job_id uuid, p_generation int, p_lease interval)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
           for share;
        return v_email_id;
    end if;
    if p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease,
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
    returning j.fax_received_email_id into v_email_id;
    return v_email_id;
end;
$$;
comment on function document_jobs_internal.hold_fetch_job(uuid, int, interval) is
    'The fence of the fetch_email job''s recording calls: its e-mail while (p_job_id, p_generation) holds the job (the lease renewed by p_lease and a streak of time-budget releases ended, or the row share-locked without one), else null.';
revoke all on function document_jobs_internal.hold_fetch_job(uuid, int, interval) from public, anon, authenticated, service_role;

-- The versions a worker hands in: [{"version", "size_bytes", "sha256", "bucket", "storage_path"}].
create function document_jobs_internal.require_versions(p_versions jsonb, p_prefix text) returns void
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_item jsonb;
begin
    perform document_jobs_internal.require(
        jsonb_typeof(p_versions) = 'array' and jsonb_array_length(p_versions) between 1 and 100,
        'p_versions must be an array of 1 to 100 versions');
    for v_item in select value from jsonb_array_elements(p_versions) loop
        perform document_jobs_internal.require(
            jsonb_typeof(v_item) = 'object'
            and jsonb_typeof(v_item -> 'version') = 'number' and (v_item ->> 'version') ~ '^[1-9][0-9]{0,5}$'
            and jsonb_typeof(v_item -> 'size_bytes') = 'number' and (v_item ->> 'size_bytes') ~ '^[0-9]{1,15}$'
            and (v_item ->> 'sha256') ~ '^[0-9a-f]{64}$'
            and coalesce(v_item ->> 'bucket', '') <> ''
            and starts_with(coalesce(v_item ->> 'storage_path', ''), p_prefix)
            and length(v_item ->> 'storage_path') > length(p_prefix),
            format('each version is {"version", "size_bytes", "sha256", "bucket", "storage_path"}, its key under %s',
                   p_prefix));
    end loop;
    perform document_jobs_internal.require(
        (select count(distinct v.value -> 'version') from jsonb_array_elements(p_versions) v)
            = jsonb_array_length(p_versions),
        'p_versions names a version twice');
end;
$$;
comment on function document_jobs_internal.require_versions(jsonb, text) is
    'The versions a recording call hands in, checked: 1 to 100 of {"version", "size_bytes", "sha256", "bucket", "storage_path"}, each version once, each key under p_prefix (22023 otherwise).';
revoke all on function document_jobs_internal.require_versions(jsonb, text) from public, anon, authenticated, service_role;

-- What to do about a finding, in English and Japanese: lib/failures.py FINDINGS[code].operator,
-- word for word as shown (tests/database/test_advice_is_lib_advice.py).
create function document_jobs_internal.finding_advice(p_code text) returns text
language sql
immutable
set search_path = ''
as $$
    select case p_code
        when 'original_differs' then 'Nothing was overwritten. Download each version (document-jobs-admin download with the job id writes them all; the alert names their SHA-256), compare them with the fax in the Resend dashboard (Emails, Receiving) while Resend still keeps it, and record which one the office relies on, as its rule against improper correction and deletion asks. A worker that stopped between an upload and its record leaves such an object; if versions keep appearing, report it to the developers with the job id.'
    end
$$;
comment on function document_jobs_internal.finding_advice(text) is
    'What to do about a finding (an alert a job raises once without failing), in English: lib/failures.py FINDINGS[code].operator_en, word for word (tests/database/test_advice_is_lib_advice.py).';
revoke all on function document_jobs_internal.finding_advice(text) from public, anon, authenticated, service_role;

create function document_jobs_internal.finding_advice_ja(p_code text) returns text
language sql
immutable
set search_path = ''
as $$
    select case p_code
        when 'original_differs' then '上書きされたものはありません。各版をダウンロードし（ジョブIDを指定した document-jobs-admin download ですべて書き出せます。各版の SHA-256 は通知に記載されています）、Resend に残っている間に Resend のダッシュボード（Emails → Receiving）の FAX と照合して、事務所がどちらに依拠するかを、訂正削除の防止に関する事務処理規程に従って記録してください。アップロードから記録までの間に止まったワーカーがこのような版を残すことがあります。繰り返し起きる場合は、ジョブIDを添えて開発者に連絡してください。'
    end
$$;
comment on function document_jobs_internal.finding_advice_ja(text) is
    'finding_advice in Japanese: lib/failures.py FINDINGS[code].operator_ja, word for word.';
revoke all on function document_jobs_internal.finding_advice_ja(text) from public, anon, authenticated, service_role;

-- The alert original_differs: one original of a fax (an attachment, or the raw message) is kept
-- in more than one version. Posted by the recording call that added a version beside another, so
-- once for what one call found; a failure to post it is a WARNING, never a lost record.
create function document_jobs_internal.original_differs_alert(
    p_job_id uuid,
    p_email_id uuid,
    p_what text,
    p_versions jsonb
)
returns void
language plpgsql
set search_path = ''
as $$
declare
    c_program constant text := 'document-jobs-admin';
    v_email public.fax_received_emails;
    v_lines jsonb;
    v_version jsonb;
    v_download text := format('%s download %s', c_program, p_job_id);
begin
    select * into v_email from public.fax_received_emails e where e.id = p_email_id;
    v_lines := jsonb_build_array(
        jsonb_build_array('Original differs: job ', jsonb_build_object('quote', p_job_id::text),
                          ' found an object already at the key of ', jsonb_build_object('quote', p_what, 'max', 200),
                          ' with other bytes than it downloaded; nothing was replaced, and both are kept:'));
    for v_version in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        v_lines := v_lines || jsonb_build_array(jsonb_build_array(
            format('Version %s: %s bytes, SHA-256 ', v_version ->> 'version', v_version ->> 'size_bytes'),
            jsonb_build_object('quote', v_version ->> 'sha256'), ' at ',
            jsonb_build_object('quote', v_version ->> 'storage_path')));
    end loop;
    v_lines := v_lines || jsonb_build_array(
        jsonb_build_array('From: ', jsonb_build_object('quote', v_email.from_address)),
        jsonb_build_array('Subject: ', jsonb_build_object('quote', v_email.subject)),
        jsonb_build_array('Received: ', coalesce(document_jobs_internal.alert_time(
                                                     coalesce(v_email.received_at, v_email.created_at)), '(unknown)')),
        jsonb_build_array('Download: ', jsonb_build_object('quote', v_download)),
        jsonb_build_array(document_jobs_internal.finding_advice('original_differs')),
        jsonb_build_array(document_jobs_internal.finding_advice_ja('original_differs')));
    perform document_jobs_internal.post_alert(document_jobs_internal.alert_body(
        jsonb_build_object(
            'event', 'original_differs',
            'job', jsonb_build_object('id', p_job_id, 'fax_received_email_id', p_email_id),
            'email', case when v_email.id is not null then jsonb_build_object(
                'id', v_email.id, 'provider_email_id', v_email.provider_email_id, 'from', v_email.from_address,
                'subject', v_email.subject, 'received_at', coalesce(v_email.received_at, v_email.created_at)) end,
            'original', p_what,
            'versions', p_versions,
            'download_command', v_download,
            'advice', document_jobs_internal.finding_advice('original_differs'),
            'advice_ja', document_jobs_internal.finding_advice_ja('original_differs'),
            'sent_at', now()),
        v_lines));
exception
    when others then
        raise warning 'document jobs: the alert original_differs of job % could not be queued: %', p_job_id, sqlerrm;
end;
$$;
comment on function document_jobs_internal.original_differs_alert(uuid, uuid, text, jsonb) is
    'Posts the alert original_differs (alert_body: its fields, and lines that quote every version''s size, SHA-256 and key, the e-mail''s sender and subject, the CLI command that downloads every version, and the advice in English and Japanese, finding_advice). Called by the recording calls, which run as the owner (they are security definer): post_alert reads Vault. A failure to post is a WARNING: the versions stay recorded.';
revoke all on function document_jobs_internal.original_differs_alert(uuid, uuid, text, jsonb)
    from public, anon, authenticated, service_role;

create function public.record_document_attachment_v3(
    p_job_id uuid,
    p_generation int,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_versions jsonb,
    p_lease interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
    v_item jsonb;
    v_added int := 0;
    v_prefix text;
    v_versions jsonb;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(coalesce(p_provider_attachment_id, '') <> '',
                                           'p_provider_attachment_id must not be empty');
    v_prefix := format('fax_received_emails/%s/', v_email_id);
    perform document_jobs_internal.require_versions(p_versions, v_prefix);
    for v_item in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        if document_jobs_internal.record_attachment_version(
               v_email_id, p_provider_attachment_id, p_filename, p_content_type, (v_item ->> 'version')::int,
               (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256', v_item ->> 'bucket',
               v_item ->> 'storage_path') then
            v_added := v_added + 1;
        end if;
    end loop;
    select jsonb_agg(jsonb_build_object('version', a.version, 'size_bytes', a.size_bytes, 'sha256', a.sha256,
                                        'storage_path', a.storage_path) order by a.version)
      into v_versions
      from public.fax_received_email_attachments a
     where a.fax_received_email_id = v_email_id and a.provider_attachment_id = p_provider_attachment_id;
    if v_added > 0 and jsonb_array_length(v_versions) > 1 then
        perform document_jobs_internal.original_differs_alert(
            p_job_id, v_email_id, format('attachment %s (%s)', p_provider_attachment_id,
                                         coalesce(p_filename, '(no name)')), v_versions);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'added', v_added,
                              'versions', jsonb_array_length(v_versions));
end;
$$;
comment on function public.record_document_attachment_v3(uuid, int, text, text, text, jsonb, interval) is
    'Records the stored versions of one attachment of the job''s e-mail (p_versions: [{"version", "size_bytes", "sha256", "bucket", "storage_path"}], each key under fax_received_emails/{e-mail}/), in one transaction, fenced by (p_job_id, p_generation): a worker that lost its job records nothing. Never updates a row: a version recorded with the same values is a no-op, with other values refused (23505), and a key given up as wrong refused (55000). When the call adds a version and the attachment then has more than one, the alert original_differs is posted. With p_lease the lease is renewed and a streak of time-budget releases ends. Answers {"held", "state"}, and while held "added" (rows inserted) and "versions" (the attachment''s versions now).';
revoke all on function public.record_document_attachment_v3(uuid, int, text, text, text, jsonb, interval)
    from public, anon, authenticated;
grant execute on function public.record_document_attachment_v3(uuid, int, text, text, text, jsonb, interval)
    to service_role;

-- A previous deploy's worker records through _v2 while the new one rolls out: version 1 at the
-- key it names, never an update of a recorded row (the same values: a no-op; others: refused, and
-- its job retried and, in the end, failed with the refusal in its message, for an operator).
create or replace function public.record_document_attachment_v2(
    p_job_id uuid,
    p_generation integer,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_size_bytes bigint,
    p_sha256 text,
    p_bucket text,
    p_storage_path text,
    p_lease interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.record_attachment_version(
        v_email_id, p_provider_attachment_id, p_filename, p_content_type, 1, p_size_bytes, p_sha256, p_bucket,
        p_storage_path);
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
comment on function public.record_document_attachment_v2(uuid, integer, text, text, text, bigint, text, text, text, interval) is
    'Retired for record_document_attachment_v3, kept for a worker of the previous deploy: records version 1 of an attachment, fenced by (p_job_id, p_generation), never updating a row (the same values again: a no-op; other values: refused, 23505). With p_lease the same statement renews the lease and ends a streak of time-budget releases. Answers {"held", "state"}.';

create function public.record_raw_message_v2(
    p_job_id uuid,
    p_generation int,
    p_versions jsonb,
    p_unavailable text default null,
    p_lease interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
    v_item jsonb;
    v_row public.fax_received_email_raw_messages;
    v_added int := 0;
    v_versions jsonb;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require((p_versions is null) <> (p_unavailable is null),
                                           'either p_versions or p_unavailable');
    if p_unavailable is not null then
        perform document_jobs_internal.require(p_unavailable ~ '^[a-z0-9_]{1,64}$',
                                               'p_unavailable is a code: [a-z0-9_], at most 64 characters');
        insert into public.fax_received_email_raw_messages (fax_received_email_id, unavailable)
        values (v_email_id, p_unavailable)
        on conflict do nothing;
        if found then
            return jsonb_build_object('held', true, 'state', 'running', 'added', 1, 'versions', 0);
        end if;
        select * into v_row from public.fax_received_email_raw_messages r
         where r.fax_received_email_id = v_email_id and r.version = 1;
        if v_row.unavailable is distinct from p_unavailable then
            raise exception using errcode = '23505', hint = 'version_recorded',
                message = format('the raw message of e-mail %s is recorded already (%s): a record never changes',
                                 v_email_id, coalesce(v_row.unavailable, 'SHA-256 ' || v_row.sha256));
        end if;
        return jsonb_build_object('held', true, 'state', 'running', 'added', 0, 'versions', 0);
    end if;
    perform document_jobs_internal.require_versions(p_versions, format('fax_received_emails/%s/raw/', v_email_id));
    for v_item in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        perform document_jobs_internal.require_not_discarded(v_item ->> 'bucket', v_item ->> 'storage_path');
        insert into public.fax_received_email_raw_messages
               (fax_received_email_id, version, bucket, storage_path, size_bytes, sha256)
        values (v_email_id, (v_item ->> 'version')::int, v_item ->> 'bucket', v_item ->> 'storage_path',
                (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256')
        on conflict do nothing;
        if found then
            v_added := v_added + 1;
            continue;
        end if;
        select * into v_row from public.fax_received_email_raw_messages r
         where r.fax_received_email_id = v_email_id and r.version = (v_item ->> 'version')::int;
        if (v_row.bucket, v_row.storage_path, v_row.size_bytes, v_row.sha256) is distinct from
           (v_item ->> 'bucket', v_item ->> 'storage_path', (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256') then
            raise exception using errcode = '23505', hint = 'version_recorded',
                message = format('version %s of the raw message of e-mail %s is recorded with other values: '
                                 'a recorded original never changes', v_item ->> 'version', v_email_id);
        end if;
    end loop;
    select jsonb_agg(jsonb_build_object('version', r.version, 'size_bytes', r.size_bytes, 'sha256', r.sha256,
                                        'storage_path', r.storage_path) order by r.version)
      into v_versions
      from public.fax_received_email_raw_messages r
     where r.fax_received_email_id = v_email_id and r.unavailable is null;
    if v_added > 0 and jsonb_array_length(v_versions) > 1 then
        perform document_jobs_internal.original_differs_alert(p_job_id, v_email_id, 'the raw message', v_versions);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'added', v_added,
                              'versions', jsonb_array_length(v_versions));
end;
$$;
comment on function public.record_raw_message_v2(uuid, int, jsonb, text, interval) is
    'Records the job''s e-mail as Resend received it: its stored versions (p_versions, as record_document_attachment_v3 takes them, each key under fax_received_emails/{e-mail}/raw/), or why none is stored (p_unavailable: raw_null, or the failure code that refused it for good), fenced by (p_job_id, p_generation). Never updates a row: the same values again are a no-op, others refused. A version added beside another posts the alert original_differs. With p_lease the lease is renewed. Answers {"held", "state"}, and while held "added" and "versions".';
revoke all on function public.record_raw_message_v2(uuid, int, jsonb, text, interval) from public, anon, authenticated;
grant execute on function public.record_raw_message_v2(uuid, int, jsonb, text, interval) to service_role;

-- --- Deleting an object found wrong -------------------------------------------------------------

create function public.discard_unrecorded_object_v2(
    p_job_id uuid,
    p_generation int,
    p_bucket text,
    p_storage_path text,
    p_size_bytes bigint,
    p_sha256 text,
    p_reason text
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(coalesce(p_bucket, '') <> '' and coalesce(p_storage_path, '') <> '',
                                           'p_bucket and p_storage_path must not be empty');
    perform document_jobs_internal.require(length(p_reason) between 1 and 500,
                                           'p_reason must be 1 to 500 characters');
    -- The job's row locked against every recording call of the same job (they share-lock or update it).
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null, 'discard', false);
    end if;
    -- Only an original of the job's own e-mail: never a derived file (fax_views/), never another e-mail's.
    perform document_jobs_internal.require(
        starts_with(p_storage_path, format('fax_received_emails/%s/', v_email_id)),
        format('p_storage_path must be under fax_received_emails/%s/: a job discards only its own e-mail''s originals',
               v_email_id));
    if document_jobs_internal.object_recorded(p_bucket, p_storage_path) then
        return jsonb_build_object('held', true, 'state', 'running', 'discard', false);
    end if;
    insert into document_jobs_internal.discarded_objects
           (bucket, storage_path, fax_received_email_id, job_id, generation, size_bytes, sha256, reason)
    values (p_bucket, p_storage_path, v_email_id, p_job_id, p_generation, p_size_bytes, p_sha256, p_reason)
    on conflict do nothing;
    return jsonb_build_object('held', true, 'state', 'running', 'discard', true);
end;
$$;
comment on function public.discard_unrecorded_object_v2(uuid, int, text, text, bigint, text, text) is
    'Whether the fetch_email job may delete an object it uploaded and then found wrong (a body that went on past its listed size once Storage had the listed bytes): "discard" is true only while (p_job_id, p_generation) holds the job, for a key under the job''s own e-mail''s originals (fax_received_emails/{e-mail}/, else 22023), that no row records. A true answer lists the object in discarded_objects (what was sent, and why), under the job row''s lock, and from then on no call records that key: the delete that follows, however late it reaches Storage, can only remove an object no row names. Answers {"held", "state", "discard"}.';
revoke all on function public.discard_unrecorded_object_v2(uuid, int, text, text, bigint, text, text)
    from public, anon, authenticated;
grant execute on function public.discard_unrecorded_object_v2(uuid, int, text, text, bigint, text, text) to service_role;

-- --- What a fetch_email job starts from ---------------------------------------------------------

create or replace function public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_row_id uuid;
    v_email jsonb;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select j.fax_received_email_id into v_email_row_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select jsonb_build_object('id', e.id, 'provider_email_id', e.provider_email_id) into v_email
      from public.fax_received_emails e
     where e.id = v_email_row_id;
    if v_email is null then
        return jsonb_build_object('held', true, 'state', 'running', 'email', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', v_email,
        'stored_attachment_ids', coalesce(
            (select jsonb_agg(distinct a.provider_attachment_id)
               from public.fax_received_email_attachments a
              where a.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'raw_message_recorded', exists (select 1 from public.fax_received_email_raw_messages r
                                         where r.fax_received_email_id = v_email_row_id),
        'discarded_paths', coalesce(
            (select jsonb_agg(jsonb_build_object('bucket', d.bucket, 'storage_path', d.storage_path)
                              order by d.storage_path)
               from document_jobs_internal.discarded_objects d
              where d.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'resend', document_jobs_internal.reserve_request('resend', p_max_wait_ms));
end;
$$;
comment on function public.start_fetch_email_v2(uuid, integer, integer) is
    'What a fetch_email job needs before it calls Resend, in one round trip: its e-mail''s provider id, the provider ids of the attachments already stored (any version), whether its raw message is recorded (stored, or noted unavailable), the keys of its e-mail given up as wrong (discarded_paths: never to be stored at again), and the slot of its listing request from the Resend limiter (reserve_request, waiting at most p_max_wait_ms). Fenced like every call after a claim: {"held": false, "state": null} once (p_job_id, p_generation) no longer holds the job, else {"held": true, "state": "running"} with those members. "email" is null when the e-mail row is gone, and then no slot is reserved.';
