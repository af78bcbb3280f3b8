-- Deleting a fax after its keep-until date (20261207180000_retention.sql): admin_delete_fax, as
-- service_role calls it for the CLI, refuses before the date (55000 retention_not_over), while a
-- job of the fax is live (55000 jobs_live), and for anyone but an admin of Supabase Auth, changing
-- nothing. After the date, an admin's deletion with a reason records in fax_deletions what goes
-- (the attachments' keys and SHA-256, the raw message's key, the index and its history, the
-- handling and its history, the jobs, the objects) and deletes the record's rows and everything
-- that refers to them; the histories of other faxes stay append-only. The objects of the deletion
-- are then listed for the purge, and each removal is recorded once, by an admin, in
-- fax_object_removals, which like fax_deletions is never updated or deleted.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(35);

create table t.people (name text primary key, user_id uuid not null default gen_random_uuid(),
                       ord int generated always as identity,
                       email text generated always as ('delete-' || ord || '@example.com') stored);
insert into t.people (name) values ('an admin'), ('a clerk'), ('a viewer');
grant usage on schema t to service_role, supabase_auth_admin;
grant select on t.people to service_role, supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
select p.user_id, 'authenticated', 'authenticated', p.email,
       jsonb_build_object('provider', 'email', 'document_jobs_role',
                          case p.name when 'an admin' then 'admin' when 'a clerk' then 'clerk' else 'viewer' end),
       '{}', now(), now()
  from t.people p;
set local role postgres;
create function t.person(p_name text) returns uuid language sql as $$ select user_id from t.people where name = p_name $$;

-- An old fax (received 2015-06-01 in Tokyo: kept until 2023-05-31) with everything a fax can have,
-- and a fax received today.
insert into fax_received_emails (provider_email_id, data, received_at, from_address)
values ('del-old', '{"subject": "請求書"}', '2015-06-01 10:00+09', 'fax@example.jp'),
       ('del-other', '{}', '2015-06-01 10:00+09', 'fax@example.jp');
select t.add_emails('del-new');
insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename, content_type,
                                            size_bytes, sha256, bucket, storage_path)
values (t.email_id('del-old'), 'att_1', '請求書.tif', 'image/tiff', 618, repeat('a', 64), 'fax-attachments',
        'fax_received_emails/' || t.email_id('del-old') || '/att_1.tif');
insert into fax_received_email_raw_messages (fax_received_email_id, bucket, storage_path, size_bytes, sha256)
values (t.email_id('del-old'), 'fax-attachments', 'fax_received_emails/' || t.email_id('del-old') || '/raw.eml', 2048,
        repeat('b', 64));
insert into fax_attachment_views (attachment_id, source_sha256, page_count, view_path, thumbnail_path)
select a.id, a.sha256, 2, 'fax_views/' || t.email_id('del-old') || '/' || a.id || '/view.pdf',
       'fax_views/' || t.email_id('del-old') || '/' || a.id || '/thumbnail.webp'
  from fax_received_email_attachments a where a.fax_received_email_id = t.email_id('del-old');
insert into document_jobs (id, kind, fax_received_email_id, status)
values ('00000000-0000-0000-0000-00000000d001', 'prepare_fax', t.email_id('del-old'), 'queued');
insert into document_job_attempts (job_id, generation, attempt, finished_at, outcome)
values ('00000000-0000-0000-0000-00000000d001', 1, 1, now(), 'retried');
insert into document_jobs_internal.discarded_objects (bucket, storage_path, fax_received_email_id, job_id,
                                                      generation, reason)
values ('fax-attachments', 'fax_received_emails/' || t.email_id('del-old') || '/att_1.short.tif',
        t.email_id('del-old'), '00000000-0000-0000-0000-00000000d001', 1, 'a short body');
insert into fax_view_rotations (fax_received_email_id, rotation, set_by) values (t.email_id('del-old'), 90, t.person('an admin'));
create function t.refusal(p_fax text) returns text language plpgsql as $$
declare
    v_state text; v_hint text; v_message text;
begin
    perform public.admin_delete_fax(t.person('an admin'), 'delete-1@example.com', t.email_id(p_fax), 'kept long enough');
    return 'deleted';
exception when others then
    get stacked diagnostics v_state = returned_sqlstate, v_hint = pg_exception_hint, v_message = message_text;
    return format('%s %s: %s', v_state, v_hint, v_message);
