-- A sender's text in an alert can no longer change what an operator reads. Before, the failure
-- alert put the subject into its text with only &, < and > escaped: a subject with newlines
-- forged whole lines ("Retry: curl ... | sh"), and markdown links, *bold*, bare URLs, @here and
-- @channel reached the chat as they were.
--
-- Now every sender's text (and every identifier) in an alert's text is one line (control
-- characters removed, line breaks of any kind made spaces, bidirectional overrides dropped),
-- shortened, and quoted as the receiver renders it inert; the alert's JSON fields keep the raw
-- values. The receiver is a setting, as the body each chat reads differs
-- (update document_jobs_settings set alert_receiver = 'discord'):
--
--   slack       {"text": ...}: Slack incoming webhooks (docs.slack.dev, messaging/formatting-
--               message-text): &, < and > escaped as Slack asks (so no <!here>, <!channel> or
--               <url|link>), and the sender's text in `code`, where mrkdwn formats nothing.
--   mattermost  {"text": ...}: Mattermost incoming webhooks (developers.mattermost.com,
--               integrate/webhooks/incoming), Markdown: the sender's text in `code` (no
--               formatting, no autolink; Mattermost strips code before it looks for @mentions),
--               our own words with Markdown's punctuation backslash-escaped.
--   discord     {"content": ..., "allowed_mentions": {"parse": []}}: Discord's execute webhook
--               (discord.com/developers/docs/resources/webhook): Markdown as for Mattermost, and
--               allowed_mentions parsing nothing, so no @everyone, @here, role or user is pinged.
--               (Discord's /slack URL takes Slack's shape, but not allowed_mentions: use the plain
--               webhook URL.)
--   teams       {"type": "message", "attachments": [an Adaptive Card]}: a Teams Workflows webhook
--               ("Post to a channel when a webhook request is received"; Office 365 connectors,
--               and their MessageCard, are retired: learn.microsoft.com, microsoftteams/platform/
--               webhooks-and-connectors): each line a RichTextBlock of TextRuns, which the
--               Adaptive Card schema renders without Markdown; the sender's text in monospace.
--
-- A backtick in a sender's text is shown as U+02CB (modifier letter grave accent): Slack's code
-- has no escape for it. The failure alert now lists the e-mail's file names too (at most 5).

alter table public.document_jobs_settings
    add column alert_receiver text not null default 'slack'
        constraint document_jobs_settings_alert_receiver
        check (alert_receiver in ('slack', 'mattermost', 'discord', 'teams'));

-- One line of at most p_max characters: control characters removed, every kind of line break
-- and tab a space, bidirectional controls (which reorder what is shown) dropped, spaces collapsed.
create function document_jobs_internal.one_line(p_text text, p_max int)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
    v_line text;
begin
    v_line := regexp_replace(p_text, '[\t\n\v\f\r\u0085\u2028\u2029]', ' ', 'g');
    v_line := regexp_replace(v_line, '[\u0001-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', '', 'g');
    v_line := btrim(regexp_replace(v_line, ' {2,}', ' ', 'g'));
    return case when length(v_line) > p_max then left(v_line, p_max - 1) || '…' else v_line end;
end;
$$;

-- A chat message for the receiver: p_lines is an array of lines, each an array of segments, a
-- string (our own words) or {"quote": text, "max": n} (a sender's text or an identifier; null
-- shows as "(none)"). Answers the receiver's fields, to be merged into the alert's JSON.
create function document_jobs_internal.chat_message(p_lines jsonb, p_receiver text)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
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
$$;

-- The alert's JSON: its machine-readable fields (raw values) and the configured receiver's message.
create function document_jobs_internal.alert_body(p_fields jsonb, p_lines jsonb)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
    return p_fields || document_jobs_internal.chat_message(
        p_lines, (select s.alert_receiver from public.document_jobs_settings s));
end;
$$;

-- As in 20261130002100, with the text made of quoted lines, and the e-mail's file names.
create or replace function document_jobs_internal.job_failed_alert(p_job public.document_jobs)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    c_files constant int := 5;
    v_email public.fax_received_emails;
    v_names text[];
    v_files jsonb := '[]'::jsonb;
    v_retry text := format('python -m lib.admin retry %s', p_job.id);
    v_history text := format('python -m lib.admin show %s', p_job.id);
