-- The law's counterparty search by the distinct names (20261208001000), the type-and-dates index
-- (20261208001100), the overview's failed jobs read once (20261208002000) and the number search by
-- runs of digits (20261208003000): fax_counterparties
-- follows every write of fax_index (insert and update, a load of many rows too); the search's SQL
-- names the matching folded names (one as an equality, several as a list, none as an empty one);
-- the answers are those of a LIKE over the folded counterparties, exact counts included; and the
-- plans the bench found fast are there. A number is found by its runs of digits exactly as by
-- fax_number_digits, a run too long to index included, its page and count from its candidates.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(22);

create table t.clerk (user_id uuid primary key default gen_random_uuid());
insert into t.clerk default values;
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.clerk to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, created_at, updated_at)
select c.user_id, 'authenticated', 'authenticated', 'clerk-057@example.com',
       '{"provider": "email", "document_jobs_role": "clerk"}', now(), now() from t.clerk c;
set local role postgres;

-- Six faxes a minute apart (c1 oldest), five of them indexed.
insert into fax_received_emails (provider_email_id, data, from_address, subject, received_at)
select 'c' || n, '{}', 'fax@example.jp', 'FAX ' || n, timestamptz '2026-12-01 09:00+09' + n * interval '1 minute'
  from generate_series(1, 6) n;
select set_fax_index((select user_id from t.clerk), null, t.email_id(v.id), v.fields)
  from (values ('c1', '{"transaction_date": "2026-11-01", "amount": 10000, "counterparty": "スズキ商事", "doc_type": "請求書"}'::jsonb),
               ('c2', '{"transaction_date": "2026-11-02", "amount": 20000, "counterparty": "すずき商事", "doc_type": "請求書"}'),
               ('c3', '{"transaction_date": "2026-11-03", "amount": 30000, "counterparty": "ｽｽﾞｷ 工業", "doc_type": "注文書"}'),
               ('c4', '{"transaction_date": "2026-11-04", "counterparty": "タナカ商店", "doc_type": "請求書"}'),
               ('c5', '{"transaction_date": "2026-11-05", "amount": 50000, "doc_type": "請求書"}'))
       v(id, fields);

select is(array(select c.folded from document_jobs_internal.fax_counterparties c order by c.folded),
          array['すずき商事', 'すずき工業', 'たなか商店']::text[],
          'every folded counterparty written through set_fax_index is kept, once');
select set_fax_index((select user_id from t.clerk), null, t.email_id('c4'),
                     '{"transaction_date": "2026-11-04", "counterparty": "タナカ産業", "doc_type": "請求書"}',
                     'the counterparty was misread');
select ok(exists (select 1 from document_jobs_internal.fax_counterparties c where c.folded = 'たなか産業'),
          'a counterparty changed later is kept too ...');
select ok(exists (select 1 from document_jobs_internal.fax_counterparties c where c.folded = 'たなか商店'),
          '... and the old one stays, matching no fax');
-- A load of many rows at once (as a restore would write them): one statement, every name.
insert into fax_received_emails (provider_email_id, data, received_at)
select 'load' || n, '{}', timestamptz '2026-11-01 09:00+09' + n * interval '1 minute' from generate_series(1, 3) n;
insert into fax_index (fax_received_email_id, received, transaction_date, counterparty, doc_type, updated_by)
select t.email_id('load' || n), now(), date '2026-10-01', 'ロード商事' || n, '請求書', (select user_id from t.clerk)
  from generate_series(1, 3) n;
select is((select count(*)::int from document_jobs_internal.fax_counterparties c where c.folded like 'ろーど商事%'), 3,
          'a statement that writes many faxes keeps each of their names');

-- The search's SQL names the matching names.
select is(document_jobs_internal.faxes_index_sql('{"counterparty": "タナカ産"}'),
          'true and i.counterparty_folded = ''たなか産業''', 'one matching name: an equality');
select is(document_jobs_internal.faxes_index_sql('{"counterparty": "ｽｽﾞｷ"}'),
          'true and i.counterparty_folded = any (''{すずき商事,すずき工業}''::text[])',
          'several: the list, whatever the kana or width of the term');
select is(document_jobs_internal.faxes_index_sql('{"counterparty": "存在しない"}'),
          'true and i.counterparty_folded = any (''{}''::text[])', 'none: an empty list');
select is(document_jobs_internal.faxes_index_sql('{"counterparty": "%"}'),
          'true and i.counterparty_folded = any (''{}''::text[])', 'a LIKE wildcard is a character like any other');