end;
$$;
-- The keep-until date of a fax received now (in this transaction, as del-new was).
create table t.expected as select document_jobs_internal.keep_until(now()) as keep_until;
create table t.old_fax as select t.email_id('del-old') as id;
grant select on t.expected, t.old_fax to service_role;
grant execute on function t.person(text), t.email_id(text), t.refusal(text) to service_role;

set local role service_role;
select public.set_fax_index(t.person('a clerk'), 'delete-2@example.com', t.email_id(f), '{"amount": 10800, "counterparty": "山田商事", "doc_type": "請求書", "transaction_date": "2015-05-29"}')
  from unnest(array['del-old', 'del-other']) f;
select public.set_fax_index(t.person('a clerk'), 'delete-2@example.com', t.email_id('del-old'), '{"amount": 11800, "counterparty": "山田商事", "doc_type": "請求書", "transaction_date": "2015-05-29"}', '桁の誤り');
select public.mark_fax_handling(t.email_id(f), t.person('a clerk'), 'done', 'filed')
  from unnest(array['del-old', 'del-other']) f;

-- Refused, changing nothing: an outsider's role, a fax not due yet, a live job.
select throws_ok($$ select admin_delete_fax(t.person('a viewer'), null, t.email_id('del-old'), 'kept long enough') $$,
                 '42501', null, 'a viewer may not delete a fax');
select throws_ok($$ select admin_delete_fax(t.person('a clerk'), null, t.email_id('del-old'), 'kept long enough') $$,
                 '42501', null, 'nor a clerk');
select throws_ok($$ select admin_delete_fax(t.person('an admin'), null, t.email_id('del-old'), '  ') $$,
                 '22023', 'p_reason must not be empty', 'an admin must say why');
select throws_ok($$ select admin_delete_fax(t.person('an admin'), null, t.email_id('del-new'), 'too early') $$,
                 '55000', null, 'a fax received today is refused: it must be kept for years');
select is(t.refusal('del-new'),
          format('55000 retention_not_over: fax %s must be kept until %s (Asia/Tokyo): nothing may delete it before then',
                 left(replace(t.email_id('del-new')::text, '-', ''), 8),
                 (select keep_until from t.expected)),
          '... with its keep-until date, in the office''s zone, and a stable hint');
select is(t.refusal('del-old'),
          format('55000 jobs_live: a job of fax %s is queued or running: let it end (or cancel it), then delete',
                 left(replace(t.email_id('del-old')::text, '-', ''), 8)),
          'an old fax whose job is queued is refused: the job may store an object yet');
select is((select count(*)::int from fax_deletions), 0, 'nothing was recorded');
select is((select count(*)::int from fax_received_emails), 3, '... nor deleted');

-- The job ended: an admin deletes the old fax, with a reason.
set local role postgres;
update document_jobs set status = 'completed', finished_at = now() where id = '00000000-0000-0000-0000-00000000d001';
set local role service_role;
select is(t.refusal('del-old'), 'deleted', 'after its keep-until date, an admin deletes the fax');

select is((select row(actor_id = t.person('an admin'), actor_email, reason, fax_received_email_id = (select id from t.old_fax))::text
             from fax_deletions), '(t,delete-1@example.com,"kept long enough",t)',
          'fax_deletions records by whom, why and which fax');
select ok((select approved_at = now() from fax_deletions), '... and when');
select is((select what -> 'attachments' -> 0 ->> 'sha256' from fax_deletions), repeat('a', 64),
          'what: the original''s SHA-256');
select is((select what -> 'attachments' -> 0 ->> 'storage_path' from fax_deletions),
          'fax_received_emails/' || (select fax_received_email_id from fax_deletions) || '/att_1.tif',
          '... its key');
select is((select what -> 'raw_messages' -> 0 ->> 'storage_path' from fax_deletions),
          'fax_received_emails/' || (select fax_received_email_id from fax_deletions) || '/raw.eml',
          '... the raw message''s key');
select is((select what -> 'index' ->> 'amount' from fax_deletions), '11800', '... the index values');
select is((select jsonb_array_length(what -> 'index_history') from fax_deletions), 2,
          '... the index''s history, the correction and its reason included');
