-- The claim notes its own attempt (when it started, which invocation made it) in the same UPDATE,
-- instead of a BEFORE trigger doing it on every generation change.
--
-- Measured on a running stack (perf, and the database's CPU time per job): the trigger was a
-- PL/pgSQL call on every claim, and its WHEN clause was prepared again in every UPDATE of a job,
-- 5 to 7 % of the database's time per job; make bench compares the two in one run. Only a claim
-- changes the generation (the fencing token: "+1 on every claim"), so the claim is the one place
-- that knows an attempt starts. The attempt row is still written by the AFTER trigger of
-- 20261130002000, whatever ends the attempt.
--
-- The rest of claim_document_jobs is as in 20261130003100.

drop trigger document_jobs_note_claim on public.document_jobs;
drop function document_jobs_internal.note_claim();

comment on column public.document_jobs.attempt_started_at is
    'When the current (or last) attempt was claimed; set by every claim.';

create or replace function public.claim_document_jobs(
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
declare
    -- Real PostgREST gives SQL the request's headers as JSON with lowercased names in the setting
    -- request.headers; the worker sends its Vercel request id in x-document-jobs-invocation.
    -- Outside a PostgREST request the setting is unset (null) or empty (''), and the id is null.
    v_invocation_id text := left(
        nullif(current_setting('request.headers', true), '')::jsonb ->> 'x-document-jobs-invocation', 200);
begin
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    if p_limit is null or p_limit not between 1 and 100 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 100';
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_lease must be more than 0 and at most 1 hour';
    end if;
    perform document_jobs_internal.fail_expired();

    -- Postgres has no UPDATE ... LIMIT: pick and lock in a sub-select. SKIP LOCKED lets
    -- concurrent claimers pass each other's rows; a row claimed and committed by another
    -- worker since our snapshot is re-checked against the view's condition and dropped.
    return query
    update public.document_jobs j
       set status = 'running',
           attempts = j.attempts + 1,
           generation = j.generation + 1,
           lease_until = now() + p_lease,
           started_at = coalesce(j.started_at, now()),
           attempt_started_at = now(),
           attempt_invocation_id = v_invocation_id
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
    if not found then
        perform document_jobs_internal.require_kind(p_kind);
    end if;
end;
$$;
