-- The calls that do the work of two (fewer round trips per job): recording an attachment renews
-- the lease, completing a job claims the next one. Both are fenced exactly as the calls they
-- replace. One transaction: now() stands still; time "passes" by moving timestamps back.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(21);

select t.add_emails('em_1', 'em_2');
create function t.record(p_email text, p_generation int, p_attachment text, p_lease interval) returns boolean
language sql as $$
    select (public.record_document_attachment_v2((t.job(p_email)).id, p_generation, p_attachment, 'a.pdf',
                                                 'application/pdf', 1, repeat('0', 64), 'fax-attachments',
                                                 'x/' || p_attachment || '.pdf', p_lease) ->> 'held')::boolean $$;
-- The e-mail's fetch_email job: once it completes, its e-mail (with attachments) has a prepare_fax job too.
create function t.fetch_job(p_email text) returns public.document_jobs language sql as $$
    select * from public.document_jobs where kind = 'fetch_email' and fax_received_email_id = t.email_id(p_email) $$;

select enqueue_document_job('fetch_email', email_id('em_1'));
update document_jobs set created_at = now() - interval '1 minute', run_after = now() - interval '1 minute';
select enqueue_document_job('fetch_email', email_id('em_2'));
select is((select fax_received_email_id from claim_document_jobs('fetch_email', 1, '1 minute')), email_id('em_1'),
          'the older job is claimed first');

-- record_document_attachment_v2 with p_lease
update document_jobs set lease_until = now() + interval '1 second' where id = (job('em_1')).id;
select ok(record('em_1', 1, 'att_1', '10 minutes'), 'the holder records an attachment and renews its lease');
select is((job('em_1')).lease_until, now() + interval '10 minutes', '... lease_until = now() + p_lease');
select is((select count(*)::int from fax_received_email_attachments where provider_attachment_id = 'att_1'), 1,
          '... and the row is there');
select ok(record('em_1', 1, 'att_2', null), 'without p_lease it records as before');
select is((job('em_1')).lease_until, now() + interval '10 minutes', '... and leaves the lease alone');
select throws_ok($$select t.record('em_1', 1, 'att_3', '2 hours')$$, '22023',
                 'p_lease must be more than 0 and at most 1 hour', 'p_lease has the bounds of extend');
select ok(not record('em_1', 2, 'att_3', '10 minutes'), 'a stale generation neither records ...');
select is((job('em_1')).lease_until, now() + interval '10 minutes', '... nor renews the lease');
select is((select count(*)::int from fax_received_email_attachments where provider_attachment_id = 'att_3'), 0,
          '... nor writes a row');

-- complete_document_job_and_claim_next_v2
select is(complete_document_job_and_claim_next_v2((job('em_1')).id, 1, 'fetch_email', '2 minutes') ->> 'held',
          'true', 'the holder completes its job ...');
select is((fetch_job('em_1')).status, 'completed', '... which is completed');
select is(((job('em_2')).status, (job('em_2')).generation, (job('em_2')).lease_until),
          ('running'::text, 1, now() + interval '2 minutes'), '... and the next job is claimed, leased for p_lease');

select is(complete_document_job_and_claim_next_v2((fetch_job('em_1')).id, 1, 'fetch_email', '5 minutes'),
          '{"held": false, "state": null, "next_job": null}'::jsonb,
          'a second completion changes nothing, and with nothing claimable no job comes back');

select is((complete_document_job_and_claim_next_v2((job('em_2')).id, 7, 'fetch_email', '5 minutes') ->> 'held')::boolean,
          false, 'a stale generation does not complete');
select is((job('em_2')).status, 'running', '... and leaves the job running');

update document_jobs set lease_until = now() - interval '1 second' where id = (job('em_2')).id;
select is(complete_document_job_and_claim_next_v2((job('em_2')).id, 7, 'fetch_email', '5 minutes')
              -> 'next_job' ->> 'generation',
          '2', 'the claim takes what claim_document_jobs takes: here the job whose lease passed');

select throws_ok($$select complete_document_job_and_claim_next_v2((t.job('em_2')).id, 2, 'make_coffee', '5 minutes')$$, '22023',
                 'unknown job kind ''make_coffee'' (see table document_job_kinds)', 'an unknown kind is refused ...');
select is((job('em_2')).status, 'running', '... before the job is completed');
select throws_ok($$select complete_document_job_and_claim_next_v2((t.job('em_2')).id, 2, 'fetch_email', '0 seconds')$$,
                 '22023', 'p_lease must be more than 0 and at most 1 hour', 'so is a lease out of bounds');
select is(complete_document_job_and_claim_next_v2((job('em_2')).id, 2, 'fetch_email', '5 minutes'),
          '{"held": true, "state": "completed", "next_job": null}'::jsonb, 'the live holder completes');

select * from finish();
rollback;
