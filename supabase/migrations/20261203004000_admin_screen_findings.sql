-- The admin screen's smaller findings (issue 31): what the clients' roles hold, cancelled jobs in a
-- bulk retry, and the ids people see.

-- The audit's identity sequence: 20261201004100 revoked the table, but Supabase's default
-- privileges had given anon and authenticated ALL on the sequence it made (USAGE, SELECT, UPDATE:
-- they could read and move the audit's ids). Nothing uses it but the table's own default, under
-- the owner. supabase/tests/015_no_client_grants.sql checks every object of both schemas.
revoke all on sequence public.document_jobs_audit_id_seq from public, anon, authenticated, service_role;
