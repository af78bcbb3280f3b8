-- The shared provider rate limit: its schedule (replayed for arrivals of every shape: served in
-- order, never more than the rate in any one-second window), reservations, the limit learned
-- from the provider, a 429's pause, start_fetch_email_v2, and the bounds of every new argument.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(40);


-- The slots rate_limit_slot hands out for p_arrivals (in order), from an idle limiter.
create function t.replay(p_rate int, p_share numeric, p_burst int, p_arrivals timestamptz[])
returns timestamptz[]
language plpgsql as $$
declare
    v_limit public.document_jobs_rate_limits;
    v_slots timestamptz[] := '{}';
    v_slot timestamptz;
    v_arrival timestamptz;
begin
    v_limit.requests_per_second := p_rate;
    v_limit.share_for_others := p_share;
    v_limit.burst := p_burst;
    v_limit.next_at := '-infinity';
    foreach v_arrival in array p_arrivals loop
        select s.slot_at, s.next_at into v_slot, v_limit.next_at
          from document_jobs_internal.rate_limit_slot(v_limit, v_arrival) s;
        v_slots := v_slots || v_slot;
    end loop;
    return v_slots;
end $$;

-- The most slots within any half-open second [s, s + 1 s).
create function t.busiest_second(p_slots timestamptz[]) returns bigint language sql as $$
    select coalesce(max((select count(*) from unnest(p_slots) o where o >= s and o < s + interval '1 second')), 0)
      from unnest(p_slots) s
$$;

-- Served in order, and never before the request arrived.
create function t.in_order(p_slots timestamptz[], p_arrivals timestamptz[]) returns boolean language sql as $$
    select bool_and(s.slot >= s.arrival and (s.n = 1 or s.slot >= p_slots[s.n - 1]))
      from unnest(p_slots, p_arrivals) with ordinality s(slot, arrival, n)
$$;

-- Arrivals of every shape: bursts of 20 at once 3 s apart, a random trickle, a crowd of 100.
select setseed(0.23);
create table t.arrivals as
select 'bursts'::text as shape,
       array(select timestamptz '2026-12-01 00:00' + (i / 20) * interval '3 seconds'
               from generate_series(0, 199) i) as at
union all
select 'trickle', array(select timestamptz '2026-12-01 00:00' + x * interval '40 seconds'
                          from (select random() as x from generate_series(1, 200)) r order by x)
union all
select 'crowd', array_fill(timestamptz '2026-12-01 00:00', array[100]);

create table t.settings (rate int, share numeric, burst int);
insert into t.settings values (5, 0.2, 0), (5, 0.2, 1), (5, 0, 1), (5, 0.1, 1), (2, 0.2, 1), (10, 0.5, 1),
                              (1, 0, 0), (1, 0.9, 1);

select is_empty(
    $$ select s.*, a.shape, t.busiest_second(t.replay(s.rate, s.share, s.burst, a.at)) as busiest
         from t.settings s, t.arrivals a
        where t.busiest_second(t.replay(s.rate, s.share, s.burst, a.at)) > s.rate $$,
    'no one-second window, wherever it starts, holds more slots than the rate, for any settings and arrivals');
select is_empty(
    $$ select s.*, a.shape from t.settings s, t.arrivals a
        where not t.in_order(t.replay(s.rate, s.share, s.burst, a.at), a.at) $$,
    'the slots are handed out in order, and never before the request arrived');
select is(t.busiest_second(t.replay(5, 0.2, 0, (select at from t.arrivals where shape = 'crowd'))), 4::bigint,
          'with a fifth left to others, a crowd gets 4 slots a second');
select is((select max(s) - min(s) from unnest(t.replay(5, 0.2, 0, (select at from t.arrivals where shape = 'crowd'))) s),
          99 * interval '250 milliseconds',
          '... 250 ms apart: 100 slots span 99 intervals');
select is((t.replay(5, 0.2, 1, (select at from t.arrivals where shape = 'crowd')))[1:3],
          array[timestamptz '2026-12-01 00:00', '2026-12-01 00:00', '2026-12-01 00:00:00.25'],
          'a burst of one lets two go at once after a quiet spell, then the spacing holds');
select is((t.replay(5, 0, 1, (select at from t.arrivals where shape = 'crowd')))[1:2],
          array[timestamptz '2026-12-01 00:00', '2026-12-01 00:00:00.2'],
          'with nothing left to others there is no room for a burst: 5 a second already fill the window');

