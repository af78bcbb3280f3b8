-- The why of every function and table, where a reader of the schema finds it: as COMMENT ON,
-- shown by \df+ and \dt+ and kept in supabase/schema.sql beside each definition. Until now it
-- lived only above each function in the migration that last defined it, and the current schema
-- held one comment on a function. Each comment says what the current definition does and why;
-- supabase/tests/014_comments.sql fails when a function or table of the two schemas has none.
-- A function that is redefined later gets its comment again with it (create or replace keeps a
-- comment; drop and create does not).

comment on function public.enqueue_document_job(text, uuid, boolean) is
    'Inserts a queued job of p_kind for an e-mail, or answers the live (queued or running) one of'
    ' that target with created = false: enqueueing twice is not an error (the unique index '
    'document_jobs_one_active_per_target). p_kick POSTs to the worker in the same transaction, '
    'sent only if it commits.';
comment on function public.claim_document_jobs(text, integer, interval) is
    'Fails the running jobs whose lease passed with no attempt left (fail_expired), then claims '
    'up to p_limit (1 to 100) jobs of p_kind from document_jobs_claimable, oldest run_after '
    'first, with FOR UPDATE SKIP LOCKED so that concurrent claimers never take the same row. A '
    'claim makes the job running with attempts and generation + 1 and a lease of p_lease (at most'
    ' limits().lease_max; every job of one claim shares it), notes the attempt''s start and the '
    'invocation named by the request header, and clears the attempt''s outcome. An unknown kind is'
    ' refused only when nothing was claimed (a found job''s kind is known).';
comment on function public.extend_document_job_lease_v2(uuid, integer, interval) is
    'Renews the lease to now() + p_lease (at most limits().lease_max) while (p_job_id, '
    'p_generation) still holds the running job. Answers {"held", "state"}: held false means the '
    'job is no longer this worker''s, which stops and writes nothing more.';
comment on function public.complete_document_job_v2(uuid, integer) is
    'The job is done: completed, lease cleared, the attempt''s outcome completed, while (p_job_id,'
    ' p_generation) still holds it. Answers {"held", "state"}.';
comment on function public.complete_document_job_and_claim_next_v2(uuid, integer, text, interval) is
    'Completes the job as complete_document_job_v2, then claims the next job of p_kind as '
    'claim_document_jobs(p_kind, 1, p_lease), in one transaction: one round trip and one commit '
    'for two state changes. Answers {"held", "state"} of the completion plus "next_job" (the '
    'claimed row, or null); the next job is claimed even when the completed one was lost. A claim'
    ' refused for a bad argument undoes the completion too.';
comment on function public.fail_document_job_v2(uuid, integer, text, text, boolean, interval) is
    'Ends an attempt that failed, while (p_job_id, p_generation) holds the job: transient '
    '(p_retryable) with attempts left, back to queued at next_run_after (the backoff of this '
    'attempt, or the provider''s p_retry_after when longer); otherwise failed for good. The error '
    'is recorded either way, and the attempt''s outcome (retried or failed). Answers {"held", '
    '"state"}.';
comment on function public.release_document_job_v2(uuid, integer, interval, text, text) is
    'For failures that are not the job''s fault (the time budget ran out, a key lacks a '
    'permission): back to queued after p_retry_after without spending an attempt, while '
    '(p_job_id, p_generation) holds the job. A time_budget release past '
    'limits().free_budget_releases in a row (no attachment stored between them) counts its '
    'attempt, and fails the job when it was the last: a job that never makes progress is not '
    'released forever. Answers {"held", "state"}.';
comment on function public.retry_document_job(uuid) is
    'Manual re-run of a failed job (the admin CLI): back to queued with its attempts and '
    'time-budget releases reset, through requeue_failed; answers whether a job was retried. '
    'Another live job of the same target is refused with a message that says what to do, not a '
    'raw unique violation.';
comment on function public.cancel_document_job(uuid, text) is
    'Cancels a queued or running job (the admin CLI): it stops in failed, its outcome and '
    'last_error_code cancelled and the reason as its message (cancel_live); answers whether a job'
    ' was cancelled. A running job''s worker learns it at its next fenced call and writes nothing '
    'more.';
comment on function public.invoke_document_jobs(integer) is
    'The entry point of the cron job document-jobs (every minute): fails the '
    'expired-and-exhausted jobs, then starts one worker invocation per '
    'limits().jobs_per_invocation claimable jobs within the cap on invocations in flight '
    '(start_workers); nothing claimable, no HTTP at all. p_max_invocations, when given, bounds '
    'the fan-out further (1 to 20). Answers how many POSTs it queued.';
