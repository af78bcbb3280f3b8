-- What the inbox's helpers are, said where the catalog keeps it (supabase/tests/014 checks that
-- every function has a comment).
comment on function document_jobs_internal.faxes_match_sql(jsonb) is
    'A normalized inbox filter''s conditions as SQL over an e-mail row "e", the time range excepted: the sender''s text in the From line or the subject, the number''s digits, the line, the search term (the e-mail''s id, the provider''s id, or text of the From line or the subject); "true" when there are none.';
comment on function document_jobs_internal.faxes_time_sql(jsonb) is
    'A normalized inbox filter''s received-time range as SQL over an e-mail row "e" (the received time, else the row''s creation); "true" when it has none.';
comment on function document_jobs_internal.faxes_candidates(jsonb, int) is
    'The e-mails that may match an inbox filter, found through its indexes, at most p_limit of them (p_limit means "maybe more"), or null when no index can answer (a term shorter than three characters): by number the digits'' trigram index; by sender or term the distinct senders, the subjects'' trigram index and the provider''s id; an id as itself.';
comment on function document_jobs_internal.fax_storing(uuid) is
    'How a fax stands, from its jobs as far as they are kept: "stored" (completed, or no job left, which only the purge of completed jobs leaves), "fetching" while its fetch_email job is live, "failed" with its code, "preparing" while its prepare_fax job is live; "job_id" is the fetch job shown, for an admin''s link.';
comment on function document_jobs_internal.fax_summary(public.fax_received_emails) is
    'A fax as the inbox lists it: the e-mail''s facts, the line that received it, its pages (its attachments'' views derived from the stored bytes), its page-1 thumbnail''s key (the screen signs it), the code of a view that could not be made, and how it stands (fax_storing).';
