-- A fax's index fields and their history (20261207150000): a clerk or an admin enters them, a
-- viewer, a banned or deleted operator may not; every change is a history row with the fields
-- before and after, who and why; a correction of a value entered before needs a reason, filling in
-- an empty field does not; a write from a stale version changes nothing; the history refuses
-- UPDATE and DELETE to every role; the fax's read holds the index and its history; the
-- counterparties entered for a number are suggested.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(26);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       session_id uuid not null default gen_random_uuid(), role text,
                       banned_until timestamptz);
insert into t.people (name, role, banned_until) values ('admin', 'admin', null), ('clerk', 'clerk', null),
    ('viewer', 'viewer', null), ('banned', 'clerk', now() + interval '1 day');
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, banned_until, created_at, updated_at)
select p.user_id, 'authenticated', 'authenticated', p.name || '-044@example.com',
       jsonb_build_object('provider', 'email', 'document_jobs_role', p.role), p.banned_until, now(), now()
  from t.people p;
insert into auth.sessions (id, user_id, created_at, updated_at)
select p.session_id, p.user_id, now(), now() from t.people p;
set local role postgres;
create function t.who(p_name text) returns uuid language sql as $$ select user_id from t.people where name = p_name $$;

select record_inbound_email('em_044', 'msg_044', jsonb_build_object('email_id', 'em_044',
    'from', 'fax@example.jp', 'subject', 'FAX from 06-1111-2222', 'to', '["fax@office.example.jp"]'));
select record_inbound_email('em_044b', 'msg_044b', jsonb_build_object('email_id', 'em_044b',
    'from', 'fax@example.jp', 'subject', 'FAX from 06-1111-2222', 'to', '["fax@office.example.jp"]'));

set local role service_role;
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', t.who('viewer'), t.email_id('em_044'),
                        '{"doc_type": "請求書"}'), '42501', null, 'a viewer may not enter index fields');
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', t.who('banned'), t.email_id('em_044'),
                        '{"doc_type": "請求書"}'), '28000', null, '... nor a banned clerk');
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', gen_random_uuid(), t.email_id('em_044'),
                        '{"doc_type": "請求書"}'), '28000', null, '... nor a user Auth does not know');
select is((select count(*) from fax_index_history), 0::bigint, '... and none of them wrote anything');

select is(set_fax_index(t.who('clerk'), 'clerk-044@example.com', t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": " ヤマダ商事 ", "doc_type": "納品書"}', null, 0),
          '{"changed": true, "version": 1, "index": {"amount": null, "doc_type": "納品書", "counterparty": "ヤマダ商事", "transaction_date": "2026-11-30"}}',
          'a clerk enters the fields without a reason, the amount left empty (a 納品書 may have none)');
select is(set_fax_index(t.who('clerk'), 'clerk-044@example.com', t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": "ヤマダ商事", "doc_type": "納品書", "amount": 54000}',
                        null, 1) ->> 'version', '2', 'filling in the empty amount is not a correction: no reason needed');
select throws_ok(format('select set_fax_index(%L, null, %L, %L, null, 2)', t.who('clerk'), t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": "ヤマダ商事", "doc_type": "納品書", "amount": 45000}'),
                 '22023', null, 'a correction of the amount without a reason is refused');
select throws_ok(format('select set_fax_index(%L, null, %L, %L, %L, 2)', t.who('clerk'), t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": "ヤマダ商事", "doc_type": "請求書"}', '  '),
                 '22023', null, '... as is emptying a field with a blank reason');
select is(set_fax_index(t.who('admin'), 'admin-044@example.com', t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": "ヤマダ商事", "doc_type": "納品書", "amount": 45000}',
                        '金額の読み違い', 2) ->> 'changed', 'true', 'with a reason, an admin corrects it');
select is(set_fax_index(t.who('clerk'), null, t.email_id('em_044'), '{"amount": 1}', 'stale', 2)
          - 'index', '{"changed": false, "reason": "index_changed", "version": 3}',
          'a write from the version before is refused, changing nothing');
select is(set_fax_index(t.who('clerk'), null, t.email_id('em_044'),
                        '{"transaction_date": "2026-11-30", "counterparty": "ヤマダ商事", "doc_type": "納品書", "amount": 45000}',
                        null, 3) ->> 'reason', 'unchanged', 'the same values again change nothing');

select is((select array_agg(jsonb_build_array(h.version, h.actor_email, h.reason, h.before ->> 'amount',
                                              h.after ->> 'amount') order by h.id)
             from fax_index_history h where h.fax_received_email_id = t.email_id('em_044')),
          array['[1, "clerk-044@example.com", null, null, null]'::jsonb,
                '[2, "clerk-044@example.com", null, null, "54000"]',
                '[3, "admin-044@example.com", "金額の読み違い", "54000", "45000"]'],
          'the history keeps each change: version, who, why, the amount before and after');
select is((select h.before from fax_index_history h where h.version = 1 and h.fax_received_email_id = t.email_id('em_044')),
          null, '... the first entry has nothing before it');
select is((select h.after from fax_index_history h where h.version = 3),
          '{"amount": 45000, "doc_type": "納品書", "counterparty": "ヤマダ商事", "transaction_date": "2026-11-30"}',
          '... and every field after');
select is((select h.actor_id from fax_index_history h where h.version = 3), t.who('admin'), '... and who by id');
select is((select array[a.action, a.reason, a.filter ->> 'corrected'] from document_jobs_audit a
            where a.action = 'index' order by a.id desc limit 1),
          array['index', '金額の読み違い', '["amount"]'], 'the correction is audited with its reason and field');

-- Append-only, for every role.
select throws_ok('update fax_index_history set reason = null', '42501', null, 'the service role cannot change the history');
select throws_ok('delete from fax_index_history', '42501', null, '... nor delete it');
set local role postgres;
select throws_ok('update fax_index_history set reason = null', '42501', null, 'the owner cannot change it');
select throws_ok('delete from fax_index_history where version = 1', '42501', null, '... nor delete a row of it');
set local role service_role;
select throws_ok('update public.fax_index set amount = 1', '42501', null,
                 'the service role cannot write the index around set_fax_index');

-- Bad values.
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', t.who('clerk'), t.email_id('em_044b'),
                        '{"doc_type": "請求"}'), '22023', null, 'a document type outside the list is refused');
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', t.who('clerk'), t.email_id('em_044b'),
                        '{"amount": 12.5}'), '22023', null, '... as is an amount that is not whole yen');
select throws_ok(format('select set_fax_index(%L, null, %L, %L)', t.who('clerk'), gen_random_uuid(), '{}'),
                 'P0002', null, 'no fax, no index');

-- Its read and the suggestion.
select is(document_jobs_admin_fax(t.email_id('em_044')) -> 'index' ->> 'amount', '45000',
          'the fax''s read holds its index');
select is(jsonb_array_length(document_jobs_admin_fax(t.email_id('em_044')) -> 'index_history'), 3,
          '... and its history');
select * from finish();
rollback;
