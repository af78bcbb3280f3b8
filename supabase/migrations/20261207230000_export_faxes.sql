-- The export from the screen: an admin asks for the originals filed in a date range (the CLI's
-- --from/--to, export_documents' selection), and a job of the queue, export_faxes, builds the
-- archive in Storage: a function's answer (4.5 MB) and time limit cannot carry a year's faxes.
--
-- The archive is zip parts of at most about 40 MB each (lib/worker/export_faxes.py), each built
-- in one invocation from the originals streamed from Storage and stored under the export's own
-- prefix exports/<export id>/ (never an original's key, never fax_views/), then index.csv and
-- SHA256SUMS, which cover every part's files (unzipped into one folder, `sha256sum -c SHA256SUMS`
-- checks the whole export). Each stored part is a row of fax_export_parts, and each original in
-- it a row of fax_export_files (its name in the archive, its SHA-256 as checked while it was read,
-- its CSV row), recorded by a call fenced by the job's generation like every other kind's write:
-- a job released or retried goes on after the last recorded part, and a part stored but not
-- recorded (the invocation ended between) is built and stored again over it.
--
-- The admin's request is audited (action export) and enqueues the job; at most one export is
-- queued or running at a time (a year's export is hours of one worker's time, and nothing else
-- waits on it). The kind is claimed after every other (claim_order 5). The screen reads the
-- exports (admins only) and signs each stored object's URL on demand, for an hour; no URL is stored.

insert into public.document_job_kinds (kind, description, claim_order)
values ('export_faxes', 'build an export of the originals filed in a date range in Storage under exports/<export id>/: zip parts, index.csv and SHA256SUMS', 5);

create unique index document_jobs_one_live_export
    on public.document_jobs (kind)
 where kind = 'export_faxes' and status in ('queued', 'running');

create table public.fax_exports (
    id uuid primary key default gen_random_uuid(),
    job_id uuid not null unique,
    requested_at timestamptz not null default now(),
    requested_by uuid not null,
    requested_by_email text,
    date_from date not null,
    date_to date not null,
    stored_before timestamptz not null,
    total int not null constraint fax_exports_total check (total >= 0),
    bucket text,
    written int not null default 0,
    bytes bigint not null default 0,
    index_path text,
    index_size_bytes bigint,
    index_sha256 text constraint fax_exports_index_sha256 check (index_sha256 ~ '^[0-9a-f]{64}$'),
    sums_path text,
    sums_size_bytes bigint,
    sums_sha256 text constraint fax_exports_sums_sha256 check (sums_sha256 ~ '^[0-9a-f]{64}$'),
    finished_at timestamptz,
    constraint fax_exports_range check (date_from <= date_to),
    constraint fax_exports_finished check ((finished_at is null) = (sums_sha256 is null))
);
comment on table public.fax_exports is
    'One export asked for on the admin screen: the originals filed date_from..date_to (export_documents'' selection) and recorded before stored_before (the request''s time less five minutes), total of them; its job (export_faxes) writes zip parts (fax_export_parts), then index.csv and SHA256SUMS into bucket under exports/<id>/ (index_*, sums_*), written and bytes counting the originals stored in parts so far; finished_at once all are stored.';
alter table public.fax_exports enable row level security;
revoke all on table public.fax_exports from anon, authenticated, service_role;
grant select on table public.fax_exports to service_role;

create table public.fax_export_parts (
    export_id uuid not null references public.fax_exports (id),
    part int not null constraint fax_export_parts_part check (part >= 1),
    storage_path text not null,
    size_bytes bigint not null constraint fax_export_parts_size check (size_bytes >= 0),
    sha256 text not null constraint fax_export_parts_sha256 check (sha256 ~ '^[0-9a-f]{64}$'),
    originals int not null constraint fax_export_parts_originals check (originals >= 1),
    after_at timestamptz not null,
    after_id uuid not null,
    recorded_at timestamptz not null default now(),
    primary key (export_id, part)
);
comment on table public.fax_export_parts is
    'A zip part of an export, stored at storage_path (in the export''s bucket) with its size and SHA-256: the originals export_documents answers after the previous part''s cursor up to and including (after_at, after_id), the cursor the next part starts after.';
alter table public.fax_export_parts enable row level security;
revoke all on table public.fax_export_parts from anon, authenticated, service_role;
grant select on table public.fax_export_parts to service_role;

create table public.fax_export_files (
    export_id uuid not null references public.fax_exports (id),
    seq int not null constraint fax_export_files_seq check (seq >= 1),
    part int not null,
    name text not null constraint fax_export_files_name check (length(name) between 1 and 255),
    document_id uuid not null,
    size_bytes bigint not null,
    sha256 text not null constraint fax_export_files_sha256 check (sha256 ~ '^[0-9a-f]{64}$'),
    csv_row jsonb not null constraint fax_export_files_csv_row check (jsonb_typeof(csv_row) = 'array'),
    primary key (export_id, seq),
    foreign key (export_id, part) references public.fax_export_parts (export_id, part)
);
-- One name per export as a case-insensitive file system sees it: the parts are unzipped into one folder.
create unique index fax_export_files_name on public.fax_export_files (export_id, lower(name));
comment on table public.fax_export_files is
    'An original (an attachment or a raw e-mail, document_id) in an export''s part under its name in the archive, with the size and SHA-256 read from Storage (checked against its row as it was read) and its row of index.csv (csv_row, as lib/fax/export_files.py csv_row makes it), in the order of the export (seq).';
alter table public.fax_export_files enable row level security;
revoke all on table public.fax_export_files from anon, authenticated, service_role;
grant select on table public.fax_export_files to service_role;

-- The audit lists an export too (action "export"): the audit's actions as they are now, and
-- "export" (read from the constraint, so that an action another change added stays).
do $$
declare
    v_actions text[];
begin
    select array(select distinct m[1] from pg_constraint c,
                 regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') m
                  where c.conrelid = 'public.document_jobs_audit'::regclass
                    and c.conname = 'document_jobs_audit_action_check' order by 1)
      into v_actions;
    if not 'rotate' = any (v_actions) then
        raise exception 'document_jobs_audit_action_check does not read as expected: %', v_actions;
    end if;
    alter table public.document_jobs_audit drop constraint document_jobs_audit_action_check;
    execute format('alter table public.document_jobs_audit add constraint document_jobs_audit_action_check'
                   ' check (action = any (array[%s]))',
                   (select string_agg(quote_literal(a), ', ')
                      from unnest(array_append(array_remove(v_actions, 'export'), 'export')) a));
end;
$$;

-- --- what the screen shows -----------------------------------------------------------------------

create function document_jobs_internal.fax_export_read(p_export public.fax_exports) returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
        'id', p_export.id, 'job_id', p_export.job_id, 'requested_at', p_export.requested_at,
        'requested_by_email', p_export.requested_by_email, 'date_from', p_export.date_from,
        'date_to', p_export.date_to, 'stored_before', p_export.stored_before, 'total', p_export.total,
        'written', p_export.written, 'bytes', p_export.bytes, 'finished_at', p_export.finished_at,
        'bucket', p_export.bucket,
        'state', (select j.status from public.document_jobs j where j.id = p_export.job_id),
        'error_code', (select j.last_error_code from public.document_jobs j where j.id = p_export.job_id),
        'index', case when p_export.finished_at is not null then jsonb_build_object(
                     'path', p_export.index_path, 'size_bytes', p_export.index_size_bytes,
                     'sha256', p_export.index_sha256) end,
        'sums', case when p_export.finished_at is not null then jsonb_build_object(
                    'path', p_export.sums_path, 'size_bytes', p_export.sums_size_bytes,
                    'sha256', p_export.sums_sha256) end,
        'parts', coalesce((select jsonb_agg(jsonb_build_object('part', p.part, 'path', p.storage_path,
                                                               'size_bytes', p.size_bytes, 'sha256', p.sha256,
                                                               'originals', p.originals) order by p.part)
                             from public.fax_export_parts p where p.export_id = p_export.id), '[]'))
