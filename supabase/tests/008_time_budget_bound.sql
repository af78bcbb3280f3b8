-- Releases for the time budget are bounded (20261201002100): 3 in a row give their attempt back,
-- from the 4th on each counts, and the job ends failed after its attempts, saying why. Storing an
-- attachment or a retry by hand ends a streak; other releases neither count nor end it.
begin;
set local client_min_messages = error;  -- the failure alert's "no alert URL stored" warning
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(15);

select t.add_emails('em_1');
select enqueue_document_job('fetch_email', t.email_id('em_1'));
-- Claims the job and releases it: what one invocation that ran out of time does.
create function t.claim_and_release(p_code text) returns text language plpgsql as $$
declare
    v_job public.document_jobs;
begin
    update public.document_jobs set run_after = now() - interval '1 second' where status = 'queued';
    select * into strict v_job from public.claim_document_jobs('fetch_email', 1, '5 minutes');
    return public.release_document_job_v2(v_job.id, v_job.generation, '0 seconds', p_code, 'out of time') ->> 'state';
end;
$$;

select is(array[claim_and_release('time_budget'), claim_and_release('time_budget'), claim_and_release('time_budget')],
          array['queued', 'queued', 'queued'], 'three releases for the time budget in a row ...');
select is(((job()).attempts, (job()).budget_releases), (0, 3), '... give their attempts back, and are counted');
select is(claim_and_release('resend_unauthorized'), 'queued', 'a release for a key problem ...');
select is(((job()).attempts, (job()).budget_releases), (0, 3), '... neither counts nor ends the streak');

select is(claim_and_release('time_budget'), 'queued', 'the 4th for the time budget ...');
select is((job()).attempts, 1, '... counts its attempt');
select matches((job()).last_error_message, 'release 4 in a row for the time budget with no attachment stored',
               'and the message says why');
select is((select outcome from document_job_attempts order by generation desc limit 1), 'retried',
          'the history shows the attempt spent');

-- Storing an attachment is progress: the next releases are free again.
update public.document_jobs set run_after = now() - interval '1 second';
select is((select count(*)::int from (
    select (record_document_attachment_v2(c.id, c.generation, 'att_1', 'a.pdf', 'application/pdf', 1, repeat('0', 64),
                                      'fax-attachments', 'k', '5 minutes') ->> 'held')::boolean
      from claim_document_jobs('fetch_email', 1, '5 minutes') c) r), 1, 'an attachment stored mid-job ...');
select is((job()).budget_releases, 0, '... ends the streak');
select is(release_document_job_v2((job()).id, (job()).generation, '0 seconds', 'time_budget', 'out of time') ->> 'state', 'queued',
          'so the release after it is free');

-- From 3 in a row on, each release spends an attempt until none is left: failed, with its reason.
update public.document_jobs set budget_releases = 3, attempts = 4;
select is(claim_and_release('time_budget'), 'failed', 'the release of the last attempt fails the job');
select is(((job()).status, (job()).attempts, (job()).finished_at is not null, (job()).last_error_code),
          ('failed'::text, 5, true, 'time_budget'::text), 'failed after its attempts, with the code');

select ok(retry_document_job((job()).id), 'retried by hand ...');
select is((job()).budget_releases, 0, '... the count starts afresh');

select * from finish();
rollback;
