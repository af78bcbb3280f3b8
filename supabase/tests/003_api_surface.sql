-- The database's API surface is exactly what callers need. Supabase's default privileges give
-- service_role (and anon, authenticated) EXECUTE on every function a migration creates in
-- public, and PostgREST serves every function service_role may execute: a helper left there is
-- callable over REST. So: the functions service_role may execute are named here, one by one;
-- every other function of the project is executable by nobody but its owner.
begin;
set local client_min_messages = warning;
\ir helpers.psql
-- pgTAP only: the names below are schema-qualified, as regprocedure prints them.
set local search_path = extensions;
select plan(9);

create temporary view project_functions as
select p.oid,
       p.oid::regprocedure::text as signature,
       p.prosecdef,
       p.proconfig,
       p.proowner,
       -- who may execute it besides its owner ('-' is PUBLIC), from its ACL or the built-in default
       array(select distinct a.grantee::regrole::text
               from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
              where a.grantee <> p.proowner and a.privilege_type = 'EXECUTE'
              order by 1) as executors
  from pg_catalog.pg_proc p
 where p.pronamespace in ('public'::regnamespace, 'document_jobs_internal'::regnamespace);

select set_eq(
    $$ select signature from project_functions where pg_catalog.has_function_privilege('service_role', oid, 'execute') $$,
    array[
        'public.enqueue_document_job(text,uuid,boolean)',
        'public.claim_document_jobs(text,integer,interval)',
        'public.extend_document_job_lease(uuid,integer,interval)',
        'public.complete_document_job(uuid,integer)',
        'public.complete_document_job_and_claim_next(uuid,integer,text,interval)',
        'public.fail_document_job(uuid,integer,text,text,boolean,interval)',
        'public.release_document_job(uuid,integer,interval,text,text)',
        -- the fenced calls' v2 (one answer: {"held", "state"}); of the names above, all but
        -- complete_document_job_and_claim_next are the public API and stay (docs/QUEUE.md,
        -- "The public API"; 029_public_api.sql), and supabase/future_migrations drops that one
        'public.extend_document_job_lease_v2(uuid,integer,interval)',
        'public.complete_document_job_v2(uuid,integer)',
        'public.complete_document_job_and_claim_next_v2(uuid,integer,text,interval,text[])',
        'public.record_document_attachment_v2(uuid,integer,text,text,text,bigint,text,text,text,interval)',
        'public.fail_document_job_v2(uuid,integer,text,text,boolean,interval)',
        'public.release_document_job_v2(uuid,integer,interval,text,text)',
        'public.retry_document_job(uuid)',
        'public.invoke_document_jobs(integer)',
        'public.record_inbound_email(text,text,jsonb)',
        'public.record_document_attachment(uuid,integer,text,text,text,bigint,text,text,text,interval)',
        'public.cancel_document_job(uuid,text)',
        'public.document_jobs_stats()',
        'public.set_document_jobs_retention(interval)',
        'public.purge_document_jobs(interval)',
        'public.start_fetch_email(uuid,integer,integer)',
        'public.reserve_provider_request(text,integer)',
        'public.note_provider_rate_limit(text,integer,interval)',
        'public.complete_document_job_and_follow_up(uuid,integer)',
        'public.fail_document_job_and_follow_up(uuid,integer,text,text,boolean,interval)',
        'public.release_document_job_and_follow_up(uuid,integer,interval,text,text)',
        'public.start_fetch_email_v2(uuid,integer,integer)',
        'public.complete_document_job_and_follow_up_v2(uuid,integer)',
        'public.fail_document_job_and_follow_up_v2(uuid,integer,text,text,boolean,interval)',
        'public.release_document_job_and_follow_up_v2(uuid,integer,interval,text,text)',
        'public.count_purgeable_document_jobs(interval)',
        'public.document_jobs_health()',
        'public.admin_retry_document_job(uuid,uuid,text,text)',
        'public.admin_cancel_document_job(uuid,uuid,text,text)',
        'public.document_jobs_admin_jobs(jsonb,timestamp with time zone,uuid,integer)',
        'public.document_jobs_admin_job(uuid)',
        'public.document_jobs_admin_audit(bigint,integer)',
        'public.document_jobs_admin_overview()',
        'public.prepare_document_jobs_bulk_action(text,jsonb,uuid,text)',
        'public.apply_document_jobs_bulk_action(uuid,uuid,text,integer)',
        'public.document_jobs_find_by_id(text)',
        'public.document_jobs_operator_me(uuid,uuid)',
        'public.document_jobs_operator_overview(uuid,uuid)',
        'public.document_jobs_operator_jobs(uuid,uuid,jsonb,timestamp with time zone,uuid,integer)',
        'public.document_jobs_operator_job(uuid,uuid,uuid)',
        'public.document_jobs_operator_audit(uuid,uuid,bigint,integer)',
        'public.document_jobs_operator_attachment(uuid,uuid,uuid)',
        -- reconciliation with Resend's list of received e-mails
        'public.enqueue_document_jobs_reconciliation()',
        'public.claim_document_job_of_kinds(text[],interval)',
        'public.start_reconciliation_v2(uuid,integer)',
        'public.record_reconciled_emails_v2(uuid,integer,jsonb,interval)',
        'public.finish_reconciliation_v2(uuid,integer,integer,timestamp with time zone,text)',
        'public.unrecorded_provider_emails(text[])',
        'public.admin_record_reconciled_emails(uuid,text,jsonb,timestamp with time zone,integer,jsonb)',
        'public.set_document_jobs_reconciliation(integer,interval,interval,integer,interval)',
        'public.record_reconciled_emails_v3(uuid,integer,jsonb,jsonb,interval)',
        'public.finish_reconciliation_v3(uuid,integer,integer,timestamp with time zone,text,text,integer)',
        'public.document_jobs_reconciliation_status()',
        -- preparing each fax for the screen (prepare_fax) and its backfill
        'public.start_prepare_fax_v2(uuid,integer)',
        'public.start_prepare_fax_v3(uuid,integer)',
        'public.record_fax_sender_v1(uuid,integer,jsonb)',
        'public.record_fax_attachment_view_v2(uuid,integer,uuid,text,integer,text,text,text,text,interval)',
        'public.count_unprepared_faxes()',
        'public.admin_enqueue_prepare_fax_jobs(uuid,text,uuid,integer)',
        -- verifying the stored originals (verify_originals, document-jobs-admin verify)
        'public.enqueue_original_verification()',
        'public.start_verify_originals_v2(uuid,integer)',
        'public.record_original_checks_v2(uuid,integer,bigint,jsonb,interval)',
        'public.start_original_verification(timestamp with time zone,integer)',
        'public.original_verification_items(bigint,uuid,integer)',
        'public.record_verified_originals(bigint,jsonb)',
        -- the export of the originals (document-jobs-admin export)
        'public.export_documents(date,date,timestamp with time zone,timestamp with time zone,timestamp with time zone,uuid,integer)',
        -- the export from the screen (export_faxes)
        'public.admin_request_fax_export(uuid,text,date,date)',
        'public.document_jobs_operator_fax_exports(uuid,uuid,integer)',
        'public.document_jobs_operator_fax_export(uuid,uuid,uuid)',
        'public.start_export_faxes_v1(uuid,integer,text)',
        'public.fax_export_names_taken_v1(uuid,integer,text[])',
        'public.record_fax_export_part_v1(uuid,integer,integer,text,bigint,text,timestamp with time zone,uuid,jsonb,interval)',
        'public.fax_export_files_v1(uuid,integer,integer,integer)',
        'public.finish_fax_export_v1(uuid,integer,jsonb,jsonb)',
        'public.document_jobs_admin_fax(uuid)',
        'public.document_jobs_admin_faxes(jsonb,timestamp with time zone,uuid,integer)',
        'public.document_jobs_operator_fax(uuid,uuid,uuid)',
        'public.document_jobs_operator_faxes(uuid,uuid,jsonb,timestamp with time zone,uuid,integer)',
        'public.admin_set_fax_rotation(uuid,text,uuid,integer)',
        'public.set_fax_line(text,text,text)',
        'public.remove_fax_line(text)',
        -- an index's expression runs as the role that writes the row (fax_received_emails_number_digits, _number_runs)
        'document_jobs_internal.fax_number_digits(text,text)',
        'document_jobs_internal.fax_number_runs(text)',
        -- originals never replaced: versions, the raw message, and a discard decided under the fence
        'public.record_document_attachment_v3(uuid,integer,text,text,text,jsonb,interval)',
        'public.record_raw_message_v2(uuid,integer,jsonb,text,interval)',
        'public.discard_unrecorded_object_v2(uuid,integer,text,text,bigint,text,text)',
        -- a fax's index fields and the counterparties suggested for them
        'public.set_fax_index(uuid,text,uuid,jsonb,text,integer)',
        'public.document_jobs_admin_counterparties(text)',
        'public.document_jobs_operator_counterparties(uuid,uuid,text)',
        -- who is dealing with a fax
        'public.document_jobs_admin_fax_handling(uuid)',
        'public.document_jobs_operator_fax_handling(uuid,uuid,uuid)',
        'public.mark_fax_handling(uuid,uuid,text,text,text)',
        'public.prepare_fax_handling_bulk(text,jsonb,uuid)',
        'public.apply_fax_handling_bulk(uuid,uuid,text,integer)',
        -- deleting a fax after its keep-until date, and removing its objects
        'public.admin_delete_fax(uuid,text,uuid,text)',
        'public.fax_objects_to_remove(integer)',
        'public.record_fax_object_removal(uuid,text,bigint,text,text)'
    ],
    'service_role may execute exactly the functions callers use (the admin screen''s too)');

