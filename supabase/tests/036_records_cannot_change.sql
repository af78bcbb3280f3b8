-- The record of received faxes cannot change: every table of record_tables() (the e-mails, their
-- attachments, their raw messages, the approved deletions and their objects' removals) refuses UPDATE, DELETE and TRUNCATE to anon, authenticated
-- and service_role (no privilege) and to the owner postgres, a security definer function and even
-- the cluster's superuser (the guard triggers), in a replica session too; a deletion goes only as
-- approved in fax_deletions, a cascade included; and a test cluster's reset is the one TRUNCATE
-- let through. Runs on the superuser's connection (as postgres but where the superuser is meant).
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(133);

-- Two faxes as the product records them, each with an attachment, its raw message and a job.
select record_inbound_email('em_1', 'msg_1', '{"from": "ABC商事 <fax@abc.example.jp>", "subject": "注文書"}');
-- em_2 was received long ago (kept until 2023-05-31): its deletion may be approved.
select record_inbound_email('em_2', 'msg_2', '{"from": "XYZ <fax@xyz.example.jp>", "subject": "請求書",
                                               "created_at": "2015-06-01T01:00:00Z"}');
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                            size_bytes, sha256, bucket, storage_path)
select email_id(e), 'att_1', '注文書.pdf', 'application/pdf', 908, repeat('a', 64), 'fax-attachments',
       'fax_received_emails/' || email_id(e) || '/att_1.pdf'
  from unnest(array['em_1', 'em_2']) e;
insert into fax_received_email_raw_messages (fax_received_email_id, bucket, storage_path, size_bytes, sha256)
select email_id(e), 'fax-attachments', 'fax_received_emails/' || email_id(e) || '/raw/message.eml', 4096,
       repeat('c', 64)
  from unnest(array['em_1', 'em_2']) e;
-- A deletion approved for em_2, as the retention's admin action records it; em_1 has none.
insert into fax_deletions (fax_received_email_id, actor_id, actor_email, reason, what)
values (email_id('em_2'), gen_random_uuid(), 'admin@example.jp', 'kept past its keep-until date',
        jsonb_build_object('attachments', 1));
-- ... and the removal of one of its objects, as the purge records it.
insert into fax_object_removals (deletion_id, bucket, storage_path, kind, actor_id)
select id, 'fax-attachments', 'fax_received_emails/' || fax_received_email_id || '/att_1.pdf', 'original', actor_id
  from fax_deletions;
create table t.before as
select (select jsonb_agg(e order by e.id) from fax_received_emails e) as emails,
       (select jsonb_agg(a order by a.id) from fax_received_email_attachments a) as attachments,
       (select jsonb_agg(r order by r.id) from fax_received_email_raw_messages r) as raw_messages,
       (select jsonb_agg(d order by d.id) from fax_deletions d) as deletions;

-- Every change of every record table, each meeting rows (a DELETE of no row would refuse nothing).
create table t.changes as
select format('%s of %s', op, tbl) as change,
       format(case op when 'UPDATE' then 'update %1$s set %2$I = %2$I' when 'DELETE' then 'delete from %1$s'
                      else 'truncate %1$s cascade' end, tbl, col) as statement
  from (values ('public.fax_received_emails', 'subject'), ('public.fax_received_email_attachments', 'sha256'),
               ('public.fax_received_email_raw_messages', 'sha256'), ('public.fax_deletions', 'reason'),
               ('public.fax_object_removals', 'kind')) r(tbl, col)
 cross join unnest(array['UPDATE', 'DELETE', 'TRUNCATE']) op;
select is((select count(*)::int from t.changes), 15, 'three changes of five tables');
select is(array(select record_table from document_jobs_internal.record_tables() order by 1),
          array['public.fax_deletions', 'public.fax_object_removals', 'public.fax_received_email_attachments',
                'public.fax_received_email_raw_messages', 'public.fax_received_emails'],
          'the record is these five tables');