-- Reservations through the API, on the real clock: the row is the one every worker shares. The
-- slot a reservation took is read from the schedule it moved (with no burst, a reservation sets
-- next_at to its slot plus one spacing), so that these tests do not depend on how long a call
-- takes on a busy machine; the wait it answered is checked against the slot from both ends of
-- the call.
create function t.reserve(
    p_max_wait_ms int,
    out reserved boolean,
    out slot_at timestamptz,
    out wait_ms int,
    out asked_at timestamptz,
    out answered_at timestamptz
)
language plpgsql as $$
declare
    v_answer jsonb;
begin
    asked_at := clock_timestamp();
    v_answer := reserve_provider_request('resend', p_max_wait_ms);
    answered_at := clock_timestamp();
    reserved := (v_answer ->> 'reserved')::boolean;
    wait_ms := (v_answer ->> 'wait_ms')::int;
    select case when reserved then
               l.next_at - ceil(1000000 / (l.requests_per_second * (1 - l.share_for_others))) * interval '1 microsecond'
           end
      into slot_at
      from document_jobs_rate_limits l
     where l.provider = 'resend';
end $$;

update document_jobs_rate_limits set next_at = '-infinity', paused_until = null, requests_per_second = 5,
       share_for_others = 0.2, burst = 0, enabled = true where provider = 'resend';
create table t.slots as select n, r.* from generate_series(1, 6) n cross join lateral t.reserve(10000 + 0 * n) r;  -- once per n
select is((select array_agg(s.slot_at - f.slot_at order by s.n) from t.slots s, t.slots f where f.n = 1),
          array(select n * interval '250 milliseconds' from generate_series(0, 5) n),
          'consecutive reservations get slots 0, 250, 500, ... ms after the first');
select ok((select bool_and(s.asked_at + s.wait_ms * interval '1 millisecond' <= s.slot_at + interval '1 millisecond'
                           and s.answered_at + s.wait_ms * interval '1 millisecond' >= s.slot_at)
             from t.slots s),
          '... and the wait each answered, counted from the database''s clock during the call, ends at its slot: never early');
select is((select (r.reserved, r.wait_ms > 100) from t.reserve(100) r), (false, true),
          'a slot further away than the caller can wait is not taken');
select is((select r.slot_at - f.slot_at from t.reserve(10000) r, t.slots f where f.n = 1),
          interval '1500 milliseconds',
          '... and the schedule did not move for it: the next is the seventh');
select is((select reserved from t.reserve(0)), false, 'a caller that cannot wait gets no slot ahead');

-- The team's real limit, as Resend's ratelimit-limit says it.
update document_jobs_rate_limits set next_at = '-infinity' where provider = 'resend';
select is(note_provider_rate_limit('resend', 10) ->> 'limit', '10', 'the learned limit is stored');
select ok((select learned_at is not null and requests_per_second = 10 from document_jobs_rate_limits),
          '... with when it was learned');
select is(reserve_provider_request('resend', 10000) ->> 'limit', '10', 'reservations report it');
create table t.learned as select n, r.* from generate_series(1, 2) n cross join lateral t.reserve(10000 + 0 * n) r;  -- once per n
select is((select b.slot_at - a.slot_at from t.learned a, t.learned b where a.n = 1 and b.n = 2),
          interval '125 milliseconds',
          '... and are spaced by it: 10 a second less a fifth, 125 ms apart');
select is(document_jobs_internal.invocation_cap(), 20, 'the default cap follows the learned rate: three times 8 a second, at most 20');

-- A 429 that came anyway: nobody gets a slot before its retry-after.
create table t.paused as select clock_timestamp() as asked_at,
                                (note_provider_rate_limit('resend', null, '3 seconds') ->> 'paused_until')::timestamptz
                                as until,
                                clock_timestamp() as answered_at;
select ok((select until between asked_at + interval '3 seconds' and answered_at + interval '3 seconds' from t.paused),
          'a 429 pauses the limiter for its retry-after');
select is((select r.slot_at from t.reserve(10000) r), (select until from t.paused),
          '... so the next slot is when the pause ends');
select is((select requests_per_second from document_jobs_rate_limits), 10, '... and the learned limit stays');
update document_jobs_rate_limits set enabled = false;
select is(reserve_provider_request('resend', 0), '{"reserved": true, "wait_ms": 0, "limit": 10}'::jsonb,
          'a limiter switched off answers no wait');
update document_jobs_rate_limits set enabled = true;

