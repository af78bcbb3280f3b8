-- The drop of the retired function names: ready, not applied. It lives outside supabase/migrations
-- because the names it drops are still a contract (other code calls them by name through
-- PostgREST) until no deployed worker calls them.
--
-- When: in the release after the one in which no deployed worker calls these names any more (the
-- worker of this repository calls only the _v2 functions). Not in that same release: a deploy is
-- not atomic, `supabase db push` runs before the new Vercel deploy replaces the old workers, which
-- would meet a missing function for the minutes in between (an invocation lives up to 300 s).
--
-- How: copy this file into supabase/migrations under a new timestamp, later than every migration
-- there (supabase migration new drop_retired_functions, then this text), and run `supabase db push`
-- as for any migration; then delete their rows from FUNCTION_GROUPS in devstack/tools/schema.py
-- (it refuses a name the schema lacks), take them out of the API surface the tests pin
-- (supabase/tests/003_api_surface.sql, the CALLS of tests/database/test_only_service_role.py), delete the test of
-- their answers (the old names' part of tests/database/test_upgrade_in_place.py), run `make schema`, and delete this
-- file. Until then tests/database/test_future_migrations.py applies it to a database built from every
-- migration and checks that lib/ and api/ call none of these names.
--
-- What: each name below is answered today by a thin wrapper of its _v2 function (20261201006000),
-- or, for the ..._and_follow_up forms, through the wrappers; and retry_document_job and
-- cancel_document_job, which the CLI called before it acted through the admin screen's audited
-- admin_retry_document_job and admin_cancel_document_job (nothing in lib/ or api/ calls them now;
-- they keep answering until this is applied, for a script of an operator's own).

drop function public.complete_document_job_and_follow_up(uuid, int);
drop function public.fail_document_job_and_follow_up(uuid, int, text, text, boolean, interval);
drop function public.release_document_job_and_follow_up(uuid, int, interval, text, text);
drop function public.extend_document_job_lease(uuid, int, interval);
drop function public.start_fetch_email(uuid, int, int);
drop function public.record_document_attachment(uuid, int, text, text, text, bigint, text, text, text, interval);
drop function public.complete_document_job_and_claim_next(uuid, int, text, interval);
drop function public.complete_document_job(uuid, int);
drop function public.fail_document_job(uuid, int, text, text, boolean, interval);
drop function public.release_document_job(uuid, int, interval, text, text);
drop function public.retry_document_job(uuid);
drop function public.cancel_document_job(uuid, text);
