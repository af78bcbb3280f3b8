-- The job list's text search answers exactly what a plain ILIKE over the same rows answers: the
-- term anywhere in the sender or the subject (the expression of the first trigram index,
-- sender || E'\n' || subject), whichever path finds it (the walk through the newest jobs, or the
-- lookup through the distinct senders and the subjects' trigram index), on e-mails made to trip
-- it: case, LIKE's own characters, backslashes, senders shared or not, no sender, no subject.
begin;
set local client_min_messages = warning;
\ir helpers.psql
-- The stack's cron jobs wait for this file's rollback: the reconciliation's job, enqueued on a
-- ten-minute mark, was once counted among this file's jobs.
lock table public.document_jobs in exclusive mode;
set local search_path = public, extensions, t;
select plan(8);

create function t.page(p_filter jsonb, p_after jsonb default null) returns jsonb language sql as $$
    select public.document_jobs_admin_jobs(p_filter, (p_after ->> 'created_at')::timestamptz,
                                           (p_after ->> 'id')::uuid, 50) $$;
-- Every page of a search, following "next": its jobs' ids, sorted.
create function t.found(p_q text) returns uuid[] language plpgsql as $$
declare
    v_page jsonb := t.page(jsonb_build_object('q', p_q));
    v_ids uuid[] := '{}';
begin
    loop
        v_ids := v_ids || array(select (x ->> 'id')::uuid from jsonb_array_elements(v_page -> 'jobs') x);
        exit when v_page -> 'next' = 'null'::jsonb;
        v_page := t.page(jsonb_build_object('q', p_q), v_page -> 'next');
    end loop;
    return array(select unnest(v_ids) order by 1);
end;
$$;
-- The jobs whose e-mail's sender or subject holds the term (as the filter keeps it: trimmed), by
-- a plain ILIKE, sorted.
create function t.expected(p_q text) returns uuid[] language sql as $$
    select coalesce(array_agg(j.id order by j.id), '{}')
      from public.document_jobs j join public.fax_received_emails e on e.id = j.fax_received_email_id
     cross join btrim(p_q) q
     where coalesce(e.from_address, '') || E'\n' || coalesce(e.subject, '')
           ilike '%' || replace(replace(replace(q, '\', '\\'), '%', '\%'), '_', '\_') || '%' $$;

-- 300 e-mails from 40 senders (some without one), with subjects from 7 (some without one), a job
-- each; then 1,100 newer jobs that match nothing but zz and common (1 in 8, too few to fill a
-- page from 200 jobs but enough to from 1,000), so that the walks find nothing for the other terms
-- and every one of three characters or more goes through the indexes.
insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
select 'm' || i,
       case when i % 17 = 0 then null
            else format((array['取引先%s株式会社 <fax%s@example.jp>', 'ABC商事%s <abc%s@Example.JP>',
                                '100%% Office_%s <a\b%s@x.example>'])[1 + i % 3], i % 40, i % 40) end,
       case when i % 13 = 0 then null
            else (array['FAX受信: 注文書', '請求書 (3枚)', 'Re: 見積書_最終', '50% OFF \ sale', 'fax41 RECEIVED',
                        '株式会社 御中', 'ＦＡＸ全角'])[1 + i % 7] || ' ' || i end,
       '{}', now() - interval '2 hours' - make_interval(mins => i)
  from generate_series(1, 300) i;
insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
select 'filler' || i, 'zz <zz@zz.zz>', case when i % 8 = 0 then 'zz common' else 'zz' end, '{}',
       now() - make_interval(secs => i)
  from generate_series(1, 1100) i;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, created_at)
select 'fetch_email', e.id, 'completed', now(), e.created_at from public.fax_received_emails e;

create temporary table terms (q text);
insert into terms values
    ('取引先'), ('株式会社'), ('取引先7株式会社'), ('取引先17株式会社'), ('fax17@'), ('FAX17@EXAMPLE'), ('abc商事'),
    ('ABC商事3'), ('example.jp'), ('100% off'), ('0% O'), ('e_1'), ('Office_2'), ('a\b'), ('\b1'), ('%'), ('_'),
    ('\'), ('注文書'), ('請求書 (3'), ('見積書_最'), ('fax41'), ('received'), ('御中'), ('ＦＡＸ'), ('FAX'), ('ax'),
    ('zz'), ('no such text'), ('取引先99株式会社'), (' 注文書 '), ('3枚) 1'), ('common');

select is_empty(
    $$ select q from terms where t.found(q) is distinct from t.expected(q) $$,
    'every term finds exactly the jobs a plain ILIKE over sender and subject finds');
select ok((select count(*) from terms where cardinality(t.expected(q)) between 1 and 299) >= 20,
          '... and most of the terms find some jobs but not all');

-- A sender first seen later is found too (email_senders follows); a sender is never changed (the
-- e-mail's row is the record).
insert into public.fax_received_emails (provider_email_id, from_address, subject, data, created_at)
values ('late', '新しい送信者 <new@example.jp>', 'x', '{}', now() - interval '3 hours');
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, created_at)
select 'fetch_email', e.id, 'completed', now(), e.created_at from public.fax_received_emails e
 where e.provider_email_id = 'late';
select is(t.found('新しい送信者'), t.expected('新しい送信者'), 'a new sender is found');
select is(cardinality(t.found('新しい送信者')), 1, '... which is one job');
select throws_ok($$ update public.fax_received_emails set from_address = '変更後の送信者 <changed@example.jp>'
                     where provider_email_id = 'm1' $$, '23001', null, 'a recorded sender is never changed');

-- email_senders' unique key is the SHA-256 of the text's own bytes: backslashes and a leading \x
-- are bytes like any other, so no two senders share a key.
select is_empty(
    $$ select s.from_address from document_jobs_internal.email_senders s
        where replace(s.from_address, '\', '\\')::bytea <> convert_to(s.from_address, 'UTF8')
       union all
       select v from (values ('\x41'), ('\101'), ('\\'), ('\')) x(v)
        where replace(v, '\', '\\')::bytea <> convert_to(v, 'UTF8') $$,
    'the unique key hashes each sender''s UTF-8 bytes, backslashes included');

-- A term in more than 5,000 e-mails, none of them among the newest jobs: too many to list from
-- the indexes, so the search walks 1,000 jobs at a time, each page saying so.
insert into public.fax_received_emails (provider_email_id, subject, data, created_at)
select 'many' || i, 'many pages ' || i, '{}', now() - interval '1 day' - make_interval(secs => i)
  from generate_series(1, 5100) i;
insert into public.document_jobs (kind, fax_received_email_id, status, finished_at, created_at)
select 'fetch_email', e.id, 'completed', now(), e.created_at from public.fax_received_emails e
 where e.provider_email_id like 'many%';
select is(t.page('{"q": "many pages"}') -> 'partial', 'true',
          'a term in more than 5,000 e-mails behind 1,000 newer jobs gives a partial page ...');
select is(t.found('many pages'), t.expected('many pages'), '... and, following next, every match');

select * from finish();
rollback;
