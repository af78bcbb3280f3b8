-- Verification: the stored originals read back and compared with what was recorded.
--
-- Nothing noticed a stored object whose bytes no longer matched its row: an upsert of a stale
-- worker, a project owner's delete in the dashboard, an object replaced through Storage's API with
-- the secret key. Storage has no object lock, so detection is the product's: each original is
-- read back (never changed), its size and SHA-256 compared with its row.
--
-- Two paths read and record alike. document-jobs-admin verify reads every stored original (or
-- those stored --since, or a --sample), prints each mismatch and exits non-zero; a weekly job of
-- the queue, verify_originals, reads a sample (half of it among the originals stored in the last
-- recent_days, the rest among all, each drawn at random). Each run is a row of
-- original_verify_runs and each object it read a row of original_verifications: what was verified
-- when, in tables of their own (the received record's rows never change for it). A mismatch opens
-- the outage original_mismatch, alerting once per incident: a mismatch not yet known raises its
-- level and alerts, the same one found again next week does not, and once every known mismatch
-- reads as recorded again (the office restored it from its copy) the outage closes.
--
-- The job kind is claimed after every other (claim_order 4): nothing waits on it, and no fax is
-- fetched or prepared later for it. At most one is live at a time.

insert into public.document_job_kinds (kind, description, claim_order)
values ('verify_originals', 'read back a sample of the stored originals and compare each with its recorded size and SHA-256', 4);

create unique index document_jobs_one_live_verification
    on public.document_jobs (kind)
 where kind = 'verify_originals' and status in ('queued', 'running');

-- The sample's recent half is read from this index; the rest is a walk of the table, once a week.
create index fax_received_email_attachments_created_at on public.fax_received_email_attachments (created_at);

create table public.original_verification (
    singleton boolean primary key default true check (singleton),
    sample int not null default 100
        constraint original_verification_sample check (sample between 1 and 1000),
    recent_days int not null default 7
        constraint original_verification_recent_days check (recent_days between 1 and 366)
);
comment on table public.original_verification is
    'The weekly verification''s settings (the cron job document-jobs-verify enqueues a verify_originals job): how many originals a run reads back (sample), half of them drawn among those stored in the last recent_days (the week since the last run), the rest among all.';
alter table public.original_verification enable row level security;
revoke all on table public.original_verification from anon, authenticated, service_role;
grant select on table public.original_verification to service_role;
insert into public.original_verification default values;

create table public.original_verify_runs (
    id bigint generated always as identity primary key,
    started_at timestamptz not null default now(),
    finished_at timestamptz,
    started_by text not null constraint original_verify_runs_started_by check (started_by in ('job', 'cli')),
    job_id uuid,
    since timestamptz,
    sample int constraint original_verify_runs_sample check (sample between 1 and 100000),
    selected uuid[],
    total int not null constraint original_verify_runs_total check (total >= 0),
    checked int not null default 0,
    mismatched int not null default 0,
    constraint original_verify_runs_job check ((started_by = 'job') = (job_id is not null)),
    constraint original_verify_runs_selected check ((sample is null) = (selected is null))
);
create unique index original_verify_runs_of_a_job on public.original_verify_runs (job_id) where job_id is not null;
comment on table public.original_verify_runs is
    'One row per verification run: the weekly job''s (started_by job, its job_id: a job run again goes on with the same run) or document-jobs-admin verify''s (cli). It reads the originals stored since `since` (null: all) that were stored when it started, or, with `sample`, the originals drawn for it (`selected`); total is how many, checked how many it read so far, mismatched how many of those were not as recorded; finished_at when all were read.';
comment on sequence public.original_verify_runs_id_seq is
    'The identity of original_verify_runs.id: the order in which the runs started.';
alter table public.original_verify_runs enable row level security;
revoke all on table public.original_verify_runs from anon, authenticated, service_role;
revoke all on sequence public.original_verify_runs_id_seq from anon, authenticated, service_role;
grant select on table public.original_verify_runs to service_role;

create table public.original_verifications (
    run_id bigint not null references public.original_verify_runs (id),
    attachment_id uuid not null,
    checked_at timestamptz not null default now(),
    outcome text not null
        constraint original_verifications_outcome check (outcome in ('matches', 'missing', 'size_differs', 'sha256_differs')),
    read_size_bytes bigint,
    read_sha256 text constraint original_verifications_read_sha256 check (read_sha256 ~ '^[0-9a-f]{64}$'),
    primary key (run_id, attachment_id)
);
create index original_verifications_of_an_attachment on public.original_verifications (attachment_id, checked_at);
comment on table public.original_verifications is
    'What a verification run read of one stored original (an attachment row: every version of an attachment is a row of its own): matches, missing (Storage answered 404), size_differs (read_size_bytes, null when it ran past the recorded size) or sha256_differs (read_sha256). Only appended to; no foreign key to the attachment, so that the history outlives nothing it should not and blocks no audited deletion.';
alter table public.original_verifications enable row level security;
revoke all on table public.original_verifications from anon, authenticated, service_role;
grant select on table public.original_verifications to service_role;

create table document_jobs_internal.original_mismatches (
    id bigint generated always as identity unique,
    attachment_id uuid primary key,
    outcome text not null,
    found_at timestamptz not null default now(),
    last_seen_at timestamptz not null default now()
);
comment on table document_jobs_internal.original_mismatches is
    'The mismatches known now, one row per original that the last read of it found not as recorded: the outage original_mismatch holds while there is one, its level the newest row''s id (a mismatch not known before alerts once; found again, it alerts nobody). A read that finds it as recorded again removes its row. State, not the record: the history is original_verifications.';
comment on sequence document_jobs_internal.original_mismatches_id_seq is
    'The identity of original_mismatches.id: the order in which the mismatches were first found, the outage''s level.';
revoke all on table document_jobs_internal.original_mismatches from anon, authenticated, service_role;

insert into document_jobs_internal.outages (cause) values ('original_mismatch');

-- --- choosing what a run reads -----------------------------------------------------------------

create function document_jobs_internal.original_sample(p_count int, p_since timestamptz, p_recent interval)
returns uuid[]
language sql
volatile
set search_path = ''
as $$
    with recent as (
        select a.id
          from public.fax_received_email_attachments a
         where a.created_at >= greatest(now() - p_recent, coalesce(p_since, '-infinity'))
         order by random()
         limit ceil(p_count / 2.0)
    ), rest as (
        select a.id
          from public.fax_received_email_attachments a
         where a.created_at >= coalesce(p_since, '-infinity')
           and a.id not in (select r.id from recent r)
         order by random()
         limit p_count - (select count(*) from recent)
    )
    select coalesce(array_agg(s.id), '{}') from (select id from recent union all select id from rest) s
$$;
comment on function document_jobs_internal.original_sample(int, timestamptz, interval) is
    'p_count stored originals (attachment rows) stored since p_since (null: all), drawn at random: up to half among those stored within p_recent (the week since the last weekly run: a new original is read back soon), the rest among all the others.';
revoke all on function document_jobs_internal.original_sample(int, timestamptz, interval) from public, anon, authenticated, service_role;

create function document_jobs_internal.start_verify_run(p_started_by text, p_job_id uuid, p_since timestamptz,
                                                        p_sample int) returns public.original_verify_runs
language plpgsql
set search_path = ''
as $$
declare
    v_recent interval;
    v_selected uuid[];
    v_run public.original_verify_runs;
begin
    perform document_jobs_internal.require(p_sample is null or p_sample between 1 and 100000,
                                           'p_sample must be between 1 and 100000');
    perform document_jobs_internal.require(p_since is null or p_since <= now(), 'p_since must not be in the future');
    if p_sample is not null then
        select make_interval(days => s.recent_days) into v_recent from public.original_verification s;
        v_selected := document_jobs_internal.original_sample(p_sample, p_since, v_recent);
    end if;
    insert into public.original_verify_runs (started_by, job_id, since, sample, selected, total)
    values (p_started_by, p_job_id, p_since, p_sample, v_selected,
            coalesce(cardinality(v_selected),
                     (select count(*) from public.fax_received_email_attachments a
                       where a.created_at >= coalesce(p_since, '-infinity'))))
    returning * into v_run;
    return v_run;
end;
$$;
comment on function document_jobs_internal.start_verify_run(text, uuid, timestamptz, int) is
    'A new verification run: of every original stored since p_since (null: all), or of a sample of p_sample of them drawn now (original_sample).';
revoke all on function document_jobs_internal.start_verify_run(text, uuid, timestamptz, int) from public, anon, authenticated, service_role;

create function document_jobs_internal.verify_items(p_run public.original_verify_runs, p_after uuid, p_limit int)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select coalesce(jsonb_agg(jsonb_build_object(
               'id', a.id, 'fax_received_email_id', a.fax_received_email_id, 'filename', a.filename, 'bucket', a.bucket,
               'storage_path', a.storage_path, 'size_bytes', a.size_bytes, 'sha256', a.sha256)
             order by a.id), '[]')
      from (select a.*
              from public.fax_received_email_attachments a
             where (p_after is null or a.id > p_after)
               and case when p_run.selected is not null then a.id = any (p_run.selected)
                        else a.created_at >= coalesce(p_run.since, '-infinity') and a.created_at <= p_run.started_at end
               and not exists (select 1 from public.original_verifications v
                                where v.run_id = p_run.id and v.attachment_id = a.id)
             order by a.id
             limit p_limit) a
$$;
comment on function document_jobs_internal.verify_items(public.original_verify_runs, uuid, int) is
    'The next p_limit originals of a run not read yet, by id after p_after: where each is (bucket, storage_path), what it must be (size_bytes, sha256), the sender''s file name (filename: to be shown as inert text) and its fax (fax_received_email_id, whose first 8 characters are the fax''s short id).';
revoke all on function document_jobs_internal.verify_items(public.original_verify_runs, uuid, int) from public, anon, authenticated, service_role;

-- --- recording what was read -------------------------------------------------------------------

create function document_jobs_internal.check_original_mismatches() returns int
language plpgsql
set search_path = ''
as $$
declare
    v_open record;
begin
    select count(*) as n, max(m.id) as newest,
           jsonb_agg(jsonb_build_object('fax', left(a.fax_received_email_id::text, 8), 'attachment_id', m.attachment_id,
                                        'object', a.bucket || '/' || a.storage_path, 'outcome', m.outcome,
                                        'found_at', m.found_at) order by m.id desc)
               filter (where m.id is not null) as shown
      into v_open
      from document_jobs_internal.original_mismatches m
      left join public.fax_received_email_attachments a on a.id = m.attachment_id;
    return document_jobs_internal.set_outage_once(
        'original_mismatch',
        coalesce(v_open.newest, 0),
        format('%s stored originals are not what was recorded when they were stored (missing, or another size or SHA-256); faxes: %s. document-jobs-admin verify prints each',
               v_open.n,
               (select string_agg(s ->> 'fax', ', ') from (select jsonb_array_elements(v_open.shown) s limit 20) x)),
        'every original found not as recorded reads as recorded again',
        jsonb_build_object('count', v_open.n, 'originals', coalesce(jsonb_path_query_array(v_open.shown, '$[0 to 19]'), '[]')));
end;
$$;
comment on function document_jobs_internal.check_original_mismatches() is
    'The outage original_mismatch from the mismatches known now (original_mismatches), through set_outage_once: its level is the newest mismatch''s id, so a new one alerts once and one found again does not; none left closes it (with a recovered alert). The summary names the faxes by their short ids (never a sender''s text). Called whenever a run records what it read.';
revoke all on function document_jobs_internal.check_original_mismatches() from public, anon, authenticated, service_role;

create function document_jobs_internal.try_uuid(p_text text) returns uuid
language plpgsql
immutable
set search_path = ''
as $$
begin
    return p_text::uuid;
exception when invalid_text_representation then
    return null;
end;
$$;
comment on function document_jobs_internal.try_uuid(text) is 'p_text as a uuid, or null when it is none.';
revoke all on function document_jobs_internal.try_uuid(text) from public, anon, authenticated, service_role;

create function document_jobs_internal.record_original_checks(p_run_id bigint, p_checks jsonb) returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_run public.original_verify_runs;
    v_item jsonb;
    v_row public.fax_received_email_attachments;
    v_found boolean;
    v_size bigint;
    v_sha256 text;
    v_outcome text;
    v_checked int := 0;
    v_mismatched int := 0;
    v_mismatches jsonb := '[]'::jsonb;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_checks) = 'array', 'p_checks must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_checks) <= 100, 'p_checks holds at most 100 reads');
    select * into v_run from public.original_verify_runs r where r.id = p_run_id for update;
    perform document_jobs_internal.require(found, format('no verification run %s', p_run_id));
    for v_item in select e.value from jsonb_array_elements(p_checks) e loop
        select * into v_row from public.fax_received_email_attachments a
         where a.id = document_jobs_internal.try_uuid(v_item ->> 'attachment_id');
        perform document_jobs_internal.require(found, format('%s is no stored original', v_item ->> 'attachment_id'));
        perform document_jobs_internal.require(v_run.selected is null or v_row.id = any (v_run.selected),
                                               format('%s is not in run %s''s sample', v_row.id, p_run_id));
        v_found := coalesce((v_item ->> 'found')::boolean, false);
        v_size := (v_item ->> 'size_bytes')::bigint;
        v_sha256 := nullif(v_item ->> 'sha256', '');
        -- The database judges by what was read, as lib/originals.py compare does.
        v_outcome := case when not v_found then 'missing'
                          when v_size is distinct from v_row.size_bytes then 'size_differs'
                          when v_sha256 is distinct from v_row.sha256 then 'sha256_differs'
                          else 'matches' end;
        insert into public.original_verifications (run_id, attachment_id, outcome, read_size_bytes, read_sha256)
        values (p_run_id, v_row.id, v_outcome, case when v_found then v_size end, case when v_found then v_sha256 end)
        on conflict (run_id, attachment_id) do nothing;
        if not found then
            continue;  -- read twice in one run (a job run again): the first read stands
        end if;
        v_checked := v_checked + 1;
        if v_outcome = 'matches' then
            delete from document_jobs_internal.original_mismatches m where m.attachment_id = v_row.id;
        else
            v_mismatched := v_mismatched + 1;
            v_mismatches := v_mismatches || jsonb_build_object('attachment_id', v_row.id, 'outcome', v_outcome);
            insert into document_jobs_internal.original_mismatches (attachment_id, outcome)
            values (v_row.id, v_outcome)
            on conflict (attachment_id) do update set outcome = excluded.outcome, last_seen_at = now();
        end if;
    end loop;
    update public.original_verify_runs r
       set checked = r.checked + v_checked,
           mismatched = r.mismatched + v_mismatched,
           finished_at = case when r.checked + v_checked >= r.total then coalesce(r.finished_at, now()) end
     where r.id = p_run_id;
    return jsonb_build_object('checked', v_checked, 'mismatched', v_mismatched, 'mismatches', v_mismatches,
                              'alerts', document_jobs_internal.check_original_mismatches());
