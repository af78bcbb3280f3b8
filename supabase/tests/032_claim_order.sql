-- One claim order, held by document_job_kinds.claim_order: the worker's claim of several kinds
-- follows it whatever the order of the array, a completion chains into the next job in it (a
-- fetch_email completion into a reconciliation, the next fetch, or a prepare_fax job), a worker of
-- the previous deploy (p_kind alone) is never handed another kind, and the fan-out counts only
-- the jobs of the kinds a worker claims.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(19);

-- A kind no worker claims (no claim order), for this file only.
insert into document_job_kinds (kind, description) values ('t_unclaimed', 'a kind without a claim order');

select results_eq(
    $$ select kind, claim_order from document_job_kinds where claim_order is not null order by claim_order $$,
    $$ values ('reconcile_emails', 1), ('fetch_email', 2), ('prepare_fax', 3), ('verify_originals', 4),
               ('export_faxes', 5) $$,
    'the claim order: reconciliation, then fetching, then preparing, then verifying the originals');
select throws_ok($$ update document_job_kinds set claim_order = 2 where kind = 't_unclaimed' $$, '23505', null,
                 'two kinds cannot share a place in the order');

select t.add_emails('em_fetch', 'em_prepare', 'em_other');
select enqueue_document_job('prepare_fax', email_id('em_prepare'));
select enqueue_document_job('t_unclaimed', email_id('em_other'));
-- The prepare job waited longest: the array's own order would take it, or the oldest job first.
update document_jobs set created_at = now() - interval '1 hour', run_after = now() - interval '1 hour';
select enqueue_document_job('fetch_email', email_id('em_fetch'));
select enqueue_document_jobs_reconciliation();

create function t.claimed_kind(p_kinds text[]) returns text language sql as $$
    select kind from public.claim_document_job_of_kinds(p_kinds, interval '5 minutes') $$;

select is(t.claimed_kind(array['prepare_fax', 'fetch_email', 'reconcile_emails']), 'reconcile_emails',
          'claim_document_job_of_kinds takes the first kind in the table''s order, not the array''s');
select is(t.claimed_kind(array['prepare_fax', 'fetch_email']), 'fetch_email',
          '... then fetch_email, though the prepare job is older and named first');
select is(t.claimed_kind(array['t_unclaimed', 'prepare_fax']), 'prepare_fax',
          '... and a kind without a claim order comes after those with one');
select is(t.claimed_kind(array['t_unclaimed', 'prepare_fax']), 't_unclaimed', '... but is claimed when named');
select is(t.claimed_kind(array['fetch_email', 'prepare_fax']), null, 'nothing claimable: no row');

-- A completion's next claim follows the same order.
delete from document_jobs;

select t.add_emails('em_1', 'em_2', 'em_3');
create function t.complete_next(p_job public.document_jobs, p_kind text, p_kinds text[]) returns text language sql as $$
    select public.complete_document_job_and_claim_next_v2(p_job.id, p_job.generation, p_kind, interval '5 minutes',
                                                          p_kinds) -> 'next_job' ->> 'kind' $$;
create function t.running(p_kind text) returns public.document_jobs language sql as $$
    select * from public.document_jobs where kind = p_kind and status = 'running' limit 1 $$;

-- em_1's fetch_email job, with a stored attachment: its completion enqueues em_1's prepare_fax.
select enqueue_document_job('fetch_email', email_id('em_1'));
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
                                            size_bytes, sha256, bucket, storage_path)
values (email_id('em_1'), 'att_1', 'application/pdf', 1, repeat('a', 64), 'fax-attachments',
        'fax_received_emails/' || email_id('em_1') || '/att_1.pdf');
select is((select kind from claim_document_job_of_kinds(array['reconcile_emails', 'fetch_email', 'prepare_fax'])),
          'fetch_email', 'the worker holds em_1''s fetch');
select enqueue_document_job('fetch_email', email_id('em_2'));
select is(t.complete_next(t.running('fetch_email'), null, array['reconcile_emails', 'fetch_email', 'prepare_fax']),
          'fetch_email', 'its completion takes the next fetch before the prepare job it enqueued');
select is((select status from document_jobs where kind = 'prepare_fax' and fax_received_email_id = email_id('em_1')),
          'queued', '... which waits, queued');
select is(t.complete_next(t.running('fetch_email'), null, array['reconcile_emails', 'fetch_email', 'prepare_fax']),
          'prepare_fax', 'the next completion chains into the prepare job: the kinds of p_kinds, in claim order');

-- A worker of the previous deploy names p_kind alone: it is never handed a kind it does not know.
select enqueue_document_job('fetch_email', email_id('em_3'));
select is((select kind from claim_document_jobs('fetch_email')), 'fetch_email', 'an old worker holds em_3''s fetch');
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, content_type,
                                            size_bytes, sha256, bucket, storage_path)
values (email_id('em_3'), 'att_1', 'application/pdf', 1, repeat('a', 64), 'fax-attachments',
        'fax_received_emails/' || email_id('em_3') || '/att_1.pdf');
select is(t.complete_next(t.running('fetch_email'), 'fetch_email', null), null,
          'its completion with p_kind alone claims no prepare job, though one is claimable');
select is((select count(*)::int from document_jobs where kind = 'prepare_fax' and status = 'queued'), 1,
          '... and leaves it queued for a worker that knows the kind');
select is(t.complete_next(t.running('prepare_fax'), null, array['t_unclaimed']), null,
          'a claim of a kind with no job claimable answers no next job');

-- The fan-out counts the kinds a worker claims, and no other.
delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret');
select vault.create_secret('https://app.example/api/internal/document-jobs', 'document_jobs_url');
select vault.create_secret('claim-order-test-secret', 'internal_function_secret');
delete from document_jobs_internal.worker_requests;
delete from document_jobs;
select enqueue_document_job('t_unclaimed', email_id(e)) from unnest(array['em_1', 'em_2', 'em_3']) e;
select is(invoke_document_jobs(20), 0, 'jobs no worker claims start no worker');
select enqueue_document_job('prepare_fax', email_id(e)) from unnest(array['em_1', 'em_2']) e;
select enqueue_document_job('fetch_email', email_id(e)) from unnest(array['em_1', 'em_2', 'em_3']) e;
select is(invoke_document_jobs(20), 2, 'five jobs the worker claims (2 prepare_fax, 3 fetch_email): two invocations of 3, the other kind''s three not counted');
select is((select count(*)::int from document_jobs_internal.worker_requests), 2, '... two POSTs queued');
select is((select count(*)::int from document_jobs_claimable), 8, 'every kind is still claimable (the view is unchanged)');

select * from finish();
rollback;
