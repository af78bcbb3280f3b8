-- A rate limit shared by every worker, in the database. Resend allows 5 API requests per second
-- per team, shared by every key of the team and by any other application on it, counted in
-- one-second windows (its ratelimit-limit, ratelimit-remaining and ratelimit-reset headers);
-- beyond that it answers 429 rate_limit_exceeded. Workers started at once would all call it at
-- once: before each Resend API request a worker now reserves a slot here instead.
--
-- The schedule is a GCRA (a leaky bucket kept as one timestamp, the theoretical arrival time of
-- the next request): slots are spaced 1 / (requests_per_second x (1 - share_for_others)) apart,
-- with at most `burst` requests let through early after a quiet spell. Reservations take the
-- provider's row lock, so they are served one at a time, in order: a queue, not a race of
-- retries. The database's clock decides (clock_timestamp(), read once the row is ours), and the
-- answer is a wait relative to it, in milliseconds: the workers' clocks do not matter, and a
-- worker that sleeps the wait after the answer arrives can only be late, never early.
--
-- Downloads (download_url) go to another host, which Resend's rate-limit page does not mention;
-- they take no slot.

-- One row per provider an API call of a job goes to. Settings by hand, like backoff_base:
--   update document_jobs_rate_limits set share_for_others = 0.4 where provider = 'resend';
-- requests_per_second is the team's limit: the worker writes what Resend's ratelimit-limit says
-- (learned_at), so an operator changes share_for_others, burst or enabled, not it.
create table public.document_jobs_rate_limits (
    provider text primary key,
    requests_per_second int not null default 5
        constraint document_jobs_rate_limits_requests_per_second check (requests_per_second between 1 and 1000),
    -- What the team's other applications (another app on the same Resend team, a person testing
    -- with curl) may use: this queue schedules requests_per_second x (1 - share_for_others).
    share_for_others numeric not null default 0.2
        constraint document_jobs_rate_limits_share_for_others check (share_for_others between 0 and 0.9),
    -- Requests let through at once after a quiet spell, beyond the steady spacing: at most one,
    -- and never more than the share leaves room for (rate_limit_slot), so that no one-second
    -- window of Resend's, however placed, sees more than requests_per_second from this queue.
    burst int not null default 0
        constraint document_jobs_rate_limits_burst check (burst between 0 and 1),
    -- Off: every reservation answers no wait (the worker then meets Resend's 429s itself).
    enabled boolean not null default true,
    learned_at timestamptz,
    -- The schedule: the theoretical arrival time of the next request (GCRA).
    next_at timestamptz not null default '-infinity',
    -- A 429 that came anyway (another application took the window): no slot before this.
    paused_until timestamptz
);
insert into public.document_jobs_rate_limits (provider) values ('resend');

comment on table public.document_jobs_rate_limits is
    'The shared rate limit of each provider API the jobs call: settings (by hand) and the schedule (by the workers).';

alter table public.document_jobs_rate_limits enable row level security;
revoke all on table public.document_jobs_rate_limits from public, anon, authenticated, service_role;
grant select on table public.document_jobs_rate_limits to service_role;