$$;
comment on function document_jobs_internal.fax_export_read(public.fax_exports) is
    'An export as the screen shows it: its range, progress (written of total, bytes), its job''s state and last error code, and once finished its stored parts, index.csv and SHA256SUMS (path in bucket, size, SHA-256).';
revoke all on function document_jobs_internal.fax_export_read(public.fax_exports) from public, anon, authenticated, service_role;

create function public.document_jobs_operator_fax_exports(p_user_id uuid, p_session_id uuid, p_limit int default 10)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin']);
    perform document_jobs_internal.require(p_limit between 1 and 100, 'p_limit must be between 1 and 100');
    return coalesce((select jsonb_agg(document_jobs_internal.fax_export_read(x) order by x.requested_at desc, x.id)
                       from (select * from public.fax_exports e order by e.requested_at desc, e.id limit p_limit) x),
                    '[]');
end;
$$;
comment on function public.document_jobs_operator_fax_exports(uuid, uuid, int) is
    'The last p_limit exports (fax_export_read), newest first, for a signed-in admin only (operator_role: a clerk or a viewer is refused, 42501 no_role): an export holds every original of its range.';
revoke all on function public.document_jobs_operator_fax_exports(uuid, uuid, int) from public, anon, authenticated;
grant execute on function public.document_jobs_operator_fax_exports(uuid, uuid, int) to service_role;