grant usage on schema t to anon, authenticated, service_role;
grant select on t.changes to anon, authenticated, service_role;

-- The clients' roles and service_role hold no privilege that changes a row.
set local role anon;
select throws_ok(c.statement, '42501', null, 'anon: ' || c.change || ' refused (no privilege)') from t.changes c;
set local role authenticated;
select throws_ok(c.statement, '42501', null, 'authenticated: ' || c.change || ' refused (no privilege)') from t.changes c;
set local role service_role;
select throws_ok(c.statement, '42501', null, 'service_role: ' || c.change || ' refused (no privilege)') from t.changes c;
select lives_ok($$ insert into public.fax_received_emails (provider_email_id, data) values ('em_3', '{}') $$,
                'service_role may insert: recording is the one write there is');
select is((select count(*)::int from fax_received_emails), 3, 'service_role may read the record');

-- The owner, and a security definer function (every function of the product runs as the owner),
-- meet the triggers.
set local role postgres;
select throws_ok(c.statement, '23001', null, 'postgres, the owner: ' || c.change || ' refused (guard)') from t.changes c;
create function t.as_definer(p_sql text) returns void language plpgsql security definer set search_path = '' as $$
begin
    execute p_sql;
end;
$$;
grant execute on function t.as_definer(text) to service_role;
set local role service_role;
select throws_ok(format('select t.as_definer(%L)', c.statement), '23001', null,
                 'a security definer function called by service_role: ' || c.change || ' refused (guard)')
  from t.changes c;

-- The cluster's superuser too, without the test cluster's reset; and in a replica session, which
-- skips triggers that are not ENABLE ALWAYS (postgres may set it on hosted Supabase).
reset role;
select is(current_user, 'supabase_admin'::name, 'now the superuser');
select throws_ok(c.statement, '23001', null, 'the superuser: ' || c.change || ' refused (guard)') from t.changes c;
set local session_replication_role = replica;
select throws_ok(c.statement, '23001', null, 'a replica session: ' || c.change || ' refused (guard)') from t.changes c;
set local session_replication_role = origin;
select is((select array_agg(distinct tgenabled) from pg_trigger
            where tgname like 'record\_%' and tgrelid in (select record_table::regclass
                                                          from document_jobs_internal.record_tables())),
          array['A']::"char"[], 'every guard is ENABLE ALWAYS');
select is((select count(*)::int from pg_trigger
            where tgname like 'record\_%' and tgrelid in (select record_table::regclass
                                                          from document_jobs_internal.record_tables())),
          20, '... four guards on each of the five tables');
set local role postgres;

-- What a guard catches besides the plain statements.
select throws_ok($$ update fax_received_emails set subject = 'changed' where false $$, '23001', null,
                 'an UPDATE is refused as a statement, even one that matches no row');
select throws_ok($$ insert into fax_received_emails (provider_email_id, data) values ('em_4', '{}')
                    on conflict (provider, provider_email_id) do update set subject = 'changed' $$, '23001', null,
                 'so is an upsert, even one that would only insert');
select throws_ok($$ update fax_received_email_attachments set sha256 = repeat('b', 64), size_bytes = 300 $$,
                 '23001', 'public.fax_received_email_attachments is the record of received faxes: its rows are never updated',
                 'a recorded SHA-256 and size are never replaced, and the error says why');
grant update on fax_received_email_attachments to service_role;
set local role service_role;
select throws_ok($$ update fax_received_email_attachments set size_bytes = 300 $$, '23001', null,
                 'a privilege granted back by the owner changes nothing: the trigger still refuses');
set local role postgres;
revoke update on fax_received_email_attachments from service_role;
select throws_ok($$ delete from fax_received_emails where id = t.email_id('em_1') $$, '23001',
                 format('public.fax_received_emails is the record of received faxes: its rows are never deleted (e-mail %s has no approved deletion)',
                        email_id('em_1')),
                 'an e-mail without an approved deletion is not deleted, and the error names it');