comment on function public.extend_document_job_lease(uuid, integer, interval) is
    'Retired: the name before extend_document_job_lease_v2, kept for a worker of the previous '
    'deploy (a deploy is not atomic); the same call through extend_document_job_lease_v2, '
    'answering true while the job is held and false once it is lost. supabase/future_migrations '
    'drops it once no deployed worker calls it.';
comment on function public.complete_document_job(uuid, integer) is
    'Retired: the name before complete_document_job_v2, kept for a worker of the previous deploy '
    '(a deploy is not atomic); the same call through complete_document_job_v2, answering true '
    'while the job is held and false once it is lost. supabase/future_migrations drops it once no'
    ' deployed worker calls it.';
comment on function public.complete_document_job_and_claim_next(uuid, integer, text, interval) is
    'Retired: the name before complete_document_job_and_claim_next_v2, kept for a worker of the '
    'previous deploy (a deploy is not atomic); the same call through '
    'complete_document_job_and_claim_next_v2, answering {"completed": <held>, "next_job": ...}. '
    'supabase/future_migrations drops it once no deployed worker calls it.';
comment on function public.fail_document_job(uuid, integer, text, text, boolean, interval) is
    'Retired: the name before fail_document_job_v2, kept for a worker of the previous deploy (a '
    'deploy is not atomic); the same call through fail_document_job_v2, answering the state it '
    'left the job in (queued or failed), or null once the job is lost. supabase/future_migrations'
    ' drops it once no deployed worker calls it.';
comment on function public.release_document_job(uuid, integer, interval, text, text) is
    'Retired: the name before release_document_job_v2, kept for a worker of the previous deploy '
    '(a deploy is not atomic); the same call through release_document_job_v2, answering the state'
    ' it left the job in (queued or failed), or null once the job is lost. '
    'supabase/future_migrations drops it once no deployed worker calls it.';
comment on function public.start_fetch_email_v2(uuid, integer, integer) is
    'What a fetch_email job needs before it calls Resend, in one round trip: its e-mail''s '
    'provider id, the provider ids of the attachments already stored, and the slot of its listing'
    ' request from the Resend limiter (reserve_request, waiting at most p_max_wait_ms). Fenced '
    'like every call after a claim: {"held": false, "state": null} once (p_job_id, p_generation) '
    'no longer holds the job, else {"held": true, "state": "running"} with those members. "email"'
    ' is null when the e-mail row is gone, and then no slot is reserved.';
comment on function public.record_document_attachment_v2(uuid, integer, text, text, text, bigint, text, text, text, interval) is
    'Records (or updates) a stored attachment of the job''s e-mail, fenced by (p_job_id, '
    'p_generation): a stale worker''s upload may have overwritten the object (same key, same '
    'bytes), but its row is refused. With p_lease (the worker always passes it) the same '
    'statement renews the lease for the next attachment and ends a streak of time-budget '
    'releases, storing an attachment being progress. Answers {"held", "state"}.';
comment on function public.reserve_provider_request(text, integer) is
    'A slot of the provider''s shared rate limit (reserve_request) for a request the worker makes '
    'besides the one start_fetch_email_v2 reserves: a second page of a listing, a listing again '
    'for fresh download URLs. Answers {"reserved", "wait_ms", "limit"}.';
comment on function public.note_provider_rate_limit(text, integer, interval) is
    'What the provider said about its limit: p_limit, the team''s real limit (Resend''s '
    'ratelimit-limit; the worker tells only when it differs from what it was told here), and '
    'p_retry_after, a 429 that came anyway: no slot is handed out to any worker before it has '
    'passed. At most an hour: a longer pause would stop every job for longer than any rate limit '
    'asks. Answers the limiter''s state {"limit", "paused_until"}.';
comment on function public.complete_document_job_and_follow_up_v2(uuid, integer) is
    'The last write of an invocation that stops at its job cap or its time budget: '
    'complete_document_job_v2, then, in the same transaction, the follow-up invocations '
    '(start_workers: only when work is claimable, within the cap, the asking invocation still '
    'counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many '
    'invocations it started (held or not).';
comment on function public.fail_document_job_and_follow_up_v2(uuid, integer, text, text, boolean, interval) is
    'The last write of an invocation that stops at its job cap or its time budget: '
    'fail_document_job_v2, then, in the same transaction, the follow-up invocations '
    '(start_workers: only when work is claimable, within the cap, the asking invocation still '
    'counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many '
    'invocations it started (held or not).';
