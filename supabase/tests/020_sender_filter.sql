-- The filter by sender ("sender" of job_filter): the jobs whose e-mail's sender holds the text,
-- case-insensitive, never those whose subject or id holds it; the same jobs whichever path finds
-- them (the sender's e-mails through the distinct senders, or, for a sender of more than 5,000
-- e-mails, the newest jobs checked one by one), page after page, with the search term too, and
-- in a bulk action's count.
-- The bulk count checks its actor's row in auth.users (20261204110000): the admin is written
-- as Auth writes its users, as supabase_auth_admin, which postgres cannot become; so this file runs
-- on the stack's superuser connection, as postgres except for that row.
\getenv admin_database DEVSTACK_ADMIN_DATABASE_URL
\c :admin_database
begin;
set local role postgres;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback: the reconciliation's job, enqueued on a
-- ten-minute mark, was once counted among this file's jobs.
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(18);

set local role supabase_auth_admin;
insert into auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
values ('a0000000-0000-0000-0000-00000000000a', 'authenticated', 'authenticated', 'op-020@example.com',
        '{"provider": "email", "document_jobs_role": "admin"}', '{}', now(), now());
set local role postgres;

create function t.page(p_filter jsonb, p_after jsonb default null) returns jsonb language sql as $$
    select public.document_jobs_admin_jobs(p_filter, (p_after ->> 'created_at')::timestamptz,
                                           (p_after ->> 'id')::uuid, 50) $$;
-- Every page of a filter, following "next": its jobs' ids, sorted.
create function t.found(p_filter jsonb) returns uuid[] language plpgsql as $$
declare
    v_page jsonb := t.page(p_filter);
    v_ids uuid[] := '{}';
begin
    loop
        v_ids := v_ids || array(select (x ->> 'id')::uuid from jsonb_array_elements(v_page -> 'jobs') x);
        exit when v_page -> 'next' = 'null'::jsonb;
        v_page := t.page(p_filter, v_page -> 'next');
    end loop;
    return array(select unnest(v_ids) order by 1);
