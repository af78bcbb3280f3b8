-- Every object of public and document_jobs_internal says what it is (supabase/tests/014_comments.sql):
-- the identity sequence of unreadable_listed_emails (20261204100000) had no comment.
comment on sequence document_jobs_internal.unreadable_listed_emails_id_seq is
    'The identity of unreadable_listed_emails.id: the order in which reconciliation first saw an unreadable listing item.';
