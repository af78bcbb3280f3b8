-- The office's own settings, apart from the queue's (document_jobs_settings): what the office
-- decides, not what an operator tunes. Today its time zone, one setting that every date the office
-- reads follows (the inbox, announcements of new faxes, keep-until dates, exports' file names); the
-- retention of faxes adds its fiscal-year settings here. A row set by hand (update ... set) is held
-- to the same checks as one set by a function.
create function document_jobs_internal.is_time_zone(p_name text) returns boolean
    language plpgsql stable
    set search_path = ''
as $$
begin
    -- pg_timezone_names lists the IANA names the server knows; an abbreviation (JST) or an offset
    -- (+09) is refused: an abbreviation is ambiguous and an offset ignores a zone's rules.
    return exists (select from pg_catalog.pg_timezone_names where name = p_name);
end
$$;
comment on function document_jobs_internal.is_time_zone(text) is
    'Whether p_name is an IANA time zone the server knows (pg_timezone_names), e.g. Asia/Tokyo: for the check of office_settings.time_zone.';
revoke all on function document_jobs_internal.is_time_zone(text) from public;

create table public.office_settings (
    singleton boolean primary key default true check (singleton),
    time_zone text not null default 'Asia/Tokyo'
        constraint office_settings_time_zone check (document_jobs_internal.is_time_zone(time_zone))
);
comment on table public.office_settings is
    'The office''s settings, one row: time_zone (an IANA name, default Asia/Tokyo), the zone of every date the office reads (the inbox, announcements, keep-until dates, exports). Changed by hand as the project owner (update office_settings set ...), checked by constraints.';
insert into public.office_settings default values;
alter table public.office_settings enable row level security;
revoke all on table public.office_settings from anon, authenticated, service_role;
grant select on table public.office_settings to service_role;

create function document_jobs_internal.office_time_zone() returns text
    language sql stable
    set search_path = ''
as $$ select time_zone from public.office_settings $$;
comment on function document_jobs_internal.office_time_zone() is
    'The office''s time zone (office_settings.time_zone): the one place SQL reads it from.';
revoke all on function document_jobs_internal.office_time_zone() from public;
