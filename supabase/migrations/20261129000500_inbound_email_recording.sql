-- Recording received e-mails: what the webhook calls (the e-mail and its fetch_email job, in one
-- round trip), and the row of each attachment the worker stores.

-- A field of the webhook's data that should be a timestamp; null when it does not parse.
create function document_jobs_internal.try_timestamptz(p_value text)
returns timestamptz
language plpgsql
stable  -- the text's meaning depends on the session's TimeZone
set search_path = ''
as $$
begin
    return p_value::timestamptz;
exception
    when others then
        return null;
end;
$$;

-- A field of the webhook's data that should be a list of addresses: a lone string counts as one.
create function document_jobs_internal.text_array(p_value jsonb)
returns text[]
language sql
immutable
set search_path = ''
as $$
    select case jsonb_typeof(p_value)
               when 'array' then array(select jsonb_array_elements_text(p_value))
               when 'string' then array[p_value #>> '{}']
               else '{}'::text[]
           end
$$;

-- What the webhook calls: records the e-mail and enqueues its fetch_email job with a kick,
-- atomically, in one round trip. Keeps the data verbatim and never fails on a field it merely
-- copies (a date it cannot parse is stored as null): an e-mail must not be lost over metadata.
create function public.record_inbound_email(
    p_provider_email_id text,
    p_webhook_id text,
    p_data jsonb
)
returns table (fax_received_email_id uuid, job_id uuid, duplicate boolean)
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require(
        nullif(p_provider_email_id, '') is not null, 'p_provider_email_id must not be empty');
    perform document_jobs_internal.require(jsonb_typeof(p_data) = 'object', 'p_data must be a JSON object');

    insert into public.fax_received_emails as e
           (provider, provider_email_id, webhook_id, from_address, to_addresses, cc_addresses,
            subject, message_id, received_at, data)
    values ('resend', p_provider_email_id, p_webhook_id, p_data ->> 'from',
            document_jobs_internal.text_array(p_data -> 'to'), document_jobs_internal.text_array(p_data -> 'cc'),
            p_data ->> 'subject', p_data ->> 'message_id',
            document_jobs_internal.try_timestamptz(p_data ->> 'created_at'), p_data)
    on conflict (provider, provider_email_id) do nothing
    returning e.id into v_email_id;

    if v_email_id is null then
        -- A redelivery: report what exists, create nothing.
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

-- Records a stored attachment for the job's e-mail, fenced like every other write of a worker:
-- only while (p_job_id, p_generation) still holds the job. A stale worker's upload may still
-- have overwritten the object (same key, same bytes), but its row is refused.
create function public.record_document_attachment(
    p_job_id uuid,
    p_generation int,
    p_provider_attachment_id text,
    p_filename text,
    p_content_type text,
    p_size_bytes bigint,
    p_sha256 text,
    p_bucket text,
    p_storage_path text
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for share;
    if not found then
        return false;
    end if;
    insert into public.fax_received_email_attachments as a
           (fax_received_email_id, provider_attachment_id, filename, content_type, size_bytes, sha256, bucket,
            storage_path)
    values (v_email_id, p_provider_attachment_id, p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket,
            p_storage_path)
    on conflict (fax_received_email_id, provider_attachment_id) do update
       set filename = excluded.filename,
           content_type = excluded.content_type,
           size_bytes = excluded.size_bytes,
           sha256 = excluded.sha256,
           bucket = excluded.bucket,
           storage_path = excluded.storage_path,
           updated_at = now();
    return true;
end;
$$;

revoke all on function
    public.record_inbound_email(text, text, jsonb),
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text)
from public, anon, authenticated;
grant execute on function
    public.record_inbound_email(text, text, jsonb),
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text)
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
