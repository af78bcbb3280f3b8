-- The office's settings: one row, its time zone an IANA name (Asia/Tokyo by default), checked when
-- set by hand, and read by SQL through office_time_zone(); service_role reads them, no one else.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
select plan(8);

select is((select count(*)::int from public.office_settings), 1, 'one row of office settings');
select is(document_jobs_internal.office_time_zone(), 'Asia/Tokyo', 'the office time zone is Asia/Tokyo by default');
update public.office_settings set time_zone = 'Europe/Paris';
select is(document_jobs_internal.office_time_zone(), 'Europe/Paris', 'set by hand, it is read back');
select throws_ok($$ update public.office_settings set time_zone = 'JST' $$, '23514', null,
                 'an abbreviation is refused: it is ambiguous');
select throws_ok($$ update public.office_settings set time_zone = '+09' $$, '23514', null,
                 'an offset is refused: it ignores the zone''s rules');
select throws_ok($$ insert into public.office_settings (singleton) values (false) $$, '23514', null,
                 'there is one row');
select ok(has_table_privilege('service_role', 'public.office_settings', 'select')
          and not has_table_privilege('service_role', 'public.office_settings', 'update'),
          'service_role reads the settings and cannot change them');
select ok(not has_table_privilege('authenticated', 'public.office_settings', 'select')
          and not has_table_privilege('anon', 'public.office_settings', 'select'),
          'authenticated and anon cannot read them');

select * from finish();
rollback;