select throws_ok($$ delete from fax_received_email_attachments where fax_received_email_id = t.email_id('em_1') $$,
                 '23001', null, '... nor its attachment');
select is((select jsonb_build_array(
              (select jsonb_agg(e order by e.id) from fax_received_emails e where e.provider_email_id <> 'em_3'),
              (select jsonb_agg(a order by a.id) from fax_received_email_attachments a),
              (select jsonb_agg(r order by r.id) from fax_received_email_raw_messages r),
              (select jsonb_agg(d order by d.id) from fax_deletions d))),
          (select jsonb_build_array(emails, attachments, raw_messages, deletions) from t.before),
          'after every refusal, every record row is as it was');

-- Jobs are not the record: they may be deleted (the retention purges them); the e-mail stays.
select lives_ok($$ delete from document_jobs where fax_received_email_id = t.email_id('em_1') $$,
                'a job may be deleted');
select is((select count(*)::int from fax_received_emails where provider_email_id = 'em_1'), 1, '... its e-mail stays');

-- The deletion approved in fax_deletions: em_2 goes, with its attachment, its raw message and its
-- job (a cascade meets the attachment's and the raw message's guards, which read the same approval).
select is((select count(*)::int from document_jobs where fax_received_email_id = email_id('em_2')), 1,
          'em_2 has a job');
select lives_ok($$ delete from fax_received_emails where provider_email_id = 'em_2' $$,
                'an e-mail whose deletion is approved is deleted');
select is((select count(*)::int from fax_received_email_attachments a
            where a.fax_received_email_id = (select d.fax_received_email_id from fax_deletions d)), 0,
          '... its attachment with it (the cascade)');
select is((select count(*)::int from fax_received_email_raw_messages r
            where r.fax_received_email_id = (select d.fax_received_email_id from fax_deletions d)), 0,
          '... and its raw message');
select is((select count(*)::int from document_jobs j
            where j.fax_received_email_id = (select d.fax_received_email_id from fax_deletions d)), 0,
          '... and its jobs');
select is((select count(*)::int from fax_deletions), 1, 'the approval stays: it is the record of the deletion');
select is((select count(*)::int from fax_received_email_attachments), 1, 'em_1''s attachment is still there');

-- A test cluster's reset: reset_tables (owned by the superuser, in a schema only a superuser can
-- own) is the one TRUNCATE the guard lets through.
select throws_ok($$ select set_config('document_jobs_test_cluster.resetting', 'on', true);
                    truncate fax_received_emails cascade $$, '23001', null,
                 'the reset''s setting, set by postgres, lets nothing through: only the superuser''s reset does');
reset role;
alter schema document_jobs_test_cluster rename to t_moved_test_cluster;
create schema document_jobs_test_cluster authorization postgres;
select throws_ok($$ select t_moved_test_cluster.reset_tables('{public.fax_received_emails, public.document_jobs,
                                                                public.fax_received_email_attachments,
                                                                public.fax_received_email_raw_messages,
                                                                public.fax_attachment_views,
                                                                public.document_job_attempts}') $$,
                 '23001', null, 'where the schema that marks a test cluster is not a superuser''s, the reset is refused');
drop schema document_jobs_test_cluster;
alter schema t_moved_test_cluster rename to document_jobs_test_cluster;
set local role postgres;
select lives_ok($$ select document_jobs_test_cluster.reset_tables('{public.fax_received_emails, public.document_jobs,
                                                                    public.fax_received_email_attachments,
                                                                    public.fax_received_email_raw_messages,
                                                                    public.fax_attachment_views,
                                                                    public.document_job_attempts,
                                                                    public.fax_deletions}') $$,
                'a test cluster''s reset empties the record tables');
select is((select count(*)::int from fax_received_emails) + (select count(*)::int from fax_received_email_attachments)
          + (select count(*)::int from fax_deletions), 0, '... all of them');
select throws_ok($$ truncate fax_received_emails cascade $$, '23001', null,
                 '... and the next TRUNCATE is refused again');

select * from finish();
rollback;