create function public.document_jobs_operator_fax_export(p_user_id uuid, p_session_id uuid, p_export_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin']);
    select * into v_export from public.fax_exports e where e.id = p_export_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such export';
    end if;
    return document_jobs_internal.fax_export_read(v_export);
end;
$$;
comment on function public.document_jobs_operator_fax_export(uuid, uuid, uuid) is
    'One export (fax_export_read), for a signed-in admin only: the screen signs its stored objects'' URLs from it. P0002 for no such export.';
revoke all on function public.document_jobs_operator_fax_export(uuid, uuid, uuid) from public, anon, authenticated;
grant execute on function public.document_jobs_operator_fax_export(uuid, uuid, uuid) to service_role;

-- --- the admin's request --------------------------------------------------------------------------

create function public.admin_request_fax_export(p_actor_id uuid, p_actor_email text, p_from date, p_to date)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_job_id uuid;
    v_first jsonb;
    v_export public.fax_exports;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin']);
    perform document_jobs_internal.require(p_from is not null and p_to is not null, 'give p_from and p_to');
    perform document_jobs_internal.require(p_from <= p_to, 'p_from must be on or before p_to');
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('export_faxes', null)
    on conflict (kind) where kind = 'export_faxes' and status in ('queued', 'running') do nothing
    returning id into v_job_id;
    if v_job_id is null then
        return jsonb_build_object('requested', false, 'reason', 'export_running',
                                  'export_id', (select e.id from public.fax_exports e
                                                  join public.document_jobs j on j.id = e.job_id
                                                 where j.status in ('queued', 'running') limit 1));
    end if;
    -- The window's end and how many it holds, as the CLI's first call answers them.
    v_first := public.export_documents(p_from, p_to, null, null, null, null, 1);
    insert into public.fax_exports (job_id, requested_by, requested_by_email, date_from, date_to, stored_before, total)
    values (v_job_id, p_actor_id, p_actor_email, p_from, p_to, (v_first ->> 'stored_before')::timestamptz,
            (v_first ->> 'total')::int)
    returning * into v_export;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, filter, job_count)
    values (p_actor_id, p_actor_email, 'export', v_job_id,
            jsonb_build_object('export_id', v_export.id, 'from', p_from, 'to', p_to, 'total', v_export.total), 1);
    perform document_jobs_internal.post_worker(1);
    return jsonb_build_object('requested', true, 'export_id', v_export.id, 'job_id', v_job_id,
                              'total', v_export.total);
end;
$$;
comment on function public.admin_request_fax_export(uuid, text, date, date) is
    'An admin''s export of the originals filed p_from..p_to (the CLI''s --from/--to): a fax_exports row and its export_faxes job with a kick, audited (action export, {"export_id", "from", "to", "total"}); the actor must be an admin of Supabase Auth now (acting_operator). {"requested": true, "export_id", "job_id", "total"}, or {"requested": false, "reason": "export_running", "export_id"} while another export is queued or running.';
revoke all on function public.admin_request_fax_export(uuid, text, date, date) from public, anon, authenticated;
grant execute on function public.admin_request_fax_export(uuid, text, date, date) to service_role;

-- --- the job's calls, fenced by (job, generation) ---------------------------------------------------

create function document_jobs_internal.held_export(p_job_id uuid, p_generation int) returns public.fax_exports
language plpgsql
stable
set search_path = ''
as $$
declare
    v_export public.fax_exports;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'export_faxes';
    if not found then
        return null;
    end if;
    select * into v_export from public.fax_exports e where e.job_id = p_job_id;
    perform document_jobs_internal.require(found, format('job %s is no export''s', p_job_id));
    return v_export;
