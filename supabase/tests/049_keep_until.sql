-- A fax's keep-until date (20261207180000_retention.sql): 7 (or 10) years from the day after the
-- filing deadline (2 months after the fiscal year's end, or 3) of the fiscal year the fax was
-- received in, that year taken from the day of receipt in the office's time zone. The settings are
-- checked by constraints; document_jobs_internal.keep_until is the one computation, and it follows
-- a change of the settings.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(24);

-- The defaults: a March year end, 2 months to file, 7 years, Tokyo.
select is((select row(fiscal_year_end_month, filing_deadline_months, retention_years, time_zone)::text
             from office_settings), '(3,2,7,Asia/Tokyo)', 'by default: March, 2 months, 7 years, Asia/Tokyo');
select is(document_jobs_internal.keep_until('2026-04-01 00:00+09'), date '2034-05-31',
          'received on the first day of the year ending 2027-03-31: filed by 2027-05-31, kept until 2034-05-31');
select is(document_jobs_internal.keep_until('2027-03-31 23:30+09'), date '2034-05-31',
          'received at 23:30 on the last day of the year in Tokyo, the same year');
select is(document_jobs_internal.keep_until('2027-03-31 14:30Z'), date '2034-05-31',
          '... which is 14:30 UTC: the day is the office''s, not UTC''s');
select is(document_jobs_internal.keep_until('2027-03-31 15:00Z'), date '2035-05-31',
          'half an hour later (00:00 on April 1st in Tokyo): the next year, one year more');
select is(document_jobs_internal.keep_until(null), null, 'no time, no date');

-- The office's zone decides the day: the same instant in New York is still March 31st there.
update office_settings set time_zone = 'America/New_York';
select is(document_jobs_internal.keep_until('2027-04-01 03:00Z'), date '2034-05-31',
          'the office in New York: 2027-04-01 03:00 UTC is March 31st there, the year ending in March 2027');
update office_settings set time_zone = 'Asia/Tokyo';

-- An extension of the deadline (3 months): a month more.
update office_settings set filing_deadline_months = 3;
select is(document_jobs_internal.keep_until('2027-03-31 12:00+09'), date '2034-06-30',
          'with an extension: filed by 2027-06-30, kept until 2034-06-30');
-- 10 years for a year with a loss carried forward.
update office_settings set retention_years = 10;
select is(document_jobs_internal.keep_until('2027-03-31 12:00+09'), date '2037-06-30', '10 years: until 2037-06-30');
update office_settings set filing_deadline_months = 2, retention_years = 7;

-- A year ending in February: its last day is the 28th or, in a leap year, the 29th; the deadline
-- is the end of April either way.
update office_settings set fiscal_year_end_month = 2;
select is(document_jobs_internal.keep_until('2028-02-29 23:59+09'), date '2035-04-30',
          'a February year end: received on 2028-02-29 (a leap day), the year ending that day: until 2035-04-30');
select is(document_jobs_internal.keep_until('2028-03-01 00:00+09'), date '2036-04-30',
          '... received the next day, the year ending 2029-02-28: until 2036-04-30');
select is(document_jobs_internal.keep_until('2027-02-28 23:00+09'), date '2034-04-30',
          '... in a year that is not a leap year, the 28th is the last day: until 2034-04-30');
select is(document_jobs_internal.keep_until('2027-03-01 00:30+09'), date '2035-04-30',
          '... and March 1st is the next year''s');

-- A December year end (the calendar year) with an extension: the deadline is in the next year.
update office_settings set fiscal_year_end_month = 12, filing_deadline_months = 3;
select is(document_jobs_internal.keep_until('2027-12-31 23:00+09'), date '2035-03-31',
          'a December year end with an extension: filed by 2028-03-31, kept until 2035-03-31');
select is(document_jobs_internal.keep_until('2028-01-01 00:00+09'), date '2036-03-31',
          '... received on New Year''s Day, the next year');
-- And with 2 months, the deadline is the end of February: the 29th of a leap year.
update office_settings set filing_deadline_months = 2;
select is(document_jobs_internal.keep_until('2027-06-15 12:00+09'), date '2035-02-28',
          'a December year end, 2 months: filed by 2028-02-29, kept 7 years from 2028-03-01: until 2035-02-28');
-- A September year end.
update office_settings set fiscal_year_end_month = 9;
select is(document_jobs_internal.keep_until('2026-10-01 09:00+09'), date '2034-11-30',
          'a September year end: the year ending 2027-09-30, filed by 2027-11-30: until 2034-11-30');
update office_settings set fiscal_year_end_month = 3;

-- The settings are checked by constraints, whoever sets them.
select throws_ok($$ update office_settings set fiscal_year_end_month = 13 $$, '23514', null, 'a 13th month is refused');
select throws_ok($$ update office_settings set fiscal_year_end_month = 0 $$, '23514', null, 'month 0 is refused');
select throws_ok($$ update office_settings set filing_deadline_months = 4 $$, '23514', null,
                 'a deadline of 4 months is refused (2, or 3 with an extension)');
select throws_ok($$ update office_settings set retention_years = 5 $$, '23514', null,
                 'keeping 5 years is refused (7, or 10)');

-- A fax's retention, as its page reads it: deletable once the office's today is past the date.
select t.add_emails('ret-new');
insert into fax_received_emails (provider_email_id, data, received_at) values ('ret-old', '{}', '2015-06-01 10:00+09');
select is(document_jobs_internal.fax_retention(e) ->> 'keep_until', '2023-05-31', 'an old fax: kept until 2023-05-31')
  from fax_received_emails e where provider_email_id = 'ret-old';
select is((document_jobs_internal.fax_retention(e) ->> 'deletable')::boolean, true, '... and deletable now')
  from fax_received_emails e where provider_email_id = 'ret-old';
select is((document_jobs_internal.fax_retention(e) ->> 'deletable')::boolean, false,
          'a fax received today (no received_at: when it was recorded) is not deletable')
  from fax_received_emails e where provider_email_id = 'ret-new';

select * from finish();
rollback;