comment on function public.release_document_job_and_follow_up_v2(uuid, integer, interval, text, text) is
    'The last write of an invocation that stops at its job cap or its time budget: '
    'release_document_job_v2, then, in the same transaction, the follow-up invocations '
    '(start_workers: only when work is claimable, within the cap, the asking invocation still '
    'counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many '
    'invocations it started (held or not).';
comment on function public.start_fetch_email(uuid, integer, integer) is
    'Retired: the name before start_fetch_email_v2, kept for a worker of the previous deploy (a '
    'deploy is not atomic); the same call through start_fetch_email_v2, answering its members '
    'without "held" and "state", or null once the job is lost. supabase/future_migrations drops '
    'it once no deployed worker calls it.';
comment on function public.record_document_attachment(uuid, integer, text, text, text, bigint, text, text, text, interval) is
    'Retired: the name before record_document_attachment_v2, kept for a worker of the previous '
    'deploy (a deploy is not atomic); the same call through record_document_attachment_v2, '
    'answering true while the job is held and false once it is lost. supabase/future_migrations '
    'drops it once no deployed worker calls it.';
comment on function public.complete_document_job_and_follow_up(uuid, integer) is
    'Retired: the name before complete_document_job_and_follow_up_v2, kept for a worker of the '
    'previous deploy (a deploy is not atomic); the same call, answering {"completed", '
    '"follow_ups"} through the retired complete_document_job. supabase/future_migrations drops it'
    ' once no deployed worker calls it.';
comment on function public.fail_document_job_and_follow_up(uuid, integer, text, text, boolean, interval) is
    'Retired: the name before fail_document_job_and_follow_up_v2, kept for a worker of the '
    'previous deploy (a deploy is not atomic); the same call, answering {"left_in", "follow_ups"}'
    ' through the retired fail_document_job. supabase/future_migrations drops it once no deployed'
    ' worker calls it.';
comment on function public.release_document_job_and_follow_up(uuid, integer, interval, text, text) is
    'Retired: the name before release_document_job_and_follow_up_v2, kept for a worker of the '
    'previous deploy (a deploy is not atomic); the same call, answering {"left_in", "follow_ups"}'
    ' through the retired release_document_job. supabase/future_migrations drops it once no '
    'deployed worker calls it.';
comment on function public.record_inbound_email(text, text, jsonb) is
    'What the webhook calls: records the e-mail and enqueues its fetch_email job with a kick, '
    'atomically, in one round trip. Keeps the data verbatim and never fails on a field it merely '
    'copies (a date that does not parse is stored as null): an e-mail must not be lost over '
    'metadata. A redelivered webhook answers duplicate = true with the existing rows and creates '
    'nothing.';
comment on function public.document_jobs_admin_overview() is
    'The admin screen''s overview: jobs by state, the oldest waiting job, failures by error code '
    '(last 24 hours), failed jobs now by error code, the hourly series (7 days) and the health '
    'check''s open outages. Queued, running and failed jobs are counted exactly (index-only scans '
    'of document_jobs_by_status_received); completed ones, most of the table, are the planner''s '
    'estimate ("estimated": true), which autovacuum keeps current.';
comment on function public.document_jobs_admin_jobs(jsonb, timestamp with time zone, uuid, integer) is
    'A page of the job list for a filter (job_filter): {"jobs", "next", "count", "partial", '
    '"searched_until"}, in (created_at, id) descending order, which is unique, so pages never '
    'skip or repeat a job while jobs change; "count" is exact up to 10,000, without a search '
    'term, on the first page. A search term is looked for in the newest jobs the other filters '
    'match (search_walk), then, when those hold less than a page, in its indexes '
    '(emails_matching, exact up to 5,000 e-mails). When neither can answer (a term of fewer than '
    'three characters, or one in too many e-mails) the page is "partial" and "next" continues '
    'from "searched_until": nothing is skipped, it only takes more pages.';
comment on function public.document_jobs_admin_job(uuid) is
    'One job for the admin screen: the job, its attempts (oldest first), its e-mail and its '
    'stored attachments; null when there is no such job.';
comment on function public.document_jobs_admin_audit(bigint, integer) is
    'The audit for the admin screen, newest first, a page of entries before p_before: {"entries":'
    ' [...], "next": <id> or null}. A bulk action''s entry says how far it got (changed, skipped, '
    'done).';
comment on function public.admin_retry_document_job(uuid, uuid, text, text) is
    'One failed job retried from the admin screen (requeue_failed), recorded in the audit with '
    'the operator and the reason, and a worker started for it as the webhook''s kick does. Answers'
    ' {"changed": true} or {"changed": false, "reason": not_failed, another_live_job or '
    'job_deleted}.';
