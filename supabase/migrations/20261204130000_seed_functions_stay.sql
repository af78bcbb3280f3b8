-- The queue's documented functions stay: extend_document_job_lease, complete_document_job,
-- fail_document_job, release_document_job and retry_document_job are the public API (docs/QUEUE.md,
-- "The public API"), whose names and parameters other code calls through PostgREST. The worker of
-- this repository calls the _v2 functions, and supabase/future_migrations no longer drops these
-- five: they remain thin wrappers of what the worker calls, tested by name
-- (supabase/tests/029_public_api.sql).
--
-- One of them acts for an operator: retry_document_job puts a failed job back. It was the only
-- change to a job's life outside the worker that left no audit row. It now writes one, naming its
-- caller as the unnamed service: actor_id null. Why null and not a made-up id:
-- - the caller holds the service-role key, which names nobody; the audit states what it knows,
--   and null is SQL's "not known", where any uuid would claim an identity;
-- - a fixed id (the nil uuid, say) would be read as a person by whatever joins the audit to
--   auth.users (no such user: a deleted one?), and every reader would have to know the trick;
-- - the check below keeps every other row named: only a retry may lack its actor, and then it
--   lacks the e-mail too, so an operator's path that forgot who acted still fails.

alter table public.document_jobs_audit alter column actor_id drop not null;
alter table public.document_jobs_audit
    add constraint document_jobs_audit_actor_named
        check (actor_id is not null or (action = 'retry' and actor_email is null));
comment on column public.document_jobs_audit.actor_id is
    'The Supabase Auth user who acted (the screen''s operator, the CLI''s --as). Null only for a retry through '
    'retry_document_job, the public API''s call: its caller holds the service-role key and is not named '
    '(document_jobs_audit_actor_named).';

-- As in 20261201004100, and audited.
create or replace function public.retry_document_job(p_job_id uuid)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    if v_retried > 0 then
        insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count)
        values (null, null, 'retry', p_job_id, 1);
    end if;
    return v_retried > 0;
exception
    when unique_violation then
        raise exception using
            errcode = 'unique_violation',
            message = format('document job %s cannot be retried: another job for the same target is already queued or running', p_job_id),
            hint = 'Wait for that job to finish, or cancel it, then retry.';
end;
$$;

comment on function public.retry_document_job(uuid) is
    'The public API''s manual re-run: a failed job back to queued now, its attempts and time-budget releases reset '
    '(requeue_failed, as admin_retry_document_job does); answers whether a job was retried, and refuses another live '
    'job of the same target with a message that says what to do. A retry is recorded in document_jobs_audit with '
    'actor_id null: the caller holds the service-role key and is not named. The screen and the CLI retry through '
    'admin_retry_document_job, which names the operator and starts a worker; here the cron''s next minute does.';
comment on function public.extend_document_job_lease(uuid, integer, interval) is
    'The public API''s lease renewal, kept by name and parameters: the same call through '
    'extend_document_job_lease_v2 (what the worker calls), answering true while (p_job_id, p_generation) holds '
    'the running job and false once it is lost.';
comment on function public.complete_document_job(uuid, integer) is
    'The public API''s completion, kept by name and parameters: the same call through complete_document_job_v2 '
    '(what the worker calls), answering true while the job is held and false once it is lost.';
comment on function public.fail_document_job(uuid, integer, text, text, boolean, interval) is
    'The public API''s failure, kept by name and parameters: the same call through fail_document_job_v2 (what the '
    'worker calls), answering the state it left the job in (queued while attempts are left and it is retryable, '
    'else failed), or null once the job is lost.';
comment on function public.release_document_job(uuid, integer, interval, text, text) is
    'The public API''s release (a failure that is not the job''s own), kept by name and parameters: the same call '
    'through release_document_job_v2 (what the worker calls), answering the state it left the job in (queued, or '
    'failed past the free time-budget releases), or null once the job is lost.';

-- The retired ..._and_follow_up forms (supabase/future_migrations drops them) go through the three
-- names above, which are no longer retired.
comment on function public.complete_document_job_and_follow_up(uuid, integer) is
    'Retired: the name before complete_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a '
    'deploy is not atomic); the same call, answering {"completed", "follow_ups"} through complete_document_job. '
    'supabase/future_migrations drops it once no deployed worker calls it.';
comment on function public.fail_document_job_and_follow_up(uuid, integer, text, text, boolean, interval) is
    'Retired: the name before fail_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a deploy '
    'is not atomic); the same call, answering {"left_in", "follow_ups"} through fail_document_job. '
    'supabase/future_migrations drops it once no deployed worker calls it.';
comment on function public.release_document_job_and_follow_up(uuid, integer, interval, text, text) is
    'Retired: the name before release_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a '
    'deploy is not atomic); the same call, answering {"left_in", "follow_ups"} through release_document_job. '
    'supabase/future_migrations drops it once no deployed worker calls it.';
