-- New faxes announced in a chat (opt-in: the Vault secret document_jobs_announce_url, which may be
-- the alerts' chat). One message per fax, or, when several became ready since the last tick, one
-- message for all of them: the cron job document-jobs-announce runs every minute and sends at most
-- one message a minute. What a message says: the line, the sender, the pages, the received time in
-- the office's time zone and a link to the fax on the screen; never the fax's content (no file
-- name, no index value, no subject).
--
-- When a fax is announced: once its pages are known, that is when its prepare_fax job ends
-- (completed, or failed for a file that could not be prepared: pages unknown, said so). A fax
-- whose fetch_email job fails is announced then, saying that it could not be fetched: the office
-- must hear of a fax it cannot read more than of one it can. A fetch that completes with no file
-- (nothing to prepare) is announced at once. A fax is announced once: a fetch retried after its
-- failure was announced, or a prepare_fax job run again (the backfill), sends nothing more.

alter table public.office_settings
    add column announce_language text not null default 'ja'
        constraint office_settings_announce_language check (announce_language in ('ja', 'en')),
    add column screen_url text
        constraint office_settings_screen_url check (
            screen_url ~ '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$' and length(screen_url) <= 300);
comment on table public.office_settings is
    'The office''s settings, one row: time_zone (an IANA name, default Asia/Tokyo), the zone of every date the office reads (the inbox, announcements, keep-until dates, exports); announce_language, the language of the chat announcements of new faxes; screen_url, where the announcements link to. Changed by hand as the project owner (update office_settings set ...), checked by constraints.';
comment on column public.office_settings.announce_language is
    'The language of the announcements of new faxes: ja (default) or en.';
comment on column public.office_settings.screen_url is
    'The admin screen''s URL (https://<your-app>.vercel.app/admin, or your own domain), which an announcement links each fax to (#/faxes/<id>). Null: the origin of the Vault secret document_jobs_url followed by /admin, the same deployment. Only a plain URL is accepted (no query, fragment, space or markup): it is written into chat messages as a link.';

create table document_jobs_internal.fax_announcements (
    fax_received_email_id uuid primary key
        references public.fax_received_emails (id) on delete cascade,
    ready_at timestamptz not null default now(),
    stood text not null constraint fax_announcements_stood
        check (stood in ('prepared', 'unprepared', 'unfetched', 'no_files')),
    state text not null default 'pending' constraint fax_announcements_state
        check (state in ('pending', 'sent', 'skipped')),
    decided_at timestamptz,
    request_id bigint,
    skipped_because text constraint fax_announcements_skipped_because
        check (skipped_because in ('off', 'too_old')),
    constraint fax_announcements_decided check ((state = 'pending') = (decided_at is null)),
    constraint fax_announcements_why_skipped check ((state = 'skipped') = (skipped_because is not null))
);
comment on table document_jobs_internal.fax_announcements is
    'One row per fax that became ready to announce (note_fax_ready), written once: a fax is announced at most once, whatever job of it ends again. pending until the next tick of document-jobs-announce; then sent (its message queued through pg_net in that very transaction, request_id its request: pg_net sends after commit and never retries, so "sent" means queued, and a message the chat refused is lost, its answer in net._http_response for 6 hours) or skipped (off: no Vault secret document_jobs_announce_url at that tick, so that storing the secret later does not announce the faxes of before; too_old: the e-mail was recorded over a day earlier, e.g. a backfill preparing the faxes stored before an upgrade).';
comment on column document_jobs_internal.fax_announcements.stood is
    'How the fax stood when it became ready: prepared (its prepare_fax job completed: pages known), unprepared (that job failed: a file could not be converted, pages maybe unknown), unfetched (its fetch_email job failed: the fax could not be stored), no_files (fetched, with no attached file).';
create index fax_announcements_pending on document_jobs_internal.fax_announcements (ready_at)
    where state = 'pending';
create index fax_announcements_sent on document_jobs_internal.fax_announcements (decided_at)
    where state = 'sent';
alter table document_jobs_internal.fax_announcements enable row level security;
revoke all on table document_jobs_internal.fax_announcements from public, anon, authenticated, service_role;

create function document_jobs_internal.note_fax_ready() returns trigger
    language plpgsql security definer
    set search_path = ''
as $$
declare
    v_stood text;
begin
    v_stood := case
        when new.kind = 'prepare_fax' then case new.status when 'completed' then 'prepared' else 'unprepared' end
        when new.status = 'failed' then 'unfetched'
        -- A fetch that stored files hands over to its prepare_fax job (enqueue_prepare_fax).
        when not exists (select 1 from public.fax_received_email_attachments a
                          where a.fax_received_email_id = new.fax_received_email_id) then 'no_files'
    end;
    if v_stood is not null then
        begin
            insert into document_jobs_internal.fax_announcements (fax_received_email_id, stood)
            values (new.fax_received_email_id, v_stood)
            on conflict (fax_received_email_id) do nothing;
        exception
            when others then
                raise warning 'document jobs: the announcement of e-mail % could not be noted: %',
                    new.fax_received_email_id, sqlerrm;
        end;
    end if;
    return null;
end;
$$;
comment on function document_jobs_internal.note_fax_ready() is
    'Trigger document_jobs_note_fax_ready: a fax becomes ready to announce when its prepare_fax job ends (completed or failed), when its fetch_email job fails, or when its fetch completes with no file; a row of fax_announcements, once per fax. Security definer: a job''s state may be changed by service_role, which may not write the internal schema. A failure to note it is a WARNING and never undoes the job''s change.';
revoke all on function document_jobs_internal.note_fax_ready() from public;

create trigger document_jobs_note_fax_ready
    after update of status on public.document_jobs
    for each row
    when (new.status in ('completed', 'failed') and old.status is distinct from new.status
          and new.kind in ('fetch_email', 'prepare_fax') and new.fax_received_email_id is not null)
    execute function document_jobs_internal.note_fax_ready();

-- Who sent a fax, as lib/fax/senders.py reads its subject and From (the parser's table lives in
-- Python, one owner): the prepare_fax job records what it read, so that the announcement says the
-- sender's name and number as the inbox does. Derived, like the views: not the record.
create table document_jobs_internal.fax_senders (
    fax_received_email_id uuid primary key
        references public.fax_received_emails (id) on delete cascade,
    format text,
    name text,
    number text,
    number_display text,
    number_source text,
    withheld_ja text,
    withheld_en text,
    recorded_at timestamptz not null default now(),
    constraint fax_senders_number check (number ~ '^[0-9]{3,20}$'),
    constraint fax_senders_number_source check (number_source in ('caller_id', 'station_id')),
    constraint fax_senders_number_whole check ((number is null) = (number_display is null)
                                               and (number is null) = (number_source is null)),
    constraint fax_senders_one_line check (
        coalesce(format, '') || coalesce(name, '') || coalesce(number_display, '') || coalesce(withheld_ja, '')
            || coalesce(withheld_en, '') !~ '[[:cntrl:]]'),
    constraint fax_senders_lengths check (length(format) <= 100 and length(name) <= 100 and length(number_display) <= 40
                                          and length(withheld_ja) <= 20 and length(withheld_en) <= 40)
);
comment on table document_jobs_internal.fax_senders is
    'Who sent each fax, as lib/fax/senders.py parse_sender read its subject and From name (the format that matched, the sender''s name, the number canonical and as written, whether the caller ID or the station ID gave it, and why there is none, in the words the screen uses), recorded by its prepare_fax job through record_fax_sender_v1 (the parser is Python''s; the announcements, in SQL, read it here). Replaced when the job runs again. No row: the job has not run (a fax that could not be fetched), and the From line is all there is.';
alter table document_jobs_internal.fax_senders enable row level security;
revoke all on table document_jobs_internal.fax_senders from public, anon, authenticated, service_role;

create function public.start_prepare_fax_v3(p_job_id uuid, p_generation integer) returns jsonb
    language plpgsql stable security definer
    set search_path = ''
as $$
declare
    v_start jsonb := public.start_prepare_fax_v2(p_job_id, p_generation);
begin
    if not (v_start ->> 'held')::boolean or v_start -> 'email' = 'null'::jsonb then
        return v_start;
    end if;
    return jsonb_set(v_start, '{email}', (
        select jsonb_build_object('id', e.id, 'subject', e.subject, 'from', e.from_address)
          from public.fax_received_emails e where e.id = (v_start #>> '{email,id}')::uuid));
end;
$$;
comment on function public.start_prepare_fax_v3(uuid, integer) is
    'start_prepare_fax_v2''s answer, its "email" with the e-mail''s "subject" and "from" as recorded: the job reads the sender from them (record_fax_sender_v1).';
revoke all on function public.start_prepare_fax_v3(uuid, integer) from public, anon, authenticated;
grant execute on function public.start_prepare_fax_v3(uuid, integer) to service_role;

create function public.record_fax_sender_v1(p_job_id uuid, p_generation integer, p_sender jsonb) returns jsonb
    language plpgsql security definer
    set search_path = ''
as $$
declare
    v_email_id uuid;
    v_key text;
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    perform document_jobs_internal.require(jsonb_typeof(p_sender) = 'object', 'p_sender must be a JSON object');
    for v_key in select jsonb_object_keys(p_sender) loop
        perform document_jobs_internal.require(
            v_key in ('format', 'name', 'number', 'number_display', 'number_source', 'withheld_ja', 'withheld_en'),
            format('p_sender has no key %s', v_key));
    end loop;
    select j.fax_received_email_id into v_email_id
      from public.document_jobs j
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running' and j.kind = 'prepare_fax';
    if not found then
        return jsonb_build_object('held', false, 'state', null);
    end if;
    insert into document_jobs_internal.fax_senders as s
           (fax_received_email_id, format, name, number, number_display, number_source, withheld_ja, withheld_en)
    values (v_email_id, p_sender ->> 'format', p_sender ->> 'name', p_sender ->> 'number', p_sender ->> 'number_display',
            p_sender ->> 'number_source', p_sender ->> 'withheld_ja', p_sender ->> 'withheld_en')
    on conflict (fax_received_email_id) do update
       set format = excluded.format, name = excluded.name, number = excluded.number,
           number_display = excluded.number_display, number_source = excluded.number_source,
           withheld_ja = excluded.withheld_ja, withheld_en = excluded.withheld_en, recorded_at = now();
    return jsonb_build_object('held', true, 'state', 'running');
end;
$$;
comment on function public.record_fax_sender_v1(uuid, integer, jsonb) is
    'Records who sent the prepare_fax job''s fax as the worker read it (lib/fax/senders.py): p_sender {"format", "name", "number", "number_display", "number_source", "withheld_ja", "withheld_en"}, each optional, checked by fax_senders'' constraints (one line, short); replaces an earlier reading. Fenced by (p_job_id, p_generation). Answers {"held", "state"}.';
revoke all on function public.record_fax_sender_v1(uuid, integer, jsonb) from public, anon, authenticated;
grant execute on function public.record_fax_sender_v1(uuid, integer, jsonb) to service_role;

create function document_jobs_internal.office_time(p_at timestamptz) returns text
    language plpgsql stable
    set search_path = ''
as $$
declare
    v_local timestamp := p_at at time zone document_jobs_internal.office_time_zone();
    v_offset interval := v_local - (p_at at time zone 'UTC');
begin
    return to_char(v_local, 'YYYY-MM-DD HH24:MI:SS ')
        || case when v_offset < interval '0' then '-' else '+' end
        || to_char(case when v_offset < interval '0' then -v_offset else v_offset end, 'HH24:MI');
end;
$$;
comment on function document_jobs_internal.office_time(timestamptz) is
    'A time as the office reads it: in its time zone (office_time_zone), with the offset, 2026-12-07 15:04:05 +09:00 (the form of the screen and the CLI). Null for null.';
revoke all on function document_jobs_internal.office_time(timestamptz) from public;

-- chat_message learns a link segment, {"link": url}: a URL the receiver shows as a link. Our own
-- words are escaped for Markdown, which would break a URL (a "#" becomes "\#"); a link is written in
-- each receiver's own link form instead. Only URLs built here from a checked setting are linked.
create or replace function document_jobs_internal.chat_message(p_lines jsonb, p_receiver text) returns jsonb
    language plpgsql immutable
    set search_path = ''
as $_$
declare
    v_line jsonb;
    v_segment jsonb;
    v_value text;
    v_shown text;
    v_lines text[] := '{}'::text[];
    v_blocks jsonb := '[]'::jsonb;
    v_inlines jsonb;
begin
    for v_line in select l.value from jsonb_array_elements(p_lines) l loop
        v_shown := '';
        v_inlines := '[]'::jsonb;
        for v_segment in select s.value from jsonb_array_elements(v_line) s loop
            if jsonb_typeof(v_segment) = 'string' then
                v_value := v_segment #>> '{}';
                v_shown := v_shown || case p_receiver
                    when 'slack' then replace(replace(replace(v_value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                    when 'teams' then v_value
                    else regexp_replace(v_value, '([\\`*_{}\[\]<>#|~!])', '\\\1', 'g')
                end;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            if v_segment ? 'link' then
                -- A URL has no space, <, >, | or control character (the callers' check): written
                -- as Slack's <url> and CommonMark's autolink <url>, it is one link and nothing else.
                v_value := v_segment ->> 'link';
                if v_value !~ '^https?://[^\s<>|"`\\[:cntrl:]]+$' then
                    raise exception 'chat_message: not a URL to link: %', left(v_value, 100) using errcode = '22023';
                end if;
                v_shown := v_shown || case p_receiver
                    when 'slack' then '<' || replace(v_value, '&', '&amp;') || '>'
                    when 'teams' then v_value
                    else '<' || v_value || '>'
                end;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object(
                    'type', 'TextRun', 'text', v_value,
                    'selectAction', jsonb_build_object('type', 'Action.OpenUrl', 'url', v_value)));
                continue;
            end if;
            v_value := document_jobs_internal.one_line(v_segment ->> 'quote', coalesce((v_segment ->> 'max')::int, 200));
            if coalesce(v_value, '') = '' then
                v_value := case when v_segment ->> 'quote' is null then '(none)' else '(empty)' end;
                v_shown := v_shown || v_value;
                v_inlines := v_inlines || jsonb_build_array(jsonb_build_object('type', 'TextRun', 'text', v_value));
                continue;
            end if;
            v_shown := v_shown || case p_receiver
                when 'slack' then
                    '`' || replace(replace(replace(replace(v_value, '`', 'ˋ'), '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
                        || '`'
                when 'teams' then v_value
                else '`' || replace(v_value, '`', 'ˋ') || '`'
            end;
            v_inlines := v_inlines || jsonb_build_array(
                jsonb_build_object('type', 'TextRun', 'text', v_value, 'fontType', 'Monospace'));
        end loop;
        v_lines := v_lines || v_shown;
        v_blocks := v_blocks || jsonb_build_array(jsonb_build_object('type', 'RichTextBlock', 'inlines', v_inlines));
    end loop;
    return case p_receiver
        when 'discord' then jsonb_build_object(
            'content', array_to_string(v_lines, E'\n'),
            'allowed_mentions', jsonb_build_object('parse', '[]'::jsonb))
        when 'teams' then jsonb_build_object(
            'type', 'message',
            'attachments', jsonb_build_array(jsonb_build_object(
                'contentType', 'application/vnd.microsoft.card.adaptive',
                'contentUrl', null,
                'content', jsonb_build_object(
                    '$schema', 'http://adaptivecards.io/schemas/adaptive-card.json',
                    'type', 'AdaptiveCard',
                    'version', '1.4',
                    'body', v_blocks))))
        else jsonb_build_object('text', array_to_string(v_lines, E'\n'))
    end;
end;
$_$;
comment on function document_jobs_internal.chat_message(jsonb, text) is
    'A chat message for the receiver (slack, mattermost, discord or teams): p_lines is an array of lines, each an array of segments, a string (our own words), {"quote": text, "max": n} (a sender''s text or an identifier, escaped for the receiver; null shows as "(none)") or {"link": url} (a URL of ours, as the receiver''s link: Slack''s <url>, CommonMark''s autolink, a Teams TextRun that opens it; anything but a plain http(s) URL is refused). Answers the receiver''s fields, to be merged into the alert''s JSON.';
revoke all on function document_jobs_internal.chat_message(jsonb, text) from public;

create function document_jobs_internal.screen_url() returns text
    language plpgsql stable
    set search_path = ''
as $$
declare
    v_url text := (select o.screen_url from public.office_settings o);
begin
    if v_url is null then
        -- The screen is served by the deployment the worker is (vercel.json: /admin).
        select substring(s.decrypted_secret from '^(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)') || '/admin'
          into v_url
          from vault.decrypted_secrets s
         where s.name = 'document_jobs_url';
    end if;
    return rtrim(v_url, '/');
end;
$$;
comment on function document_jobs_internal.screen_url() is
    'The admin screen''s URL the announcements link to: office_settings.screen_url, else the origin of the Vault secret document_jobs_url and /admin; null when neither is stored (the message then has no link). Runs as the owner (reads Vault).';
revoke all on function document_jobs_internal.screen_url() from public;

create function document_jobs_internal.announce_faxes() returns integer
    language plpgsql
    set search_path = ''
as $$
declare
    -- At most this many faxes are listed in one message, the others counted: a Discord message
    -- holds 2,000 characters, and a line of a fax takes up to about 200.
    c_listed constant int := 8;
    -- A tick sends at most one message a minute; pg_cron's minute ticks are not exactly 60 s apart.
    c_gap constant interval := interval '50 seconds';
    c_too_old constant interval := interval '1 day';
    v_url text;
    v_ja boolean := (select o.announce_language = 'ja' from public.office_settings o);
    v_screen text;
    v_faxes jsonb;
    v_count int;
    v_lines jsonb;
    v_fax jsonb;
    v_pages text;
    v_note text;
    v_number jsonb;
    v_request bigint;
begin
    -- One tick at a time: a second one (a manual call beside the cron's) finds nothing to do.
    if not pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('document_jobs_internal.announce_faxes')) then
        return 0;
    end if;
    select nullif(s.decrypted_secret, '') into v_url
      from vault.decrypted_secrets s
     where s.name = 'document_jobs_announce_url';
    if v_url is null then
        -- Off: silently (no warning every minute). Skipped for good, so that storing the secret
        -- later announces the faxes from then on, not a backlog.
        update document_jobs_internal.fax_announcements
           set state = 'skipped', skipped_because = 'off', decided_at = now()
         where state = 'pending';
        return 0;
    end if;
    update document_jobs_internal.fax_announcements a
       set state = 'skipped', skipped_because = 'too_old', decided_at = now()
      from public.fax_received_emails e
     where a.state = 'pending' and e.id = a.fax_received_email_id and e.created_at < now() - c_too_old;
    if exists (select 1 from document_jobs_internal.fax_announcements a
                where a.state = 'sent' and a.decided_at > now() - c_gap) then
        return 0;
    end if;

    with pending as (
        select a.fax_received_email_id, a.stood, a.ready_at
          from document_jobs_internal.fax_announcements a
         where a.state = 'pending'
         order by a.ready_at, a.fax_received_email_id
           for update skip locked
    )
    select jsonb_agg(jsonb_build_object(
               'id', e.id,
               'stood', p.stood,
               'received_at', coalesce(e.received_at, e.created_at),
               -- the line's name, else the address the fax was sent to
               'line', coalesce(
                   (select l.name from unnest(e.to_addresses) with ordinality t(entry, n)
                      join public.fax_lines l on l.address = document_jobs_internal.address_of(t.entry)
                     order by t.n limit 1),
                   (select document_jobs_internal.address_of(t) from unnest(e.to_addresses) t limit 1)),
               -- the name the parser read (fax_senders), else the From line's display name, else
               -- its address: as the inbox shows the sender (lib/screen/calls.py sender_of)
               'sender', coalesce(
                   s.name,
                   nullif(btrim(substring(e.from_address from '^(.*)<[^<>]*>\s*$'), E' \t"'), ''),
                   document_jobs_internal.address_of(e.from_address)),
               -- the number, unless it is a station ID that is one of the office's own lines (the
               -- forwarding machine's, never the sender's), or why there is none
               'number', case
                   when s.number_source = 'station_id'
                        and exists (select 1 from public.fax_lines l where l.number = s.number) then null
                   else s.number_display end,
               'withheld', case when v_ja then s.withheld_ja else s.withheld_en end,
               'pages', (select sum(v.page_count) from public.fax_received_email_attachments f
                           join public.fax_attachment_views v on v.attachment_id = f.id and v.source_sha256 = f.sha256
                          where f.fax_received_email_id = e.id))
             order by p.ready_at, p.fax_received_email_id)
      into v_faxes
      from pending p
      join public.fax_received_emails e on e.id = p.fax_received_email_id
      left join document_jobs_internal.fax_senders s on s.fax_received_email_id = e.id;
    v_count := coalesce(jsonb_array_length(v_faxes), 0);
    if v_count = 0 then
        return 0;
    end if;

    v_screen := document_jobs_internal.screen_url();
    v_lines := case
        when v_count = 1 and v_ja then '[["新しいFAXが届きました"]]'
        when v_count = 1 then '[["New fax received"]]'
        when v_ja then jsonb_build_array(jsonb_build_array(format('新しいFAXが %s 件届きました', v_count)))
        else jsonb_build_array(jsonb_build_array(format('%s new faxes received', v_count)))
    end::jsonb;
    for v_fax in select f.value from jsonb_array_elements(v_faxes) f limit c_listed loop
        v_pages := case
            when v_fax ->> 'pages' is null and v_ja then 'ページ数不明'
            when v_fax ->> 'pages' is null then 'pages unknown'
            when v_ja then format('%s ページ', v_fax ->> 'pages')
            else format('%s p.', v_fax ->> 'pages')
        end;
        v_number := case
            when v_fax ->> 'number' is not null then
                jsonb_build_array(' FAX ', jsonb_build_object('quote', v_fax ->> 'number', 'max', 40))
            when v_fax ->> 'withheld' is not null then jsonb_build_array(' FAX ' || (v_fax ->> 'withheld'))
            else '[]'::jsonb
        end;
        v_note := case v_fax ->> 'stood'
            when 'unfetched' then case when v_ja then '取得できませんでした。画面で確認してください'
                                       else 'it could not be fetched: see it on the screen' end
            when 'unprepared' then case when v_ja then '表示用の変換ができませんでした: 原本をダウンロードしてください'
                                        else 'it could not be converted for viewing: download the original' end
            when 'no_files' then case when v_ja then '添付ファイルがありません' else 'no attached file' end
        end;
        if v_count = 1 then
            v_lines := v_lines
                || jsonb_build_array(jsonb_build_array(case when v_ja then '回線: ' else 'Line: ' end,
                                                       jsonb_build_object('quote', v_fax ->> 'line', 'max', 50)))
                || jsonb_build_array(jsonb_build_array(case when v_ja then '送信元: ' else 'From: ' end,
                                                       jsonb_build_object('quote', v_fax ->> 'sender', 'max', 60))
                                     || v_number)
                || jsonb_build_array(jsonb_build_array(case when v_ja then 'ページ数: ' else 'Pages: ' end
                                                       || case when v_fax ->> 'pages' is null then
                                                              case when v_ja then '不明' else 'unknown' end
                                                          else v_fax ->> 'pages' end))
                || jsonb_build_array(jsonb_build_array(
                       case when v_ja then '受信: ' else 'Received: ' end
                       || document_jobs_internal.office_time((v_fax ->> 'received_at')::timestamptz)))
                || case when v_note is null then '[]'::jsonb else jsonb_build_array(jsonb_build_array(v_note)) end
                || case when v_screen is null then '[]'::jsonb
                        else jsonb_build_array(jsonb_build_array(
                                 jsonb_build_object('link', v_screen || '#/faxes/' || (v_fax ->> 'id')))) end;
        else
            v_lines := v_lines || jsonb_build_array(
                jsonb_build_array(
                    '• ' || document_jobs_internal.office_time((v_fax ->> 'received_at')::timestamptz) || ' ',
                    jsonb_build_object('quote', v_fax ->> 'line', 'max', 20), ' ',
                    jsonb_build_object('quote', v_fax ->> 'sender', 'max', 40))
                || v_number
                || jsonb_build_array(' ' || v_pages || coalesce(case when v_ja then '（' || v_note || '）' else ' (' || v_note || ')' end, ''))
                || case when v_screen is null then '[]'::jsonb
                        else jsonb_build_array(' ', jsonb_build_object('link', v_screen || '#/faxes/' || (v_fax ->> 'id'))) end);
        end if;
    end loop;
    if v_count > c_listed then
        v_lines := v_lines || jsonb_build_array(
            jsonb_build_array(case when v_ja then format('ほか %s 件', v_count - c_listed)
                                   else format('and %s more', v_count - c_listed) end)
            || case when v_screen is null then '[]'::jsonb
                    else jsonb_build_array(case when v_ja then ': 受信FAX ' else ': the inbox ' end,
                                           jsonb_build_object('link', v_screen || '#/faxes?period=today')) end);
    end if;

    v_request := net.http_post(
        url => v_url,
        body => document_jobs_internal.alert_body(
            jsonb_build_object(
                'event', 'faxes_received',
                'count', v_count,
                'faxes', (select jsonb_agg(jsonb_build_object('id', f.value -> 'id', 'received_at', f.value -> 'received_at',
                                                              'pages', f.value -> 'pages', 'stood', f.value -> 'stood'))
                            from jsonb_array_elements(v_faxes) f),
                'sent_at', now()),
            v_lines),
        headers => jsonb_build_object('Content-Type', 'application/json'),
        timeout_milliseconds => 10000);
    update document_jobs_internal.fax_announcements a
       set state = 'sent', decided_at = now(), request_id = v_request
     where a.fax_received_email_id in (select (f.value ->> 'id')::uuid from jsonb_array_elements(v_faxes) f);
    return v_count;
end;
$$;
comment on function document_jobs_internal.announce_faxes() is
    'What the cron job document-jobs-announce runs every minute; answers how many faxes it announced. Without the Vault secret document_jobs_announce_url it marks the pending faxes skipped, silently. Else: pending faxes recorded over a day ago are skipped (too_old); if a message was sent less than 50 seconds ago, nothing (at most one a minute: the next tick takes the faxes); else one message (alert_body: the fields event faxes_received, count, faxes [id, received_at, pages, stood], sent_at, and the chat text of document_jobs_settings.alert_receiver) for every pending fax, in office_settings.announce_language: one fax in detail (line, sender, pages, received time in the office''s zone, a note when it could not be fetched or converted, its link on the screen), several one line each, the first 8 listed and the rest counted. Each fax is marked sent with the pg_net request in the same transaction: queued, not delivered (pg_net never retries). Runs as the owner (Vault, the internal schema).';
revoke all on function document_jobs_internal.announce_faxes() from public;

select cron.schedule('document-jobs-announce', '* * * * *', 'select document_jobs_internal.announce_faxes()');