select set_eq(
    $$ select signature from project_functions where executors = '{}' $$,
    array[
        'document_jobs_internal.address_of(text)',
        'document_jobs_internal.faxes_filter(jsonb)',
        'document_jobs_internal.faxes_match_sql(jsonb)',
        'document_jobs_internal.faxes_time_sql(jsonb)',
        'document_jobs_internal.faxes_candidates(jsonb,integer)',
        'document_jobs_internal.fax_storing(uuid)',
        'document_jobs_internal.fax_summary(public.fax_received_emails)',
        'document_jobs_internal.require(boolean,text)',
        'document_jobs_internal.require_holder(uuid,integer)',
        'document_jobs_internal.require_kind(text)',
        'document_jobs_internal.limits()',
        'document_jobs_internal.next_run_after(integer,interval)',
        'document_jobs_internal.require_retry_after(interval)',
        'document_jobs_internal.require_retention(text,interval)',
        'document_jobs_internal.backoff(integer)',
        'document_jobs_internal.fail_expired()',
        'document_jobs_internal.post_worker(integer)',
        'document_jobs_internal.try_timestamptz(text)',
        'document_jobs_internal.text_array(jsonb)',
        'document_jobs_internal.refuse_attempt_update()',
        'document_jobs_internal.record_attempt()',
        'document_jobs_internal.post_alert(jsonb)',
        'document_jobs_internal.one_line(text,integer)',
        'document_jobs_internal.chat_message(jsonb,text)',
        'document_jobs_internal.alert_body(jsonb,jsonb)',
        'document_jobs_internal.job_failed_alert(public.document_jobs)',
        'document_jobs_internal.alert_job_failed()',
        'document_jobs_internal.outage_advice(text)',
        'document_jobs_internal.outage_advice_ja(text)',
        'document_jobs_internal.set_outage(text,boolean,text,text,jsonb)',
        'document_jobs_internal.check_health()',
        'document_jobs_internal.rate_limit_slot(public.document_jobs_rate_limits,timestamp with time zone)',
        'document_jobs_internal.reserve_request(text,integer)',
        'document_jobs_internal.invocation_cap()',
        'document_jobs_internal.invocations_in_flight()',
        'document_jobs_internal.pg_net_generation_in_use()',
        'document_jobs_internal.current_pg_net_generation()',
        'document_jobs_internal.start_workers(integer)',
        'document_jobs_internal.purge_cutoff(interval)',
        'document_jobs_internal.refuse_audit_change()',
        'document_jobs_internal.requeue_failed(uuid[])',
        'document_jobs_internal.cancel_live(uuid[],text)',
        'document_jobs_internal.require_actor(uuid,text,boolean)',
        'document_jobs_internal.operator_role(uuid,uuid,text[])',
        'document_jobs_internal.acting_operator(uuid,text[])',
        'document_jobs_internal.job_filter(jsonb)',
        'document_jobs_internal.email_matches_sql(text,text)',
        'document_jobs_internal.like_pattern(text)',
        'document_jobs_internal.job_search_sql(text)',
        'document_jobs_internal.job_filter_sql(jsonb)',
        'document_jobs_internal.jobs_by_state_sql(jsonb,text,integer)',
        'document_jobs_internal.emails_with_provider_id(text)',
        'document_jobs_internal.emails_matching(text,integer)',
        'document_jobs_internal.emails_from_sender(text,integer)',
        'document_jobs_internal.sender_match_sql(text)',
        'document_jobs_internal.alert_time(timestamp with time zone)',
        'document_jobs_internal.note_sender()',
        'document_jobs_internal.search_walk(jsonb,timestamp with time zone,uuid,integer,integer)',
        'document_jobs_internal.job_summary(public.document_jobs,public.fax_received_emails)',
        'document_jobs_internal.outcomes_by_hour(timestamp with time zone,timestamp with time zone)',
        'document_jobs_internal.fill_hourly_outcomes()',
        'document_jobs_internal.bulk_action_progress(uuid)',
        'document_jobs_internal.bulk_retry_batch(uuid,uuid[])',
        'document_jobs_internal.bulk_cancel_batch(uuid,uuid[],text)',
        'document_jobs_internal.id_prefix(text)',
        'document_jobs_internal.jobs_with_id_prefix(text,integer)',
        'document_jobs_internal.record_reconciled(jsonb)',
        'document_jobs_internal.continue_reconciliation()',
        'document_jobs_internal.reconcile_schedule(integer)',
        'document_jobs_internal.check_webhooks_missing()',
        'document_jobs_internal.note_unreadable(jsonb,text)',
        'document_jobs_internal.open_unreadable()',
        'document_jobs_internal.unreadable_shown(integer)',
        'document_jobs_internal.retention_window()',
        'document_jobs_internal.outage_details(text)',
        'document_jobs_internal.set_outage_once(text,bigint,text,text,jsonb)',
        'document_jobs_internal.check_reconciliation()',
        'document_jobs_internal.enqueue_prepare_fax()',
        'document_jobs_internal.unprepared(uuid)',
        'document_jobs_internal.record_email(text,text,jsonb,text)',
        'document_jobs_internal.record_tables()',
        'document_jobs_internal.record_guards()',
        'document_jobs_internal.refuse_record_change()',
        'document_jobs_internal.refuse_record_delete()',
        'document_jobs_internal.guard_record_tables()',
        'document_jobs_internal.record_guard_problems()',
        'document_jobs_internal.check_record_guards()',
        'document_jobs_internal.original_sample(integer,timestamp with time zone,interval)',
        'document_jobs_internal.start_verify_run(text,uuid,timestamp with time zone,integer)',
        'document_jobs_internal.verify_items(public.original_verify_runs,uuid,integer)',
        'document_jobs_internal.fax_export_read(public.fax_exports)',
        'document_jobs_internal.held_export(uuid,integer)',
        'document_jobs_internal.check_original_mismatches()',
        'document_jobs_internal.try_uuid(text)',
        'document_jobs_internal.record_original_checks(bigint,jsonb)',
        'document_jobs_internal.outage_advice_before_verification(text)',
        'document_jobs_internal.outage_advice_ja_before_verification(text)',
        'document_jobs_internal.object_recorded(text,text)',
        'document_jobs_internal.require_not_discarded(text,text)',
        'document_jobs_internal.record_attachment_version(uuid,text,text,text,integer,bigint,text,text,text)',
        'document_jobs_internal.hold_fetch_job(uuid,integer,interval)',
        'document_jobs_internal.require_versions(jsonb,text)',
        'document_jobs_internal.finding_advice(text)',
        'document_jobs_internal.finding_advice_ja(text)',
        'document_jobs_internal.original_differs_alert(uuid,uuid,text,jsonb)',
        'document_jobs_internal.fax_document_types()',
        'document_jobs_internal.kana_fold(text)',
        'document_jobs_internal.note_counterparties()',
        'document_jobs_internal.note_number_runs()',
        'document_jobs_internal.number_runs_sql(text)',
        'document_jobs_internal.refuse_fax_index_history_change()',
        'document_jobs_internal.fax_index_values(jsonb)',
        'document_jobs_internal.fax_index_json(public.fax_index)',
        'document_jobs_internal.fax_index_read(uuid)',
        'document_jobs_internal.faxes_index_filter(jsonb)',
        'document_jobs_internal.faxes_index_sql(jsonb)',
        'document_jobs_internal.handling_states()',
        'document_jobs_internal.refuse_handling_history_change()',
        'document_jobs_internal.fax_handling_summary(uuid)',
        'document_jobs_internal.fax_handling_read(uuid,integer)',
        'document_jobs_internal.handling_after(public.fax_handling,uuid,text,text,uuid,text)',
        'document_jobs_internal.handling_changes(public.fax_handling,public.fax_handling)',
        'document_jobs_internal.write_handling(public.fax_handling,public.fax_handling,text,bigint)',
        'document_jobs_internal.require_note(text)',
        'document_jobs_internal.handling_bulk_progress(uuid)',
        'document_jobs_internal.is_time_zone(text)',
        'document_jobs_internal.office_time_zone()',
        'document_jobs_internal.keep_until(timestamp with time zone)',
        'document_jobs_internal.fax_retention(public.fax_received_emails)',
        'document_jobs_internal.fax_objects(uuid)',
        'document_jobs_internal.require_past_keep_until(public.fax_received_emails)',
        'document_jobs_internal.refuse_early_deletion()',
        'document_jobs_internal.note_fax_ready()',
        'document_jobs_internal.office_time(timestamp with time zone)',
        'document_jobs_internal.screen_url()',
        'document_jobs_internal.announce_faxes()'
    ],
    'nobody but their owner may execute the helpers (argument checks, backoff, the sweep, worker POSTs, e-mail parsing,'
    ' the history and alert triggers, the health check, the rate limiter''s schedule, the invocations in flight and their pg_net generation,'
    ' the admin screen''s filter and batches, the record''s guards)');

