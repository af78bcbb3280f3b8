-- The queue's functions. Each is security definer with an empty search_path (every name is
-- schema-qualified), callable by service_role only. Every write a worker makes after its claim
-- names (job id, generation) and changes the row only while that generation still holds the
-- job (status running); "false" tells the worker it has lost the job and must stop.
--
-- Errors raised for bad arguments use SQLSTATE 22023 (invalid_parameter_value): PostgREST
-- answers them with HTTP 400 and the message below.

create function public.document_jobs_require(p_ok boolean, p_message text)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_ok is not true then
        raise exception using errcode = '22023', message = p_message;
    end if;
end;
$$;

-- Delay before the next attempt after the n-th failed one: 1, 5, 15, 60 times backoff_base (a
-- minute), ±10 % jitter so that jobs that failed together (a provider outage) do not all retry
-- in the same second.
-- The arguments every write of a worker names; and a kind must be one of document_job_kinds.
create function public.document_jobs_require_holder(p_job_id uuid, p_generation int)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    perform public.document_jobs_require(p_job_id is not null, 'p_job_id must not be null');
    perform public.document_jobs_require(p_generation is not null, 'p_generation must not be null');
end;
$$;

create function public.document_jobs_require_kind(p_kind text)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    perform public.document_jobs_require(
        exists (select 1 from public.document_job_kinds k where k.kind = p_kind),
        format('unknown job kind %L (see table document_job_kinds)', p_kind));
end;
$$;

create function public.document_job_backoff(p_failed_attempt int)
returns interval
language sql
volatile
set search_path = ''
as $$
    select s.backoff_base
           * (case
                  when p_failed_attempt <= 1 then 1
                  when p_failed_attempt = 2 then 5
                  when p_failed_attempt = 3 then 15
                  else 60
              end)
           * (0.9 + 0.2 * random())
      from public.document_jobs_settings s
$$;

-- Running jobs whose lease has passed with no attempt left would otherwise stay running
-- forever (they are not claimable): they end in failed. SKIP LOCKED: concurrent sweepers never
-- wait for each other, and whoever holds a row sweeps it. PL/pgSQL rather than SQL: a security
-- definer SQL function with SET is never inlined and is planned again on every call; this one
-- keeps its plan.
create function public.fail_expired_document_jobs()
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_failed int;
begin
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           last_error_code = 'lease_expired',
           last_error_message = 'the lease of the last attempt expired before the job finished'
     where j.id = any (array(
               select e.id
                 from public.document_jobs e
                where e.status = 'running'
                  and e.lease_until < now()
                  and e.attempts >= e.max_attempts
                  for update skip locked));
    get diagnostics v_failed = row_count;
    return v_failed;
end;
$$;

create function public.claim_document_jobs(
    p_kind text,
    p_limit int default 1,
    p_lease interval default '5 minutes'
)
returns setof public.document_jobs
language plpgsql
security definer
set search_path = ''
-- The claim's generic plan (the claim index, then the primary key) is the right one whatever
-- p_limit is: keep it rather than plan the statement again on every call.
set plan_cache_mode = force_generic_plan
as $$
begin
    perform public.document_jobs_require_kind(p_kind);
    perform public.document_jobs_require(p_limit between 1 and 1000, 'p_limit must be between 1 and 1000');
    perform public.document_jobs_require(p_lease > interval '0', 'p_lease must be a positive interval');
    perform public.fail_expired_document_jobs();

    -- Postgres has no UPDATE ... LIMIT: pick and lock in a sub-select. SKIP LOCKED lets
    -- concurrent claimers pass each other's rows; a row claimed and committed by another
    -- worker since our snapshot is re-checked against the view's condition and dropped.
    return query
    update public.document_jobs j
       set status = 'running',
           attempts = j.attempts + 1,
           generation = j.generation + 1,
           lease_until = now() + p_lease,
           started_at = coalesce(j.started_at, now())
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
end;
$$;