end;
$$;
comment on function document_jobs_internal.record_original_checks(bigint, jsonb) is
    'Records what a run read of at most 100 originals (p_checks: {"attachment_id", "found", "size_bytes", "sha256"}; size_bytes null when the object ran past its recorded size), judged against each one''s row here (matches, missing, size_differs, sha256_differs), once per original and run; updates the known mismatches (a match removes one) and the outage original_mismatch. Answers {"checked", "mismatched", "mismatches": [{"attachment_id", "outcome"}], "alerts"}.';
revoke all on function document_jobs_internal.record_original_checks(bigint, jsonb) from public, anon, authenticated, service_role;

-- --- the CLI's calls (document-jobs-admin verify) ------------------------------------------------

create function public.start_original_verification(p_since timestamptz default null, p_sample int default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_run public.original_verify_runs;
begin
    v_run := document_jobs_internal.start_verify_run('cli', null, p_since, p_sample);
    return jsonb_build_object('run_id', v_run.id, 'total', v_run.total, 'started_at', v_run.started_at);
end;
$$;
comment on function public.start_original_verification(timestamptz, int) is
    'document-jobs-admin verify''s run: of every original stored since p_since (null: all), or a random sample of p_sample of them (half among the recent ones, as the weekly job draws). Answers {"run_id", "total", "started_at"}.';
revoke all on function public.start_original_verification(timestamptz, int) from public, anon, authenticated;
grant execute on function public.start_original_verification(timestamptz, int) to service_role;

create function public.original_verification_items(p_run_id bigint, p_after uuid default null, p_limit int default 100)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_run public.original_verify_runs;
begin
    perform document_jobs_internal.require(p_limit between 1 and 1000, 'p_limit must be between 1 and 1000');
    select * into v_run from public.original_verify_runs r where r.id = p_run_id;
    perform document_jobs_internal.require(found, format('no verification run %s', p_run_id));
    return document_jobs_internal.verify_items(v_run, p_after, p_limit);
end;
$$;
comment on function public.original_verification_items(bigint, uuid, int) is
    'The next p_limit originals of a verification run not read yet, by id after p_after (the cursor: the last id of the previous page): verify_items.';
revoke all on function public.original_verification_items(bigint, uuid, int) from public, anon, authenticated;
grant execute on function public.original_verification_items(bigint, uuid, int) to service_role;

create function public.record_original_checks(p_run_id bigint, p_checks jsonb) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_by text;
begin
    select r.started_by into v_by from public.original_verify_runs r where r.id = p_run_id;
    perform document_jobs_internal.require(v_by = 'cli', format('run %s is no run of the CLI''s', p_run_id));
    return document_jobs_internal.record_original_checks(p_run_id, p_checks);
end;
$$;
comment on function public.record_original_checks(bigint, jsonb) is
    'What document-jobs-admin verify read of at most 100 originals of its run, recorded and judged (document_jobs_internal.record_original_checks): a job''s run is recorded only through its fenced call.';
revoke all on function public.record_original_checks(bigint, jsonb) from public, anon, authenticated;
grant execute on function public.record_original_checks(bigint, jsonb) to service_role;

-- --- the weekly job --------------------------------------------------------------------------------

create function public.enqueue_original_verification() returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id uuid;
begin
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('verify_originals', null)
    on conflict (kind) where kind = 'verify_originals' and status in ('queued', 'running') do nothing
    returning id into v_id;
    if v_id is not null then
        perform document_jobs_internal.post_worker(1);
    end if;
    return v_id;
end;
$$;
comment on function public.enqueue_original_verification() is
    'The cron job document-jobs-verify''s call: enqueues a verify_originals job with a kick, unless one is queued or running (then null: at most one at a time).';
revoke all on function public.enqueue_original_verification() from public, anon, authenticated;
grant execute on function public.enqueue_original_verification() to service_role;

create function public.start_verify_originals_v2(p_job_id uuid, p_generation int) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_run public.original_verify_runs;
    v_sample int;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'verify_originals';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select * into v_run from public.original_verify_runs r where r.job_id = p_job_id;
    if not found then
        select s.sample into v_sample from public.original_verification s;
        v_run := document_jobs_internal.start_verify_run('job', p_job_id, null, v_sample);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'run_id', v_run.id, 'total', v_run.total,
                              'items', document_jobs_internal.verify_items(v_run, null, 1000));