end;
$$;
comment on function document_jobs_internal.held_export(uuid, int) is
    'The export of an export_faxes job while (p_job_id, p_generation) holds it running; null once it does not.';
revoke all on function document_jobs_internal.held_export(uuid, int) from public, anon, authenticated, service_role;

create function public.start_export_faxes_v1(p_job_id uuid, p_generation int, p_bucket text) returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
    v_last public.fax_export_parts;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_bucket is not null, 'p_bucket must not be null');
    -- The bucket of its first start stays the export's: its parts are there.
    update public.fax_exports e set bucket = coalesce(e.bucket, p_bucket) where e.id = v_export.id
    returning * into v_export;
    select * into v_last from public.fax_export_parts p where p.export_id = v_export.id order by p.part desc limit 1;
    return jsonb_build_object(
        'held', true, 'state', 'running',
        'export_id', v_export.id, 'bucket', v_export.bucket, 'date_from', v_export.date_from,
        'date_to', v_export.date_to, 'stored_before', v_export.stored_before, 'finished', v_export.finished_at is not null,
        'parts', coalesce(v_last.part, 0),
        'files', (select count(*) from public.fax_export_files f where f.export_id = v_export.id),
        'after', case when v_last.part is not null then jsonb_build_object('at', v_last.after_at, 'id', v_last.after_id) end);
end;
$$;
comment on function public.start_export_faxes_v1(uuid, int, text) is
    'What an export_faxes job reads first, fenced: its export (export_id, bucket: p_bucket on the first start, then the same; date_from, date_to, stored_before, finished), how many parts and files are recorded ("parts", "files") and the cursor the next part starts after ("after": {"at", "id"}, null before the first part).';
revoke all on function public.start_export_faxes_v1(uuid, int, text) from public, anon, authenticated;
grant execute on function public.start_export_faxes_v1(uuid, int, text) to service_role;

create function public.fax_export_names_taken_v1(p_job_id uuid, p_generation int, p_names text[]) returns jsonb
language plpgsql stable
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(cardinality(p_names) <= 5000, 'p_names holds at most 5000 names');
    return jsonb_build_object('held', true, 'state', 'running', 'taken',
        coalesce((select jsonb_agg(distinct n) from unnest(p_names) n
                   where exists (select 1 from public.fax_export_files f
                                  where f.export_id = v_export.id and lower(f.name) = lower(n))), '[]'));
end;
$$;
comment on function public.fax_export_names_taken_v1(uuid, int, text[]) is
    'Which of p_names (as given) an earlier part of the job''s export has taken, fenced: a name is the export''s once, as a case-insensitive file system sees it.';
revoke all on function public.fax_export_names_taken_v1(uuid, int, text[]) from public, anon, authenticated;
grant execute on function public.fax_export_names_taken_v1(uuid, int, text[]) to service_role;

create function public.record_fax_export_part_v1(p_job_id uuid, p_generation int, p_part int, p_storage_path text,
                                                 p_size_bytes bigint, p_sha256 text, p_after_at timestamptz,
                                                 p_after_id uuid, p_files jsonb, p_lease interval default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
    v_parts int;
    v_seq int;
    v_count int;
    v_bytes bigint;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select * into v_export from public.fax_exports e where e.id = v_export.id for update;
    perform document_jobs_internal.require(v_export.finished_at is null, 'the export is finished');
    select coalesce(max(p.part), 0) into v_parts from public.fax_export_parts p where p.export_id = v_export.id;
    perform document_jobs_internal.require(p_part = v_parts + 1,
                                           format('part %s follows part %s, not %s', v_parts + 1, v_parts, p_part));
    perform document_jobs_internal.require(p_storage_path = format('exports/%s/part-%s.zip', v_export.id,
                                                                   lpad(p_part::text, 4, '0')),
                                           'a part is stored under its export''s prefix, exports/<export id>/');
    perform document_jobs_internal.require(jsonb_typeof(p_files) = 'array' and jsonb_array_length(p_files) >= 1,
                                           'p_files must be a non-empty JSON array');
    insert into public.fax_export_parts (export_id, part, storage_path, size_bytes, sha256, originals, after_at, after_id)
    values (v_export.id, p_part, p_storage_path, p_size_bytes, p_sha256, jsonb_array_length(p_files), p_after_at,
            p_after_id);
    select coalesce(max(f.seq), 0) into v_seq from public.fax_export_files f where f.export_id = v_export.id;
    insert into public.fax_export_files (export_id, seq, part, name, document_id, size_bytes, sha256, csv_row)
    select v_export.id, v_seq + e.ordinality::int, p_part, e.value ->> 'name', (e.value ->> 'document_id')::uuid,
           (e.value ->> 'size_bytes')::bigint, e.value ->> 'sha256', e.value -> 'csv_row'
      from jsonb_array_elements(p_files) with ordinality e;
    select count(*)::int, coalesce(sum((e.value ->> 'size_bytes')::bigint), 0)::bigint into v_count, v_bytes
      from jsonb_array_elements(p_files) e;
    update public.fax_exports e set written = e.written + v_count, bytes = e.bytes + v_bytes where e.id = v_export.id;
    -- A stored part is progress: it ends a streak of time-budget releases, as storing an original does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until), budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation;
    return jsonb_build_object('held', true, 'state', 'running', 'part', p_part, 'written', v_export.written + v_count);