end;
$$;
-- The jobs whose e-mail's sender holds the text (trimmed), by a plain ILIKE, sorted; and those of
-- them in one of the states.
create function t.expected(p_sender text, p_states text[] default null) returns uuid[] language sql as $$
    select coalesce(array_agg(j.id order by j.id), '{}')
      from public.document_jobs j join public.fax_received_emails e on e.id = j.fax_received_email_id
     cross join btrim(p_sender) s
     where e.from_address ilike '%' || replace(replace(replace(s, '\', '\\'), '%', '\%'), '_', '\_') || '%'
       and (p_states is null or j.status = any (p_states)) $$;

select is(document_jobs_internal.job_filter('{"sender": "  ACME商事 "}'), '{"sender": "ACME商事"}',
          'the sender is kept trimmed');
select throws_ok($$select document_jobs_internal.job_filter('{"sender": " "}')$$, '22023',
                 'p_filter.sender must be 1 to 200 characters, with no control characters', 'an empty sender is refused');
select throws_ok($$select document_jobs_internal.job_filter('{"sender": 7}')$$, '22023',
                 'p_filter.sender must be 1 to 200 characters, with no control characters', 'so is one not a string');
select throws_ok($$select document_jobs_internal.job_filter(jsonb_build_object('sender', 'a' || chr(10) || 'b'))$$,
                 '22023', 'p_filter.sender must be 1 to 200 characters, with no control characters',
                 'and one with a control character');

-- 240 e-mails from 6 senders (some without one), whose subjects name the other senders; a job
-- each, a third of them failed; some e-mails with a second, older failed job.
insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
select 'm' || i,
       case when i % 11 = 0 then null
            else (array['ACME商事 <fax@acme.example>', 'acme-west <west@Acme.Example>', 'Beta 100% <b_1@beta.example>',
                        'Gamma <g\a@gamma.example>', '取引先株式会社 <t@torihiki.jp>', 'Delta <d@delta.example>'])[1 + i % 6] end,
       (array['from acme', 'Beta 100% off', 'gamma ray', '株式会社 御中', 'acme商事 御中'])[1 + i % 5] || ' ' || i,
       '{}', now() - interval '1 hour' - make_interval(mins => i)
  from generate_series(1, 240) i;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, last_error_code, created_at)
select 'fetch_email', e.id, case when n % 3 = 0 then 'failed' else 'completed' end, now(),
       case when n % 3 = 0 then 'resend_timeout' end, e.created_at
  from (select e.*, row_number() over (order by e.created_at) n from public.fax_received_emails e) e;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, last_error_code, created_at)
select 'fetch_email', e.id, 'failed', now(), 'resend_timeout', e.created_at - interval '1 second'
  from public.fax_received_emails e where e.provider_email_id in ('m1', 'm7', 'm13');
update public.document_jobs set status = 'queued', finished_at = null, last_error_code = null
 where id = (t.job('m6')).id;  -- a live job of a sender, found by its own probe

select is(t.found('{"sender": "acme"}'), t.expected('acme'),
          'a sender''s jobs, every page: its text anywhere in the sender, in any case');
select ok(not t.found('{"sender": "acme"}') @> array[(t.job('m4')).id],
          '... not those whose subject holds it (acme商事 御中, from 取引先株式会社)');
select is(t.found('{"sender": "ACME商事"}'), t.expected('ACME商事'), 'a sender in Japanese, in another case');
select is(t.found('{"sender": "100%"}'), t.expected('100%'), 'LIKE''s % is the text''s own ...');
select is(t.found('{"sender": "b_1"}'), t.expected('b_1'), '... and so is _');
select is(t.found('{"sender": "g\\a"}'), t.expected('g\a'), '... and \');
select is(t.found('{"sender": "de"}'), t.expected('de'), 'a text of two characters');
select is((t.page('{"sender": "acme"}') ->> 'count')::int, cardinality(t.expected('acme')),
          'the count of a sender''s jobs is exact');
select is(t.found('{"sender": "acme", "q": "御中", "states": ["completed", "failed"]}'),
          array(select j from unnest(t.expected('acme', array['completed', 'failed'])) j
                 where exists (select 1 from public.document_jobs x join public.fax_received_emails e
                                   on e.id = x.fax_received_email_id where x.id = j and e.subject like '%御中%')
                 order by 1),
          'with a search term and states: the jobs that match all three');

create temporary table bulk as
select public.prepare_document_jobs_bulk_action('retry', '{"sender": "acme-west"}',
                                               'a0000000-0000-0000-0000-00000000000a', 'op@example.com') as prepared;
select is(array(select b.job_id from document_jobs_internal.bulk_action_jobs b
                 where b.bulk_action_id = (select (prepared ->> 'bulk_action_id')::uuid from bulk) order by 1),
          t.expected('acme-west', array['failed']), 'a bulk retry by sender counts that sender''s failed jobs');
select is((select prepared -> 'filter' from bulk), '{"sender": "acme-west"}', '... and says the filter it counted');

-- A sender of more than 5,000 e-mails: the newest jobs, checked one by one, and no count.
insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
select 'many' || i, 'Many Pages <many@pages.example>', 'acme ' || i, '{}',
       now() - interval '1 day' - make_interval(secs => i)
  from generate_series(1, 5100) i;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, created_at)
select 'fetch_email', e.id, 'completed', now(), e.created_at from public.fax_received_emails e
 where e.provider_email_id like 'many%';
select is(t.found('{"sender": "many pages"}'), t.expected('many pages'),
          'a sender of more than 5,000 e-mails: every one of its jobs, page after page');
select is(t.page('{"sender": "many pages"}') -> 'count', 'null', '... and its count is not given');
select is(t.found('{"sender": "acme"}'), t.expected('acme'), 'subjects that hold a sender''s text still add no job');

select * from finish();
rollback;
