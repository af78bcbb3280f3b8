-- One order in which the worker claims the kinds of job, held by the table of kinds.
--
-- The worker claimed two kinds in the order of the array it sent (reconcile_emails, then
-- fetch_email), a completion claimed the next job of fetch_email only, and the fan-out counted
-- every claimable job whatever its kind. A third kind (prepare_fax, the next migration) and a
-- fourth later make that three places to keep in step. So the order is a column of
-- document_job_kinds, claim_order: a kind with one is a kind the worker claims, in that order;
-- a kind without one is claimed by nobody's loop, and the fan-out does not start a worker for it.
--
-- 1. claim_document_job_of_kinds claims among the kinds it is given in the table's order (a kind
--    without an order after those with one, in the array's order), whatever the array's order.
-- 2. complete_document_job_and_claim_next_v2 takes p_kinds: the next job is claimed as
--    claim_document_job_of_kinds(p_kinds) claims, so a fetch_email completion may chain into a
--    reconciliation or the e-mail's prepare_fax job. Without p_kinds it claims p_kind alone, as
--    before: a worker of the previous deploy (a deploy is not atomic) names the one kind it sends,
--    and must never be handed a kind it does not know.
-- 3. The fan-out (start_workers: the cron's and a stopping invocation's follow-ups) counts only
--    jobs of a kind with a claim order, the kinds a worker claims.

alter table public.document_job_kinds add column claim_order int
    constraint document_job_kinds_claim_order_key unique
    constraint document_job_kinds_claim_order_check check (claim_order > 0);
comment on column public.document_job_kinds.claim_order is
    'The order in which the worker claims the kinds (1 first): claim_document_job_of_kinds and complete_document_job_and_claim_next_v2 claim by it, and the fan-out counts only kinds that have one. Null: no worker claims the kind. lib/worker/kinds.py lists the same kinds in the same order (tests/database/test_limits_mirror.py).';
-- Reconciliation first: at most one is ever live, so it delays no fetch by more than that one,
-- and no backlog of fetches starves it. Fetching before preparing: a fax not yet stored can be
-- lost, one not yet prepared can still be downloaded.
update public.document_job_kinds set claim_order = 1 where kind = 'reconcile_emails';
update public.document_job_kinds set claim_order = 2 where kind = 'fetch_email';

create or replace function public.claim_document_job_of_kinds(p_kinds text[], p_lease interval default interval '5 minutes')
returns setof public.document_jobs
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_kind text;
begin
    if p_kinds is null or cardinality(p_kinds) not between 1 and 10 then
        raise exception using errcode = '22023', message = 'p_kinds must name 1 to 10 kinds';
    end if;
    for v_kind in
        select g.kind
          from unnest(p_kinds) with ordinality g(kind, position)
          left join public.document_job_kinds k on k.kind = g.kind
         order by k.claim_order nulls last, g.position
    loop
        return query select * from public.claim_document_jobs(v_kind, 1, p_lease);
        if found then
            return;
        end if;
    end loop;
end;
$$;
comment on function public.claim_document_job_of_kinds(text[], interval) is
    'One job, of the first of p_kinds in document_job_kinds.claim_order (a kind without one last, in the array''s order) that has one claimable (claim_document_jobs(kind, 1, p_lease) for each in turn), in one round trip: the worker''s own claims.';

drop function public.complete_document_job_and_claim_next_v2(uuid, int, text, interval);
create function public.complete_document_job_and_claim_next_v2(
    p_job_id uuid,
    p_generation int,
    p_kind text,
    p_lease interval,
    p_kinds text[] default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_answer jsonb;
    v_next public.document_jobs;
begin
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    if p_kinds is not null then
        select * into v_next from public.claim_document_job_of_kinds(p_kinds, p_lease);
    else
        select * into v_next from public.claim_document_jobs(p_kind, 1, p_lease);
    end if;
    return v_answer || jsonb_build_object('next_job', case when v_next.id is null then null else to_jsonb(v_next) end);
end;
$$;
comment on function public.complete_document_job_and_claim_next_v2(uuid, int, text, interval, text[]) is
    'Completes the job as complete_document_job_v2, then claims the next job, in one transaction: one round trip and one commit for two state changes. The next job is one of p_kinds in claim order, as claim_document_job_of_kinds(p_kinds, p_lease) claims (the worker''s call; p_kind is then unused), or without p_kinds one of p_kind alone (a worker of the previous deploy). Answers {"held", "state"} of the completion plus "next_job" (the claimed row, or null); the next job is claimed even when the completed one was lost. A claim refused for a bad argument undoes the completion too.';
revoke all on function public.complete_document_job_and_claim_next_v2(uuid, int, text, interval, text[])
    from public, anon, authenticated;
grant execute on function public.complete_document_job_and_claim_next_v2(uuid, int, text, interval, text[])
    to service_role;

create or replace function document_jobs_internal.start_workers(p_at_most int)
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_jobs_per_invocation constant int := (document_jobs_internal.limits()).jobs_per_invocation;
    c_most constant int := 20;  -- the highest cap
    v_claimable bigint;
begin
    select count(*) into v_claimable
      from (select 1
              from public.document_jobs_claimable c
             where c.kind in (select k.kind from public.document_job_kinds k where k.claim_order is not null)
             limit coalesce(p_at_most, c_most) * c_jobs_per_invocation) c;
    if v_claimable = 0 then
        return 0;
    end if;
    return document_jobs_internal.post_worker(ceil(v_claimable::numeric / c_jobs_per_invocation)::int);
end;
$$;
comment on function document_jobs_internal.start_workers(int) is
    'The fan-out, the cron''s and a stopping invocation''s follow-up: one invocation per limits().jobs_per_invocation claimable jobs of the kinds a worker claims (those with a document_job_kinds.claim_order), at most p_at_most (null: no bound but the cap), within the cap on invocations in flight (post_worker). Nothing claimable: no HTTP at all.';