comment on function public.admin_cancel_document_job(uuid, uuid, text, text) is
    'One queued or running job cancelled from the admin screen (cancel_live) with the operator''s '
    'reason (required), recorded in the audit; its worker learns it at its next fenced call. '
    'Answers {"changed": true} or {"changed": false, "reason": ...}.';
comment on function public.prepare_document_jobs_bulk_action(text, jsonb, uuid, text) is
    'Counts the jobs a filter (job_filter) matches that the action can change (retry: failed '
    'ones; cancel: queued and running ones) and keeps their ids: a snapshot, so the action '
    'applies to exactly the jobs the operator confirmed, never to the filter run again. At most '
    '50,000 at once: more is refused with 22023 (narrow the filter and count again). Answers '
    '{"bulk_action_id", "action", "job_count", "states", "filter", "prepared_at", "expires_at"}: '
    'apply it within 15 minutes, or count again.';
comment on function public.apply_document_jobs_bulk_action(uuid, uuid, text, integer) is
    'Applies the next batch (at most p_batch_size jobs, 1 to 1,000) of a prepared bulk action in '
    'one transaction and answers where it stands (bulk_action_progress, and "workers_started"): '
    'call it again until "done"; a job is changed at most once, however often it is called. Only '
    'the operator who prepared it may apply it, within 15 minutes of counting; the first call '
    'records it in the audit, once, with its count and the reason (required). A retry starts '
    'workers for what it re-queued through invoke_document_jobs, whose cap on invocations holds.';
comment on function public.document_jobs_health() is
    'The flow''s health for an operator (the admin CLI''s health): the outages the health check '
    'holds open now, with what to check; the worker''s answers of the last hour by status (pg_net '
    'keeps them 6 hours); and which of the Vault secrets the database reads exist (names only, '
    'never a value). Security definer: only postgres may read Vault and the health check''s '
    'tables.';
comment on function public.document_jobs_stats() is
    'Queue health in one call (the admin CLI''s stats): jobs by kind and status, the age of the '
    'oldest claimable job (the queue''s lag), how many are claimable, in backoff, running and '
    'failed in the last hour, the last completion and the retention.';
comment on function public.set_document_jobs_retention(interval) is
    'Sets how long completed jobs are kept (document_jobs_settings.completed_job_retention), held'
    ' to require_retention''s bounds (an hour to ten years); answers the retention set. The '
    'e-mails and their attachments are never purged.';
comment on function public.count_purgeable_document_jobs(interval) is
    'What purge_document_jobs(p_older_than) would delete now, deleting nothing (the admin CLI''s '
    'dry run): the same cutoff, from purge_cutoff.';
comment on function public.purge_document_jobs(interval) is
    'Retention: deletes the completed jobs that finished before the cutoff (purge_cutoff: the '
    'retention setting unless p_older_than is given, held to the same bounds), their attempt '
    'history with them; answers how many. The daily cron job document-jobs-purge calls it without'
    ' an age. Queued, running and failed jobs, and the e-mails and their attachments, stay.';
comment on function document_jobs_internal.alert_body(jsonb, jsonb) is
    'The alert''s JSON: its machine-readable fields (raw values) merged with the chat message of '
    'the configured receiver (document_jobs_settings.alert_receiver, through chat_message).';
comment on function document_jobs_internal.alert_job_failed() is
    'Trigger document_jobs_alert_failed: when a job becomes failed, whatever made it so (a '
    'failure, the expired-lease sweep, a cancel, an UPDATE by hand), its failure alert is posted;'
    ' jobs cancelled by a bulk action (document_jobs.bulk_action on for that transaction) are '
    'not, that being one decision of one operator, in the audit once. Security definer: it reads '
    'Vault, and the UPDATE may come from service_role, which may not. A failure of the alert '
    'itself is a WARNING and never undoes the job''s state change: a queue that cannot fail a job '
    'because it cannot alert would stop claiming altogether.';
comment on function document_jobs_internal.backoff(integer) is
    'Delay before the next attempt after the n-th failed one: 1, 5, 15, 60 times '
    'document_jobs_settings.backoff_base (a minute), with ±10 % jitter so that jobs that failed '
    'together (a provider outage) do not all retry in the same second.';
comment on function document_jobs_internal.bulk_action_progress(uuid) is
    'Where a bulk action stands: counts so far, skips by reason, and the first 100 jobs it could '
    'not change, with why.';
comment on function document_jobs_internal.bulk_cancel_batch(uuid, uuid[], text) is
    'One batch of a bulk cancel: every job of the batch still queued or running is cancelled with'
    ' the action''s reason (without a failure alert each: see alert_job_failed), and the others '
    'are recorded as skipped, with why.';
