-- The drop of the retired function names: ready, not applied. It lives outside supabase/migrations
-- because the names it drops are still called, by name through PostgREST, by a worker of the
-- previous deploy until the new one replaces it.
--
-- When: in the release after the one in which no deployed worker calls these names any more (the
-- worker of this repository calls only the _v2 functions). Not in that same release: a deploy is
-- not atomic, `supabase db push` runs before the new Vercel deploy replaces the old workers, which
-- would meet a missing function for the minutes in between (an invocation lives up to 300 s).
--
-- How: copy this file into supabase/migrations under a new timestamp, later than every migration
-- there (supabase migration new drop_retired_functions, then this text: the file carries no
-- timestamp of its own, so that it sorts after whatever lands before it), and run
-- `supabase db push` as for any migration; then delete their rows from FUNCTION_GROUPS in
-- devstack/tools/schema.py (it refuses a name the schema lacks), take them out of the API surface
-- the tests pin (supabase/tests/003_api_surface.sql, the CALLS of
-- tests/database/test_only_service_role.py), delete the test of their answers (the old names' part
-- of tests/database/test_upgrade_in_place.py), run `make schema`, and delete this file. Until then
-- tests/database/test_future_migrations.py applies it to a database built from every migration,
-- runs the public API's tests (supabase/tests/029_public_api.sql) on what is left, and checks that
-- nothing in lib/, api/ or bench/ calls a name it drops.
--
-- What it keeps: the queue's documented functions, the public API (docs/QUEUE.md), whose names and
-- parameters other code calls: claim_document_jobs, extend_document_job_lease,
-- complete_document_job, fail_document_job, release_document_job, retry_document_job,
-- enqueue_document_job, record_inbound_email and invoke_document_jobs. The five of them that have a
-- _v2 or an audited twin stay as thin wrappers of it (20261201006000, 20261204130000).
--
-- What it drops, and why each can go: none of them was ever documented for callers outside this
-- repository; each was a step of this repository's own worker or CLI, which now calls another.

-- complete_document_job_and_follow_up, fail_document_job_and_follow_up and
-- release_document_job_and_follow_up (20261201003100): an invocation's last write with its
-- follow-up invocations, added for this worker's fan-out. Replaced by their _v2 forms, which answer
-- {"held", "state", "follow_ups"}; no other caller has a reason to start this worker's follow-ups.
drop function public.complete_document_job_and_follow_up(uuid, int);
drop function public.fail_document_job_and_follow_up(uuid, int, text, text, boolean, interval);
drop function public.release_document_job_and_follow_up(uuid, int, interval, text, text);
-- start_fetch_email (20261201003000): what this worker's fetch_email job reads before it calls
-- Resend, and its slot of the shared rate limit. Replaced by start_fetch_email_v2.
drop function public.start_fetch_email(uuid, int, int);
-- record_document_attachment (20261129000500): the fetch_email job's row for a stored attachment,
-- written by the job that stored it. Replaced by record_document_attachment_v2.
drop function public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text, interval);
-- complete_document_job_and_claim_next (20261130003000): this worker's completion and next claim
-- in one round trip. Replaced by complete_document_job_and_claim_next_v2; a caller of the public
-- API completes (complete_document_job) and claims (claim_document_jobs), as documented.
drop function public.complete_document_job_and_claim_next(uuid, int, text, interval);
-- cancel_document_job (20261129000600): the CLI's cancel before it acted through the screen's
-- audited admin_cancel_document_job. Never part of the public API, and it changes a job without
-- an audit row or a reason anyone could be asked for: a cancel names its operator.
drop function public.cancel_document_job(uuid, text);