end;
$$;
comment on function public.record_fax_export_part_v1(uuid, int, int, text, bigint, text, timestamptz, uuid, jsonb, interval) is
    'Records a stored zip part of the job''s export, fenced by (p_job_id, p_generation), renewing the lease by p_lease when given: the part (the next number only, at exports/<export id>/part-NNNN.zip), the cursor the next part starts after (p_after_at, p_after_id) and its files (p_files: {"name", "document_id", "size_bytes", "sha256", "csv_row"}, a name taken in the export refused by fax_export_files_name). {"held", "state", "part", "written"}.';
revoke all on function public.record_fax_export_part_v1(uuid, int, int, text, bigint, text, timestamptz, uuid, jsonb, interval) from public, anon, authenticated;
grant execute on function public.record_fax_export_part_v1(uuid, int, int, text, bigint, text, timestamptz, uuid, jsonb, interval) to service_role;

create function public.fax_export_files_v1(p_job_id uuid, p_generation int, p_after_seq int default 0,
                                           p_limit int default 1000) returns jsonb
language plpgsql stable
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_limit between 1 and 5000, 'p_limit must be between 1 and 5000');
    return jsonb_build_object('held', true, 'state', 'running', 'files',
        coalesce((select jsonb_agg(jsonb_build_object('seq', f.seq, 'name', f.name, 'sha256', f.sha256,
                                                      'csv_row', f.csv_row) order by f.seq)
                    from (select * from public.fax_export_files f
                           where f.export_id = v_export.id and f.seq > p_after_seq
                           order by f.seq limit p_limit) f), '[]'));
end;
$$;
comment on function public.fax_export_files_v1(uuid, int, int, int) is
    'The job''s export''s files after p_after_seq (at most p_limit, in order: seq, name, sha256, csv_row), fenced: what its index.csv and SHA256SUMS are written from.';
revoke all on function public.fax_export_files_v1(uuid, int, int, int) from public, anon, authenticated;
grant execute on function public.fax_export_files_v1(uuid, int, int, int) to service_role;

create function public.finish_fax_export_v1(p_job_id uuid, p_generation int, p_index jsonb, p_sums jsonb)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_index ->> 'path' = format('exports/%s/index.csv', v_export.id)
                                           and p_sums ->> 'path' = format('exports/%s/SHA256SUMS', v_export.id),
                                           'index.csv and SHA256SUMS are stored under the export''s prefix');
    update public.fax_exports e
       set index_path = p_index ->> 'path', index_size_bytes = (p_index ->> 'size_bytes')::bigint,
           index_sha256 = p_index ->> 'sha256', sums_path = p_sums ->> 'path',
           sums_size_bytes = (p_sums ->> 'size_bytes')::bigint, sums_sha256 = p_sums ->> 'sha256',
           finished_at = coalesce(e.finished_at, now())
     where e.id = v_export.id;
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
comment on function public.finish_fax_export_v1(uuid, int, jsonb, jsonb) is
    'Records the job''s export''s index.csv and SHA256SUMS as stored ({"path", "size_bytes", "sha256"} each, under exports/<export id>/), fenced: the export is finished; the job completes next.';
revoke all on function public.finish_fax_export_v1(uuid, int, jsonb, jsonb) from public, anon, authenticated;
grant execute on function public.finish_fax_export_v1(uuid, int, jsonb, jsonb) to service_role;
