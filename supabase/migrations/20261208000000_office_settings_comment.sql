-- The office settings' table comment names every column again: the retention's and the
-- announcements' migrations each wrote it with their own columns only.
comment on table public.office_settings is
    'The office''s settings, one row: time_zone (an IANA name, default Asia/Tokyo), the zone of every date the office reads (the inbox, announcements, keep-until dates, exports); the retention of faxes: fiscal_year_end_month, filing_deadline_months, retention_years (document_jobs_internal.keep_until); announce_language, the language of the chat announcements of new faxes, and screen_url, where they link to. Changed by hand as the project owner (update office_settings set ...), checked by constraints.';