-- The answers: those of LIKE over the folded counterparties.
create function t.found(p_filter jsonb) returns text[] language sql as $$
    select array(select e.provider_email_id
                   from jsonb_array_elements(document_jobs_admin_faxes(p_filter) -> 'faxes') with ordinality f(fax, n)
                   join fax_received_emails e on e.id = (f.fax ->> 'id')::uuid order by f.n) $$;
select is(t.found('{"counterparty": "すずき"}'), array['c3', 'c2', 'c1'],
          'a counterparty in part finds every fax whose folded name holds it, newest first');
select is(document_jobs_admin_faxes('{"counterparty": "すずき"}') -> 'count', '3'::jsonb, '... counted exactly');
select is(t.found('{"counterparty": "すずき", "amount_min": 15000, "amount_max": 30000}'), array['c3', 'c2'],
          '... with an amount range');
select is(t.found('{"counterparty": "たなか"}'), array['c4'], 'a changed counterparty is found by its new name only');

-- Type, amount and dates: the index the count reads.
select is(t.found('{"doc_type": "請求書", "amount_min": 15000, "date_from": "2026-11-02", "date_to": "2026-11-05"}'),
          array['c5', 'c2'], 'type, amount and dates combined');
select is(array(select indexrelid::regclass::text from pg_index
                 where indexrelid::regclass::text in ('fax_index_by_counterparty', 'fax_index_type_dates',
                                                      'document_jobs_failed', 'fax_handling_done')
                 order by 1),
          array['document_jobs_failed', 'fax_handling_done', 'fax_index_by_counterparty', 'fax_index_type_dates'],
          'the indexes the searches and the overview read are there');
select ok(not exists (select 1 from pg_class where relname = 'fax_index_counterparty'),
          'the grams'' index, read no more, is gone');

-- Numbers: the runs of digits, the distinct ones kept, and the search by them.
select is(array(select r from unnest(document_jobs_internal.fax_number_runs(document_jobs_internal.fax_number_digits(
                                          'FAX 送信元 ０３－１２３４－５６７８ です、12枚、0012', '取引先0012 <fax12@example.jp>'))) r
                 order by r),
          array['0012', '0312345678']::text[], 'the runs of three digits or more of a fax''s digits, distinct');
select ok((select r @> array['345', '…'] and cardinality(r) = 2
             from document_jobs_internal.fax_number_runs('12|' || repeat('9', 41) || '|345') r),
          'a run of more than 40 digits is listed as too long to index ("…")');
insert into fax_received_emails (provider_email_id, data, from_address, subject, received_at)
values ('n1', '{}', 'a <fax@example.jp>', 'eFax 送信元 03-5555-1212', timestamptz '2001-01-01 09:00+09'),
       ('n2', '{}', 'b <fax@example.jp>', 'eFax 送信元 ０３（５５５５）１２１２', timestamptz '2001-01-01 09:01+09'),
       ('n3', '{}', 'c <fax@example.jp>', 'FAX ' || repeat('7', 30) || '0355551212' || repeat('7', 30), timestamptz '2001-01-01 09:02+09'),
       ('n4', '{}', 'd <fax@example.jp>', 'eFax 送信元 03-5555-1213', timestamptz '2001-01-01 09:03+09');
select ok(exists (select 1 from document_jobs_internal.email_number_runs r where r.digits = '0355551212'),
          'the runs of a recorded e-mail are kept among the distinct ones');
create function t.numbered(p_number text) returns text[] language sql as $$
    select array(select e.provider_email_id
                   from jsonb_array_elements(document_jobs_admin_faxes(jsonb_build_object('number', p_number,
                            'received_from', '2001-01-01T00:00:00Z', 'received_to', '2001-01-02T00:00:00Z')) -> 'faxes')
                        with ordinality f(fax, n)
                   join fax_received_emails e on e.id = (f.fax ->> 'id')::uuid order by f.n) $$;
select is(t.numbered('0355551212'), array['n3', 'n2', 'n1'],
          'a number: every fax whose digits hold it, a run too long to index included, newest first');
select is(t.numbered('555512'), array['n4', 'n3', 'n2', 'n1'], 'the middle of a number too');
select is(t.numbered('0355551212'), array(select e.provider_email_id from fax_received_emails e
                                           where document_jobs_internal.fax_number_digits(e.subject, e.from_address)
                                                 like '%0355551212%' and e.received_at < '2001-01-02'
                                           order by e.received_at desc),
          '... the same faxes as fax_number_digits finds');
select is(document_jobs_admin_faxes('{"number": "0355551212", "received_from": "2001-01-01T00:00:00Z"}') -> 'count',
          '3'::jsonb, '... counted exactly');

select * from finish();
rollback;
