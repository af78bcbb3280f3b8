-- New faxes announced: each fax once (a row of fax_announcements, noted when its job ends), at most
-- one message a minute (the faxes that became ready meanwhile in one message), nothing and no
-- warning while the Vault secret is absent, in the office's language and time zone, the sender's
-- text inert, and a link to the fax on the screen.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions, t;
select plan(46);

delete from vault.secrets where name in ('document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url',
                                         'document_jobs_announce_url');
delete from document_jobs_internal.fax_announcements;
update public.office_settings set time_zone = 'Asia/Tokyo', announce_language = 'ja', screen_url = null;
update public.document_jobs_settings set alert_receiver = 'slack';

-- A fax received by the webhook, To one of the office's lines.
create function t.fax(p_id text, p_from text default 'Yamada Shoji <fax@yamada.example>',
                      p_created timestamptz default now()) returns uuid language sql as $$
    with e as (
        insert into public.fax_received_emails (provider_email_id, webhook_id, from_address, to_addresses, subject,
                                                received_at, data, created_at)
        values (p_id, 'msg_' || p_id, p_from, array['Head office <honsha@fax.example>'], 'eFax メッセージ',
                '2026-12-07T06:04:05Z', '{}', p_created)
        returning id)
    insert into public.document_jobs (kind, fax_received_email_id) select 'fetch_email', e.id from e
    returning fax_received_email_id $$;
-- Its fetch ends: completed with no file, or failed.
create function t.fetched(p_id text, p_status text default 'completed') returns void language sql as $$
    update public.document_jobs set status = p_status
     where kind = 'fetch_email' and fax_received_email_id = t.email_id(p_id) and status in ('queued', 'running') $$;
-- Fetched with one stored file of p_pages pages, and its prepare_fax job ended.
create function t.prepared(p_id text, p_pages int, p_status text default 'completed') returns void language plpgsql as $$
declare
    v_email uuid := t.email_id(p_id);
    v_attachment uuid;
begin
    insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
                content_type, size_bytes, sha256, bucket, storage_path)
    values (v_email, 'att_' || p_id, '請求書.pdf', 'application/pdf', 10, repeat('a', 64), 'fax-attachments',
            'fax_received_emails/' || v_email || '/att.pdf')
    returning id into v_attachment;
    insert into public.fax_attachment_views (attachment_id, source_sha256, page_count)
    values (v_attachment, repeat('a', 64), p_pages);
    perform t.fetched(p_id);
    update public.document_jobs set status = p_status
     where kind = 'prepare_fax' and fax_received_email_id = v_email and status in ('queued', 'running');
end $$;
create function t.messages() returns setof jsonb language sql as $$
    select convert_from(body, 'UTF8')::jsonb from net.http_request_queue
     where url = 'https://chat.example/announce' order by id $$;
create function t.last() returns jsonb language sql as $$ select m from t.messages() m offset (select count(*) - 1 from t.messages()) $$;
create function t.state(p_id text) returns text language sql as $$
    select state || coalesce(':' || skipped_because, '') from document_jobs_internal.fax_announcements
     where fax_received_email_id = t.email_id(p_id) $$;