comment on function document_jobs_internal.bulk_retry_batch(uuid, uuid[]) is
    'One batch of a bulk retry: of the batch''s jobs still failed, each one whose e-mail has no '
    'live job goes back to queued; of several failed jobs of one e-mail in the action, only the '
    'newest (whichever batch it falls in). Returns the ids it changed and records why the others '
    'were not.';
comment on function document_jobs_internal.cancel_live(uuid[], text) is
    'queued or running -> failed, with outcome and last_error_code cancelled and the reason as '
    'the message, for every live job of p_job_ids; returns the ids it changed. The one definition'
    ' of a cancel (the CLI''s, the screen''s, a bulk cancel); a running job''s worker learns it at '
    'its next fenced call.';
comment on function document_jobs_internal.chat_message(jsonb, text) is
    'A chat message for the receiver (slack, mattermost, discord or teams): p_lines is an array '
    'of lines, each an array of segments, a string (our own words) or {"quote": text, "max": n} '
    '(a sender''s text or an identifier, escaped for the receiver; null shows as "(none)"). '
    'Answers the receiver''s fields, to be merged into the alert''s JSON.';
comment on function document_jobs_internal.check_health() is
    'The health check the cron job document-jobs-health runs every minute; answers the alerts it '
    'queued. Through set_outage it moves each cause to what it finds: the queue stalled (the '
    'oldest claimable job waiting longer than alert_stall_after), the worker unauthorized, not '
    'found or failing (its answers of the last 5 minutes, a cause holding while they hold it and '
    'none is a success), and each release cause whose releases keep happening (2 or more in 2 '
    'hours, no job completed since the latest). It also forgets worker_requests older than 7 '
    'hours.';
comment on function document_jobs_internal.email_matches_sql(text, text) is
    'The term anywhere in an e-mail row''s sender or subject (ILIKE, the term''s own %, _ and \ '
    'taken literally), as SQL over the row alias p_alias: the search walk''s check, job by job.';
comment on function document_jobs_internal.emails_matching(text, integer) is
    'The e-mails whose sender or subject holds the term, or whose provider''s id is the term: at '
    'most p_limit of them (p_limit means "maybe more"). The senders come from email_senders and '
    'their e-mails from the hash index, the subjects from their trigram index (which needs three '
    'characters of the term), each part''s read stopping at p_limit. The term goes into the '
    'statement as a literal, so that the planner sees the pattern (and its trigrams) it plans '
    'for.';
comment on function document_jobs_internal.emails_with_provider_id(text) is
    'The e-mails whose provider''s id is p_provider_email_id, whichever the provider: the unique '
    'index is on (provider, provider_email_id), so the providers are listed first (a loose index '
    'scan, one probe each) and each is looked up with the id. A plain search by the id alone '
    'would read the whole table.';
comment on function document_jobs_internal.fail_expired() is
    'The sweep, run by every claim and by invoke_document_jobs: running jobs whose lease passed '
    'with no attempt left would otherwise stay running forever (they are not claimable), so they '
    'end failed with outcome lease_expired; returns how many. SKIP LOCKED: concurrent sweepers '
    'never wait for each other, and whoever holds a row sweeps it. PL/pgSQL rather than SQL: it '
    'keeps its plan, where a SQL function with SET is planned again on every call.';
comment on function document_jobs_internal.fill_hourly_outcomes() is
    'Computes the settled hours of the last 7 days missing from hourly_outcomes (an hour that '
    'ended more than 10 minutes ago) and keeps them; returns how many it computed (none, on '
    'almost every call).';
comment on function document_jobs_internal.invocation_cap() is
    'How many worker invocations may be in flight: '
    'document_jobs_settings.max_invocations_in_flight, or else three times the requests per '
    'second the Resend limiter leaves this queue (12 at 5 requests a second with 20 % left to '
    'others), 1 to 20, and 12 without a limiter row. Every start of the worker goes through '
    'post_worker, which holds to it.';
comment on function document_jobs_internal.invocations_in_flight() is
    'Worker invocations in flight: POSTed within the last maxDuration (300 s) and not answered. '
    'An answer is recorded after its request, so only the answers of that same span are looked at'
    ' (pg_net''s answer table keeps 6 hours of everyone''s answers, indexed on created).';
comment on function document_jobs_internal.job_failed_alert(public.document_jobs) is
    'The failure alert of one job (alert_body): its machine-readable fields, and the receiver''s '
    'message made of quoted lines (the job and its error; its e-mail''s sender, subject and file '
    'names, at most 5; the CLI commands that retry it and show its history). PL/pgSQL rather than'
    ' SQL: it keeps its plans, where a SQL function with SET is planned again on every call.';
