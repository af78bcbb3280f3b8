-- The inbox walks first, a number's filter too, and reads whose a fax is per e-mail
-- (20261207220000): a number that fills a page among the newest 2,000 e-mails of the range is
-- answered from them (newest first, with the next page's cursor), and one that does not is found
-- through the digits' index, counted exactly; "mine only" likewise, from the walk or from
-- fax_handling's index; its condition is a scalar subquery of the e-mail's row (a primary key
-- probe), never an EXISTS that the planner may turn into a join over all of a clerk's faxes.
begin;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback (see 009).
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(12);

-- 2,100 e-mails received a second apart in 2001 (nothing else is received then): the newest 2,000
-- are what the walk reads. 1 in 30 of them from a frequent number; one older e-mail, beyond the
-- walk, from a rare number. The frequent sender's faxes are a clerk's, and the rare one another's.
insert into public.fax_received_emails (provider_email_id, data, from_address, subject, received_at)
select 'walk-' || i, '{}', 'fax@example.jp',
       case when i = 50 then 'eFax メッセージ 送信元 ０５５－５５５－４４４４ - 1 ページ'
            when i > 100 and i % 30 = 0 then 'eFax メッセージ 送信元 03-9999-8888 - 2 ページ'
            else 'FAX 受信' end,
       timestamptz '2001-01-01 00:00:00+00' + make_interval(secs => i)
  from generate_series(1, 2100) i;
insert into public.fax_handling (fax_received_email_id, state, assignee_id, assignee_email, updated_by)
select e.id, 'in_progress', '00000000-0000-4000-8000-00000000000a', 'Often@Office.example.jp',
       '00000000-0000-4000-8000-00000000000a'
  from public.fax_received_emails e where e.subject like '%03-9999-8888%';
insert into public.fax_handling (fax_received_email_id, state, assignee_id, assignee_email, updated_by)
values (t.email_id('walk-50'), 'done', '00000000-0000-4000-8000-00000000000b', 'seldom@office.example.jp',
        '00000000-0000-4000-8000-00000000000b');

create function t.page(p_filter jsonb) returns jsonb language sql as $$
    select public.document_jobs_admin_faxes(p_filter || '{"received_from": "2001-01-01T00:00:00Z",
                                                          "received_to": "2001-01-02T00:00:00Z"}') $$;
create function t.ids(p_page jsonb) returns text[] language sql as $$
    select array(select (select e.provider_email_id from public.fax_received_emails e where e.id = (f ->> 'id')::uuid)
                   from jsonb_array_elements(p_page -> 'faxes') f) $$;
create function t.newest_of(p_pattern text, p_count int) returns text[] language sql as $$
    select array(select e.provider_email_id from public.fax_received_emails e
                  where e.subject like p_pattern and e.received_at < '2001-01-02'
                  order by e.received_at desc limit p_count) $$;

-- A frequent number: its page from the walk.
select is(t.ids(t.page('{"number": "0399998888"}')), t.newest_of('%03-9999-8888%', 50),
          'a frequent number: its newest 50 faxes, newest first, from the walk');
select is(t.page('{"number": "0399998888"}') -> 'next' ->> 'id',
          t.email_id((t.newest_of('%03-9999-8888%', 50))[50])::text, '... with the next page''s cursor');
select is(t.page('{"number": "0399998888"}') ->> 'partial', 'false', '... a whole page, not partial');
-- A rare number, beyond the walk: through the index, counted exactly.
select is(t.ids(t.page('{"number": "0555554444"}')), array['walk-50'],
          'a rare number older than the walk is found through the digits'' index ...');
select is(t.page('{"number": "0555554444"}') -> 'count', '1'::jsonb, '... and counted exactly');
select is(t.page('{"number": "0555554444"}') ->> 'partial', 'false', '... not partial');

-- Whose a fax is: from the walk, or through fax_handling's index.
select is(t.ids(t.page('{"assignee": "often@office.example.jp"}')), t.newest_of('%03-9999-8888%', 50),
          'a clerk with many faxes: the newest 50 of them, from the walk');
select is(t.ids(t.page('{"assignee": "seldom@office.example.jp"}')), array['walk-50'],
          'a clerk whose one fax is older than the walk: found through fax_handling''s index ...');
select is(t.page('{"assignee": "seldom@office.example.jp"}') -> 'count', '1'::jsonb, '... and counted exactly');
select is(t.ids(t.page('{"assignee": "seldom@office.example.jp", "handling": ["in_progress"]}')), '{}'::text[],
          '... and not when its state is not the one asked for');

-- The condition, per e-mail.
select unalike(document_jobs_internal.faxes_match_sql('{"assignee": "a@example.jp"}'), '%exists%',
              'the assignee''s condition is no EXISTS (a join the planner may read all of a clerk''s faxes for) ...');
select ok(document_jobs_internal.faxes_match_sql('{"assignee": "a@example.jp"}')
          ~ '^true and \(select lower\(h\.assignee_email\) from public\.fax_handling h where h\.fax_received_email_id = e\.id',
          '... but a scalar subquery of the e-mail''s row');

select * from finish();
rollback;