select is_empty(
    $$ select signature, executors from project_functions where executors not in ('{}', '{service_role}') $$,
    'no function is executable by PUBLIC, anon or authenticated, nor by service_role next to another role');

select is_empty(
    $$ select signature from project_functions
        where pg_catalog.has_function_privilege('anon', oid, 'execute')
           or pg_catalog.has_function_privilege('authenticated', oid, 'execute') $$,
    'anon and authenticated may execute no function of the project, through any role either');

select set_eq(
    $$ select signature from project_functions where signature like 'document_jobs_internal.%' and prosecdef $$,
    array['document_jobs_internal.record_attempt()', 'document_jobs_internal.alert_job_failed()',
          'document_jobs_internal.note_sender()', 'document_jobs_internal.note_fax_ready()',
          'document_jobs_internal.note_counterparties()', 'document_jobs_internal.note_number_runs()'],
    'the helpers run as their caller, always a public function or the cron job running as the owner; but the six'
    ' triggers that write history, read Vault, note a sender, a counterparty or a number''s runs of digits and note'
    ' a fax ready to announce run as the owner whatever role changes a job, records an e-mail or sets its index');

select is_empty(
    $$ select signature from project_functions where executors = '{service_role}' and not prosecdef
          and signature not in ('document_jobs_internal.fax_number_digits(text,text)',
                                'document_jobs_internal.fax_number_runs(text)') $$,
    'every function service_role calls is security definer (but the immutable ones the indexes of the e-mails evaluate)');

select is_empty(
    $$ select signature from project_functions where proconfig is null or not ('search_path=""' = any (proconfig)) $$,
    'every function fixes an empty search_path');

select is_empty(
    $$ select signature from project_functions where proowner <> 'postgres'::regrole $$,
    'postgres owns every function (the security definer ones read Vault as postgres)');

-- Usage on the schema is what name lookup needs: without it, nothing in it can even be named.
select is(
    array(select a.grantee::regrole::text
            from pg_catalog.pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
           where n.nspname = 'document_jobs_internal' and a.grantee <> n.nspowner),
    '{}'::text[],
    'no role but its owner has any privilege on schema document_jobs_internal');

select * from finish();
rollback;
