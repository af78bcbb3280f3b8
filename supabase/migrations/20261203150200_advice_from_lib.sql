-- One source for what an outage alert advises: lib/failures.py, whose texts (English and
-- Japanese) the admin screen and the CLI show. The alerts read theirs from SQL
-- (release_causes.advice, outage_advice), written apart, and the two had drifted (an alert and
-- the screen gave the same outage different advice). The SQL texts are now lib's, word for word,
-- in English and, new, in Japanese (release_causes.advice_ja, outage_advice_ja): an outage alert
-- carries both lines, and the health call answers both. A migration cannot import Python, so the
-- texts are copied here; tests/database/test_advice_is_lib_advice.py fails when a text of either
-- side changes alone, or when a cause is in one and not the other.

alter table document_jobs_internal.release_causes add column advice_ja text;
update document_jobs_internal.release_causes set
    advice = 'Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.',
    advice_ja = 'Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。'
 where code = 'database_unauthorized';
update document_jobs_internal.release_causes set
    advice = 'Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the waiting jobs are tried again every 10 minutes.',
    advice_ja = 'Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。待機中のジョブは10分ごとに再試行されます。'
 where code = 'resend_misconfigured';
update document_jobs_internal.release_causes set
    advice = 'Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting jobs are tried again every hour.',
    advice_ja = 'Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。待機中のジョブは1時間ごとに再試行されます。'
 where code = 'resend_quota_exceeded';
update document_jobs_internal.release_causes set
    advice = 'Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.',
    advice_ja = 'Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に設定して再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。'
 where code = 'resend_unauthorized';
update document_jobs_internal.release_causes set
    advice = 'Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the default) and redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes.',
    advice_ja = 'Vercel の ATTACHMENTS_BUCKET を直すか削除して（マイグレーションが既定の fax-attachments を作成します）再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。'
 where code = 'storage_bucket_not_found';
update document_jobs_internal.release_causes set
    advice = 'Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.',
    advice_ja = 'Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。'
 where code = 'storage_unauthorized';
alter table document_jobs_internal.release_causes alter column advice_ja set not null;
comment on column document_jobs_internal.release_causes.advice is
    'What to do, in English: lib/failures.py FAILURES[code].advice, word for word (tests/database/test_advice_is_lib_advice.py).';
comment on column document_jobs_internal.release_causes.advice_ja is
    'What to do, in Japanese: lib/failures.py FAILURES[code].advice_ja, word for word.';

create or replace function document_jobs_internal.outage_advice(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'Check that the cron job document-jobs runs (select * from cron.job_run_details order by start_time desc limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker''s answers (select status_code, count(*) from net._http_response group by 1) and the worker''s logs on Vercel.'
        when 'worker_unauthorized' then
            'Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on Vercel (or that variable is unset: the worker''s log then names it). Store the same value in both (README: Rotating INTERNAL_FUNCTION_SECRET).'
        when 'worker_not_found' then
            'Likely cause: the Vault secret document_jobs_url is wrong (it must be https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in Vault and the deployment on Vercel.'
        when 'webhooks_missing' then
            'Check the webhook in Resend''s dashboard (Webhooks: its URL must be https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and redeploy), and Vercel''s Deployment Protection, which answers 401 before the function runs (docs/DEPLOY.md).'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the database, or the database refuses its key, stopped_because database_unauthorized: check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content from net._http_response order by created desc limit 5) and the worker''s logs on Vercel.'
        end)
$$;
comment on function document_jobs_internal.outage_advice(p_cause text) is
    'What to do about an outage cause, in English: for a release cause release_causes'' advice, for the others lib/failures.py OUTAGES[cause].advice_en, word for word (tests/database/test_advice_is_lib_advice.py).';

create function document_jobs_internal.outage_advice_ja(p_cause text)
returns text
language sql
stable
set search_path = ''
as $$
    select coalesce((select r.advice_ja from document_jobs_internal.release_causes r where r.code = p_cause),
        case p_cause
        when 'queue_stalled' then
            'cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time desc limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。'
        when 'worker_unauthorized' then
            'Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う（または未設定で、その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください（README: Rotating INTERNAL_FUNCTION_SECRET）。'
        when 'worker_not_found' then
            'Vault のシークレット document_jobs_url が誤っている（https://YOUR-APP.vercel.app/api/internal/document-jobs でなければなりません）か、デプロイがなくなっている可能性が高いです。Vault のURLと Vercel のデプロイを確認してください。'
        when 'webhooks_missing' then
            'Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by created desc limit 5) と Vercel のワーカーのログを確認してください。'
        end)
$$;
revoke all on function document_jobs_internal.outage_advice_ja(text) from public;
comment on function document_jobs_internal.outage_advice_ja(p_cause text) is
    'outage_advice in Japanese: for a release cause release_causes'' advice_ja, for the others lib/failures.py OUTAGES[cause].advice_ja, word for word.';

-- The outage alert's advice in both languages, a line each, and "advice_ja" beside "advice".
-- Otherwise as in 20261203150100.
create or replace function document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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
            jsonb_build_array(document_jobs_internal.outage_advice(p_cause)),
            jsonb_build_array(document_jobs_internal.outage_advice_ja(p_cause)));
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
                       'advice_ja', document_jobs_internal.outage_advice_ja(p_cause),
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
                       document_jobs_internal.alert_time(v_outage.since))))));
        return 1;
    end if;
    return 0;
end;
$$;

comment on function document_jobs_internal.set_outage(p_cause text, p_active boolean, p_summary text, p_recovered text, p_evidence jsonb) is
    'Moves one outage cause to what the check found (true: holds; false: cleared; null: no evidence either way, e.g. no call answered lately) and sends what that calls for: at most one alert an hour, and a recovered alert only after a down alert of the same episode. An outage whose evidence has a last_error (a release cause: the provider''s message) quotes it on a line of its own. The advice comes in English and in Japanese, a line each (outage_advice, outage_advice_ja). Returns the alerts queued.';

-- The health call's outages with the advice in both languages. Otherwise as in 20261203000000.
create or replace function public.document_jobs_health()
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return jsonb_build_object(
        'outages', coalesce((
            select jsonb_agg(jsonb_build_object('cause', o.cause, 'since', o.since, 'alerted_at', o.alerted_at,
                                                'advice', document_jobs_internal.outage_advice(o.cause),
                                                'advice_ja', document_jobs_internal.outage_advice_ja(o.cause))
                             order by o.since)
              from document_jobs_internal.outages o
             where o.active), '[]'::jsonb),
        'worker_answers_last_hour', coalesce((
            select jsonb_agg(jsonb_build_object('status_code', a.status_code, 'count', a.n) order by a.status_code)
              from (select r.status_code, count(*) as n
                      from document_jobs_internal.worker_requests w
                      join net._http_response r on r.id = w.request_id
                     where r.created > now() - interval '1 hour'
                     group by r.status_code) a), '[]'::jsonb),
        'vault_secrets', (
            select jsonb_object_agg(n.name, exists (select 1 from vault.secrets s where s.name = n.name))
              from unnest(array['document_jobs_url', 'internal_function_secret', 'document_jobs_alert_url']) n(name)),
        'checked_at', now());
end;
$$;
comment on function public.document_jobs_health() is
    'The flow''s health for an operator (the admin CLI''s health): the outages the health check holds open now, with what to check (advice, advice_ja); the worker''s answers of the last hour by status (pg_net keeps them 6 hours); and which of the Vault secrets the database reads exist (names only, never a value). Security definer: only postgres may read Vault and the health check''s tables.';
