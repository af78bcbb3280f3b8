-- The raw message is the record too: the e-mail as Resend received it (fax_received_email_raw_messages,
-- 20261207120000_originals_never_replaced.sql) is the evidence of when and from whom a fax came. Its
-- rows are written once and never updated; now the database refuses any UPDATE, DELETE or TRUNCATE
-- of them as it does for the e-mails and their attachments (record_guards), and the health check
-- watches its four guards with the others. A deletion goes as an e-mail's does: only where
-- fax_deletions names the e-mail.
--
-- After that migration, which came later than the guards' (20261207110100), this one: it also gives
-- the attachments' table its comment back, which that migration rewrote without saying that the
-- table is the record.

create or replace function document_jobs_internal.record_tables()
returns table (record_table text, email_column text)
language sql
immutable
set search_path = ''
as $$
    values ('public.fax_received_emails', 'id'),
           ('public.fax_received_email_attachments', 'fax_received_email_id'),
           ('public.fax_received_email_raw_messages', 'fax_received_email_id'),
           ('public.fax_deletions', null)
$$;

select document_jobs_internal.guard_record_tables();

comment on table public.fax_received_email_attachments is
    'THE RECORD of each stored original (the private bucket fax-attachments): its key, size, SHA-256, content type and name, one row per version, written by the worker through record_document_attachment_v3 (or _v2, a previous deploy''s worker) and never updated or deleted (record_guards; a deletion only as approved in fax_deletions): recording the same values again changes nothing, and other values for a recorded version are refused. Unique per e-mail, provider attachment id and version, and per object (bucket and key).';
comment on table public.fax_received_email_raw_messages is
    'THE RECORD of the e-mail itself, as Resend received it (the .eml behind the retrieve-received-email answer''s raw URL): one row per stored version, or one row saying why there is none (unavailable). Written by the fetch_email job through record_raw_message_v2 and never updated or deleted (record_guards; a deletion only as approved in fax_deletions). An e-mail fetched before this table, or older than Resend''s retention, has no row and cannot get one.';
