-- The received time of an e-mail is its webhook's data.created_at only when that is an ISO 8601
-- date and time. Until now any text Postgres casts to a timestamp was taken, and Postgres reads
-- some words as times of their own: 'now' (the moment of the insert), 'today', 'yesterday',
-- 'tomorrow', 'epoch', 'infinity', '-infinity'. A sender's "created_at": "yesterday" became the
-- received time. Anything else is left empty, as an unparsable date always was: where a time is
-- shown, the row's created_at (its arrival) stands in, and the webhook logs
-- email_received_at_unusable (lib/webhook.py has the same rule; tests/test_bad_input.py holds the
-- two to the same answers). The e-mail is recorded either way.

create or replace function document_jobs_internal.try_timestamptz(p_value text)
returns timestamptz
language plpgsql
stable  -- the text's meaning depends on the session's TimeZone when it names no offset
set search_path = ''
as $$
begin
    if p_value !~ '^\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?$' then
        return null;  -- also for null
    end if;
    return p_value::timestamptz;
exception
    when others then  -- 2026-02-30
        return null;
end;
$$;

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