end;
$$;
comment on function public.start_verify_originals_v2(uuid, int) is
    'What a verify_originals job reads, fenced like every call after a claim: its run (drawn on its first start, the same on a start again: "run_id", "total") and the originals of it not read yet ("items": id, fax_received_email_id, bucket, storage_path, size_bytes, sha256).';
revoke all on function public.start_verify_originals_v2(uuid, int) from public, anon, authenticated;
grant execute on function public.start_verify_originals_v2(uuid, int) to service_role;

create function public.record_original_checks_v2(p_job_id uuid, p_generation int, p_run_id bigint, p_checks jsonb,
                                                 p_lease interval default null) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    -- Reading originals is progress: it ends a streak of time-budget releases, as storing one does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until),
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'verify_originals';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(
        exists (select 1 from public.original_verify_runs r where r.id = p_run_id and r.job_id = p_job_id),
        format('run %s is not the job''s', p_run_id));
    return jsonb_build_object('held', true, 'state', 'running')
           || document_jobs_internal.record_original_checks(p_run_id, p_checks);
end;
$$;
comment on function public.record_original_checks_v2(uuid, int, bigint, jsonb, interval) is
    'What a verify_originals job read of at most 100 originals of its run, recorded and judged (document_jobs_internal.record_original_checks), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given. Answers {"held", "state"} with "checked", "mismatched", "mismatches" and "alerts".';