comment on function document_jobs_internal.job_filter(jsonb) is
    'A filter, checked and normalized: {"states": [...], "kind", "error_code", "received_from", '
    '"received_to", "q"}, every key optional; anything else is refused with 22023 and a message '
    'naming the key. "Received" is when the webhook recorded the e-mail (the job''s created_at).';
comment on function document_jobs_internal.job_filter_sql(jsonb) is
    'A normalized filter as one SQL condition over a job row "j" (states, kind, error code, '
    'received time, search); "true" when it has none. The meaning of a filter, in one place.';
comment on function document_jobs_internal.job_search_sql(text) is
    'A normalized filter''s search term as SQL over a job row "j": the job''s id or its e-mail''s id'
    ' (when the term is a UUID), the provider''s e-mail id, or the term anywhere in the sender or '
    'the subject (email_matches_sql).';
comment on function document_jobs_internal.job_summary(public.document_jobs, public.fax_received_emails) is
    'A job and its e-mail as the admin screen''s list shows them (long texts shortened to 300 '
    'characters).';
comment on function document_jobs_internal.jobs_by_state_sql(jsonb, text, integer) is
    'The newest p_limit jobs that match a filter and p_extra (a keyset condition), as a query of '
    '(id, created_at, fax_received_email_id) for the caller to order by (created_at desc, id '
    'desc) and limit again. One branch per state, each with its own ORDER BY and LIMIT, so that '
    'each is a range scan of document_jobs_by_status_received (or document_jobs_by_error_code) '
    'that stops after p_limit entries and the planner merges the branches (Merge Append). Without'
    ' the branches'' own LIMIT, PostgreSQL 15 plans the union of a million completed jobs as a '
    'scan and a sort of all of them (make bench, section "Admin screen").';