-- The next slot of a limiter at p_now, and the schedule after it: the GCRA's arithmetic alone,
-- without the clock or the row, so that a test can replay any sequence of arrivals. With
-- T = 1 / (rate x (1 - share)) and a tolerance of b x T, every k consecutive slots span at least
-- (k - 1) x T - b x T; k slots fit in a half-open second only if k < 1 + rate x (1 - share) + b,
-- and b is at most rate x share: so at most `rate` slots in any one-second window. The bound can
-- be exact (rate 5, share 0.1, burst 1: six slots span exactly one second), so T is rounded up to
-- whole microseconds (a timestamp's precision) and the tolerance down, never the other way.
create function document_jobs_internal.rate_limit_slot(
    p_limit public.document_jobs_rate_limits,
    p_now timestamptz,
    out slot_at timestamptz,
    out next_at timestamptz
)
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_rate numeric := p_limit.requests_per_second * (1 - p_limit.share_for_others);
    v_interval_us numeric := ceil(1000000 / v_rate);
    v_interval interval := v_interval_us * interval '1 microsecond';
    v_tolerance interval := floor(least(p_limit.burst, p_limit.requests_per_second - v_rate) * v_interval_us)
                            * interval '1 microsecond';
begin
    slot_at := greatest(p_now, p_limit.next_at - v_tolerance, p_limit.paused_until);
    next_at := greatest(p_limit.next_at, slot_at) + v_interval;
end;
$$;

-- Reserves the provider's next slot for one request, unless it is more than p_max_wait_ms away
-- (then nothing is reserved, and the answer says how long it would have been). Answers
-- {"reserved": bool, "wait_ms": int, "limit": the team's limit as known here}. The row lock is
-- held until the caller's transaction ends: reservations are served one at a time, in order.
create function document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms int)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_limit public.document_jobs_rate_limits;
    v_now timestamptz;
    v_slot_at timestamptz;
    v_next_at timestamptz;
    v_wait_ms int;
begin
    -- No worker waits longer than its function may run (vercel.json maxDuration, 300 s).
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select * into v_limit from public.document_jobs_rate_limits l where l.provider = p_provider for update;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    if not v_limit.enabled then
        return jsonb_build_object('reserved', true, 'wait_ms', 0, 'limit', v_limit.requests_per_second);
    end if;
    -- Read once the row is ours: a clock read before waiting for the lock would hand out a slot
    -- in the past, as much too early as the wait lasted.
    v_now := clock_timestamp();
    select s.slot_at, s.next_at into v_slot_at, v_next_at from document_jobs_internal.rate_limit_slot(v_limit, v_now) s;
    v_wait_ms := ceil(extract(epoch from v_slot_at - v_now) * 1000)::int;
    if v_wait_ms <= p_max_wait_ms then
        update public.document_jobs_rate_limits l set next_at = v_next_at where l.provider = p_provider;
    end if;
    return jsonb_build_object(
        'reserved', v_wait_ms <= p_max_wait_ms, 'wait_ms', v_wait_ms, 'limit', v_limit.requests_per_second);
end;
$$;

-- A slot for a request the worker makes besides the one start_fetch_email reserves (a second
-- page of a listing, a listing again for fresh download URLs).
create function public.reserve_provider_request(p_provider text, p_max_wait_ms int)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    return document_jobs_internal.reserve_request(p_provider, p_max_wait_ms);
end;
$$;

-- What the provider said about its limit: p_limit, the team's real limit (Resend's
-- ratelimit-limit, sent with every answer; the worker tells only when it differs from what it was
-- told here), and p_retry_after, a 429 that came anyway: no slot is handed out before it has
-- passed, to any worker. At most an hour: a longer pause would stop every job for longer than
-- any rate limit asks. Answers the limiter's state: {"limit", "paused_until"}.
create function public.note_provider_rate_limit(
    p_provider text,
    p_limit int default null,
    p_retry_after interval default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_state jsonb;
begin
    if p_limit is not null and p_limit not between 1 and 1000 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 1000';
    end if;
    if p_retry_after is not null and p_retry_after not between interval '0' and interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_retry_after must be between 0 and 1 hour';
    end if;
    update public.document_jobs_rate_limits l
       set requests_per_second = coalesce(p_limit, l.requests_per_second),
           learned_at = case when p_limit is null then l.learned_at else now() end,
           paused_until = case when p_retry_after is null then l.paused_until
                               else greatest(l.paused_until, clock_timestamp() + p_retry_after) end
     where l.provider = p_provider
    returning jsonb_build_object('limit', l.requests_per_second, 'paused_until', l.paused_until) into v_state;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    return v_state;
end;
$$;

-- What a fetch_email job needs before it calls Resend, in one round trip (it used to be two
-- table reads): its e-mail's provider id, the attachments already stored, and the slot of its
-- listing request from the Resend limiter. Fenced like every call after a claim: null once
-- (p_job_id, p_generation) no longer holds the job. {"email": null} when the e-mail row is gone
-- (and no slot is reserved: there is nothing to ask Resend for).
create function public.start_fetch_email(p_job_id uuid, p_generation int, p_max_wait_ms int)
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
        return null;
    end if;
    select jsonb_build_object('id', e.id, 'provider_email_id', e.provider_email_id) into v_email
      from public.fax_received_emails e
     where e.id = v_email_row_id;
    if v_email is null then
        return jsonb_build_object('email', null);
    end if;
    return jsonb_build_object(
        'email', v_email,
        'stored_attachment_ids', coalesce(
            (select jsonb_agg(a.provider_attachment_id order by a.provider_attachment_id)
               from public.fax_received_email_attachments a
              where a.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'resend', document_jobs_internal.reserve_request('resend', p_max_wait_ms));
end;
$$;

revoke all on function
    public.reserve_provider_request(text, int),
    public.note_provider_rate_limit(text, int, interval),
    public.start_fetch_email(uuid, int, int)
from public, anon, authenticated;
grant execute on function
    public.reserve_provider_request(text, int),
    public.note_provider_rate_limit(text, int, interval),
    public.start_fetch_email(uuid, int, int)
to service_role;
revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