-- "A minute passes" for the one-message-a-minute rule (now() is the transaction's start).
create function t.minute_passes() returns void language sql as $$
    update document_jobs_internal.fax_announcements set decided_at = decided_at - interval '1 minute'
     where state = 'sent' $$;
create function t.announce() returns int language sql as $$ select document_jobs_internal.announce_faxes() $$;
delete from net.http_request_queue;

-- Off: without the secret a ready fax is skipped for good, and nothing is sent.
select t.fax('em_off');
select t.fetched('em_off');
select is(t.state('em_off'), 'pending', 'a fax fetched with no file is ready at once');
select is(t.announce(), 0, 'without document_jobs_announce_url nothing is announced');
select is(t.state('em_off'), 'skipped:off', '... and the fax is skipped, so that turning announcements on sends no backlog');
select is((select count(*)::int from net.http_request_queue), 0, '... no request at all');

select vault.create_secret('https://chat.example/announce', 'document_jobs_announce_url');
update public.office_settings set screen_url = 'https://office.example/admin';

-- One fax, one message: its line, sender, pages, time in the office's zone, and its link.
insert into public.fax_lines (address, name) values ('honsha@fax.example', '本社');
select t.fax('em_one');
select t.prepared('em_one', 3);
select is(t.state('em_one'), 'pending', 'a fax is ready when its prepare_fax job completes');
select is(t.announce(), 1, 'the tick announces it');
select is((select count(*)::int from t.messages()), 1, 'in one message');
select is(t.last() ->> 'text',
          E'新しいFAXが届きました\n回線: `本社`\n送信元: `Yamada Shoji`\nページ数: 3\n受信: 2026-12-07 15:04:05 +09:00\n'
          || '<https://office.example/admin#/faxes/' || t.email_id('em_one') || '>',
          'in Japanese, its time in Asia/Tokyo, and a link to the fax on the screen');
select is((select (state, request_id is not null) from document_jobs_internal.fax_announcements
            where fax_received_email_id = t.email_id('em_one')), ('sent'::text, true),
          'recorded sent with its pg_net request, in the transaction that queued it');
select ok(t.last() ->> 'text' !~ '請求書' and t.last()::text !~ '請求書' and t.last()::text !~ 'eFax',
          'never a file name nor the subject');
select is(t.announce(), 0, 'a second tick sends nothing more');

-- Once per fax: its jobs ending again change nothing.
update public.document_jobs set status = 'queued' where kind = 'prepare_fax' and fax_received_email_id = t.email_id('em_one');
update public.document_jobs set status = 'completed' where kind = 'prepare_fax' and fax_received_email_id = t.email_id('em_one');
select is((select count(*)::int from document_jobs_internal.fax_announcements
            where fax_received_email_id = t.email_id('em_one')), 1, 'a prepare_fax job run again notes no second announcement');
select t.minute_passes();
select is(t.announce(), 0, '... and nothing is sent for it');

-- A burst: several faxes ready within the minute after a message wait for the next tick, then go in one.
select t.fax('em_b1');
select t.fax('em_b2');
select t.fax('em_b3');
select t.prepared('em_b1', 1);
select t.fetched('em_b2', 'failed');
select t.prepared('em_b3', 2, 'failed');
select t.fax('em_b4');
select t.fetched('em_b4');
select is(t.announce(), 4, 'a minute after the last message, the four faxes ready meanwhile');
select is((select count(*)::int from t.messages()), 2, '... in one message');
select is(split_part(t.last() ->> 'text', E'\n', 1), '新しいFAXが 4 件届きました', 'which counts them');
select is((select count(*)::int from regexp_matches(t.last() ->> 'text', '#/faxes/[0-9a-f-]{36}>', 'g')), 4,
          'and links each');
select ok(t.last() ->> 'text' ~ ('• 2026-12-07 15:04:05 \+09:00 `本社` `Yamada Shoji` ページ数不明（取得できませんでした。画面で確認してください） <https://office\.example/admin#/faxes/'
                                 || t.email_id('em_b2') || '>'),
          'a fax that could not be fetched is announced all the same, saying so');
select ok(t.last() ->> 'text' ~ ('2 ページ（表示用の変換ができませんでした: 原本をダウンロードしてください） <https://office\.example/admin#/faxes/'
                                 || t.email_id('em_b3') || '>'),
          'a fax whose file could not be converted, with its pages and a note');
select ok(t.last() ->> 'text' ~ '添付ファイルがありません', 'a fax with no file says so');
select is((select jsonb_agg(f ->> 'id' order by f ->> 'id') from jsonb_array_elements(t.last() -> 'faxes') f),
          (select jsonb_agg(t.email_id(i)::text order by t.email_id(i)::text) from unnest(array['em_b1', 'em_b2', 'em_b3', 'em_b4']) i),
          'its fields name the faxes it announced');
select t.fax('em_b5');
select t.fetched('em_b5');
select is(t.announce(), 0, 'a fax ready seconds after a message waits: at most one message a minute');
select is(t.state('em_b5'), 'pending', '... pending');
-- A failed fetch retried and completed: the fax was announced once already.
update public.document_jobs set status = 'queued' where kind = 'fetch_email' and fax_received_email_id = t.email_id('em_b2');
select t.prepared('em_b2', 1);
select is((select count(*)::int from document_jobs_internal.fax_announcements where state = 'pending'), 1,
          'a fetch retried after its failure was announced is not announced again');
select t.minute_passes();
select is(t.announce(), 1, 'the next minute sends the waiting fax');

-- A big burst: the first eight listed, the rest counted, all marked sent.
select t.minute_passes();
select t.fax('em_many_' || i) from generate_series(1, 11) i;
select t.fetched('em_many_' || i) from generate_series(1, 11) i;
select is(t.announce(), 11, 'eleven faxes in one tick');
select is((select count(*)::int from regexp_matches(t.last() ->> 'text', '#/faxes/[0-9a-f-]{36}>', 'g')), 8,
          'eight listed');
select ok(t.last() ->> 'text' ~ E'\nほか 3 件: 受信FAX <https://office\\.example/admin#/faxes\\?period=today>$',
          'the other three counted, with a link to the inbox');
select is((select count(*)::int from document_jobs_internal.fax_announcements where state = 'pending'), 0,
          'every one of them is marked sent: none is announced again');

-- The sender's text is inert: one line, no mention, no markup.
select t.minute_passes();
select t.fax('em_evil', E'"<!channel> @everyone *bold*\n[x](https://evil.example)\u202e" <a@evil.example>');
select t.fetched('em_evil');
select is(t.announce(), 1, 'a fax from a hostile sender');
select is(split_part(split_part(t.last() ->> 'text', E'\n', 3), '`', 2),
          '&lt;!channel&gt; @everyone *bold* [x](https://evil.example)',
          'its name one line, in code, with Slack''s <, > and & escaped (no mention, no link), its control characters gone');
select is(array_length(string_to_array(t.last() ->> 'text', E'\n'), 1), 7, 'no line added by the sender (seven: the fax has no file, a line says so)');

-- The sender as the prepare_fax job read it (fax_senders: lib/fax/senders.py's reading).
select t.minute_passes();
select t.fax('em_parsed');
insert into document_jobs_internal.fax_senders (fax_received_email_id, format, name, number, number_display, number_source)
values (t.email_id('em_parsed'), 'efax', 'YAMADA SHOJI', '0611112222', '06-1111-2222', 'caller_id');
select t.fax('em_withheld');
insert into document_jobs_internal.fax_senders (fax_received_email_id, format, withheld_ja, withheld_en)
values (t.email_id('em_withheld'), 'efax', '非通知', 'Withheld');
update public.fax_lines set number = '0312345678' where address = 'honsha@fax.example';
select t.fax('em_own');
insert into document_jobs_internal.fax_senders (fax_received_email_id, format, number, number_display, number_source)
values (t.email_id('em_own'), 'ricoh', '0312345678', '03-1234-5678', 'station_id');
select t.fetched(i) from unnest(array['em_parsed', 'em_withheld', 'em_own']) i;
select is(t.announce(), 3, 'three faxes whose senders were read');
select ok(t.last() ->> 'text' ~ '`本社` `YAMADA SHOJI` FAX `06-1111-2222` ページ数不明',
          'the name and number the parser read');
select ok(t.last() ->> 'text' ~ '`本社` `Yamada Shoji` FAX 非通知 ページ数不明', 'a withheld number says so');
select ok(t.last() ->> 'text' !~ '03-1234-5678',
          'a station ID that is the office''s own line is the forwarding machine''s, never shown as the sender''s');

-- English by the office's setting; the time in the office's zone, whatever it is.
select t.minute_passes();
update public.office_settings set announce_language = 'en', time_zone = 'America/New_York';
select t.fax('em_en');
select t.fetched('em_en', 'failed');
select is(t.announce(), 1, 'an English announcement');
select is(t.last() ->> 'text',
          E'New fax received\nLine: `本社`\nFrom: `Yamada Shoji`\nPages: unknown\nReceived: 2026-12-07 01:04:05 -05:00\n'
          || E'it could not be fetched: see it on the screen\n<https://office.example/admin#/faxes/' || t.email_id('em_en') || '>',
          'in English, in New York time');

-- Too old: a fax recorded over a day before it is ready (a backfill) is not announced.
select t.minute_passes();
select t.fax('em_old', p_created => now() - interval '3 days');
select t.prepared('em_old', 1);
select is(t.announce(), 0, 'a fax recorded days ago and prepared now is not announced');
select is(t.state('em_old'), 'skipped:too_old', '... skipped as too old');

-- The link: the screen's URL by setting, else the worker's deployment.
update public.office_settings set screen_url = null;
select vault.create_secret('https://app.example/api/internal/document-jobs?x-vercel-protection-bypass=s3cret', 'document_jobs_url');
select is(document_jobs_internal.screen_url(), 'https://app.example/admin',
          'without the setting, the screen of the worker''s deployment (its origin only: never a query that may hold a secret)');
select throws_ok($$ update public.office_settings set screen_url = 'javascript:alert(1)' $$, '23514', null,
                 'a screen URL that is not http(s) is refused');
select throws_ok($$ update public.office_settings set screen_url = 'https://x.example/admin?a=<b>' $$, '23514', null,
                 'a screen URL with a query or markup is refused');
select throws_ok($$ update public.office_settings set announce_language = 'fr' $$, '23514', null,
                 'a language other than ja and en is refused');
select throws_ok($$ insert into document_jobs_internal.fax_senders (fax_received_email_id, name)
                    values (t.email_id('em_off'), E'two\nlines') $$, '23514', null, 'a recorded sender is one line');
select throws_ok($$ select document_jobs_internal.chat_message('[[{"link": "https://x.example/a b"}]]', 'slack') $$,
                 '22023', null, 'chat_message links nothing but a plain URL');

select * from finish();
rollback;