select is((select what -> 'index_history' -> 1 ->> 'reason' from fax_deletions), '桁の誤り', '... (its reason)');
select is((select what -> 'handling_history' -> 0 ->> 'note' from fax_deletions), 'filed', '... the handling''s history');
select is((select what -> 'jobs' -> 0 ->> 'attempts' from fax_deletions), '1', '... the jobs and their attempts');
select is((select array_agg(o ->> 'kind' order by o ->> 'kind') from fax_deletions, jsonb_array_elements(what -> 'objects') o),
          array['discarded', 'original', 'raw_message', 'thumbnail', 'view'],
          '... and the objects to remove: the original, the raw e-mail, the derived view and thumbnail, a discarded one');

set local role postgres;
select is((select count(*)::int from fax_received_emails where provider_email_id = 'del-old')
          + (select count(*)::int from fax_received_email_attachments) + (select count(*)::int from fax_received_email_raw_messages)
          + (select count(*)::int from fax_attachment_views) + (select count(*)::int from document_jobs)
          + (select count(*)::int from document_job_attempts) + (select count(*)::int from fax_view_rotations)
          + (select count(*)::int from fax_index where fax_received_email_id = (select fax_received_email_id from fax_deletions))
          + (select count(*)::int from fax_index_history where fax_received_email_id = (select fax_received_email_id from fax_deletions))
          + (select count(*)::int from fax_handling where fax_received_email_id = (select fax_received_email_id from fax_deletions))
          + (select count(*)::int from fax_handling_history where fax_received_email_id = (select fax_received_email_id from fax_deletions)),
          0, 'the e-mail, its attachment, raw message, view, job, attempt, rotation, index, handling and histories are gone');
select is((select count(*)::int from fax_index_history) + (select count(*)::int from fax_handling_history), 2,
          'the other fax''s histories stay');
select throws_ok($$ delete from fax_index_history $$, '42501', null,
                 'another fax''s index history still cannot be deleted');
select throws_ok($$ delete from fax_handling_history $$, '42501', null, '... nor its handling history');
select throws_ok($$ delete from fax_deletions $$, '23001', null, 'the deletion''s record cannot be deleted');
select throws_ok($$ insert into fax_deletions (fax_received_email_id, actor_id, reason, what)
                    values (t.email_id('del-new'), gen_random_uuid(), 'by hand', '{}') $$, '55000', null,
                 'an approval for a fax still to be kept cannot be recorded by hand either, even by the owner');
select throws_ok($$ insert into fax_deletions (fax_received_email_id, actor_id, reason, what)
                    values (gen_random_uuid(), gen_random_uuid(), 'by hand', '{}') $$, 'P0002', null,
                 '... nor one for a fax that is not recorded');

-- The second step: the objects listed, each removal recorded once, by an admin.
set local role service_role;
select is(jsonb_array_length(fax_objects_to_remove()), 5, 'the purge lists the deletion''s five objects');
select throws_ok(format($$ select record_fax_object_removal(t.person('a clerk'), null, %s, 'fax-attachments', %L) $$,
                        (select id from fax_deletions), fax_objects_to_remove() -> 0 ->> 'key'),
                 '42501', null, 'a clerk may not record a removal');
select is(record_fax_object_removal(t.person('an admin'), 'delete-1@example.com', d.id, o ->> 'bucket', o ->> 'key'), true,
          'an admin records the removal of ' || (o ->> 'kind'))
  from fax_deletions d, jsonb_array_elements(fax_objects_to_remove()) o where o ->> 'kind' = 'original';
select is(record_fax_object_removal(t.person('an admin'), null, d.id, o ->> 'bucket', o ->> 'key'), false,
          'recording it again changes nothing')
  from fax_deletions d, jsonb_array_elements(what -> 'objects') o where o ->> 'kind' = 'original';
select throws_ok(format($$ select record_fax_object_removal(t.person('an admin'), null, %s, 'fax-attachments', 'fax_received_emails/x/att_1.pdf') $$,
                        (select id from fax_deletions)),
                 'P0002', null, 'an object the deletion does not list is refused');
select is(jsonb_array_length(fax_objects_to_remove()), 4, 'the purge lists the four left');
set local role postgres;
select throws_ok($$ delete from fax_object_removals $$, '23001', null, 'a removal''s record cannot be deleted');
select throws_ok($$ update fax_object_removals set kind = 'view' $$, '23001', null, '... nor changed');

select * from finish();
rollback;