revoke all on function public.record_original_checks_v2(uuid, int, bigint, jsonb, interval) from public, anon, authenticated;
grant execute on function public.record_original_checks_v2(uuid, int, bigint, jsonb, interval) to service_role;

-- --- the outage's advice -----------------------------------------------------------------------------
-- lib/failures.py OUTAGES' operator's advice, word for word (tests/database/test_advice_is_lib_advice.py).
-- The functions of the causes before are kept under a name of their own and asked for every other
-- cause, so that this migration repeats none of their texts.

alter function document_jobs_internal.outage_advice(text) rename to outage_advice_before_verification;
alter function document_jobs_internal.outage_advice_ja(text) rename to outage_advice_ja_before_verification;

create function document_jobs_internal.outage_advice(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select case p_cause
           when 'original_mismatch' then
               'Run document-jobs-admin verify: it prints each fax (by its short id) whose stored original is missing or differs. For each, look at the object in Storage''s dashboard (its size and last modified time) and in the project''s logs (who wrote or deleted it, and when), then put the original back at the same key from the office''s own copy (the export) and run document-jobs-admin verify again: the outage closes once every original reads as recorded. Record what happened under the office''s rule.'
           else document_jobs_internal.outage_advice_before_verification(p_cause) end
$$;
comment on function document_jobs_internal.outage_advice(text) is
    'The operator''s advice of an outage cause in English (lib/failures.py''s, word for word): original_mismatch''s here, every other cause''s from outage_advice_before_verification.';
revoke all on function document_jobs_internal.outage_advice(text) from public, anon, authenticated, service_role;

create function document_jobs_internal.outage_advice_ja(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select case p_cause
           when 'original_mismatch' then
               'document-jobs-admin verify を実行してください。保存した原本がない、または一致しない FAX が短い ID とともに表示されます。それぞれについて、Storage のダッシュボードでそのオブジェクト（サイズと最終更新日時）を、プロジェクトのログで誰がいつ書き込みまたは削除したかを確認し、事務所の控え（エクスポート）から同じキーに原本を戻したうえで、もう一度 document-jobs-admin verify を実行してください。すべての原本が記録どおりに読めると、この障害は閉じます。経緯は事務処理規程に従って記録してください。'
           else document_jobs_internal.outage_advice_ja_before_verification(p_cause) end
$$;
comment on function document_jobs_internal.outage_advice_ja(text) is
    'The operator''s advice of an outage cause in Japanese (lib/failures.py''s, word for word): original_mismatch''s here, every other cause''s from outage_advice_ja_before_verification.';
revoke all on function document_jobs_internal.outage_advice_ja(text) from public, anon, authenticated, service_role;

-- Sunday 03:00 in Japan (18:00 UTC on Saturday), when no office is receiving faxes.
select cron.schedule('document-jobs-verify', '0 18 * * 6', 'select public.enqueue_original_verification()');
