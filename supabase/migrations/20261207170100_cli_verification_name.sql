-- The CLI's record of what `verify` read, renamed: a name with a _v2 beside it means, in this
-- schema, a call that the _v2 replaced (supabase/future_migrations drops such names), and this one
-- is not replaced by the job's fenced record_original_checks_v2: it is the run by hand's own.
alter function public.record_original_checks(bigint, jsonb) rename to record_verified_originals;
