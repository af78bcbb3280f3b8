-- The law's search in the inbox's read (20261207150100): transaction date and amount ranges (both
-- ends included), a counterparty in part whatever its kana or width, the document type, combined
-- with each other and with the inbox's own filters, newest first with the exact count and pages;
-- bad values refused; a fax with no index entry is never found by these keys.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(16);

create table t.clerk (user_id uuid primary key default gen_random_uuid());
insert into t.clerk default values;
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.clerk to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, created_at, updated_at)
select c.user_id, 'authenticated', 'authenticated', 'clerk-045@example.com',
       '{"provider": "email", "document_jobs_role": "clerk"}', now(), now() from t.clerk c;
set local role postgres;

-- Five faxes a minute apart (f1 oldest), four of them indexed.
insert into fax_received_emails (provider_email_id, data, from_address, subject, received_at)
select 'f' || n, '{}', 'fax@example.jp', 'FAX ' || n, timestamptz '2026-12-01 09:00+09' + n * interval '1 minute'
  from generate_series(1, 5) n;
select set_fax_index((select user_id from t.clerk), null, t.email_id(v.id), v.fields)
  from (values ('f1', '{"transaction_date": "2026-11-01", "amount": 10000, "counterparty": "株式会社ヤマダ商事", "doc_type": "請求書"}'::jsonb),
               ('f2', '{"transaction_date": "2026-11-15", "amount": 250000, "counterparty": "ｶﾜｸﾞﾁ工業", "doc_type": "注文書"}'),
               ('f3', '{"transaction_date": "2026-11-30", "counterparty": "やまだ商事", "doc_type": "納品書"}'),
               ('f4', '{"transaction_date": "2026-12-01", "amount": 99999, "counterparty": "ＡＢＣ Trading", "doc_type": "請求書"}'))
       v(id, fields);
create function t.found(p_filter jsonb) returns text[] language sql as $$
    select array(select e.provider_email_id
                   from jsonb_array_elements(document_jobs_admin_faxes(p_filter) -> 'faxes') with ordinality f(fax, n)
                   join fax_received_emails e on e.id = (f.fax ->> 'id')::uuid order by f.n) $$;
create function t.found_after(p_filter jsonb, p_next jsonb) returns text[] language sql as $$
    select array(select e.provider_email_id
                   from jsonb_array_elements(document_jobs_admin_faxes(p_filter, (p_next ->> 'received_at')::timestamptz,
                                                                        (p_next ->> 'id')::uuid, 1) -> 'faxes')
                        with ordinality f(fax, n)
                   join fax_received_emails e on e.id = (f.fax ->> 'id')::uuid order by f.n) $$;
create function t.second_page(p_filter jsonb) returns text[] language sql as $$
    select t.found_after(p_filter, document_jobs_admin_faxes(p_filter, null, null, 1) -> 'next') $$;
grant execute on all functions in schema t to service_role;
set local role service_role;

select is(t.found('{"date_from": "2026-11-15", "date_to": "2026-11-30"}'), array['f3', 'f2'],
          'a transaction date range, both days included, newest first');
select is(t.found('{"amount_min": 10000, "amount_max": 99999}'), array['f4', 'f1'], 'an amount range, both ends included');
select is(t.found('{"amount_min": "250000"}'), array['f2'], '... an amount given as digits too');
select is(t.found('{"counterparty": "ヤマダ"}'), array['f3', 'f1'],
          'a counterparty in part, katakana finding hiragana');
select is(t.found('{"counterparty": "かわぐち"}'), array['f2'], '... hiragana finding half-width katakana');
select is(t.found('{"counterparty": "abc trad"}'), array['f4'], '... ASCII finding full-width, whatever the case or spaces');
select is(t.found('{"counterparty": "工"}'), array['f2'], '... one character');
select is(t.found('{"doc_type": "請求書"}'), array['f4', 'f1'], 'a document type');
select is(t.found('{"doc_type": "請求書", "amount_max": 50000, "counterparty": "やまだ"}'), array['f1'],
          'any of them combined');
select is(t.found('{"doc_type": "請求書", "received_from": "2026-12-01T09:02:00+09:00"}'), array['f4'],
          '... and with the inbox''s own filters');
select is(document_jobs_admin_faxes('{"counterparty": "商"}') -> 'count', '2', 'the exact count');
select is(document_jobs_admin_faxes('{"doc_type": "請求書"}', null, null, 1) -> 'faxes' -> 0 -> 'index' ->> 'amount',
          '99999', 'a listed fax shows its index fields');
select is(t.second_page('{"doc_type": "請求書"}'), array['f1'], 'the next page continues after the first');
select throws_ok($$select document_jobs_admin_faxes('{"doc_type": "請求"}')$$, '22023', null, 'a type not in the list is refused');
select throws_ok($$select document_jobs_admin_faxes('{"date_from": "2026-12-02", "date_to": "2026-12-01"}')$$, '22023',
                 null, '... as is a date range that ends before it starts');
select throws_ok($$select document_jobs_admin_faxes('{"amount_min": -1}')$$, '22023', null, '... and a negative amount');
select * from finish();
rollback;