begin
    select * into v_email from public.fax_received_emails e where e.id = p_job.fax_received_email_id;
    if jsonb_typeof(v_email.data -> 'attachments') = 'array' then
        v_names := array(select coalesce(a.value ->> 'filename', '(no name)')
                           from jsonb_array_elements(v_email.data -> 'attachments') a
                          where jsonb_typeof(a.value) = 'object');
    end if;
    for i in 1..least(coalesce(cardinality(v_names), 0), c_files) loop
        v_files := v_files || case when i > 1 then '[", "]'::jsonb else '[]'::jsonb end
                           || jsonb_build_array(jsonb_build_object('quote', v_names[i], 'max', 100));
    end loop;
    if cardinality(v_names) > c_files then
        v_files := v_files || jsonb_build_array(format(' and %s more', cardinality(v_names) - c_files));
    end if;
    return document_jobs_internal.alert_body(
        jsonb_build_object(
            'event', 'document_job_failed',
            'job', jsonb_build_object(
                'id', p_job.id, 'kind', p_job.kind, 'status', p_job.status, 'attempts', p_job.attempts,
                'max_attempts', p_job.max_attempts, 'generation', p_job.generation, 'created_at', p_job.created_at,
                'finished_at', p_job.finished_at, 'fax_received_email_id', p_job.fax_received_email_id),
            'email', case when v_email.id is not null then jsonb_build_object(
                'id', v_email.id, 'provider_email_id', v_email.provider_email_id, 'from', v_email.from_address,
                'subject', v_email.subject, 'received_at', coalesce(v_email.received_at, v_email.created_at),
                'filenames', to_jsonb(v_names)) end,
            'error', jsonb_build_object('code', p_job.last_error_code, 'message', p_job.last_error_message),
            'attempts', p_job.attempts,
            'retry_command', v_retry,
            'history_command', v_history,
            'sent_at', now()),
        jsonb_build_array(
            jsonb_build_array(
                format('Fax not fetched: job %s failed after %s of %s attempts (', p_job.id, p_job.attempts,
                       p_job.max_attempts),
                jsonb_build_object('quote', coalesce(p_job.last_error_code, 'no error code'), 'max', 100),
                ': ',
                jsonb_build_object('quote', p_job.last_error_message, 'max', 300),
                ').'),
            jsonb_build_array('From: ', jsonb_build_object('quote', v_email.from_address)),
            jsonb_build_array('Subject: ', jsonb_build_object('quote', v_email.subject)),
            jsonb_build_array('Files: ') || case when v_files = '[]' then '["(none)"]' else v_files end,
            jsonb_build_array('Received: ', coalesce(to_char(coalesce(v_email.received_at, v_email.created_at)
                                                             at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                                     '(unknown)')),
            jsonb_build_array('Retry: ', jsonb_build_object('quote', v_retry)),
            jsonb_build_array('History: ', jsonb_build_object('quote', v_history))));
end;
$$;

-- As in 20261130002100, the text made of lines for the receiver; an outage whose evidence has a
-- last_error (a release cause: the provider's message) quotes it on a line of its own.
create or replace function document_jobs_internal.set_outage(
    p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb)
returns int
language plpgsql
set search_path = ''
as $$
declare
    c_repeat constant interval := interval '1 hour';
    v_outage document_jobs_internal.outages;
    v_lines jsonb;
begin
    if p_active is null then
        return 0;
    end if;
    select * into strict v_outage from document_jobs_internal.outages o where o.cause = p_cause for update;
    if p_active then
        if not v_outage.active then
            v_outage.active := true;
            v_outage.since := now();
        end if;
        v_lines := jsonb_build_array(
            jsonb_build_array('Fax queue problem (', jsonb_build_object('quote', p_cause), '): ', p_summary),
            jsonb_build_array(document_jobs_internal.outage_advice(p_cause)));
        if p_evidence ? 'last_error' then
            v_lines := v_lines || jsonb_build_array(jsonb_build_array(
                'Last error: ', jsonb_build_object('quote', p_evidence ->> 'last_error', 'max', 300)));
        end if;
        if (v_outage.alerted_at is null or v_outage.alerted_at <= now() - c_repeat)
           and document_jobs_internal.post_alert(document_jobs_internal.alert_body(
                   jsonb_build_object(
                       'event', 'document_jobs_outage',
                       'cause', p_cause,
                       'summary', p_summary,
                       'advice', document_jobs_internal.outage_advice(p_cause),
                       'since', v_outage.since,
                       'evidence', p_evidence,
                       'sent_at', now()),
                   v_lines)) is not null then
            v_outage.alerted_at := now();
            update document_jobs_internal.outages o
               set active = true, since = v_outage.since, alerted_at = v_outage.alerted_at
             where o.cause = p_cause;
            return 1;
        end if;
        update document_jobs_internal.outages o set active = true, since = v_outage.since where o.cause = p_cause;
        return 0;
    end if;
    if not v_outage.active then
        return 0;
    end if;
    update document_jobs_internal.outages o set active = false, since = null where o.cause = p_cause;
    if v_outage.alerted_at >= v_outage.since then  -- the operator was told of this episode
        perform document_jobs_internal.post_alert(document_jobs_internal.alert_body(
            jsonb_build_object(
                'event', 'document_jobs_recovered',
                'cause', p_cause,
                'summary', p_recovered,
                'since', v_outage.since,
                'evidence', p_evidence,
                'sent_at', now()),
            jsonb_build_array(jsonb_build_array(
                'Fax queue recovered (', jsonb_build_object('quote', p_cause), '): ', p_recovered,
                format('. The problem began at %s.',
                       to_char(v_outage.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))))));
        return 1;
    end if;
    return 0;
end;
$$;

-- Replaced by one_line and chat_message.
drop function document_jobs_internal.chat_text(text, int);

revoke all on all functions in schema document_jobs_internal from public, anon, authenticated, service_role;