comment on function document_jobs_internal.like_pattern(text) is
    '''%term%'' for ILIKE, with the term''s own %, _ and \ taken literally.';
comment on function document_jobs_internal.next_run_after(integer, interval) is
    'When the next attempt may start, for every path that puts a job back (as River''s NextRetry).'
    ' A failure (p_failed_attempt given) waits for its backoff or the provider''s retry-after, '
    'whichever is longer; a release (p_failed_attempt null) waits for its delay only.';
comment on function document_jobs_internal.note_sender() is
    'Trigger fax_received_emails_note_sender: every sender an e-mail has or had is kept in '
    'email_senders, so that a search by sender reads the distinct senders instead of every '
    'e-mail. Security definer: the e-mails are written as service_role, which has no privilege on'
    ' the helpers'' tables.';
comment on function document_jobs_internal.one_line(text, integer) is
    'One line of at most p_max characters: control characters removed, every kind of line break '
    'and tab a space, bidirectional controls (which reorder what is shown) dropped, spaces '
    'collapsed.';
comment on function document_jobs_internal.outage_advice(text) is
    'What each outage cause means for the operator: the likely fault, and what to check (for a '
    'release cause, release_causes'' advice).';
comment on function document_jobs_internal.outcomes_by_hour(timestamp with time zone, timestamp with time zone) is
    'Attempts that ended between p_from and p_to, per UTC hour: how many completed, failed and '
    'were retried, and the latency from the job''s creation (the webhook recording the e-mail) to '
    'its completion, p50 and p95 in milliseconds. Computed from the attempt history; '
    'fill_hourly_outcomes keeps the settled hours.';
comment on function document_jobs_internal.post_alert(jsonb) is
    'POSTs one alert through pg_net to the URL in the Vault secret document_jobs_alert_url (sent '
    'if the transaction commits); null and a WARNING when none is stored. Runs as postgres, from '
    'the failure trigger or the health check; the alert never carries a Vault secret.';
comment on function document_jobs_internal.post_worker(integer) is
    'POSTs to the worker through pg_net, at most p_count and only while fewer than '
    'invocation_cap() are in flight; the requests are sent only if and after the calling '
    'transaction commits, each recorded in worker_requests. Returns how many were queued (0 and a'
    ' WARNING when Vault lacks the worker''s URL or secret: migrations may run before the operator'
    ' stores them). How many is its callers'' choice: one for a kick, the fan-out for the cron and'
    ' the follow-ups.';
comment on function document_jobs_internal.purge_cutoff(interval) is
    'The cutoff of a purge: completed jobs that finished before it go. One definition for the '
    'purge and its dry run; the age is the retention setting unless one is given, held to the '
    'same bounds.';
comment on function document_jobs_internal.rate_limit_slot(public.document_jobs_rate_limits, timestamp with time zone) is
    'The next slot of a limiter at p_now, and the schedule after it: the GCRA''s arithmetic alone,'
    ' without the clock or the row, so that a test can replay any sequence of arrivals. With T = '
    '1 / (rate x (1 - share)) and a tolerance of b x T, at most `rate` slots fall in any '
    'one-second window. The bound can be exact (rate 5, share 0.1, burst 1: six slots span '
    'exactly one second), so T is rounded up to whole microseconds (a timestamp''s precision) and '
    'the tolerance down, never the other way.';
comment on function document_jobs_internal.record_attempt() is
    'Trigger document_jobs_record_attempt: when an attempt ends (a running job leaves running, or'
    ' is claimed again once its lease passed), its row goes into document_job_attempts with the '
    'outcome the ending function stored in attempt_outcome (lease_expired for a takeover, failed '
    'for an UPDATE by hand that stored none). Security definer: service_role may update '
    'document_jobs directly, and still must not be able to write history. It never raises on a '
    'duplicate (on conflict do nothing): a queue state change must not fail over its history.';
comment on function document_jobs_internal.refuse_attempt_update() is
    'Trigger document_job_attempts_append_only: no UPDATE of the attempt history, even by the '
    'table''s owner, since a history that can be rewritten is not one (rows go only with their '
    'job, by the purge).';
comment on function document_jobs_internal.refuse_audit_change() is
    'Trigger document_jobs_audit_append_only: the audit''s rows are never updated or deleted, '
    'whoever asks.';
comment on function document_jobs_internal.requeue_failed(uuid[]) is
    'failed -> queued with its attempts and time-budget releases reset (a retry by hand starts '
    'the count afresh), for every job of p_job_ids that is failed; returns the ids it changed. '
    'The unique index on live jobs refuses a second live job of the same e-mail '
    '(unique_violation): callers decide what that means.';
comment on function document_jobs_internal.require(boolean, text) is
    'Bad arguments are refused with SQLSTATE 22023 (invalid_parameter_value): PostgREST answers '
    'them with HTTP 400 and this message.';
comment on function document_jobs_internal.require_actor(uuid, text, boolean) is
    'The operator and the reason every operator action names: an actor id, and a reason of at '
    'most 500 characters (not empty when p_reason_required); 22023 otherwise.';
comment on function document_jobs_internal.require_holder(uuid, integer) is
    'The arguments every fenced write names: neither p_job_id nor p_generation may be null '
    '(22023).';
comment on function document_jobs_internal.require_kind(text) is
    'A kind must be one of document_job_kinds (22023 otherwise, naming the table).';
comment on function document_jobs_internal.require_retention(text, interval) is
    'How long completed jobs are kept: an hour at least (a job that just completed may still be '
    'looked at), ten years at most (long enough for any audit of the job history; a retention of '
    'a million years is a typo that turns the purge off). True, for the settings'' check '
    'constraint, or 22023 like every argument check.';
comment on function document_jobs_internal.require_retry_after(interval) is
    'How long a failed or released job may wait before its next attempt (a provider''s '
    'retry-after, or a delay chosen by the worker): 0 to limits().retry_after_max, a day; 22023 '
    'otherwise. A longer wait parks the job where no one is looking for it; a provider that asks '
    'for more (a monthly quota) is simply asked again then.';
comment on function document_jobs_internal.reserve_request(text, integer) is
    'Reserves the provider''s next slot for one request (rate_limit_slot), unless it is more than '
    'p_max_wait_ms away (then nothing is reserved, and the answer says how long it would have '
    'been). Answers {"reserved": bool, "wait_ms": int, "limit": the team''s limit as known here}. '
    'The row lock is held until the caller''s transaction ends: reservations are served one at a '
    'time, in order.';
comment on function document_jobs_internal.search_walk(jsonb, timestamp with time zone, uuid, integer, integer) is
    'The walk of a search: of the newest p_walk jobs that the filter''s other conditions keep '
    '(after p_after_created_at/p_after_id, when given), the first p_limit + 1 that match its '
    'term, newest first; and, when those are p_limit or fewer and the walk read all p_walk jobs, '
    'the oldest of them (where a partial page ends). The walk''s jobs come in order, so the term '
    'is checked job by job and the check stops with a full page.';
comment on function document_jobs_internal.set_outage(text, boolean, text, text, jsonb) is
    'Moves one outage cause to what the check found (true: holds; false: cleared; null: no '
    'evidence either way, e.g. no call answered lately) and sends what that calls for: at most '
    'one alert an hour, and a recovered alert only after a down alert of the same episode. An '
    'outage whose evidence has a last_error (a release cause: the provider''s message) quotes it '
    'on a line of its own. Returns the alerts queued.';
comment on function document_jobs_internal.start_workers(integer) is
    'The fan-out, the cron''s and a stopping invocation''s follow-up: one invocation per '
    'limits().jobs_per_invocation claimable jobs, at most p_at_most (null: no bound but the cap),'
    ' within the cap on invocations in flight (post_worker). Nothing claimable: no HTTP at all.';
comment on function document_jobs_internal.text_array(jsonb) is
    'A field of the webhook''s data that should be a list of addresses: a lone string counts as '
    'one.';
comment on function document_jobs_internal.try_timestamptz(text) is
    'A field of the webhook''s data that should be a timestamp: an ISO 8601 date and time (with or'
    ' without a zone) that PostgreSQL reads, or null, so that nothing else (a bare date, a word, '
    '2026-02-30) is ever guessed at.';

comment on table public.document_jobs is
    'The job queue: one row per job of a kind for an e-mail, moved through queued, running, '
    'completed and failed only by the functions of this schema. At most one live (queued or '
    'running) job per target; a running job''s lease and generation fence every write of the '
    'worker that holds it.';
comment on table public.document_job_kinds is
    'The kinds of job there are: a new kind is a row added by a migration (and a worker for it).';
comment on table public.document_jobs_settings is
    'The one row of settings an operator may change by hand: backoff_base (the backoff schedule '
    'is 1, 5, 15, 60 times it; tests and the chaos run shorten it instead of changing code), the '
    'retention of completed jobs (set_document_jobs_retention), alert_stall_after, alert_receiver'
    ' and max_invocations_in_flight. Each is checked by a constraint, so a value set by hand is '
    'held to the same bounds.';
comment on table public.fax_received_email_attachments is
    'One row per attachment stored in Storage (the private bucket fax-attachments), written by '
    'the worker through record_document_attachment_v2. Unique per e-mail and provider attachment '
    'id: a job run again updates its row instead of adding one.';
comment on view public.document_jobs_claimable is
    'THE definition of claimable: claim_document_jobs locks through it, the fan-out, the stats '
    'and the health check count through it, so that they can never disagree. A running job''s '
    'run_after is always in the past (it was claimable when it was claimed), so run_after <= '
    'now() holds for both arms and bounds the index scan.';
comment on sequence public.document_jobs_audit_id_seq is
    'The identity of document_jobs_audit.id: the audit''s order, which document_jobs_admin_audit '
    'pages by.';
comment on table document_jobs_internal.bulk_actions is
    'A bulk action (prepare_document_jobs_bulk_action): the filter it was counted with, the '
    'operator, the jobs counted, and how far applying it got (changed, skipped, started, '
    'finished).';
comment on table document_jobs_internal.bulk_action_jobs is
    'The jobs a bulk action counted, each with whether applying it changed or skipped the job, '
    'and why (not_failed, another_live_job, another_job_of_the_same_email, not_live, '
    'job_deleted). No foreign key to the job: a job may be purged while the action''s record of it'
    ' stays.';
comment on table document_jobs_internal.email_senders is
    'Every sender (the From line as recorded) that an e-mail has or had, kept by the trigger '
    'fax_received_emails_note_sender, so that a search by sender reads the distinct senders. '
    'Unique by the SHA-256 of the text: a b-tree over the text itself would refuse a From line '
    'longer than about 2,700 bytes, and with it the e-mail.';
comment on table document_jobs_internal.hourly_outcomes is
    'The overview''s hourly series per UTC hour (outcomes_by_hour): attempts completed, failed for'
    ' good and retried, and the latency from the e-mail''s recording to the job''s completion (p50,'
    ' p95). The attempt history never changes, so an hour that ended more than 10 minutes ago is '
    'computed once and kept here; the last one or two are computed on each call.';
comment on table document_jobs_internal.outages is
    'One row per cause the health check can report: whether it holds now, since when, and when it'
    ' was last alerted (at most once an hour; a recovered alert only after a down alert of the '
    'same episode, so a flapping cause sends at most two alerts an hour).';
comment on table document_jobs_internal.worker_requests is
    'The worker''s POSTs (pg_net request ids, with when they were counted), so that its answers '
    'can be told apart in net._http_response (which has the request id, not the URL) and the '
    'invocations in flight counted. Kept a little longer than pg_net keeps answers (6 hours): '
    'check_health forgets rows older than 7 hours.';
comment on type document_jobs_internal.limits is
    'The row limits() answers: a named composite type, not a record, because the planner folds an'
    ' immutable function without arguments into a constant only when it returns a named type.';
