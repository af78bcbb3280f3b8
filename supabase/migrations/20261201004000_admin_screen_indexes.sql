-- The admin screen's reads (supabase/migrations/20261201004200_admin_screen_views.sql) on a big
-- table: with 1,000,000 finished jobs and 50,000 queued, the overview and every page of the job
-- list are index range scans of at most a page of rows (make bench, section "Admin screen").
--
-- What the indexes cost the queue: document_jobs_by_status_received is on every row, so every
-- write that is not a HOT update (a claim, a lease renewal, a completion: none of them is HOT,
-- status being in the predicate of the existing partial indexes) adds one entry to it, as it
-- already adds one to the primary key. The others are partial: an entry only for a row that has
-- an error code, or that is finished (written once, when it finishes), or an attempt (written
-- once), or an e-mail (written once).

-- Text search over sender and subject, with ILIKE, through a trigram index. Supabase documents
-- its extensions in schema "extensions"; pg_trgm is a trusted extension, so "postgres" may
-- create it.
create extension if not exists pg_trgm with schema extensions;

-- The job list, newest first, one state at a time: the list query takes the union of one range
-- scan per state, merged in (created_at, id) order, so a page reads about a page of entries
-- whichever states are shown. (created_at, id) is unique: keyset pagination never skips or repeats.
create index document_jobs_by_status_received
    on public.document_jobs (status, created_at desc, id desc);

-- The same, for one error code (the list filtered by error code, and the bulk retry of every job
-- failed with it).
create index document_jobs_by_error_code
    on public.document_jobs (last_error_code, status, created_at desc, id desc)
    where last_error_code is not null;

-- Finished jobs of an e-mail (a search by e-mail). Live ones are found through the unique index
-- document_jobs_one_active_per_target.
create index document_jobs_finished_by_email
    on public.document_jobs (fax_received_email_id)
    where status in ('completed', 'failed');

-- Sender and subject, searched together. The expression is repeated, character for character, in
-- document_jobs_internal.job_search_sql (the index is used only for that same expression);
-- supabase/tests/007_admin_screen.sql checks that the two agree. A newline between the two, so
-- that a search term never matches across them.
create index fax_received_emails_text_search
    on public.fax_received_emails
    using gin ((coalesce(from_address, '') || E'\n' || coalesce(subject, '')) extensions.gin_trgm_ops);

-- Attempts by when they ended: the overview's hourly outcomes and latencies...
create index document_job_attempts_by_finished
    on public.document_job_attempts (finished_at);
-- ...and its failures of the last 24 hours by error code, read from the index alone.
create index document_job_attempts_errors_by_finished
    on public.document_job_attempts (finished_at) include (outcome, error_code)
    where outcome <> 'completed';