create function public.extend_document_job_lease(
    p_job_id uuid,
    p_generation int,
    p_lease interval default '5 minutes'
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform public.document_jobs_require_holder(p_job_id, p_generation);
    perform public.document_jobs_require(p_lease > interval '0', 'p_lease must be a positive interval');
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

create function public.complete_document_job(p_job_id uuid, p_generation int)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform public.document_jobs_require_holder(p_job_id, p_generation);
    update public.document_jobs j
       set status = 'completed',
           lease_until = null,
           finished_at = now()
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

create function public.fail_document_job(
    p_job_id uuid,
    p_generation int,
    p_error_code text,
    p_error_message text default null,
    p_retryable boolean default true,
    p_retry_after interval default null
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_job public.document_jobs;
    v_retry boolean;
begin
    perform public.document_jobs_require_holder(p_job_id, p_generation);
    perform public.document_jobs_require(nullif(p_error_code, '') is not null, 'p_error_code must not be empty');
    perform public.document_jobs_require(p_retryable is not null, 'p_retryable must not be null');
    perform public.document_jobs_require(
        p_retry_after is null or p_retry_after >= interval '0', 'p_retry_after must not be negative');

    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return false;
    end if;

    v_retry := p_retryable and v_job.attempts < v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_retry then 'queued' else 'failed' end,
           run_after = case
                           when v_retry then now() + greatest(public.document_job_backoff(v_job.attempts),
                                                              coalesce(p_retry_after, interval '0'))
                           else j.run_after
                       end,
           lease_until = null,
           finished_at = case when v_retry then null else now() end,
           last_error_code = p_error_code,
           last_error_message = left(p_error_message, 4000)
     where j.id = p_job_id;
    return true;
end;
$$;

-- For failures that are not the job's fault (the time budget ran out, the API key lacks a
-- permission): back to queued without spending an attempt.
create function public.release_document_job(
    p_job_id uuid,
    p_generation int,
    p_retry_after interval default '0 seconds',
    p_error_code text default null,
    p_error_message text default null
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform public.document_jobs_require_holder(p_job_id, p_generation);
    perform public.document_jobs_require(
        p_retry_after is null or p_retry_after >= interval '0', 'p_retry_after must not be negative');
    update public.document_jobs j
       set status = 'queued',
           attempts = greatest(j.attempts - 1, 0),
           run_after = now() + coalesce(p_retry_after, interval '0'),
           lease_until = null,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case when p_error_code is null then j.last_error_message
                                     else left(p_error_message, 4000) end
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;

-- Manual re-run of a failed job (admin tools). The unique index still guards the race of two
-- concurrent retries; its violation is turned into a message that says what to do.
create function public.retry_document_job(p_job_id uuid)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform public.document_jobs_require(p_job_id is not null, 'p_job_id must not be null');
    update public.document_jobs j
       set status = 'queued',
           attempts = 0,
           run_after = now(),
           lease_until = null,
           finished_at = null
     where j.id = p_job_id and j.status = 'failed';
    return found;
exception
    when unique_violation then
        raise exception using
            errcode = 'unique_violation',
            message = format('document job %s cannot be retried: another job for the same target is already queued or running', p_job_id),
            hint = 'Wait for that job to finish, or cancel it, then retry.';
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
    perform public.document_jobs_require_holder(p_job_id, p_generation);
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

-- POSTs to the worker through pg_net; the requests are sent only if and after the calling
-- transaction commits. Returns how many were queued (0 and a WARNING when Vault lacks the URL
-- or the secret: migrations may run before the operator stores them).
create function public.post_document_jobs_worker(p_count int)
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_url text;
    v_secret text;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    for i in 1..p_count loop
        perform net.http_post(
            url => v_url,
            body => '{}'::jsonb,
            headers => jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || v_secret),
            timeout_milliseconds => 300000  -- the worker's maxDuration
        );
    end loop;
    return greatest(p_count, 0);
end;
$$;

create function public.enqueue_document_job(
    p_kind text,
    p_fax_received_email_id uuid,
    p_kick boolean default false
)
returns table (job_id uuid, created boolean)
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id uuid;
begin
    perform public.document_jobs_require_kind(p_kind);
    perform public.document_jobs_require(p_fax_received_email_id is not null, 'p_fax_received_email_id must not be null');
    if not exists (select 1 from public.fax_received_emails e where e.id = p_fax_received_email_id) then
        raise exception using errcode = 'foreign_key_violation',
            message = format('fax_received_emails %s does not exist', p_fax_received_email_id);
    end if;
    loop
        insert into public.document_jobs (kind, fax_received_email_id)
        values (p_kind, p_fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing
        returning id into v_id;
        if v_id is not null then
            if p_kick then
                perform public.post_document_jobs_worker(1);
            end if;
            return query select v_id, true;
            return;
        end if;

        select j.id into v_id
          from public.document_jobs j
         where j.kind = p_kind and j.fax_received_email_id = p_fax_received_email_id
           and j.status in ('queued', 'running');
        if v_id is not null then
            return query select v_id, false;
            return;
        end if;
        -- The live job finished between the two statements: insert again.
    end loop;
end;
$$;

create function public.document_jobs_try_timestamptz(p_value text)
returns timestamptz
language plpgsql
stable
set search_path = ''
as $$
begin
    return p_value::timestamptz;
exception
    when others then
        return null;
end;
$$;

create function public.document_jobs_text_array(p_value jsonb)
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
    perform public.document_jobs_require(nullif(p_provider_email_id, '') is not null, 'p_provider_email_id must not be empty');
    perform public.document_jobs_require(jsonb_typeof(p_data) = 'object', 'p_data must be a JSON object');

    insert into public.fax_received_emails as e
           (provider, provider_email_id, webhook_id, from_address, to_addresses, cc_addresses,
            subject, message_id, received_at, data)
    values ('resend', p_provider_email_id, p_webhook_id, p_data ->> 'from',
            public.document_jobs_text_array(p_data -> 'to'), public.document_jobs_text_array(p_data -> 'cc'),
            p_data ->> 'subject', p_data ->> 'message_id',
            public.document_jobs_try_timestamptz(p_data ->> 'created_at'), p_data)
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

-- The cron entry point: sweeps expired-and-exhausted jobs, then calls the worker once per
-- 3 claimable jobs (what one invocation handles), at most p_max_invocations times. Nothing
-- claimable: no HTTP at all.
create function public.invoke_document_jobs(p_max_invocations int default 4)
returns int
language plpgsql
security definer
set search_path = ''
as $$
declare
    c_jobs_per_invocation constant int := 3;  -- lib/worker.py: MAX_JOBS_PER_INVOCATION
    v_claimable int;
begin
    perform public.document_jobs_require(p_max_invocations between 1 and 100, 'p_max_invocations must be between 1 and 100');
    perform public.fail_expired_document_jobs();
    select count(*) into v_claimable
      from (select 1 from public.document_jobs_claimable limit p_max_invocations * c_jobs_per_invocation) c;
    if v_claimable = 0 then
        return 0;
    end if;
    return public.post_document_jobs_worker(
        least(ceil(v_claimable::numeric / c_jobs_per_invocation)::int, p_max_invocations));
end;
$$;

-- Supabase's default privileges granted EXECUTE to anon and authenticated, and Postgres grants
-- it to PUBLIC: take both away, then give service_role what it calls.
revoke all on function
    public.document_jobs_require(boolean, text),
    public.document_jobs_require_holder(uuid, int),
    public.document_jobs_require_kind(text),
    public.document_job_backoff(int),
    public.fail_expired_document_jobs(),
    public.claim_document_jobs(text, int, interval),
    public.extend_document_job_lease(uuid, int, interval),
    public.complete_document_job(uuid, int),
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text),
    public.retry_document_job(uuid),
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text),
    public.post_document_jobs_worker(int),
    public.enqueue_document_job(text, uuid, boolean),
    public.document_jobs_try_timestamptz(text),
    public.document_jobs_text_array(jsonb),
    public.record_inbound_email(text, text, jsonb),
    public.invoke_document_jobs(int)
from public, anon, authenticated;

grant execute on function
    public.claim_document_jobs(text, int, interval),
    public.extend_document_job_lease(uuid, int, interval),
    public.complete_document_job(uuid, int),
    public.fail_document_job(uuid, int, text, text, boolean, interval),
    public.release_document_job(uuid, int, interval, text, text),
    public.retry_document_job(uuid),
    public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text),
    public.enqueue_document_job(text, uuid, boolean),
    public.record_inbound_email(text, text, jsonb),
    public.invoke_document_jobs(int)
to service_role;
