-- The current schema of document-jobs: every function, table, view, index, grant, policy, seeded
-- row and cron job of a database that applied supabase/migrations, each object once, grouped by
-- concern (devstack/tools/schema.py). For reading and diffing, never applied. GENERATED, never
-- edited: a change is a new migration, then `make schema`. tests/tooling/test_schema_file.py fails when this
-- file is not what the migrations build.

-- =================================================================================================
-- THE RECORD of received faxes: rows inserted once, never updated or deleted (record_guards)
-- =================================================================================================

COMMENT ON TABLE public.fax_deletions IS 'THE RECORD of approved deletions: one row per received fax (e-mail) an admin deleted after its keep-until date (admin_delete_fax), with who, why, when and what went (what: the rows'' ids, the objects'' keys and SHA-256, the index values and their history, the handling and its history, the jobs, and the objects to remove). The guard of the record tables lets a row of fax_received_emails, fax_received_email_attachments or fax_received_email_raw_messages (and of the handling''s and the index''s histories) be deleted only when a row here names its e-mail; this table itself is never updated, deleted or truncated, and refuses an approval for a fax whose keep-until date is not past (fax_deletions_only_after_keep_until), whoever inserts it. Its objects are removed from Storage afterwards, each recorded in fax_object_removals.';
CREATE TABLE public.fax_deletions (
    id bigint NOT NULL,
    fax_received_email_id uuid NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    reason text NOT NULL,
    what jsonb NOT NULL,
    approved_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_deletions_reason CHECK (((length(btrim(reason)) >= 1) AND (length(btrim(reason)) <= 500))),
    CONSTRAINT fax_deletions_what CHECK ((jsonb_typeof(what) = 'object'::text))
);
COMMENT ON COLUMN public.fax_deletions.fax_received_email_id IS 'The e-mail (fax_received_emails.id) whose rows may be deleted. No foreign key: the row outlives the e-mail it names.';
COMMENT ON COLUMN public.fax_deletions.what IS 'What was to go, as the action found it before deleting: the e-mail''s and the attachments'' rows, the objects'' keys and SHA-256, the index values.';
ALTER TABLE public.fax_deletions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.fax_deletions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.fax_deletions_id_seq IS 'The identity of fax_deletions.id: the order in which deletions were approved.';
ALTER TABLE ONLY public.fax_deletions
    ADD CONSTRAINT fax_deletions_one_per_email UNIQUE (fax_received_email_id);
ALTER TABLE ONLY public.fax_deletions
    ADD CONSTRAINT fax_deletions_pkey PRIMARY KEY (id);
CREATE TRIGGER fax_deletions_only_after_keep_until BEFORE INSERT ON public.fax_deletions FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_early_deletion();
ALTER TABLE public.fax_deletions ENABLE ALWAYS TRIGGER fax_deletions_only_after_keep_until;
CREATE TRIGGER record_deleted_only_as_approved BEFORE DELETE ON public.fax_deletions FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_delete();
ALTER TABLE public.fax_deletions ENABLE ALWAYS TRIGGER record_deleted_only_as_approved;
CREATE TRIGGER record_not_truncated BEFORE TRUNCATE ON public.fax_deletions FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_deletions ENABLE ALWAYS TRIGGER record_not_truncated;
CREATE TRIGGER record_not_updated BEFORE UPDATE ON public.fax_deletions FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_deletions ENABLE ALWAYS TRIGGER record_not_updated;
CREATE TRIGGER record_not_updated_by_statement BEFORE UPDATE ON public.fax_deletions FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_deletions ENABLE ALWAYS TRIGGER record_not_updated_by_statement;
ALTER TABLE public.fax_deletions ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_deletions TO service_role;

COMMENT ON TABLE public.fax_object_removals IS 'THE RECORD of the objects removed from Storage after an approved deletion (fax_deletions): which (bucket, key, kind), for which deletion, by whom (an admin, checked in Auth''s row) and when; written by record_fax_object_removal after Storage''s delete answered, never updated or deleted (record_guards).';
CREATE TABLE public.fax_object_removals (
    id bigint NOT NULL,
    deletion_id bigint NOT NULL,
    bucket text NOT NULL,
    storage_path text NOT NULL,
    kind text NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    removed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_object_removals_kind CHECK ((kind = ANY (ARRAY['original'::text, 'raw_message'::text, 'view'::text, 'thumbnail'::text, 'discarded'::text])))
);
ALTER TABLE public.fax_object_removals ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.fax_object_removals_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.fax_object_removals_id_seq IS 'The identity of fax_object_removals.id: the order in which objects were removed.';
ALTER TABLE ONLY public.fax_object_removals
    ADD CONSTRAINT fax_object_removals_one_per_object UNIQUE (bucket, storage_path);
ALTER TABLE ONLY public.fax_object_removals
    ADD CONSTRAINT fax_object_removals_pkey PRIMARY KEY (id);
CREATE INDEX fax_object_removals_of_deletion ON public.fax_object_removals USING btree (deletion_id);
CREATE TRIGGER record_deleted_only_as_approved BEFORE DELETE ON public.fax_object_removals FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_delete();
ALTER TABLE public.fax_object_removals ENABLE ALWAYS TRIGGER record_deleted_only_as_approved;
CREATE TRIGGER record_not_truncated BEFORE TRUNCATE ON public.fax_object_removals FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_object_removals ENABLE ALWAYS TRIGGER record_not_truncated;
CREATE TRIGGER record_not_updated BEFORE UPDATE ON public.fax_object_removals FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_object_removals ENABLE ALWAYS TRIGGER record_not_updated;
CREATE TRIGGER record_not_updated_by_statement BEFORE UPDATE ON public.fax_object_removals FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_object_removals ENABLE ALWAYS TRIGGER record_not_updated_by_statement;
ALTER TABLE ONLY public.fax_object_removals
    ADD CONSTRAINT fax_object_removals_deletion_id_fkey FOREIGN KEY (deletion_id) REFERENCES public.fax_deletions(id);
ALTER TABLE public.fax_object_removals ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_object_removals TO service_role;

COMMENT ON TABLE public.fax_received_email_attachments IS 'THE RECORD of each stored original (the private bucket fax-attachments): its key, size, SHA-256, content type and name, one row per version, written by the worker through record_document_attachment_v3 (or _v2, a previous deploy''s worker) and never updated or deleted (record_guards; a deletion only as approved in fax_deletions): recording the same values again changes nothing, and other values for a recorded version are refused. Unique per e-mail, provider attachment id and version, and per object (bucket and key).';
CREATE TABLE public.fax_received_email_attachments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    fax_received_email_id uuid NOT NULL,
    provider_attachment_id text NOT NULL,
    filename text,
    content_type text,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    bucket text NOT NULL,
    storage_path text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT fax_received_email_attachments_provider_attachment_id_check CHECK ((provider_attachment_id <> ''::text)),
    CONSTRAINT fax_received_email_attachments_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_received_email_attachments_size_bytes_check CHECK ((size_bytes >= 0)),
    CONSTRAINT fax_received_email_attachments_version CHECK ((version >= 1))
);
COMMENT ON COLUMN public.fax_received_email_attachments.filename IS 'The original file name (often Japanese); the storage path is built from ASCII ids only.';
COMMENT ON COLUMN public.fax_received_email_attachments.updated_at IS 'Always created_at: the row is never updated (the reads that show it as stored_at keep the name).';
COMMENT ON COLUMN public.fax_received_email_attachments.version IS 'Which version of the provider''s attachment the row records: 1 for the object at the attachment''s key, n for the one beside it at {key}.v{n}.{ext}. A second version exists only when an object already at a key held other bytes than the download (the alert original_differs says so); a key given up as wrong (document_jobs_internal.discarded_objects) leaves its number unused.';
ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachments_one_row_per_version UNIQUE (fax_received_email_id, provider_attachment_id, version);
ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachments_pkey PRIMARY KEY (id);
CREATE INDEX fax_received_email_attachments_created_at ON public.fax_received_email_attachments USING btree (created_at);
CREATE UNIQUE INDEX fax_received_email_attachments_one_row_per_object ON public.fax_received_email_attachments USING btree (bucket, storage_path);
CREATE TRIGGER record_deleted_only_as_approved BEFORE DELETE ON public.fax_received_email_attachments FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_delete('fax_received_email_id');
ALTER TABLE public.fax_received_email_attachments ENABLE ALWAYS TRIGGER record_deleted_only_as_approved;
CREATE TRIGGER record_not_truncated BEFORE TRUNCATE ON public.fax_received_email_attachments FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_attachments ENABLE ALWAYS TRIGGER record_not_truncated;
CREATE TRIGGER record_not_updated BEFORE UPDATE ON public.fax_received_email_attachments FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_attachments ENABLE ALWAYS TRIGGER record_not_updated;
CREATE TRIGGER record_not_updated_by_statement BEFORE UPDATE ON public.fax_received_email_attachments FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_attachments ENABLE ALWAYS TRIGGER record_not_updated_by_statement;
ALTER TABLE ONLY public.fax_received_email_attachments
    ADD CONSTRAINT fax_received_email_attachments_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE public.fax_received_email_attachments ENABLE ROW LEVEL SECURITY;
GRANT SELECT,INSERT ON TABLE public.fax_received_email_attachments TO service_role;

COMMENT ON TABLE public.fax_received_email_raw_messages IS 'THE RECORD of the e-mail itself, as Resend received it (the .eml behind the retrieve-received-email answer''s raw URL): one row per stored version, or one row saying why there is none (unavailable). Written by the fetch_email job through record_raw_message_v2 and never updated or deleted (record_guards; a deletion only as approved in fax_deletions). An e-mail fetched before this table, or older than Resend''s retention, has no row and cannot get one.';
CREATE TABLE public.fax_received_email_raw_messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    fax_received_email_id uuid NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    bucket text,
    storage_path text,
    size_bytes bigint,
    sha256 text,
    unavailable text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_received_email_raw_messages_sha256 CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_received_email_raw_messages_size_bytes CHECK ((size_bytes >= 0)),
    CONSTRAINT fax_received_email_raw_messages_stored_or_why_not CHECK ((((unavailable IS NULL) AND (bucket IS NOT NULL) AND (storage_path IS NOT NULL) AND (size_bytes IS NOT NULL) AND (sha256 IS NOT NULL)) OR ((unavailable IS NOT NULL) AND (version = 1) AND (bucket IS NULL) AND (storage_path IS NULL) AND (size_bytes IS NULL) AND (sha256 IS NULL)))),
    CONSTRAINT fax_received_email_raw_messages_unavailable CHECK ((unavailable ~ '^[a-z0-9_]{1,64}$'::text)),
    CONSTRAINT fax_received_email_raw_messages_version CHECK ((version >= 1))
);
COMMENT ON COLUMN public.fax_received_email_raw_messages.unavailable IS 'Why no raw message is stored: raw_null (Resend''s answer had none), or the failure code that refused it for good (attachment_too_large, storage_too_large, ...). Null for a stored version.';
ALTER TABLE ONLY public.fax_received_email_raw_messages
    ADD CONSTRAINT fax_received_email_raw_messages_one_row_per_version UNIQUE (fax_received_email_id, version);
ALTER TABLE ONLY public.fax_received_email_raw_messages
    ADD CONSTRAINT fax_received_email_raw_messages_pkey PRIMARY KEY (id);
CREATE INDEX fax_received_email_raw_messages_created_at ON public.fax_received_email_raw_messages USING btree (created_at, id) WHERE (unavailable IS NULL);
CREATE UNIQUE INDEX fax_received_email_raw_messages_one_row_per_object ON public.fax_received_email_raw_messages USING btree (bucket, storage_path);
CREATE TRIGGER record_deleted_only_as_approved BEFORE DELETE ON public.fax_received_email_raw_messages FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_delete('fax_received_email_id');
ALTER TABLE public.fax_received_email_raw_messages ENABLE ALWAYS TRIGGER record_deleted_only_as_approved;
CREATE TRIGGER record_not_truncated BEFORE TRUNCATE ON public.fax_received_email_raw_messages FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_raw_messages ENABLE ALWAYS TRIGGER record_not_truncated;
CREATE TRIGGER record_not_updated BEFORE UPDATE ON public.fax_received_email_raw_messages FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_raw_messages ENABLE ALWAYS TRIGGER record_not_updated;
CREATE TRIGGER record_not_updated_by_statement BEFORE UPDATE ON public.fax_received_email_raw_messages FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_email_raw_messages ENABLE ALWAYS TRIGGER record_not_updated_by_statement;
ALTER TABLE ONLY public.fax_received_email_raw_messages
    ADD CONSTRAINT fax_received_email_raw_messages_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE public.fax_received_email_raw_messages ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_received_email_raw_messages TO service_role;

COMMENT ON TABLE public.fax_received_emails IS 'THE RECORD of received faxes, one row per inbound e-mail; data is the webhook''s verbatim "data" object (or the listing''s item, found_by reconciliation). Written once by record_email''s INSERT and never updated or deleted (record_guards; a deletion only as approved in fax_deletions). What changes about a fax (its jobs, its views, its handling) lives in tables of its own.';
CREATE TABLE public.fax_received_emails (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    provider text DEFAULT 'resend'::text NOT NULL,
    provider_email_id text NOT NULL,
    webhook_id text,
    from_address text,
    to_addresses text[] DEFAULT '{}'::text[] NOT NULL,
    cc_addresses text[] DEFAULT '{}'::text[] NOT NULL,
    subject text,
    message_id text,
    received_at timestamp with time zone,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    found_by text DEFAULT 'webhook'::text NOT NULL,
    reconciled_at timestamp with time zone,
    CONSTRAINT fax_received_emails_found_by CHECK ((found_by = ANY (ARRAY['webhook'::text, 'reconciliation'::text]))),
    CONSTRAINT fax_received_emails_provider_email_id_check CHECK ((provider_email_id <> ''::text))
);
COMMENT ON COLUMN public.fax_received_emails.received_at IS 'The provider''s created_at, when it parses as a timestamp.';
COMMENT ON COLUMN public.fax_received_emails.found_by IS 'Who recorded the e-mail: webhook, or reconciliation (Resend listed it and no webhook had delivered it; webhook_id is then null). It stays so when the webhook comes later: that delivery is answered duplicate.';
COMMENT ON COLUMN public.fax_received_emails.reconciled_at IS 'When reconciliation recorded the e-mail (found_by reconciliation), else null.';
ALTER TABLE ONLY public.fax_received_emails
    ADD CONSTRAINT fax_received_emails_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.fax_received_emails
    ADD CONSTRAINT fax_received_emails_provider_provider_email_id_key UNIQUE (provider, provider_email_id);
CREATE INDEX fax_received_emails_by_id_text ON public.fax_received_emails USING btree (replace((id)::text, '-'::text, ''::text) text_pattern_ops);
CREATE INDEX fax_received_emails_by_provider_id_text ON public.fax_received_emails USING btree (lower(replace(provider_email_id, '-'::text, ''::text)) text_pattern_ops);
CREATE INDEX fax_received_emails_by_sender ON public.fax_received_emails USING hash (from_address);
CREATE INDEX fax_received_emails_delivered_by_webhook ON public.fax_received_emails USING btree (received_at) WHERE (found_by = 'webhook'::text);
CREATE INDEX fax_received_emails_found_by_reconciliation ON public.fax_received_emails USING btree (received_at) WHERE (found_by = 'reconciliation'::text);
CREATE INDEX fax_received_emails_inbox ON public.fax_received_emails USING btree (COALESCE(received_at, created_at) DESC, id DESC);
CREATE INDEX fax_received_emails_number_digits ON public.fax_received_emails USING gin (document_jobs_internal.fax_number_digits(subject, from_address) extensions.gin_trgm_ops);
CREATE INDEX fax_received_emails_number_runs ON public.fax_received_emails USING gin (document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(subject, from_address)));
CREATE INDEX fax_received_emails_subject_search ON public.fax_received_emails USING gin (subject extensions.gin_trgm_ops);
CREATE TRIGGER fax_received_emails_note_number_runs_insert AFTER INSERT ON public.fax_received_emails REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.note_number_runs();
CREATE TRIGGER fax_received_emails_note_number_runs_update AFTER UPDATE ON public.fax_received_emails REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.note_number_runs();
CREATE TRIGGER fax_received_emails_note_sender AFTER INSERT OR UPDATE OF from_address ON public.fax_received_emails FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.note_sender();
CREATE TRIGGER record_deleted_only_as_approved BEFORE DELETE ON public.fax_received_emails FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_delete('id');
ALTER TABLE public.fax_received_emails ENABLE ALWAYS TRIGGER record_deleted_only_as_approved;
CREATE TRIGGER record_not_truncated BEFORE TRUNCATE ON public.fax_received_emails FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_emails ENABLE ALWAYS TRIGGER record_not_truncated;
CREATE TRIGGER record_not_updated BEFORE UPDATE ON public.fax_received_emails FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_emails ENABLE ALWAYS TRIGGER record_not_updated;
CREATE TRIGGER record_not_updated_by_statement BEFORE UPDATE ON public.fax_received_emails FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_record_change();
ALTER TABLE public.fax_received_emails ENABLE ALWAYS TRIGGER record_not_updated_by_statement;
ALTER TABLE public.fax_received_emails ENABLE ROW LEVEL SECURITY;
GRANT SELECT,INSERT ON TABLE public.fax_received_emails TO service_role;


-- =================================================================================================
-- Everything else that is stored (it changes): schemas, tables, views, indexes, triggers and grants
-- =================================================================================================

COMMENT ON SCHEMA document_jobs_internal IS 'Helpers of the document_jobs functions: not exposed by PostgREST, callable by their owner only.';
CREATE SCHEMA document_jobs_internal;

COMMENT ON SCHEMA public IS 'standard public schema';
CREATE SCHEMA public;
GRANT USAGE ON SCHEMA public TO anon;
GRANT USAGE ON SCHEMA public TO authenticated;
GRANT USAGE ON SCHEMA public TO service_role;

COMMENT ON TABLE public.document_job_attempts IS 'Append-only history of every claim of a job and how it ended. Deleted with its job (the retention of completed jobs).';
CREATE TABLE public.document_job_attempts (
    job_id uuid NOT NULL,
    generation integer NOT NULL,
    attempt integer NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone NOT NULL,
    outcome text NOT NULL,
    error_code text,
    error_message text,
    invocation_id text,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT document_job_attempts_outcome_check CHECK ((outcome = ANY (ARRAY['completed'::text, 'retried'::text, 'released'::text, 'failed'::text, 'lease_expired'::text, 'cancelled'::text])))
);
ALTER TABLE ONLY public.document_job_attempts
    ADD CONSTRAINT document_job_attempts_pkey PRIMARY KEY (job_id, generation);
CREATE INDEX document_job_attempts_by_finished ON public.document_job_attempts USING btree (finished_at);
CREATE INDEX document_job_attempts_errors_by_finished ON public.document_job_attempts USING btree (finished_at) INCLUDE (outcome, error_code) WHERE (outcome <> 'completed'::text);
CREATE INDEX document_job_attempts_released ON public.document_job_attempts USING btree (error_code, finished_at) WHERE (outcome = 'released'::text);
CREATE TRIGGER document_job_attempts_append_only BEFORE UPDATE ON public.document_job_attempts FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_attempt_update();
ALTER TABLE ONLY public.document_job_attempts
    ADD CONSTRAINT document_job_attempts_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.document_jobs(id) ON DELETE CASCADE;
ALTER TABLE public.document_job_attempts ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.document_job_attempts TO service_role;

COMMENT ON TABLE public.document_job_kinds IS 'The kinds of job there are: a new kind is a row added by a migration (and a worker for it).';
CREATE TABLE public.document_job_kinds (
    kind text NOT NULL,
    description text NOT NULL,
    claim_order integer,
    CONSTRAINT document_job_kinds_claim_order_check CHECK ((claim_order > 0))
);
COMMENT ON COLUMN public.document_job_kinds.claim_order IS 'The order in which the worker claims the kinds (1 first): claim_document_job_of_kinds and complete_document_job_and_claim_next_v2 claim by it, and the fan-out counts only kinds that have one. Null: no worker claims the kind. lib/worker/kinds.py lists the same kinds in the same order (tests/database/test_limits_mirror.py).';
ALTER TABLE ONLY public.document_job_kinds
    ADD CONSTRAINT document_job_kinds_claim_order_key UNIQUE (claim_order);
ALTER TABLE ONLY public.document_job_kinds
    ADD CONSTRAINT document_job_kinds_pkey PRIMARY KEY (kind);
ALTER TABLE public.document_job_kinds ENABLE ROW LEVEL SECURITY;
GRANT ALL ON TABLE public.document_job_kinds TO service_role;
INSERT INTO public.document_job_kinds (kind, description, claim_order) VALUES ('export_faxes', 'build an export of the originals filed in a date range in Storage under exports/<export id>/: zip parts, index.csv and SHA256SUMS', 5);
INSERT INTO public.document_job_kinds (kind, description, claim_order) VALUES ('fetch_email', 'fetch a received e-mail''s attachments from Resend into Storage', 2);
INSERT INTO public.document_job_kinds (kind, description, claim_order) VALUES ('prepare_fax', 'count a stored fax''s pages, convert a TIFF into a viewing PDF and render a thumbnail of page 1, under fax_views/', 3);
INSERT INTO public.document_job_kinds (kind, description, claim_order) VALUES ('reconcile_emails', 'list the e-mails Resend received back to the watermark and record those no webhook delivered', 1);
INSERT INTO public.document_job_kinds (kind, description, claim_order) VALUES ('verify_originals', 'read back a sample of the stored originals and compare each with its recorded size and SHA-256', 4);

COMMENT ON TABLE public.document_jobs IS 'The job queue: one row per job of a kind for an e-mail, moved through queued, running, completed and failed only by the functions of this schema. At most one live (queued or running) job per target; a running job''s lease and generation fence every write of the worker that holds it.';
CREATE TABLE public.document_jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text NOT NULL,
    fax_received_email_id uuid,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 5 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    lease_until timestamp with time zone,
    generation integer DEFAULT 0 NOT NULL,
    last_error_code text,
    last_error_message text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    attempt_started_at timestamp with time zone,
    attempt_invocation_id text,
    budget_releases integer DEFAULT 0 NOT NULL,
    attempt_outcome text,
    CONSTRAINT document_jobs_attempt_outcome_check CHECK ((attempt_outcome = ANY (ARRAY['completed'::text, 'retried'::text, 'released'::text, 'failed'::text, 'lease_expired'::text, 'cancelled'::text]))),
    CONSTRAINT document_jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT document_jobs_lease_only_while_running CHECK (((status = 'running'::text) = (lease_until IS NOT NULL))),
    CONSTRAINT document_jobs_max_attempts_check CHECK ((max_attempts > 0)),
    CONSTRAINT document_jobs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text])))
);
COMMENT ON COLUMN public.document_jobs.attempts IS 'Claims that counted: +1 per claim, -1 when a job is released through no fault of its own.';
COMMENT ON COLUMN public.document_jobs.generation IS 'Fencing token: +1 on every claim. Every later write by a worker names it and changes nothing once it no longer matches.';
COMMENT ON COLUMN public.document_jobs.attempt_started_at IS 'When the current (or last) attempt was claimed; set by every claim.';
COMMENT ON COLUMN public.document_jobs.attempt_invocation_id IS 'The worker invocation that made the current (or last) claim: its x-document-jobs-invocation request header.';
COMMENT ON COLUMN public.document_jobs.budget_releases IS 'Releases for the time budget since the job last stored an attachment (or was retried by hand); from the 4th on, each counts an attempt.';
COMMENT ON COLUMN public.document_jobs.attempt_outcome IS 'How the last attempt ended, null while one runs (a claim clears it): written by the function that ended it (complete, fail, release, cancel, the expired-lease sweep); document_job_attempts copies it.';
ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_pkey PRIMARY KEY (id);
CREATE INDEX document_jobs_by_error_code ON public.document_jobs USING btree (last_error_code, status, created_at DESC, id DESC) WHERE (last_error_code IS NOT NULL);
CREATE INDEX document_jobs_by_id_text ON public.document_jobs USING btree (replace((id)::text, '-'::text, ''::text) text_pattern_ops);
CREATE INDEX document_jobs_by_status_received ON public.document_jobs USING btree (status, created_at DESC, id DESC);
CREATE INDEX document_jobs_claim ON public.document_jobs USING btree (kind, run_after, created_at) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));
CREATE INDEX document_jobs_completed ON public.document_jobs USING btree (finished_at) WHERE (status = 'completed'::text);
CREATE INDEX document_jobs_failed ON public.document_jobs USING btree (last_error_code) INCLUDE (fax_received_email_id) WHERE (status = 'failed'::text);
CREATE INDEX document_jobs_finished_by_email ON public.document_jobs USING btree (fax_received_email_id) WHERE (status = ANY (ARRAY['completed'::text, 'failed'::text]));
CREATE INDEX document_jobs_lease ON public.document_jobs USING btree (lease_until) WHERE (status = 'running'::text);
CREATE UNIQUE INDEX document_jobs_one_active_per_target ON public.document_jobs USING btree (kind, fax_received_email_id) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));
CREATE UNIQUE INDEX document_jobs_one_live_export ON public.document_jobs USING btree (kind) WHERE ((kind = 'export_faxes'::text) AND (status = ANY (ARRAY['queued'::text, 'running'::text])));
CREATE UNIQUE INDEX document_jobs_one_live_reconciliation ON public.document_jobs USING btree (kind) WHERE ((kind = 'reconcile_emails'::text) AND (status = ANY (ARRAY['queued'::text, 'running'::text])));
CREATE UNIQUE INDEX document_jobs_one_live_verification ON public.document_jobs USING btree (kind) WHERE ((kind = 'verify_originals'::text) AND (status = ANY (ARRAY['queued'::text, 'running'::text])));
CREATE TRIGGER document_jobs_alert_failed AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((new.kind = 'fetch_email'::text) AND (new.status = 'failed'::text) AND (old.status <> 'failed'::text))) EXECUTE FUNCTION document_jobs_internal.alert_job_failed();
CREATE TRIGGER document_jobs_continue_reconciliation AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((new.kind = 'reconcile_emails'::text) AND (new.status = 'completed'::text) AND (old.status <> 'completed'::text))) EXECUTE FUNCTION document_jobs_internal.continue_reconciliation();
CREATE TRIGGER document_jobs_note_fax_ready AFTER UPDATE OF status ON public.document_jobs FOR EACH ROW WHEN (((new.status = ANY (ARRAY['completed'::text, 'failed'::text])) AND (old.status IS DISTINCT FROM new.status) AND (new.kind = ANY (ARRAY['fetch_email'::text, 'prepare_fax'::text])) AND (new.fax_received_email_id IS NOT NULL))) EXECUTE FUNCTION document_jobs_internal.note_fax_ready();
CREATE TRIGGER document_jobs_prepare_fax AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((new.kind = 'fetch_email'::text) AND (new.status = 'completed'::text) AND (old.status <> 'completed'::text))) EXECUTE FUNCTION document_jobs_internal.enqueue_prepare_fax();
CREATE TRIGGER document_jobs_record_attempt AFTER UPDATE ON public.document_jobs FOR EACH ROW WHEN (((old.status = 'running'::text) AND ((new.status <> 'running'::text) OR (new.generation <> old.generation)))) EXECUTE FUNCTION document_jobs_internal.record_attempt();
ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.document_jobs
    ADD CONSTRAINT document_jobs_kind_fkey FOREIGN KEY (kind) REFERENCES public.document_job_kinds(kind);
ALTER TABLE public.document_jobs ENABLE ROW LEVEL SECURITY;
GRANT ALL ON TABLE public.document_jobs TO service_role;

COMMENT ON TABLE public.document_jobs_audit IS 'Every operator action on jobs (admin screen, CLI): who, when, what, the filter, how many jobs, the reason. Append-only.';
CREATE TABLE public.document_jobs_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_id uuid,
    actor_email text,
    action text NOT NULL,
    job_id uuid,
    filter jsonb,
    job_count integer NOT NULL,
    reason text,
    bulk_action_id uuid,
    CONSTRAINT document_jobs_audit_action_check CHECK ((action = ANY (ARRAY['bulk_cancel'::text, 'bulk_handle'::text, 'bulk_retry'::text, 'cancel'::text, 'handle'::text, 'index'::text, 'prepare'::text, 'reconcile'::text, 'retry'::text, 'rotate'::text, 'export'::text]))),
    CONSTRAINT document_jobs_audit_actor_named CHECK (((actor_id IS NOT NULL) OR ((action = 'retry'::text) AND (actor_email IS NULL)))),
    CONSTRAINT document_jobs_audit_job_count_check CHECK ((job_count >= 0)),
    CONSTRAINT document_jobs_audit_reason_check CHECK ((length(reason) <= 500))
);
COMMENT ON COLUMN public.document_jobs_audit.actor_id IS 'The Supabase Auth user who acted (the screen''s operator, the CLI''s --as). Null only for a retry through retry_document_job, the public API''s call: its caller holds the service-role key and is not named (document_jobs_audit_actor_named).';
COMMENT ON COLUMN public.document_jobs_audit.filter IS 'A bulk action''s filter, as the database normalized it; for a rotation, the fax and the rotation before and after ({"fax_received_email_id", "from", "to"}).';
COMMENT ON COLUMN public.document_jobs_audit.job_count IS 'How many jobs the action counted or changed; for a mark (handle, bulk_handle), how many faxes.';
ALTER TABLE public.document_jobs_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.document_jobs_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.document_jobs_audit_id_seq IS 'The identity of document_jobs_audit.id: the audit''s order, which document_jobs_admin_audit pages by.';
ALTER TABLE ONLY public.document_jobs_audit
    ADD CONSTRAINT document_jobs_audit_bulk_action_id_key UNIQUE (bulk_action_id);
ALTER TABLE ONLY public.document_jobs_audit
    ADD CONSTRAINT document_jobs_audit_pkey PRIMARY KEY (id);
CREATE TRIGGER document_jobs_audit_append_only BEFORE DELETE OR UPDATE ON public.document_jobs_audit FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_audit_change();
ALTER TABLE public.document_jobs_audit ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.document_jobs_audit TO service_role;

COMMENT ON VIEW public.document_jobs_claimable IS 'THE definition of claimable: claim_document_jobs locks through it, the fan-out, the stats and the health check count through it, so that they can never disagree. A running job''s run_after is always in the past (it was claimable when it was claimed), so run_after <= now() holds for both arms and bounds the index scan.';
CREATE VIEW public.document_jobs_claimable AS
 SELECT j.id,
    j.kind,
    j.fax_received_email_id,
    j.status,
    j.attempts,
    j.max_attempts,
    j.run_after,
    j.lease_until,
    j.generation,
    j.last_error_code,
    j.last_error_message,
    j.created_at,
    j.started_at,
    j.finished_at
   FROM public.document_jobs j
  WHERE ((j.status = ANY (ARRAY['queued'::text, 'running'::text])) AND (j.run_after <= now()) AND (j.attempts < j.max_attempts) AND ((j.status = 'queued'::text) OR (j.lease_until < now())));
GRANT ALL ON TABLE public.document_jobs_claimable TO service_role;

COMMENT ON TABLE public.document_jobs_rate_limits IS 'The shared rate limit of each provider API the jobs call: settings (by hand) and the schedule (by the workers).';
CREATE TABLE public.document_jobs_rate_limits (
    provider text NOT NULL,
    requests_per_second integer DEFAULT 5 NOT NULL,
    share_for_others numeric DEFAULT 0.2 NOT NULL,
    burst integer DEFAULT 0 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    learned_at timestamp with time zone,
    next_at timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL,
    paused_until timestamp with time zone,
    CONSTRAINT document_jobs_rate_limits_burst CHECK (((burst >= 0) AND (burst <= 1))),
    CONSTRAINT document_jobs_rate_limits_requests_per_second CHECK (((requests_per_second >= 1) AND (requests_per_second <= 1000))),
    CONSTRAINT document_jobs_rate_limits_share_for_others CHECK (((share_for_others >= (0)::numeric) AND (share_for_others <= 0.9)))
);
ALTER TABLE ONLY public.document_jobs_rate_limits
    ADD CONSTRAINT document_jobs_rate_limits_pkey PRIMARY KEY (provider);
ALTER TABLE public.document_jobs_rate_limits ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.document_jobs_rate_limits TO service_role;

COMMENT ON TABLE public.document_jobs_reconciliation IS 'The one row of reconciliation: its settings (every_minutes, the cron job document-jobs-reconcile; overlap; webhooks_missing_after; max_pages per job; retention, how long Resend keeps received e-mails, which bounds a run by hand and the window the health check watches; set_document_jobs_reconciliation) and its state: watermark, the newest created_at of Resend''s that a run listed fully (a run lists back to it less the overlap), the cursor of a run that stopped at max_pages (its follow-up continues after it), the current run''s counts, the last run''s, and when a run last completed.';
CREATE TABLE public.document_jobs_reconciliation (
    singleton boolean DEFAULT true NOT NULL,
    every_minutes integer DEFAULT 10 NOT NULL,
    overlap interval DEFAULT '01:00:00'::interval NOT NULL,
    webhooks_missing_after interval DEFAULT '00:15:00'::interval NOT NULL,
    max_pages integer DEFAULT 10 NOT NULL,
    watermark timestamp with time zone,
    cursor text,
    run_started_at timestamp with time zone,
    run_listed integer DEFAULT 0 NOT NULL,
    run_recorded integer DEFAULT 0 NOT NULL,
    run_late integer DEFAULT 0 NOT NULL,
    run_newest timestamp with time zone,
    last_run_at timestamp with time zone,
    last_listed integer,
    last_recorded integer,
    last_late integer,
    missing_found_at timestamp with time zone,
    outage_closed_at timestamp with time zone,
    retention interval DEFAULT '1 day'::interval NOT NULL,
    last_completed_at timestamp with time zone,
    last_finding text,
    last_finding_at timestamp with time zone,
    run_unreadable integer DEFAULT 0 NOT NULL,
    last_unreadable integer,
    missing_received_at timestamp with time zone,
    late_after_close integer DEFAULT 0 NOT NULL,
    CONSTRAINT document_jobs_reconciliation_every CHECK (((every_minutes >= 1) AND (every_minutes <= 60))),
    CONSTRAINT document_jobs_reconciliation_max_pages CHECK (((max_pages >= 1) AND (max_pages <= 100))),
    CONSTRAINT document_jobs_reconciliation_missing_after CHECK (((webhooks_missing_after >= '00:01:00'::interval) AND (webhooks_missing_after <= '1 day'::interval))),
    CONSTRAINT document_jobs_reconciliation_overlap CHECK (((overlap >= '00:00:00'::interval) AND (overlap <= '1 day'::interval))),
    CONSTRAINT document_jobs_reconciliation_retention CHECK (((retention >= '01:00:00'::interval) AND (retention <= '1 year'::interval))),
    CONSTRAINT document_jobs_reconciliation_singleton_check CHECK (singleton)
);
COMMENT ON COLUMN public.document_jobs_reconciliation.watermark IS 'The newest Resend created_at a finished run had listed everything up to; null before the first run (which lists back to now() less the overlap).';
COMMENT ON COLUMN public.document_jobs_reconciliation.missing_found_at IS 'When reconciliation last recorded an e-mail whose webhook was more than webhooks_missing_after late.';
COMMENT ON COLUMN public.document_jobs_reconciliation.outage_closed_at IS 'When the outage webhooks_missing last closed: a finding before it opens nothing again.';
COMMENT ON COLUMN public.document_jobs_reconciliation.retention IS 'How long Resend keeps a received e-mail on the office''s plan (1 day unless set: the shortest reported; Resend''s own pages do not say). A run by hand (document-jobs-admin reconcile --since) goes back at most this far, and the health check''s retention_window_closing warns when the watermark is older than half of it, then three quarters.';
COMMENT ON COLUMN public.document_jobs_reconciliation.last_completed_at IS 'When a run last listed back to its watermark (or to the end of the list): what reconciliation_stalled watches; null until a run has (a first run that does not complete is stalled once under way for an hour). A run cut short by a finding does not count.';
COMMENT ON COLUMN public.document_jobs_reconciliation.last_finding IS 'Why the last run ended before its watermark (the same page again, a cursor that did not advance, has_more with an empty page), in the worker''s words; null when it completed.';
COMMENT ON COLUMN public.document_jobs_reconciliation.missing_received_at IS 'The newest Resend created_at of the e-mails reconciliation recorded late (webhooks_missing_after) that were received after webhooks_missing last closed: what opens that outage again.';
COMMENT ON COLUMN public.document_jobs_reconciliation.late_after_close IS 'E-mails recorded late since webhooks_missing last closed that were received before it closed: they belong to the outage already told, reopen nothing, and are counted here.';
ALTER TABLE ONLY public.document_jobs_reconciliation
    ADD CONSTRAINT document_jobs_reconciliation_pkey PRIMARY KEY (singleton);
ALTER TABLE public.document_jobs_reconciliation ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.document_jobs_reconciliation TO service_role;
INSERT INTO public.document_jobs_reconciliation (singleton, every_minutes, overlap, webhooks_missing_after, max_pages, watermark, cursor, run_started_at, run_listed, run_recorded, run_late, run_newest, last_run_at, last_listed, last_recorded, last_late, missing_found_at, outage_closed_at, retention, last_completed_at, last_finding, last_finding_at, run_unreadable, last_unreadable, missing_received_at, late_after_close) VALUES (true, 10, '01:00:00', '00:15:00', 10, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '1 day', NULL, NULL, NULL, 0, NULL, NULL, 0);

COMMENT ON TABLE public.document_jobs_settings IS 'The one row of settings an operator may change by hand: backoff_base (the backoff schedule is 1, 5, 15, 60 times it; tests and the chaos run shorten it instead of changing code), the retention of completed jobs (set_document_jobs_retention), alert_stall_after, alert_receiver and max_invocations_in_flight. Each is checked by a constraint, so a value set by hand is held to the same bounds.';
CREATE TABLE public.document_jobs_settings (
    singleton boolean DEFAULT true NOT NULL,
    backoff_base interval DEFAULT '00:01:00'::interval NOT NULL,
    completed_job_retention interval DEFAULT '30 days'::interval NOT NULL,
    alert_stall_after interval DEFAULT '00:10:00'::interval NOT NULL,
    alert_receiver text DEFAULT 'slack'::text NOT NULL,
    max_invocations_in_flight integer,
    CONSTRAINT document_jobs_settings_alert_receiver CHECK ((alert_receiver = ANY (ARRAY['slack'::text, 'mattermost'::text, 'discord'::text, 'teams'::text]))),
    CONSTRAINT document_jobs_settings_alert_stall_after CHECK (((alert_stall_after >= '00:02:00'::interval) AND (alert_stall_after <= '1 day'::interval))),
    CONSTRAINT document_jobs_settings_backoff_base_check CHECK (((backoff_base > '00:00:00'::interval) AND (backoff_base <= '01:00:00'::interval))),
    CONSTRAINT document_jobs_settings_max_invocations_in_flight CHECK (((max_invocations_in_flight >= 1) AND (max_invocations_in_flight <= 20))),
    CONSTRAINT document_jobs_settings_retention CHECK (document_jobs_internal.require_retention('completed_job_retention'::text, completed_job_retention)),
    CONSTRAINT document_jobs_settings_singleton_check CHECK (singleton)
);
COMMENT ON COLUMN public.document_jobs_settings.max_invocations_in_flight IS 'Worker invocations in flight at most (1 to 20); null: three times the requests per second the Resend limiter allows this queue.';
ALTER TABLE ONLY public.document_jobs_settings
    ADD CONSTRAINT document_jobs_settings_pkey PRIMARY KEY (singleton);
ALTER TABLE public.document_jobs_settings ENABLE ROW LEVEL SECURITY;
GRANT ALL ON TABLE public.document_jobs_settings TO service_role;
INSERT INTO public.document_jobs_settings (singleton, backoff_base, completed_job_retention, alert_stall_after, alert_receiver, max_invocations_in_flight) VALUES (true, '00:01:00', '30 days', '00:10:00', 'slack', NULL);

COMMENT ON TABLE public.fax_attachment_views IS 'What a prepare_fax job derived from a stored attachment, one row per attachment (its latest preparation): the page count, the viewing PDF and the thumbnail (keys in the attachment''s bucket, always under fax_views/, never an original''s), or why it could not be prepared. Written only through record_fax_attachment_view_v2; a table of its own, so that the received record''s rows never change for it.';
CREATE TABLE public.fax_attachment_views (
    attachment_id uuid NOT NULL,
    source_sha256 text NOT NULL,
    page_count integer,
    view_path text,
    thumbnail_path text,
    error_code text,
    error_message text,
    prepared_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_attachment_views_error_code CHECK ((error_code <> ''::text)),
    CONSTRAINT fax_attachment_views_error_message CHECK ((length(error_message) <= 1000)),
    CONSTRAINT fax_attachment_views_nothing_derived_on_error CHECK (((error_code IS NULL) OR ((view_path IS NULL) AND (thumbnail_path IS NULL)))),
    CONSTRAINT fax_attachment_views_page_count CHECK ((page_count > 0)),
    CONSTRAINT fax_attachment_views_source_sha256 CHECK ((source_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_attachment_views_thumbnail_path CHECK ((thumbnail_path ~~ 'fax\_views/%'::text)),
    CONSTRAINT fax_attachment_views_view_path CHECK ((view_path ~~ 'fax\_views/%'::text))
);
COMMENT ON COLUMN public.fax_attachment_views.source_sha256 IS 'The SHA-256 of the original the row was derived from, checked against the attachment''s own while it was read: a row whose digest is not the attachment''s is not its view.';
COMMENT ON COLUMN public.fax_attachment_views.page_count IS 'Pages of a PDF or a TIFF, 1 for a JPEG or PNG; null for any other type (listed, not paged) and when it could not be prepared.';
COMMENT ON COLUMN public.fax_attachment_views.view_path IS 'The viewing PDF (a TIFF''s pages, or an image whose two resolutions differ, drawn at their true shape); null when the original is viewed as it is (a PDF, a JPEG or PNG), or there is nothing to view.';
COMMENT ON COLUMN public.fax_attachment_views.thumbnail_path IS 'A WebP of page 1 fitted into 240 x 340 pixels (a phone''s list at twice its density); null when there are no pages.';
COMMENT ON COLUMN public.fax_attachment_views.error_code IS 'Why the attachment could not be prepared (lib/failures.py: fax_file_damaged, fax_file_encrypted, fax_file_empty, fax_page_too_large), else null. The original is untouched and downloadable either way.';
ALTER TABLE ONLY public.fax_attachment_views
    ADD CONSTRAINT fax_attachment_views_pkey PRIMARY KEY (attachment_id);
ALTER TABLE ONLY public.fax_attachment_views
    ADD CONSTRAINT fax_attachment_views_attachment_id_fkey FOREIGN KEY (attachment_id) REFERENCES public.fax_received_email_attachments(id) ON DELETE CASCADE;
ALTER TABLE public.fax_attachment_views ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_attachment_views TO service_role;

COMMENT ON TABLE public.fax_export_files IS 'An original (an attachment or a raw e-mail, document_id) in an export''s part under its name in the archive, with the size and SHA-256 read from Storage (checked against its row as it was read) and its row of index.csv (csv_row, as lib/fax/export_files.py csv_row makes it), in the order of the export (seq).';
CREATE TABLE public.fax_export_files (
    export_id uuid NOT NULL,
    seq integer NOT NULL,
    part integer NOT NULL,
    name text NOT NULL,
    document_id uuid NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    csv_row jsonb NOT NULL,
    CONSTRAINT fax_export_files_csv_row CHECK ((jsonb_typeof(csv_row) = 'array'::text)),
    CONSTRAINT fax_export_files_name CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT fax_export_files_seq CHECK ((seq >= 1)),
    CONSTRAINT fax_export_files_sha256 CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text))
);
ALTER TABLE ONLY public.fax_export_files
    ADD CONSTRAINT fax_export_files_pkey PRIMARY KEY (export_id, seq);
CREATE UNIQUE INDEX fax_export_files_name ON public.fax_export_files USING btree (export_id, lower(name));
ALTER TABLE ONLY public.fax_export_files
    ADD CONSTRAINT fax_export_files_export_id_fkey FOREIGN KEY (export_id) REFERENCES public.fax_exports(id);
ALTER TABLE ONLY public.fax_export_files
    ADD CONSTRAINT fax_export_files_export_id_part_fkey FOREIGN KEY (export_id, part) REFERENCES public.fax_export_parts(export_id, part);
ALTER TABLE public.fax_export_files ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_export_files TO service_role;

COMMENT ON TABLE public.fax_export_parts IS 'A zip part of an export, stored at storage_path (in the export''s bucket) with its size and SHA-256: the originals export_documents answers after the previous part''s cursor up to and including (after_at, after_id), the cursor the next part starts after.';
CREATE TABLE public.fax_export_parts (
    export_id uuid NOT NULL,
    part integer NOT NULL,
    storage_path text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    originals integer NOT NULL,
    after_at timestamp with time zone NOT NULL,
    after_id uuid NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_export_parts_originals CHECK ((originals >= 1)),
    CONSTRAINT fax_export_parts_part CHECK ((part >= 1)),
    CONSTRAINT fax_export_parts_sha256 CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_export_parts_size CHECK ((size_bytes >= 0))
);
ALTER TABLE ONLY public.fax_export_parts
    ADD CONSTRAINT fax_export_parts_pkey PRIMARY KEY (export_id, part);
ALTER TABLE ONLY public.fax_export_parts
    ADD CONSTRAINT fax_export_parts_export_id_fkey FOREIGN KEY (export_id) REFERENCES public.fax_exports(id);
ALTER TABLE public.fax_export_parts ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_export_parts TO service_role;

COMMENT ON TABLE public.fax_exports IS 'One export asked for on the admin screen: the originals filed date_from..date_to (export_documents'' selection) and recorded before stored_before (the request''s time less five minutes), total of them; its job (export_faxes) writes zip parts (fax_export_parts), then index.csv and SHA256SUMS into bucket under exports/<id>/ (index_*, sums_*), written and bytes counting the originals stored in parts so far; finished_at once all are stored.';
CREATE TABLE public.fax_exports (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    job_id uuid NOT NULL,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    requested_by uuid NOT NULL,
    requested_by_email text,
    date_from date NOT NULL,
    date_to date NOT NULL,
    stored_before timestamp with time zone NOT NULL,
    total integer NOT NULL,
    bucket text,
    written integer DEFAULT 0 NOT NULL,
    bytes bigint DEFAULT 0 NOT NULL,
    index_path text,
    index_size_bytes bigint,
    index_sha256 text,
    sums_path text,
    sums_size_bytes bigint,
    sums_sha256 text,
    finished_at timestamp with time zone,
    CONSTRAINT fax_exports_finished CHECK (((finished_at IS NULL) = (sums_sha256 IS NULL))),
    CONSTRAINT fax_exports_index_sha256 CHECK ((index_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_exports_range CHECK ((date_from <= date_to)),
    CONSTRAINT fax_exports_sums_sha256 CHECK ((sums_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT fax_exports_total CHECK ((total >= 0))
);
ALTER TABLE ONLY public.fax_exports
    ADD CONSTRAINT fax_exports_job_id_key UNIQUE (job_id);
ALTER TABLE ONLY public.fax_exports
    ADD CONSTRAINT fax_exports_pkey PRIMARY KEY (id);
ALTER TABLE public.fax_exports ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_exports TO service_role;

COMMENT ON TABLE public.fax_handling IS 'Who is dealing with a received fax (one row per e-mail, written by its first mark; a fax without one is new): its state, who took or closed it, and the note. Changed only through mark_fax_handling and the bulk mark (apply_fax_handling_bulk), every change kept in fax_handling_history; the e-mail''s own row never changes for it.';
CREATE TABLE public.fax_handling (
    fax_received_email_id uuid NOT NULL,
    state text NOT NULL,
    assignee_id uuid,
    assignee_email text,
    note text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by uuid NOT NULL,
    updated_by_email text,
    CONSTRAINT fax_handling_assignee CHECK (((state = 'new'::text) = (assignee_id IS NULL))),
    CONSTRAINT fax_handling_assignee_email_check CHECK ((length(assignee_email) <= 320)),
    CONSTRAINT fax_handling_note_check CHECK ((length(note) <= 500)),
    CONSTRAINT fax_handling_state_check CHECK ((state = ANY (ARRAY['new'::text, 'in_progress'::text, 'done'::text]))),
    CONSTRAINT fax_handling_updated_by_email_check CHECK ((length(updated_by_email) <= 320))
);
COMMENT ON COLUMN public.fax_handling.assignee_id IS 'The Supabase Auth user who took the fax (in_progress) or closed it (done); null while it is new.';
COMMENT ON COLUMN public.fax_handling.note IS 'The note the office keeps with the fax (e.g. 送信元に再送を依頼済み): the last one given; a mark without a note keeps it.';
ALTER TABLE ONLY public.fax_handling
    ADD CONSTRAINT fax_handling_pkey PRIMARY KEY (fax_received_email_id);
CREATE INDEX fax_handling_by_assignee ON public.fax_handling USING btree (lower(assignee_email)) WHERE (state <> 'new'::text);
CREATE INDEX fax_handling_by_state ON public.fax_handling USING btree (state);
CREATE INDEX fax_handling_done ON public.fax_handling USING btree (fax_received_email_id) WHERE (state = 'done'::text);
ALTER TABLE ONLY public.fax_handling
    ADD CONSTRAINT fax_handling_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id);
ALTER TABLE public.fax_handling ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_handling TO service_role;

COMMENT ON TABLE public.fax_handling_history IS 'Every mark of a fax''s handling, never changed afterwards: who, when, from which state and assignee to which, the note given, and the audit row of the action it was part of (a mark, or a bulk mark).';
CREATE TABLE public.fax_handling_history (
    id bigint NOT NULL,
    fax_received_email_id uuid NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    from_state text NOT NULL,
    to_state text NOT NULL,
    from_assignee_email text,
    to_assignee_email text,
    note text,
    audit_id bigint NOT NULL,
    CONSTRAINT fax_handling_history_actor_email_check CHECK ((length(actor_email) <= 320)),
    CONSTRAINT fax_handling_history_from_state_check CHECK ((from_state = ANY (ARRAY['new'::text, 'in_progress'::text, 'done'::text]))),
    CONSTRAINT fax_handling_history_note_check CHECK ((length(note) <= 500)),
    CONSTRAINT fax_handling_history_to_state_check CHECK ((to_state = ANY (ARRAY['new'::text, 'in_progress'::text, 'done'::text])))
);
COMMENT ON COLUMN public.fax_handling_history.audit_id IS 'The document_jobs_audit row of the action: one per mark, one for all the marks of a bulk mark.';
ALTER TABLE public.fax_handling_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.fax_handling_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.fax_handling_history_id_seq IS 'The identity of fax_handling_history.id: the order of a fax''s marks.';
ALTER TABLE ONLY public.fax_handling_history
    ADD CONSTRAINT fax_handling_history_pkey PRIMARY KEY (id);
CREATE INDEX fax_handling_history_of_audit ON public.fax_handling_history USING btree (audit_id);
CREATE INDEX fax_handling_history_of_fax ON public.fax_handling_history USING btree (fax_received_email_id, id);
CREATE TRIGGER fax_handling_history_append_only BEFORE UPDATE ON public.fax_handling_history FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.refuse_handling_history_change();
CREATE TRIGGER fax_handling_history_deleted_only_as_approved BEFORE DELETE ON public.fax_handling_history FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_handling_history_change();
ALTER TABLE ONLY public.fax_handling_history
    ADD CONSTRAINT fax_handling_history_audit_id_fkey FOREIGN KEY (audit_id) REFERENCES public.document_jobs_audit(id);
ALTER TABLE ONLY public.fax_handling_history
    ADD CONSTRAINT fax_handling_history_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id);
ALTER TABLE public.fax_handling_history ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_handling_history TO service_role;

COMMENT ON TABLE public.fax_index IS 'A fax''s index fields for the Electronic Bookkeeping Act''s search: 取引年月日 (transaction_date), 取引金額 (amount, yen, optional), 取引先 (counterparty) and 書類の種類 (doc_type), one row per fax (the e-mail). Not the record: it changes, but only through set_fax_index, and every change is kept in fax_index_history.';
CREATE TABLE public.fax_index (
    fax_received_email_id uuid NOT NULL,
    received timestamp with time zone NOT NULL,
    transaction_date date,
    amount bigint,
    counterparty text,
    doc_type text,
    counterparty_folded text GENERATED ALWAYS AS (document_jobs_internal.kana_fold(counterparty)) STORED,
    version integer DEFAULT 1 NOT NULL,
    updated_by uuid NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_index_amount CHECK (((amount >= 0) AND (amount <= '999999999999'::bigint))),
    CONSTRAINT fax_index_counterparty CHECK ((((length(counterparty) >= 1) AND (length(counterparty) <= 200)) AND (counterparty !~ '[[:cntrl:]]'::text) AND (counterparty = btrim(counterparty)))),
    CONSTRAINT fax_index_doc_type CHECK ((doc_type = ANY (document_jobs_internal.fax_document_types()))),
    CONSTRAINT fax_index_transaction_date CHECK (((transaction_date >= '1950-01-01'::date) AND (transaction_date <= '2099-12-31'::date)))
);
COMMENT ON COLUMN public.fax_index.counterparty_folded IS 'The counterparty folded as its search compares it (kana_fold: NFKC, katakana as hiragana, no white space, lower case); generated.';
COMMENT ON COLUMN public.fax_index.version IS 'How many times the fields were set: the screen sends the version it showed, and a write made since is not overwritten.';
ALTER TABLE ONLY public.fax_index
    ADD CONSTRAINT fax_index_pkey PRIMARY KEY (fax_received_email_id);
CREATE INDEX fax_index_amount ON public.fax_index USING btree (amount, received DESC);
CREATE INDEX fax_index_by_counterparty ON public.fax_index USING btree (counterparty_folded, received DESC, fax_received_email_id DESC);
CREATE INDEX fax_index_doc_type ON public.fax_index USING btree (doc_type, received DESC, fax_received_email_id DESC);
CREATE INDEX fax_index_received ON public.fax_index USING btree (received DESC, fax_received_email_id DESC);
CREATE INDEX fax_index_transaction_date ON public.fax_index USING btree (transaction_date, received DESC);
CREATE INDEX fax_index_type_dates ON public.fax_index USING btree (doc_type, transaction_date) INCLUDE (amount);
CREATE TRIGGER fax_index_note_counterparties_insert AFTER INSERT ON public.fax_index REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.note_counterparties();
CREATE TRIGGER fax_index_note_counterparties_update AFTER UPDATE ON public.fax_index REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION document_jobs_internal.note_counterparties();
ALTER TABLE ONLY public.fax_index
    ADD CONSTRAINT fax_index_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id);
ALTER TABLE public.fax_index ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_index TO service_role;

COMMENT ON TABLE public.fax_index_history IS 'Every change of a fax''s index fields, appended by set_fax_index and never changed or deleted (triggers refuse UPDATE and DELETE to every role): the fields before and after, who (the operator''s id and e-mail), when, why (required for a correction of a value entered before) and the version it made.';
CREATE TABLE public.fax_index_history (
    id bigint NOT NULL,
    fax_received_email_id uuid NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    before jsonb,
    after jsonb NOT NULL,
    reason text,
    version integer NOT NULL,
    CONSTRAINT fax_index_history_reason CHECK (((length(reason) >= 1) AND (length(reason) <= 500)))
);
ALTER TABLE public.fax_index_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.fax_index_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.fax_index_history_id_seq IS 'The identity of fax_index_history.id: the order of a fax''s changes, which its page lists them in.';
ALTER TABLE ONLY public.fax_index_history
    ADD CONSTRAINT fax_index_history_pkey PRIMARY KEY (id);
CREATE INDEX fax_index_history_fax ON public.fax_index_history USING btree (fax_received_email_id, id);
CREATE TRIGGER fax_index_history_append_only BEFORE DELETE OR UPDATE ON public.fax_index_history FOR EACH ROW EXECUTE FUNCTION document_jobs_internal.refuse_fax_index_history_change();
ALTER TABLE ONLY public.fax_index_history
    ADD CONSTRAINT fax_index_history_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id);
ALTER TABLE public.fax_index_history ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.fax_index_history TO service_role;

COMMENT ON TABLE public.fax_lines IS 'The office''s fax lines: the address a fax-to-mail service or an MFP sends each line''s faxes to (the To of the e-mail, lower case), the name the inbox shows for it (e.g. 本社, 営業部) and the line''s own number (ASCII digits), which the inbox never shows as a sender''s (an MFP may write its own station ID in the subject). Set by set_fax_line and remove_fax_line (SQL, or the CLI''s lines command).';
CREATE TABLE public.fax_lines (
    address text NOT NULL,
    name text NOT NULL,
    number text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_lines_address CHECK (((address = lower(btrim(address))) AND (address ~ '^[^@\s<>]+@[^@\s<>]+$'::text) AND (length(address) <= 254))),
    CONSTRAINT fax_lines_name CHECK ((((length(btrim(name)) >= 1) AND (length(btrim(name)) <= 50)) AND (name !~ '[[:cntrl:]]'::text))),
    CONSTRAINT fax_lines_number CHECK ((number ~ '^[0-9]{3,20}$'::text))
);
COMMENT ON COLUMN public.fax_lines.number IS 'The line''s own fax number, ASCII digits only (lib/fax/senders.py Number.canonical), or null.';
ALTER TABLE ONLY public.fax_lines
    ADD CONSTRAINT fax_lines_pkey PRIMARY KEY (address);
ALTER TABLE public.fax_lines ENABLE ROW LEVEL SECURITY;
GRANT ALL ON TABLE public.fax_lines TO service_role;

COMMENT ON TABLE public.fax_view_rotations IS 'The rotation a fax''s pages are shown at (degrees clockwise), remembered per fax once an operator turned it (faxes arrive sideways and upside down): set only through admin_set_fax_rotation, audited. A table of its own: the received record''s rows never change for it.';
CREATE TABLE public.fax_view_rotations (
    fax_received_email_id uuid NOT NULL,
    rotation integer NOT NULL,
    set_by uuid NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_view_rotations_rotation_check CHECK ((rotation = ANY (ARRAY[0, 90, 180, 270])))
);
ALTER TABLE ONLY public.fax_view_rotations
    ADD CONSTRAINT fax_view_rotations_pkey PRIMARY KEY (fax_received_email_id);
ALTER TABLE ONLY public.fax_view_rotations
    ADD CONSTRAINT fax_view_rotations_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE public.fax_view_rotations ENABLE ROW LEVEL SECURITY;
GRANT ALL ON TABLE public.fax_view_rotations TO service_role;

COMMENT ON TABLE public.office_settings IS 'The office''s settings, one row: time_zone (an IANA name, default Asia/Tokyo), the zone of every date the office reads (the inbox, announcements, keep-until dates, exports); the retention of faxes: fiscal_year_end_month, filing_deadline_months, retention_years (document_jobs_internal.keep_until); announce_language, the language of the chat announcements of new faxes, and screen_url, where they link to. Changed by hand as the project owner (update office_settings set ...), checked by constraints.';
CREATE TABLE public.office_settings (
    singleton boolean DEFAULT true NOT NULL,
    time_zone text DEFAULT 'Asia/Tokyo'::text NOT NULL,
    fiscal_year_end_month integer DEFAULT 3 NOT NULL,
    filing_deadline_months integer DEFAULT 2 NOT NULL,
    retention_years integer DEFAULT 7 NOT NULL,
    announce_language text DEFAULT 'ja'::text NOT NULL,
    screen_url text,
    CONSTRAINT office_settings_announce_language CHECK ((announce_language = ANY (ARRAY['ja'::text, 'en'::text]))),
    CONSTRAINT office_settings_filing_deadline_months CHECK ((filing_deadline_months = ANY (ARRAY[2, 3]))),
    CONSTRAINT office_settings_fiscal_year_end_month CHECK (((fiscal_year_end_month >= 1) AND (fiscal_year_end_month <= 12))),
    CONSTRAINT office_settings_retention_years CHECK ((retention_years = ANY (ARRAY[7, 10]))),
    CONSTRAINT office_settings_screen_url CHECK (((screen_url ~ '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$'::text) AND (length(screen_url) <= 300))),
    CONSTRAINT office_settings_singleton_check CHECK (singleton),
    CONSTRAINT office_settings_time_zone CHECK (document_jobs_internal.is_time_zone(time_zone))
);
COMMENT ON COLUMN public.office_settings.fiscal_year_end_month IS 'The month the office''s fiscal year ends in (1 to 12; the year ends on its last day). Default 3: most Japanese companies close in March.';
COMMENT ON COLUMN public.office_settings.filing_deadline_months IS 'Months from the fiscal year''s end to the return''s filing deadline: 2, or 3 with an extension of the deadline (申告期限の延長).';
COMMENT ON COLUMN public.office_settings.retention_years IS 'Years a fax is kept from the day after the filing deadline: 7, or 10 while a year''s loss is carried forward (欠損金の繰越し).';
COMMENT ON COLUMN public.office_settings.announce_language IS 'The language of the announcements of new faxes: ja (default) or en.';
COMMENT ON COLUMN public.office_settings.screen_url IS 'The admin screen''s URL (https://<your-app>.vercel.app/admin, or your own domain), which an announcement links each fax to (#/faxes/<id>). Null: the origin of the Vault secret document_jobs_url followed by /admin, the same deployment. Only a plain URL is accepted (no query, fragment, space or markup): it is written into chat messages as a link.';
ALTER TABLE ONLY public.office_settings
    ADD CONSTRAINT office_settings_pkey PRIMARY KEY (singleton);
ALTER TABLE public.office_settings ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.office_settings TO service_role;
INSERT INTO public.office_settings (singleton, time_zone, fiscal_year_end_month, filing_deadline_months, retention_years, announce_language, screen_url) VALUES (true, 'Asia/Tokyo', 3, 2, 7, 'ja', NULL);

COMMENT ON TABLE public.original_verification IS 'The weekly verification''s settings (the cron job document-jobs-verify enqueues a verify_originals job): how many originals a run reads back (sample), half of them drawn among those stored in the last recent_days (the week since the last run), the rest among all.';
CREATE TABLE public.original_verification (
    singleton boolean DEFAULT true NOT NULL,
    sample integer DEFAULT 100 NOT NULL,
    recent_days integer DEFAULT 7 NOT NULL,
    CONSTRAINT original_verification_recent_days CHECK (((recent_days >= 1) AND (recent_days <= 366))),
    CONSTRAINT original_verification_sample CHECK (((sample >= 1) AND (sample <= 1000))),
    CONSTRAINT original_verification_singleton_check CHECK (singleton)
);
ALTER TABLE ONLY public.original_verification
    ADD CONSTRAINT original_verification_pkey PRIMARY KEY (singleton);
ALTER TABLE public.original_verification ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.original_verification TO service_role;

COMMENT ON TABLE public.original_verifications IS 'What a verification run read of one stored original (an attachment row: every version of an attachment is a row of its own): matches, missing (Storage answered 404), size_differs (read_size_bytes, null when it ran past the recorded size) or sha256_differs (read_sha256). Only appended to; no foreign key to the attachment, so that the history outlives nothing it should not and blocks no audited deletion.';
CREATE TABLE public.original_verifications (
    run_id bigint NOT NULL,
    attachment_id uuid NOT NULL,
    checked_at timestamp with time zone DEFAULT now() NOT NULL,
    outcome text NOT NULL,
    read_size_bytes bigint,
    read_sha256 text,
    CONSTRAINT original_verifications_outcome CHECK ((outcome = ANY (ARRAY['matches'::text, 'missing'::text, 'size_differs'::text, 'sha256_differs'::text]))),
    CONSTRAINT original_verifications_read_sha256 CHECK ((read_sha256 ~ '^[0-9a-f]{64}$'::text))
);
ALTER TABLE ONLY public.original_verifications
    ADD CONSTRAINT original_verifications_pkey PRIMARY KEY (run_id, attachment_id);
CREATE INDEX original_verifications_of_an_attachment ON public.original_verifications USING btree (attachment_id, checked_at);
ALTER TABLE ONLY public.original_verifications
    ADD CONSTRAINT original_verifications_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.original_verify_runs(id);
ALTER TABLE public.original_verifications ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.original_verifications TO service_role;

COMMENT ON TABLE public.original_verify_runs IS 'One row per verification run: the weekly job''s (started_by job, its job_id: a job run again goes on with the same run) or document-jobs-admin verify''s (cli). It reads the originals stored since `since` (null: all) that were stored when it started, or, with `sample`, the originals drawn for it (`selected`); total is how many, checked how many it read so far, mismatched how many of those were not as recorded; finished_at when all were read.';
CREATE TABLE public.original_verify_runs (
    id bigint NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    started_by text NOT NULL,
    job_id uuid,
    since timestamp with time zone,
    sample integer,
    selected uuid[],
    total integer NOT NULL,
    checked integer DEFAULT 0 NOT NULL,
    mismatched integer DEFAULT 0 NOT NULL,
    CONSTRAINT original_verify_runs_job CHECK (((started_by = 'job'::text) = (job_id IS NOT NULL))),
    CONSTRAINT original_verify_runs_sample CHECK (((sample >= 1) AND (sample <= 100000))),
    CONSTRAINT original_verify_runs_selected CHECK (((sample IS NULL) = (selected IS NULL))),
    CONSTRAINT original_verify_runs_started_by CHECK ((started_by = ANY (ARRAY['job'::text, 'cli'::text]))),
    CONSTRAINT original_verify_runs_total CHECK ((total >= 0))
);
ALTER TABLE public.original_verify_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.original_verify_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE public.original_verify_runs_id_seq IS 'The identity of original_verify_runs.id: the order in which the runs started.';
ALTER TABLE ONLY public.original_verify_runs
    ADD CONSTRAINT original_verify_runs_pkey PRIMARY KEY (id);
CREATE UNIQUE INDEX original_verify_runs_of_a_job ON public.original_verify_runs USING btree (job_id) WHERE (job_id IS NOT NULL);
ALTER TABLE public.original_verify_runs ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON TABLE public.original_verify_runs TO service_role;

COMMENT ON TABLE document_jobs_internal.bulk_action_jobs IS 'The jobs a bulk action counted, each with whether applying it changed or skipped the job, and why (not_failed, another_live_job, another_job_of_the_same_email, not_live, job_deleted). No foreign key to the job: a job may be purged while the action''s record of it stays.';
CREATE TABLE document_jobs_internal.bulk_action_jobs (
    bulk_action_id uuid NOT NULL,
    job_id uuid NOT NULL,
    outcome text,
    reason text,
    applied_at timestamp with time zone,
    CONSTRAINT bulk_action_jobs_outcome_check CHECK ((outcome = ANY (ARRAY['changed'::text, 'skipped'::text])))
);
ALTER TABLE ONLY document_jobs_internal.bulk_action_jobs
    ADD CONSTRAINT bulk_action_jobs_pkey PRIMARY KEY (bulk_action_id, job_id);
CREATE INDEX bulk_action_jobs_pending ON document_jobs_internal.bulk_action_jobs USING btree (bulk_action_id, job_id) WHERE (outcome IS NULL);
ALTER TABLE ONLY document_jobs_internal.bulk_action_jobs
    ADD CONSTRAINT bulk_action_jobs_bulk_action_id_fkey FOREIGN KEY (bulk_action_id) REFERENCES document_jobs_internal.bulk_actions(id) ON DELETE CASCADE;

COMMENT ON TABLE document_jobs_internal.bulk_actions IS 'A bulk action (prepare_document_jobs_bulk_action): the filter it was counted with, the operator, the jobs counted, and how far applying it got (changed, skipped, started, finished).';
CREATE TABLE document_jobs_internal.bulk_actions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    action text NOT NULL,
    filter jsonb NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    job_count integer DEFAULT 0 NOT NULL,
    changed integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    reason text,
    prepared_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT bulk_actions_action_check CHECK ((action = ANY (ARRAY['retry'::text, 'cancel'::text])))
);
ALTER TABLE ONLY document_jobs_internal.bulk_actions
    ADD CONSTRAINT bulk_actions_pkey PRIMARY KEY (id);

COMMENT ON TABLE document_jobs_internal.discarded_objects IS 'Every object a fetch_email job was allowed to delete as wrong right after uploading it (discard_unrecorded_object_v2): which, by which job and generation, what it had sent (size_bytes and sha256 of the bytes Storage may hold) and why. Only an object no row recorded is ever listed, and a listed key is never recorded afterwards (record_document_attachment_v3 and record_raw_message_v2 refuse it): the delete that follows may reach Storage late, and it still removes nothing a row names. Kept (nothing deletes from it): it says what the product deleted, and that it was never a record.';
CREATE TABLE document_jobs_internal.discarded_objects (
    bucket text NOT NULL,
    storage_path text NOT NULL,
    fax_received_email_id uuid NOT NULL,
    job_id uuid NOT NULL,
    generation integer NOT NULL,
    size_bytes bigint,
    sha256 text,
    reason text NOT NULL,
    discarded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT discarded_objects_reason CHECK (((length(reason) >= 1) AND (length(reason) <= 500))),
    CONSTRAINT discarded_objects_sha256 CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text))
);
ALTER TABLE ONLY document_jobs_internal.discarded_objects
    ADD CONSTRAINT discarded_objects_pkey PRIMARY KEY (bucket, storage_path);
ALTER TABLE document_jobs_internal.discarded_objects ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.email_number_runs IS 'Every run of digits (fax_number_runs) an e-mail has or had, kept by the triggers fax_received_emails_note_number_runs_*, so that a search by number finds the runs that hold it among the distinct ones, then their e-mails through fax_received_emails_number_runs.';
CREATE TABLE document_jobs_internal.email_number_runs (
    digits text NOT NULL
);
ALTER TABLE ONLY document_jobs_internal.email_number_runs
    ADD CONSTRAINT email_number_runs_pkey PRIMARY KEY (digits);
ALTER TABLE document_jobs_internal.email_number_runs ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.email_senders IS 'Every sender (the From line as recorded) that an e-mail has or had, kept by the trigger fax_received_emails_note_sender, so that a search by sender reads the distinct senders. Unique by the SHA-256 of the text: a b-tree over the text itself would refuse a From line longer than about 2,700 bytes, and with it the e-mail.';
CREATE TABLE document_jobs_internal.email_senders (
    from_address text NOT NULL
);
CREATE INDEX email_senders_text_search ON document_jobs_internal.email_senders USING gin (from_address extensions.gin_trgm_ops);
CREATE UNIQUE INDEX email_senders_unique ON document_jobs_internal.email_senders USING btree (sha256((replace(from_address, '\'::text, '\\'::text))::bytea));

COMMENT ON TABLE document_jobs_internal.fax_announcements IS 'One row per fax that became ready to announce (note_fax_ready), written once: a fax is announced at most once, whatever job of it ends again. pending until the next tick of document-jobs-announce; then sent (its message queued through pg_net in that very transaction, request_id its request: pg_net sends after commit and never retries, so "sent" means queued, and a message the chat refused is lost, its answer in net._http_response for 6 hours) or skipped (off: no Vault secret document_jobs_announce_url at that tick, so that storing the secret later does not announce the faxes of before; too_old: the e-mail was recorded over a day earlier, e.g. a backfill preparing the faxes stored before an upgrade).';
CREATE TABLE document_jobs_internal.fax_announcements (
    fax_received_email_id uuid NOT NULL,
    ready_at timestamp with time zone DEFAULT now() NOT NULL,
    stood text NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    decided_at timestamp with time zone,
    request_id bigint,
    skipped_because text,
    CONSTRAINT fax_announcements_decided CHECK (((state = 'pending'::text) = (decided_at IS NULL))),
    CONSTRAINT fax_announcements_skipped_because CHECK ((skipped_because = ANY (ARRAY['off'::text, 'too_old'::text]))),
    CONSTRAINT fax_announcements_state CHECK ((state = ANY (ARRAY['pending'::text, 'sent'::text, 'skipped'::text]))),
    CONSTRAINT fax_announcements_stood CHECK ((stood = ANY (ARRAY['prepared'::text, 'unprepared'::text, 'unfetched'::text, 'no_files'::text]))),
    CONSTRAINT fax_announcements_why_skipped CHECK (((state = 'skipped'::text) = (skipped_because IS NOT NULL)))
);
COMMENT ON COLUMN document_jobs_internal.fax_announcements.stood IS 'How the fax stood when it became ready: prepared (its prepare_fax job completed: pages known), unprepared (that job failed: a file could not be converted, pages maybe unknown), unfetched (its fetch_email job failed: the fax could not be stored), no_files (fetched, with no attached file).';
ALTER TABLE ONLY document_jobs_internal.fax_announcements
    ADD CONSTRAINT fax_announcements_pkey PRIMARY KEY (fax_received_email_id);
CREATE INDEX fax_announcements_pending ON document_jobs_internal.fax_announcements USING btree (ready_at) WHERE (state = 'pending'::text);
CREATE INDEX fax_announcements_sent ON document_jobs_internal.fax_announcements USING btree (decided_at) WHERE (state = 'sent'::text);
ALTER TABLE ONLY document_jobs_internal.fax_announcements
    ADD CONSTRAINT fax_announcements_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE document_jobs_internal.fax_announcements ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.fax_counterparties IS 'Every folded counterparty (fax_index.counterparty_folded) a fax has or had, kept by the triggers fax_index_note_counterparties_*, so that the counterparty search matches its term against the distinct names and then reads fax_index_by_counterparty. A name no fax has any more stays: it matches no fax.';
CREATE TABLE document_jobs_internal.fax_counterparties (
    folded text NOT NULL
);
ALTER TABLE ONLY document_jobs_internal.fax_counterparties
    ADD CONSTRAINT fax_counterparties_pkey PRIMARY KEY (folded);
ALTER TABLE document_jobs_internal.fax_counterparties ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.fax_senders IS 'Who sent each fax, as lib/fax/senders.py parse_sender read its subject and From name (the format that matched, the sender''s name, the number canonical and as written, whether the caller ID or the station ID gave it, and why there is none, in the words the screen uses), recorded by its prepare_fax job through record_fax_sender_v1 (the parser is Python''s; the announcements, in SQL, read it here). Replaced when the job runs again. No row: the job has not run (a fax that could not be fetched), and the From line is all there is.';
CREATE TABLE document_jobs_internal.fax_senders (
    fax_received_email_id uuid NOT NULL,
    format text,
    name text,
    number text,
    number_display text,
    number_source text,
    withheld_ja text,
    withheld_en text,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fax_senders_lengths CHECK (((length(format) <= 100) AND (length(name) <= 100) AND (length(number_display) <= 40) AND (length(withheld_ja) <= 20) AND (length(withheld_en) <= 40))),
    CONSTRAINT fax_senders_number CHECK ((number ~ '^[0-9]{3,20}$'::text)),
    CONSTRAINT fax_senders_number_source CHECK ((number_source = ANY (ARRAY['caller_id'::text, 'station_id'::text]))),
    CONSTRAINT fax_senders_number_whole CHECK ((((number IS NULL) = (number_display IS NULL)) AND ((number IS NULL) = (number_source IS NULL)))),
    CONSTRAINT fax_senders_one_line CHECK ((((((COALESCE(format, ''::text) || COALESCE(name, ''::text)) || COALESCE(number_display, ''::text)) || COALESCE(withheld_ja, ''::text)) || COALESCE(withheld_en, ''::text)) !~ '[[:cntrl:]]'::text))
);
ALTER TABLE ONLY document_jobs_internal.fax_senders
    ADD CONSTRAINT fax_senders_pkey PRIMARY KEY (fax_received_email_id);
ALTER TABLE ONLY document_jobs_internal.fax_senders
    ADD CONSTRAINT fax_senders_fax_received_email_id_fkey FOREIGN KEY (fax_received_email_id) REFERENCES public.fax_received_emails(id) ON DELETE CASCADE;
ALTER TABLE document_jobs_internal.fax_senders ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.handling_bulk_action_faxes IS 'The faxes a bulk mark done counted, and what became of each (changed, or skipped with why).';
CREATE TABLE document_jobs_internal.handling_bulk_action_faxes (
    bulk_action_id uuid NOT NULL,
    fax_received_email_id uuid NOT NULL,
    outcome text,
    reason text,
    applied_at timestamp with time zone,
    CONSTRAINT handling_bulk_action_faxes_outcome_check CHECK ((outcome = ANY (ARRAY['changed'::text, 'skipped'::text])))
);
ALTER TABLE ONLY document_jobs_internal.handling_bulk_action_faxes
    ADD CONSTRAINT handling_bulk_action_faxes_pkey PRIMARY KEY (bulk_action_id, fax_received_email_id);
CREATE INDEX handling_bulk_action_faxes_pending ON document_jobs_internal.handling_bulk_action_faxes USING btree (bulk_action_id, fax_received_email_id) WHERE (outcome IS NULL);
ALTER TABLE ONLY document_jobs_internal.handling_bulk_action_faxes
    ADD CONSTRAINT handling_bulk_action_faxes_bulk_action_id_fkey FOREIGN KEY (bulk_action_id) REFERENCES document_jobs_internal.handling_bulk_actions(id) ON DELETE CASCADE;

COMMENT ON TABLE document_jobs_internal.handling_bulk_actions IS 'A bulk mark done''s snapshot: the filter it was counted with (the inbox''s or the job list''s: scope), who counted, how many faxes, how far it got, and the note it marks them with (given at its first apply).';
CREATE TABLE document_jobs_internal.handling_bulk_actions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    scope text NOT NULL,
    filter jsonb NOT NULL,
    actor_id uuid NOT NULL,
    actor_email text,
    fax_count integer DEFAULT 0 NOT NULL,
    changed integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    note text,
    prepared_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT handling_bulk_actions_note_check CHECK ((length(note) <= 500)),
    CONSTRAINT handling_bulk_actions_scope_check CHECK ((scope = ANY (ARRAY['faxes'::text, 'jobs'::text])))
);
ALTER TABLE ONLY document_jobs_internal.handling_bulk_actions
    ADD CONSTRAINT handling_bulk_actions_pkey PRIMARY KEY (id);

COMMENT ON TABLE document_jobs_internal.hourly_outcomes IS 'The overview''s hourly series per UTC hour (outcomes_by_hour): attempts completed, failed for good and retried, and the latency from the e-mail''s recording to the job''s completion (p50, p95). The attempt history never changes, so an hour that ended more than 10 minutes ago is computed once and kept here; the last one or two are computed on each call.';
CREATE TABLE document_jobs_internal.hourly_outcomes (
    hour timestamp with time zone NOT NULL,
    completed integer NOT NULL,
    failed integer NOT NULL,
    retried integer NOT NULL,
    latency_p50_ms double precision,
    latency_p95_ms double precision,
    computed_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY document_jobs_internal.hourly_outcomes
    ADD CONSTRAINT hourly_outcomes_pkey PRIMARY KEY (hour);

COMMENT ON TABLE document_jobs_internal.original_mismatches IS 'The mismatches known now, one row per original that the last read of it found not as recorded: the outage original_mismatch holds while there is one, its level the newest row''s id (a mismatch not known before alerts once; found again, it alerts nobody). A read that finds it as recorded again removes its row. State, not the record: the history is original_verifications.';
CREATE TABLE document_jobs_internal.original_mismatches (
    id bigint NOT NULL,
    attachment_id uuid NOT NULL,
    outcome text NOT NULL,
    found_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE document_jobs_internal.original_mismatches ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME document_jobs_internal.original_mismatches_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE document_jobs_internal.original_mismatches_id_seq IS 'The identity of original_mismatches.id: the order in which the mismatches were first found, the outage''s level.';
ALTER TABLE ONLY document_jobs_internal.original_mismatches
    ADD CONSTRAINT original_mismatches_id_key UNIQUE (id);
ALTER TABLE ONLY document_jobs_internal.original_mismatches
    ADD CONSTRAINT original_mismatches_pkey PRIMARY KEY (attachment_id);

COMMENT ON TABLE document_jobs_internal.outages IS 'One row per cause the health check can report: whether it holds now, since when, and when it was last alerted (at most once an hour; a recovered alert only after a down alert of the same episode, so a flapping cause sends at most two alerts an hour).';
CREATE TABLE document_jobs_internal.outages (
    cause text NOT NULL,
    active boolean DEFAULT false NOT NULL,
    since timestamp with time zone,
    alerted_at timestamp with time zone,
    alerted_level bigint
);
COMMENT ON COLUMN document_jobs_internal.outages.alerted_level IS 'For a cause checked through set_outage_once: the level its last alert of this episode told (a window''s half or three quarters, the newest unreadable e-mail); null otherwise.';
ALTER TABLE ONLY document_jobs_internal.outages
    ADD CONSTRAINT outages_pkey PRIMARY KEY (cause);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('database_unauthorized', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('original_mismatch', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('queue_stalled', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('reconciliation_stalled', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('reconciliation_unreadable', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('records_unguarded', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('resend_misconfigured', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('resend_quota_exceeded', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('resend_unauthorized', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('retention_window_closing', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('storage_bucket_not_found', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('storage_unauthorized', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('webhooks_missing', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('worker_failing', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('worker_not_found', false, NULL, NULL, NULL);
INSERT INTO document_jobs_internal.outages (cause, active, since, alerted_at, alerted_level) VALUES ('worker_unauthorized', false, NULL, NULL, NULL);

COMMENT ON TABLE document_jobs_internal.pg_net_generation IS 'Unlogged like pg_net''s tables: empty after a crash, when pg_net''s request ids restart. One row: the generation of pg_net ids in use.';
CREATE UNLOGGED TABLE document_jobs_internal.pg_net_generation (
    generation bigint NOT NULL,
    began_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);
ALTER TABLE ONLY document_jobs_internal.pg_net_generation
    ADD CONSTRAINT pg_net_generation_pkey PRIMARY KEY (generation);

COMMENT ON SEQUENCE document_jobs_internal.pg_net_generations IS 'Logged, so it keeps counting across a crash while the unlogged pg_net_generation is emptied: each crash gets a new generation of pg_net ids.';
CREATE SEQUENCE document_jobs_internal.pg_net_generations
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

COMMENT ON TABLE document_jobs_internal.release_causes IS 'The error codes of releases that are not the job''s fault, each an outage cause of the health check.';
CREATE TABLE document_jobs_internal.release_causes (
    code text NOT NULL,
    check_what text NOT NULL,
    advice text NOT NULL,
    advice_ja text NOT NULL
);
COMMENT ON COLUMN document_jobs_internal.release_causes.advice IS 'What to do, in English: lib/failures.py FAILURES[code].advice, word for word (tests/database/test_advice_is_lib_advice.py).';
COMMENT ON COLUMN document_jobs_internal.release_causes.advice_ja IS 'What to do, in Japanese: lib/failures.py FAILURES[code].advice_ja, word for word.';
ALTER TABLE ONLY document_jobs_internal.release_causes
    ADD CONSTRAINT release_causes_pkey PRIMARY KEY (code);
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('database_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)', 'Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.', 'Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('resend_misconfigured', 'RESEND_API_URL', 'Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the waiting jobs are tried again every 10 minutes.', 'Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。待機中のジョブは10分ごとに再試行されます。');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('resend_quota_exceeded', 'the Resend team''s plan (its daily and monthly quota)', 'Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting jobs are tried again every hour.', 'Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。待機中のジョブは1時間ごとに再試行されます。');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('resend_unauthorized', 'RESEND_API_KEY', 'Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.', 'Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に設定して再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('storage_bucket_not_found', 'ATTACHMENTS_BUCKET', 'Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the default) and redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes.', 'Vercel の ATTACHMENTS_BUCKET を直すか削除して（マイグレーションが既定の fax-attachments を作成します）再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。');
INSERT INTO document_jobs_internal.release_causes (code, check_what, advice, advice_ja) VALUES ('storage_unauthorized', 'SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)', 'Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.', 'Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。');

COMMENT ON TABLE document_jobs_internal.unreadable_listed_emails IS 'Items of Resend''s list of received e-mails that reconciliation could not read (lib/worker/resend.py: no id, or a created_at that is not a time or is more than a day ahead), one row per item (fingerprint: the id''s digest, or the whole item''s when it has no usable id), with what can be read of it (item) and why it could not (reason). Such an item is not recorded; the outage reconciliation_unreadable shows it until its id is recorded (a webhook, or a later listing that could read it) or it is older than retention.';
CREATE TABLE document_jobs_internal.unreadable_listed_emails (
    id bigint NOT NULL,
    fingerprint text NOT NULL,
    provider_email_id text,
    reason text NOT NULL,
    item jsonb NOT NULL,
    listed_by text NOT NULL,
    first_listed_at timestamp with time zone DEFAULT now() NOT NULL,
    last_listed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT unreadable_listed_emails_listed_by CHECK ((listed_by = ANY (ARRAY['reconciliation'::text, 'operator'::text])))
);
COMMENT ON COLUMN document_jobs_internal.unreadable_listed_emails.provider_email_id IS 'The item''s id as an e-mail row would store it (lib/storable.py storable_id), when it has one: it is resolved once an e-mail row has it.';
ALTER TABLE document_jobs_internal.unreadable_listed_emails ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME document_jobs_internal.unreadable_listed_emails_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE document_jobs_internal.unreadable_listed_emails_id_seq IS 'The identity of unreadable_listed_emails.id: the order in which reconciliation first saw an unreadable listing item.';
ALTER TABLE ONLY document_jobs_internal.unreadable_listed_emails
    ADD CONSTRAINT unreadable_listed_emails_fingerprint UNIQUE (fingerprint);
ALTER TABLE ONLY document_jobs_internal.unreadable_listed_emails
    ADD CONSTRAINT unreadable_listed_emails_pkey PRIMARY KEY (id);
ALTER TABLE document_jobs_internal.unreadable_listed_emails ENABLE ROW LEVEL SECURITY;

COMMENT ON TABLE document_jobs_internal.worker_requests IS 'The worker''s POSTs (pg_net request ids, with when they were counted), so that its answers can be told apart in net._http_response (which has the request id, not the URL) and the invocations in flight counted. Kept a little longer than pg_net keeps answers (6 hours): check_health forgets rows older than 7 hours.';
CREATE TABLE document_jobs_internal.worker_requests (
    request_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    id bigint NOT NULL,
    pg_net_generation bigint DEFAULT document_jobs_internal.pg_net_generation_in_use()
);
COMMENT ON COLUMN document_jobs_internal.worker_requests.request_id IS 'pg_net''s request id (net.http_request_queue, net._http_response); null once a crash erased its answer and pg_net may hand the id out again.';
COMMENT ON COLUMN document_jobs_internal.worker_requests.created_at IS 'When the POST was queued.';
COMMENT ON COLUMN document_jobs_internal.worker_requests.pg_net_generation IS 'The pg_net generation (document_jobs_internal.pg_net_generation) the POST was queued in.';
ALTER TABLE document_jobs_internal.worker_requests ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME document_jobs_internal.worker_requests_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
COMMENT ON SEQUENCE document_jobs_internal.worker_requests_id_seq IS 'worker_requests'' own key: pg_net''s request ids repeat after a crash, so they cannot be it.';
ALTER TABLE ONLY document_jobs_internal.worker_requests
    ADD CONSTRAINT worker_requests_pkey PRIMARY KEY (id);
CREATE INDEX worker_requests_created_at ON document_jobs_internal.worker_requests USING btree (created_at);
CREATE INDEX worker_requests_request_id ON document_jobs_internal.worker_requests USING btree (request_id);

-- Storage buckets
INSERT INTO storage.buckets (id, name, public, file_size_limit, allowed_mime_types) VALUES ('fax-attachments', 'fax-attachments', 'f', NULL, NULL);


-- =================================================================================================
-- The queue's calls: enqueue, claim, and the fenced writes of the worker that holds a job
-- =================================================================================================

COMMENT ON FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) IS 'Inserts a queued job of p_kind for an e-mail, or answers the live (queued or running) one of that target with created = false: enqueueing twice is not an error (the unique index document_jobs_one_active_per_target). p_kick POSTs to the worker in the same transaction, sent only if it commits.';
CREATE FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean DEFAULT false) RETURNS TABLE(job_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_id uuid;
begin
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require(
        p_fax_received_email_id is not null, 'p_fax_received_email_id must not be null');
    if not exists (select 1 from public.fax_received_emails e where e.id = p_fax_received_email_id) then
        raise exception using errcode = 'foreign_key_violation',
            message = format('fax_received_emails %s does not exist', p_fax_received_email_id);
    end if;
    loop
        insert into public.document_jobs (kind, fax_received_email_id)
        values (p_kind, p_fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing
        returning id into v_id;
        if v_id is not null then
            if p_kick then
                -- Defined with the rest of calling the worker, in the next migration.
                perform document_jobs_internal.post_worker(1);
            end if;
            return query select v_id, true;
            return;
        end if;

        select j.id into v_id
          from public.document_jobs j
         where j.kind = p_kind and j.fax_received_email_id = p_fax_received_email_id
           and j.status in ('queued', 'running');
        if v_id is not null then
            return query select v_id, false;
            return;
        end if;
        -- The live job finished between the two statements: insert again.
    end loop;
end;
$$;
REVOKE ALL ON FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.enqueue_document_job(p_kind text, p_fax_received_email_id uuid, p_kick boolean) TO service_role;

COMMENT ON FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) IS 'Fails the running jobs whose lease passed with no attempt left (fail_expired), then claims up to p_limit (1 to 100) jobs of p_kind from document_jobs_claimable, oldest run_after first, with FOR UPDATE SKIP LOCKED so that concurrent claimers never take the same row. A claim makes the job running with attempts and generation + 1 and a lease of p_lease (at most limits().lease_max; every job of one claim shares it), notes the attempt''s start and the invocation named by the request header, and clears the attempt''s outcome. An unknown kind is refused only when nothing was claimed (a found job''s kind is known).';
CREATE FUNCTION public.claim_document_jobs(p_kind text, p_limit integer DEFAULT 1, p_lease interval DEFAULT '00:05:00'::interval) RETURNS SETOF public.document_jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
    -- Real PostgREST gives SQL the request's headers as JSON with lowercased names in the setting
    -- request.headers; the worker sends its Vercel request id in limits().invocation_header.
    -- Outside a PostgREST request the setting is unset (null) or empty (''), and the id is null.
    v_invocation_id text := left(
        nullif(current_setting('request.headers', true), '')::jsonb
            ->> (document_jobs_internal.limits()).invocation_header, 200);
begin
    -- Every job of one claim shares its lease: a claimer that dies strands all of them until it
    -- passes. The worker claims one at a time; 100 is plenty for any batch.
    if p_limit is null or p_limit not between 1 and 100 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 100';
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    perform document_jobs_internal.fail_expired();

    -- Postgres has no UPDATE ... LIMIT: pick and lock in a sub-select. SKIP LOCKED lets
    -- concurrent claimers pass each other's rows; a row claimed and committed by another
    -- worker since our snapshot is re-checked against the view's condition and dropped.
    return query
    update public.document_jobs j
       set status = 'running',
           attempts = j.attempts + 1,
           generation = j.generation + 1,
           lease_until = now() + p_lease,
           started_at = coalesce(j.started_at, now()),
           attempt_started_at = now(),
           attempt_invocation_id = v_invocation_id,
           attempt_outcome = null
     where j.id = any (array(
               select c.id
                 from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
    if not found then
        perform document_jobs_internal.require_kind(p_kind);
    end if;
end;
$$;
REVOKE ALL ON FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.claim_document_jobs(p_kind text, p_limit integer, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.claim_document_job_of_kinds(p_kinds text[], p_lease interval) IS 'One job, of the first of p_kinds in document_job_kinds.claim_order (a kind without one last, in the array''s order) that has one claimable (claim_document_jobs(kind, 1, p_lease) for each in turn), in one round trip: the worker''s own claims.';
CREATE FUNCTION public.claim_document_job_of_kinds(p_kinds text[], p_lease interval DEFAULT '00:05:00'::interval) RETURNS SETOF public.document_jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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
REVOKE ALL ON FUNCTION public.claim_document_job_of_kinds(p_kinds text[], p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.claim_document_job_of_kinds(p_kinds text[], p_lease interval) TO service_role;

COMMENT ON FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) IS 'Renews the lease to now() + p_lease (at most limits().lease_max) while (p_job_id, p_generation) still holds the running job. Answers {"held", "state"}: held false means the job is no longer this worker''s, which stops and writes nothing more.';
CREATE FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_lease is null or p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'running' end);
end;
$$;
REVOKE ALL ON FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.extend_document_job_lease_v2(p_job_id uuid, p_generation integer, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) IS 'The job is done: completed, lease cleared, the attempt''s outcome completed, while (p_job_id, p_generation) still holds it. Answers {"held", "state"}.';
CREATE FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    update public.document_jobs j
       set status = 'completed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'completed'
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return jsonb_build_object('held', found, 'state', case when found then 'completed' end);
end;
$$;
REVOKE ALL ON FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_v2(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval, p_kinds text[]) IS 'Completes the job as complete_document_job_v2, then claims the next job, in one transaction: one round trip and one commit for two state changes. The next job is one of p_kinds in claim order, as claim_document_job_of_kinds(p_kinds, p_lease) claims (the worker''s call; p_kind is then unused), or without p_kinds one of p_kind alone (a worker of the previous deploy). Answers {"held", "state"} of the completion plus "next_job" (the claimed row, or null); the next job is claimed even when the completed one was lost. A claim refused for a bad argument undoes the completion too.';
CREATE FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval, p_kinds text[] DEFAULT NULL::text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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
REVOKE ALL ON FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval, p_kinds text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_claim_next_v2(p_job_id uuid, p_generation integer, p_kind text, p_lease interval, p_kinds text[]) TO service_role;

COMMENT ON FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) IS 'Ends an attempt that failed, while (p_job_id, p_generation) holds the job: transient (p_retryable) with attempts left, back to queued at next_run_after (the backoff of this attempt, or the provider''s p_retry_after when longer); otherwise failed for good. The error is recorded either way, and the attempt''s outcome (retried or failed). Answers {"held", "state"}.';
CREATE FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_job public.document_jobs;
    v_retry boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(nullif(p_error_code, '') is not null, 'p_error_code must not be empty');
    perform document_jobs_internal.require(p_retryable is not null, 'p_retryable must not be null');
    perform document_jobs_internal.require_retry_after(p_retry_after);

    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;

    v_retry := p_retryable and v_job.attempts < v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_retry then 'queued' else 'failed' end,
           run_after = case
                           when v_retry then document_jobs_internal.next_run_after(v_job.attempts, p_retry_after)
                           else j.run_after
                       end,
           lease_until = null,
           finished_at = case when v_retry then null else now() end,
           attempt_outcome = case when v_retry then 'retried' else 'failed' end,
           last_error_code = p_error_code,
           last_error_message = left(p_error_message, 4000)
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_retry then 'queued' else 'failed' end);
end;
$$;
REVOKE ALL ON FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;

COMMENT ON FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) IS 'For failures that are not the job''s fault (the time budget ran out, a key lacks a permission): back to queued after p_retry_after without spending an attempt, while (p_job_id, p_generation) holds the job. A time_budget release past limits().free_budget_releases in a row (no attachment stored between them) counts its attempt, and fails the job when it was the last: a job that never makes progress is not released forever. Answers {"held", "state"}.';
CREATE FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    c_free_budget_releases constant int := (document_jobs_internal.limits()).free_budget_releases;
    v_job public.document_jobs;
    v_counted boolean;
    v_failed boolean;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require_retry_after(p_retry_after);
    select * into v_job
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    -- A time-budget release past the free ones counts its attempt, and may be the last.
    v_counted := p_error_code = 'time_budget' and v_job.budget_releases >= c_free_budget_releases;
    v_failed := v_counted and v_job.attempts >= v_job.max_attempts;
    update public.document_jobs j
       set status = case when v_failed then 'failed' else 'queued' end,
           attempts = case when v_counted then j.attempts else greatest(j.attempts - 1, 0) end,
           budget_releases = j.budget_releases + case when p_error_code = 'time_budget' then 1 else 0 end,
           run_after = case
                           when v_failed then j.run_after
                           else document_jobs_internal.next_run_after(null, p_retry_after)
                       end,
           lease_until = null,
           finished_at = case when v_failed then now() end,
           attempt_outcome = case when v_failed then 'failed' when v_counted then 'retried' else 'released' end,
           last_error_code = coalesce(p_error_code, j.last_error_code),
           last_error_message = case
               when p_error_code is null then j.last_error_message
               when v_counted then left(format(
                   '%s (release %s in a row for the time budget with no attachment stored: after %s, each counts an attempt)',
                   p_error_message, v_job.budget_releases + 1, c_free_budget_releases), 4000)
               else left(p_error_message, 4000)
           end
     where j.id = p_job_id;
    return jsonb_build_object('held', true, 'state', case when v_failed then 'failed' else 'queued' end);
end;
$$;
REVOKE ALL ON FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;

COMMENT ON FUNCTION public.retry_document_job(p_job_id uuid) IS 'The public API''s manual re-run: a failed job back to queued now, its attempts and time-budget releases reset (requeue_failed, as admin_retry_document_job does); answers whether a job was retried, and refuses another live job of the same target with a message that says what to do. A retry is recorded in document_jobs_audit with actor_id null: the caller holds the service-role key and is not named. The screen and the CLI retry through admin_retry_document_job, which names the operator and starts a worker; here the cron''s next minute does.';
CREATE FUNCTION public.retry_document_job(p_job_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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
REVOKE ALL ON FUNCTION public.retry_document_job(p_job_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.retry_document_job(p_job_id uuid) TO service_role;

COMMENT ON FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) IS 'Retired: cancels a queued or running job (cancel_live), unaudited; answers whether a job was cancelled. The admin CLI called it before it cancelled through admin_cancel_document_job (audited); nothing in lib/ calls it, and supabase/future_migrations drops it.';
CREATE FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], p_reason);
    return v_cancelled > 0;
end;
$$;
REVOKE ALL ON FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.cancel_document_job(p_job_id uuid, p_reason text) TO service_role;

COMMENT ON FUNCTION public.invoke_document_jobs(p_max_invocations integer) IS 'The entry point of the cron job document-jobs (every minute): fails the expired-and-exhausted jobs, then starts one worker invocation per limits().jobs_per_invocation claimable jobs within the cap on invocations in flight (start_workers); nothing claimable, no HTTP at all. p_max_invocations, when given, bounds the fan-out further (1 to 20). Answers how many POSTs it queued.';
CREATE FUNCTION public.invoke_document_jobs(p_max_invocations integer DEFAULT NULL::integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if p_max_invocations is not null and p_max_invocations not between 1 and 20 then
        raise exception using errcode = '22023', message = 'p_max_invocations must be between 1 and 20';
    end if;
    perform document_jobs_internal.fail_expired();
    return document_jobs_internal.start_workers(p_max_invocations);
end;
$$;
REVOKE ALL ON FUNCTION public.invoke_document_jobs(p_max_invocations integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.invoke_document_jobs(p_max_invocations integer) TO service_role;

COMMENT ON FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) IS 'The public API''s lease renewal, kept by name and parameters: the same call through extend_document_job_lease_v2 (what the worker calls), answering true while (p_job_id, p_generation) holds the running job and false once it is lost.';
CREATE FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval DEFAULT '00:05:00'::interval) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$ select (public.extend_document_job_lease_v2(p_job_id, p_generation, p_lease) ->> 'held')::boolean $$;
REVOKE ALL ON FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.extend_document_job_lease(p_job_id uuid, p_generation integer, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) IS 'The public API''s completion, kept by name and parameters: the same call through complete_document_job_v2 (what the worker calls), answering true while the job is held and false once it is lost.';
CREATE FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$ select (public.complete_document_job_v2(p_job_id, p_generation) ->> 'held')::boolean $$;
REVOKE ALL ON FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) IS 'The public API''s failure, kept by name and parameters: the same call through fail_document_job_v2 (what the worker calls), answering the state it left the job in (queued while attempts are left and it is retryable, else failed), or null once the job is lost.';
CREATE FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                       p_retry_after) ->> 'state'
$$;
REVOKE ALL ON FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;

COMMENT ON FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) IS 'The public API''s release (a failure that is not the job''s own), kept by name and parameters: the same call through release_document_job_v2 (what the worker calls), answering the state it left the job in (queued, or failed past the free time-budget releases), or null once the job is lost.';
CREATE FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message)
           ->> 'state'
$$;
REVOKE ALL ON FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;

COMMENT ON FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) IS 'Retired: the name before complete_document_job_and_claim_next_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call through complete_document_job_and_claim_next_v2, answering {"completed": <held>, "next_job": ...}. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval DEFAULT '00:05:00'::interval) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select jsonb_build_object('completed', a -> 'held', 'next_job', a -> 'next_job')
      from public.complete_document_job_and_claim_next_v2(p_job_id, p_generation, p_kind, p_lease) a
$$;
REVOKE ALL ON FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_claim_next(p_job_id uuid, p_generation integer, p_kind text, p_lease interval) TO service_role;


-- =================================================================================================
-- The worker's calls: what each kind of job and a stopping invocation need besides the queue
-- =================================================================================================

COMMENT ON FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) IS 'What a fetch_email job needs before it calls Resend, in one round trip: its e-mail''s provider id, the provider ids of the attachments already stored (any version), whether its raw message is recorded (stored, or noted unavailable), the keys of its e-mail given up as wrong (discarded_paths: never to be stored at again), and the slot of its listing request from the Resend limiter (reserve_request, waiting at most p_max_wait_ms). Fenced like every call after a claim: {"held": false, "state": null} once (p_job_id, p_generation) no longer holds the job, else {"held": true, "state": "running"} with those members. "email" is null when the e-mail row is gone, and then no slot is reserved.';
CREATE FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_row_id uuid;
    v_email jsonb;
begin
    if p_job_id is null or p_generation is null then
        raise exception using errcode = '22023',
            message = format('%s must not be null', case when p_job_id is null then 'p_job_id' else 'p_generation' end);
    end if;
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select j.fax_received_email_id into v_email_row_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select jsonb_build_object('id', e.id, 'provider_email_id', e.provider_email_id) into v_email
      from public.fax_received_emails e
     where e.id = v_email_row_id;
    if v_email is null then
        return jsonb_build_object('held', true, 'state', 'running', 'email', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', v_email,
        'stored_attachment_ids', coalesce(
            (select jsonb_agg(distinct a.provider_attachment_id)
               from public.fax_received_email_attachments a
              where a.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'raw_message_recorded', exists (select 1 from public.fax_received_email_raw_messages r
                                         where r.fax_received_email_id = v_email_row_id),
        'discarded_paths', coalesce(
            (select jsonb_agg(jsonb_build_object('bucket', d.bucket, 'storage_path', d.storage_path)
                              order by d.storage_path)
               from document_jobs_internal.discarded_objects d
              where d.fax_received_email_id = v_email_row_id), '[]'::jsonb),
        'resend', document_jobs_internal.reserve_request('resend', p_max_wait_ms));
end;
$$;
REVOKE ALL ON FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_fetch_email_v2(p_job_id uuid, p_generation integer, p_max_wait_ms integer) TO service_role;

COMMENT ON FUNCTION public.record_document_attachment_v3(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_versions jsonb, p_lease interval) IS 'Records the stored versions of one attachment of the job''s e-mail (p_versions: [{"version", "size_bytes", "sha256", "bucket", "storage_path"}], each key under fax_received_emails/{e-mail}/), in one transaction, fenced by (p_job_id, p_generation): a worker that lost its job records nothing. Never updates a row: a version recorded with the same values is a no-op, with other values refused (23505), and a key given up as wrong refused (55000). When the call adds a version and the attachment then has more than one, the alert original_differs is posted. With p_lease the lease is renewed and a streak of time-budget releases ends. Answers {"held", "state"}, and while held "added" (rows inserted) and "versions" (the attachment''s versions now).';
CREATE FUNCTION public.record_document_attachment_v3(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_versions jsonb, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
    v_item jsonb;
    v_added int := 0;
    v_prefix text;
    v_versions jsonb;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(coalesce(p_provider_attachment_id, '') <> '',
                                           'p_provider_attachment_id must not be empty');
    v_prefix := format('fax_received_emails/%s/', v_email_id);
    perform document_jobs_internal.require_versions(p_versions, v_prefix);
    for v_item in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        if document_jobs_internal.record_attachment_version(
               v_email_id, p_provider_attachment_id, p_filename, p_content_type, (v_item ->> 'version')::int,
               (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256', v_item ->> 'bucket',
               v_item ->> 'storage_path') then
            v_added := v_added + 1;
        end if;
    end loop;
    select jsonb_agg(jsonb_build_object('version', a.version, 'size_bytes', a.size_bytes, 'sha256', a.sha256,
                                        'storage_path', a.storage_path) order by a.version)
      into v_versions
      from public.fax_received_email_attachments a
     where a.fax_received_email_id = v_email_id and a.provider_attachment_id = p_provider_attachment_id;
    if v_added > 0 and jsonb_array_length(v_versions) > 1 then
        perform document_jobs_internal.original_differs_alert(
            p_job_id, v_email_id, format('attachment %s (%s)', p_provider_attachment_id,
                                         coalesce(p_filename, '(no name)')), v_versions);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'added', v_added,
                              'versions', jsonb_array_length(v_versions));
end;
$$;
REVOKE ALL ON FUNCTION public.record_document_attachment_v3(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_versions jsonb, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_document_attachment_v3(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_versions jsonb, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.record_raw_message_v2(p_job_id uuid, p_generation integer, p_versions jsonb, p_unavailable text, p_lease interval) IS 'Records the job''s e-mail as Resend received it: its stored versions (p_versions, as record_document_attachment_v3 takes them, each key under fax_received_emails/{e-mail}/raw/), or why none is stored (p_unavailable: raw_null, or the failure code that refused it for good), fenced by (p_job_id, p_generation). Never updates a row: the same values again are a no-op, others refused. A version added beside another posts the alert original_differs. With p_lease the lease is renewed. Answers {"held", "state"}, and while held "added" and "versions".';
CREATE FUNCTION public.record_raw_message_v2(p_job_id uuid, p_generation integer, p_versions jsonb, p_unavailable text DEFAULT NULL::text, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
    v_email_id uuid;
    v_item jsonb;
    v_row public.fax_received_email_raw_messages;
    v_added int := 0;
    v_versions jsonb;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require((p_versions is null) <> (p_unavailable is null),
                                           'either p_versions or p_unavailable');
    if p_unavailable is not null then
        perform document_jobs_internal.require(p_unavailable ~ '^[a-z0-9_]{1,64}$',
                                               'p_unavailable is a code: [a-z0-9_], at most 64 characters');
        insert into public.fax_received_email_raw_messages (fax_received_email_id, unavailable)
        values (v_email_id, p_unavailable)
        on conflict do nothing;
        if found then
            return jsonb_build_object('held', true, 'state', 'running', 'added', 1, 'versions', 0);
        end if;
        select * into v_row from public.fax_received_email_raw_messages r
         where r.fax_received_email_id = v_email_id and r.version = 1;
        if v_row.unavailable is distinct from p_unavailable then
            raise exception using errcode = '23505', hint = 'version_recorded',
                message = format('the raw message of e-mail %s is recorded already (%s): a record never changes',
                                 v_email_id, coalesce(v_row.unavailable, 'SHA-256 ' || v_row.sha256));
        end if;
        return jsonb_build_object('held', true, 'state', 'running', 'added', 0, 'versions', 0);
    end if;
    perform document_jobs_internal.require_versions(p_versions, format('fax_received_emails/%s/raw/', v_email_id));
    for v_item in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        perform document_jobs_internal.require_not_discarded(v_item ->> 'bucket', v_item ->> 'storage_path');
        insert into public.fax_received_email_raw_messages
               (fax_received_email_id, version, bucket, storage_path, size_bytes, sha256)
        values (v_email_id, (v_item ->> 'version')::int, v_item ->> 'bucket', v_item ->> 'storage_path',
                (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256')
        on conflict do nothing;
        if found then
            v_added := v_added + 1;
            continue;
        end if;
        select * into v_row from public.fax_received_email_raw_messages r
         where r.fax_received_email_id = v_email_id and r.version = (v_item ->> 'version')::int;
        if (v_row.bucket, v_row.storage_path, v_row.size_bytes, v_row.sha256) is distinct from
           (v_item ->> 'bucket', v_item ->> 'storage_path', (v_item ->> 'size_bytes')::bigint, v_item ->> 'sha256') then
            raise exception using errcode = '23505', hint = 'version_recorded',
                message = format('version %s of the raw message of e-mail %s is recorded with other values: '
                                 'a recorded original never changes', v_item ->> 'version', v_email_id);
        end if;
    end loop;
    select jsonb_agg(jsonb_build_object('version', r.version, 'size_bytes', r.size_bytes, 'sha256', r.sha256,
                                        'storage_path', r.storage_path) order by r.version)
      into v_versions
      from public.fax_received_email_raw_messages r
     where r.fax_received_email_id = v_email_id and r.unavailable is null;
    if v_added > 0 and jsonb_array_length(v_versions) > 1 then
        perform document_jobs_internal.original_differs_alert(p_job_id, v_email_id, 'the raw message', v_versions);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'added', v_added,
                              'versions', jsonb_array_length(v_versions));
end;
$_$;
REVOKE ALL ON FUNCTION public.record_raw_message_v2(p_job_id uuid, p_generation integer, p_versions jsonb, p_unavailable text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_raw_message_v2(p_job_id uuid, p_generation integer, p_versions jsonb, p_unavailable text, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.discard_unrecorded_object_v2(p_job_id uuid, p_generation integer, p_bucket text, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_reason text) IS 'Whether the fetch_email job may delete an object it uploaded and then found wrong (a body that went on past its listed size once Storage had the listed bytes): "discard" is true only while (p_job_id, p_generation) holds the job, for a key under the job''s own e-mail''s originals (fax_received_emails/{e-mail}/, else 22023), that no row records. A true answer lists the object in discarded_objects (what was sent, and why), under the job row''s lock, and from then on no call records that key: the delete that follows, however late it reaches Storage, can only remove an object no row names. Answers {"held", "state", "discard"}.';
CREATE FUNCTION public.discard_unrecorded_object_v2(p_job_id uuid, p_generation integer, p_bucket text, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_reason text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(coalesce(p_bucket, '') <> '' and coalesce(p_storage_path, '') <> '',
                                           'p_bucket and p_storage_path must not be empty');
    perform document_jobs_internal.require(length(p_reason) between 1 and 500,
                                           'p_reason must be 1 to 500 characters');
    -- The job's row locked against every recording call of the same job (they share-lock or update it).
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null, 'discard', false);
    end if;
    -- Only an original of the job's own e-mail: never a derived file (fax_views/), never another e-mail's.
    perform document_jobs_internal.require(
        starts_with(p_storage_path, format('fax_received_emails/%s/', v_email_id)),
        format('p_storage_path must be under fax_received_emails/%s/: a job discards only its own e-mail''s originals',
               v_email_id));
    if document_jobs_internal.object_recorded(p_bucket, p_storage_path) then
        return jsonb_build_object('held', true, 'state', 'running', 'discard', false);
    end if;
    insert into document_jobs_internal.discarded_objects
           (bucket, storage_path, fax_received_email_id, job_id, generation, size_bytes, sha256, reason)
    values (p_bucket, p_storage_path, v_email_id, p_job_id, p_generation, p_size_bytes, p_sha256, p_reason)
    on conflict do nothing;
    return jsonb_build_object('held', true, 'state', 'running', 'discard', true);
end;
$$;
REVOKE ALL ON FUNCTION public.discard_unrecorded_object_v2(p_job_id uuid, p_generation integer, p_bucket text, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.discard_unrecorded_object_v2(p_job_id uuid, p_generation integer, p_bucket text, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_reason text) TO service_role;

COMMENT ON FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) IS 'Retired for record_document_attachment_v3, kept for a worker of the previous deploy: records version 1 of an attachment, fenced by (p_job_id, p_generation), never updating a row (the same values again: a no-op; other values: refused, 23505). With p_lease the same statement renews the lease and ends a streak of time-budget releases. Answers {"held", "state"}.';
CREATE FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    v_email_id := document_jobs_internal.hold_fetch_job(p_job_id, p_generation, p_lease);
    if v_email_id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.record_attachment_version(
        v_email_id, p_provider_attachment_id, p_filename, p_content_type, 1, p_size_bytes, p_sha256, p_bucket,
        p_storage_path);
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
REVOKE ALL ON FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_document_attachment_v2(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) IS 'A slot of the provider''s shared rate limit (reserve_request) for a request the worker makes besides the one start_fetch_email_v2 reserves: a second page of a listing, a listing again for fresh download URLs. Answers {"reserved", "wait_ms", "limit"}.';
CREATE FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    return document_jobs_internal.reserve_request(p_provider, p_max_wait_ms);
end;
$$;
REVOKE ALL ON FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.reserve_provider_request(p_provider text, p_max_wait_ms integer) TO service_role;

COMMENT ON FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) IS 'What the provider said about its limit: p_limit, the team''s real limit (Resend''s ratelimit-limit; the worker tells only when it differs from what it was told here), and p_retry_after, a 429 that came anyway: no slot is handed out to any worker before it has passed. At most an hour: a longer pause would stop every job for longer than any rate limit asks. Answers the limiter''s state {"limit", "paused_until"}.';
CREATE FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer DEFAULT NULL::integer, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_state jsonb;
begin
    if p_limit is not null and p_limit not between 1 and 1000 then
        raise exception using errcode = '22023', message = 'p_limit must be between 1 and 1000';
    end if;
    if p_retry_after is not null and p_retry_after not between interval '0' and interval '1 hour' then
        raise exception using errcode = '22023', message = 'p_retry_after must be between 0 and 1 hour';
    end if;
    update public.document_jobs_rate_limits l
       set requests_per_second = coalesce(p_limit, l.requests_per_second),
           learned_at = case when p_limit is null then l.learned_at else now() end,
           paused_until = case when p_retry_after is null then l.paused_until
                               else greatest(l.paused_until, clock_timestamp() + p_retry_after) end
     where l.provider = p_provider
    returning jsonb_build_object('limit', l.requests_per_second, 'paused_until', l.paused_until) into v_state;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    return v_state;
end;
$$;
REVOKE ALL ON FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.note_provider_rate_limit(p_provider text, p_limit integer, p_retry_after interval) TO service_role;

COMMENT ON FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) IS 'The last write of an invocation that stops at its job cap or its time budget: complete_document_job_v2, then, in the same transaction, the follow-up invocations (start_workers: only when work is claimable, within the cap, the asking invocation still counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many invocations it started (held or not).';
CREATE FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.complete_document_job_v2(p_job_id, p_generation);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) IS 'The last write of an invocation that stops at its job cap or its time budget: fail_document_job_v2, then, in the same transaction, the follow-up invocations (start_workers: only when work is claimable, within the cap, the asking invocation still counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many invocations it started (held or not).';
CREATE FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.fail_document_job_v2(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;

COMMENT ON FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) IS 'The last write of an invocation that stops at its job cap or its time budget: release_document_job_v2, then, in the same transaction, the follow-up invocations (start_workers: only when work is claimable, within the cap, the asking invocation still counted in flight). Answers the write''s {"held", "state"} plus "follow_ups", how many invocations it started (held or not).';
CREATE FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    -- The write first: the follow-ups count what is claimable after it.
    v_answer := public.release_document_job_v2(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return v_answer || jsonb_build_object('follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_and_follow_up_v2(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;

COMMENT ON FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) IS 'Retired: the name before start_fetch_email_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call through start_fetch_email_v2, answering its members without "held" and "state", or null once the job is lost. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select case when (a ->> 'held')::boolean then a - 'held' - 'state' end
      from public.start_fetch_email_v2(p_job_id, p_generation, p_max_wait_ms) a
$$;
REVOKE ALL ON FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_fetch_email(p_job_id uuid, p_generation integer, p_max_wait_ms integer) TO service_role;

COMMENT ON FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) IS 'Retired: the name before record_document_attachment_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call through record_document_attachment_v2, answering true while the job is held and false once it is lost. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval DEFAULT NULL::interval) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select (public.record_document_attachment_v2(p_job_id, p_generation, p_provider_attachment_id, p_filename,
                                                 p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path,
                                                 p_lease) ->> 'held')::boolean
$$;
REVOKE ALL ON FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_document_attachment(p_job_id uuid, p_generation integer, p_provider_attachment_id text, p_filename text, p_content_type text, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) IS 'Retired: the name before complete_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call, answering {"completed", "follow_ups"} through complete_document_job. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_completed boolean;
begin
    v_completed := public.complete_document_job(p_job_id, p_generation);
    return jsonb_build_object('completed', v_completed, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_document_job_and_follow_up(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) IS 'Retired: the name before fail_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call, answering {"left_in", "follow_ups"} through fail_document_job. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text DEFAULT NULL::text, p_retryable boolean DEFAULT true, p_retry_after interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_left_in text;
begin
    v_left_in := public.fail_document_job(p_job_id, p_generation, p_error_code, p_error_message, p_retryable,
                                          p_retry_after);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_error_code text, p_error_message text, p_retryable boolean, p_retry_after interval) TO service_role;

COMMENT ON FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) IS 'Retired: the name before release_document_job_and_follow_up_v2, kept for a worker of the previous deploy (a deploy is not atomic); the same call, answering {"left_in", "follow_ups"} through release_document_job. supabase/future_migrations drops it once no deployed worker calls it.';
CREATE FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval DEFAULT '00:00:00'::interval, p_error_code text DEFAULT NULL::text, p_error_message text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_left_in text;
begin
    v_left_in := public.release_document_job(p_job_id, p_generation, p_retry_after, p_error_code, p_error_message);
    return jsonb_build_object('left_in', v_left_in, 'follow_ups', document_jobs_internal.start_workers(null));
end;
$$;
REVOKE ALL ON FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_document_job_and_follow_up(p_job_id uuid, p_generation integer, p_retry_after interval, p_error_code text, p_error_message text) TO service_role;

COMMENT ON FUNCTION public.start_reconciliation_v2(p_job_id uuid, p_generation integer) IS 'What a reconcile_emails job needs before it lists, fenced like every call after a claim: "stop_before" (the watermark less the overlap: the run stops at a page whose every e-mail is older), "cursor" (where a run that stopped at its page bound continues, else null), "max_pages", and "now", the database''s clock (an item created more than a day after it is unreadable).';
CREATE FUNCTION public.start_reconciliation_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_state public.document_jobs_reconciliation;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    update public.document_jobs_reconciliation r
       set run_started_at = coalesce(r.run_started_at, now())
    returning * into v_state;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'stop_before', coalesce(v_state.watermark, now()) - v_state.overlap,
        'cursor', v_state.cursor,
        'max_pages', v_state.max_pages,
        'now', now());
end;
$$;
REVOKE ALL ON FUNCTION public.start_reconciliation_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_reconciliation_v2(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.record_reconciled_emails_v2(p_job_id uuid, p_generation integer, p_emails jsonb, p_lease interval) IS 'A page of listed e-mails recorded (document_jobs_internal.record_reconciled), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given; the run''s counts grow with it. Answers {"held", "state"} with "recorded", "late" and "recorded_ids".';
CREATE FUNCTION public.record_reconciled_emails_v2(p_job_id uuid, p_generation integer, p_emails jsonb, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until)
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    update public.document_jobs_reconciliation r
       set run_recorded = r.run_recorded + (v_answer ->> 'recorded')::int,
           run_late = r.run_late + (v_answer ->> 'late')::int;
    return jsonb_build_object('held', true, 'state', 'running') || v_answer;
end;
$$;
REVOKE ALL ON FUNCTION public.record_reconciled_emails_v2(p_job_id uuid, p_generation integer, p_emails jsonb, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_reconciled_emails_v2(p_job_id uuid, p_generation integer, p_emails jsonb, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.finish_reconciliation_v2(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text) IS 'finish_reconciliation_v3 without a finding: what the worker called before it reported findings, kept for a deploy that is not atomic.';
CREATE FUNCTION public.finish_reconciliation_v2(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select public.finish_reconciliation_v3(p_job_id, p_generation, p_listed, p_newest, p_cursor, null, 0)
$$;
REVOKE ALL ON FUNCTION public.finish_reconciliation_v2(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.finish_reconciliation_v2(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text) TO service_role;

COMMENT ON FUNCTION public.record_reconciled_emails_v3(p_job_id uuid, p_generation integer, p_emails jsonb, p_unreadable jsonb, p_lease interval) IS 'A batch of a listed page recorded (document_jobs_internal.record_reconciled: at most 100 e-mails) and its unreadable items noted once each (note_unreadable: at most 100), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given; the run''s counts grow with it. Answers {"held", "state"} with "recorded", "late", "late_after_close", "recorded_ids" and "unreadable_new".';
CREATE FUNCTION public.record_reconciled_emails_v3(p_job_id uuid, p_generation integer, p_emails jsonb, p_unreadable jsonb DEFAULT '[]'::jsonb, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_answer jsonb;
    v_new int;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until)
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    v_new := document_jobs_internal.note_unreadable(coalesce(p_unreadable, '[]'::jsonb), 'reconciliation');
    update public.document_jobs_reconciliation r
       set run_recorded = r.run_recorded + (v_answer ->> 'recorded')::int,
           run_late = r.run_late + (v_answer ->> 'late')::int;
    return jsonb_build_object('held', true, 'state', 'running', 'unreadable_new', v_new) || v_answer;
end;
$$;
REVOKE ALL ON FUNCTION public.record_reconciled_emails_v3(p_job_id uuid, p_generation integer, p_emails jsonb, p_unreadable jsonb, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_reconciled_emails_v3(p_job_id uuid, p_generation integer, p_emails jsonb, p_unreadable jsonb, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.finish_reconciliation_v3(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text, p_finding text, p_unreadable integer) IS 'The end of a reconcile_emails job''s listing, fenced, before the job completes: with p_cursor (it stopped at max_pages) the cursor is kept and a follow-up job is enqueued when this one completes; with p_finding (the worker''s words for what cut the run short: the same page again, a cursor that does not advance, has_more with an empty page) the run ends and the watermark stays; with neither the run completed: the watermark becomes the newest created_at the run listed, but no later than webhooks_missing_after ago (the young e-mails it left are listed again) and never earlier than it was, and last_completed_at is now. Either end makes the run''s counts the last run''s (p_unreadable: the items it could not read). Answers {"held", "state", "continues"}.';
CREATE FUNCTION public.finish_reconciliation_v3(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text, p_finding text DEFAULT NULL::text, p_unreadable integer DEFAULT 0) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(p_listed is not null and p_listed >= 0, 'p_listed must be 0 or more');
    perform document_jobs_internal.require(p_unreadable is not null and p_unreadable >= 0, 'p_unreadable must be 0 or more');
    perform document_jobs_internal.require(p_cursor is null or p_finding is null,
                                           'a run cut short by a finding has no cursor to continue after');
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'reconcile_emails'
       for update;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    if p_cursor is not null then
        -- Stopped at its page bound: the follow-up (enqueued when this job completes) goes on after it.
        update public.document_jobs_reconciliation r
           set cursor = p_cursor,
               run_listed = r.run_listed + p_listed,
               run_unreadable = r.run_unreadable + p_unreadable,
               run_newest = greatest(r.run_newest, p_newest);
        return jsonb_build_object('held', true, 'state', 'running', 'continues', true);
    end if;
    -- The run is over. Cut short by a finding, it did not list back to the watermark: the
    -- watermark stays (what it did not list is listed by the next run, from the newest page).
    update public.document_jobs_reconciliation r
       set watermark = case when p_finding is null
                            then greatest(r.watermark, least(greatest(r.run_newest, p_newest),
                                                             now() - r.webhooks_missing_after))
                            else r.watermark end,
           last_completed_at = case when p_finding is null then now() else r.last_completed_at end,
           last_finding = left(p_finding, 500),
           last_finding_at = case when p_finding is null then r.last_finding_at else now() end,
           cursor = null,
           last_run_at = now(),
           last_listed = r.run_listed + p_listed,
           last_recorded = r.run_recorded,
           last_late = r.run_late,
           last_unreadable = r.run_unreadable + p_unreadable,
           run_started_at = null, run_listed = 0, run_recorded = 0, run_late = 0, run_unreadable = 0,
           run_newest = null;
    return jsonb_build_object('held', true, 'state', 'running', 'continues', false);
end;
$$;
REVOKE ALL ON FUNCTION public.finish_reconciliation_v3(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text, p_finding text, p_unreadable integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.finish_reconciliation_v3(p_job_id uuid, p_generation integer, p_listed integer, p_newest timestamp with time zone, p_cursor text, p_finding text, p_unreadable integer) TO service_role;

COMMENT ON FUNCTION public.start_prepare_fax_v2(p_job_id uuid, p_generation integer) IS 'What a prepare_fax job needs, fenced like every call after a claim: its e-mail ("email", null when the row is gone) and the e-mail''s stored attachments ("attachments": id, content_type, bucket, storage_path, size_bytes, sha256, and "prepared" when a view of those very bytes was recorded without an error: a job run again skips it). {"held": false, "state": null} once (p_job_id, p_generation) no longer holds the job.';
CREATE FUNCTION public.start_prepare_fax_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    return jsonb_build_object(
        'held', true,
        'state', 'running',
        'email', (select jsonb_build_object('id', e.id) from public.fax_received_emails e where e.id = v_email_id),
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'content_type', a.content_type, 'bucket', a.bucket,
                       'storage_path', a.storage_path, 'size_bytes', a.size_bytes, 'sha256', a.sha256,
                       'prepared', v.attachment_id is not null)
                   order by a.created_at, a.id)
              from public.fax_received_email_attachments a
              left join public.fax_attachment_views v
                on v.attachment_id = a.id and v.source_sha256 = a.sha256 and v.error_code is null
             where a.fax_received_email_id = v_email_id), '[]'::jsonb));
end;
$$;
REVOKE ALL ON FUNCTION public.start_prepare_fax_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_prepare_fax_v2(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.start_prepare_fax_v3(p_job_id uuid, p_generation integer) IS 'start_prepare_fax_v2''s answer, its "email" with the e-mail''s "subject" and "from" as recorded: the job reads the sender from them (record_fax_sender_v1).';
CREATE FUNCTION public.start_prepare_fax_v3(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_start jsonb := public.start_prepare_fax_v2(p_job_id, p_generation);
begin
    if not (v_start ->> 'held')::boolean or v_start -> 'email' = 'null'::jsonb then
        return v_start;
    end if;
    return jsonb_set(v_start, '{email}', (
        select jsonb_build_object('id', e.id, 'subject', e.subject, 'from', e.from_address)
          from public.fax_received_emails e where e.id = (v_start #>> '{email,id}')::uuid));
end;
$$;
REVOKE ALL ON FUNCTION public.start_prepare_fax_v3(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_prepare_fax_v3(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.record_fax_sender_v1(p_job_id uuid, p_generation integer, p_sender jsonb) IS 'Records who sent the prepare_fax job''s fax as the worker read it (lib/fax/senders.py): p_sender {"format", "name", "number", "number_display", "number_source", "withheld_ja", "withheld_en"}, each optional, checked by fax_senders'' constraints (one line, short); replaces an earlier reading. Fenced by (p_job_id, p_generation). Answers {"held", "state"}.';
CREATE FUNCTION public.record_fax_sender_v1(p_job_id uuid, p_generation integer, p_sender jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
    v_key text;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(jsonb_typeof(p_sender) = 'object', 'p_sender must be a JSON object');
    for v_key in select jsonb_object_keys(p_sender) loop
        perform document_jobs_internal.require(
            v_key in ('format', 'name', 'number', 'number_display', 'number_source', 'withheld_ja', 'withheld_en'),
            format('p_sender has no key %s', v_key));
    end loop;
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    insert into document_jobs_internal.fax_senders as s
           (fax_received_email_id, format, name, number, number_display, number_source, withheld_ja, withheld_en)
    values (v_email_id, p_sender ->> 'format', p_sender ->> 'name', p_sender ->> 'number', p_sender ->> 'number_display',
            p_sender ->> 'number_source', p_sender ->> 'withheld_ja', p_sender ->> 'withheld_en')
    on conflict (fax_received_email_id) do update
       set format = excluded.format, name = excluded.name, number = excluded.number,
           number_display = excluded.number_display, number_source = excluded.number_source,
           withheld_ja = excluded.withheld_ja, withheld_en = excluded.withheld_en, recorded_at = now();
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
REVOKE ALL ON FUNCTION public.record_fax_sender_v1(p_job_id uuid, p_generation integer, p_sender jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_fax_sender_v1(p_job_id uuid, p_generation integer, p_sender jsonb) TO service_role;

COMMENT ON FUNCTION public.record_fax_attachment_view_v2(p_job_id uuid, p_generation integer, p_attachment_id uuid, p_source_sha256 text, p_page_count integer, p_view_path text, p_thumbnail_path text, p_error_code text, p_error_message text, p_lease interval) IS 'Records what the prepare_fax job derived from one attachment of its e-mail (its page count, viewing PDF and thumbnail keys, or the error code of a file it could not prepare), replacing an earlier preparation, fenced by (p_job_id, p_generation). The attachment must be the job''s e-mail''s and p_source_sha256 its recorded digest; the keys must lie under fax_views/{e-mail}/{attachment}/ (never an original''s). With p_lease (the worker always passes it) the lease is renewed in the same statement, and a streak of time-budget releases ends. Answers {"held", "state"}.';
CREATE FUNCTION public.record_fax_attachment_view_v2(p_job_id uuid, p_generation integer, p_attachment_id uuid, p_source_sha256 text, p_page_count integer, p_view_path text, p_thumbnail_path text, p_error_code text, p_error_message text, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
    v_email_id uuid;
    v_sha256 text;
    v_prefix text;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    -- Preparing an attachment is progress: it ends a streak of time-budget releases, as storing one does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until),
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax'
    returning j.fax_received_email_id into v_email_id;
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select a.sha256 into v_sha256
      from public.fax_received_email_attachments a
     where a.id = p_attachment_id and a.fax_received_email_id = v_email_id;
    perform document_jobs_internal.require(v_sha256 is not null,
        format('attachment %s is not one of the job''s e-mail', p_attachment_id));
    perform document_jobs_internal.require(p_source_sha256 = v_sha256,
        'p_source_sha256 must be the attachment''s sha256: a view is derived from the recorded bytes');
    -- Derived files live under the attachment's own prefix, never at an original's key.
    v_prefix := format('fax_views/%s/%s/', v_email_id, p_attachment_id);
    perform document_jobs_internal.require(
        coalesce(starts_with(p_view_path, v_prefix), true) and coalesce(starts_with(p_thumbnail_path, v_prefix), true)
        and coalesce(p_view_path, '') !~ '(^|/)\.\.?(/|$)' and coalesce(p_thumbnail_path, '') !~ '(^|/)\.\.?(/|$)',
        format('derived files must be under %s', v_prefix));
    perform document_jobs_internal.require(p_page_count is null or p_page_count > 0, 'p_page_count must be positive');
    perform document_jobs_internal.require(
        nullif(p_error_code, '') is null or (p_view_path is null and p_thumbnail_path is null),
        'an attachment that could not be prepared has no derived files');
    insert into public.fax_attachment_views as v
           (attachment_id, source_sha256, page_count, view_path, thumbnail_path, error_code, error_message, prepared_at)
    values (p_attachment_id, p_source_sha256, p_page_count, p_view_path, p_thumbnail_path, nullif(p_error_code, ''),
            left(p_error_message, 1000), now())
    on conflict (attachment_id) do update
       set source_sha256 = excluded.source_sha256,
           page_count = excluded.page_count,
           view_path = excluded.view_path,
           thumbnail_path = excluded.thumbnail_path,
           error_code = excluded.error_code,
           error_message = excluded.error_message,
           prepared_at = excluded.prepared_at;
    return jsonb_build_object('held', true, 'state', 'running');
end;
$_$;
REVOKE ALL ON FUNCTION public.record_fax_attachment_view_v2(p_job_id uuid, p_generation integer, p_attachment_id uuid, p_source_sha256 text, p_page_count integer, p_view_path text, p_thumbnail_path text, p_error_code text, p_error_message text, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_fax_attachment_view_v2(p_job_id uuid, p_generation integer, p_attachment_id uuid, p_source_sha256 text, p_page_count integer, p_view_path text, p_thumbnail_path text, p_error_code text, p_error_message text, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.start_verify_originals_v2(p_job_id uuid, p_generation integer) IS 'What a verify_originals job reads, fenced like every call after a claim: its run (drawn on its first start, the same on a start again: "run_id", "total") and the originals of it not read yet ("items": id, fax_received_email_id, bucket, storage_path, size_bytes, sha256).';
CREATE FUNCTION public.start_verify_originals_v2(p_job_id uuid, p_generation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_run public.original_verify_runs;
    v_sample int;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'verify_originals';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select * into v_run from public.original_verify_runs r where r.job_id = p_job_id;
    if not found then
        select s.sample into v_sample from public.original_verification s;
        v_run := document_jobs_internal.start_verify_run('job', p_job_id, null, v_sample);
    end if;
    return jsonb_build_object('held', true, 'state', 'running', 'run_id', v_run.id, 'total', v_run.total,
                              'items', document_jobs_internal.verify_items(v_run, null, 1000));
end;
$$;
REVOKE ALL ON FUNCTION public.start_verify_originals_v2(p_job_id uuid, p_generation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_verify_originals_v2(p_job_id uuid, p_generation integer) TO service_role;

COMMENT ON FUNCTION public.record_original_checks_v2(p_job_id uuid, p_generation integer, p_run_id bigint, p_checks jsonb, p_lease interval) IS 'What a verify_originals job read of at most 100 originals of its run, recorded and judged (document_jobs_internal.record_original_checks), fenced by (p_job_id, p_generation), renewing the lease by p_lease when given. Answers {"held", "state"} with "checked", "mismatched", "mismatches" and "alerts".';
CREATE FUNCTION public.record_original_checks_v2(p_job_id uuid, p_generation integer, p_run_id bigint, p_checks jsonb, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    -- Reading originals is progress: it ends a streak of time-budget releases, as storing one does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until),
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'verify_originals';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(
        exists (select 1 from public.original_verify_runs r where r.id = p_run_id and r.job_id = p_job_id),
        format('run %s is not the job''s', p_run_id));
    return jsonb_build_object('held', true, 'state', 'running')
           || document_jobs_internal.record_original_checks(p_run_id, p_checks);
end;
$$;
REVOKE ALL ON FUNCTION public.record_original_checks_v2(p_job_id uuid, p_generation integer, p_run_id bigint, p_checks jsonb, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_original_checks_v2(p_job_id uuid, p_generation integer, p_run_id bigint, p_checks jsonb, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.start_export_faxes_v1(p_job_id uuid, p_generation integer, p_bucket text) IS 'What an export_faxes job reads first, fenced: its export (export_id, bucket: p_bucket on the first start, then the same; date_from, date_to, stored_before, finished), how many parts and files are recorded ("parts", "files") and the cursor the next part starts after ("after": {"at", "id"}, null before the first part).';
CREATE FUNCTION public.start_export_faxes_v1(p_job_id uuid, p_generation integer, p_bucket text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
    v_last public.fax_export_parts;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_bucket is not null, 'p_bucket must not be null');
    -- The bucket of its first start stays the export's: its parts are there.
    update public.fax_exports e set bucket = coalesce(e.bucket, p_bucket) where e.id = v_export.id
    returning * into v_export;
    select * into v_last from public.fax_export_parts p where p.export_id = v_export.id order by p.part desc limit 1;
    return jsonb_build_object(
        'held', true, 'state', 'running',
        'export_id', v_export.id, 'bucket', v_export.bucket, 'date_from', v_export.date_from,
        'date_to', v_export.date_to, 'stored_before', v_export.stored_before, 'finished', v_export.finished_at is not null,
        'parts', coalesce(v_last.part, 0),
        'files', (select count(*) from public.fax_export_files f where f.export_id = v_export.id),
        'after', case when v_last.part is not null then jsonb_build_object('at', v_last.after_at, 'id', v_last.after_id) end);
end;
$$;
REVOKE ALL ON FUNCTION public.start_export_faxes_v1(p_job_id uuid, p_generation integer, p_bucket text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_export_faxes_v1(p_job_id uuid, p_generation integer, p_bucket text) TO service_role;

COMMENT ON FUNCTION public.fax_export_names_taken_v1(p_job_id uuid, p_generation integer, p_names text[]) IS 'Which of p_names (as given) an earlier part of the job''s export has taken, fenced: a name is the export''s once, as a case-insensitive file system sees it.';
CREATE FUNCTION public.fax_export_names_taken_v1(p_job_id uuid, p_generation integer, p_names text[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(cardinality(p_names) <= 5000, 'p_names holds at most 5000 names');
    return jsonb_build_object('held', true, 'state', 'running', 'taken',
        coalesce((select jsonb_agg(distinct n) from unnest(p_names) n
                   where exists (select 1 from public.fax_export_files f
                                  where f.export_id = v_export.id and lower(f.name) = lower(n))), '[]'));
end;
$$;
REVOKE ALL ON FUNCTION public.fax_export_names_taken_v1(p_job_id uuid, p_generation integer, p_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fax_export_names_taken_v1(p_job_id uuid, p_generation integer, p_names text[]) TO service_role;

COMMENT ON FUNCTION public.record_fax_export_part_v1(p_job_id uuid, p_generation integer, p_part integer, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_after_at timestamp with time zone, p_after_id uuid, p_files jsonb, p_lease interval) IS 'Records a stored zip part of the job''s export, fenced by (p_job_id, p_generation), renewing the lease by p_lease when given: the part (the next number only, at exports/<export id>/part-NNNN.zip), the cursor the next part starts after (p_after_at, p_after_id) and its files (p_files: {"name", "document_id", "size_bytes", "sha256", "csv_row"}, a name taken in the export refused by fax_export_files_name). {"held", "state", "part", "written"}.';
CREATE FUNCTION public.record_fax_export_part_v1(p_job_id uuid, p_generation integer, p_part integer, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_after_at timestamp with time zone, p_after_id uuid, p_files jsonb, p_lease interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
    v_parts int;
    v_seq int;
    v_count int;
    v_bytes bigint;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is not null and (p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max) then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    select * into v_export from public.fax_exports e where e.id = v_export.id for update;
    perform document_jobs_internal.require(v_export.finished_at is null, 'the export is finished');
    select coalesce(max(p.part), 0) into v_parts from public.fax_export_parts p where p.export_id = v_export.id;
    perform document_jobs_internal.require(p_part = v_parts + 1,
                                           format('part %s follows part %s, not %s', v_parts + 1, v_parts, p_part));
    perform document_jobs_internal.require(p_storage_path = format('exports/%s/part-%s.zip', v_export.id,
                                                                   lpad(p_part::text, 4, '0')),
                                           'a part is stored under its export''s prefix, exports/<export id>/');
    perform document_jobs_internal.require(jsonb_typeof(p_files) = 'array' and jsonb_array_length(p_files) >= 1,
                                           'p_files must be a non-empty JSON array');
    insert into public.fax_export_parts (export_id, part, storage_path, size_bytes, sha256, originals, after_at, after_id)
    values (v_export.id, p_part, p_storage_path, p_size_bytes, p_sha256, jsonb_array_length(p_files), p_after_at,
            p_after_id);
    select coalesce(max(f.seq), 0) into v_seq from public.fax_export_files f where f.export_id = v_export.id;
    insert into public.fax_export_files (export_id, seq, part, name, document_id, size_bytes, sha256, csv_row)
    select v_export.id, v_seq + e.ordinality::int, p_part, e.value ->> 'name', (e.value ->> 'document_id')::uuid,
           (e.value ->> 'size_bytes')::bigint, e.value ->> 'sha256', e.value -> 'csv_row'
      from jsonb_array_elements(p_files) with ordinality e;
    select count(*)::int, coalesce(sum((e.value ->> 'size_bytes')::bigint), 0)::bigint into v_count, v_bytes
      from jsonb_array_elements(p_files) e;
    update public.fax_exports e set written = e.written + v_count, bytes = e.bytes + v_bytes where e.id = v_export.id;
    -- A stored part is progress: it ends a streak of time-budget releases, as storing an original does.
    update public.document_jobs j
       set lease_until = coalesce(now() + p_lease, j.lease_until), budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation;
    return jsonb_build_object('held', true, 'state', 'running', 'part', p_part, 'written', v_export.written + v_count);
end;
$$;
REVOKE ALL ON FUNCTION public.record_fax_export_part_v1(p_job_id uuid, p_generation integer, p_part integer, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_after_at timestamp with time zone, p_after_id uuid, p_files jsonb, p_lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_fax_export_part_v1(p_job_id uuid, p_generation integer, p_part integer, p_storage_path text, p_size_bytes bigint, p_sha256 text, p_after_at timestamp with time zone, p_after_id uuid, p_files jsonb, p_lease interval) TO service_role;

COMMENT ON FUNCTION public.fax_export_files_v1(p_job_id uuid, p_generation integer, p_after_seq integer, p_limit integer) IS 'The job''s export''s files after p_after_seq (at most p_limit, in order: seq, name, sha256, csv_row), fenced: what its index.csv and SHA256SUMS are written from.';
CREATE FUNCTION public.fax_export_files_v1(p_job_id uuid, p_generation integer, p_after_seq integer DEFAULT 0, p_limit integer DEFAULT 1000) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_limit between 1 and 5000, 'p_limit must be between 1 and 5000');
    return jsonb_build_object('held', true, 'state', 'running', 'files',
        coalesce((select jsonb_agg(jsonb_build_object('seq', f.seq, 'name', f.name, 'sha256', f.sha256,
                                                      'csv_row', f.csv_row) order by f.seq)
                    from (select * from public.fax_export_files f
                           where f.export_id = v_export.id and f.seq > p_after_seq
                           order by f.seq limit p_limit) f), '[]'));
end;
$$;
REVOKE ALL ON FUNCTION public.fax_export_files_v1(p_job_id uuid, p_generation integer, p_after_seq integer, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fax_export_files_v1(p_job_id uuid, p_generation integer, p_after_seq integer, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.finish_fax_export_v1(p_job_id uuid, p_generation integer, p_index jsonb, p_sums jsonb) IS 'Records the job''s export''s index.csv and SHA256SUMS as stored ({"path", "size_bytes", "sha256"} each, under exports/<export id>/), fenced: the export is finished; the job completes next.';
CREATE FUNCTION public.finish_fax_export_v1(p_job_id uuid, p_generation integer, p_index jsonb, p_sums jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
begin
    v_export := document_jobs_internal.held_export(p_job_id, p_generation);
    if v_export.id is null then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    perform document_jobs_internal.require(p_index ->> 'path' = format('exports/%s/index.csv', v_export.id)
                                           and p_sums ->> 'path' = format('exports/%s/SHA256SUMS', v_export.id),
                                           'index.csv and SHA256SUMS are stored under the export''s prefix');
    update public.fax_exports e
       set index_path = p_index ->> 'path', index_size_bytes = (p_index ->> 'size_bytes')::bigint,
           index_sha256 = p_index ->> 'sha256', sums_path = p_sums ->> 'path',
           sums_size_bytes = (p_sums ->> 'size_bytes')::bigint, sums_sha256 = p_sums ->> 'sha256',
           finished_at = coalesce(e.finished_at, now())
     where e.id = v_export.id;
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
REVOKE ALL ON FUNCTION public.finish_fax_export_v1(p_job_id uuid, p_generation integer, p_index jsonb, p_sums jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.finish_fax_export_v1(p_job_id uuid, p_generation integer, p_index jsonb, p_sums jsonb) TO service_role;


-- =================================================================================================
-- The webhook's call: an inbound e-mail recorded and its job enqueued
-- =================================================================================================

COMMENT ON FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) IS 'What the webhook calls: records the e-mail (found_by webhook) and enqueues its fetch_email job with a kick, atomically, in one round trip (document_jobs_internal.record_email). Keeps the data verbatim and never fails on a field it merely copies (a date that does not parse is stored as null): an e-mail must not be lost over metadata. A redelivered webhook answers duplicate = true with the existing rows and creates nothing.';
CREATE FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) RETURNS TABLE(fax_received_email_id uuid, job_id uuid, duplicate boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    return query
    select r.fax_received_email_id, r.job_id, r.duplicate
      from document_jobs_internal.record_email(p_provider_email_id, p_webhook_id, p_data, 'webhook') r;
end;
$$;
REVOKE ALL ON FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_inbound_email(p_provider_email_id text, p_webhook_id text, p_data jsonb) TO service_role;


-- =================================================================================================
-- The admin screen's calls: the overview, the job list, one job, the audit, actions
-- =================================================================================================

COMMENT ON FUNCTION public.document_jobs_admin_overview() IS 'The admin screen''s overview: jobs by state, the oldest waiting job, failures by error code (last 24 hours), failed jobs now by error code, the hourly series (7 days) and the health check''s open outages. A failed job is an open problem until its fax is marked done: "failed" and "failed_by_error_code" count the open ones, states.failed_closed the others. Queued, running and failed jobs are counted exactly; completed ones, most of the table, are the planner''s estimate ("estimated": true), which autovacuum keeps current.';
CREATE FUNCTION public.document_jobs_admin_overview() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_now_hour timestamptz := date_trunc('hour', now(), 'UTC');
    v_completed bigint;
    v_estimated boolean := true;
    v_failed bigint;
    v_failed_closed bigint;
    v_failed_by_code jsonb;
begin
    perform document_jobs_internal.fill_hourly_outcomes();

    -- Failed jobs are problems until their fax is marked done: those are history, counted apart.
    -- The fax's handling is probed once a job (closed is named once: named twice, the planner ran
    -- its subquery twice), and the failed jobs are read from document_jobs_failed alone.
    select coalesce(jsonb_agg(jsonb_build_object('error_code', f.code, 'count', f.n) order by f.n desc, f.code)
                        filter (where f.n > 0), '[]'),
           coalesce(sum(f.n), 0)::bigint, coalesce(sum(f.closed), 0)::bigint
      into v_failed_by_code, v_failed, v_failed_closed
      from (select g.code, g.total - g.closed as n, g.closed
              from (select coalesce(c.last_error_code, '(none)') as code, count(*) as total,
                           count(*) filter (where c.closed) as closed
                      from (select j.last_error_code,
                                   exists (select 1 from public.fax_handling h
                                            where h.fax_received_email_id = j.fax_received_email_id
                                              and h.state = 'done') as closed
                              from public.document_jobs j where j.status = 'failed') c
                     group by 1) g) f;

    select round(c.reltuples * s.most_common_freqs[array_position(s.most_common_vals::text::text[], 'completed')])::bigint
      into v_completed
      from pg_catalog.pg_class c
      join pg_catalog.pg_stats s on s.schemaname = 'public' and s.tablename = 'document_jobs' and s.attname = 'status'
     where c.oid = 'public.document_jobs'::regclass and c.reltuples >= 0;
    if v_completed is null then
        -- Never analyzed (a new, small table): count, up to a bound.
        select count(*) into v_completed
          from (select 1 from public.document_jobs j where j.status = 'completed' limit 100000) c;
        v_estimated := v_completed >= 100000;
    end if;

    return jsonb_build_object(
        'measured_at', now(),
        'states', jsonb_build_object(
            'queued', (select count(*) from public.document_jobs j where j.status = 'queued'),
            'running', (select count(*) from public.document_jobs j where j.status = 'running'),
            'failed', v_failed,
            'failed_closed', v_failed_closed,
            'completed', v_completed,
            'completed_estimated', v_estimated),
        'oldest_waiting', (
            select jsonb_build_object('id', c.id, 'kind', c.kind, 'status', c.status, 'run_after', c.run_after,
                                      'created_at', c.created_at,
                                      'waiting_seconds', round(extract(epoch from now() - c.run_after)::numeric, 1))
              from public.document_job_kinds k
             cross join lateral (
                   select w.id, w.kind, w.status, w.run_after, w.created_at from public.document_jobs_claimable w
                    where w.kind = k.kind order by w.run_after, w.created_at limit 1) c
             order by c.run_after limit 1),
        'failures_24h', coalesce((
            select jsonb_agg(jsonb_build_object('error_code', f.error_code, 'failed', f.failed, 'retried', f.retried,
                                                'released', f.released, 'other', f.other)
                   order by f.failed desc, f.retried desc, f.error_code)
              from (select coalesce(a.error_code, '(none)') as error_code,
                           count(*) filter (where a.outcome = 'failed') as failed,
                           count(*) filter (where a.outcome = 'retried') as retried,
                           count(*) filter (where a.outcome = 'released') as released,
                           count(*) filter (where a.outcome in ('lease_expired', 'cancelled')) as other
                      from public.document_job_attempts a
                     where a.outcome <> 'completed' and a.finished_at > now() - interval '24 hours'
                     group by 1) f), '[]'),
        'failed_by_error_code', v_failed_by_code,
        'hours', coalesce((
            select jsonb_agg(jsonb_build_object('hour', h.hour, 'completed', h.completed, 'failed', h.failed,
                                                'retried', h.retried, 'latency_p50_ms', round(h.latency_p50_ms),
                                                'latency_p95_ms', round(h.latency_p95_ms))
                   order by h.hour)
              from (select c.hour, c.completed, c.failed, c.retried, c.latency_p50_ms, c.latency_p95_ms
                      from document_jobs_internal.hourly_outcomes c
                     where c.hour >= v_now_hour - interval '167 hours' and c.hour < v_settled
                    union all
                    select s.hour, coalesce(o.completed, 0), coalesce(o.failed, 0), coalesce(o.retried, 0),
                           o.latency_p50_ms, o.latency_p95_ms
                      from generate_series(v_settled, v_now_hour, interval '1 hour') s(hour)
                      left join document_jobs_internal.outcomes_by_hour(v_settled, now() + interval '1 second') o
                        on o.hour = s.hour) h), '[]'),
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'details', document_jobs_internal.outage_details(o.cause))
                   order by o.since)
              from document_jobs_internal.outages o where o.active), '[]'),
        'kinds', (select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k));
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_overview() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_overview() TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) IS 'A page of the job list for a filter (job_filter): {"jobs", "next", "count", "partial", "searched_until"}, in (created_at, id) descending order, which is unique, so pages never skip or repeat a job while jobs change; "count" is exact up to 10,000, on the first page, without a search term or with a sender of 5,000 e-mails or fewer. A sender of 5,000 e-mails or fewer (emails_from_sender) gives the page from those e-mails'' jobs; a more common one is walked as a term is (search_walk, 1,000 jobs a page). A search term is looked for in the newest jobs the other filters match (search_walk), then, when those hold less than a page, in its indexes (emails_matching, exact up to 5,000 e-mails). When neither can answer (a term of fewer than three characters, or one in too many e-mails) the page is "partial" and "next" continues from "searched_until": nothing is skipped, it only takes more pages.';
CREATE FUNCTION public.document_jobs_admin_jobs(p_filter jsonb DEFAULT '{}'::jsonb, p_after_created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $_$
declare
    c_walk constant int := 1000;
    c_first_walk constant int := 200;
    v_walk int;
    c_candidates constant int := 5000;
    c_count_cap constant int := 10000;
    v_filter jsonb := document_jobs_internal.job_filter(p_filter);
    v_q text := v_filter ->> 'q';
    v_keyset text := 'true';
    v_ids uuid[];
    v_oldest_created_at timestamptz;
    v_oldest_id uuid;
    v_emails uuid[];
    v_job_id uuid;
    v_partial boolean := false;
    v_count int;
    v_ids_counted uuid[];
    v_next jsonb;
    -- The jobs of the e-mails $1 and the job $2 that the filter %1$s and the keyset %2$s keep, newest
    -- first (each branch through an index on the e-mail: the finished ones, and the live one of each
    -- kind, probed one e-mail at a time; "limit 1", which the unique index makes exact, keeps the
    -- planner from hashing every live job instead).
    c_jobs_of_emails constant text :=
        'select array(select c.id from (
             select j.id, j.created_at from public.document_jobs j
              where j.fax_received_email_id = any ($1) and j.status in (''completed'', ''failed'')
                and %1$s and %2$s
             union
             select l.id, l.created_at
               from unnest($1) x(email_id)
              cross join public.document_job_kinds k
              cross join lateral (
                    select j.id, j.created_at from public.document_jobs j
                     where j.kind = k.kind and j.fax_received_email_id = x.email_id
                       and j.status in (''queued'', ''running'') and %1$s and %2$s
                     limit 1) l
             union
             select j.id, j.created_at from public.document_jobs j where j.id = $2 and %1$s and %2$s
         ) c order by c.created_at desc, c.id desc limit %3$s)';
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    perform document_jobs_internal.require((p_after_created_at is null) = (p_after_id is null),
        'p_after_created_at and p_after_id go together');
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;

    if v_filter ? 'sender' then
        v_emails := document_jobs_internal.emails_from_sender(v_filter ->> 'sender', c_candidates + 1);
    end if;

    if cardinality(v_emails) <= c_candidates then
        -- The sender's e-mails: their jobs, with the other conditions (the search term too) checked
        -- job by job.
        execute format(c_jobs_of_emails, document_jobs_internal.job_filter_sql(v_filter - 'sender'), v_keyset,
                       p_limit + 1)
           into v_ids
          using v_emails, null::uuid;
        if p_after_id is null then
            -- Counted through the same two indexes as the page (no index on the e-mail serves
            -- every state, so a count over all states read the whole table: about 100 ms).
            execute format(c_jobs_of_emails, document_jobs_internal.job_filter_sql(v_filter - 'sender'), 'true',
                           c_count_cap + 1)
               into v_ids_counted
              using v_emails, null::uuid;
            v_count := cardinality(v_ids_counted);
        end if;
    elsif v_q is null and not v_filter ? 'sender' then
        execute format('select array(select q.id from (%s) q order by q.created_at desc, q.id desc limit %s)',
                       document_jobs_internal.jobs_by_state_sql(v_filter, v_keyset, p_limit + 1), p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from (%s) q limit %s) c',
                           document_jobs_internal.jobs_by_state_sql(v_filter, 'true', c_count_cap + 1), c_count_cap + 1)
               into v_count;
        end if;
    else
        -- A search term, or a sender of more than 5,000 e-mails.
        v_emails := null;
        if v_q is null or v_q !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
            -- The newest jobs first: a common term fills a page here. A term of three characters
            -- or more is tried on the newest 200 first: a rare one (the indexes answer it sooner
            -- than 1,000 jobs are read) goes to the indexes; one that is common there, whose
            -- 1,000 jobs would at that rate hold a page, walks the 1,000.
            v_walk := case when length(v_q) >= 3 then c_first_walk else c_walk end;  -- a sender alone: 1,000
            select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
              from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, v_walk, p_limit) w;
            if v_walk < c_walk and v_oldest_id is not null and cardinality(v_ids) * c_walk / v_walk > p_limit then
                v_walk := c_walk;
                select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
                  from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, v_walk, p_limit) w;
            end if;
        end if;
        if v_ids is null or (cardinality(v_ids) <= p_limit and v_oldest_id is not null) then
            -- Not enough there: look the term up in the indexes, if they can answer exactly (the
            -- trigram index needs three characters; a UUID has 36).
            if length(v_q) >= 3 then
                v_emails := document_jobs_internal.emails_matching(v_q, c_candidates + 1);
            end if;
            if v_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
                v_job_id := v_q::uuid;  -- a job's id, or an e-mail's: its jobs are found as the others'
                v_emails := v_emails || v_job_id;
            end if;
            if v_emails is not null and cardinality(v_emails) <= c_candidates then
                -- Their jobs that the other filters keep (the sender checked job by job), and a job
                -- named by its id; every one of them matches the term already.
                execute format(c_jobs_of_emails, concat_ws(' and ',
                                   document_jobs_internal.job_filter_sql(v_filter - 'q' - 'sender'),
                                   case when v_filter ? 'sender'
                                        then document_jobs_internal.sender_match_sql(v_filter ->> 'sender') end),
                               v_keyset, p_limit + 1)
                   into v_ids
                  using v_emails, v_job_id;
            else
                if v_walk < c_walk then
                    -- Too many e-mails to list: the search walks 1,000 jobs at a time, as for a
                    -- short term.
                    select w.ids, w.oldest_created_at, w.oldest_id into v_ids, v_oldest_created_at, v_oldest_id
                      from document_jobs_internal.search_walk(v_filter, p_after_created_at, p_after_id, c_walk, p_limit) w;
                end if;
                v_partial := coalesce(cardinality(v_ids) <= p_limit and v_oldest_id is not null, false);
            end if;
        end if;
    end if;

    if v_partial then
        v_next := jsonb_build_object('created_at', v_oldest_created_at, 'id', v_oldest_id);
    elsif cardinality(v_ids) > p_limit then
        v_ids := v_ids[1:p_limit];
        select jsonb_build_object('created_at', j.created_at, 'id', j.id) into v_next
          from public.document_jobs j where j.id = v_ids[p_limit];
    end if;

    return jsonb_build_object(
        'jobs', coalesce((
            select jsonb_agg(document_jobs_internal.job_summary(j, e) order by j.created_at desc, j.id desc)
              from public.document_jobs j
              left join public.fax_received_emails e on e.id = j.fax_received_email_id
             where j.id = any (v_ids)), '[]'),
        'next', v_next,
        'partial', v_partial,
        'searched_until', case when v_partial then v_oldest_created_at end,
        'count', case when v_count <= c_count_cap then v_count end,
        'count_capped', coalesce(v_count > c_count_cap, false),
        'filter', v_filter);
end;
$_$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_jobs(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_job(p_job_id uuid) IS 'One job for the admin screen: the job, its attempts (oldest first), its e-mail and its stored attachments; null when there is no such job. The e-mail says how it was found: found_by webhook, or reconciliation with reconciled_at, when reconciliation recorded it.';
CREATE FUNCTION public.document_jobs_admin_job(p_job_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_job public.document_jobs;
    v_email public.fax_received_emails;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    select * into v_job from public.document_jobs j where j.id = p_job_id;
    if not found then
        return null;
    end if;
    select * into v_email from public.fax_received_emails e where e.id = v_job.fax_received_email_id;
    return jsonb_build_object(
        'job', document_jobs_internal.job_summary(v_job, null)
               || jsonb_build_object('last_error_message', v_job.last_error_message, 'generation', v_job.generation,
                                     'lease_until', v_job.lease_until,
                                     'fax_received_email_id', v_job.fax_received_email_id),
        'attempts', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'attempt', a.attempt, 'generation', a.generation, 'started_at', a.started_at,
                       'finished_at', a.finished_at, 'outcome', a.outcome, 'error_code', a.error_code,
                       'error_message', a.error_message, 'invocation_id', a.invocation_id,
                       'duration_ms', round(extract(epoch from a.finished_at - a.started_at) * 1000))
                   order by a.generation)
              from public.document_job_attempts a where a.job_id = p_job_id), '[]'),
        'email', case when v_email.id is not null then jsonb_build_object(
            'id', v_email.id, 'provider', v_email.provider, 'provider_email_id', v_email.provider_email_id,
            'from', v_email.from_address, 'to', to_jsonb(v_email.to_addresses), 'cc', to_jsonb(v_email.cc_addresses),
            'subject', v_email.subject, 'message_id', v_email.message_id, 'received_at', v_email.received_at,
            'created_at', v_email.created_at, 'found_by', v_email.found_by,
            'reconciled_at', v_email.reconciled_at) end,
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'filename', a.filename, 'content_type', a.content_type, 'size_bytes', a.size_bytes,
                       'sha256', a.sha256, 'stored_at', a.updated_at)
                   order by a.filename, a.id)
              from public.fax_received_email_attachments a where a.fax_received_email_id = v_email.id), '[]'));
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_job(p_job_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_job(p_job_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) IS 'The audit, newest first: {"entries": [...], "next": <id> or null}. A bulk action''s entry (a bulk mark''s too) says how far it got (changed, skipped, done); a mark''s says which fax, from which state to which, and whose it became ("handling").';
CREATE FUNCTION public.document_jobs_admin_audit(p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_entries jsonb;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    select jsonb_agg(jsonb_build_object(
               'id', a.id, 'at', a.at, 'actor_id', a.actor_id, 'actor_email', a.actor_email, 'action', a.action,
               'job_id', a.job_id, 'filter', a.filter, 'job_count', a.job_count, 'reason', a.reason,
               'bulk', case when b.id is not null then jsonb_build_object(
                               'id', b.id, 'changed', b.changed, 'skipped', b.skipped, 'done', b.finished_at is not null,
                               'finished_at', b.finished_at)
                            when hb.id is not null then jsonb_build_object(
                               'id', hb.id, 'changed', hb.changed, 'skipped', hb.skipped,
                               'done', hb.finished_at is not null, 'finished_at', hb.finished_at) end,
               'handling', case when a.action = 'handle' then (
                   select jsonb_build_object('fax_received_email_id', x.fax_received_email_id, 'from', x.from_state,
                                             'to', x.to_state, 'to_assignee_email', x.to_assignee_email)
                     from public.fax_handling_history x where x.audit_id = a.id limit 1) end)
           order by a.id desc)
      into v_entries
      from (select * from public.document_jobs_audit x
             where p_before is null or x.id < p_before
             order by x.id desc limit p_limit + 1) a
      left join document_jobs_internal.bulk_actions b on b.id = a.bulk_action_id
      left join document_jobs_internal.handling_bulk_actions hb on a.action = 'bulk_handle' and hb.id = a.bulk_action_id;
    v_entries := coalesce(v_entries, '[]');
    return jsonb_build_object(
        'entries', (select coalesce(jsonb_agg(e order by n), '[]')
                      from jsonb_array_elements(v_entries) with ordinality as x(e, n) where n <= p_limit),
        'next', case when jsonb_array_length(v_entries) > p_limit then v_entries -> (p_limit - 1) -> 'id' end);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_audit(p_before bigint, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) IS 'One failed job retried from the admin screen (requeue_failed), recorded in the audit with the operator and the reason, and a worker started for it as the webhook''s kick does. Answers {"changed": true} or {"changed": false, "reason": not_failed, another_live_job or job_deleted}.';
CREATE FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text DEFAULT NULL::text, p_reason text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_retried bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, false);
    begin
        select count(*) into v_retried from document_jobs_internal.requeue_failed(array[p_job_id]);
    exception
        when unique_violation then
            return jsonb_build_object('changed', false, 'reason', 'another_live_job');
    end;
    if v_retried = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_failed' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'retry', p_job_id, 1, nullif(btrim(p_reason), ''));
    perform document_jobs_internal.post_worker(1);
    return jsonb_build_object('changed', true);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_retry_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) TO service_role;

COMMENT ON FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) IS 'One queued or running job cancelled from the admin screen (cancel_live) with the operator''s reason (required), recorded in the audit; its worker learns it at its next fenced call. Answers {"changed": true} or {"changed": false, "reason": ...}.';
CREATE FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cancelled bigint;
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
    select count(*) into v_cancelled from document_jobs_internal.cancel_live(array[p_job_id], btrim(p_reason));
    if v_cancelled = 0 then
        return jsonb_build_object('changed', false,
            'reason', case when exists (select 1 from public.document_jobs j where j.id = p_job_id)
                           then 'not_live' else 'job_deleted' end);
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)
    values (p_actor_id, left(p_actor_email, 320), 'cancel', p_job_id, 1, btrim(p_reason));
    return jsonb_build_object('changed', true);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_cancel_document_job(p_job_id uuid, p_actor_id uuid, p_actor_email text, p_reason text) TO service_role;

COMMENT ON FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) IS 'Counts the jobs a filter (job_filter) matches that the action can change (retry: failed ones, but not those an admin cancelled, failed with code cancelled, unless the filter names that code; cancel: queued and running ones) and keeps their ids: a snapshot, so the action applies to exactly the jobs the operator confirmed, never to the filter run again. At most 50,000 at once: more is refused with 22023 (narrow the filter and count again). Answers {"bulk_action_id", "action", "job_count", "states", "filter", "cancelled_left_out", "prepared_at", "expires_at"}: apply it within 15 minutes, or count again.';
CREATE FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    c_max_jobs constant int := 50000;
    v_filter jsonb := document_jobs_internal.job_filter(p_filter);
    v_states jsonb;
    v_id uuid;
    v_count int := 0;
    -- A cancel is stored as failed with code cancelled: an admin stopped that job on purpose, and
    -- "retry every failed job" must not start it again; a filter that names an error code matches only that
    -- code's jobs, so cancelled ones only when it names cancelled.
    v_leaves_cancelled boolean := p_action = 'retry' and not v_filter ? 'error_code';
begin
    perform document_jobs_internal.require(p_action in ('retry', 'cancel'), 'p_action must be retry or cancel');
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select coalesce(jsonb_agg(s), '[]') into v_states
      from jsonb_array_elements_text(case p_action when 'retry' then '["failed"]'::jsonb
                                                    else '["queued", "running"]'::jsonb end) s
     where not v_filter ? 'states' or v_filter -> 'states' ? s;

    -- Snapshots never applied are of no use after a day.
    delete from document_jobs_internal.bulk_actions b where b.started_at is null and b.prepared_at < now() - interval '1 day';

    insert into document_jobs_internal.bulk_actions (action, filter, actor_id, actor_email)
    values (p_action, v_filter, p_actor_id, left(p_actor_email, 320))
    returning id into v_id;
    if jsonb_array_length(v_states) > 0 then
        execute format(
            'insert into document_jobs_internal.bulk_action_jobs (bulk_action_id, job_id)
             select %L::uuid, j.id from public.document_jobs j where %s and %s limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter || jsonb_build_object('states', v_states)),
            case when v_leaves_cancelled then 'j.last_error_code is distinct from ''cancelled''' else 'true' end,
            c_max_jobs + 1);
        get diagnostics v_count = row_count;
    end if;
    if v_count > c_max_jobs then
        raise exception using errcode = '22023',
            message = format('more than %s jobs match: narrow the filter (received time, error code) and count again',
                             c_max_jobs);
    end if;
    update document_jobs_internal.bulk_actions b set job_count = v_count where b.id = v_id;
    return jsonb_build_object(
        'bulk_action_id', v_id, 'action', p_action, 'job_count', v_count, 'states', v_states, 'filter', v_filter,
        'cancelled_left_out', v_leaves_cancelled,
        'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;
REVOKE ALL ON FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.prepare_document_jobs_bulk_action(p_action text, p_filter jsonb, p_actor_id uuid, p_actor_email text) TO service_role;

COMMENT ON FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) IS 'Applies the next batch (at most p_batch_size jobs, 1 to 1,000) of a prepared bulk action in one transaction and answers where it stands (bulk_action_progress, and "workers_started"): call it again until "done"; a job is changed at most once, however often it is called. Only the operator who prepared it may apply it, within 15 minutes of counting, and only while Auth has them as a live admin (checked on every call: require_actor); the first call records it in the audit, once, with its count and the reason (required). A retry starts workers for what it re-queued through invoke_document_jobs, whose cap on invocations holds.';
CREATE FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text DEFAULT NULL::text, p_batch_size integer DEFAULT 500) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_action document_jobs_internal.bulk_actions;
    v_batch uuid[];
    v_changed uuid[] := '{}'::uuid[];
    v_workers int := 0;
begin
    perform document_jobs_internal.require(p_bulk_action_id is not null, 'p_bulk_action_id must not be null');
    perform document_jobs_internal.require(p_batch_size between 1 and 1000, 'p_batch_size must be between 1 and 1000');
    -- One caller at a time per action: a second waits, then finds the batch done.
    select * into v_action from document_jobs_internal.bulk_actions b where b.id = p_bulk_action_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('no bulk action %s', p_bulk_action_id),
            hint = 'Count again: prepare_document_jobs_bulk_action.';
    end if;
    if v_action.actor_id is distinct from p_actor_id then
        raise exception using errcode = '42501',
            message = 'only the operator who counted these jobs may apply the action';
    end if;
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, v_action.started_at is null);
    if v_action.started_at is null then
        if v_action.prepared_at < now() - interval '15 minutes' then
            raise exception using errcode = '22023',
                message = 'these jobs were counted more than 15 minutes ago: count them again';
        end if;
        v_action.reason := btrim(p_reason);
        update document_jobs_internal.bulk_actions b
           set started_at = now(), reason = v_action.reason, finished_at = case when b.job_count = 0 then now() end
         where b.id = p_bulk_action_id;
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason, bulk_action_id)
        values (v_action.actor_id, v_action.actor_email, 'bulk_' || v_action.action, v_action.filter, v_action.job_count,
                v_action.reason, p_bulk_action_id);
    end if;

    v_batch := array(
        select b.job_id from document_jobs_internal.bulk_action_jobs b
         where b.bulk_action_id = p_bulk_action_id and b.outcome is null
         order by b.job_id limit p_batch_size);
    if cardinality(v_batch) > 0 then
        if v_action.action = 'retry' then
            v_changed := document_jobs_internal.bulk_retry_batch(p_bulk_action_id, v_batch);
            if cardinality(v_changed) > 0 then
                v_workers := public.invoke_document_jobs();
            end if;
        else
            v_changed := document_jobs_internal.bulk_cancel_batch(p_bulk_action_id, v_batch, v_action.reason);
        end if;
        update document_jobs_internal.bulk_actions b
           set changed = b.changed + cardinality(v_changed),
               skipped = b.skipped + cardinality(v_batch) - cardinality(v_changed),
               finished_at = case when not exists (
                                      select 1 from document_jobs_internal.bulk_action_jobs x
                                       where x.bulk_action_id = b.id and x.outcome is null) then now() end
         where b.id = p_bulk_action_id;
    end if;
    return document_jobs_internal.bulk_action_progress(p_bulk_action_id)
           || jsonb_build_object('workers_started', v_workers, 'batch_size', p_batch_size);
end;
$$;
REVOKE ALL ON FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.apply_document_jobs_bulk_action(p_bulk_action_id uuid, p_actor_id uuid, p_reason text, p_batch_size integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_find_by_id(p_id text) IS 'The jobs an id names, for the admin CLI: p_id is a job id, an e-mail row id or the provider''s e-mail id, whole or any prefix of at least 6 hex characters (case and hyphens do not matter; else 22023). Answers {"jobs": [{"id", "status", "kind", "created_at", "matched": ["job_id" | "email_id" | "provider_email_id", ...]}], newest first, at most 20, "more", "prefix"}: one job is the one meant, several must be told apart by the operator.';
CREATE FUNCTION public.document_jobs_find_by_id(p_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    c_limit constant int := 20;
    v_prefix text := document_jobs_internal.id_prefix(p_id);
    v_found jsonb;
begin
    perform document_jobs_internal.require(v_prefix is not null,
        'an id is at least 6 hex characters of a job id, an e-mail id or the provider''s e-mail id');
    select coalesce(jsonb_agg(jsonb_build_object('id', j.id, 'status', j.status, 'kind', j.kind,
                                                 'created_at', j.created_at, 'matched', m.matched)
                              order by j.created_at desc, j.id desc), '[]')
      into v_found
      from (select p.job_id, jsonb_agg(distinct p.matched) matched
              from document_jobs_internal.jobs_with_id_prefix(v_prefix, c_limit + 1) p group by p.job_id) m
      join public.document_jobs j on j.id = m.job_id;
    return jsonb_build_object('jobs', (select coalesce(jsonb_agg(x), '[]')
                                         from (select x from jsonb_array_elements(v_found) x limit c_limit) s),
                              'more', jsonb_array_length(v_found) > c_limit, 'prefix', v_prefix);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_find_by_id(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_find_by_id(p_id text) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_me(p_user_id uuid, p_session_id uuid) IS 'The admin screen''s /me for the signed-in operator (user id and session id from the verified token): their e-mail and role as stored now, and the job kinds; refused as operator_role refuses.';
CREATE FUNCTION public.document_jobs_operator_me(p_user_id uuid, p_session_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_role text := document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
begin
    return jsonb_build_object(
        'user_id', p_user_id,
        'email', (select u.email from auth.users u where u.id = p_user_id),
        'role', v_role,
        'kinds', coalesce((select jsonb_agg(k.kind order by k.kind) from public.document_job_kinds k), '[]'));
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_me(p_user_id uuid, p_session_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_me(p_user_id uuid, p_session_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_overview(p_user_id uuid, p_session_id uuid) IS 'document_jobs_admin_overview for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_overview(p_user_id uuid, p_session_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_overview();
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_overview(p_user_id uuid, p_session_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_overview(p_user_id uuid, p_session_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_jobs(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) IS 'document_jobs_admin_jobs for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_jobs(p_user_id uuid, p_session_id uuid, p_filter jsonb DEFAULT '{}'::jsonb, p_after_created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_jobs(p_filter, p_after_created_at, p_after_id, p_limit);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_jobs(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_jobs(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_job(p_user_id uuid, p_session_id uuid, p_job_id uuid) IS 'document_jobs_admin_job for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_job(p_user_id uuid, p_session_id uuid, p_job_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_job(p_job_id);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_job(p_user_id uuid, p_session_id uuid, p_job_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_job(p_user_id uuid, p_session_id uuid, p_job_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_audit(p_user_id uuid, p_session_id uuid, p_before bigint, p_limit integer) IS 'document_jobs_admin_audit for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_audit(p_user_id uuid, p_session_id uuid, p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_audit(p_before, p_limit);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_audit(p_user_id uuid, p_session_id uuid, p_before bigint, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_audit(p_user_id uuid, p_session_id uuid, p_before bigint, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_attachment(p_user_id uuid, p_session_id uuid, p_attachment_id uuid) IS 'Where a stored attachment is (bucket, path, name, type) for a signed download URL, for a signed-in operator; refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_attachment(p_user_id uuid, p_session_id uuid, p_attachment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    perform document_jobs_internal.require(p_attachment_id is not null, 'p_attachment_id must not be null');
    return (select jsonb_build_object('bucket', a.bucket, 'storage_path', a.storage_path, 'filename', a.filename,
                                      'content_type', a.content_type)
              from public.fax_received_email_attachments a where a.id = p_attachment_id);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_attachment(p_user_id uuid, p_session_id uuid, p_attachment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_attachment(p_user_id uuid, p_session_id uuid, p_attachment_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_faxes(p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) IS 'A page of the inbox: one row per received e-mail (a fax), newest first by its received time, for as long as the e-mail row is kept, whatever became of its jobs; filters by received time, sender text, number digits, line and search term (faxes_filter; the newest 2,000 e-mails of the range walked first, a number''s too, then the filter''s index when the walk found less than a page); keyset pages after p_after_received_at/p_after_id; "partial" when neither filled a page; "lines" the office''s lines (their own numbers are never shown as a sender''s); and by the index fields (transaction date and amount ranges, counterparty, document type: faxes_index_filter), read from fax_index with an exact count up to 10,000.';
CREATE FUNCTION public.document_jobs_admin_faxes(p_filter jsonb DEFAULT '{}'::jsonb, p_after_received_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $_$
declare
    c_walk constant int := 2000;
    c_candidates constant int := 5000;
    c_count_cap constant int := 10000;
    c_index_keys constant text[] := array['date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty',
                                          'doc_type'];
    v_index jsonb := document_jobs_internal.faxes_index_filter(p_filter);
    v_filter jsonb := document_jobs_internal.faxes_filter(coalesce(p_filter, '{}') - c_index_keys) || v_index;
    v_match text := document_jobs_internal.faxes_match_sql(v_filter);
    v_time text := document_jobs_internal.faxes_time_sql(v_filter);
    v_keyset text := 'true';
    v_candidates uuid[];
    v_ids uuid[];
    v_count int;
    v_partial boolean := false;
    v_oldest_at timestamptz;
    v_oldest_id uuid;
    v_next jsonb;
    v_number boolean := v_filter ? 'number' and length(v_filter ->> 'number') >= 3;
    v_from_candidates boolean := false;
begin
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    perform document_jobs_internal.require((p_after_received_at is null) = (p_after_id is null),
        'p_after_received_at and p_after_id go together');
    if p_after_id is not null then
        v_keyset := format('(coalesce(e.received_at, e.created_at), e.id) < (%L::timestamptz, %L::uuid)',
                           p_after_received_at, p_after_id);
    end if;

    if v_index <> '{}'::jsonb then
        -- The law's search: fax_index's own rows, newest first by the received time it holds; the
        -- e-mail joined only for the inbox's other conditions.
        v_time := replace(v_time, 'coalesce(e.received_at, e.created_at)', 'i.received');
        v_keyset := replace(replace(v_keyset, 'coalesce(e.received_at, e.created_at)', 'i.received'), 'e.id',
                            'i.fax_received_email_id');
        v_match := format('%s and %s', document_jobs_internal.faxes_index_sql(v_index),
            case when v_match = 'true' then 'true'
                 else format('exists (select 1 from public.fax_received_emails e where e.id = i.fax_received_email_id'
                             ' and %s)', v_match) end);
        execute format('select array(select i.fax_received_email_id from public.fax_index i where %s and %s and %s'
                       ' order by i.received desc, i.fax_received_email_id desc limit %s)',
                       v_match, v_time, v_keyset, p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from public.fax_index i where %s and %s limit %s) c',
                           v_match, v_time, c_count_cap + 1)
               into v_count;
        end if;
    elsif v_match = 'true' then
        -- No condition but the time: the page is a range of the index.
        execute format('select array(select e.id from public.fax_received_emails e where %s and %s'
                       ' order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %s)',
                       v_time, v_keyset, p_limit + 1)
           into v_ids;
        if p_after_id is null then
            execute format('select count(*) from (select 1 from public.fax_received_emails e where %s limit %s) c',
                           v_time, c_count_cap + 1)
               into v_count;
        end if;
    else
        -- A number of three digits or more: its candidates first, now that they are exact and cheap
        -- (fax_number_runs: up to 5,001 e-mails read, no regular expression). 5,000 or fewer: the
        -- page and its count are theirs. More: the walk, where so frequent a number fills its page.
        if v_number then
            -- How many first, from the index alone (a count reads no row of a page all visible).
            execute format('select count(*) from (select 1 from public.fax_received_emails e where %s limit %s) c',
                           document_jobs_internal.number_runs_sql(v_filter ->> 'number'), c_candidates + 1)
               into v_count;
            if v_count <= c_candidates then
                v_candidates := document_jobs_internal.faxes_candidates(v_filter, c_candidates + 1);
                v_from_candidates := cardinality(v_candidates) <= c_candidates;
            end if;
            v_count := null;
        end if;
        if not v_from_candidates then
            -- The walk: the newest e-mails of the range, in the index's order, checked one by one;
            -- a common sender or term fills a page there sooner than its index lists it.
            execute format(
                'select array(select e.id from (select e.* from public.fax_received_emails e where %1$s and %2$s'
                '   order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %3$s) e where %4$s'
                ' order by coalesce(e.received_at, e.created_at) desc, e.id desc limit %5$s)',
                v_time, v_keyset, c_walk, v_match, p_limit + 1)
               into v_ids;
            if cardinality(v_ids) <= p_limit then
                execute format('select coalesce(e.received_at, e.created_at), e.id from public.fax_received_emails e'
                               ' where %s and %s order by coalesce(e.received_at, e.created_at) desc, e.id desc'
                               ' offset %s limit 1', v_time, v_keyset, c_walk - 1)
                   into v_oldest_at, v_oldest_id;
                v_partial := v_oldest_id is not null;
            end if;
            if v_partial and not v_number then
                -- Less than a page there: the filter's index, when it names 5,000 e-mails or fewer;
                -- otherwise (a term of fewer than three characters, or more than 5,000 e-mails;
                -- a number's were counted above) the walk's page stands, partial.
                v_candidates := document_jobs_internal.faxes_candidates(v_filter, c_candidates + 1);
                v_from_candidates := v_candidates is not null and cardinality(v_candidates) <= c_candidates;
            end if;
        end if;
        if v_from_candidates then
            v_partial := false;
            -- A number's candidates are its matches already (fax_number_runs, exact): its
            -- condition is not checked again, each check being fax_number_digits' regular
            -- expressions. The first page and its count are one read of the candidates.
            if v_number then
                v_match := document_jobs_internal.faxes_match_sql(v_filter - 'number');
            end if;
            execute format('select array(select e.id from public.fax_received_emails e where e.id = any ($1)'
                           ' and %s and %s and %s order by coalesce(e.received_at, e.created_at) desc, e.id desc'
                           ' %s)', v_time, v_match, v_keyset,
                           case when p_after_id is null then '' else format('limit %s', p_limit + 1) end)
               into v_ids using v_candidates;
            if p_after_id is null then
                v_count := cardinality(v_ids);
                v_ids := v_ids[1:p_limit + 1];
            end if;
        end if;
        if p_after_id is null and v_count is null and not v_partial and cardinality(v_ids) <= p_limit then
            v_count := cardinality(v_ids);
        end if;
    end if;

    if v_partial then
        v_next := jsonb_build_object('received_at', v_oldest_at, 'id', v_oldest_id);
    elsif cardinality(v_ids) > p_limit then
        v_ids := v_ids[1:p_limit];
        select jsonb_build_object('received_at', coalesce(e.received_at, e.created_at), 'id', e.id) into v_next
          from public.fax_received_emails e where e.id = v_ids[p_limit];
    end if;

    return jsonb_build_object(
        'faxes', coalesce((
            select jsonb_agg(document_jobs_internal.fax_summary(e)
                             order by coalesce(e.received_at, e.created_at) desc, e.id desc)
              from public.fax_received_emails e where e.id = any (v_ids)), '[]'),
        'next', v_next,
        'partial', v_partial,
        'searched_until', case when v_partial then v_oldest_at end,
        'count', case when v_count <= c_count_cap then v_count end,
        'count_capped', coalesce(v_count > c_count_cap, false),
        'filter', v_filter,
        'lines', coalesce((select jsonb_agg(jsonb_build_object('address', l.address, 'name', l.name,
                                                               'number', l.number) order by l.name, l.address)
                             from public.fax_lines l), '[]'));
end;
$_$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_faxes(p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_faxes(p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_fax(p_fax_id uuid) IS 'One fax for its page: its summary as the inbox lists it (with its index fields), its To, Cc, ids and how it was found (found_by, reconciled_at), its attachments in order with their views, the rotation it is read at, its jobs as far as they are kept, its index fields (index, index_version) and their history (index_history, the latest 500, index_history_total) and the document types offered; null for no such fax.';
CREATE FUNCTION public.document_jobs_admin_fax(p_fax_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
declare
    v_email public.fax_received_emails;
begin
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    select * into v_email from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        return null;
    end if;
    return jsonb_build_object(
        'fax', document_jobs_internal.fax_summary(v_email) || jsonb_build_object(
            'to_all', to_jsonb(v_email.to_addresses), 'cc', to_jsonb(v_email.cc_addresses),
            'provider_email_id', v_email.provider_email_id, 'message_id', v_email.message_id,
            'recorded_at', v_email.created_at, 'provider_received_at', v_email.received_at,
            'rotation', coalesce((select r.rotation from public.fax_view_rotations r
                                   where r.fax_received_email_id = v_email.id), 0)),
        'attachments', coalesce((
            select jsonb_agg(jsonb_build_object(
                       'id', a.id, 'filename', a.filename, 'content_type', a.content_type,
                       'size_bytes', a.size_bytes, 'sha256', a.sha256, 'bucket', a.bucket,
                       'storage_path', a.storage_path,
                       'page_count', v.page_count, 'view_path', v.view_path, 'thumbnail_path', v.thumbnail_path,
                       'view_error_code', v.error_code)
                   order by a.created_at, a.id)
              from public.fax_received_email_attachments a
              left join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
             where a.fax_received_email_id = v_email.id), '[]'),
        'jobs', coalesce((
            select jsonb_agg(jsonb_build_object('id', j.id, 'kind', j.kind, 'status', j.status,
                                                'last_error_code', j.last_error_code, 'created_at', j.created_at,
                                                'finished_at', j.finished_at)
                   order by j.created_at, j.id)
              from public.document_jobs j where j.fax_received_email_id = v_email.id), '[]'),
        'own_numbers', coalesce((select jsonb_agg(l.number order by l.number) from public.fax_lines l
                                  where l.number is not null), '[]'))
        || document_jobs_internal.fax_index_read(v_email.id);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_fax(p_fax_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_fax(p_fax_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_faxes(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) IS 'document_jobs_admin_faxes for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_faxes(p_user_id uuid, p_session_id uuid, p_filter jsonb DEFAULT '{}'::jsonb, p_after_received_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_faxes(p_filter, p_after_received_at, p_after_id, p_limit);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_faxes(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_faxes(p_user_id uuid, p_session_id uuid, p_filter jsonb, p_after_received_at timestamp with time zone, p_after_id uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid) IS 'document_jobs_admin_fax for a signed-in operator, with the fax''s retention (document_jobs_internal.fax_retention: its keep-until date), refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return public.document_jobs_admin_fax(p_fax_id)
        || jsonb_build_object('retention', (select document_jobs_internal.fax_retention(e)
                                              from public.fax_received_emails e where e.id = p_fax_id));
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_fax(p_user_id uuid, p_session_id uuid, p_fax_id uuid) TO service_role;

COMMENT ON FUNCTION public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation integer) IS 'Remembers the rotation a fax is shown at (0, 90, 180 or 270 degrees clockwise) and audits it (action rotate, the rotation before and after); the actor must be an admin or a clerk of Supabase Auth now (acting_operator). {"changed", "rotation"}; P0002 for no such fax.';
CREATE FUNCTION public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_before int;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    perform document_jobs_internal.require(p_rotation in (0, 90, 180, 270), 'p_rotation must be 0, 90, 180 or 270');
    perform 1 from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    select r.rotation into v_before from public.fax_view_rotations r where r.fax_received_email_id = p_fax_id
       for update;
    if coalesce(v_before, 0) = p_rotation then
        return jsonb_build_object('changed', false, 'rotation', p_rotation);
    end if;
    insert into public.fax_view_rotations (fax_received_email_id, rotation, set_by)
    values (p_fax_id, p_rotation, p_actor_id)
    on conflict (fax_received_email_id) do update set rotation = excluded.rotation, set_by = excluded.set_by,
                                                      set_at = now();
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'rotate',
            jsonb_build_object('fax_received_email_id', p_fax_id, 'from', coalesce(v_before, 0), 'to', p_rotation), 0);
    return jsonb_build_object('changed', true, 'rotation', p_rotation);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation integer) TO service_role;

COMMENT ON FUNCTION public.set_fax_index(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_values jsonb, p_reason text, p_version integer) IS 'Sets a fax''s index fields ({"transaction_date", "amount", "counterparty", "doc_type"}: the four as they are to be, a missing or null one empty) by an admin or a clerk of Supabase Auth (checked in this call: acting_operator; a viewer is refused, 42501 role_not_allowed). A change of a value entered before needs p_reason (22023, hint reason_required); every change is appended to fax_index_history (before, after, who, when, why) and audited (action index). p_version: the version the operator saw (0 for none); a write made since wins ("index_changed"). {"changed", "reason"?, "index", "version"}; 22023 for a bad value, P0002 for no such fax.';
CREATE FUNCTION public.set_fax_index(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_values jsonb, p_reason text DEFAULT NULL::text, p_version integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_after jsonb;
    v_before jsonb;
    v_row public.fax_index;
    v_received timestamptz;
    v_reason text := nullif(btrim(p_reason), '');
    v_corrected text[];
    v_version int;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    perform document_jobs_internal.require(
        v_reason is null or (length(v_reason) <= 500 and v_reason !~ '[\x01-\x09\x0b-\x1f\x7f]'),
        'p_reason must be at most 500 characters, with no control characters but line breaks');
    v_after := document_jobs_internal.fax_index_values(p_values);
    select coalesce(e.received_at, e.created_at) into v_received
      from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    -- One writer of a fax's index at a time: the first entry has no row to lock.
    perform pg_advisory_xact_lock(hashtextextended('fax_index:' || p_fax_id::text, 0));
    select * into v_row from public.fax_index i where i.fax_received_email_id = p_fax_id;
    v_before := document_jobs_internal.fax_index_json(v_row);
    v_version := coalesce(v_row.version, 0);
    if p_version is not null and p_version <> v_version then
        return jsonb_build_object('changed', false, 'reason', 'index_changed', 'index', v_before,
                                  'version', v_version);
    end if;
    if v_after = coalesce(v_before, '{"transaction_date": null, "amount": null, "counterparty": null, "doc_type": null}') then
        return jsonb_build_object('changed', false, 'reason', 'unchanged', 'index', v_before, 'version', v_version);
    end if;
    v_corrected := array(select b.key from jsonb_each(coalesce(v_before, '{}')) b
                          where b.value <> 'null'::jsonb and b.value is distinct from v_after -> b.key
                          order by b.key);
    if cardinality(v_corrected) > 0 and v_reason is null then
        raise exception using errcode = '22023', hint = 'reason_required',
            message = format('a correction of %s needs a reason: the history keeps why a value entered before was changed',
                             array_to_string(v_corrected, ', '));
    end if;
    insert into public.fax_index as i (fax_received_email_id, received, transaction_date, amount, counterparty,
                                       doc_type, version, updated_by)
    values (p_fax_id, v_received, (v_after ->> 'transaction_date')::date, (v_after ->> 'amount')::bigint,
            v_after ->> 'counterparty', v_after ->> 'doc_type', 1, p_actor_id)
    on conflict (fax_received_email_id) do update
       set transaction_date = excluded.transaction_date, amount = excluded.amount,
           counterparty = excluded.counterparty, doc_type = excluded.doc_type, version = i.version + 1,
           updated_by = excluded.updated_by, updated_at = now()
    returning * into v_row;
    insert into public.fax_index_history (fax_received_email_id, actor_id, actor_email, before, after, reason, version)
    values (p_fax_id, p_actor_id, p_actor_email, v_before, v_after, v_reason, v_row.version);
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason)
    values (p_actor_id, p_actor_email, 'index',
            jsonb_build_object('fax_received_email_id', p_fax_id, 'corrected', to_jsonb(v_corrected)), 0, v_reason);
    return jsonb_build_object('changed', true, 'index', v_after, 'version', v_row.version);
end;
$$;
REVOKE ALL ON FUNCTION public.set_fax_index(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_values jsonb, p_reason text, p_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.set_fax_index(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_values jsonb, p_reason text, p_version integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_counterparties(p_number text) IS 'The counterparties (取引先) entered for the latest 200 faxes from a number (ASCII digits), at most 5, the latest first: what the fax''s page suggests.';
CREATE FUNCTION public.document_jobs_admin_counterparties(p_number text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $_$
begin
    perform document_jobs_internal.require(p_number ~ '^[0-9]{3,20}$', 'p_number must be 3 to 20 ASCII digits');
    return coalesce((
        select jsonb_agg(c.counterparty order by c.latest desc)
          from (select i.counterparty, max(i.received) latest
                  from (select e.id from public.fax_received_emails e
                         where document_jobs_internal.fax_number_digits(e.subject, e.from_address)
                               like '%' || p_number || '%'
                         order by coalesce(e.received_at, e.created_at) desc limit 200) e
                  join public.fax_index i on i.fax_received_email_id = e.id
                 where i.counterparty is not null
                 group by i.counterparty
                 order by max(i.received) desc limit 5) c), '[]');
end;
$_$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_counterparties(p_number text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_counterparties(p_number text) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_counterparties(p_user_id uuid, p_session_id uuid, p_number text) IS 'document_jobs_admin_counterparties for a signed-in operator, refused (operator_role) once their session, user or role no longer allows it.';
CREATE FUNCTION public.document_jobs_operator_counterparties(p_user_id uuid, p_session_id uuid, p_number text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'clerk', 'viewer']);
    return public.document_jobs_admin_counterparties(p_number);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_counterparties(p_user_id uuid, p_session_id uuid, p_number text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_counterparties(p_user_id uuid, p_session_id uuid, p_number text) TO service_role;

COMMENT ON FUNCTION public.document_jobs_admin_fax_handling(p_fax_received_email_id uuid) IS 'A fax''s handling and its last 50 marks (fax_handling_read), for the CLI (the server key); null when there is no such e-mail.';
CREATE FUNCTION public.document_jobs_admin_fax_handling(p_fax_received_email_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select document_jobs_internal.fax_handling_read(p_fax_received_email_id, 50)
$$;
REVOKE ALL ON FUNCTION public.document_jobs_admin_fax_handling(p_fax_received_email_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_admin_fax_handling(p_fax_received_email_id uuid) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_fax_handling(p_user_id uuid, p_session_id uuid, p_fax_received_email_id uuid) IS 'A fax''s handling and its last 50 marks for a signed-in operator (every role reads it), refused (operator_role) once their session, user or role no longer allows it; null when there is no such e-mail.';
CREATE FUNCTION public.document_jobs_operator_fax_handling(p_user_id uuid, p_session_id uuid, p_fax_received_email_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin', 'viewer']);
    return document_jobs_internal.fax_handling_read(p_fax_received_email_id, 50);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_fax_handling(p_user_id uuid, p_session_id uuid, p_fax_received_email_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_fax_handling(p_user_id uuid, p_session_id uuid, p_fax_received_email_id uuid) TO service_role;

COMMENT ON FUNCTION public.mark_fax_handling(p_fax_received_email_id uuid, p_actor_id uuid, p_state text, p_note text, p_from_state text) IS 'One fax''s handling marked by an admin or a clerk of Supabase Auth (checked in this call: acting_operator; a viewer is refused, 42501 role_not_allowed): p_state new, in_progress (the actor takes it) or done (the actor closes it), with p_note (at most 500 characters; null keeps the note, empty clears it). p_from_state, the state the operator saw: when the fax has moved on since, nothing changes ("handling_changed"). Audited (action handle, the note as its reason) and kept in fax_handling_history (from, to, who, when); a mark that changes nothing is neither. Answers {"changed", "reason"?, "handling"}; 22023 for a bad argument, P0002 for no such fax. Opening or reading a fax marks nothing.';
CREATE FUNCTION public.mark_fax_handling(p_fax_received_email_id uuid, p_actor_id uuid, p_state text, p_note text DEFAULT NULL::text, p_from_state text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email text;
    v_before public.fax_handling;
    v_after public.fax_handling;
    v_audit_id bigint;
begin
    perform document_jobs_internal.require(p_fax_received_email_id is not null,
                                           'p_fax_received_email_id must not be null');
    perform document_jobs_internal.require(p_state = any (document_jobs_internal.handling_states()),
                                           'p_state must be new, in_progress or done');
    perform document_jobs_internal.require(
        p_from_state is null or p_from_state = any (document_jobs_internal.handling_states()),
        'p_from_state must be new, in_progress or done');
    perform document_jobs_internal.require_note(p_note);
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    select left(u.email::text, 320) into v_email from auth.users u where u.id = p_actor_id;

    perform from public.fax_received_emails e where e.id = p_fax_received_email_id for no key update;
    if not found then
        raise exception using errcode = 'P0002', message = format('there is no fax %s', p_fax_received_email_id);
    end if;
    select * into v_before from public.fax_handling h where h.fax_received_email_id = p_fax_received_email_id;
    if p_from_state is not null and p_from_state <> coalesce(v_before.state, 'new') then
        return jsonb_build_object('changed', false, 'reason', 'handling_changed',
                                  'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
    end if;
    v_after := document_jobs_internal.handling_after(v_before, p_fax_received_email_id, p_state, p_note, p_actor_id,
                                                     v_email);
    if not document_jobs_internal.handling_changes(v_before, v_after) then
        return jsonb_build_object('changed', false, 'reason', 'unchanged',
                                  'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
    end if;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_count, reason)
    values (p_actor_id, v_email, 'handle', 1, nullif(btrim(p_note), ''))
    returning id into v_audit_id;
    perform document_jobs_internal.write_handling(v_before, v_after, p_note, v_audit_id);
    return jsonb_build_object('changed', true,
                              'handling', document_jobs_internal.fax_handling_summary(p_fax_received_email_id));
end;
$$;
REVOKE ALL ON FUNCTION public.mark_fax_handling(p_fax_received_email_id uuid, p_actor_id uuid, p_state text, p_note text, p_from_state text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.mark_fax_handling(p_fax_received_email_id uuid, p_actor_id uuid, p_state text, p_note text, p_from_state text) TO service_role;

COMMENT ON FUNCTION public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid) IS 'A bulk mark done''s count: the faxes the inbox''s filter matches (p_scope faxes; its index keys too, as the list reads them), or those whose jobs the job list''s filter matches (jobs; each fax once), that are not done yet, at most 50,000 (22023 beyond: narrow the filter), kept as a snapshot for apply_fax_handling_bulk within 15 minutes. For an admin or a clerk of Supabase Auth (acting_operator, in this call). Answers {"bulk_action_id", "scope", "fax_count", "filter", "prepared_at", "expires_at"}.';
CREATE FUNCTION public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    c_max_faxes constant int := 50000;
    c_index_keys constant text[] := array['date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty',
                                          'doc_type'];
    v_index jsonb := '{}'::jsonb;
    c_not_done constant text := 'not exists (select 1 from public.fax_handling h'
                                ' where h.fax_received_email_id = %s and h.state = ''done'')';
    v_filter jsonb;
    v_email text;
    v_id uuid;
    v_count int;
begin
    perform document_jobs_internal.require(p_scope in ('faxes', 'jobs'), 'p_scope must be faxes or jobs');
    if p_scope = 'faxes' then
        v_index := document_jobs_internal.faxes_index_filter(p_filter);
        v_filter := document_jobs_internal.faxes_filter(coalesce(p_filter, '{}') - c_index_keys) || v_index;
    else
        v_filter := document_jobs_internal.job_filter(p_filter);
    end if;
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    select left(u.email::text, 320) into v_email from auth.users u where u.id = p_actor_id;

    -- Snapshots never applied are of no use after a day.
    delete from document_jobs_internal.handling_bulk_actions b
     where b.started_at is null and b.prepared_at < now() - interval '1 day';

    insert into document_jobs_internal.handling_bulk_actions (scope, filter, actor_id, actor_email)
    values (p_scope, v_filter, p_actor_id, v_email)
    returning id into v_id;
    if p_scope = 'faxes' then
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select %L::uuid, e.id from public.fax_received_emails e where %s and %s and %s and %s limit %s',
            v_id, document_jobs_internal.faxes_time_sql(v_filter), document_jobs_internal.faxes_match_sql(v_filter),
            case when v_index = '{}'::jsonb then 'true'
                 else format('exists (select 1 from public.fax_index i where i.fax_received_email_id = e.id and %s)',
                             document_jobs_internal.faxes_index_sql(v_index)) end,
            format(c_not_done, 'e.id'), c_max_faxes + 1);
    else
        execute format(
            'insert into document_jobs_internal.handling_bulk_action_faxes (bulk_action_id, fax_received_email_id)
             select distinct %L::uuid, j.fax_received_email_id from public.document_jobs j
              where %s and j.fax_received_email_id is not null and %s
              limit %s',
            v_id, document_jobs_internal.job_filter_sql(v_filter), format(c_not_done, 'j.fax_received_email_id'),
            c_max_faxes + 1);
    end if;
    get diagnostics v_count = row_count;
    if v_count > c_max_faxes then
        raise exception using errcode = '22023',
            message = format('more than %s faxes match: narrow the filter (received time, error code) and count again',
                             c_max_faxes);
    end if;
    update document_jobs_internal.handling_bulk_actions b set fax_count = v_count where b.id = v_id;
    return jsonb_build_object('bulk_action_id', v_id, 'scope', p_scope, 'fax_count', v_count, 'filter', v_filter,
                              'prepared_at', now(), 'expires_at', now() + interval '15 minutes');
end;
$$;
REVOKE ALL ON FUNCTION public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.prepare_fax_handling_bulk(p_scope text, p_filter jsonb, p_actor_id uuid) TO service_role;

COMMENT ON FUNCTION public.apply_fax_handling_bulk(p_bulk_action_id uuid, p_actor_id uuid, p_note text, p_batch_size integer) IS 'Marks done the next batch (at most p_batch_size faxes, 1 to 1,000) of a bulk mark done that prepare_fax_handling_bulk counted, in one transaction, with the note of its first call (required; kept as the faxes'' note), and answers where it stands (handling_bulk_progress): call it again until "done". Only the operator who counted may apply it, within 15 minutes of counting, while Auth has them as an admin or a clerk (acting_operator, every call). The first call writes the audit row (bulk_handle: the filter, the fax count, the note), once; every mark is kept in fax_handling_history under it. A fax marked done since the count is skipped (already_done).';
CREATE FUNCTION public.apply_fax_handling_bulk(p_bulk_action_id uuid, p_actor_id uuid, p_note text DEFAULT NULL::text, p_batch_size integer DEFAULT 500) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_action document_jobs_internal.handling_bulk_actions;
    v_audit_id bigint;
    v_batch uuid[];
    v_fax uuid;
    v_before public.fax_handling;
    v_after public.fax_handling;
    v_changed int := 0;
begin
    perform document_jobs_internal.require(p_bulk_action_id is not null, 'p_bulk_action_id must not be null');
    perform document_jobs_internal.require(p_batch_size between 1 and 1000, 'p_batch_size must be between 1 and 1000');
    perform document_jobs_internal.require_note(p_note);
    -- One caller at a time per action: a second waits, then finds the batch done.
    select * into v_action from document_jobs_internal.handling_bulk_actions b where b.id = p_bulk_action_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('no bulk mark %s', p_bulk_action_id),
            hint = 'Count again: prepare_fax_handling_bulk.';
    end if;
    if v_action.actor_id is distinct from p_actor_id then
        raise exception using errcode = '42501',
            message = 'only the operator who counted these faxes may mark them';
    end if;
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    if v_action.started_at is null then
        perform document_jobs_internal.require(nullif(btrim(p_note), '') is not null, 'p_note must not be empty');
        if v_action.prepared_at < now() - interval '15 minutes' then
            raise exception using errcode = '22023',
                message = 'these faxes were counted more than 15 minutes ago: count them again';
        end if;
        v_action.note := btrim(p_note);
        v_action.started_at := now();
        update document_jobs_internal.handling_bulk_actions b
           set started_at = v_action.started_at, note = v_action.note,
               finished_at = case when b.fax_count = 0 then now() end
         where b.id = p_bulk_action_id;
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count, reason, bulk_action_id)
        values (v_action.actor_id, v_action.actor_email, 'bulk_handle', v_action.filter, v_action.fax_count,
                v_action.note, p_bulk_action_id);
    end if;
    select a.id into v_audit_id from public.document_jobs_audit a where a.bulk_action_id = p_bulk_action_id;

    v_batch := array(
        select f.fax_received_email_id from document_jobs_internal.handling_bulk_action_faxes f
         where f.bulk_action_id = p_bulk_action_id and f.outcome is null
         order by f.fax_received_email_id limit p_batch_size);
    if cardinality(v_batch) > 0 then
        -- The faxes' locks, in one order: a mark of one of them at the same time waits, or is waited for.
        perform from public.fax_received_emails e where e.id = any (v_batch) order by e.id for no key update;
        foreach v_fax in array v_batch loop
            select * into v_before from public.fax_handling h where h.fax_received_email_id = v_fax;
            if coalesce(v_before.state, 'new') = 'done' then
                update document_jobs_internal.handling_bulk_action_faxes f
                   set outcome = 'skipped', reason = 'already_done', applied_at = now()
                 where f.bulk_action_id = p_bulk_action_id and f.fax_received_email_id = v_fax;
            else
                v_after := document_jobs_internal.handling_after(v_before, v_fax, 'done', v_action.note,
                                                                 v_action.actor_id, v_action.actor_email);
                perform document_jobs_internal.write_handling(v_before, v_after, v_action.note, v_audit_id);
                update document_jobs_internal.handling_bulk_action_faxes f
                   set outcome = 'changed', applied_at = now()
                 where f.bulk_action_id = p_bulk_action_id and f.fax_received_email_id = v_fax;
                v_changed := v_changed + 1;
            end if;
        end loop;
        update document_jobs_internal.handling_bulk_actions b
           set changed = b.changed + v_changed,
               skipped = b.skipped + cardinality(v_batch) - v_changed,
               finished_at = case when not exists (
                                      select 1 from document_jobs_internal.handling_bulk_action_faxes x
                                       where x.bulk_action_id = b.id and x.outcome is null) then now() end
         where b.id = p_bulk_action_id;
    end if;
    return document_jobs_internal.handling_bulk_progress(p_bulk_action_id) || jsonb_build_object('batch_size', p_batch_size);
end;
$$;
REVOKE ALL ON FUNCTION public.apply_fax_handling_bulk(p_bulk_action_id uuid, p_actor_id uuid, p_note text, p_batch_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.apply_fax_handling_bulk(p_bulk_action_id uuid, p_actor_id uuid, p_note text, p_batch_size integer) TO service_role;

COMMENT ON FUNCTION public.admin_request_fax_export(p_actor_id uuid, p_actor_email text, p_from date, p_to date) IS 'An admin''s export of the originals filed p_from..p_to (the CLI''s --from/--to): a fax_exports row and its export_faxes job with a kick, audited (action export, {"export_id", "from", "to", "total"}); the actor must be an admin of Supabase Auth now (acting_operator). {"requested": true, "export_id", "job_id", "total"}, or {"requested": false, "reason": "export_running", "export_id"} while another export is queued or running.';
CREATE FUNCTION public.admin_request_fax_export(p_actor_id uuid, p_actor_email text, p_from date, p_to date) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_job_id uuid;
    v_first jsonb;
    v_export public.fax_exports;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin']);
    perform document_jobs_internal.require(p_from is not null and p_to is not null, 'give p_from and p_to');
    perform document_jobs_internal.require(p_from <= p_to, 'p_from must be on or before p_to');
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('export_faxes', null)
    on conflict (kind) where kind = 'export_faxes' and status in ('queued', 'running') do nothing
    returning id into v_job_id;
    if v_job_id is null then
        return jsonb_build_object('requested', false, 'reason', 'export_running',
                                  'export_id', (select e.id from public.fax_exports e
                                                  join public.document_jobs j on j.id = e.job_id
                                                 where j.status in ('queued', 'running') limit 1));
    end if;
    -- The window's end and how many it holds, as the CLI's first call answers them.
    v_first := public.export_documents(p_from, p_to, null, null, null, null, 1);
    insert into public.fax_exports (job_id, requested_by, requested_by_email, date_from, date_to, stored_before, total)
    values (v_job_id, p_actor_id, p_actor_email, p_from, p_to, (v_first ->> 'stored_before')::timestamptz,
            (v_first ->> 'total')::int)
    returning * into v_export;
    insert into public.document_jobs_audit (actor_id, actor_email, action, job_id, filter, job_count)
    values (p_actor_id, p_actor_email, 'export', v_job_id,
            jsonb_build_object('export_id', v_export.id, 'from', p_from, 'to', p_to, 'total', v_export.total), 1);
    perform document_jobs_internal.post_worker(1);
    return jsonb_build_object('requested', true, 'export_id', v_export.id, 'job_id', v_job_id,
                              'total', v_export.total);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_request_fax_export(p_actor_id uuid, p_actor_email text, p_from date, p_to date) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_request_fax_export(p_actor_id uuid, p_actor_email text, p_from date, p_to date) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_fax_exports(p_user_id uuid, p_session_id uuid, p_limit integer) IS 'The last p_limit exports (fax_export_read), newest first, for a signed-in admin only (operator_role: a clerk or a viewer is refused, 42501 no_role): an export holds every original of its range.';
CREATE FUNCTION public.document_jobs_operator_fax_exports(p_user_id uuid, p_session_id uuid, p_limit integer DEFAULT 10) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin']);
    perform document_jobs_internal.require(p_limit between 1 and 100, 'p_limit must be between 1 and 100');
    return coalesce((select jsonb_agg(document_jobs_internal.fax_export_read(x) order by x.requested_at desc, x.id)
                       from (select * from public.fax_exports e order by e.requested_at desc, e.id limit p_limit) x),
                    '[]');
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_fax_exports(p_user_id uuid, p_session_id uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_fax_exports(p_user_id uuid, p_session_id uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.document_jobs_operator_fax_export(p_user_id uuid, p_session_id uuid, p_export_id uuid) IS 'One export (fax_export_read), for a signed-in admin only: the screen signs its stored objects'' URLs from it. P0002 for no such export.';
CREATE FUNCTION public.document_jobs_operator_fax_export(p_user_id uuid, p_session_id uuid, p_export_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
begin
    perform document_jobs_internal.operator_role(p_user_id, p_session_id, array['admin']);
    select * into v_export from public.fax_exports e where e.id = p_export_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such export';
    end if;
    return document_jobs_internal.fax_export_read(v_export);
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_operator_fax_export(p_user_id uuid, p_session_id uuid, p_export_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_operator_fax_export(p_user_id uuid, p_session_id uuid, p_export_id uuid) TO service_role;


-- =================================================================================================
-- Operations: health, retention, statistics, and the cron jobs that run the flow
-- =================================================================================================

COMMENT ON FUNCTION public.document_jobs_health() IS 'The flow''s health for an operator (the admin CLI''s health): the outages the health check holds open now, with what to check (advice, advice_ja); the worker''s answers of the last hour by status (pg_net keeps them 6 hours); which of the Vault secrets the database reads exist (names only, never a value); and the guards of the record of received faxes, how many there are and each that is not in place now (record_guard_problems). Security definer: only postgres may read Vault and the health check''s tables.';
CREATE FUNCTION public.document_jobs_health() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    return jsonb_build_object(
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'advice', document_jobs_internal.outage_advice(o.cause),
                                                'advice_ja', document_jobs_internal.outage_advice_ja(o.cause))
                             order by o.since)
              from document_jobs_internal.outages o
             where o.active), '[]'::jsonb),
        'worker_answers_last_hour', coalesce((
            select jsonb_agg(jsonb_build_object('status_code', a.status_code, 'count', a.n) order by a.status_code)
              from (select r.status_code, count(*) as n
                      from document_jobs_internal.worker_requests w
                      join net._http_response r on r.id = w.request_id
                     where r.created > now() - interval '1 hour'
                     group by r.status_code) a), '[]'::jsonb),
        'vault_secrets', (
            select jsonb_object_agg(n.name, exists (select 1 from vault.secrets s where s.name = n.name))
              from unnest(array['document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url']) n(name)),
        'record_guards', jsonb_build_object(
            'guards', (select count(*) from document_jobs_internal.record_guards()),
            'problems', document_jobs_internal.record_guard_problems()),
        'checked_at', now());
end;
$$;
REVOKE ALL ON FUNCTION public.document_jobs_health() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_health() TO service_role;

COMMENT ON FUNCTION public.document_jobs_stats() IS 'Queue health in one call (the admin CLI''s stats): jobs by kind and status, the age of the oldest claimable job (the queue''s lag), how many are claimable, in backoff, running and failed in the last hour, the last completion and the retention.';
CREATE FUNCTION public.document_jobs_stats() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'by_kind_and_status', coalesce((
            select jsonb_agg(jsonb_build_object('kind', kind, 'status', status, 'count', n) order by kind, status)
              from (select kind, status, count(*) as n from public.document_jobs group by kind, status) c), '[]'),
        -- Queue lag: how long the oldest claimable job has been claimable.
        'oldest_claimable_age_seconds', (
            select round(extract(epoch from now() - min(c.run_after))::numeric, 3)
              from public.document_jobs_claimable c),
        'claimable', (select count(*) from public.document_jobs_claimable),
        'in_backoff', (
            select count(*) from public.document_jobs j
             where j.status = 'queued' and j.run_after > now() and j.attempts > 0),
        'running', (select count(*) from public.document_jobs j where j.status = 'running'),
        'failed_last_hour', (
            select count(*) from public.document_jobs j
             where j.status = 'failed' and j.finished_at > now() - interval '1 hour'),
        'last_completed_at', (
            select max(j.finished_at) from public.document_jobs j where j.status = 'completed'),
        'retention', (select s.completed_job_retention from public.document_jobs_settings s),
        'measured_at', now()
    )
$$;
REVOKE ALL ON FUNCTION public.document_jobs_stats() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_stats() TO service_role;

COMMENT ON FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) IS 'Sets how long completed jobs are kept (document_jobs_settings.completed_job_retention), held to require_retention''s bounds (an hour to ten years); answers the retention set. The e-mails and their attachments are never purged.';
CREATE FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) RETURNS interval
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require_retention('p_completed_job_retention', p_completed_job_retention);
    update public.document_jobs_settings set completed_job_retention = p_completed_job_retention;
    return p_completed_job_retention;
end;
$$;
REVOKE ALL ON FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.set_document_jobs_retention(p_completed_job_retention interval) TO service_role;

COMMENT ON FUNCTION public.count_purgeable_document_jobs(p_older_than interval) IS 'What purge_document_jobs(p_older_than) would delete now, deleting nothing (the admin CLI''s dry run): the same cutoff, from purge_cutoff.';
CREATE FUNCTION public.count_purgeable_document_jobs(p_older_than interval DEFAULT NULL::interval) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cutoff timestamptz := document_jobs_internal.purge_cutoff(p_older_than);
begin
    return (select count(*) from public.document_jobs j where j.status = 'completed' and j.finished_at < v_cutoff);
end;
$$;
REVOKE ALL ON FUNCTION public.count_purgeable_document_jobs(p_older_than interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.count_purgeable_document_jobs(p_older_than interval) TO service_role;

COMMENT ON FUNCTION public.purge_document_jobs(p_older_than interval) IS 'Retention: deletes the completed jobs that finished before the cutoff (purge_cutoff: the retention setting unless p_older_than is given, held to the same bounds), their attempt history with them; answers how many. The daily cron job document-jobs-purge calls it without an age. Queued, running and failed jobs, and the e-mails and their attachments, stay.';
CREATE FUNCTION public.purge_document_jobs(p_older_than interval DEFAULT NULL::interval) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_cutoff timestamptz := document_jobs_internal.purge_cutoff(p_older_than);
    v_deleted int;
begin
    -- Completed jobs only: queued, running and failed jobs, and the e-mails and attachments, stay.
    delete from public.document_jobs j
     where j.status = 'completed' and j.finished_at < v_cutoff;
    get diagnostics v_deleted = row_count;
    return v_deleted;
end;
$$;
REVOKE ALL ON FUNCTION public.purge_document_jobs(p_older_than interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.purge_document_jobs(p_older_than interval) TO service_role;

COMMENT ON FUNCTION public.enqueue_document_jobs_reconciliation() IS 'The cron job document-jobs-reconcile''s call: enqueues a reconcile_emails job with a kick, unless one is queued or running (then null: at most one at a time).';
CREATE FUNCTION public.enqueue_document_jobs_reconciliation() RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_id uuid;
begin
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('reconcile_emails', null)
    on conflict (kind) where kind = 'reconcile_emails' and status in ('queued', 'running') do nothing
    returning id into v_id;
    if v_id is not null then
        perform document_jobs_internal.post_worker(1);
    end if;
    return v_id;
end;
$$;
REVOKE ALL ON FUNCTION public.enqueue_document_jobs_reconciliation() FROM PUBLIC;
GRANT ALL ON FUNCTION public.enqueue_document_jobs_reconciliation() TO service_role;

COMMENT ON FUNCTION public.set_document_jobs_reconciliation(p_every_minutes integer, p_overlap interval, p_webhooks_missing_after interval, p_max_pages integer, p_retention interval) IS 'Sets reconciliation''s settings (null: unchanged), held to the table''s constraints, and schedules the cron job document-jobs-reconcile every p_every_minutes. p_retention: how long Resend keeps received e-mails on the office''s plan (1 day on Free, 3 on Pro, 7 on Scale as reported). Answers the settings.';
CREATE FUNCTION public.set_document_jobs_reconciliation(p_every_minutes integer DEFAULT NULL::integer, p_overlap interval DEFAULT NULL::interval, p_webhooks_missing_after interval DEFAULT NULL::interval, p_max_pages integer DEFAULT NULL::integer, p_retention interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_state public.document_jobs_reconciliation;
begin
    update public.document_jobs_reconciliation r
       set every_minutes = coalesce(p_every_minutes, r.every_minutes),
           overlap = coalesce(p_overlap, r.overlap),
           webhooks_missing_after = coalesce(p_webhooks_missing_after, r.webhooks_missing_after),
           max_pages = coalesce(p_max_pages, r.max_pages),
           retention = coalesce(p_retention, r.retention)
    returning * into v_state;
    perform cron.schedule('document-jobs-reconcile',
                          document_jobs_internal.reconcile_schedule(v_state.every_minutes),
                          'select public.enqueue_document_jobs_reconciliation()');
    return jsonb_build_object('every_minutes', v_state.every_minutes, 'overlap', v_state.overlap,
                              'webhooks_missing_after', v_state.webhooks_missing_after,
                              'max_pages', v_state.max_pages, 'retention', v_state.retention);
end;
$$;
REVOKE ALL ON FUNCTION public.set_document_jobs_reconciliation(p_every_minutes integer, p_overlap interval, p_webhooks_missing_after interval, p_max_pages integer, p_retention interval) FROM PUBLIC;
GRANT ALL ON FUNCTION public.set_document_jobs_reconciliation(p_every_minutes integer, p_overlap interval, p_webhooks_missing_after interval, p_max_pages integer, p_retention interval) TO service_role;

COMMENT ON FUNCTION public.document_jobs_reconciliation_status() IS 'For the health output (document-jobs-admin health, the screen) and a run by hand: when reconciliation last ran and what it found (listed, recorded, of those recorded late, unreadable), when a run last completed and what cut the last one short (last_finding), its watermark and the retention window (window), a run in progress, its settings (max_since: retention, the bound of a run by hand), the e-mails recorded late after webhooks_missing closed, the unreadable items still open (the newest 20, and how many), how many e-mails reconciliation recorded in all, and the database''s clock (now).';
CREATE FUNCTION public.document_jobs_reconciliation_status() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'last_run_at', r.last_run_at,
        'last_listed', r.last_listed,
        'last_recorded', r.last_recorded,
        'last_late', r.last_late,
        'last_unreadable', r.last_unreadable,
        'last_completed_at', r.last_completed_at,
        'last_finding', r.last_finding,
        'last_finding_at', r.last_finding_at,
        'watermark', r.watermark,
        'running_since', r.run_started_at,
        'continues_after', r.cursor,
        'every_minutes', r.every_minutes,
        'overlap', r.overlap,
        'webhooks_missing_after', r.webhooks_missing_after,
        'max_pages', r.max_pages,
        'retention', r.retention,
        'max_since', r.retention,
        'window', document_jobs_internal.retention_window(),
        'late_after_close', r.late_after_close,
        'unreadable', document_jobs_internal.unreadable_shown(20),
        'unreadable_open', (select count(*) from document_jobs_internal.open_unreadable()),
        'found_by_reconciliation', (select count(*) from public.fax_received_emails e
                                     where e.found_by = 'reconciliation'),
        'now', now())
      from public.document_jobs_reconciliation r
$$;
REVOKE ALL ON FUNCTION public.document_jobs_reconciliation_status() FROM PUBLIC;
GRANT ALL ON FUNCTION public.document_jobs_reconciliation_status() TO service_role;

COMMENT ON FUNCTION public.unrecorded_provider_emails(p_provider_email_ids text[]) IS 'Of these Resend e-mail ids, those no e-mail row has, in the order given: what a reconciliation would record (the CLI''s dry run).';
CREATE FUNCTION public.unrecorded_provider_emails(p_provider_email_ids text[]) RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select coalesce(array_agg(i.id order by i.n), '{}')
      from unnest(p_provider_email_ids) with ordinality i(id, n)
     where not exists (select 1 from public.fax_received_emails e
                        where e.provider = 'resend' and e.provider_email_id = i.id)
$$;
REVOKE ALL ON FUNCTION public.unrecorded_provider_emails(p_provider_email_ids text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.unrecorded_provider_emails(p_provider_email_ids text[]) TO service_role;

COMMENT ON FUNCTION public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb, p_since timestamp with time zone, p_listed integer, p_unreadable jsonb) IS 'The CLI''s reconcile (document-jobs-admin reconcile --since): a batch of listed e-mails recorded as a reconcile_emails job records them (document_jobs_internal.record_reconciled) and its unreadable items (p_unreadable) noted once each (note_unreadable), audited with the operator''s identity (action reconcile; its filter has since, listed, the recorded ids and how many items were unreadable; job_count the e-mails recorded). p_since may go back retention at most.';
CREATE FUNCTION public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb, p_since timestamp with time zone, p_listed integer, p_unreadable jsonb DEFAULT '[]'::jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_retention interval;
    v_answer jsonb;
    v_new int;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select r.retention into v_retention from public.document_jobs_reconciliation r;
    perform document_jobs_internal.require(p_since is not null and p_since >= now() - v_retention - interval '1 minute',
        format('p_since must be within retention (%s, how long Resend keeps received e-mails) of now', v_retention));
    v_answer := document_jobs_internal.record_reconciled(p_emails);
    v_new := document_jobs_internal.note_unreadable(coalesce(p_unreadable, '[]'::jsonb), 'operator');
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'reconcile',
            jsonb_build_object('since', p_since, 'listed', p_listed, 'recorded_ids', v_answer -> 'recorded_ids',
                               'unreadable', jsonb_array_length(coalesce(p_unreadable, '[]'::jsonb))),
            (v_answer ->> 'recorded')::int);
    return v_answer || jsonb_build_object('unreadable_new', v_new);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb, p_since timestamp with time zone, p_listed integer, p_unreadable jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_record_reconciled_emails(p_actor_id uuid, p_actor_email text, p_emails jsonb, p_since timestamp with time zone, p_listed integer, p_unreadable jsonb) TO service_role;

COMMENT ON FUNCTION public.count_unprepared_faxes() IS 'The backfill''s count (document-jobs-admin prepare): e-mails in all ("faxes"), those with a stored attachment no prepare_fax job has looked at ("unprepared"), and prepare_fax jobs queued or running ("live_jobs").';
CREATE FUNCTION public.count_unprepared_faxes() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'faxes', (select count(*) from public.fax_received_emails),
        'unprepared', (select count(*) from public.fax_received_emails e where document_jobs_internal.unprepared(e.id)),
        'live_jobs', (select count(*) from public.document_jobs j
                       where j.kind = 'prepare_fax' and j.status in ('queued', 'running')))
$$;
REVOKE ALL ON FUNCTION public.count_unprepared_faxes() FROM PUBLIC;
GRANT ALL ON FUNCTION public.count_unprepared_faxes() TO service_role;

COMMENT ON FUNCTION public.admin_enqueue_prepare_fax_jobs(p_actor_id uuid, p_actor_email text, p_after uuid, p_limit integer) IS 'The backfill (document-jobs-admin prepare): of the next p_limit e-mails after p_after (by id; null: from the first), enqueues a prepare_fax job for each with a stored attachment no job has looked at and no live prepare_fax job, audited with the operator''s identity (action prepare; its filter has after, through and scanned; job_count the jobs enqueued), and starts workers for them within the cap. Answers {"scanned", "enqueued", "last_id" (the cursor of the next call; null when none was left), "follow_ups"}. Run again, it enqueues nothing twice.';
CREATE FUNCTION public.admin_enqueue_prepare_fax_jobs(p_actor_id uuid, p_actor_email text, p_after uuid, p_limit integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_ids uuid[];
    v_enqueued int := 0;
    v_id uuid;
    v_started int := 0;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    perform document_jobs_internal.require(p_limit between 1 and 1000, 'p_limit must be between 1 and 1000');
    select coalesce(array_agg(e.id order by e.id), '{}') into v_ids
      from (select e.id from public.fax_received_emails e
             where p_after is null or e.id > p_after
             order by e.id
             limit p_limit) e;
    foreach v_id in array v_ids loop
        if document_jobs_internal.unprepared(v_id) then
            insert into public.document_jobs (kind, fax_received_email_id)
            values ('prepare_fax', v_id)
            on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing;
            v_enqueued := v_enqueued + case when found then 1 else 0 end;
        end if;
    end loop;
    if v_enqueued > 0 then
        insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
        values (p_actor_id, p_actor_email, 'prepare',
                jsonb_build_object('after', p_after, 'through', v_ids[cardinality(v_ids)], 'scanned', cardinality(v_ids)),
                v_enqueued);
        v_started := document_jobs_internal.start_workers(null);
    end if;
    return jsonb_build_object('scanned', cardinality(v_ids), 'enqueued', v_enqueued,
                              'last_id', v_ids[cardinality(v_ids)], 'follow_ups', v_started);
end;
$$;
REVOKE ALL ON FUNCTION public.admin_enqueue_prepare_fax_jobs(p_actor_id uuid, p_actor_email text, p_after uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_enqueue_prepare_fax_jobs(p_actor_id uuid, p_actor_email text, p_after uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.enqueue_original_verification() IS 'The cron job document-jobs-verify''s call: enqueues a verify_originals job with a kick, unless one is queued or running (then null: at most one at a time).';
CREATE FUNCTION public.enqueue_original_verification() RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_id uuid;
begin
    insert into public.document_jobs (kind, fax_received_email_id)
    values ('verify_originals', null)
    on conflict (kind) where kind = 'verify_originals' and status in ('queued', 'running') do nothing
    returning id into v_id;
    if v_id is not null then
        perform document_jobs_internal.post_worker(1);
    end if;
    return v_id;
end;
$$;
REVOKE ALL ON FUNCTION public.enqueue_original_verification() FROM PUBLIC;
GRANT ALL ON FUNCTION public.enqueue_original_verification() TO service_role;

COMMENT ON FUNCTION public.start_original_verification(p_since timestamp with time zone, p_sample integer) IS 'document-jobs-admin verify''s run: of every original stored since p_since (null: all), or a random sample of p_sample of them (half among the recent ones, as the weekly job draws). Answers {"run_id", "total", "started_at"}.';
CREATE FUNCTION public.start_original_verification(p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_sample integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_run public.original_verify_runs;
begin
    v_run := document_jobs_internal.start_verify_run('cli', null, p_since, p_sample);
    return jsonb_build_object('run_id', v_run.id, 'total', v_run.total, 'started_at', v_run.started_at);
end;
$$;
REVOKE ALL ON FUNCTION public.start_original_verification(p_since timestamp with time zone, p_sample integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.start_original_verification(p_since timestamp with time zone, p_sample integer) TO service_role;

COMMENT ON FUNCTION public.original_verification_items(p_run_id bigint, p_after uuid, p_limit integer) IS 'The next p_limit originals of a verification run not read yet, by id after p_after (the cursor: the last id of the previous page): verify_items.';
CREATE FUNCTION public.original_verification_items(p_run_id bigint, p_after uuid DEFAULT NULL::uuid, p_limit integer DEFAULT 100) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_run public.original_verify_runs;
begin
    perform document_jobs_internal.require(p_limit between 1 and 1000, 'p_limit must be between 1 and 1000');
    select * into v_run from public.original_verify_runs r where r.id = p_run_id;
    perform document_jobs_internal.require(found, format('no verification run %s', p_run_id));
    return document_jobs_internal.verify_items(v_run, p_after, p_limit);
end;
$$;
REVOKE ALL ON FUNCTION public.original_verification_items(p_run_id bigint, p_after uuid, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.original_verification_items(p_run_id bigint, p_after uuid, p_limit integer) TO service_role;

COMMENT ON FUNCTION public.record_verified_originals(p_run_id bigint, p_checks jsonb) IS 'What document-jobs-admin verify read of at most 100 originals of its run, recorded and judged (document_jobs_internal.record_original_checks): a job''s run is recorded only through its fenced call.';
CREATE FUNCTION public.record_verified_originals(p_run_id bigint, p_checks jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_by text;
begin
    select r.started_by into v_by from public.original_verify_runs r where r.id = p_run_id;
    perform document_jobs_internal.require(v_by = 'cli', format('run %s is no run of the CLI''s', p_run_id));
    return document_jobs_internal.record_original_checks(p_run_id, p_checks);
end;
$$;
REVOKE ALL ON FUNCTION public.record_verified_originals(p_run_id bigint, p_checks jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_verified_originals(p_run_id bigint, p_checks jsonb) TO service_role;

COMMENT ON FUNCTION public.export_documents(p_from date, p_to date, p_stored_from timestamp with time zone, p_stored_before timestamp with time zone, p_after_at timestamp with time zone, p_after_id uuid, p_scan integer) IS 'document-jobs-admin export''s read: the stored originals (fax_received_email_attachments, kind attachment) and raw e-mails (fax_received_email_raw_messages where stored, kind raw_message) recorded in [p_stored_from, p_stored_before) (p_stored_before null: five minutes ago, answered as stored_before), by (created_at, id) after the cursor (p_after_at, p_after_id), at most p_scan rows read per call; those filed on p_from..p_to (取引年月日, or the received date in the office''s time zone when none is entered) are answered with the fax''s index, received time (with its offset in the office''s time zone), sender and subject, and which of its fax''s originals (or raw messages) each is (nth of of_fax). next is the cursor of the last row read, null when the window is read to its end; total (first call only, without a cursor) how many the whole export holds.';
CREATE FUNCTION public.export_documents(p_from date DEFAULT NULL::date, p_to date DEFAULT NULL::date, p_stored_from timestamp with time zone DEFAULT NULL::timestamp with time zone, p_stored_before timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_after_id uuid DEFAULT NULL::uuid, p_scan integer DEFAULT 500) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_zone text := document_jobs_internal.office_time_zone();
    v_before timestamptz := coalesce(p_stored_before, statement_timestamp() - interval '5 minutes');
    v_rows jsonb;
    v_read int;
    v_last_at timestamptz;
    v_last_id uuid;
    v_total int;
begin
    perform document_jobs_internal.require(p_scan between 1 and 1000, 'p_scan must be between 1 and 1000');
    perform document_jobs_internal.require((p_after_at is null) = (p_after_id is null),
                                           'p_after_at and p_after_id go together (the cursor)');
    perform document_jobs_internal.require(p_from is null or p_to is null or p_from <= p_to,
                                           'p_from must be on or before p_to');
    with scanned as (
        select * from (
            (select a.id, a.fax_received_email_id, 'attachment' as kind, a.provider_attachment_id, a.version,
                    a.filename, a.content_type, a.size_bytes, a.sha256, a.bucket, a.storage_path, a.created_at
               from public.fax_received_email_attachments a
              where a.created_at < v_before
                and (p_stored_from is null or a.created_at >= p_stored_from)
                and (p_after_at is null or a.created_at >= p_after_at)
                and (p_after_at is null or (a.created_at, a.id) > (p_after_at, p_after_id))
              order by a.created_at, a.id
              limit p_scan)
            union all
            -- The e-mail itself (.eml), where one is stored: the evidence of when and from whom.
            (select r.id, r.fax_received_email_id, 'raw_message', null, r.version, null, 'message/rfc822',
                    r.size_bytes, r.sha256, r.bucket, r.storage_path, r.created_at
               from public.fax_received_email_raw_messages r
              where r.unavailable is null
                and r.created_at < v_before
                and (p_stored_from is null or r.created_at >= p_stored_from)
                and (p_after_at is null or r.created_at >= p_after_at)
                and (p_after_at is null or (r.created_at, r.id) > (p_after_at, p_after_id))
              order by r.created_at, r.id
              limit p_scan)
        ) u
        order by u.created_at, u.id
        limit p_scan
    ),
    described as (
        select s.*,
               coalesce(e.received_at, e.created_at) as received,
               e.from_address,
               e.subject,
               i.transaction_date,
               i.amount,
               i.counterparty,
               i.doc_type,
               coalesce(i.transaction_date, (coalesce(e.received_at, e.created_at) at time zone v_zone)::date)
                   as filed_on,
               (coalesce(e.received_at, e.created_at) at time zone v_zone)
               - (coalesce(e.received_at, e.created_at) at time zone 'UTC') as utc_offset,
               -- Which of the fax's originals this is, by the order they were recorded (the rows are
               -- never changed, so the number a document is exported under stays its own); a raw
               -- message, which of its versions.
               case when s.kind = 'raw_message' then s.version
                    else (select count(*) from public.fax_received_email_attachments b
                           where b.fax_received_email_id = s.fax_received_email_id
                             and (b.created_at, b.id) <= (s.created_at, s.id)) end as nth,
               case when s.kind = 'raw_message'
                    then (select count(*) from public.fax_received_email_raw_messages b
                           where b.fax_received_email_id = s.fax_received_email_id and b.unavailable is null)
                    else (select count(*) from public.fax_received_email_attachments b
                           where b.fax_received_email_id = s.fax_received_email_id) end as of_fax
          from scanned s
          join public.fax_received_emails e on e.id = s.fax_received_email_id
          left join public.fax_index i on i.fax_received_email_id = s.fax_received_email_id
    )
    select coalesce(jsonb_agg(jsonb_build_object(
               'id', d.id,
               'kind', d.kind,
               'fax_received_email_id', d.fax_received_email_id,
               'provider_attachment_id', d.provider_attachment_id,
               'version', d.version,
               'filename', d.filename,
               'content_type', d.content_type,
               'size_bytes', d.size_bytes,
               'sha256', d.sha256,
               'bucket', d.bucket,
               'storage_path', d.storage_path,
               'stored_at', d.created_at,
               'received', to_char(d.received at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS')
                           || case when d.utc_offset < interval '0' then '-' || to_char(-d.utc_offset, 'HH24:MI')
                                   else '+' || to_char(d.utc_offset, 'HH24:MI') end,
               'sender', d.from_address,
               'subject', d.subject,
               'transaction_date', d.transaction_date,
               'amount', d.amount,
               'counterparty', d.counterparty,
               'doc_type', d.doc_type,
               'filed_on', d.filed_on,
               'dated_by', case when d.transaction_date is null then 'received' else 'transaction' end,
               'nth', d.nth,
               'of_fax', d.of_fax
           ) order by d.created_at, d.id) filter (where (p_from is null or d.filed_on >= p_from)
                                                    and (p_to is null or d.filed_on <= p_to)), '[]'::jsonb),
           count(*)::int,
           (array_agg(d.created_at order by d.created_at desc, d.id desc))[1],
           (array_agg(d.id order by d.created_at desc, d.id desc))[1]
      into v_rows, v_read, v_last_at, v_last_id
      from described d;
    if p_after_at is null then  -- the first call: how many the export holds, for its progress
        select count(*)::int into v_total
          from (select b.fax_received_email_id, b.created_at from public.fax_received_email_attachments b
                union all
                select r.fax_received_email_id, r.created_at from public.fax_received_email_raw_messages r
                 where r.unavailable is null) a
          join public.fax_received_emails e on e.id = a.fax_received_email_id
          left join public.fax_index i on i.fax_received_email_id = a.fax_received_email_id
         where a.created_at < v_before
           and (p_stored_from is null or a.created_at >= p_stored_from)
           and (p_from is null or coalesce(i.transaction_date,
                                           (coalesce(e.received_at, e.created_at) at time zone v_zone)::date) >= p_from)
           and (p_to is null or coalesce(i.transaction_date,
                                         (coalesce(e.received_at, e.created_at) at time zone v_zone)::date) <= p_to);
    end if;
    return jsonb_build_object(
        'total', v_total,
        'time_zone', v_zone,
        'stored_before', v_before,
        -- The window's end as a folder's name, in the office's time zone (--since-last's folder).
        'stored_before_local', to_char(v_before at time zone v_zone, 'YYYYMMDD-HH24MISS'),
        'rows', v_rows,
        'next', case when v_read = p_scan then jsonb_build_object('at', v_last_at, 'id', v_last_id) end);
end;
$$;
REVOKE ALL ON FUNCTION public.export_documents(p_from date, p_to date, p_stored_from timestamp with time zone, p_stored_before timestamp with time zone, p_after_at timestamp with time zone, p_after_id uuid, p_scan integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.export_documents(p_from date, p_to date, p_stored_from timestamp with time zone, p_stored_before timestamp with time zone, p_after_at timestamp with time zone, p_after_id uuid, p_scan integer) TO service_role;

COMMENT ON FUNCTION public.set_fax_line(p_address text, p_name text, p_number text) IS 'Names one of the office''s fax lines: the address its faxes are sent to (its To; a display name and <address> is taken too), the name the inbox shows, and the line''s own number as ASCII digits (optional). Adds the line or changes it; 22023 for a value fax_lines refuses.';
CREATE FUNCTION public.set_fax_line(p_address text, p_name text, p_number text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_line public.fax_lines;
begin
    perform document_jobs_internal.require(p_address is not null and p_name is not null,
                                           'p_address and p_name must not be null');
    insert into public.fax_lines as l (address, name, number)
    values (document_jobs_internal.address_of(p_address), btrim(p_name), nullif(p_number, ''))
    on conflict (address) do update set name = excluded.name, number = excluded.number, updated_at = now()
    returning * into v_line;
    return to_jsonb(v_line);
exception
    when check_violation then
        raise exception using errcode = '22023', message = format(
            'not a line: the address must be one e-mail address, the name 1 to 50 characters, the number 3 to 20 ASCII digits (%s)',
            sqlerrm);
end;
$$;
REVOKE ALL ON FUNCTION public.set_fax_line(p_address text, p_name text, p_number text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.set_fax_line(p_address text, p_name text, p_number text) TO service_role;

COMMENT ON FUNCTION public.remove_fax_line(p_address text) IS 'Forgets one of the office''s lines (its faxes stay, shown by their To address); true when there was one.';
CREATE FUNCTION public.remove_fax_line(p_address text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    with gone as (delete from public.fax_lines l where l.address = document_jobs_internal.address_of(p_address)
                  returning 1)
    select exists (select 1 from gone)
$$;
REVOKE ALL ON FUNCTION public.remove_fax_line(p_address text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.remove_fax_line(p_address text) TO service_role;

COMMENT ON FUNCTION public.admin_delete_fax(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_reason text) IS 'Deletes a fax after its keep-until date (keep_until), as an admin of Supabase Auth now (require_actor: acting_operator), with a reason: records first in fax_deletions what goes (the e-mail''s row without its data, the attachments with their keys and SHA-256 and views, the raw messages, the index and its history, the handling and its history, the rotation, the jobs, and the objects to remove from Storage), then deletes the handling, the index and their histories, and the e-mail''s row with all that cascades from it. Refuses (55000 retention_not_over) before the office''s today is past the keep-until date and (55000 jobs_live) while a job of the fax is queued or running. {"deletion_id", "fax_received_email_id", "keep_until", "objects"}. The objects stay in Storage until document-jobs-admin purge-deleted removes them.';
CREATE FUNCTION public.admin_delete_fax(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_reason text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_email public.fax_received_emails;
    v_retention jsonb;
    v_attachments uuid[];
    v_what jsonb;
    v_deletion bigint;
begin
    perform document_jobs_internal.require_actor(p_actor_id, p_reason, true);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    -- The fax and its jobs stay as they are while they are read and deleted: no job is added to
    -- it (the foreign key's lock waits for this one), and none is claimed or retried meanwhile.
    select * into v_email from public.fax_received_emails e where e.id = p_fax_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    perform 1 from public.document_jobs j where j.fax_received_email_id = p_fax_id for update;
    v_retention := document_jobs_internal.require_past_keep_until(v_email);
    if exists (select 1 from public.document_jobs j
                where j.fax_received_email_id = p_fax_id and j.status in ('queued', 'running')) then
        raise exception using errcode = '55000', hint = 'jobs_live',
            message = format('a job of fax %s is queued or running: let it end (or cancel it), then delete',
                             left(replace(p_fax_id::text, '-', ''), 8));
    end if;
    v_attachments := array(select a.id from public.fax_received_email_attachments a
                            where a.fax_received_email_id = p_fax_id);
    -- Everything that goes, as it is now: the record's rows (the e-mail's without its verbatim
    -- data, which the raw message's key and hash stand for), the index and the handling with their
    -- histories, the jobs, and the objects the purge removes.
    v_what := jsonb_build_object(
        'email', to_jsonb(v_email) - 'data',
        'retention', v_retention,
        'attachments', coalesce((select jsonb_agg(to_jsonb(a) - 'updated_at' || jsonb_build_object(
                                            'view', (select to_jsonb(v) - 'attachment_id'
                                                       from public.fax_attachment_views v where v.attachment_id = a.id))
                                        order by a.created_at, a.id)
                                   from public.fax_received_email_attachments a
                                  where a.fax_received_email_id = p_fax_id), '[]'),
        'raw_messages', coalesce((select jsonb_agg(to_jsonb(r) order by r.version)
                                    from public.fax_received_email_raw_messages r
                                   where r.fax_received_email_id = p_fax_id), '[]'),
        'index', (select to_jsonb(i) - 'counterparty_folded' from public.fax_index i
                   where i.fax_received_email_id = p_fax_id),
        'index_history', coalesce((select jsonb_agg(to_jsonb(h) order by h.id) from public.fax_index_history h
                                    where h.fax_received_email_id = p_fax_id), '[]'),
        'handling', (select to_jsonb(f) from public.fax_handling f where f.fax_received_email_id = p_fax_id),
        'handling_history', coalesce((select jsonb_agg(to_jsonb(h) order by h.id) from public.fax_handling_history h
                                       where h.fax_received_email_id = p_fax_id), '[]'),
        'rotation', (select r.rotation from public.fax_view_rotations r where r.fax_received_email_id = p_fax_id),
        'jobs', coalesce((select jsonb_agg(jsonb_build_object(
                                     'id', j.id, 'kind', j.kind, 'status', j.status, 'created_at', j.created_at,
                                     'finished_at', j.finished_at, 'last_error_code', j.last_error_code,
                                     'attempts', (select count(*) from public.document_job_attempts t
                                                   where t.job_id = j.id))
                                 order by j.created_at, j.id)
                            from public.document_jobs j where j.fax_received_email_id = p_fax_id), '[]'),
        'objects', document_jobs_internal.fax_objects(p_fax_id));
    insert into public.fax_deletions (fax_received_email_id, actor_id, actor_email, reason, what)
    values (p_fax_id, p_actor_id, p_actor_email, btrim(p_reason), v_what)
    returning id into v_deletion;
    -- What refers to the e-mail without a cascade, deliberately first; the rest goes with the
    -- e-mail's row: attachments and raw messages (the guard lets them, as approved above), their
    -- views, the jobs and their attempts, the rotation. What names the fax without a foreign key
    -- stays, saying what happened: the audit, the verifications' history, discarded_objects.
    delete from public.fax_handling_history h where h.fax_received_email_id = p_fax_id;
    delete from public.fax_handling f where f.fax_received_email_id = p_fax_id;
    delete from public.fax_index_history h where h.fax_received_email_id = p_fax_id;
    delete from public.fax_index i where i.fax_received_email_id = p_fax_id;
    delete from public.fax_received_emails e where e.id = p_fax_id;
    -- A mismatch known of an original that is gone is no longer one to watch.
    delete from document_jobs_internal.original_mismatches m where m.attachment_id = any (v_attachments);
    if found then
        perform document_jobs_internal.check_original_mismatches();
    end if;
    return jsonb_build_object('deletion_id', v_deletion, 'fax_received_email_id', p_fax_id,
                              'keep_until', v_retention -> 'keep_until', 'objects', v_what -> 'objects');
end;
$$;
REVOKE ALL ON FUNCTION public.admin_delete_fax(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.admin_delete_fax(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_reason text) TO service_role;

COMMENT ON FUNCTION public.fax_objects_to_remove(p_limit integer) IS 'The objects of approved deletions (fax_deletions.what -> objects) that fax_object_removals does not record as removed yet, oldest deletion first, at most p_limit: [{"deletion_id", "fax_received_email_id", "bucket", "key", "kind"}]. Never an object a row of the record names. What document-jobs-admin purge-deleted removes through Storage''s API.';
CREATE FUNCTION public.fax_objects_to_remove(p_limit integer DEFAULT 1000) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_limit between 1 and 10000, 'p_limit must be between 1 and 10,000');
    return coalesce((
        select jsonb_agg(jsonb_build_object('deletion_id', x.deletion_id,
                                            'fax_received_email_id', x.fax_received_email_id,
                                            'bucket', x.bucket, 'key', x.key, 'kind', x.kind)
                         order by x.deletion_id, x.ord)
          from (select d.id as deletion_id, d.fax_received_email_id, o.value ->> 'bucket' as bucket,
                       o.value ->> 'key' as key, o.value ->> 'kind' as kind, o.ord
                  from public.fax_deletions d
                 cross join lateral jsonb_array_elements(d.what -> 'objects') with ordinality o(value, ord)
                 where not exists (select 1 from public.fax_object_removals r
                                    where r.bucket = o.value ->> 'bucket' and r.storage_path = o.value ->> 'key')
                   and not exists (select 1 from public.fax_received_email_attachments a
                                    where a.bucket = o.value ->> 'bucket' and a.storage_path = o.value ->> 'key')
                   and not exists (select 1 from public.fax_received_email_raw_messages m
                                    where m.bucket = o.value ->> 'bucket' and m.storage_path = o.value ->> 'key')
                 order by d.id, o.ord
                 limit p_limit) x), '[]');
end;
$$;
REVOKE ALL ON FUNCTION public.fax_objects_to_remove(p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fax_objects_to_remove(p_limit integer) TO service_role;

COMMENT ON FUNCTION public.record_fax_object_removal(p_actor_id uuid, p_actor_email text, p_deletion_id bigint, p_bucket text, p_key text) IS 'Records that an object of an approved deletion was removed from Storage (after Storage''s delete answered; one that was already gone counts), by an admin of Supabase Auth now (require_actor). Only an object the deletion lists (P0002 otherwise); recording it again changes nothing (false).';
CREATE FUNCTION public.record_fax_object_removal(p_actor_id uuid, p_actor_email text, p_deletion_id bigint, p_bucket text, p_key text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_kind text;
begin
    perform document_jobs_internal.require_actor(p_actor_id, null, false);
    select o ->> 'kind' into v_kind
      from public.fax_deletions d, jsonb_array_elements(d.what -> 'objects') o
     where d.id = p_deletion_id and o ->> 'bucket' = p_bucket and o ->> 'key' = p_key;
    if v_kind is null then
        raise exception using errcode = 'P0002',
            message = format('deletion %s lists no object %s in %s', p_deletion_id, p_key, p_bucket);
    end if;
    insert into public.fax_object_removals (deletion_id, bucket, storage_path, kind, actor_id, actor_email)
    values (p_deletion_id, p_bucket, p_key, v_kind, p_actor_id, p_actor_email)
    on conflict (bucket, storage_path) do nothing;
    return found;
end;
$$;
REVOKE ALL ON FUNCTION public.record_fax_object_removal(p_actor_id uuid, p_actor_email text, p_deletion_id bigint, p_bucket text, p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_fax_object_removal(p_actor_id uuid, p_actor_email text, p_deletion_id bigint, p_bucket text, p_key text) TO service_role;

-- Cron jobs (cron.job)
SELECT cron.schedule('document-jobs', '* * * * *', 'select public.invoke_document_jobs()');  -- as postgres, active
SELECT cron.schedule('document-jobs-announce', '* * * * *', 'select document_jobs_internal.announce_faxes()');  -- as postgres, active
SELECT cron.schedule('document-jobs-health', '* * * * *', 'select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing() + document_jobs_internal.check_reconciliation() + document_jobs_internal.check_record_guards()');  -- as postgres, active
SELECT cron.schedule('document-jobs-purge', '17 3 * * *', 'select public.purge_document_jobs()');  -- as postgres, active
SELECT cron.schedule('document-jobs-reconcile', '*/10 * * * *', 'select public.enqueue_document_jobs_reconciliation()');  -- as postgres, active
SELECT cron.schedule('document-jobs-verify', '0 18 * * 6', 'select public.enqueue_original_verification()');  -- as postgres, active


-- =================================================================================================
-- Internals: the helpers in document_jobs_internal, callable by their owner only
-- =================================================================================================

COMMENT ON FUNCTION document_jobs_internal.acting_operator(p_user_id uuid, p_roles text[]) IS 'The role of the operator an action names, from Supabase Auth''s own row, in the action''s call: refuses (28000 operator_deleted) a user row gone or with deleted_at, (28000 operator_banned) a banned_until still ahead, (42501 no_role) no document_jobs_role in raw_app_meta_data, and (42501 role_not_allowed) a role not in p_roles; the message names the roles that may act. The CLI has no session: this is operator_role without one.';
CREATE FUNCTION document_jobs_internal.acting_operator(p_user_id uuid, p_roles text[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_email text;
    v_deleted_at timestamptz;
    v_banned_until timestamptz;
    v_role text;
    v_who text := array_to_string(array(select case r when 'admin' then 'an admin' else 'a ' || r end
                                          from unnest(p_roles) with ordinality x(r, n) order by x.n), ' or ');
begin
    select u.email::text, u.deleted_at, u.banned_until, u.raw_app_meta_data ->> 'document_jobs_role'
      into v_email, v_deleted_at, v_banned_until, v_role
      from auth.users u
     where u.id = p_user_id;
    if not found or v_deleted_at is not null then
        raise exception using errcode = '28000', hint = 'operator_deleted',
            message = format('the operator %s was deleted from Supabase Auth: a deleted user may not act', p_user_id);
    end if;
    if v_banned_until > now() then
        raise exception using errcode = '28000', hint = 'operator_banned',
            message = format('%s is banned in Supabase Auth until %s: a banned user may not act', v_email,
                             document_jobs_internal.alert_time(v_banned_until));
    end if;
    if v_role is null then
        raise exception using errcode = '42501', hint = 'no_role',
            message = format('%s has no role on the admin screen: only %s may act', v_email, v_who);
    end if;
    if not v_role = any (p_roles) then
        raise exception using errcode = '42501', hint = 'role_not_allowed',
            message = format('%s is a %s: only %s may act', v_email, v_role, v_who);
    end if;
    return v_role;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.acting_operator(p_user_id uuid, p_roles text[]) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.address_of(p_entry text) IS 'The address of a recipient as the e-mail row stores it (a bare address, or a display name and <address>), lower case: what fax_lines.address names.';
CREATE FUNCTION document_jobs_internal.address_of(p_entry text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
    select lower(btrim(coalesce(substring(p_entry from '<([^<>]*)>\s*$'), p_entry)))
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.address_of(p_entry text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) IS 'The alert''s JSON: its machine-readable fields (raw values) merged with the chat message of the configured receiver (document_jobs_settings.alert_receiver, through chat_message).';
CREATE FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return p_fields || document_jobs_internal.chat_message(
        p_lines, (select s.alert_receiver from public.document_jobs_settings s));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.alert_job_failed() IS 'Trigger document_jobs_alert_failed: when a fetch_email job becomes failed (the only kind whose failure can lose a fax), whatever made it so (a failure, the expired-lease sweep, a cancel, an UPDATE by hand), its failure alert is posted; jobs cancelled by a bulk action (document_jobs.bulk_action on for that transaction) are not, that being one decision of one operator, in the audit once. Security definer: it reads Vault, and the UPDATE may come from service_role, which may not. A failure of the alert itself is a WARNING and never undoes the job''s state change: a queue that cannot fail a job because it cannot alert would stop claiming altogether.';
CREATE FUNCTION document_jobs_internal.alert_job_failed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if new.attempt_outcome = 'cancelled' and current_setting('document_jobs.bulk_action', true) = 'on' then
        return null;
    end if;
    begin
        perform document_jobs_internal.post_alert(document_jobs_internal.job_failed_alert(new));
    exception
        when others then
            raise warning 'document jobs: the failure alert of job % could not be queued: %', new.id, sqlerrm;
    end;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.alert_job_failed() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.alert_time(p_at timestamp with time zone) IS 'A time as the alerts print it: UTC in the form the CLI and the admin screen use, 2026-12-01 21:29:59 +00:00 (the database does not know the reader''s zone; the offset says which it is). Null for null.';
CREATE FUNCTION document_jobs_internal.alert_time(p_at timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "+00:00"')
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.alert_time(p_at timestamp with time zone) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.announce_faxes() IS 'What the cron job document-jobs-announce runs every minute; answers how many faxes it announced. Without the Vault secret document_jobs_announce_url it marks the pending faxes skipped, silently. Else: pending faxes recorded over a day ago are skipped (too_old); if a message was sent less than 50 seconds ago, nothing (at most one a minute: the next tick takes the faxes); else one message (alert_body: the fields event faxes_received, count, faxes [id, received_at, pages, stood], sent_at, and the chat text of document_jobs_settings.alert_receiver) for every pending fax, in office_settings.announce_language: one fax in detail (line, sender, pages, received time in the office''s zone, a note when it could not be fetched or converted, its link on the screen), several one line each, the first 8 listed and the rest counted. Each fax is marked sent with the pg_net request in the same transaction: queued, not delivered (pg_net never retries). Runs as the owner (Vault, the internal schema).';
CREATE FUNCTION document_jobs_internal.announce_faxes() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
    -- At most this many faxes are listed in one message, the others counted: a Discord message
    -- holds 2,000 characters, and a line of a fax takes up to about 200.
    c_listed constant int := 8;
    -- A tick sends at most one message a minute; pg_cron's minute ticks are not exactly 60 s apart.
    c_gap constant interval := interval '50 seconds';
    c_too_old constant interval := interval '1 day';
    v_url text;
    v_ja boolean := (select o.announce_language = 'ja' from public.office_settings o);
    v_screen text;
    v_faxes jsonb;
    v_count int;
    v_lines jsonb;
    v_fax jsonb;
    v_pages text;
    v_note text;
    v_number jsonb;
    v_request bigint;
begin
    -- One tick at a time: a second one (a manual call beside the cron's) finds nothing to do.
    if not pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('document_jobs_internal.announce_faxes')) then
        return 0;
    end if;
    select nullif(s.decrypted_secret, '') into v_url
      from vault.decrypted_secrets s
     where s.name = 'document_jobs_announce_url';
    if v_url is null then
        -- Off: silently (no warning every minute). Skipped for good, so that storing the secret
        -- later announces the faxes from then on, not a backlog.
        update document_jobs_internal.fax_announcements
           set state = 'skipped', skipped_because = 'off', decided_at = now()
         where state = 'pending';
        return 0;
    end if;
    update document_jobs_internal.fax_announcements a
       set state = 'skipped', skipped_because = 'too_old', decided_at = now()
      from public.fax_received_emails e
     where a.state = 'pending' and e.id = a.fax_received_email_id and e.created_at < now() - c_too_old;
    if exists (select 1 from document_jobs_internal.fax_announcements a
                where a.state = 'sent' and a.decided_at > now() - c_gap) then
        return 0;
    end if;

    with pending as (
        select a.fax_received_email_id, a.stood, a.ready_at
          from document_jobs_internal.fax_announcements a
         where a.state = 'pending'
         order by a.ready_at, a.fax_received_email_id
           for update skip locked
    )
    select jsonb_agg(jsonb_build_object(
               'id', e.id,
               'stood', p.stood,
               'received_at', coalesce(e.received_at, e.created_at),
               -- the line's name, else the address the fax was sent to
               'line', coalesce(
                   (select l.name from unnest(e.to_addresses) with ordinality t(entry, n)
                      join public.fax_lines l on l.address = document_jobs_internal.address_of(t.entry)
                     order by t.n limit 1),
                   (select document_jobs_internal.address_of(t) from unnest(e.to_addresses) t limit 1)),
               -- the name the parser read (fax_senders), else the From line's display name, else
               -- its address: as the inbox shows the sender (lib/screen/calls.py sender_of)
               'sender', coalesce(
                   s.name,
                   nullif(btrim(substring(e.from_address from '^(.*)<[^<>]*>\s*$'), E' \t"'), ''),
                   document_jobs_internal.address_of(e.from_address)),
               -- the number, unless it is a station ID that is one of the office's own lines (the
               -- forwarding machine's, never the sender's), or why there is none
               'number', case
                   when s.number_source = 'station_id'
                        and exists (select 1 from public.fax_lines l where l.number = s.number) then null
                   else s.number_display end,
               'withheld', case when v_ja then s.withheld_ja else s.withheld_en end,
               'pages', (select sum(v.page_count) from public.fax_received_email_attachments f
                           join public.fax_attachment_views v on v.attachment_id = f.id and v.source_sha256 = f.sha256
                          where f.fax_received_email_id = e.id))
             order by p.ready_at, p.fax_received_email_id)
      into v_faxes
      from pending p
      join public.fax_received_emails e on e.id = p.fax_received_email_id
      left join document_jobs_internal.fax_senders s on s.fax_received_email_id = e.id;
    v_count := coalesce(jsonb_array_length(v_faxes), 0);
    if v_count = 0 then
        return 0;
    end if;

    v_screen := document_jobs_internal.screen_url();
    v_lines := case
        when v_count = 1 and v_ja then '[["新しいFAXが届きました"]]'
        when v_count = 1 then '[["New fax received"]]'
        when v_ja then jsonb_build_array(jsonb_build_array(format('新しいFAXが %s 件届きました', v_count)))
        else jsonb_build_array(jsonb_build_array(format('%s new faxes received', v_count)))
    end::jsonb;
    for v_fax in select f.value from jsonb_array_elements(v_faxes) f limit c_listed loop
        v_pages := case
            when v_fax ->> 'pages' is null and v_ja then 'ページ数不明'
            when v_fax ->> 'pages' is null then 'pages unknown'
            when v_ja then format('%s ページ', v_fax ->> 'pages')
            else format('%s p.', v_fax ->> 'pages')
        end;
        v_number := case
            when v_fax ->> 'number' is not null then
                jsonb_build_array(' FAX ', jsonb_build_object('quote', v_fax ->> 'number', 'max', 40))
            when v_fax ->> 'withheld' is not null then jsonb_build_array(' FAX ' || (v_fax ->> 'withheld'))
            else '[]'::jsonb
        end;
        v_note := case v_fax ->> 'stood'
            when 'unfetched' then case when v_ja then '取得できませんでした。画面で確認してください'
                                       else 'it could not be fetched: see it on the screen' end
            when 'unprepared' then case when v_ja then '表示用の変換ができませんでした: 原本をダウンロードしてください'
                                        else 'it could not be converted for viewing: download the original' end
            when 'no_files' then case when v_ja then '添付ファイルがありません' else 'no attached file' end
        end;
        if v_count = 1 then
            v_lines := v_lines
                || jsonb_build_array(jsonb_build_array(case when v_ja then '回線: ' else 'Line: ' end,
                                                       jsonb_build_object('quote', v_fax ->> 'line', 'max', 50)))
                || jsonb_build_array(jsonb_build_array(case when v_ja then '送信元: ' else 'From: ' end,
                                                       jsonb_build_object('quote', v_fax ->> 'sender', 'max', 60))
                                     || v_number)
                || jsonb_build_array(jsonb_build_array(case when v_ja then 'ページ数: ' else 'Pages: ' end
                                                       || case when v_fax ->> 'pages' is null then
                                                              case when v_ja then '不明' else 'unknown' end
                                                          else v_fax ->> 'pages' end))
                || jsonb_build_array(jsonb_build_array(
                       case when v_ja then '受信: ' else 'Received: ' end
                       || document_jobs_internal.office_time((v_fax ->> 'received_at')::timestamptz)))
                || case when v_note is null then '[]'::jsonb else jsonb_build_array(jsonb_build_array(v_note)) end
                || case when v_screen is null then '[]'::jsonb
                        else jsonb_build_array(jsonb_build_array(
                                 jsonb_build_object('link', v_screen || '#/faxes/' || (v_fax ->> 'id')))) end;
        else
            v_lines := v_lines || jsonb_build_array(
                jsonb_build_array(
                    '• ' || document_jobs_internal.office_time((v_fax ->> 'received_at')::timestamptz) || ' ',
                    jsonb_build_object('quote', v_fax ->> 'line', 'max', 20), ' ',
                    jsonb_build_object('quote', v_fax ->> 'sender', 'max', 40))
                || v_number
                || jsonb_build_array(' ' || v_pages || coalesce(case when v_ja then '（' || v_note || '）' else ' (' || v_note || ')' end, ''))
                || case when v_screen is null then '[]'::jsonb
                        else jsonb_build_array(' ', jsonb_build_object('link', v_screen || '#/faxes/' || (v_fax ->> 'id'))) end);
        end if;
    end loop;
    if v_count > c_listed then
        v_lines := v_lines || jsonb_build_array(
            jsonb_build_array(case when v_ja then format('ほか %s 件', v_count - c_listed)
                                   else format('and %s more', v_count - c_listed) end)
            || case when v_screen is null then '[]'::jsonb
                    else jsonb_build_array(case when v_ja then ': 受信FAX ' else ': the inbox ' end,
                                           jsonb_build_object('link', v_screen || '#/faxes?period=today')) end);
    end if;

    v_request := net.http_post(
        url => v_url,
        body => document_jobs_internal.alert_body(
            jsonb_build_object(
                'event', 'faxes_received',
                'count', v_count,
                'faxes', (select jsonb_agg(jsonb_build_object('id', f.value -> 'id', 'received_at', f.value -> 'received_at',
                                                              'pages', f.value -> 'pages', 'stood', f.value -> 'stood'))
                            from jsonb_array_elements(v_faxes) f),
                'sent_at', now()),
            v_lines),
        headers => jsonb_build_object('Content-Type', 'application/json'),
        timeout_milliseconds => 10000);
    update document_jobs_internal.fax_announcements a
       set state = 'sent', decided_at = now(), request_id = v_request
     where a.fax_received_email_id in (select (f.value ->> 'id')::uuid from jsonb_array_elements(v_faxes) f);
    return v_count;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.announce_faxes() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) IS 'Delay before the next attempt after the n-th failed one: 1, 5, 15, 60 times document_jobs_settings.backoff_base (a minute), with ±10 % jitter so that jobs that failed together (a provider outage) do not all retry in the same second.';
CREATE FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) RETURNS interval
    LANGUAGE sql
    SET search_path TO ''
    AS $$
    select s.backoff_base
           * (case
                  when p_failed_attempt <= 1 then 1
                  when p_failed_attempt = 2 then 5
                  when p_failed_attempt = 3 then 15
                  else 60
              end)
           * (0.9 + 0.2 * random())
      from public.document_jobs_settings s
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.backoff(p_failed_attempt integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) IS 'Where a bulk action stands: counts so far, skips by reason, and the first 100 jobs it could not change, with why.';
CREATE FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return (
        select jsonb_build_object(
                   'bulk_action_id', b.id, 'action', b.action, 'filter', b.filter, 'job_count', b.job_count,
                   'changed', b.changed, 'skipped', b.skipped, 'processed', b.changed + b.skipped,
                   'done', b.finished_at is not null, 'started_at', b.started_at, 'finished_at', b.finished_at,
                   'skipped_by_reason', coalesce((
                       select jsonb_object_agg(r.reason, r.n)
                         from (select x.reason, count(*) as n from document_jobs_internal.bulk_action_jobs x
                                where x.bulk_action_id = b.id and x.outcome = 'skipped' group by x.reason) r), '{}'),
                   'not_changed', coalesce((
                       select jsonb_agg(jsonb_build_object('job_id', x.job_id, 'reason', x.reason)
                                        order by x.applied_at, x.job_id)
                         from (select * from document_jobs_internal.bulk_action_jobs y
                                where y.bulk_action_id = b.id and y.outcome = 'skipped'
                                order by y.applied_at, y.job_id limit 100) x), '[]'))
          from document_jobs_internal.bulk_actions b
         where b.id = p_bulk_action_id);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.bulk_action_progress(p_bulk_action_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) IS 'One batch of a bulk cancel: every job of the batch still queued or running is cancelled with the action''s reason (without a failure alert each: see alert_job_failed), and the others are recorded as skipped, with why.';
CREATE FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) RETURNS uuid[]
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_changed uuid[];
begin
    perform pg_catalog.set_config('document_jobs.bulk_action', 'on', true);
    v_changed := array(select document_jobs_internal.cancel_live(p_batch, p_reason));
    perform pg_catalog.set_config('document_jobs.bulk_action', '', true);
    update document_jobs_internal.bulk_action_jobs b
       set outcome = case when b.job_id = any (v_changed) then 'changed' else 'skipped' end,
           reason = case
                        when b.job_id = any (v_changed) then null
                        when not exists (select 1 from public.document_jobs j where j.id = b.job_id) then 'job_deleted'
                        else 'not_live'
                    end,
           applied_at = now()
     where b.bulk_action_id = p_bulk_action_id and b.job_id = any (p_batch);
    return v_changed;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.bulk_cancel_batch(p_bulk_action_id uuid, p_batch uuid[], p_reason text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) IS 'One batch of a bulk retry: of the batch''s jobs still failed, each one whose e-mail has no live job goes back to queued; of several failed jobs of one e-mail in the action, only the newest (whichever batch it falls in). Returns the ids it changed and records why the others were not.';
CREATE FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) RETURNS uuid[]
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_eligible uuid[];
    v_blocked uuid[];
    v_second uuid[];
    v_changed uuid[] := '{}'::uuid[];
    v_job uuid;
begin
    with failed as (
        select j.id, j.kind, j.fax_received_email_id, j.created_at
          from public.document_jobs j
         where j.id = any (p_batch) and j.status = 'failed'
           for update
    ), checked as (
        -- Each branch names the states of a partial index on the e-mail, so that both are used.
        select f.id,
               f.fax_received_email_id is not null and (
                   exists (select 1 from public.document_jobs o
                             join document_jobs_internal.bulk_action_jobs x
                               on x.bulk_action_id = p_bulk_action_id and x.job_id = o.id
                            where o.kind = f.kind and o.fax_received_email_id = f.fax_received_email_id
                              and o.status in ('queued', 'running') and (o.created_at, o.id) > (f.created_at, f.id))
                   or exists (select 1 from public.document_jobs o
                                join document_jobs_internal.bulk_action_jobs x
                                  on x.bulk_action_id = p_bulk_action_id and x.job_id = o.id
                               where o.fax_received_email_id = f.fax_received_email_id and o.kind = f.kind
                                 and o.status in ('completed', 'failed') and (o.created_at, o.id) > (f.created_at, f.id)))
                   as second,
               f.fax_received_email_id is not null and exists (
                   select 1 from public.document_jobs l
                    where l.kind = f.kind and l.fax_received_email_id = f.fax_received_email_id
                      and l.status in ('queued', 'running')) as blocked
          from failed f
    )
    select coalesce(array_agg(c.id) filter (where not c.second and not c.blocked), '{}'),
           coalesce(array_agg(c.id) filter (where c.blocked and not c.second), '{}'),
           coalesce(array_agg(c.id) filter (where c.second), '{}')
      into v_eligible, v_blocked, v_second
      from checked c;

    begin
        v_changed := array(select document_jobs_internal.requeue_failed(v_eligible));
    exception
        when unique_violation then
            -- A live job for one of these e-mails appeared since the check (a webhook redelivery
            -- enqueued one, say): go one by one, and skip those.
            foreach v_job in array v_eligible loop
                begin
                    v_changed := v_changed || array(select document_jobs_internal.requeue_failed(array[v_job]));
                exception
                    when unique_violation then
                        v_blocked := v_blocked || v_job;
                end;
            end loop;
    end;

    update document_jobs_internal.bulk_action_jobs b
       set outcome = case when b.job_id = any (v_changed) then 'changed' else 'skipped' end,
           reason = case
                        when b.job_id = any (v_changed) then null
                        when b.job_id = any (v_blocked) then 'another_live_job'
                        when b.job_id = any (v_second) then 'another_job_of_the_same_email'
                        when not exists (select 1 from public.document_jobs j where j.id = b.job_id) then 'job_deleted'
                        else 'not_failed'
                    end,
           applied_at = now()
     where b.bulk_action_id = p_bulk_action_id and b.job_id = any (p_batch);
    return v_changed;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.bulk_retry_batch(p_bulk_action_id uuid, p_batch uuid[]) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) IS 'queued or running -> failed, with outcome and last_error_code cancelled and the reason as the message, for every live job of p_job_ids; returns the ids it changed. The one definition of a cancel (the CLI''s, the screen''s, a bulk cancel); a running job''s worker learns it at its next fenced call.';
CREATE FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    return query
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'cancelled',
           last_error_code = 'cancelled',
           last_error_message = coalesce(left(p_reason, 4000), 'cancelled by an operator')
     where j.id = any (p_job_ids) and j.status in ('queued', 'running')
    returning j.id;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.cancel_live(p_job_ids uuid[], p_reason text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) IS 'A chat message for the receiver (slack, mattermost, discord or teams): p_lines is an array of lines, each an array of segments, a string (our own words), {"quote": text, "max": n} (a sender''s text or an identifier, escaped for the receiver; null shows as "(none)") or {"link": url} (a URL of ours, as the receiver''s link: Slack''s <url>, CommonMark''s autolink, a Teams TextRun that opens it; anything but a plain http(s) URL is refused). Answers the receiver''s fields, to be merged into the alert''s JSON.';
CREATE FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_line jsonb;
    v_segment jsonb;
    v_value text;
    v_shown text;
    v_lines text[] := '{}'::text[];
    v_blocks jsonb := '[]'::jsonb;
    v_inlines jsonb;
begin
    for v_line in select l.value from jsonb_array_elements(p_lines) l loop
        v_shown := '';
        v_inlines := '[]'::jsonb;
        for v_segment in select s.value from jsonb_array_elements(v_line) s loop
            if jsonb_typeof(v_segment) = 'string' then
                v_value := v_segment #>> '{}';
                v_shown := v_shown || case p_receiver
                    when 'slack' then replace(replace(replace(v_value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                    when 'teams' then v_value
                    else regexp_replace(v_value, '([\\`*_{}\[\]<>#|~!])', '\\\1', 'g')
                end;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            if v_segment ? 'link' then
                -- A URL has no space, <, >, | or control character (the callers' check): written
                -- as Slack's <url> and CommonMark's autolink <url>, it is one link and nothing else.
                v_value := v_segment ->> 'link';
                if v_value !~ '^https?://[^\s<>|"`\\[:cntrl:]]+$' then
                    raise exception 'chat_message: not a URL to link: %', left(v_value, 100) using errcode = '22023';
                end if;
                v_shown := v_shown || case p_receiver
                    when 'slack' then '<' || replace(v_value, '&', '&amp;') || '>'
                    when 'teams' then v_value
                    else '<' || v_value || '>'
                end;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object(
                    'type', 'TextRun', 'text', v_value,
                    'selectAction', jsonb_build_object('type', 'Action.OpenUrl', 'url', v_value)));
                continue;
            end if;
            v_value := document_jobs_internal.one_line(v_segment ->> 'quote', coalesce((v_segment ->> 'max')::int, 200));
            if coalesce(v_value, '') = '' then
                v_value := case when v_segment ->> 'quote' is null then '(none)' else '(empty)' end;
                v_shown := v_shown || v_value;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            v_shown := v_shown || case p_receiver
                when 'slack' then
                    '`' || replace(replace(replace(replace(v_value, '`', 'ˋ'), '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                        || '`'
                when 'teams' then v_value
                else '`' || replace(v_value, '`', 'ˋ') || '`'
            end;
            v_inlines := v_inlines || jsonb_build_array(
                jsonb_build_object('type', 'TextRun', 'text', v_value, 'fontType', 'Monospace'));
        end loop;
        v_lines := v_lines || v_shown;
        v_blocks := v_blocks || jsonb_build_array(jsonb_build_object('type', 'RichTextBlock', 'inlines', v_inlines));
    end loop;
    return case p_receiver
        when 'discord' then jsonb_build_object(
            'content', array_to_string(v_lines, E'\n'),
            'allowed_mentions', jsonb_build_object('parse', '[]'::jsonb))
        when 'teams' then jsonb_build_object(
            'type', 'message',
            'attachments', jsonb_build_array(jsonb_build_object(
                'contentType', 'application/vnd.microsoft.card.adaptive',
                'contentUrl', null,
                'content', jsonb_build_object(
                    '$schema', 'http://adaptivecards.io/schemas/adaptive-card.json',
                    'type', 'AdaptiveCard',
                    'version', '1.4',
                    'body', v_blocks))))
        else jsonb_build_object('text', array_to_string(v_lines, E'\n'))
    end;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.check_health() IS 'The health check the cron job document-jobs-health runs every minute; answers the alerts it queued. Through set_outage it moves each cause to what it finds: the queue stalled (the oldest claimable job waiting longer than alert_stall_after), the worker unauthorized, not found or failing (its answers of the last 5 minutes, a cause holding while they hold it and none is a success), and each release cause whose releases keep happening (2 or more in 2 hours, no job completed since the latest). It also forgets worker_requests older than 7 hours.';
CREATE FUNCTION document_jobs_internal.check_health() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_window constant interval := interval '5 minutes';
    c_window_text constant text := '5 minutes';
    c_release_window constant interval := interval '2 hours';
    v_stall_after interval;
    v_oldest timestamptz;
    v_claimable bigint;
    v_answers record;
    v_wait text;
    v_recovered text;
    v_cause record;
    v_releases record;
    v_since timestamptz;
    v_completed timestamptz;
    v_sent int := 0;
begin
    delete from document_jobs_internal.worker_requests w where w.created_at < now() - interval '7 hours';

    select s.alert_stall_after into v_stall_after from public.document_jobs_settings s;
    select min(c.run_after), count(*) into v_oldest, v_claimable from public.document_jobs_claimable c;
    v_wait := coalesce(round(extract(epoch from now() - v_oldest) / 60)::text || ' min', 'nothing');
    v_sent := v_sent + document_jobs_internal.set_outage(
        'queue_stalled',
        v_oldest is not null and v_oldest < now() - v_stall_after,
        format('the oldest claimable job has waited %s (threshold %s); %s jobs are claimable',
               v_wait, round(extract(epoch from v_stall_after) / 60) || ' min', v_claimable),
        format('the oldest claimable job now waits %s; %s jobs are claimable', v_wait, v_claimable),
        jsonb_build_object('oldest_claimable_since', v_oldest, 'claimable', v_claimable,
                           'threshold', v_stall_after));

    select count(*) as total,
           count(*) filter (where r.status_code between 200 and 299) as ok,
           count(*) filter (where r.status_code in (401, 403)) as unauthorized,
           count(*) filter (where r.status_code in (404, 405)
                               or (r.status_code is null and not coalesce(r.timed_out, false))) as not_found,
           count(*) filter (where r.status_code >= 500 or r.timed_out) as failing
      into v_answers
      from document_jobs_internal.worker_requests w
      join net._http_response r on r.id = w.request_id
     where w.created_at > now() - c_window - interval '5 minutes'  -- a call may take 300 s to answer
       and r.created > now() - c_window;
    v_recovered := format('the worker answered %s of its %s calls in the last %s with success',
                          v_answers.ok, v_answers.total, c_window_text);

    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_unauthorized',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.unauthorized > 0 end,
        format('%s of the worker''s %s answers in the last %s were 401/403, none a success',
               v_answers.unauthorized, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'unauthorized', v_answers.unauthorized));
    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_not_found',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.not_found > 0 end,
        format('%s of the worker''s %s answers in the last %s were 404 or no answer at all, none a success',
               v_answers.not_found, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'not_found', v_answers.not_found));
    v_sent := v_sent + document_jobs_internal.set_outage(
        'worker_failing',
        case when v_answers.total > 0 then v_answers.ok = 0 and v_answers.failing > 0 end,
        format('%s of the worker''s %s answers in the last %s were 5xx or timed out, none a success',
               v_answers.failing, v_answers.total, c_window_text),
        v_recovered,
        jsonb_build_object('answers', v_answers.total, 'ok', v_answers.ok, 'failing', v_answers.failing));

    -- Each release cause holds while its releases keep happening (2 or more in the window) and no
    -- job has completed since the latest; a job completed after the latest release (or, with none
    -- left in the window, since the outage began) clears it; otherwise there is no evidence.
    for v_cause in select r.code, r.check_what from document_jobs_internal.release_causes r order by r.code loop
        select count(*) as releases,
               count(distinct a.job_id) as jobs,
               max(a.finished_at) as latest,
               (array_agg(a.error_message order by a.finished_at desc))[1] as last_error
          into v_releases
          from public.document_job_attempts a
         where a.outcome = 'released' and a.error_code = v_cause.code
           and a.finished_at > now() - c_release_window;
        select o.since into v_since from document_jobs_internal.outages o where o.cause = v_cause.code;
        select max(j.finished_at) into v_completed
          from public.document_jobs j
         where j.status = 'completed' and j.finished_at > coalesce(v_releases.latest, v_since);
        v_sent := v_sent + document_jobs_internal.set_outage(
            v_cause.code,
            case when v_completed is not null then false when v_releases.releases >= 2 then true end,
            format('%s releases of %s jobs for %s in the last %s, no job completed since the latest (check %s)',
                   v_releases.releases, v_releases.jobs, v_cause.code, '2 hours', v_cause.check_what),
            format('a job completed at %s, after the last release for %s',
                   document_jobs_internal.alert_time(v_completed), v_cause.code),
            jsonb_build_object('releases', v_releases.releases, 'jobs', v_releases.jobs,
                               'latest_release', v_releases.latest, 'completed_at', v_completed,
                               'check', v_cause.check_what, 'last_error', v_releases.last_error));
    end loop;
    return v_sent;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.check_health() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.check_original_mismatches() IS 'The outage original_mismatch from the mismatches known now (original_mismatches), through set_outage_once: its level is the newest mismatch''s id, so a new one alerts once and one found again does not; none left closes it (with a recovered alert). The summary names the faxes by their short ids (never a sender''s text). Called whenever a run records what it read.';
CREATE FUNCTION document_jobs_internal.check_original_mismatches() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
    v_open record;
begin
    select count(*) as n, max(m.id) as newest,
           jsonb_agg(jsonb_build_object('fax', left(a.fax_received_email_id::text, 8), 'attachment_id', m.attachment_id,
                                        'object', a.bucket || '/' || a.storage_path, 'outcome', m.outcome,
                                        'found_at', m.found_at) order by m.id desc)
               filter (where m.id is not null) as shown
      into v_open
      from document_jobs_internal.original_mismatches m
      left join public.fax_received_email_attachments a on a.id = m.attachment_id;
    return document_jobs_internal.set_outage_once(
        'original_mismatch',
        coalesce(v_open.newest, 0),
        format('%s stored originals are not what was recorded when they were stored (missing, or another size or SHA-256); faxes: %s. document-jobs-admin verify prints each',
               v_open.n,
               (select string_agg(s ->> 'fax', ', ') from (select jsonb_array_elements(v_open.shown) s limit 20) x)),
        'every original found not as recorded reads as recorded again',
        jsonb_build_object('count', v_open.n, 'originals', coalesce(jsonb_path_query_array(v_open.shown, '$[0 to 19]'), '[]')));
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.check_original_mismatches() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.check_reconciliation() IS 'The health check''s watch over reconciliation, each cause alerting once (set_outage_once): reconciliation_stalled (no run completed within three of its intervals, or a run under way for over an hour; the last job''s error or the last finding as evidence; closes when a run completes), retention_window_closing (the watermark older than half of retention, and again at three quarters; closes when a run moves it back under half) and reconciliation_unreadable (listing items that could not be read and are neither recorded nor past retention; each new one alerts). The cron job document-jobs-health calls it.';
CREATE FUNCTION document_jobs_internal.check_reconciliation() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_state public.document_jobs_reconciliation;
    v_job record;
    v_error text;
    v_stalled boolean;
    v_window jsonb;
    v_level int;
    v_open record;
    v_sent int := 0;
begin
    select * into v_state from public.document_jobs_reconciliation r;

    -- Stalled: no run listed back to its watermark within three of its intervals, or a run (its
    -- follow-ups included) has been under way for over an hour. A failed run feeds it: its error
    -- is the evidence (no failure alert is sent for a reconcile_emails job).
    select j.status, j.last_error_code, j.last_error_message into v_job
      from public.document_jobs j
     where j.kind = 'reconcile_emails'
     order by j.created_at desc
     limit 1;
    v_error := case when v_job.status is distinct from 'completed' and v_job.last_error_code is not null
                    then format('%s: %s', v_job.last_error_code, v_job.last_error_message)
                    when v_state.last_finding is not null
                    then 'the last run stopped early: ' || v_state.last_finding end;
    v_stalled := coalesce(v_state.last_completed_at < now() - make_interval(mins => 3 * v_state.every_minutes), false)
                 or coalesce(v_state.run_started_at < now() - interval '1 hour', false);
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'reconciliation_stalled',
        case when v_stalled then 1 else 0 end,
        format('no reconciliation run has listed back to its watermark since %s (it runs every %s minutes)%s',
               coalesce(document_jobs_internal.alert_time(v_state.last_completed_at), 'it was set up'),
               v_state.every_minutes,
               case when v_state.run_started_at < now() - interval '1 hour'
                    then format('; a run has been under way since %s',
                                document_jobs_internal.alert_time(v_state.run_started_at))
                    else '' end),
        format('a reconciliation run listed back to its watermark at %s',
               document_jobs_internal.alert_time(v_state.last_completed_at)),
        jsonb_build_object('last_completed_at', v_state.last_completed_at, 'running_since', v_state.run_started_at,
                           'every_minutes', v_state.every_minutes, 'last_finding', v_state.last_finding)
        || case when v_error is not null then jsonb_build_object('last_error', v_error) else '{}'::jsonb end);

    -- The window: the share of Resend's retention the gap since the watermark has used.
    v_window := document_jobs_internal.retention_window();
    v_level := case when v_window is null then 0
                    when (v_window ->> 'share')::numeric >= 0.75 then 2
                    when (v_window ->> 'share')::numeric >= 0.5 then 1
                    else 0 end;
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'retention_window_closing',
        v_level,
        format('reconciliation has listed the e-mails Resend received only up to %s, %s hours ago: more than %s of the %s Resend keeps them. An e-mail received since then that no webhook delivered is unrecoverable from %s; to list them now, run: %s',
               document_jobs_internal.alert_time(v_state.watermark),
               round(extract(epoch from now() - v_state.watermark) / 3600),
               case when v_level = 2 then 'three quarters' else 'half' end, v_state.retention,
               document_jobs_internal.alert_time(v_state.watermark + v_state.retention), v_window ->> 'command'),
        format('reconciliation has listed everything up to %s', document_jobs_internal.alert_time(v_state.watermark)),
        coalesce(v_window, '{}'::jsonb));

    -- Unreadable e-mails: the level is the newest one's id, so each new one is told once.
    select count(*) as n, max(u.id) as newest, string_agg(distinct u.reason, '; ') as reasons into v_open
      from document_jobs_internal.open_unreadable() u;
    v_sent := v_sent + document_jobs_internal.set_outage_once(
        'reconciliation_unreadable',
        coalesce(v_open.newest, 0),
        format('Resend listed %s e-mails that reconciliation cannot read (%s): they are not recorded, and they may be faxes. What can be read of them: document-jobs-admin health, or the overview of the admin screen',
               v_open.n, v_open.reasons),
        'every e-mail reconciliation could not read is recorded now, or older than Resend''s retention',
        jsonb_build_object('count', v_open.n, 'emails', document_jobs_internal.unreadable_shown(20)));
    return v_sent;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.check_reconciliation() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.check_record_guards() IS 'The health check''s watch over the record: the outage records_unguarded holds while record_guard_problems finds any guard out of place (alerting as set_outage does, at most once an hour while it holds), and closes when all are back. The cron job document-jobs-health calls it. A guard switched off and back on between two runs is not seen: the outage says what is, not what was.';
CREATE FUNCTION document_jobs_internal.check_record_guards() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_problems jsonb := document_jobs_internal.record_guard_problems();
begin
    return document_jobs_internal.set_outage(
        'records_unguarded',
        jsonb_array_length(v_problems) > 0,
        format('%s guards of the record of received faxes are not in place: %s', jsonb_array_length(v_problems),
               (select string_agg(format('%s %s %s%s', p ->> 'table', p ->> 'guard', p ->> 'problem',
                                         case when p ? 'grantee'
                                              then format(' (%s to %s)', p ->> 'privilege', p ->> 'grantee') end),
                                  '; ')
                  from jsonb_array_elements(v_problems) p)),
        'every guard of the record of received faxes is in place again',
        jsonb_build_object('problems', v_problems));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.check_record_guards() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.check_webhooks_missing() IS 'The health check''s webhooks_missing: opens when reconciliation recorded an e-mail that Resend had received more than webhooks_missing_after before, received after the outage last closed (missing_received_at: one received before belongs to the outage already told, and is only counted, late_after_close); closes once a webhook delivers an e-mail received after the outage opened. Alerts through set_outage like every outage; the cron job document-jobs-health calls it after check_health.';
CREATE FUNCTION document_jobs_internal.check_webhooks_missing() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_outage document_jobs_internal.outages;
    v_state public.document_jobs_reconciliation;
    v_late record;
    v_delivered timestamptz;
    v_active boolean;
    v_sent int;
begin
    select * into v_outage from document_jobs_internal.outages o where o.cause = 'webhooks_missing';
    select * into v_state from public.document_jobs_reconciliation r;
    -- The newest e-mail reconciliation found whose webhook was that late (evidence for the alert).
    select e.received_at, e.provider_email_id into v_late
      from public.fax_received_emails e
     where e.found_by = 'reconciliation' and e.received_at is not null
       and e.reconciled_at - e.received_at > v_state.webhooks_missing_after
     order by e.received_at desc
     limit 1;
    if v_outage.active then
        -- Closes once a webhook delivers an e-mail received after the outage opened.
        select max(e.received_at) into v_delivered
          from public.fax_received_emails e
         where e.found_by = 'webhook' and e.received_at > v_outage.since;
        v_active := v_delivered is null;
    else
        -- Opens on a late e-mail received after it last closed.
        v_active := coalesce(v_state.missing_received_at > coalesce(v_state.outage_closed_at, '-infinity'), false);
    end if;
    v_sent := document_jobs_internal.set_outage(
        'webhooks_missing',
        v_active,
        format('reconciliation recorded e-mails that Resend received more than %s before and no webhook delivered (the newest received at %s); until webhooks come again, reconciliation alone records new faxes',
               v_state.webhooks_missing_after, document_jobs_internal.alert_time(v_late.received_at)),
        format('a webhook delivered an e-mail received at %s, after the outage began',
               document_jobs_internal.alert_time(v_delivered)),
        jsonb_build_object('newest_missing_received_at', v_late.received_at,
                           'newest_missing_email', v_late.provider_email_id,
                           'found_at', v_state.missing_found_at,
                           'delivered_received_at', v_delivered));
    if v_outage.active and not v_active then
        update public.document_jobs_reconciliation r set outage_closed_at = now(), late_after_close = 0;
    end if;
    return v_sent;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.check_webhooks_missing() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.continue_reconciliation() IS 'Trigger: a reconcile_emails job that completes with a cursor kept (it stopped at its page bound) enqueues its follow-up with a kick; the unique index lets it in once this one is no longer live.';
CREATE FUNCTION document_jobs_internal.continue_reconciliation() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    if exists (select 1 from public.document_jobs_reconciliation r where r.cursor is not null) then
        perform public.enqueue_document_jobs_reconciliation();
    end if;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.continue_reconciliation() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.current_pg_net_generation() IS 'The generation of pg_net ids in use, beginning a new one when a crash emptied the marker; the rows of older generations then give up their pg_net ids, which pg_net hands out again. Called under post_worker''s lock.';
CREATE FUNCTION document_jobs_internal.current_pg_net_generation() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_generation bigint;
begin
    select g.generation into v_generation from document_jobs_internal.pg_net_generation g;
    if v_generation is null then
        v_generation := nextval('document_jobs_internal.pg_net_generations');
        insert into document_jobs_internal.pg_net_generation (generation) values (v_generation);
        update document_jobs_internal.worker_requests w
           set request_id = null
         where w.request_id is not null
           and w.pg_net_generation is distinct from v_generation;
    end if;
    return v_generation;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.current_pg_net_generation() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) IS 'The term anywhere in an e-mail row''s sender or subject (ILIKE, the term''s own %, _ and \ taken literally), as SQL over the row alias p_alias: the search walk''s check, job by job.';
CREATE FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
    select format('(%1$s.from_address ilike %2$L or %1$s.subject ilike %2$L)', p_alias,
                  document_jobs_internal.like_pattern(p_q))
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.email_matches_sql(p_alias text, p_q text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.emails_from_sender(p_sender text, p_limit integer) IS 'The e-mails whose sender holds p_sender (ILIKE, its own %, _ and \ taken literally): at most p_limit of them (p_limit means "maybe more"). The senders come from email_senders (its trigram index, for three characters or more) and their e-mails from the hash index on the sender. The text goes into the statement as a literal, so that the planner sees the pattern it plans for.';
CREATE FUNCTION document_jobs_internal.emails_from_sender(p_sender text, p_limit integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
    v_emails uuid[];
begin
    execute format(
        'select array(select e.id
                        from document_jobs_internal.email_senders s
                       cross join lateral (select e.id from public.fax_received_emails e
                                            where e.from_address = s.from_address limit %1$s) e
                       where s.from_address ilike %2$L
                       limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_sender))
       into v_emails;
    return v_emails;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.emails_from_sender(p_sender text, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) IS 'The e-mails whose sender or subject holds the term, whose provider''s id is the term, or (an id prefix of 6 or more hex characters) whose jobs jobs_with_id_prefix names: at most p_limit of them (p_limit means "maybe more"). The senders come from email_senders and their e-mails from the hash index, the subjects from their trigram index (which needs three characters of the term), the ids from their text indexes, each part''s read stopping at p_limit. The term goes into the statement as a literal, so that the planner sees the pattern (and its trigrams) it plans for.';
CREATE FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
    v_emails uuid[];
begin
    execute format(
        'select array(
             (select e.id
                from document_jobs_internal.email_senders s
               cross join lateral (select e.id from public.fax_received_emails e
                                    where e.from_address = s.from_address limit %1$s) e
               where s.from_address ilike %2$L
               limit %1$s)
             union
             (select e.id from public.fax_received_emails e where e.subject ilike %2$L limit %1$s)
             union
             select x from document_jobs_internal.emails_with_provider_id(%3$L) x
             union
             (select j.fax_received_email_id
                from document_jobs_internal.jobs_with_id_prefix(%4$L, %1$s) p
                join public.document_jobs j on j.id = p.job_id
               where j.fax_received_email_id is not null)
             limit %1$s)',
        p_limit, document_jobs_internal.like_pattern(p_q), p_q, document_jobs_internal.id_prefix(p_q))
       into v_emails;
    return v_emails;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.emails_matching(p_q text, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) IS 'The e-mails whose provider''s id is p_provider_email_id, whichever the provider: the unique index is on (provider, provider_email_id), so the providers are listed first (a loose index scan, one probe each) and each is looked up with the id. A plain search by the id alone would read the whole table.';
CREATE FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) RETURNS SETOF uuid
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    with recursive providers (provider) as (
        select min(e.provider) from public.fax_received_emails e
        union all
        select (select min(e.provider) from public.fax_received_emails e where e.provider > p.provider)
          from providers p
         where p.provider is not null
    )
    select e.id
      from providers p
      join public.fax_received_emails e on e.provider = p.provider and e.provider_email_id = p_provider_email_id
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.emails_with_provider_id(p_provider_email_id text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.enqueue_prepare_fax() IS 'Trigger document_jobs_prepare_fax: a fetch_email job that completes for an e-mail with stored attachments enqueues the e-mail''s prepare_fax job (none when one is live), without a kick: the invocation that completed the fetch claims it in its chain, or its follow-up or the cron does.';
CREATE FUNCTION document_jobs_internal.enqueue_prepare_fax() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    if exists (select 1 from public.fax_received_email_attachments a
                where a.fax_received_email_id = new.fax_received_email_id) then
        insert into public.document_jobs (kind, fax_received_email_id)
        values ('prepare_fax', new.fax_received_email_id)
        on conflict (kind, fax_received_email_id) where status in ('queued', 'running') do nothing;
    end if;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.enqueue_prepare_fax() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fail_expired() IS 'The sweep, run by every claim and by invoke_document_jobs: running jobs whose lease passed with no attempt left would otherwise stay running forever (they are not claimable), so they end failed with outcome lease_expired; returns how many. SKIP LOCKED: concurrent sweepers never wait for each other, and whoever holds a row sweeps it. PL/pgSQL rather than SQL: it keeps its plan, where a SQL function with SET is planned again on every call.';
CREATE FUNCTION document_jobs_internal.fail_expired() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_failed int;
begin
    update public.document_jobs j
       set status = 'failed',
           lease_until = null,
           finished_at = now(),
           attempt_outcome = 'lease_expired',
           last_error_code = 'lease_expired',
           last_error_message = 'the lease of the last attempt expired before the job finished'
     where j.id = any (array(
               select e.id
                 from public.document_jobs e
                where e.status = 'running'
                  and e.lease_until < now()
                  and e.attempts >= e.max_attempts
                  for update skip locked));
    get diagnostics v_failed = row_count;
    return v_failed;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fail_expired() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_document_types() IS 'The kinds of document a fax is filed as (書類の種類), in the order the screen offers them: what fax_index.doc_type and the search accept.';
CREATE FUNCTION document_jobs_internal.fax_document_types() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO ''
    AS $$
    select array['請求書', '注文書', '納品書', '見積書', '契約書', '領収書', 'その他']
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_document_types() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_export_read(p_export public.fax_exports) IS 'An export as the screen shows it: its range, progress (written of total, bytes), its job''s state and last error code, and once finished its stored parts, index.csv and SHA256SUMS (path in bucket, size, SHA-256).';
CREATE FUNCTION document_jobs_internal.fax_export_read(p_export public.fax_exports) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'id', p_export.id, 'job_id', p_export.job_id, 'requested_at', p_export.requested_at,
        'requested_by_email', p_export.requested_by_email, 'date_from', p_export.date_from,
        'date_to', p_export.date_to, 'stored_before', p_export.stored_before, 'total', p_export.total,
        'written', p_export.written, 'bytes', p_export.bytes, 'finished_at', p_export.finished_at,
        'bucket', p_export.bucket,
        'state', (select j.status from public.document_jobs j where j.id = p_export.job_id),
        'error_code', (select j.last_error_code from public.document_jobs j where j.id = p_export.job_id),
        'index', case when p_export.finished_at is not null then jsonb_build_object(
                     'path', p_export.index_path, 'size_bytes', p_export.index_size_bytes,
                     'sha256', p_export.index_sha256) end,
        'sums', case when p_export.finished_at is not null then jsonb_build_object(
                    'path', p_export.sums_path, 'size_bytes', p_export.sums_size_bytes,
                    'sha256', p_export.sums_sha256) end,
        'parts', coalesce((select jsonb_agg(jsonb_build_object('part', p.part, 'path', p.storage_path,
                                                               'size_bytes', p.size_bytes, 'sha256', p.sha256,
                                                               'originals', p.originals) order by p.part)
                             from public.fax_export_parts p where p.export_id = p_export.id), '[]'))
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_export_read(p_export public.fax_exports) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_handling_read(p_fax_received_email_id uuid, p_limit integer) IS 'A fax''s handling (fax_handling_summary) with its marks, newest first, at most p_limit (1 to 200): who, when, from and to which state and assignee, the note given. Null when there is no such e-mail.';
CREATE FUNCTION document_jobs_internal.fax_handling_read(p_fax_received_email_id uuid, p_limit integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_summary jsonb := document_jobs_internal.fax_handling_summary(p_fax_received_email_id);
begin
    perform document_jobs_internal.require(p_fax_received_email_id is not null,
                                           'p_fax_received_email_id must not be null');
    perform document_jobs_internal.require(p_limit between 1 and 200, 'p_limit must be between 1 and 200');
    if v_summary is null then
        return null;
    end if;
    return v_summary || jsonb_build_object('history', coalesce((
        select jsonb_agg(jsonb_build_object(
                   'at', x.at, 'actor_id', x.actor_id, 'actor_email', x.actor_email, 'from', x.from_state,
                   'to', x.to_state, 'from_assignee_email', x.from_assignee_email,
                   'to_assignee_email', x.to_assignee_email, 'note', x.note, 'audit_id', x.audit_id)
               order by x.id desc)
          from (select * from public.fax_handling_history y
                 where y.fax_received_email_id = p_fax_received_email_id
                 order by y.id desc limit p_limit) x), '[]'));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_handling_read(p_fax_received_email_id uuid, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_handling_summary(p_fax_received_email_id uuid) IS 'A fax''s handling as the screen shows it beside the fax: {"fax_received_email_id", "state" (new when never marked), "assignee_id", "assignee_email", "note", "updated_at", "updated_by_email"}; null when there is no such e-mail. For every view that lists or shows a fax.';
CREATE FUNCTION document_jobs_internal.fax_handling_summary(p_fax_received_email_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return (select case when e.id is not null then jsonb_build_object(
                       'fax_received_email_id', e.id,
                       'state', coalesce(h.state, 'new'),
                       'assignee_id', h.assignee_id,
                       'assignee_email', h.assignee_email,
                       'note', h.note,
                       'updated_at', h.updated_at,
                       'updated_by_email', h.updated_by_email) end
              from (select p_fax_received_email_id as id) x
              left join public.fax_received_emails e on e.id = x.id
              left join public.fax_handling h on h.fax_received_email_id = e.id);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_handling_summary(p_fax_received_email_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_index_json(p_index public.fax_index) IS 'A fax_index row''s four fields as JSON, as the history and the reads give them; null for no row.';
CREATE FUNCTION document_jobs_internal.fax_index_json(p_index public.fax_index) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case when p_index.fax_received_email_id is not null then jsonb_build_object(
        'transaction_date', p_index.transaction_date, 'amount', p_index.amount,
        'counterparty', p_index.counterparty, 'doc_type', p_index.doc_type) end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_index_json(p_index public.fax_index) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_index_read(p_fax_id uuid) IS 'A fax''s index for its page: its fields, their version, their history oldest first (the latest 500 changes) and its total, and the document types offered.';
CREATE FUNCTION document_jobs_internal.fax_index_read(p_fax_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_row public.fax_index;
begin
    select * into v_row from public.fax_index i where i.fax_received_email_id = p_fax_id;
    return jsonb_build_object(
        'index', document_jobs_internal.fax_index_json(v_row),
        'index_version', coalesce(v_row.version, 0),
        'index_history', coalesce((
            select jsonb_agg(jsonb_build_object('id', h.id, 'at', h.at, 'actor_id', h.actor_id,
                                                'actor_email', h.actor_email, 'before', h.before, 'after', h.after,
                                                'reason', h.reason, 'version', h.version) order by h.id)
              from (select * from public.fax_index_history h where h.fax_received_email_id = p_fax_id
                     order by h.id desc limit 500) h), '[]'),
        'index_history_total', (select count(*) from public.fax_index_history h
                                 where h.fax_received_email_id = p_fax_id),
        'document_types', to_jsonb(document_jobs_internal.fax_document_types()));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_index_read(p_fax_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_index_values(p_values jsonb) IS 'A fax''s index fields as set_fax_index takes them, checked and normalized to all four keys (transaction_date, amount, counterparty, doc_type; null for empty); 22023 naming the field otherwise.';
CREATE FUNCTION document_jobs_internal.fax_index_values(p_values jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_key text;
    v_date date;
    v_amount numeric;
    v_text text;
    v_type text;
begin
    perform document_jobs_internal.require(p_values is not null and jsonb_typeof(p_values) = 'object',
                                           'p_values must be a JSON object');
    for v_key in select jsonb_object_keys(p_values) loop
        perform document_jobs_internal.require(
            v_key = any (array['transaction_date', 'amount', 'counterparty', 'doc_type']),
            format('p_values has an unknown key %s (known: transaction_date, amount, counterparty, doc_type)',
                   to_jsonb(v_key)));
    end loop;
    if jsonb_typeof(p_values -> 'transaction_date') is distinct from 'null'
       and nullif(p_values ->> 'transaction_date', '') is not null then
        perform document_jobs_internal.require(
            jsonb_typeof(p_values -> 'transaction_date') = 'string'
            and (p_values ->> 'transaction_date') ~ '^\d{4}-\d{2}-\d{2}$',
            'transaction_date must be a date, YYYY-MM-DD');
        begin
            v_date := (p_values ->> 'transaction_date')::date;
        exception
            when datetime_field_overflow or invalid_datetime_format then
                raise exception using errcode = '22023', message = 'transaction_date must be a date, YYYY-MM-DD';
        end;
        perform document_jobs_internal.require(v_date between date '1950-01-01' and date '2099-12-31',
                                               'transaction_date must be between 1950-01-01 and 2099-12-31');
    end if;
    if jsonb_typeof(p_values -> 'amount') is distinct from 'null' and p_values ? 'amount' then
        perform document_jobs_internal.require(jsonb_typeof(p_values -> 'amount') = 'number',
                                               'amount must be a number of yen');
        v_amount := (p_values ->> 'amount')::numeric;
        perform document_jobs_internal.require(v_amount = trunc(v_amount) and v_amount between 0 and 999999999999,
                                               'amount must be whole yen, 0 to 999,999,999,999');
    end if;
    if jsonb_typeof(p_values -> 'counterparty') is distinct from 'null' and p_values ? 'counterparty' then
        perform document_jobs_internal.require(jsonb_typeof(p_values -> 'counterparty') = 'string',
                                               'counterparty must be text');
        v_text := nullif(btrim(p_values ->> 'counterparty'), '');
        perform document_jobs_internal.require(
            v_text is null or (length(v_text) <= 200 and v_text !~ '[[:cntrl:]]'),
            'counterparty must be at most 200 characters, with no control characters');
    end if;
    if jsonb_typeof(p_values -> 'doc_type') is distinct from 'null' and nullif(p_values ->> 'doc_type', '') is not null
    then
        v_type := p_values ->> 'doc_type';
        perform document_jobs_internal.require(v_type = any (document_jobs_internal.fax_document_types()),
            format('doc_type must be one of %s', array_to_string(document_jobs_internal.fax_document_types(), ', ')));
    end if;
    return jsonb_build_object('transaction_date', v_date, 'amount', v_amount::bigint, 'counterparty', v_text,
                              'doc_type', v_type);
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_index_values(p_values jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_number_digits(p_subject text, p_from text) IS 'The digits of a fax''s subject and From line as the inbox''s search by number reads them: full-width digits and dashes made ASCII, the separators inside a number ((, ), +, spaces, dashes) dropped, any other text a "|". Indexed (fax_received_emails_number_digits).';
CREATE FUNCTION document_jobs_internal.fax_number_digits(p_subject text, p_from text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO ''
    AS $$
    select regexp_replace(
               regexp_replace(
                   translate(coalesce(p_subject, '') || '|' || coalesce(p_from, ''),
                             '０１２３４５６７８９（）＋‐‑‒–—―−﹘﹣－ーｰ─　',
                             '0123456789()+------------- '),
                   '[^0-9()+ -]+', '|', 'g'),
               '[()+ -]+', '', 'g')
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_number_digits(p_subject text, p_from text) FROM PUBLIC;
GRANT ALL ON FUNCTION document_jobs_internal.fax_number_digits(p_subject text, p_from text) TO service_role;

COMMENT ON FUNCTION document_jobs_internal.fax_number_runs(p_digits text) IS 'The runs of three digits or more in a fax''s digits (fax_number_digits: the digits between two "|"), distinct; a run of more than 40 digits as "…" (no number: an index entry has a size limit that a sender''s subject must never reach; fax_number_runs(repeat(''0'', 41)) names it), so that the search checks those e-mails in full. A search for three digits or more matches a fax exactly when one of its runs holds them. Indexed (fax_received_emails_number_runs).';
CREATE FUNCTION document_jobs_internal.fax_number_runs(p_digits text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO ''
    AS $$
    select array(select distinct case when length(r) > 40 then '…' else r end
                   from regexp_split_to_table(p_digits, '\|') r
                  where length(r) >= 3)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_number_runs(p_digits text) FROM PUBLIC;
GRANT ALL ON FUNCTION document_jobs_internal.fax_number_runs(p_digits text) TO service_role;

COMMENT ON FUNCTION document_jobs_internal.fax_objects(p_email_id uuid) IS 'The objects in Storage a fax has: its originals, its raw e-mail, the viewing PDFs and thumbnails derived from them (fax_views/), and any object a fetch job discarded as wrong; [{"bucket", "key", "kind"}], what admin_delete_fax records for the purge to remove.';
CREATE FUNCTION document_jobs_internal.fax_objects(p_email_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce(jsonb_agg(jsonb_build_object('bucket', o.bucket, 'key', o.key, 'kind', o.kind)
                              order by o.ord, o.key), '[]')
      from (select a.bucket, a.storage_path as key, 'original' as kind, 1 as ord
              from public.fax_received_email_attachments a where a.fax_received_email_id = p_email_id
            union
            select r.bucket, r.storage_path, 'raw_message', 2
              from public.fax_received_email_raw_messages r
             where r.fax_received_email_id = p_email_id and r.storage_path is not null
            union
            select a.bucket, v.view_path, 'view', 3
              from public.fax_received_email_attachments a
              join public.fax_attachment_views v on v.attachment_id = a.id
             where a.fax_received_email_id = p_email_id and v.view_path is not null
            union
            select a.bucket, v.thumbnail_path, 'thumbnail', 4
              from public.fax_received_email_attachments a
              join public.fax_attachment_views v on v.attachment_id = a.id
             where a.fax_received_email_id = p_email_id and v.thumbnail_path is not null
            union
            select d.bucket, d.storage_path, 'discarded', 5
              from document_jobs_internal.discarded_objects d where d.fax_received_email_id = p_email_id) o
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_objects(p_email_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_retention(p_email public.fax_received_emails) IS 'A fax''s retention: {"keep_until" (a date in the office''s zone), "time_zone", "deletable" (the office''s today is past it), and the settings it was computed with}.';
CREATE FUNCTION document_jobs_internal.fax_retention(p_email public.fax_received_emails) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
               'keep_until', k.keep_until, 'time_zone', s.time_zone,
               'deletable', k.keep_until < (now() at time zone s.time_zone)::date,
               'fiscal_year_end_month', s.fiscal_year_end_month,
               'filing_deadline_months', s.filing_deadline_months, 'retention_years', s.retention_years)
      from public.office_settings s
     cross join lateral (select document_jobs_internal.keep_until(
                                    coalesce(p_email.received_at, p_email.created_at)) as keep_until) k
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_retention(p_email public.fax_received_emails) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_storing(p_email_id uuid) IS 'How a fax stands, from its jobs as far as they are kept: "stored" (completed, or no job left, which only the purge of completed jobs leaves), "fetching" while its fetch_email job is live, "failed" with its code, "preparing" while its prepare_fax job is live; "job_id" is the fetch job shown, for an admin''s link.';
CREATE FUNCTION document_jobs_internal.fax_storing(p_email_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return (
    with fetch_job as (
        select f.id, f.status, f.last_error_code
          from (select j.id, j.status, j.last_error_code, 0 as rank, j.created_at from public.document_jobs j
                 where j.kind = 'fetch_email' and j.fax_received_email_id = p_email_id
                   and j.status in ('queued', 'running')
                union all
                (select j.id, j.status, j.last_error_code, 1, j.created_at from public.document_jobs j
                  where j.fax_received_email_id = p_email_id and j.status in ('completed', 'failed')
                    and j.kind = 'fetch_email'
                  order by j.created_at desc limit 1)) f
         order by f.rank, f.created_at desc
         limit 1
    )
    select jsonb_build_object(
        'storing', coalesce((select case f.status when 'failed' then 'failed' when 'completed' then 'stored'
                                                  else 'fetching' end from fetch_job f), 'stored'),
        'error_code', (select f.last_error_code from fetch_job f where f.status = 'failed'),
        'job_id', (select f.id from fetch_job f),
        'preparing', exists (select 1 from public.document_jobs j
                              where j.kind = 'prepare_fax' and j.fax_received_email_id = p_email_id
                                and j.status in ('queued', 'running'))));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_storing(p_email_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fax_summary(p_email public.fax_received_emails) IS 'A fax as the inbox lists it: the e-mail''s facts, its line, its pages and page-1 thumbnail (the key: the screen signs it), a view that could not be made, how it stands (fax_storing), who is dealing with it ("handling", as fax_handling_summary answers it: new for a fax never marked) and its index fields ("index", null before any entry).';
CREATE FUNCTION document_jobs_internal.fax_summary(p_email public.fax_received_emails) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return jsonb_build_object(
        'id', p_email.id,
        'received_at', coalesce(p_email.received_at, p_email.created_at),
        'from', left(p_email.from_address, 300),
        'subject', left(p_email.subject, 300),
        'to', (select left(t, 300) from unnest(p_email.to_addresses) t limit 1),
        'line', (select jsonb_build_object('address', l.address, 'name', l.name, 'number', l.number)
                   from unnest(p_email.to_addresses) with ordinality t(entry, n)
                   join public.fax_lines l on l.address = document_jobs_internal.address_of(t.entry)
                  order by t.n limit 1),
        'found_by', p_email.found_by,
        'reconciled_at', p_email.reconciled_at,
        'attachments', (select count(*) from public.fax_received_email_attachments a
                         where a.fax_received_email_id = p_email.id),
        'pages', (select sum(v.page_count) from public.fax_received_email_attachments a
                    join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
                   where a.fax_received_email_id = p_email.id),
        'thumbnail', (select jsonb_build_object('bucket', a.bucket, 'path', v.thumbnail_path)
                        from public.fax_received_email_attachments a
                        join public.fax_attachment_views v on v.attachment_id = a.id and v.source_sha256 = a.sha256
                       where a.fax_received_email_id = p_email.id and v.thumbnail_path is not null
                       order by a.created_at, a.id limit 1),
        'view_error_code', (select v.error_code from public.fax_received_email_attachments a
                              join public.fax_attachment_views v on v.attachment_id = a.id
                             where a.fax_received_email_id = p_email.id and v.error_code is not null
                             order by a.created_at, a.id limit 1),
        -- fax_handling_summary's answer, read here from the row in hand (one index probe a fax).
        'handling', coalesce(
            (select jsonb_build_object('fax_received_email_id', h.fax_received_email_id, 'state', h.state,
                                       'assignee_id', h.assignee_id, 'assignee_email', h.assignee_email,
                                       'note', h.note, 'updated_at', h.updated_at,
                                       'updated_by_email', h.updated_by_email)
               from public.fax_handling h where h.fax_received_email_id = p_email.id),
            jsonb_build_object('fax_received_email_id', p_email.id, 'state', 'new', 'assignee_id', null,
                               'assignee_email', null, 'note', null, 'updated_at', null, 'updated_by_email', null)))
        || document_jobs_internal.fax_storing(p_email.id)
        || jsonb_build_object('index', (select document_jobs_internal.fax_index_json(i) from public.fax_index i
                                              where i.fax_received_email_id = p_email.id));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fax_summary(p_email public.fax_received_emails) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit integer) IS 'The e-mails that may match an inbox filter, through its indexes, at most p_limit (p_limit means "maybe more"), or null when no index can answer: a number''s digits, an id, a sender or term of three characters or more, an assignee, or handling states without new (fax_handling''s indexes).';
CREATE FUNCTION document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
    v_found uuid[];
    v_long uuid[];
begin
    if p_filter ? 'number' and length(p_filter ->> 'number') >= 3 then
        -- The runs of digits that hold the number, among the distinct ones, then the e-mails with one
        -- of them (fax_received_emails_number_runs: exact, no regular expression per e-mail); and
        -- the few with a run too long to index, checked in full.
        execute format('select array(select e.id from public.fax_received_emails e where %s limit %s)',
                       document_jobs_internal.number_runs_sql(p_filter ->> 'number'), p_limit)
           into v_found;
        execute format('select array(select e.id from public.fax_received_emails e'
                       ' where document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(e.subject, e.from_address)) @> %L::text[]'
                       ' and document_jobs_internal.fax_number_digits(e.subject, e.from_address) like %L limit %s)',
                       document_jobs_internal.fax_number_runs(repeat('0', 41)),
                       '%' || (p_filter ->> 'number') || '%', p_limit)
           into v_long;
        return array(select distinct f.id from unnest(v_found || v_long) f(id) limit p_limit);
    end if;
    if p_filter ? 'q' and (p_filter ->> 'q') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        return array[(p_filter ->> 'q')::uuid] || document_jobs_internal.emails_matching(p_filter ->> 'q', p_limit);
    end if;
    if p_filter ? 'sender' and length(p_filter ->> 'sender') >= 3 then
        return document_jobs_internal.emails_matching(p_filter ->> 'sender', p_limit);
    end if;
    if p_filter ? 'q' and length(p_filter ->> 'q') >= 3 then
        return document_jobs_internal.emails_matching(p_filter ->> 'q', p_limit);
    end if;
    -- Whose a fax is, or a handling that is not new: the faxes marked so, from fax_handling's
    -- indexes (a new fax is one with no row: only a walk finds those).
    if p_filter ? 'assignee' then
        return array(select h.fax_received_email_id from public.fax_handling h
                      where lower(h.assignee_email) = p_filter ->> 'assignee' and h.state <> 'new' limit p_limit);
    end if;
    if p_filter ? 'handling' and not p_filter -> 'handling' ? 'new' then
        return array(select h.fax_received_email_id from public.fax_handling h
                      where h.state = any (array(select jsonb_array_elements_text(p_filter -> 'handling')))
                      limit p_limit);
    end if;
    return null;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_candidates(p_filter jsonb, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_filter(p_filter jsonb) IS 'The inbox''s filter, checked and normalized: {"received_from", "received_to", "sender", "number", "line", "q", "handling" (the handling states wanted), "assignee" (the e-mail of whom a fax is, lower case)}, every key optional; anything else is refused with 22023 naming the key.';
CREATE FUNCTION document_jobs_internal.faxes_filter(p_filter jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
    v_key text;
    v_filter jsonb := '{}'::jsonb;
    v_text text;
    v_from timestamptz;
    v_to timestamptz;
begin
    if p_filter is null or p_filter = 'null'::jsonb then
        return v_filter;
    end if;
    perform document_jobs_internal.require(jsonb_typeof(p_filter) = 'object', 'p_filter must be a JSON object');
    for v_key in select jsonb_object_keys(p_filter) loop
        perform document_jobs_internal.require(
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q', 'handling',
                               'assignee']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q, '
                   'handling, assignee)', to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);
    begin
        v_from := (p_filter ->> 'received_from')::timestamptz;
        v_to := (p_filter ->> 'received_to')::timestamptz;
    exception
        when invalid_datetime_format or datetime_field_overflow or invalid_text_representation then
            raise exception using errcode = '22023',
                message = 'p_filter.received_from and received_to must be timestamps (ISO 8601, e.g. 2026-12-01T09:00:00+09:00)';
    end;
    perform document_jobs_internal.require(v_from is null or v_to is null or v_from < v_to,
        'p_filter.received_from must be before received_to');
    if v_from is not null then
        v_filter := v_filter || jsonb_build_object('received_from', v_from);
    end if;
    if v_to is not null then
        v_filter := v_filter || jsonb_build_object('received_to', v_to);
    end if;
    foreach v_key in array array['sender', 'q', 'line'] loop
        if p_filter ? v_key then
            v_text := btrim(p_filter ->> v_key);
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(v_text) between 1 and 200
                and v_text !~ '[[:cntrl:]]',
                format('p_filter.%s must be 1 to 200 characters, with no control characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key,
                case when v_key = 'line' then document_jobs_internal.address_of(v_text) else v_text end);
        end if;
    end loop;
    if p_filter ? 'handling' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'handling') = 'array' and jsonb_array_length(p_filter -> 'handling') > 0
            and not exists (select 1 from jsonb_array_elements(p_filter -> 'handling') s
                             where jsonb_typeof(s) <> 'string'
                                or not (s #>> '{}') = any (document_jobs_internal.handling_states())),
            'p_filter.handling must be a non-empty array of new, in_progress, done');
        v_filter := v_filter || jsonb_build_object('handling',
            (select jsonb_agg(distinct s) from jsonb_array_elements_text(p_filter -> 'handling') s));
    end if;
    if p_filter ? 'assignee' then
        v_text := lower(btrim(p_filter ->> 'assignee'));
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'assignee') = 'string' and length(v_text) between 1 and 320
            and v_text !~ '[[:cntrl:]]',
            'p_filter.assignee must be an e-mail address of 1 to 320 characters');
        v_filter := v_filter || jsonb_build_object('assignee', v_text);
    end if;
    if p_filter ? 'number' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'number') = 'string' and (p_filter ->> 'number') ~ '^[0-9]{1,20}$',
            'p_filter.number must be 1 to 20 ASCII digits');
        v_filter := v_filter || jsonb_build_object('number', p_filter ->> 'number');
    end if;
    return v_filter;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_filter(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_index_filter(p_filter jsonb) IS 'The index keys of an inbox filter, checked and normalized: date_from, date_to (YYYY-MM-DD, included), amount_min, amount_max (whole yen, included), counterparty (partial, kana_fold), doc_type; the inbox''s other keys (handling and assignee among them) are left to faxes_filter; 22023 for a key no inbox filter knows.';
CREATE FUNCTION document_jobs_internal.faxes_index_filter(p_filter jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_key text;
    v_filter jsonb := '{}'::jsonb;
    v_from date;
    v_to date;
    v_text text;
begin
    if p_filter is null or p_filter = 'null'::jsonb then
        return v_filter;
    end if;
    perform document_jobs_internal.require(jsonb_typeof(p_filter) = 'object', 'p_filter must be a JSON object');
    for v_key in select jsonb_object_keys(p_filter) loop
        perform document_jobs_internal.require(
            v_key = any (array['received_from', 'received_to', 'sender', 'number', 'line', 'q', 'handling', 'assignee',
                               'date_from', 'date_to', 'amount_min', 'amount_max', 'counterparty', 'doc_type']),
            format('p_filter has an unknown key %s (known: received_from, received_to, sender, number, line, q,'
                   ' handling, assignee, date_from, date_to, amount_min, amount_max, counterparty, doc_type)',
                   to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);
    foreach v_key in array array['date_from', 'date_to'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and (p_filter ->> v_key) ~ '^\d{4}-\d{2}-\d{2}$',
                format('p_filter.%s must be a date, YYYY-MM-DD', v_key));
            begin
                if v_key = 'date_from' then v_from := (p_filter ->> v_key)::date; else v_to := (p_filter ->> v_key)::date; end if;
            exception
                when datetime_field_overflow or invalid_datetime_format then
                    raise exception using errcode = '22023', message = format('p_filter.%s must be a date, YYYY-MM-DD', v_key);
            end;
            v_filter := v_filter || jsonb_build_object(v_key, p_filter -> v_key);
        end if;
    end loop;
    perform document_jobs_internal.require(v_from is null or v_to is null or v_from <= v_to,
        'p_filter.date_from must not be after date_to');
    foreach v_key in array array['amount_min', 'amount_max'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                (jsonb_typeof(p_filter -> v_key) = 'number' and (p_filter ->> v_key) ~ '^\d{1,12}$')
                or (jsonb_typeof(p_filter -> v_key) = 'string' and (p_filter ->> v_key) ~ '^\d{1,12}$'),
                format('p_filter.%s must be whole yen, 0 to 999,999,999,999', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, (p_filter ->> v_key)::bigint);
        end if;
    end loop;
    perform document_jobs_internal.require(
        not (v_filter ? 'amount_min' and v_filter ? 'amount_max')
        or (v_filter ->> 'amount_min')::bigint <= (v_filter ->> 'amount_max')::bigint,
        'p_filter.amount_min must not be more than amount_max');
    if p_filter ? 'counterparty' then
        v_text := btrim(p_filter ->> 'counterparty');
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'counterparty') = 'string' and length(v_text) between 1 and 200
            and v_text !~ '[[:cntrl:]]' and length(document_jobs_internal.kana_fold(v_text)) >= 1,
            'p_filter.counterparty must be 1 to 200 characters, with no control characters');
        v_filter := v_filter || jsonb_build_object('counterparty', v_text);
    end if;
    if p_filter ? 'doc_type' then
        perform document_jobs_internal.require(
            (p_filter ->> 'doc_type') = any (document_jobs_internal.fax_document_types()),
            format('p_filter.doc_type must be one of %s',
                   array_to_string(document_jobs_internal.fax_document_types(), ', ')));
        v_filter := v_filter || jsonb_build_object('doc_type', p_filter ->> 'doc_type');
    end if;
    return v_filter;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_index_filter(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_index_sql(p_filter jsonb) IS 'A normalized index filter''s conditions as SQL over a fax_index row "i" (the values written in, for the planner): the date and amount ranges, the type, and the counterparty as the folded names of fax_counterparties that contain the folded term (fax_index_by_counterparty); "true" when there are none.';
CREATE FUNCTION document_jobs_internal.faxes_index_sql(p_filter jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_pattern text;
    v_names text[];
    v_counterparty text;
begin
    if p_filter ? 'counterparty' then
        v_pattern := document_jobs_internal.like_pattern(document_jobs_internal.kana_fold(p_filter ->> 'counterparty'));
        v_names := array(select c.folded from document_jobs_internal.fax_counterparties c
                          where c.folded like v_pattern order by c.folded);
        v_counterparty := case when cardinality(v_names) = 1 then format('i.counterparty_folded = %L', v_names[1])
                               else format('i.counterparty_folded = any (%L::text[])', v_names) end;
    end if;
    return concat_ws(' and ', 'true',
        case when p_filter ? 'date_from' then format('i.transaction_date >= %L::date', p_filter ->> 'date_from') end,
        case when p_filter ? 'date_to' then format('i.transaction_date <= %L::date', p_filter ->> 'date_to') end,
        case when p_filter ? 'amount_min' then format('i.amount >= %s', (p_filter ->> 'amount_min')::bigint) end,
        case when p_filter ? 'amount_max' then format('i.amount <= %s', (p_filter ->> 'amount_max')::bigint) end,
        case when p_filter ? 'doc_type' then format('i.doc_type = %L', p_filter ->> 'doc_type') end,
        v_counterparty);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_index_sql(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_match_sql(p_filter jsonb) IS 'A normalized inbox filter''s conditions as SQL over an e-mail row "e", the time range excepted: sender text, number digits, line, search term, handling state (new for a fax never marked) and assignee, the last two read by a scalar subquery of the e-mail''s row (a primary key probe each: an EXISTS became a join that read all of one clerk''s faxes); "true" when there are none.';
CREATE FUNCTION document_jobs_internal.faxes_match_sql(p_filter jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
    select concat_ws(' and ', 'true',
        case when p_filter ? 'sender' then format('(e.from_address ilike %1$L or e.subject ilike %1$L)',
            document_jobs_internal.like_pattern(p_filter ->> 'sender')) end,
        case when p_filter ? 'number' then format(
            'document_jobs_internal.fax_number_digits(e.subject, e.from_address) like %L',
            '%' || (p_filter ->> 'number') || '%') end,
        case when p_filter ? 'line' then format(
            'exists (select 1 from unnest(e.to_addresses) t where document_jobs_internal.address_of(t) = %L)',
            p_filter ->> 'line') end,
        case when p_filter ? 'q' then format(
            '(%s e.provider_email_id = %L or e.from_address ilike %3$L or e.subject ilike %3$L)',
            case when (p_filter ->> 'q') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                 then format('e.id = %L::uuid or', p_filter ->> 'q') else '' end,
            p_filter ->> 'q', document_jobs_internal.like_pattern(p_filter ->> 'q')) end,
        case when p_filter ? 'handling' then format(
            'coalesce((select h.state from public.fax_handling h where h.fax_received_email_id = e.id), ''new'')'
            ' = any (%L::text[])', array(select jsonb_array_elements_text(p_filter -> 'handling'))) end,
        case when p_filter ? 'assignee' then format(
            '(select lower(h.assignee_email) from public.fax_handling h where h.fax_received_email_id = e.id'
            ' and h.state <> ''new'') = %L', p_filter ->> 'assignee') end)
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_match_sql(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.faxes_time_sql(p_filter jsonb) IS 'A normalized inbox filter''s received-time range as SQL over an e-mail row "e" (the received time, else the row''s creation); "true" when it has none.';
CREATE FUNCTION document_jobs_internal.faxes_time_sql(p_filter jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select concat_ws(' and ', 'true',
        case when p_filter ? 'received_from' then format('coalesce(e.received_at, e.created_at) >= %L::timestamptz',
                                                         p_filter ->> 'received_from') end,
        case when p_filter ? 'received_to' then format('coalesce(e.received_at, e.created_at) < %L::timestamptz',
                                                       p_filter ->> 'received_to') end)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.faxes_time_sql(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.fill_hourly_outcomes() IS 'Computes the settled hours of the last 7 days missing from hourly_outcomes (an hour that ended more than 10 minutes ago) and keeps them; returns how many it computed (none, on almost every call).';
CREATE FUNCTION document_jobs_internal.fill_hourly_outcomes() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_settled timestamptz := date_trunc('hour', now() - interval '10 minutes', 'UTC');
    v_first_missing timestamptz;
    v_last_missing timestamptz;
    v_filled int;
begin
    delete from document_jobs_internal.hourly_outcomes h where h.hour < v_settled - interval '8 days';
    select min(s.hour), max(s.hour) into v_first_missing, v_last_missing
      from generate_series(v_settled - interval '168 hours', v_settled - interval '1 hour', interval '1 hour') s(hour)
     where not exists (select 1 from document_jobs_internal.hourly_outcomes h where h.hour = s.hour);
    if v_first_missing is null then
        return 0;
    end if;
    insert into document_jobs_internal.hourly_outcomes (hour, completed, failed, retried, latency_p50_ms, latency_p95_ms)
    select s.hour, coalesce(o.completed, 0), coalesce(o.failed, 0), coalesce(o.retried, 0), o.latency_p50_ms,
           o.latency_p95_ms
      from generate_series(v_first_missing, v_last_missing, interval '1 hour') s(hour)
      left join document_jobs_internal.outcomes_by_hour(v_first_missing, v_last_missing + interval '1 hour') o
        on o.hour = s.hour
    on conflict (hour) do nothing;
    get diagnostics v_filled = row_count;
    return v_filled;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.fill_hourly_outcomes() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.finding_advice(p_code text) IS 'What to do about a finding (an alert a job raises once without failing), in English: lib/failures.py FINDINGS[code].operator_en, word for word (tests/database/test_advice_is_lib_advice.py).';
CREATE FUNCTION document_jobs_internal.finding_advice(p_code text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case p_code
        when 'original_differs' then 'Nothing was overwritten. Download each version (document-jobs-admin download with the job id writes them all; the alert names their SHA-256), compare them with the fax in the Resend dashboard (Emails, Receiving) while Resend still keeps it, and record which one the office relies on, as its rule against improper correction and deletion asks. A worker that stopped between an upload and its record leaves such an object; if versions keep appearing, report it to the developers with the job id.'
    end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.finding_advice(p_code text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.finding_advice_ja(p_code text) IS 'finding_advice in Japanese: lib/failures.py FINDINGS[code].operator_ja, word for word.';
CREATE FUNCTION document_jobs_internal.finding_advice_ja(p_code text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case p_code
        when 'original_differs' then '上書きされたものはありません。各版をダウンロードし（ジョブIDを指定した document-jobs-admin download ですべて書き出せます。各版の SHA-256 は通知に記載されています）、Resend に残っている間に Resend のダッシュボード（Emails → Receiving）の FAX と照合して、事務所がどちらに依拠するかを、訂正削除の防止に関する事務処理規程に従って記録してください。アップロードから記録までの間に止まったワーカーがこのような版を残すことがあります。繰り返し起きる場合は、ジョブIDを添えて開発者に連絡してください。'
    end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.finding_advice_ja(p_code text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.guard_record_tables() IS 'Puts the guards in place on every record table (record_tables), idempotently: creates each trigger of record_guards that is missing, re-creates one whose definition differs, makes each ENABLE ALWAYS, and revokes UPDATE, DELETE, TRUNCATE, REFERENCES and TRIGGER from every role but the owner; answers how many triggers it put back. The outage records_unguarded''s advice, and how a table that becomes a record is guarded (added to record_tables, then this called in the same migration).';
CREATE FUNCTION document_jobs_internal.guard_record_tables() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_table regclass;
    v_name name;
    v_column name;
    v_grantee name;
    v_state text;
    v_put_back int := 0;
begin
    /* DDL on tables named at run time: dynamic by nature, and volatile, which plpgsql_check cannot
     * see through EXECUTE.
     * @plpgsql_check_options: performance_warnings = false
     */
    for v_table, v_name, v_state in
        select pg_catalog.to_regclass(g.record_table), g.trigger_name,
               case when tr.oid is null then 'missing'
                    when pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition then 'altered'
                    when tr.tgenabled <> 'A' then 'not_enabled' end
          from document_jobs_internal.record_guards() g
          left join pg_catalog.pg_trigger tr
            on tr.tgrelid = pg_catalog.to_regclass(g.record_table) and tr.tgname = g.trigger_name
         where pg_catalog.to_regclass(g.record_table) is not null
    loop
        continue when v_state is null;
        if v_state = 'altered' then
            execute format('drop trigger %I on %s', v_name, v_table);
        end if;
        if v_state in ('missing', 'altered') then
            -- record_guards' own text, made of its constants: the one definition health compares with.
            execute format('%s', (select g.definition from document_jobs_internal.record_guards() g
                                   where g.record_table = v_table::text and g.trigger_name = v_name));
        end if;
        execute format('alter table %s enable always trigger %I', v_table, v_name);
        v_put_back := v_put_back + 1;
    end loop;
    -- Every role but the owner loses what could change a row (or hang a trigger or a foreign key
    -- on the table), whatever was granted: the clients' roles, and any other the owner granted to.
    for v_table, v_grantee in
        select pg_catalog.to_regclass(t.record_table), r.grantee
          from document_jobs_internal.record_tables() t
         cross join (values ('public'::name), ('anon'), ('authenticated'), ('service_role')) r(grantee)
         where pg_catalog.to_regclass(t.record_table) is not null
        union
        select c.oid::regclass, case when a.grantee = 0 then 'public'::name else pg_catalog.pg_get_userbyid(a.grantee) end
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(c.relacl) a
         where a.grantee <> c.relowner
    loop
        execute format('revoke update, delete, truncate, references, trigger on table %s from %I', v_table, v_grantee);
    end loop;
    for v_table, v_column, v_grantee in
        select c.oid::regclass, at.attname,
               case when a.grantee = 0 then 'public'::name else pg_catalog.pg_get_userbyid(a.grantee) end
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
          join pg_catalog.pg_attribute at on at.attrelid = c.oid
         cross join lateral pg_catalog.aclexplode(at.attacl) a
         where a.privilege_type in ('UPDATE', 'REFERENCES')
    loop
        execute format('revoke update (%I), references (%I) on table %s from %I', v_column, v_column, v_table,
                       v_grantee);
    end loop;
    return v_put_back;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.guard_record_tables() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.handling_after(p_before public.fax_handling, p_fax_received_email_id uuid, p_state text, p_note text, p_actor_id uuid, p_actor_email text) IS 'The handling a mark leaves: p_before (the fax''s row, all null when it has none) marked p_state by the actor, who becomes its assignee (nobody for new), with p_note (null keeps the note, an empty one clears it). Writes nothing.';
CREATE FUNCTION document_jobs_internal.handling_after(p_before public.fax_handling, p_fax_received_email_id uuid, p_state text, p_note text, p_actor_id uuid, p_actor_email text) RETURNS public.fax_handling
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_after public.fax_handling;
begin
    v_after.fax_received_email_id := p_fax_received_email_id;
    v_after.state := p_state;
    v_after.assignee_id := case when p_state <> 'new' then p_actor_id end;
    v_after.assignee_email := case when p_state <> 'new' then p_actor_email end;
    v_after.note := case when p_note is null then p_before.note else nullif(btrim(p_note), '') end;
    v_after.updated_at := now();
    v_after.updated_by := p_actor_id;
    v_after.updated_by_email := p_actor_email;
    return v_after;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.handling_after(p_before public.fax_handling, p_fax_received_email_id uuid, p_state text, p_note text, p_actor_id uuid, p_actor_email text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.handling_bulk_progress(p_bulk_action_id uuid) IS 'Where a bulk mark done stands: {"bulk_action_id", "scope", "filter", "fax_count", "changed", "skipped", "processed", "done", "started_at", "finished_at", "note", "not_changed" (the first 100 faxes it did not mark, with why)}.';
CREATE FUNCTION document_jobs_internal.handling_bulk_progress(p_bulk_action_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
               'bulk_action_id', b.id, 'scope', b.scope, 'filter', b.filter, 'fax_count', b.fax_count, 'changed', b.changed,
               'skipped', b.skipped, 'processed', b.changed + b.skipped, 'done', b.finished_at is not null,
               'started_at', b.started_at, 'finished_at', b.finished_at, 'note', b.note,
               'not_changed', coalesce((
                   select jsonb_agg(jsonb_build_object('fax_received_email_id', x.fax_received_email_id,
                                                      'reason', x.reason)
                                    order by x.applied_at, x.fax_received_email_id)
                     from (select * from document_jobs_internal.handling_bulk_action_faxes y
                            where y.bulk_action_id = b.id and y.outcome = 'skipped'
                            order by y.applied_at, y.fax_received_email_id limit 100) x), '[]'))
      from document_jobs_internal.handling_bulk_actions b
     where b.id = p_bulk_action_id
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.handling_bulk_progress(p_bulk_action_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.handling_changes(p_before public.fax_handling, p_after public.fax_handling) IS 'Whether a mark changes what a person sees of a fax''s handling (its state, who has it, its note): a mark that does not is neither written nor audited.';
CREATE FUNCTION document_jobs_internal.handling_changes(p_before public.fax_handling, p_after public.fax_handling) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select (coalesce(p_before.state, 'new'), p_before.assignee_id, p_before.note)
           is distinct from (p_after.state, p_after.assignee_id, p_after.note)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.handling_changes(p_before public.fax_handling, p_after public.fax_handling) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.handling_states() IS 'The handling states of a fax, in the order it goes through them: new (未対応, no one has taken it; a fax without a fax_handling row), in_progress (対応中, someone has), done (対応済み).';
CREATE FUNCTION document_jobs_internal.handling_states() RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select array['new', 'in_progress', 'done']
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.handling_states() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.held_export(p_job_id uuid, p_generation integer) IS 'The export of an export_faxes job while (p_job_id, p_generation) holds it running; null once it does not.';
CREATE FUNCTION document_jobs_internal.held_export(p_job_id uuid, p_generation integer) RETURNS public.fax_exports
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_export public.fax_exports;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform 1 from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'export_faxes';
    if not found then
        return null;
    end if;
    select * into v_export from public.fax_exports e where e.job_id = p_job_id;
    perform document_jobs_internal.require(found, format('job %s is no export''s', p_job_id));
    return v_export;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.held_export(p_job_id uuid, p_generation integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.hold_fetch_job(p_job_id uuid, p_generation integer, p_lease interval) IS 'The fence of the fetch_email job''s recording calls: its e-mail while (p_job_id, p_generation) holds the job (the lease renewed by p_lease and a streak of time-budget releases ended, or the row share-locked without one), else null.';
CREATE FUNCTION document_jobs_internal.hold_fetch_job(p_job_id uuid, p_generation integer, p_lease interval) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    if p_lease is null then
        select j.fax_received_email_id into v_email_id
          from public.document_jobs j
         where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
           for share;
        return v_email_id;
    end if;
    if p_lease <= interval '0' or p_lease > (document_jobs_internal.limits()).lease_max then
        raise exception using errcode = '22023', message = (document_jobs_internal.limits()).lease_rule;
    end if;
    update public.document_jobs j
       set lease_until = now() + p_lease,
           budget_releases = 0
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'fetch_email'
    returning j.fax_received_email_id into v_email_id;
    return v_email_id;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.hold_fetch_job(p_job_id uuid, p_generation integer, p_lease interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.id_prefix(p_text text) IS 'A term as an id prefix: lower case, without hyphens, when it is 6 to 32 hex characters then; else null.';
CREATE FUNCTION document_jobs_internal.id_prefix(p_text text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
    select case when v ~ '^[0-9a-f]{6,32}$' then v end
      from (select lower(replace(btrim(p_text), '-', '')) v) s
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.id_prefix(p_text text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.invocation_cap() IS 'How many worker invocations may be in flight: document_jobs_settings.max_invocations_in_flight, or else three times the requests per second the Resend limiter leaves this queue (12 at 5 requests a second with 20 % left to others), 1 to 20, and 12 without a limiter row. Every start of the worker goes through post_worker, which holds to it.';
CREATE FUNCTION document_jobs_internal.invocation_cap() RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return (
        select coalesce(
            s.max_invocations_in_flight,
            (select least(20, greatest(1, ceil(3 * l.requests_per_second * (1 - l.share_for_others))))::int
               from public.document_jobs_rate_limits l
              where l.provider = 'resend'),
            12)
          from public.document_jobs_settings s);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.invocation_cap() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.invocations_in_flight() IS 'Worker invocations in flight: POSTed in the pg_net generation in use within the last maxDuration (300 s) and not answered. A crash erases pg_net''s answers and restarts its ids, so only the current generation counts, and only the answers of that span are looked at (pg_net''s answer table keeps 6 hours of everyone''s answers, indexed on created).';
CREATE FUNCTION document_jobs_internal.invocations_in_flight() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_max_duration constant interval := interval '300 seconds';  -- vercel.json: the worker's maxDuration
    v_since timestamptz := clock_timestamp() - c_max_duration;
    v_generation bigint := document_jobs_internal.pg_net_generation_in_use();
begin
    return (
        select count(*)::int
          from document_jobs_internal.worker_requests w
         where w.created_at > v_since
           and w.pg_net_generation = v_generation
           and not exists (select 1 from net._http_response r where r.created > v_since and r.id = w.request_id));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.invocations_in_flight() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.is_time_zone(p_name text) IS 'Whether p_name is an IANA time zone the server knows (pg_timezone_names), e.g. Asia/Tokyo: for the check of office_settings.time_zone.';
CREATE FUNCTION document_jobs_internal.is_time_zone(p_name text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    -- pg_timezone_names lists the IANA names the server knows; an abbreviation (JST) or an offset
    -- (+09) is refused: an abbreviation is ambiguous and an offset ignores a zone's rules.
    return exists (select from pg_catalog.pg_timezone_names where name = p_name);
end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.is_time_zone(p_name text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) IS 'The failure alert of one job (alert_body): its machine-readable fields, and the receiver''s message made of quoted lines (the job and its error; its e-mail''s sender, subject and file names, at most 5; the CLI commands that retry it and show its history). PL/pgSQL rather than SQL: it keeps its plans, where a SQL function with SET is planned again on every call.';
CREATE FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    c_files constant int := 5;
    c_program constant text := 'document-jobs-admin';
    v_email public.fax_received_emails;
    v_names text[];
    v_files jsonb := '[]'::jsonb;
    v_retry text := format('%s retry %s', c_program, p_job.id);
    v_history text := format('%s show %s', c_program, p_job.id);
begin
    select * into v_email from public.fax_received_emails e where e.id = p_job.fax_received_email_id;
    if jsonb_typeof(v_email.data -> 'attachments') = 'array' then
        v_names := array(select coalesce(a.value ->> 'filename', '(no name)')
                           from jsonb_array_elements(v_email.data -> 'attachments') a
                          where jsonb_typeof(a.value) = 'object');
    end if;
    for i in 1..least(coalesce(cardinality(v_names), 0), c_files) loop
        v_files := v_files || case when i > 1 then '[", "]'::jsonb else '[]'::jsonb end
                           || jsonb_build_array(jsonb_build_object('quote', v_names[i], 'max', 100));
    end loop;
    if cardinality(v_names) > c_files then
        v_files := v_files || jsonb_build_array(format(' and %s more', cardinality(v_names) - c_files));
    end if;
    return document_jobs_internal.alert_body(
        jsonb_build_object(
            'event', 'document_job_failed',
            'job', jsonb_build_object(
                'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
                'max_attempts', p_job.max_attempts, 'generation', p_job.generation, 'created_at', p_job.created_at,
                'finished_at', p_job.finished_at, 'fax_received_email_id', p_job.fax_received_email_id),
            'email', case when v_email.id is not null then jsonb_build_object(
                'id', v_email.id, 'provider_email_id', v_email.provider_email_id, 'from', v_email.from_address,
                'subject', v_email.subject, 'received_at', coalesce(v_email.received_at, v_email.created_at),
                'filenames', to_jsonb(v_names)) end,
            'error', jsonb_build_object('code', p_job.last_error_code, 'message', p_job.last_error_message),
            'attempts', p_job.attempts,
            'retry_command', v_retry,
            'history_command', v_history,
            'sent_at', now()),
        jsonb_build_array(
            jsonb_build_array(
                format('Fax not fetched: job %s failed after %s of %s attempts (', p_job.id, p_job.attempts,
                       p_job.max_attempts),
                jsonb_build_object('quote', coalesce(p_job.last_error_code, 'no error code'), 'max', 100),
                ': ',
                jsonb_build_object('quote', p_job.last_error_message, 'max', 300),
                ').'),
            jsonb_build_array('From: ', jsonb_build_object('quote', v_email.from_address)),
            jsonb_build_array('Subject: ', jsonb_build_object('quote', v_email.subject)),
            jsonb_build_array('Files: ') || case when v_files = '[]' then '["(none)"]' else v_files end,
            jsonb_build_array('Received: ', coalesce(document_jobs_internal.alert_time(
                                                         coalesce(v_email.received_at, v_email.created_at)),
                                                     '(unknown)')),
            jsonb_build_array('Retry: ', jsonb_build_object('quote', v_retry)),
            jsonb_build_array('History: ', jsonb_build_object('quote', v_history))));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.job_failed_alert(p_job public.document_jobs) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.job_filter(p_filter jsonb) IS 'A filter, checked and normalized: {"states": [...], "kind", "error_code", "received_from", "received_to", "sender", "q", "fax_jobs_only"}, every key optional; anything else is refused with 22023 and a message naming the key. "Received" is when the webhook recorded the e-mail (the job''s created_at); "sender" is text of the e-mail''s sender (its From line), "q" the search term (ids, sender or subject), "fax_jobs_only" true leaves out the jobs of no e-mail (the queue''s own: reconcile_emails).';
CREATE FUNCTION document_jobs_internal.job_filter(p_filter jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_key text;
    v_filter jsonb := '{}'::jsonb;
    v_text text;
    v_from timestamptz;
    v_to timestamptz;
begin
    if p_filter is null or p_filter = 'null'::jsonb then
        return v_filter;
    end if;
    perform document_jobs_internal.require(jsonb_typeof(p_filter) = 'object', 'p_filter must be a JSON object');
    for v_key in select jsonb_object_keys(p_filter) loop
        perform document_jobs_internal.require(
            v_key = any (array['states', 'kind', 'error_code', 'received_from', 'received_to', 'sender', 'q', 'fax_jobs_only']),
            format('p_filter has an unknown key %s (known: states, kind, error_code, received_from, received_to, sender, q, fax_jobs_only)',
                   to_jsonb(v_key)));
    end loop;
    p_filter := jsonb_strip_nulls(p_filter);

    if p_filter ? 'states' then
        perform document_jobs_internal.require(
            jsonb_typeof(p_filter -> 'states') = 'array' and jsonb_array_length(p_filter -> 'states') > 0
            and not exists (select 1 from jsonb_array_elements(p_filter -> 'states') s
                             where jsonb_typeof(s) <> 'string'
                                or s #>> '{}' not in ('queued', 'running', 'completed', 'failed')),
            'p_filter.states must be a non-empty array of queued, running, completed, failed');
        v_filter := v_filter || jsonb_build_object('states',
            (select jsonb_agg(distinct s) from jsonb_array_elements_text(p_filter -> 'states') s));
    end if;

    foreach v_key in array array['kind', 'error_code'] loop
        if p_filter ? v_key then
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(p_filter ->> v_key) between 1 and 100,
                format('p_filter.%s must be a string of 1 to 100 characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, p_filter ->> v_key);
        end if;
    end loop;

    begin
        v_from := (p_filter ->> 'received_from')::timestamptz;
        v_to := (p_filter ->> 'received_to')::timestamptz;
    exception
        when invalid_datetime_format or datetime_field_overflow or invalid_text_representation then
            raise exception using errcode = '22023',
                message = 'p_filter.received_from and received_to must be timestamps (ISO 8601, e.g. 2026-12-01T09:00:00+09:00)';
    end;
    perform document_jobs_internal.require(v_from is null or v_to is null or v_from < v_to,
        'p_filter.received_from must be before received_to');
    if v_from is not null then
        v_filter := v_filter || jsonb_build_object('received_from', v_from);
    end if;
    if v_to is not null then
        v_filter := v_filter || jsonb_build_object('received_to', v_to);
    end if;

    foreach v_key in array array['sender', 'q'] loop
        if p_filter ? v_key then
            v_text := btrim(p_filter ->> v_key);
            perform document_jobs_internal.require(
                jsonb_typeof(p_filter -> v_key) = 'string' and length(v_text) between 1 and 200
                and v_text !~ '[[:cntrl:]]',
                format('p_filter.%s must be 1 to 200 characters, with no control characters', v_key));
            v_filter := v_filter || jsonb_build_object(v_key, v_text);
        end if;
    end loop;
    if p_filter ? 'fax_jobs_only' then
        perform document_jobs_internal.require(jsonb_typeof(p_filter -> 'fax_jobs_only') = 'boolean',
            'p_filter.fax_jobs_only must be true or false');
        if (p_filter ->> 'fax_jobs_only')::boolean then
            v_filter := v_filter || jsonb_build_object('fax_jobs_only', true);
        end if;
    end if;
    return v_filter;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.job_filter(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) IS 'A normalized filter as one SQL condition over a job row "j" (states, kind, error code, received time, sender, search, the jobs of an e-mail only); "true" when it has none. The meaning of a filter, in one place: the sender as the set of its e-mails (email_senders and the hash index on the sender), the walks check it job by job (sender_match_sql), with the same meaning.';
CREATE FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select concat_ws(' and ',
        'true',
        case when p_filter ? 'states' then format('j.status = any (%L::text[])',
            array(select jsonb_array_elements_text(p_filter -> 'states'))) end,
        case when p_filter ? 'kind' then format('j.kind = %L', p_filter ->> 'kind') end,
        case when p_filter ? 'error_code' then format('j.last_error_code = %L', p_filter ->> 'error_code') end,
        case when p_filter ? 'received_from' then format('j.created_at >= %L::timestamptz', p_filter ->> 'received_from') end,
        case when p_filter ? 'received_to' then format('j.created_at < %L::timestamptz', p_filter ->> 'received_to') end,
        case when p_filter ? 'sender' then format(
            'j.fax_received_email_id in (select se.id from document_jobs_internal.email_senders ss'
            ' join public.fax_received_emails se on se.from_address = ss.from_address where ss.from_address ilike %L)',
            document_jobs_internal.like_pattern(p_filter ->> 'sender')) end,
        case when p_filter ? 'fax_jobs_only' then 'j.fax_received_email_id is not null' end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') end)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.job_filter_sql(p_filter jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.job_search_sql(p_q text) IS 'A normalized filter''s search term as SQL over a job row "j": the job''s id or its e-mail''s id (when the term is a UUID), an id prefix (id_prefix: the job''s id, its e-mail''s id or the provider''s e-mail id starting with it), the provider''s e-mail id, or the term anywhere in the sender or the subject.';
CREATE FUNCTION document_jobs_internal.job_search_sql(p_q text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_is_uuid boolean := p_q ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
    v_prefix text := document_jobs_internal.id_prefix(p_q);
begin
    return format(
        '(%s %s exists (select 1 from public.fax_received_emails e where e.id = j.fax_received_email_id'
        ' and (e.provider_email_id = %L or %s %s)))',
        case when v_is_uuid then format('j.id = %L::uuid or j.fax_received_email_id = %L::uuid or', p_q, p_q) else '' end,
        case when v_prefix is not null then format(
            'replace(j.id::text, ''-'', '''') like %1$L or replace(j.fax_received_email_id::text, ''-'', '''') like %1$L or',
            v_prefix || '%') else '' end,
        p_q,
        case when v_prefix is not null then format(
            'lower(replace(e.provider_email_id, ''-'', '''')) like %L or', v_prefix || '%') else '' end,
        document_jobs_internal.email_matches_sql('e', p_q));
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.job_search_sql(p_q text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) IS 'A job and its e-mail as the admin screen''s list shows them (long texts shortened to 300 characters).';
CREATE FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select jsonb_build_object(
        'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
        'max_attempts', p_job.max_attempts, 'created_at', p_job.created_at, 'run_after', p_job.run_after,
        'started_at', p_job.started_at, 'finished_at', p_job.finished_at, 'last_error_code', p_job.last_error_code,
        'last_error_message', left(p_job.last_error_message, 300),
        'email', case when p_email.id is not null then jsonb_build_object(
            'id', p_email.id, 'provider_email_id', p_email.provider_email_id, 'from', p_email.from_address,
            'subject', left(p_email.subject, 300), 'received_at', p_email.received_at) end)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.job_summary(p_job public.document_jobs, p_email public.fax_received_emails) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) IS 'The newest p_limit jobs that match a filter and p_extra (a keyset condition), as a query of (id, created_at, fax_received_email_id) for the caller to order by (created_at desc, id desc) and limit again. One branch per state, each with its own ORDER BY and LIMIT, so that each is a range scan of document_jobs_by_status_received (or document_jobs_by_error_code) that stops after p_limit entries and the planner merges the branches (Merge Append). Without the branches'' own LIMIT, PostgreSQL 15 plans the union of a million completed jobs as a scan and a sort of all of them (make bench, section "Admin screen").';
CREATE FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select string_agg(format(
               '(select j.id, j.created_at, j.fax_received_email_id from public.document_jobs j'
               ' where j.status = %L and %s and %s order by j.created_at desc, j.id desc limit %s)',
               s, document_jobs_internal.job_filter_sql(p_filter - 'states'), p_extra, p_limit), ' union all ')
      from jsonb_array_elements_text(coalesce(p_filter -> 'states', '["queued", "running", "completed", "failed"]')) s
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.jobs_by_state_sql(p_filter jsonb, p_extra text, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.jobs_with_id_prefix(p_prefix text, p_limit integer) IS 'The jobs whose id, e-mail row id or provider''s e-mail id starts with p_prefix (an id_prefix), and which of the three matched: at most p_limit per kind, each one range scan of its text index (document_jobs_by_id_text, fax_received_emails_by_id_text, fax_received_emails_by_provider_id_text). A null prefix matches nothing.';
CREATE FUNCTION document_jobs_internal.jobs_with_id_prefix(p_prefix text, p_limit integer) RETURNS TABLE(job_id uuid, matched text)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    with bounds (low, high) as (
        select p_prefix, left(p_prefix, -1) || chr(ascii(right(p_prefix, 1)) + 1) where p_prefix is not null
    )
    (select j.id, 'job_id' from bounds b, public.document_jobs j
      where replace(j.id::text, '-', '') ~>=~ b.low and replace(j.id::text, '-', '') ~<~ b.high limit p_limit)
    union all
    (select j.id, 'email_id' from bounds b, public.fax_received_emails e
       join public.document_jobs j on j.fax_received_email_id = e.id
      where replace(e.id::text, '-', '') ~>=~ b.low and replace(e.id::text, '-', '') ~<~ b.high limit p_limit)
    union all
    (select j.id, 'provider_email_id' from bounds b, public.fax_received_emails e
       join public.document_jobs j on j.fax_received_email_id = e.id
      where lower(replace(e.provider_email_id, '-', '')) ~>=~ b.low
        and lower(replace(e.provider_email_id, '-', '')) ~<~ b.high limit p_limit)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.jobs_with_id_prefix(p_prefix text, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.kana_fold(p_text text) IS 'Text as the counterparty search compares it: NFKC, katakana made hiragana, white space dropped, lower case.';
CREATE FUNCTION document_jobs_internal.kana_fold(p_text text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
    select lower(regexp_replace(
        translate(normalize(p_text, nfkc),
                  'ァアィイゥウェエォオカガキギクグケゲコゴサザシジスズセゼソゾタダチヂッツヅテデトドナニヌネノハバパヒビピフブプヘベペホボポマミムメモャヤュユョヨラリルレロヮワヰヱヲンヴヵヶ',
                  'ぁあぃいぅうぇえぉおかがきぎくぐけげこごさざしじすずせぜそぞただちぢっつづてでとどなにぬねのはばぱひびぴふぶぷへべぺほぼぽまみむめもゃやゅゆょよらりるれろゎわゐゑをんゔゕゖ'),
        '\s+', '', 'g'))
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.kana_fold(p_text text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.keep_until(p_received timestamp with time zone) IS 'The last day (in the office''s time zone) a fax received at p_received must be kept: retention_years from the day after the filing deadline (filing_deadline_months after the end of the fiscal year, ending in fiscal_year_end_month, that the day of p_received in office_settings.time_zone belongs to). The one computation of it; null for a null time.';
CREATE FUNCTION document_jobs_internal.keep_until(p_received timestamp with time zone) RETURNS date
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select (make_date(y.end_year, s.fiscal_year_end_month, 1)
            + make_interval(years => s.retention_years, months => s.filing_deadline_months + 1))::date - 1
      from public.office_settings s
     cross join lateral (select (p_received at time zone s.time_zone)::date as day) d
     -- The fiscal year the day belongs to ends in month M of its own year, or of the next when the
     -- day is past M.
     cross join lateral (select extract(year from d.day)::int
                                + (extract(month from d.day)::int > s.fiscal_year_end_month)::int as end_year) y
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.keep_until(p_received timestamp with time zone) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.like_pattern(p_q text) IS '''%term%'' for ILIKE, with the term''s own %, _ and \ taken literally.';
CREATE FUNCTION document_jobs_internal.like_pattern(p_q text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select '%' || replace(replace(replace(p_q, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.like_pattern(p_q text) FROM PUBLIC;

COMMENT ON TYPE document_jobs_internal.limits IS 'The row limits() answers: a named composite type, not a record, because the planner folds an immutable function without arguments into a constant only when it returns a named type.';
CREATE TYPE document_jobs_internal.limits AS (
	lease_max interval,
	lease_rule text,
	retry_after_max interval,
	retry_after_rule text,
	free_budget_releases integer,
	jobs_per_invocation integer,
	invocation_header text
);

COMMENT ON FUNCTION document_jobs_internal.limits() IS 'The bounds and timings the queue functions share, each defined once (tests/test_constants.py pins Python to them).';
CREATE FUNCTION document_jobs_internal.limits() RETURNS document_jobs_internal.limits
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select
        -- a live worker renews its lease with every attachment, and an invocation lives 300 s:
        -- a longer lease only parks a dead worker's job
        interval '1 hour',
        'p_lease must be more than 0 and at most 1 hour',
        -- a provider asking for more (a monthly quota) is asked again after a day
        interval '1 day',
        'p_retry_after must be between 0 and 1 day',
        -- time-budget releases in a row (no attachment stored between them) that give their
        -- attempt back; from the next one on, each counts
        3,
        -- what one worker invocation handles at most (the fan-out divides by it)
        3,
        -- the request header (lowercased, as PostgREST gives request.headers) naming the invocation
        'x-document-jobs-invocation'
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.limits() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) IS 'When the next attempt may start, for every path that puts a job back (as River''s NextRetry). A failure (p_failed_attempt given) waits for its backoff or the provider''s retry-after, whichever is longer; a release (p_failed_attempt null) waits for its delay only.';
CREATE FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) RETURNS timestamp with time zone
    LANGUAGE sql
    SET search_path TO ''
    AS $$
    select now() + case
        when p_failed_attempt is null then coalesce(p_retry_after, interval '0')
        else greatest(document_jobs_internal.backoff(p_failed_attempt), coalesce(p_retry_after, interval '0'))
    end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.next_run_after(p_failed_attempt integer, p_retry_after interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.note_counterparties() IS 'Triggers fax_index_note_counterparties_insert and _update: every folded counterparty written to fax_index is kept in fax_counterparties (once per statement: a load of many faxes pays one insert of its distinct names). Security definer: fax_index is written through set_fax_index, whose caller has no privilege on the helpers'' tables.';
CREATE FUNCTION document_jobs_internal.note_counterparties() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    insert into document_jobs_internal.fax_counterparties (folded)
    select distinct n.counterparty_folded from new_rows n where n.counterparty_folded is not null
    on conflict do nothing;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.note_counterparties() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.note_fax_ready() IS 'Trigger document_jobs_note_fax_ready: a fax becomes ready to announce when its prepare_fax job ends (completed or failed), when its fetch_email job fails, or when its fetch completes with no file; a row of fax_announcements, once per fax. Security definer: a job''s state may be changed by service_role, which may not write the internal schema. A failure to note it is a WARNING and never undoes the job''s change.';
CREATE FUNCTION document_jobs_internal.note_fax_ready() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_stood text;
begin
    v_stood := case
        when new.kind = 'prepare_fax' then case new.status when 'completed' then 'prepared' else 'unprepared' end
        when new.status = 'failed' then 'unfetched'
        -- A fetch that stored files hands over to its prepare_fax job (enqueue_prepare_fax).
        when not exists (select 1 from public.fax_received_email_attachments a
                          where a.fax_received_email_id = new.fax_received_email_id) then 'no_files'
    end;
    if v_stood is not null then
        begin
            insert into document_jobs_internal.fax_announcements (fax_received_email_id, stood)
            values (new.fax_received_email_id, v_stood)
            on conflict (fax_received_email_id) do nothing;
        exception
            when others then
                raise warning 'document jobs: the announcement of e-mail % could not be noted: %',
                    new.fax_received_email_id, sqlerrm;
        end;
    end if;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.note_fax_ready() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.note_number_runs() IS 'Triggers fax_received_emails_note_number_runs_insert and _update: every run of digits an e-mail has is kept in email_number_runs (once per statement). Security definer: the e-mails are written as service_role, which has no privilege on the helpers'' tables.';
CREATE FUNCTION document_jobs_internal.note_number_runs() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    insert into document_jobs_internal.email_number_runs (digits)
    select distinct r from new_rows n cross join unnest(document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(n.subject, n.from_address))) r
    on conflict do nothing;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.note_number_runs() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.note_sender() IS 'Trigger fax_received_emails_note_sender: every sender an e-mail has or had is kept in email_senders, so that a search by sender reads the distinct senders instead of every e-mail. Security definer: the e-mails are written as service_role, which has no privilege on the helpers'' tables.';
CREATE FUNCTION document_jobs_internal.note_sender() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
    if new.from_address is not null then
        insert into document_jobs_internal.email_senders (from_address) values (new.from_address)
        on conflict do nothing;
    end if;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.note_sender() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.note_unreadable(p_items jsonb, p_listed_by text) IS 'Notes the listing items reconciliation could not read (at most 100: {"fingerprint", "provider_email_id", "reason", "item"}), each once (a known fingerprint only gets its last_listed_at); returns how many were new.';
CREATE FUNCTION document_jobs_internal.note_unreadable(p_items jsonb, p_listed_by text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_item jsonb;
    v_id bigint;
    v_new int := 0;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_items) = 'array', 'p_unreadable must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_items) <= 100, 'p_unreadable holds at most 100 items');
    for v_item in select e.value from jsonb_array_elements(p_items) e loop
        perform document_jobs_internal.require(
            jsonb_typeof(v_item) = 'object' and nullif(v_item ->> 'fingerprint', '') is not null
            and length(v_item ->> 'fingerprint') <= 200 and nullif(v_item ->> 'reason', '') is not null
            and jsonb_typeof(v_item -> 'item') = 'object' and length((v_item -> 'item')::text) <= 20000,
            'every item of p_unreadable must be an object with a fingerprint, a reason and an item (at most 20,000 characters)');
        insert into document_jobs_internal.unreadable_listed_emails as u
               (fingerprint, provider_email_id, reason, item, listed_by)
        values (v_item ->> 'fingerprint', nullif(v_item ->> 'provider_email_id', ''), left(v_item ->> 'reason', 500),
                v_item -> 'item', p_listed_by)
        on conflict (fingerprint) do nothing
        returning u.id into v_id;
        if v_id is null then
            update document_jobs_internal.unreadable_listed_emails u
               set last_listed_at = now()
             where u.fingerprint = v_item ->> 'fingerprint';
        else
            v_new := v_new + 1;
        end if;
    end loop;
    return v_new;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.note_unreadable(p_items jsonb, p_listed_by text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.number_runs_sql(p_number text) IS 'A number''s condition (ASCII digits, three or more) over an e-mail row "e" that fax_received_emails_number_runs answers exactly: its runs of digits that hold the number, found among the distinct ones (email_number_runs) and written in. The e-mails whose run is too long to index ("…") are not in it.';
CREATE FUNCTION document_jobs_internal.number_runs_sql(p_number text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return format('document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(e.subject, e.from_address)) && %L::text[]',
                  array(select n.digits from document_jobs_internal.email_number_runs n
                         where n.digits like '%' || p_number || '%' order by n.digits));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.number_runs_sql(p_number text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.object_recorded(p_bucket text, p_storage_path text) IS 'Whether a row of the received record (an attachment''s version, a raw message''s) names the object.';
CREATE FUNCTION document_jobs_internal.object_recorded(p_bucket text, p_storage_path text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select exists (select 1 from public.fax_received_email_attachments a
                    where a.bucket = p_bucket and a.storage_path = p_storage_path)
        or exists (select 1 from public.fax_received_email_raw_messages r
                    where r.bucket = p_bucket and r.storage_path = p_storage_path)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.object_recorded(p_bucket text, p_storage_path text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.office_time(p_at timestamp with time zone) IS 'A time as the office reads it: in its time zone (office_time_zone), with the offset, 2026-12-07 15:04:05 +09:00 (the form of the screen and the CLI). Null for null.';
CREATE FUNCTION document_jobs_internal.office_time(p_at timestamp with time zone) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_local timestamp := p_at at time zone document_jobs_internal.office_time_zone();
    v_offset interval := v_local - (p_at at time zone 'UTC');
begin
    return to_char(v_local, 'YYYY-MM-DD HH24:MI:SS ')
        || case when v_offset < interval '0' then '-' else '+' end
        || to_char(case when v_offset < interval '0' then -v_offset else v_offset end, 'HH24:MI');
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.office_time(p_at timestamp with time zone) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.office_time_zone() IS 'The office''s time zone (office_settings.time_zone): the one place SQL reads it from.';
CREATE FUNCTION document_jobs_internal.office_time_zone() RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$ select time_zone from public.office_settings $$;
REVOKE ALL ON FUNCTION document_jobs_internal.office_time_zone() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) IS 'One line of at most p_max characters: control characters removed, every kind of line break and tab a space, bidirectional controls (which reorder what is shown) dropped, spaces collapsed.';
CREATE FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
    v_line text;
begin
    v_line := regexp_replace(p_text, '[\t\n\v\f\r\u0085\u2028\u2029]', ' ', 'g');
    v_line := regexp_replace(v_line, '[\u0001-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', '', 'g');
    v_line := btrim(regexp_replace(v_line, ' {2,}', ' ', 'g'));
    return case when length(v_line) > p_max then left(v_line, p_max - 1) || '…' else v_line end;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.one_line(p_text text, p_max integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.open_unreadable() IS 'The unreadable listing items still to act on: first listed within retention (Resend may still have the e-mail) and whose id no e-mail row has (a webhook, or a later listing that could read it, records it).';
CREATE FUNCTION document_jobs_internal.open_unreadable() RETURNS SETOF document_jobs_internal.unreadable_listed_emails
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select u.*
      from document_jobs_internal.unreadable_listed_emails u
     where u.first_listed_at > now() - (select r.retention from public.document_jobs_reconciliation r)
       and not exists (select 1 from public.fax_received_emails e
                        where e.provider = 'resend' and e.provider_email_id = u.provider_email_id)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.open_unreadable() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.operator_role(p_user_id uuid, p_session_id uuid, p_roles text[]) IS 'The admin screen operator''s role now, from Supabase Auth''s own tables: refuses (28000 session_ended) a session that is gone, past not_after or another user''s, a user gone, deleted or banned, and (42501 no_role) a role not in p_roles. A clerk may read whatever a viewer may (a role list with viewer lets a clerk in).';
CREATE FUNCTION document_jobs_internal.operator_role(p_user_id uuid, p_session_id uuid, p_roles text[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_role text;
    v_live boolean;
begin
    select u.deleted_at is null and (u.banned_until is null or u.banned_until <= now())
           and (s.not_after is null or s.not_after > now()),
           u.raw_app_meta_data ->> 'document_jobs_role'
      into v_live, v_role
      from auth.sessions s
      join auth.users u on u.id = s.user_id
     where s.id = p_session_id and s.user_id = p_user_id;
    if not coalesce(v_live, false) then
        raise exception 'the session has ended, or its user was deleted or banned: sign in again'
            using errcode = '28000', hint = 'session_ended';
    end if;
    if v_role is null or not (v_role = any (p_roles) or (v_role = 'clerk' and 'viewer' = any (p_roles))) then
        raise exception 'this account has no role on the admin screen that allows this (ask an admin)'
            using errcode = '42501', hint = 'no_role';
    end if;
    return v_role;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.operator_role(p_user_id uuid, p_session_id uuid, p_roles text[]) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.original_differs_alert(p_job_id uuid, p_email_id uuid, p_what text, p_versions jsonb) IS 'Posts the alert original_differs (alert_body: its fields, and lines that quote every version''s size, SHA-256 and key, the e-mail''s sender and subject, the CLI command that downloads every version, and the advice in English and Japanese, finding_advice). Called by the recording calls, which run as the owner (they are security definer): post_alert reads Vault. A failure to post is a WARNING: the versions stay recorded.';
CREATE FUNCTION document_jobs_internal.original_differs_alert(p_job_id uuid, p_email_id uuid, p_what text, p_versions jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_program constant text := 'document-jobs-admin';
    v_email public.fax_received_emails;
    v_lines jsonb;
    v_version jsonb;
    v_download text := format('%s download %s', c_program, p_job_id);
begin
    select * into v_email from public.fax_received_emails e where e.id = p_email_id;
    v_lines := jsonb_build_array(
        jsonb_build_array('Original differs: job ', jsonb_build_object('quote', p_job_id::text),
                          ' found an object already at the key of ', jsonb_build_object('quote', p_what, 'max', 200),
                          ' with other bytes than it downloaded; nothing was replaced, and both are kept:'));
    for v_version in select value from jsonb_array_elements(p_versions) order by (value ->> 'version')::int loop
        v_lines := v_lines || jsonb_build_array(jsonb_build_array(
            format('Version %s: %s bytes, SHA-256 ', v_version ->> 'version', v_version ->> 'size_bytes'),
            jsonb_build_object('quote', v_version ->> 'sha256'), ' at ',
            jsonb_build_object('quote', v_version ->> 'storage_path')));
    end loop;
    v_lines := v_lines || jsonb_build_array(
        jsonb_build_array('From: ', jsonb_build_object('quote', v_email.from_address)),
        jsonb_build_array('Subject: ', jsonb_build_object('quote', v_email.subject)),
        jsonb_build_array('Received: ', coalesce(document_jobs_internal.alert_time(
                                                     coalesce(v_email.received_at, v_email.created_at)), '(unknown)')),
        jsonb_build_array('Download: ', jsonb_build_object('quote', v_download)),
        jsonb_build_array(document_jobs_internal.finding_advice('original_differs')),
        jsonb_build_array(document_jobs_internal.finding_advice_ja('original_differs')));
    perform document_jobs_internal.post_alert(document_jobs_internal.alert_body(
        jsonb_build_object(
            'event', 'original_differs',
            'job', jsonb_build_object('id', p_job_id, 'fax_received_email_id', p_email_id),
            'email', case when v_email.id is not null then jsonb_build_object(
                'id', v_email.id, 'provider_email_id', v_email.provider_email_id, 'from', v_email.from_address,
                'subject', v_email.subject, 'received_at', coalesce(v_email.received_at, v_email.created_at)) end,
            'original', p_what,
            'versions', p_versions,
            'download_command', v_download,
            'advice', document_jobs_internal.finding_advice('original_differs'),
            'advice_ja', document_jobs_internal.finding_advice_ja('original_differs'),
            'sent_at', now()),
        v_lines));
exception
    when others then
        raise warning 'document jobs: the alert original_differs of job % could not be queued: %', p_job_id, sqlerrm;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.original_differs_alert(p_job_id uuid, p_email_id uuid, p_what text, p_versions jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.original_sample(p_count integer, p_since timestamp with time zone, p_recent interval) IS 'p_count stored originals (attachment rows) stored since p_since (null: all), drawn at random: up to half among those stored within p_recent (the week since the last weekly run: a new original is read back soon), the rest among all the others.';
CREATE FUNCTION document_jobs_internal.original_sample(p_count integer, p_since timestamp with time zone, p_recent interval) RETURNS uuid[]
    LANGUAGE sql
    SET search_path TO ''
    AS $$
    with recent as (
        select a.id
          from public.fax_received_email_attachments a
         where a.created_at >= greatest(now() - p_recent, coalesce(p_since, '-infinity'))
         order by random()
         limit ceil(p_count / 2.0)
    ), rest as (
        select a.id
          from public.fax_received_email_attachments a
         where a.created_at >= coalesce(p_since, '-infinity')
           and a.id not in (select r.id from recent r)
         order by random()
         limit p_count - (select count(*) from recent)
    )
    select coalesce(array_agg(s.id), '{}') from (select id from recent union all select id from rest) s
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.original_sample(p_count integer, p_since timestamp with time zone, p_recent interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outage_advice(p_cause text) IS 'The operator''s advice of an outage cause in English (lib/failures.py''s, word for word): original_mismatch''s here, every other cause''s from outage_advice_before_verification.';
CREATE FUNCTION document_jobs_internal.outage_advice(p_cause text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select case p_cause
           when 'original_mismatch' then
               'Run document-jobs-admin verify: it prints each fax (by its short id) whose stored original is missing or differs. For each, look at the object in Storage''s dashboard (its size and last modified time) and in the project''s logs (who wrote or deleted it, and when), then put the original back at the same key from the office''s own copy (the export) and run document-jobs-admin verify again: the outage closes once every original reads as recorded. Record what happened under the office''s rule.'
           else document_jobs_internal.outage_advice_before_verification(p_cause) end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outage_advice(p_cause text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outage_advice_before_verification(p_cause text) IS 'What to do about an outage cause, in English: for a release cause release_causes'' advice, for the others lib/failures.py OUTAGES[cause].advice_en, word for word (tests/database/test_advice_is_lib_advice.py).';
CREATE FUNCTION document_jobs_internal.outage_advice_before_verification(p_cause text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce((select r.advice from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'Check that the cron job document-jobs runs (select * from cron.job_run_details order by start_time desc limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker''s answers (select status_code, count(*) from net._http_response group by 1) and the worker''s logs on Vercel.'
        when 'worker_unauthorized' then
            'Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on Vercel (or that variable is unset: the worker''s log then names it). Store the same value in both (README: Rotating INTERNAL_FUNCTION_SECRET).'
        when 'worker_not_found' then
            'Likely cause: the Vault secret document_jobs_url is wrong (it must be https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in Vault and the deployment on Vercel.'
        when 'webhooks_missing' then
            'Check the webhook in Resend''s dashboard (Webhooks: its URL must be https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and redeploy), and Vercel''s Deployment Protection, which answers 401 before the function runs (docs/DEPLOY.md).'
        when 'reconciliation_stalled' then
            'Run document-jobs-admin health: its reconciliation lines name the last run''s finding or error. A refused key or a wrong URL is an outage of its own (resend_unauthorized, resend_misconfigured); an outage of Resend''s shows on resend-status.com. Meanwhile a fax whose webhook fails is recorded by nothing: if webhooks_missing is open too, run document-jobs-admin reconcile --since with the time of the last complete run.'
        when 'retention_window_closing' then
            'Before the date the alert names, run the command it names (document-jobs-admin reconcile --since ...; health prints it too), then find why the scheduled reconciliation does not keep up (reconciliation_stalled).'
        when 'reconciliation_unreadable' then
            'Look each one up in the Resend dashboard (Emails, Receiving) by what health and the overview show of it (id, time, sender, subject). If it is a fax, save its attachments from there or ask the sender to send it again. Report the listing to the developers: Resend''s list did not have its documented shape.'
        when 'records_unguarded' then
            'Run document-jobs-admin health: it names each guard that is not in place. Only the tables'' owner (postgres: a migration, the SQL editor) can do this: find out who did and why (the database''s logs in the Supabase dashboard). As postgres, select document_jobs_internal.guard_record_tables(); puts every guard back (it re-creates, re-enables and revokes). What changed while a guard was off cannot be told from the database: check the originals against their SHA-256 and record what happened under the office''s rules.'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the database, or the database refuses its key, stopped_because database_unauthorized: check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content from net._http_response order by created desc limit 5) and the worker''s logs on Vercel.'
        end)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outage_advice_before_verification(p_cause text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outage_advice_ja(p_cause text) IS 'The operator''s advice of an outage cause in Japanese (lib/failures.py''s, word for word): original_mismatch''s here, every other cause''s from outage_advice_ja_before_verification.';
CREATE FUNCTION document_jobs_internal.outage_advice_ja(p_cause text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select case p_cause
           when 'original_mismatch' then
               'document-jobs-admin verify を実行してください。保存した原本がない、または一致しない FAX が短い ID とともに表示されます。それぞれについて、Storage のダッシュボードでそのオブジェクト（サイズと最終更新日時）を、プロジェクトのログで誰がいつ書き込みまたは削除したかを確認し、事務所の控え（エクスポート）から同じキーに原本を戻したうえで、もう一度 document-jobs-admin verify を実行してください。すべての原本が記録どおりに読めると、この障害は閉じます。経緯は事務処理規程に従って記録してください。'
           else document_jobs_internal.outage_advice_ja_before_verification(p_cause) end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outage_advice_ja(p_cause text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outage_advice_ja_before_verification(p_cause text) IS 'outage_advice in Japanese: for a release cause release_causes'' advice_ja, for the others lib/failures.py OUTAGES[cause].advice_ja, word for word.';
CREATE FUNCTION document_jobs_internal.outage_advice_ja_before_verification(p_cause text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce((select r.advice_ja from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time desc limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。'
        when 'worker_unauthorized' then
            'Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う（または未設定で、その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください（README: Rotating INTERNAL_FUNCTION_SECRET）。'
        when 'worker_not_found' then
            'Vault のシークレット document_jobs_url が誤っている（https://YOUR-APP.vercel.app/api/internal/document-jobs でなければなりません）か、デプロイがなくなっている可能性が高いです。Vault のURLと Vercel のデプロイを確認してください。'
        when 'webhooks_missing' then
            'Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。'
        when 'reconciliation_stalled' then
            'document-jobs-admin health を実行してください。照合の行に、前回の実行が止まった理由またはエラーが出ます。キーの拒否やURLの誤りはそれぞれ別の障害（resend_unauthorized、resend_misconfigured）として出ます。Resend 側の障害は resend-status.com で確認できます。その間、Webhook が届かなかったファクスを記録するものはありません。webhooks_missing も出ている場合は、最後に完了した実行の時刻を指定して document-jobs-admin reconcile --since を実行してください。'
        when 'retention_window_closing' then
            '通知に書かれた日時より前に、通知に書かれたコマンド（document-jobs-admin reconcile --since ...。health にも表示されます）を実行してください。そのうえで、定期的な照合が追いつかない原因を確認してください（reconciliation_stalled）。'
        when 'reconciliation_unreadable' then
            'health と概要画面に表示される情報（ID、日時、送信者、件名）で、Resend のダッシュボード（Emails → Receiving）から1件ずつ探してください。ファクスであれば、そこから添付ファイルを保存するか、送信者に再送を依頼してください。Resend の一覧が仕様どおりの形ではなかったことを開発者に連絡してください。'
        when 'records_unguarded' then
            'document-jobs-admin health を実行してください。外れている仕組みが1つずつ表示されます。これができるのはテーブルの所有者（postgres: マイグレーション、SQL Editor）だけなので、誰がなぜ行ったかを確認してください（Supabase のダッシュボードのデータベースのログ）。postgres で select document_jobs_internal.guard_record_tables(); を実行すると、すべての仕組みが元に戻ります（トリガーを作り直して有効にし、与えられた権限を外します）。外れていた間に変更されたものはデータベースからは分かりません。原本を記録した SHA-256 と照合し、事務処理規程に従って経緯を記録してください。'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by created desc limit 5) と Vercel のワーカーのログを確認してください。'
        end)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outage_advice_ja_before_verification(p_cause text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outage_details(p_cause text) IS 'What an open outage shows beside its explanation on the screen''s overview, for the causes that have more to show: reconciliation_unreadable its e-mails (unreadable_shown), retention_window_closing its window and command (retention_window), reconciliation_stalled the last completed run and finding; null for the others.';
CREATE FUNCTION document_jobs_internal.outage_details(p_cause text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select case p_cause
        when 'reconciliation_unreadable' then jsonb_build_object(
            'emails', document_jobs_internal.unreadable_shown(20),
            'count', (select count(*) from document_jobs_internal.open_unreadable()))
        when 'retention_window_closing' then document_jobs_internal.retention_window()
        when 'reconciliation_stalled' then (
            select jsonb_build_object('last_completed_at', r.last_completed_at, 'running_since', r.run_started_at,
                                      'last_finding', r.last_finding, 'every_minutes', r.every_minutes)
              from public.document_jobs_reconciliation r)
        end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outage_details(p_cause text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) IS 'Attempts that ended between p_from and p_to, per UTC hour: how many completed, failed and were retried, and the latency from the job''s creation (the webhook recording the e-mail) to its completion, p50 and p95 in milliseconds. Computed from the attempt history; fill_hourly_outcomes keeps the settled hours.';
CREATE FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) RETURNS TABLE(hour timestamp with time zone, completed integer, failed integer, retried integer, latency_p50_ms double precision, latency_p95_ms double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    return query
    select date_trunc('hour', a.finished_at, 'UTC'),
           (count(*) filter (where a.outcome = 'completed'))::int,
           (count(*) filter (where a.outcome = 'failed'))::int,
           (count(*) filter (where a.outcome = 'retried'))::int,
           percentile_cont(0.5) within group (order by extract(epoch from a.finished_at - j.created_at) * 1000)
               filter (where a.outcome = 'completed'),
           percentile_cont(0.95) within group (order by extract(epoch from a.finished_at - j.created_at) * 1000)
               filter (where a.outcome = 'completed')
      from public.document_job_attempts a
      left join public.document_jobs j on a.outcome = 'completed' and j.id = a.job_id
     where a.finished_at >= p_from and a.finished_at < p_to
     group by 1;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.outcomes_by_hour(p_from timestamp with time zone, p_to timestamp with time zone) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.pg_net_generation_in_use() IS 'The generation of pg_net ids in use; null after a crash until the next POST begins one (worker_requests.pg_net_generation''s default).';
CREATE FUNCTION document_jobs_internal.pg_net_generation_in_use() RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select g.generation from document_jobs_internal.pg_net_generation g
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.pg_net_generation_in_use() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.post_alert(p_body jsonb) IS 'POSTs one alert through pg_net to the URL in the Vault secret document_jobs_alert_url (sent if the transaction commits); null and a WARNING when none is stored. Runs as postgres, from the failure trigger or the health check; the alert never carries a Vault secret.';
CREATE FUNCTION document_jobs_internal.post_alert(p_body jsonb) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_url text;
begin
    select nullif(s.decrypted_secret, '') into v_url
      from vault.decrypted_secrets s
     where s.name = 'document_jobs_alert_url';
    if v_url is null then
        raise warning 'document jobs: Vault secret document_jobs_alert_url is missing; alert % was not sent',
            coalesce(p_body ->> 'event', '?') || coalesce(' ' || (p_body #>> '{job,id}'), '')
                                              || coalesce(' ' || (p_body ->> 'cause'), '');
        return null;
    end if;
    return net.http_post(
        url => v_url,
        body => p_body,
        headers => jsonb_build_object('Content-Type', 'application/json'),
        timeout_milliseconds => 10000
    );
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.post_alert(p_body jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.post_worker(p_count integer) IS 'POSTs to the worker through pg_net, at most p_count and only while fewer than invocation_cap() are in flight; the requests are sent only if and after the calling transaction commits, each recorded in worker_requests. Returns how many were queued (0 and a WARNING when Vault lacks the worker''s URL or secret: migrations may run before the operator stores them). How many is its callers'' choice: one for a kick, the fan-out for the cron and the follow-ups.';
CREATE FUNCTION document_jobs_internal.post_worker(p_count integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_url text;
    v_secret text;
    v_count int;
    v_generation bigint;
begin
    select s.decrypted_secret into v_url from vault.decrypted_secrets s where s.name = 'document_jobs_url';
    select s.decrypted_secret into v_secret from vault.decrypted_secrets s where s.name = 'internal_function_secret';
    if nullif(v_url, '') is null or nullif(v_secret, '') is null then
        raise warning 'document jobs: Vault secret % is missing; the worker was not called',
            case when nullif(v_url, '') is null then 'document_jobs_url' else 'internal_function_secret' end;
        return 0;
    end if;
    -- One caller at a time counts and adds, until its transaction ends: two webhooks at once must
    -- not both take the last free place. (A transaction-level advisory lock of this function's own.)
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('document_jobs_internal.post_worker', 0));
    v_generation := document_jobs_internal.current_pg_net_generation();
    v_count := least(p_count, document_jobs_internal.invocation_cap() - document_jobs_internal.invocations_in_flight());
    for i in 1..v_count loop
        insert into document_jobs_internal.worker_requests (request_id, created_at, pg_net_generation)
        values (net.http_post(
                    url => v_url,
                    body => '{}'::jsonb,
                    headers => jsonb_build_object('Content-Type', 'application/json',
                                                  'Authorization', 'Bearer ' || v_secret),
                    timeout_milliseconds => 300000  -- the worker's maxDuration
                ),
                clock_timestamp(),
                v_generation);
    end loop;
    return greatest(v_count, 0);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.post_worker(p_count integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) IS 'The cutoff of a purge: completed jobs that finished before it go. One definition for the purge and its dry run; the age is the retention setting unless one is given, held to the same bounds.';
CREATE FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_older_than interval := coalesce(p_older_than,
                                      (select s.completed_job_retention from public.document_jobs_settings s));
begin
    perform document_jobs_internal.require_retention('p_older_than', v_older_than);
    return now() - v_older_than;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.purge_cutoff(p_older_than interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) IS 'The next slot of a limiter at p_now, and the schedule after it: the GCRA''s arithmetic alone, without the clock or the row, so that a test can replay any sequence of arrivals. With T = 1 / (rate x (1 - share)) and a tolerance of b x T, at most `rate` slots fall in any one-second window. The bound can be exact (rate 5, share 0.1, burst 1: six slots span exactly one second), so T is rounded up to whole microseconds (a timestamp''s precision) and the tolerance down, never the other way.';
CREATE FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
    v_rate numeric := p_limit.requests_per_second * (1 - p_limit.share_for_others);
    v_interval_us numeric := ceil(1000000 / v_rate);
    v_interval interval := v_interval_us * interval '1 microsecond';
    v_tolerance interval := floor(least(p_limit.burst, p_limit.requests_per_second - v_rate) * v_interval_us)
                            * interval '1 microsecond';
begin
    slot_at := greatest(p_now, p_limit.next_at - v_tolerance, p_limit.paused_until);
    next_at := greatest(p_limit.next_at, slot_at) + v_interval;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.rate_limit_slot(p_limit public.document_jobs_rate_limits, p_now timestamp with time zone, OUT slot_at timestamp with time zone, OUT next_at timestamp with time zone) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.reconcile_schedule(p_every_minutes integer) IS 'The cron schedule of document-jobs-reconcile for a period in minutes (1 to 60).';
CREATE FUNCTION document_jobs_internal.reconcile_schedule(p_every_minutes integer) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case when p_every_minutes >= 60 then '0 * * * *'
                when p_every_minutes <= 1 then '* * * * *'
                else format('*/%s * * * *', p_every_minutes) end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.reconcile_schedule(p_every_minutes integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_attachment_version(p_email_id uuid, p_provider_attachment_id text, p_filename text, p_content_type text, p_version integer, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text) IS 'One version of an attachment recorded: inserted (true), or already recorded with the same values (false, nothing changes); other values for a recorded version, an object another row names (23505) and a key given up as wrong (55000) are refused.';
CREATE FUNCTION document_jobs_internal.record_attachment_version(p_email_id uuid, p_provider_attachment_id text, p_filename text, p_content_type text, p_version integer, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_row public.fax_received_email_attachments;
begin
    perform document_jobs_internal.require_not_discarded(p_bucket, p_storage_path);
    insert into public.fax_received_email_attachments
           (fax_received_email_id, provider_attachment_id, version, filename, content_type, size_bytes, sha256,
            bucket, storage_path)
    values (p_email_id, p_provider_attachment_id, p_version, p_filename, p_content_type, p_size_bytes, p_sha256,
            p_bucket, p_storage_path)
    on conflict do nothing;
    if found then
        return true;
    end if;
    select * into v_row from public.fax_received_email_attachments a
     where a.fax_received_email_id = p_email_id and a.provider_attachment_id = p_provider_attachment_id
       and a.version = p_version;
    if v_row.id is null then
        raise exception using errcode = '23505', hint = 'object_recorded',
            message = format('%s/%s is recorded for another attachment or version: one object, one record',
                             p_bucket, p_storage_path);
    end if;
    if (v_row.filename, v_row.content_type, v_row.size_bytes, v_row.sha256, v_row.bucket, v_row.storage_path)
       is distinct from (p_filename, p_content_type, p_size_bytes, p_sha256, p_bucket, p_storage_path) then
        raise exception using errcode = '23505', hint = 'version_recorded',
            message = format('version %s of attachment %s is recorded with other values (%s bytes, SHA-256 %s): '
                             'a recorded original never changes', p_version, p_provider_attachment_id,
                             v_row.size_bytes, v_row.sha256);
    end if;
    return false;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_attachment_version(p_email_id uuid, p_provider_attachment_id text, p_filename text, p_content_type text, p_version integer, p_size_bytes bigint, p_sha256 text, p_bucket text, p_storage_path text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_attempt() IS 'Trigger document_jobs_record_attempt: when an attempt ends (a running job leaves running, or is claimed again once its lease passed), its row goes into document_job_attempts with the outcome the ending function stored in attempt_outcome (lease_expired for a takeover, failed for an UPDATE by hand that stored none). Security definer: service_role may update document_jobs directly, and still must not be able to write history. It never raises on a duplicate (on conflict do nothing): a queue state change must not fail over its history.';
CREATE FUNCTION document_jobs_internal.record_attempt() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_outcome text;
    v_lease_passed boolean;
begin
    -- A claim that changed the generation of a running job took it over: the lease had passed.
    -- Otherwise the function that ended the attempt said how; an UPDATE by hand that did not is
    -- recorded as failed.
    v_outcome := case
        when new.generation <> old.generation then 'lease_expired'
        else coalesce(new.attempt_outcome, 'failed')
    end;
    v_lease_passed := v_outcome = 'lease_expired';
    insert into public.document_job_attempts
           (job_id, generation, attempt, started_at, finished_at, outcome, error_code, error_message, invocation_id)
    values (old.id, old.generation, old.attempts, old.attempt_started_at,
            case when v_lease_passed then least(old.lease_until, now()) else now() end,
            v_outcome,
            case when v_lease_passed then 'lease_expired' when v_outcome <> 'completed' then new.last_error_code end,
            case when v_lease_passed then 'the lease passed before the attempt finished (the worker died or was stopped)'
                 when v_outcome <> 'completed' then new.last_error_message end,
            old.attempt_invocation_id)
    on conflict (job_id, generation) do nothing;
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_attempt() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_email(p_provider_email_id text, p_webhook_id text, p_data jsonb, p_found_by text) IS 'Records an inbound e-mail and enqueues its fetch_email job with a kick, atomically: the webhook''s record_inbound_email (found_by webhook) and reconciliation''s record_reconciled (found_by reconciliation, reconciled_at now) both call it, so that everything the row says is written by its one INSERT (the row is never updated). Keeps the data verbatim and never fails on a field it merely copies (a date that does not parse is stored as null). An e-mail recorded before answers duplicate = true with the existing rows and creates nothing.';
CREATE FUNCTION document_jobs_internal.record_email(p_provider_email_id text, p_webhook_id text, p_data jsonb, p_found_by text) RETURNS TABLE(fax_received_email_id uuid, job_id uuid, duplicate boolean)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_email_id uuid;
begin
    perform document_jobs_internal.require(
        nullif(p_provider_email_id, '') is not null, 'p_provider_email_id must not be empty');
    perform document_jobs_internal.require(jsonb_typeof(p_data) = 'object', 'p_data must be a JSON object');
    perform document_jobs_internal.require(p_found_by in ('webhook', 'reconciliation'),
                                           'p_found_by must be webhook or reconciliation');

    insert into public.fax_received_emails as e
           (provider, provider_email_id, webhook_id, from_address, to_addresses, cc_addresses,
            subject, message_id, received_at, data, found_by, reconciled_at)
    values ('resend', p_provider_email_id, p_webhook_id, p_data ->> 'from',
            document_jobs_internal.text_array(p_data -> 'to'), document_jobs_internal.text_array(p_data -> 'cc'),
            p_data ->> 'subject', p_data ->> 'message_id',
            document_jobs_internal.try_timestamptz(p_data ->> 'created_at'), p_data,
            p_found_by, case when p_found_by = 'reconciliation' then now() end)
    on conflict (provider, provider_email_id) do nothing
    returning e.id into v_email_id;

    if v_email_id is null then
        -- Recorded before (a redelivery, or found both ways): report what exists, create nothing.
        return query
        select e.id,
               (select j.id from public.document_jobs j
                 where j.fax_received_email_id = e.id and j.kind = 'fetch_email'
                 order by j.created_at desc limit 1),
               true
          from public.fax_received_emails e
         where e.provider = 'resend' and e.provider_email_id = p_provider_email_id;
        return;
    end if;

    return query
    select v_email_id, q.job_id, false
      from public.enqueue_document_job('fetch_email', v_email_id, p_kick => true) q;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_email(p_provider_email_id text, p_webhook_id text, p_data jsonb, p_found_by text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_guard_problems() IS 'Every guard of the record tables that is not in place, as [{"table", "guard", "problem"}]: a record table missing; a trigger of record_guards missing, altered (its definition is not the one record_guards gives), disabled, or not_always (ENABLE ALWAYS undone: a session with session_replication_role replica skips it); a role other than the owner granted UPDATE, DELETE or TRUNCATE on the table or UPDATE on a column (problem granted, with privilege and grantee). Empty when all are in place. Only the tables'' owner can cause any of these; document_jobs_health shows them and check_record_guards alerts.';
CREATE FUNCTION document_jobs_internal.record_guard_problems() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce(jsonb_agg(p.problem order by p.problem ->> 'table', p.problem ->> 'guard'), '[]'::jsonb)
      from (
        -- A record table that is gone takes its guards with it: the table is the problem.
        select jsonb_build_object('table', t.record_table, 'guard', 'table', 'problem', 'missing') as problem
          from document_jobs_internal.record_tables() t
         where pg_catalog.to_regclass(t.record_table) is null
        union all
        select jsonb_build_object(
                   'table', g.record_table, 'guard', g.trigger_name,
                   'problem', case when tr.oid is null then 'missing'
                                   when pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition then 'altered'
                                   when tr.tgenabled = 'D' then 'disabled'
                                   -- O: skipped in a session whose session_replication_role is replica;
                                   -- R: fires only in one.
                                   else 'not_always' end)
          from document_jobs_internal.record_guards() g
          left join pg_catalog.pg_trigger tr
            on tr.tgrelid = pg_catalog.to_regclass(g.record_table) and tr.tgname = g.trigger_name
         where pg_catalog.to_regclass(g.record_table) is not null
           and (tr.oid is null or pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition or tr.tgenabled <> 'A')
        union all
        select jsonb_build_object('table', t.record_table, 'guard', 'privileges', 'problem', 'granted',
                                  'privilege', a.privilege_type,
                                  'grantee', case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end)
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(c.relacl) a
         where a.grantee <> c.relowner and a.privilege_type in ('UPDATE', 'DELETE', 'TRUNCATE')
        union all
        select jsonb_build_object('table', t.record_table, 'guard', 'privileges', 'problem', 'granted',
                                  'privilege', format('UPDATE (%s)', at.attname),
                                  'grantee', case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end)
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_attribute at on at.attrelid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(at.attacl) a
         where a.privilege_type = 'UPDATE'
      ) p
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_guard_problems() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_guards() IS 'The guard triggers every record table must have, each with its definition exactly as pg_get_triggerdef shows it: what guard_record_tables creates and what record_guard_problems holds the tables to. Each is ENABLE ALWAYS (it fires in a session whose session_replication_role is replica too).';
CREATE FUNCTION document_jobs_internal.record_guards() RETURNS TABLE(record_table text, trigger_name text, definition text)
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select t.record_table, g.name,
           format('CREATE TRIGGER %s %s ON %s FOR EACH %s EXECUTE FUNCTION %s(%s)', g.name, g.event, t.record_table,
                  g.level, g.function,
                  case when g.function = 'document_jobs_internal.refuse_record_delete' and t.email_column is not null
                       then pg_catalog.quote_literal(t.email_column) else '' end)
      from document_jobs_internal.record_tables() t
     cross join (values ('record_not_updated', 'BEFORE UPDATE', 'ROW', 'document_jobs_internal.refuse_record_change'),
                        ('record_not_updated_by_statement', 'BEFORE UPDATE', 'STATEMENT',
                         'document_jobs_internal.refuse_record_change'),
                        ('record_deleted_only_as_approved', 'BEFORE DELETE', 'ROW',
                         'document_jobs_internal.refuse_record_delete'),
                        ('record_not_truncated', 'BEFORE TRUNCATE', 'STATEMENT',
                         'document_jobs_internal.refuse_record_change')) g(name, event, level, function)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_guards() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_original_checks(p_run_id bigint, p_checks jsonb) IS 'Records what a run read of at most 100 originals (p_checks: {"attachment_id", "found", "size_bytes", "sha256"}; size_bytes null when the object ran past its recorded size), judged against each one''s row here (matches, missing, size_differs, sha256_differs), once per original and run; updates the known mismatches (a match removes one) and the outage original_mismatch. Answers {"checked", "mismatched", "mismatches": [{"attachment_id", "outcome"}], "alerts"}.';
CREATE FUNCTION document_jobs_internal.record_original_checks(p_run_id bigint, p_checks jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_run public.original_verify_runs;
    v_item jsonb;
    v_row public.fax_received_email_attachments;
    v_found boolean;
    v_size bigint;
    v_sha256 text;
    v_outcome text;
    v_checked int := 0;
    v_mismatched int := 0;
    v_mismatches jsonb := '[]'::jsonb;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_checks) = 'array', 'p_checks must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_checks) <= 100, 'p_checks holds at most 100 reads');
    select * into v_run from public.original_verify_runs r where r.id = p_run_id for update;
    perform document_jobs_internal.require(found, format('no verification run %s', p_run_id));
    for v_item in select e.value from jsonb_array_elements(p_checks) e loop
        select * into v_row from public.fax_received_email_attachments a
         where a.id = document_jobs_internal.try_uuid(v_item ->> 'attachment_id');
        perform document_jobs_internal.require(found, format('%s is no stored original', v_item ->> 'attachment_id'));
        perform document_jobs_internal.require(v_run.selected is null or v_row.id = any (v_run.selected),
                                               format('%s is not in run %s''s sample', v_row.id, p_run_id));
        v_found := coalesce((v_item ->> 'found')::boolean, false);
        v_size := (v_item ->> 'size_bytes')::bigint;
        v_sha256 := nullif(v_item ->> 'sha256', '');
        -- The database judges by what was read, as lib/originals.py compare does.
        v_outcome := case when not v_found then 'missing'
                          when v_size is distinct from v_row.size_bytes then 'size_differs'
                          when v_sha256 is distinct from v_row.sha256 then 'sha256_differs'
                          else 'matches' end;
        insert into public.original_verifications (run_id, attachment_id, outcome, read_size_bytes, read_sha256)
        values (p_run_id, v_row.id, v_outcome, case when v_found then v_size end, case when v_found then v_sha256 end)
        on conflict (run_id, attachment_id) do nothing;
        if not found then
            continue;  -- read twice in one run (a job run again): the first read stands
        end if;
        v_checked := v_checked + 1;
        if v_outcome = 'matches' then
            delete from document_jobs_internal.original_mismatches m where m.attachment_id = v_row.id;
        else
            v_mismatched := v_mismatched + 1;
            v_mismatches := v_mismatches || jsonb_build_object('attachment_id', v_row.id, 'outcome', v_outcome);
            insert into document_jobs_internal.original_mismatches (attachment_id, outcome)
            values (v_row.id, v_outcome)
            on conflict (attachment_id) do update set outcome = excluded.outcome, last_seen_at = now();
        end if;
    end loop;
    update public.original_verify_runs r
       set checked = r.checked + v_checked,
           mismatched = r.mismatched + v_mismatched,
           finished_at = case when r.checked + v_checked >= r.total then coalesce(r.finished_at, now()) end
     where r.id = p_run_id;
    return jsonb_build_object('checked', v_checked, 'mismatched', v_mismatched, 'mismatches', v_mismatches,
                              'alerts', document_jobs_internal.check_original_mismatches());
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_original_checks(p_run_id bigint, p_checks jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_reconciled(p_emails jsonb) IS 'Records the listed e-mails (items of Resend''s GET /emails/receiving, at most 100) that the database does not have and that Resend received more than webhooks_missing_after ago (a younger one may still get its webhook: "young", left for a later run), each through record_email with a null webhook id and found_by reconciliation, written by the insert. Answers {"recorded", "late" (of those, received more than webhooks_missing_after before, by Resend''s created_at), "late_after_close" (of the late, those received before webhooks_missing last closed: counted, they reopen nothing), "young", "recorded_ids"}; an e-mail already recorded (by a webhook, before or during the run) is left as it is.';
CREATE FUNCTION document_jobs_internal.record_reconciled(p_emails jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_item jsonb;
    v_id text;
    v_row record;
    v_received timestamptz;
    v_late_one boolean;
    v_missing_after interval;
    v_closed_at timestamptz;
    v_recorded int := 0;
    v_late int := 0;
    v_young int := 0;
    v_after_close int := 0;
    v_newest_missing timestamptz;
    v_ids jsonb := '[]'::jsonb;
begin
    perform document_jobs_internal.require(jsonb_typeof(p_emails) = 'array', 'p_emails must be a JSON array');
    perform document_jobs_internal.require(jsonb_array_length(p_emails) <= 100, 'p_emails holds at most 100 e-mails');
    select r.webhooks_missing_after, r.outage_closed_at into v_missing_after, v_closed_at
      from public.document_jobs_reconciliation r;
    for v_item in select e.value from jsonb_array_elements(p_emails) e loop
        v_id := v_item ->> 'id';
        perform document_jobs_internal.require(jsonb_typeof(v_item) = 'object' and nullif(v_id, '') is not null,
                                               'every item of p_emails must be an object with an id');
        -- An e-mail younger than webhooks_missing_after may still get its webhook: left for a
        -- later run (the watermark never passes it). The worker sends only items whose
        -- created_at it could read (the others are noted as unreadable), so one that does not
        -- parse here is taken as old.
        if document_jobs_internal.try_timestamptz(v_item ->> 'created_at') > now() - v_missing_after then
            v_young := v_young + 1;
            continue;
        end if;
        select * into v_row
          from document_jobs_internal.record_email(v_id, null, v_item || jsonb_build_object('email_id', v_id),
                                                   'reconciliation');
        if not v_row.duplicate then
            select e.received_at, coalesce(e.received_at < now() - v_missing_after, false)
              into v_received, v_late_one
              from public.fax_received_emails e
             where e.id = v_row.fax_received_email_id;
            v_recorded := v_recorded + 1;
            v_ids := v_ids || to_jsonb(v_id);
            if v_late_one then
                v_late := v_late + 1;
                -- Received before webhooks_missing last closed: that outage was told and closed;
                -- the e-mail is counted, and reopens nothing.
                if v_received > coalesce(v_closed_at, '-infinity') then
                    v_newest_missing := greatest(v_newest_missing, v_received);
                else
                    v_after_close := v_after_close + 1;
                end if;
            end if;
        end if;
    end loop;
    if v_late > 0 then
        update public.document_jobs_reconciliation r
           set missing_found_at = now(),
               missing_received_at = greatest(r.missing_received_at, v_newest_missing),
               late_after_close = r.late_after_close + v_after_close;
    end if;
    return jsonb_build_object('recorded', v_recorded, 'late', v_late, 'young', v_young,
                              'late_after_close', v_after_close, 'recorded_ids', v_ids);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_reconciled(p_emails jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.record_tables() IS 'The tables that are THE RECORD of received faxes (qualified names: a health check must still answer when one is gone): their rows are inserted once and never updated, deleted or truncated (record_guards). email_column names the column that says which e-mail a row belongs to, for a deletion approved in fax_deletions; null: the table''s rows are never deleted (fax_deletions itself). Everything else (jobs, attempts, views, handling state) is not the record and stays changeable.';
CREATE FUNCTION document_jobs_internal.record_tables() RETURNS TABLE(record_table text, email_column text)
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    values ('public.fax_received_emails', 'id'),
           ('public.fax_received_email_attachments', 'fax_received_email_id'),
           ('public.fax_received_email_raw_messages', 'fax_received_email_id'),
           ('public.fax_deletions', null),
           ('public.fax_object_removals', null)
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.record_tables() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_attempt_update() IS 'Trigger document_job_attempts_append_only: no UPDATE of the attempt history, even by the table''s owner, since a history that can be rewritten is not one (rows go only with their job, by the purge).';
CREATE FUNCTION document_jobs_internal.refuse_attempt_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_job_attempts is append-only: its rows are never updated';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_attempt_update() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_audit_change() IS 'Trigger document_jobs_audit_append_only: the audit''s rows are never updated or deleted, whoever asks.';
CREATE FUNCTION document_jobs_internal.refuse_audit_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    raise exception using errcode = 'insufficient_privilege',
        message = 'document_jobs_audit is append-only: its rows are never updated or deleted';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_audit_change() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_early_deletion() IS 'Trigger fax_deletions_only_after_keep_until, before each approval inserted: refuses one for a fax that is not recorded (P0002) or whose keep-until date the office''s today is not past (55000 retention_not_over, require_past_keep_until), whoever inserts it.';
CREATE FUNCTION document_jobs_internal.refuse_early_deletion() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_email public.fax_received_emails;
begin
    select * into v_email from public.fax_received_emails e where e.id = new.fax_received_email_id;
    if not found then
        raise exception using errcode = 'P0002',
            message = format('no fax %s: a deletion names a fax that is recorded', new.fax_received_email_id);
    end if;
    perform document_jobs_internal.require_past_keep_until(v_email);
    return new;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_early_deletion() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_fax_index_history_change() IS 'The trigger that keeps fax_index_history append-only: any UPDATE or DELETE of it fails (42501, hint append_only), whoever runs it; but a row of a fax whose deletion fax_deletions records goes with it (admin_delete_fax).';
CREATE FUNCTION document_jobs_internal.refuse_fax_index_history_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    if tg_op = 'DELETE'
       and exists (select 1 from public.fax_deletions d where d.fax_received_email_id = old.fax_received_email_id) then
        return old;
    end if;
    raise exception using errcode = '42501', hint = 'append_only',
        message = 'fax_index_history is append-only: a correction of a fax''s index is a new entry (set_fax_index), never a change of an old one';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_fax_index_history_change() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_handling_history_change() IS 'Triggers fax_handling_history_append_only (each UPDATE statement) and fax_handling_history_deleted_only_as_approved (each deleted row): the history of marks is never updated or deleted, whoever asks; but a row of a fax whose deletion fax_deletions records goes with it (admin_delete_fax).';
CREATE FUNCTION document_jobs_internal.refuse_handling_history_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    if tg_level = 'ROW' and tg_op = 'DELETE'
       and exists (select 1 from public.fax_deletions d where d.fax_received_email_id = old.fax_received_email_id) then
        return old;
    end if;
    raise exception using errcode = 'insufficient_privilege',
        message = 'fax_handling_history is append-only: its rows are never updated or deleted';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_handling_history_change() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_record_change() IS 'Trigger of every record table (record_guards): refuses any UPDATE (row and statement triggers) and any TRUNCATE, whoever asks, the table''s owner and security definer functions included (restrict_violation). The one exception is a test cluster''s reset (document_jobs_test_cluster.reset_tables, which only a test cluster has: its schema owned by a superuser, which a hosted project''s roles cannot make), run by a superuser.';
CREATE FUNCTION document_jobs_internal.refuse_record_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    -- A test cluster's reset: see document_jobs_test_cluster.reset_tables (devstack/bootstrap.sql).
    -- Inline, not a helper's call: the trigger runs as whoever changes the table, who may have no
    -- privilege on document_jobs_internal.
    if tg_op = 'TRUNCATE'
       and current_setting('document_jobs_test_cluster.resetting', true) = 'on'
       and exists (select 1 from pg_catalog.pg_roles r where r.rolname = current_user and r.rolsuper)
       and exists (select 1
                     from pg_catalog.pg_namespace n
                     join pg_catalog.pg_roles r on r.oid = n.nspowner
                    where n.nspname = 'document_jobs_test_cluster' and r.rolsuper) then
        return null;
    end if;
    raise exception using errcode = 'restrict_violation',
        message = format('%I.%I is the record of received faxes: its rows are never %s', tg_table_schema,
                         tg_table_name, case tg_op when 'UPDATE' then 'updated' else 'truncated' end),
        hint = 'A record is only ever inserted; a deletion after the keep-until date goes through fax_deletions.';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_record_change() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.refuse_record_delete() IS 'Trigger of every record table (record_guards), before each deleted row: refuses the delete (restrict_violation) unless the table names an e-mail column (its one argument, record_tables().email_column) and a row of fax_deletions names the row''s e-mail. Row by row, so that a cascade from an e-mail to its attachments meets it too. Without an argument (fax_deletions) nothing is ever deleted.';
CREATE FUNCTION document_jobs_internal.refuse_record_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_email uuid;
begin
    if tg_nargs = 1 then
        v_email := (pg_catalog.to_jsonb(old) ->> tg_argv[0])::uuid;
        if exists (select 1 from public.fax_deletions d where d.fax_received_email_id = v_email) then
            return old;
        end if;
    end if;
    raise exception using errcode = 'restrict_violation',
        message = format('%I.%I is the record of received faxes: its rows are never deleted%s', tg_table_schema,
                         tg_table_name, case when tg_nargs = 1
                                             then format(' (e-mail %s has no approved deletion)', v_email) end),
        hint = 'A deletion after the keep-until date is an admin''s action that is recorded in fax_deletions first.';
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.refuse_record_delete() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) IS 'failed -> queued with its attempts and time-budget releases reset (a retry by hand starts the count afresh), for every job of p_job_ids that is failed; returns the ids it changed. The unique index on live jobs refuses a second live job of the same e-mail (unique_violation): callers decide what that means.';
CREATE FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    return query
    update public.document_jobs j
       set status = 'queued',
           attempts = 0,
           budget_releases = 0,
           run_after = now(),
           lease_until = null,
           finished_at = null
     where j.id = any (p_job_ids) and j.status = 'failed'
    returning j.id;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.requeue_failed(p_job_ids uuid[]) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) IS 'Bad arguments are refused with SQLSTATE 22023 (invalid_parameter_value): PostgREST answers them with HTTP 400 and this message.';
CREATE FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    if p_ok is not true then
        raise exception using errcode = '22023', message = p_message;
    end if;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require(p_ok boolean, p_message text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) IS 'The operator and the reason every operator action names: an actor id, and a reason of at most 500 characters (not empty when p_reason_required), 22023 otherwise; and the actor an admin of Supabase Auth now, not deleted nor banned (acting_operator''s refusals).';
CREATE FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.require(
        not p_reason_required or nullif(btrim(p_reason), '') is not null, 'p_reason must not be empty');
    perform document_jobs_internal.require(
        p_reason is null or length(p_reason) <= 500, 'p_reason must be at most 500 characters');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin']);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_actor(p_actor_id uuid, p_reason text, p_reason_required boolean) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) IS 'The arguments every fenced write names: neither p_job_id nor p_generation may be null (22023).';
CREATE FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_job_id is not null, 'p_job_id must not be null');
    perform document_jobs_internal.require(p_generation is not null, 'p_generation must not be null');
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_holder(p_job_id uuid, p_generation integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_kind(p_kind text) IS 'A kind must be one of document_job_kinds (22023 otherwise, naming the table).';
CREATE FUNCTION document_jobs_internal.require_kind(p_kind text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        exists (select 1 from public.document_job_kinds k where k.kind = p_kind),
        format('unknown job kind %L (see table document_job_kinds)', p_kind));
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_kind(p_kind text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_not_discarded(p_bucket text, p_storage_path text) IS 'Refuses (55000, hint object_discarded) to record an object listed in discarded_objects: its delete may still be on its way.';
CREATE FUNCTION document_jobs_internal.require_not_discarded(p_bucket text, p_storage_path text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
    if exists (select 1 from document_jobs_internal.discarded_objects d
                where d.bucket = p_bucket and d.storage_path = p_storage_path) then
        -- 55000 (object_not_in_prerequisite_state): a worker's database error, retried; its next
        -- attempt sees the key in start_fetch_email_v2's discarded_paths and stores beside it.
        raise exception using errcode = '55000', hint = 'object_discarded',
            message = format('%s/%s was given up as wrong and may be deleted: it is never recorded',
                             p_bucket, p_storage_path);
    end if;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_not_discarded(p_bucket text, p_storage_path text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_note(p_note text) IS 'A mark''s note: at most 500 characters, with no control characters but line breaks and tabs (22023 otherwise).';
CREATE FUNCTION document_jobs_internal.require_note(p_note text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(p_note is null or length(p_note) <= 500,
                                           'p_note must be at most 500 characters');
    perform document_jobs_internal.require(p_note is null or p_note !~ '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]',
                                           'p_note must hold no control characters but line breaks and tabs');
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_note(p_note text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_past_keep_until(p_email public.fax_received_emails) IS 'The fax''s retention (fax_retention) when the office''s today is past its keep-until date; else 55000, hint retention_not_over, naming the date and the zone. admin_delete_fax and the trigger fax_deletions_only_after_keep_until check it.';
CREATE FUNCTION document_jobs_internal.require_past_keep_until(p_email public.fax_received_emails) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_retention jsonb := document_jobs_internal.fax_retention(p_email);
begin
    if not coalesce((v_retention ->> 'deletable')::boolean, false) then
        raise exception using errcode = '55000', hint = 'retention_not_over',
            message = format('fax %s must be kept until %s (%s): nothing may delete it before then',
                             left(replace(p_email.id::text, '-', ''), 8), v_retention ->> 'keep_until',
                             v_retention ->> 'time_zone');
    end if;
    return v_retention;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_past_keep_until(p_email public.fax_received_emails) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) IS 'How long completed jobs are kept: an hour at least (a job that just completed may still be looked at), ten years at most (long enough for any audit of the job history; a retention of a million years is a typo that turns the purge off). True, for the settings'' check constraint, or 22023 like every argument check.';
CREATE FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        p_retention between interval '1 hour' and interval '10 years',
        p_name || ' must be between 1 hour and 10 years');
    return true;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_retention(p_name text, p_retention interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) IS 'How long a failed or released job may wait before its next attempt (a provider''s retry-after, or a delay chosen by the worker): 0 to limits().retry_after_max, a day; 22023 otherwise. A longer wait parks the job where no one is looking for it; a provider that asks for more (a monthly quota) is simply asked again then.';
CREATE FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    perform document_jobs_internal.require(
        p_retry_after is null or p_retry_after between interval '0' and (document_jobs_internal.limits()).retry_after_max,
        (document_jobs_internal.limits()).retry_after_rule);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_retry_after(p_retry_after interval) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.require_versions(p_versions jsonb, p_prefix text) IS 'The versions a recording call hands in, checked: 1 to 100 of {"version", "size_bytes", "sha256", "bucket", "storage_path"}, each version once, each key under p_prefix (22023 otherwise).';
CREATE FUNCTION document_jobs_internal.require_versions(p_versions jsonb, p_prefix text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $_$
declare
    v_item jsonb;
begin
    perform document_jobs_internal.require(
        jsonb_typeof(p_versions) = 'array' and jsonb_array_length(p_versions) between 1 and 100,
        'p_versions must be an array of 1 to 100 versions');
    for v_item in select value from jsonb_array_elements(p_versions) loop
        perform document_jobs_internal.require(
            jsonb_typeof(v_item) = 'object'
            and jsonb_typeof(v_item -> 'version') = 'number' and (v_item ->> 'version') ~ '^[1-9][0-9]{0,5}$'
            and jsonb_typeof(v_item -> 'size_bytes') = 'number' and (v_item ->> 'size_bytes') ~ '^[0-9]{1,15}$'
            and (v_item ->> 'sha256') ~ '^[0-9a-f]{64}$'
            and coalesce(v_item ->> 'bucket', '') <> ''
            and starts_with(coalesce(v_item ->> 'storage_path', ''), p_prefix)
            and length(v_item ->> 'storage_path') > length(p_prefix),
            format('each version is {"version", "size_bytes", "sha256", "bucket", "storage_path"}, its key under %s',
                   p_prefix));
    end loop;
    perform document_jobs_internal.require(
        (select count(distinct v.value -> 'version') from jsonb_array_elements(p_versions) v)
            = jsonb_array_length(p_versions),
        'p_versions names a version twice');
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.require_versions(p_versions jsonb, p_prefix text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) IS 'Reserves the provider''s next slot for one request (rate_limit_slot), unless it is more than p_max_wait_ms away (then nothing is reserved, and the answer says how long it would have been). Answers {"reserved": bool, "wait_ms": int, "limit": the team''s limit as known here}. The row lock is held until the caller''s transaction ends: reservations are served one at a time, in order.';
CREATE FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_limit public.document_jobs_rate_limits;
    v_now timestamptz;
    v_slot_at timestamptz;
    v_next_at timestamptz;
    v_wait_ms int;
begin
    -- No worker waits longer than its function may run (vercel.json maxDuration, 300 s).
    if p_max_wait_ms is null or p_max_wait_ms not between 0 and 300000 then
        raise exception using errcode = '22023', message = 'p_max_wait_ms must be between 0 and 300000';
    end if;
    select * into v_limit from public.document_jobs_rate_limits l where l.provider = p_provider for update;
    if not found then
        raise exception using errcode = '22023',
            message = format('unknown provider %L (see table document_jobs_rate_limits)', p_provider);
    end if;
    if not v_limit.enabled then
        return jsonb_build_object('reserved', true, 'wait_ms', 0, 'limit', v_limit.requests_per_second);
    end if;
    -- Read once the row is ours: a clock read before waiting for the lock would hand out a slot
    -- in the past, as much too early as the wait lasted.
    v_now := clock_timestamp();
    select s.slot_at, s.next_at into v_slot_at, v_next_at from document_jobs_internal.rate_limit_slot(v_limit, v_now) s;
    v_wait_ms := ceil(extract(epoch from v_slot_at - v_now) * 1000)::int;
    if v_wait_ms <= p_max_wait_ms then
        update public.document_jobs_rate_limits l set next_at = v_next_at where l.provider = p_provider;
    end if;
    return jsonb_build_object(
        'reserved', v_wait_ms <= p_max_wait_ms, 'wait_ms', v_wait_ms, 'limit', v_limit.requests_per_second);
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.reserve_request(p_provider text, p_max_wait_ms integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.retention_window() IS 'How much of Resend''s retention the gap since the watermark has used ("share": 0.5 is half), the time from which the gap''s e-mails are unrecoverable (watermark + retention), and the run by hand that lists the gap ("command"); null before a run has completed.';
CREATE FUNCTION document_jobs_internal.retention_window() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select case when r.watermark is not null then jsonb_build_object(
        'watermark', r.watermark,
        'retention', r.retention,
        'share', round((extract(epoch from now() - r.watermark) / extract(epoch from r.retention))::numeric, 3),
        'unrecoverable_from', r.watermark + r.retention,
        -- Back to the watermark less the overlap, the run's own reach; once that is past what Resend
        -- keeps, an age of the whole retention, which stays valid however late it is pasted.
        'command', 'document-jobs-admin reconcile --since '
                   || case when r.watermark - r.overlap > now() - r.retention
                           then to_char((r.watermark - r.overlap) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')
                           else floor(extract(epoch from r.retention) / 60)::text || 'm' end) end
      from public.document_jobs_reconciliation r
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.retention_window() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.screen_url() IS 'The admin screen''s URL the announcements link to: office_settings.screen_url, else the origin of the Vault secret document_jobs_url and /admin; null when neither is stored (the message then has no link). Runs as the owner (reads Vault).';
CREATE FUNCTION document_jobs_internal.screen_url() RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_url text := (select o.screen_url from public.office_settings o);
begin
    if v_url is null then
        -- The screen is served by the deployment the worker is (vercel.json: /admin).
        select substring(s.decrypted_secret from '^(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)') || '/admin'
          into v_url
          from vault.decrypted_secrets s
         where s.name = 'document_jobs_url';
    end if;
    return rtrim(v_url, '/');
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.screen_url() FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) IS 'The walk of a search, or of a sender of many e-mails: of the newest p_walk jobs that the filter''s other conditions keep (after p_after_created_at/p_after_id, when given), the first p_limit + 1 that match its sender and its term, newest first; and, when those are p_limit or fewer and the walk read all p_walk jobs, the oldest of them (where a partial page ends). The walk''s jobs come in order, so the sender and the term are checked job by job and the check stops with a full page.';
CREATE FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
    v_keyset text := 'true';
    v_walked text;
begin
    if p_after_id is not null then
        v_keyset := format('(j.created_at, j.id) < (%L::timestamptz, %L::uuid)', p_after_created_at, p_after_id);
    end if;
    v_walked := document_jobs_internal.jobs_by_state_sql(p_filter - 'q' - 'sender', v_keyset, p_walk);
    execute format(
        'select array(select j.id from (select q.id, q.created_at, q.fax_received_email_id from (%s) q
                                        order by q.created_at desc, q.id desc limit %s) j
                       where %s and %s order by j.created_at desc, j.id desc limit %s)',
        v_walked, p_walk,
        case when p_filter ? 'sender' then document_jobs_internal.sender_match_sql(p_filter ->> 'sender') else 'true' end,
        case when p_filter ? 'q' then document_jobs_internal.job_search_sql(p_filter ->> 'q') else 'true' end,
        p_limit + 1)
       into ids;
    if cardinality(ids) <= p_limit then
        execute format(
            'select q.created_at, q.id from (%s) q order by q.created_at desc, q.id desc offset %s limit 1',
            v_walked, p_walk - 1)
           into oldest_created_at, oldest_id;
    end if;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.search_walk(p_filter jsonb, p_after_created_at timestamp with time zone, p_after_id uuid, p_walk integer, p_limit integer, OUT ids uuid[], OUT oldest_created_at timestamp with time zone, OUT oldest_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.sender_match_sql(p_sender text) IS 'A filter''s sender as SQL over a job row "j", checked job by job (its e-mail by its primary key): the walk''s check, which means what job_filter_sql''s sender means.';
CREATE FUNCTION document_jobs_internal.sender_match_sql(p_sender text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select format('exists (select 1 from public.fax_received_emails se where se.id = j.fax_received_email_id'
                  ' and se.from_address ilike %L)', document_jobs_internal.like_pattern(p_sender))
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.sender_match_sql(p_sender text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) IS 'Moves one outage cause to what the check found (true: holds; false: cleared; null: no evidence either way, e.g. no call answered lately) and sends what that calls for: at most one alert an hour, and a recovered alert only after a down alert of the same episode. An outage whose evidence has a last_error (a release cause: the provider''s message) quotes it on a line of its own. The advice comes in English and in Japanese, a line each (outage_advice, outage_advice_ja). Returns the alerts queued.';
CREATE FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    c_repeat constant interval := interval '1 hour';
    v_outage document_jobs_internal.outages;
    v_lines jsonb;
begin
    if p_active is null then
        return 0;
    end if;
    select * into strict v_outage from document_jobs_internal.outages o where o.cause = p_cause for update;
    if p_active then
        if not v_outage.active then
            v_outage.active := true;
            v_outage.since := now();
        end if;
        v_lines := jsonb_build_array(
            jsonb_build_array('Fax queue problem (', jsonb_build_object('quote', p_cause), '): ', p_summary),
            jsonb_build_array(document_jobs_internal.outage_advice(p_cause)),
            jsonb_build_array(document_jobs_internal.outage_advice_ja(p_cause)));
        if p_evidence ? 'last_error' then
            v_lines := v_lines || jsonb_build_array(jsonb_build_array(
                'Last error: ', jsonb_build_object('quote', p_evidence ->> 'last_error', 'max', 300)));
        end if;
        if (v_outage.alerted_at is null or v_outage.alerted_at <= now() - c_repeat)
           and document_jobs_internal.post_alert(document_jobs_internal.alert_body(
                   jsonb_build_object(
                       'event', 'document_jobs_outage',
                       'cause', p_cause,
                       'summary', p_summary,
                       'advice', document_jobs_internal.outage_advice(p_cause),
                       'advice_ja', document_jobs_internal.outage_advice_ja(p_cause),
                       'since', v_outage.since,
                       'evidence', p_evidence,
                       'sent_at', now()),
                   v_lines)) is not null then
            v_outage.alerted_at := now();
            update document_jobs_internal.outages o
               set active = true, since = v_outage.since, alerted_at = v_outage.alerted_at
             where o.cause = p_cause;
            return 1;
        end if;
        update document_jobs_internal.outages o set active = true, since = v_outage.since where o.cause = p_cause;
        return 0;
    end if;
    if not v_outage.active then
        return 0;
    end if;
    update document_jobs_internal.outages o set active = false, since = null where o.cause = p_cause;
    if v_outage.alerted_at >= v_outage.since then  -- the operator was told of this episode
        perform document_jobs_internal.post_alert(document_jobs_internal.alert_body(
            jsonb_build_object(
                'event', 'document_jobs_recovered',
                'cause', p_cause,
                'summary', p_recovered,
                'since', v_outage.since,
                'evidence', p_evidence,
                'sent_at', now()),
            jsonb_build_array(jsonb_build_array(
                'Fax queue recovered (', jsonb_build_object('quote', p_cause), '): ', p_recovered,
                format('. The problem began at %s.',
                       document_jobs_internal.alert_time(v_outage.since))))));
        return 1;
    end if;
    return 0;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.set_outage_once(p_cause text, p_level bigint, p_summary text, p_recovered text, p_evidence jsonb) IS 'set_outage for a cause that alerts once per episode: p_level null is no evidence, 0 clears it (with a recovered alert after a down alert, as set_outage sends), above 0 holds it; a down alert goes out when the episode opens (set_outage''s one-an-hour rule still holds it back after a recent alert of the same cause, until the hour passes) and once more each time the level rises, never as an hourly reminder.';
CREATE FUNCTION document_jobs_internal.set_outage_once(p_cause text, p_level bigint, p_summary text, p_recovered text, p_evidence jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_outage document_jobs_internal.outages;
    v_sent int;
begin
    if p_level is null then
        return 0;  -- no evidence either way
    end if;
    select * into strict v_outage from document_jobs_internal.outages o where o.cause = p_cause for update;
    if p_level > 0 and v_outage.active and v_outage.alerted_at >= v_outage.since then
        if p_level <= coalesce(v_outage.alerted_level, 0) then
            return 0;  -- this episode was told, at this level: no hourly reminder
        end if;
        -- The level rose (three quarters of the window, a new unreadable e-mail): tell it now.
        update document_jobs_internal.outages o set alerted_at = null where o.cause = p_cause;
    end if;
    v_sent := document_jobs_internal.set_outage(p_cause, p_level > 0, p_summary, p_recovered, p_evidence);
    if p_level = 0 then
        update document_jobs_internal.outages o set alerted_level = null where o.cause = p_cause;
    elsif v_sent > 0 then
        update document_jobs_internal.outages o set alerted_level = p_level where o.cause = p_cause;
    end if;
    return v_sent;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.set_outage_once(p_cause text, p_level bigint, p_summary text, p_recovered text, p_evidence jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.start_verify_run(p_started_by text, p_job_id uuid, p_since timestamp with time zone, p_sample integer) IS 'A new verification run: of every original stored since p_since (null: all), or of a sample of p_sample of them drawn now (original_sample).';
CREATE FUNCTION document_jobs_internal.start_verify_run(p_started_by text, p_job_id uuid, p_since timestamp with time zone, p_sample integer) RETURNS public.original_verify_runs
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
    v_recent interval;
    v_selected uuid[];
    v_run public.original_verify_runs;
begin
    perform document_jobs_internal.require(p_sample is null or p_sample between 1 and 100000,
                                           'p_sample must be between 1 and 100000');
    perform document_jobs_internal.require(p_since is null or p_since <= now(), 'p_since must not be in the future');
    if p_sample is not null then
        select make_interval(days => s.recent_days) into v_recent from public.original_verification s;
        v_selected := document_jobs_internal.original_sample(p_sample, p_since, v_recent);
    end if;
    insert into public.original_verify_runs (started_by, job_id, since, sample, selected, total)
    values (p_started_by, p_job_id, p_since, p_sample, v_selected,
            coalesce(cardinality(v_selected),
                     (select count(*) from public.fax_received_email_attachments a
                       where a.created_at >= coalesce(p_since, '-infinity'))))
    returning * into v_run;
    return v_run;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.start_verify_run(p_started_by text, p_job_id uuid, p_since timestamp with time zone, p_sample integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.start_workers(p_at_most integer) IS 'The fan-out, the cron''s and a stopping invocation''s follow-up: one invocation per limits().jobs_per_invocation claimable jobs of the kinds a worker claims (those with a document_job_kinds.claim_order), at most p_at_most (null: no bound but the cap), within the cap on invocations in flight (post_worker). Nothing claimable: no HTTP at all.';
CREATE FUNCTION document_jobs_internal.start_workers(p_at_most integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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
REVOKE ALL ON FUNCTION document_jobs_internal.start_workers(p_at_most integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.text_array(p_value jsonb) IS 'A field of the webhook''s data that should be a list of addresses: a lone string counts as one.';
CREATE FUNCTION document_jobs_internal.text_array(p_value jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
    select case jsonb_typeof(p_value)
               when 'array' then array(select jsonb_array_elements_text(p_value))
               when 'string' then array[p_value #>> '{}']
               else '{}'::text[]
           end
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.text_array(p_value jsonb) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.try_timestamptz(p_value text) IS 'A field of the webhook''s data that should be a timestamp: an ISO 8601 date and time (with or without a zone) that PostgreSQL reads, or null, so that nothing else (a bare date, a word, 2026-02-30) is ever guessed at.';
CREATE FUNCTION document_jobs_internal.try_timestamptz(p_value text) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
begin
    if p_value !~ '^\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?$' then
        return null;  -- also for null
    end if;
    return p_value::timestamptz;
exception
    when others then  -- 2026-02-30
        return null;
end;
$_$;
REVOKE ALL ON FUNCTION document_jobs_internal.try_timestamptz(p_value text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.try_uuid(p_text text) IS 'p_text as a uuid, or null when it is none.';
CREATE FUNCTION document_jobs_internal.try_uuid(p_text text) RETURNS uuid
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
    return p_text::uuid;
exception when invalid_text_representation then
    return null;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.try_uuid(p_text text) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.unprepared(p_email_id uuid) IS 'Whether the e-mail has a stored attachment no prepare_fax job has looked at (no view of its bytes, prepared or failed): what the backfill enqueues a job for, so that a run again enqueues nothing twice and a file that could not be prepared is not tried again and again.';
CREATE FUNCTION document_jobs_internal.unprepared(p_email_id uuid) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select exists (select 1
                     from public.fax_received_email_attachments a
                    where a.fax_received_email_id = p_email_id
                      and not exists (select 1 from public.fax_attachment_views v
                                       where v.attachment_id = a.id and v.source_sha256 = a.sha256))
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.unprepared(p_email_id uuid) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.unreadable_shown(p_limit integer) IS 'The newest p_limit open unreadable items as health and the screen show them: what could be read of each (item: id, created_at, from, to, subject, message_id, file names, as listed), why it could not be recorded, and when it was first and last listed.';
CREATE FUNCTION document_jobs_internal.unreadable_shown(p_limit integer) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce(jsonb_agg(jsonb_build_object('reason', u.reason, 'item', u.item, 'first_listed_at', u.first_listed_at,
                                                 'last_listed_at', u.last_listed_at, 'listed_by', u.listed_by)
                              order by u.id desc), '[]'::jsonb)
      from (select * from document_jobs_internal.open_unreadable() o order by o.id desc limit p_limit) u
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.unreadable_shown(p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.verify_items(p_run public.original_verify_runs, p_after uuid, p_limit integer) IS 'The next p_limit originals of a run not read yet, by id after p_after: where each is (bucket, storage_path), what it must be (size_bytes, sha256), the sender''s file name (filename: to be shown as inert text) and its fax (fax_received_email_id, whose first 8 characters are the fax''s short id).';
CREATE FUNCTION document_jobs_internal.verify_items(p_run public.original_verify_runs, p_after uuid, p_limit integer) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    select coalesce(jsonb_agg(jsonb_build_object(
               'id', a.id, 'fax_received_email_id', a.fax_received_email_id, 'filename', a.filename, 'bucket', a.bucket,
               'storage_path', a.storage_path, 'size_bytes', a.size_bytes, 'sha256', a.sha256)
             order by a.id), '[]')
      from (select a.*
              from public.fax_received_email_attachments a
             where (p_after is null or a.id > p_after)
               and case when p_run.selected is not null then a.id = any (p_run.selected)
                        else a.created_at >= coalesce(p_run.since, '-infinity') and a.created_at <= p_run.started_at end
               and not exists (select 1 from public.original_verifications v
                                where v.run_id = p_run.id and v.attachment_id = a.id)
             order by a.id
             limit p_limit) a
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.verify_items(p_run public.original_verify_runs, p_after uuid, p_limit integer) FROM PUBLIC;

COMMENT ON FUNCTION document_jobs_internal.write_handling(p_before public.fax_handling, p_after public.fax_handling, p_note text, p_audit_id bigint) IS 'A mark written: its fax_handling_history row (from p_before to p_after, the note given, under the audit row p_audit_id) and the fax''s fax_handling row. The caller holds the fax''s lock and has written the audit row.';
CREATE FUNCTION document_jobs_internal.write_handling(p_before public.fax_handling, p_after public.fax_handling, p_note text, p_audit_id bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
    insert into public.fax_handling_history (fax_received_email_id, actor_id, actor_email, from_state, to_state,
                                             from_assignee_email, to_assignee_email, note, audit_id)
    values (p_after.fax_received_email_id, p_after.updated_by, p_after.updated_by_email,
            coalesce(p_before.state, 'new'), p_after.state, p_before.assignee_email, p_after.assignee_email,
            nullif(btrim(p_note), ''), p_audit_id);
    insert into public.fax_handling (fax_received_email_id, state, assignee_id, assignee_email, note, updated_at,
                                     updated_by, updated_by_email)
    values (p_after.fax_received_email_id, p_after.state, p_after.assignee_id, p_after.assignee_email, p_after.note,
            p_after.updated_at, p_after.updated_by, p_after.updated_by_email)
    on conflict (fax_received_email_id) do update
       set state = excluded.state, assignee_id = excluded.assignee_id, assignee_email = excluded.assignee_email,
           note = excluded.note, updated_at = excluded.updated_at, updated_by = excluded.updated_by,
           updated_by_email = excluded.updated_by_email;
end;
$$;
REVOKE ALL ON FUNCTION document_jobs_internal.write_handling(p_before public.fax_handling, p_after public.fax_handling, p_note text, p_audit_id bigint) FROM PUBLIC;