-- start_fetch_email_v2: the e-mail, what is stored, the slot; fenced.
update document_jobs_rate_limits set next_at = '-infinity', paused_until = null;
insert into fax_received_emails (provider_email_id, data) values ('em_start', '{}');
select enqueue_document_job('fetch_email', (select id from fax_received_emails where provider_email_id = 'em_start'));
create table t.claimed as select * from claim_document_jobs('fetch_email');
insert into fax_received_email_attachments
       (fax_received_email_id, provider_attachment_id, content_type, size_bytes, sha256, bucket, storage_path)
select fax_received_email_id, a, 'application/pdf', 1, repeat('0', 64), 'fax-attachments', 'x/' || a
  from t.claimed, unnest(array['att_2', 'att_1']) a;
create table t.started as select start_fetch_email_v2(id, generation, 5000) as answer from t.claimed;
select is((select answer #>> '{email,provider_email_id}' from t.started), 'em_start', 'the e-mail''s provider id');
select is((select answer -> 'stored_attachment_ids' from t.started), '["att_1", "att_2"]'::jsonb,
          'the attachments already stored');
select is((select answer -> 'resend' from t.started), '{"reserved": true, "wait_ms": 0, "limit": 10}'::jsonb,
          'and the listing''s slot');
select ok((select next_at > clock_timestamp() from document_jobs_rate_limits), '... which moved the schedule');
select is((select start_fetch_email_v2(id, generation + 1, 5000) from t.claimed), '{"held": false, "state": null}',
          'another generation does not hold the job: it is not its own');
update document_jobs_rate_limits set next_at = '-infinity';
-- Its job goes (an e-mail's row never does: it is the record).
delete from document_jobs where fax_received_email_id = (select id from fax_received_emails where provider_email_id = 'em_start');
insert into fax_received_emails (provider_email_id, data) values ('em_gone', '{}');
select enqueue_document_job('fetch_email', (select id from fax_received_emails where provider_email_id = 'em_gone'));
create table t.gone as select * from claim_document_jobs('fetch_email');
update document_jobs set fax_received_email_id = null where id = (select id from t.gone);
select is((select start_fetch_email_v2(id, generation, 5000) from t.gone),
          '{"held": true, "state": "running", "email": null}'::jsonb,
          'a job whose e-mail row is gone gets no e-mail');
select is((select next_at from document_jobs_rate_limits), '-infinity'::timestamptz, '... and reserves no slot');

-- Bounds of the new arguments: 22023 and a message naming the argument.
select throws_ok($$select reserve_provider_request('resend', -1)$$, '22023',
                 'p_max_wait_ms must be between 0 and 300000', 'a negative wait is refused');
select throws_ok($$select reserve_provider_request('resend', 300001)$$, '22023',
                 'p_max_wait_ms must be between 0 and 300000', '... and one longer than the worker may run');
select throws_ok($$select reserve_provider_request('resend', null)$$, '22023',
                 'p_max_wait_ms must be between 0 and 300000', '... and none');
select throws_ok($$select reserve_provider_request('sendgrid', 1000)$$, '22023',
                 'unknown provider ''sendgrid'' (see table document_jobs_rate_limits)', 'an unknown provider is refused');
select throws_ok(format('select start_fetch_email_v2(%L, 1, 300001)', (select id from t.gone)), '22023',
                 'p_max_wait_ms must be between 0 and 300000', 'start_fetch_email_v2 holds its wait to the same bounds');
select throws_ok($$select start_fetch_email_v2(null, 1, 0)$$, '22023', 'p_job_id must not be null',
                 '... and needs a job');
select throws_ok($$select note_provider_rate_limit('resend', 0)$$, '22023', 'p_limit must be between 1 and 1000',
                 'a limit of none is refused');
select throws_ok($$select note_provider_rate_limit('resend', 1001)$$, '22023', 'p_limit must be between 1 and 1000',
                 '... and of more than a thousand a second');
select throws_ok($$select note_provider_rate_limit('resend', null, '61 minutes')$$, '22023',
                 'p_retry_after must be between 0 and 1 hour', 'a pause of more than an hour is refused');
select throws_ok($$select note_provider_rate_limit('resend', null, '-1 second')$$, '22023',
                 'p_retry_after must be between 0 and 1 hour', '... and a negative one');
select throws_ok($$select note_provider_rate_limit('sendgrid', 5)$$, '22023',
                 'unknown provider ''sendgrid'' (see table document_jobs_rate_limits)', '... and an unknown provider');
select throws_ok($$update document_jobs_rate_limits set burst = 2$$, '23514', null,
                 'a burst of more than one request is refused');
select throws_ok($$update document_jobs_rate_limits set share_for_others = 1$$, '23514', null,
                 'leaving everything to others is refused');

select * from finish();
rollback;
