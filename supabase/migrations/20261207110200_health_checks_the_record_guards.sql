-- The health check watches the guards of the record (record_guards): the tables' owner can still
-- disable, drop or alter a trigger, or grant UPDATE, DELETE or TRUNCATE back, and nothing in
-- PostgreSQL can stop it. What health can do is say so: record_guard_problems lists every guard
-- that is not in place, document-jobs-admin health prints it (and is not healthy while there is
-- one), and the every-minute health check opens the outage records_unguarded, which alerts.

create function document_jobs_internal.record_guard_problems()
returns jsonb
language sql
stable
set search_path = ''
as $$
    select coalesce(jsonb_agg(p.problem order by p.problem ->> 'table', p.problem ->> 'guard'), '[]'::jsonb)
      from (
        -- A record table that is gone takes its guards with it: the table is the problem.
        select jsonb_build_object('table', t.record_table, 'guard', 'table', 'problem', 'missing') as problem
          from document_jobs_internal.record_tables() t
         where pg_catalog.to_regclass(t.record_table) is null
        union all
        select jsonb_build_object(
                   'table', g.record_table, 'guard', g.trigger_name,
                   'problem', case when tr.oid is null then 'missing'
                                   when pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition then 'altered'
                                   when tr.tgenabled = 'D' then 'disabled'
                                   -- O: skipped in a session whose session_replication_role is replica;
                                   -- R: fires only in one.
                                   else 'not_always' end)
          from document_jobs_internal.record_guards() g
          left join pg_catalog.pg_trigger tr
            on tr.tgrelid = pg_catalog.to_regclass(g.record_table) and tr.tgname = g.trigger_name
         where pg_catalog.to_regclass(g.record_table) is not null
           and (tr.oid is null or pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition or tr.tgenabled <> 'A')
        union all
        select jsonb_build_object('table', t.record_table, 'guard', 'privileges', 'problem', 'granted',
                                  'privilege', a.privilege_type,
                                  'grantee', case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end)
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(c.relacl) a
         where a.grantee <> c.relowner and a.privilege_type in ('UPDATE', 'DELETE', 'TRUNCATE')
        union all
        select jsonb_build_object('table', t.record_table, 'guard', 'privileges', 'problem', 'granted',
                                  'privilege', format('UPDATE (%s)', at.attname),
                                  'grantee', case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end)
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_attribute at on at.attrelid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(at.attacl) a
         where a.privilege_type = 'UPDATE'
      ) p
$$;
revoke all on function document_jobs_internal.record_guard_problems() from public;
comment on function document_jobs_internal.record_guard_problems() is
    'Every guard of the record tables that is not in place, as [{"table", "guard", "problem"}]: a record table missing; a trigger of record_guards missing, altered (its definition is not the one record_guards gives), disabled, or not_always (ENABLE ALWAYS undone: a session with session_replication_role replica skips it); a role other than the owner granted UPDATE, DELETE or TRUNCATE on the table or UPDATE on a column (problem granted, with privilege and grantee). Empty when all are in place. Only the tables'' owner can cause any of these; document_jobs_health shows them and check_record_guards alerts.';

insert into document_jobs_internal.outages (cause) values ('records_unguarded');

create function document_jobs_internal.check_record_guards()
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_problems jsonb := document_jobs_internal.record_guard_problems();
begin
    return document_jobs_internal.set_outage(
        'records_unguarded',
        jsonb_array_length(v_problems) > 0,
        format('%s guards of the record of received faxes are not in place: %s', jsonb_array_length(v_problems),
               (select string_agg(format('%s %s %s%s', p ->> 'table', p ->> 'guard', p ->> 'problem',
                                         case when p ? 'grantee'
                                              then format(' (%s to %s)', p ->> 'privilege', p ->> 'grantee') end),
                                  '; ')
                  from jsonb_array_elements(v_problems) p)),
        'every guard of the record of received faxes is in place again',
        jsonb_build_object('problems', v_problems));
end;
$$;
revoke all on function document_jobs_internal.check_record_guards() from public;
comment on function document_jobs_internal.check_record_guards() is
    'The health check''s watch over the record: the outage records_unguarded holds while record_guard_problems finds any guard out of place (alerting as set_outage does, at most once an hour while it holds), and closes when all are back. The cron job document-jobs-health calls it. A guard switched off and back on between two runs is not seen: the outage says what is, not what was.';

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
        when 'reconciliation_stalled' then
            'Run document-jobs-admin health: its reconciliation lines name the last run''s finding or error. A refused key or a wrong URL is an outage of its own (resend_unauthorized, resend_misconfigured); an outage of Resend''s shows on resend-status.com. Meanwhile a fax whose webhook fails is recorded by nothing: if webhooks_missing is open too, run document-jobs-admin reconcile --since with the time of the last complete run.'
        when 'retention_window_closing' then
            'Before the date the alert names, run the command it names (document-jobs-admin reconcile --since ...; health prints it too), then find why the scheduled reconciliation does not keep up (reconciliation_stalled).'
        when 'reconciliation_unreadable' then
            'Look each one up in the Resend dashboard (Emails, Receiving) by what health and the overview show of it (id, time, sender, subject). If it is a fax, save its attachments from there or ask the sender to send it again. Report the listing to the developers: Resend''s list did not have its documented shape.'
        when 'records_unguarded' then
            'Run document-jobs-admin health: it names each guard that is not in place. Only the tables'' owner (postgres: a migration, the SQL editor) can do this: find out who did and why (the database''s logs in the Supabase dashboard). As postgres, select document_jobs_internal.guard_record_tables(); puts every guard back (it re-creates, re-enables and revokes). What changed while a guard was off cannot be told from the database: check the originals against their SHA-256 and record what happened under the office''s rules.'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the database, or the database refuses its key, stopped_because database_unauthorized: check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content from net._http_response order by created desc limit 5) and the worker''s logs on Vercel.'
        end)
$$;;

create or replace function document_jobs_internal.outage_advice_ja(p_cause text)
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
        when 'reconciliation_stalled' then
            'document-jobs-admin health を実行してください。照合の行に、前回の実行が止まった理由またはエラーが出ます。キーの拒否やURLの誤りはそれぞれ別の障害（resend_unauthorized、resend_misconfigured）として出ます。Resend 側の障害は resend-status.com で確認できます。その間、Webhook が届かなかったファクスを記録するものはありません。webhooks_missing も出ている場合は、最後に完了した実行の時刻を指定して document-jobs-admin reconcile --since を実行してください。'
        when 'retention_window_closing' then
            '通知に書かれた日時より前に、通知に書かれたコマンド（document-jobs-admin reconcile --since ...。health にも表示されます）を実行してください。そのうえで、定期的な照合が追いつかない原因を確認してください（reconciliation_stalled）。'
        when 'reconciliation_unreadable' then
            'health と概要画面に表示される情報（ID、日時、送信者、件名）で、Resend のダッシュボード（Emails → Receiving）から1件ずつ探してください。ファクスであれば、そこから添付ファイルを保存するか、送信者に再送を依頼してください。Resend の一覧が仕様どおりの形ではなかったことを開発者に連絡してください。'
        when 'records_unguarded' then
            'document-jobs-admin health を実行してください。外れている仕組みが1つずつ表示されます。これができるのはテーブルの所有者（postgres: マイグレーション、SQL Editor）だけなので、誰がなぜ行ったかを確認してください（Supabase のダッシュボードのデータベースのログ）。postgres で select document_jobs_internal.guard_record_tables(); を実行すると、すべての仕組みが元に戻ります（トリガーを作り直して有効にし、与えられた権限を外します）。外れていた間に変更されたものはデータベースからは分かりません。原本を記録した SHA-256 と照合し、事務処理規程に従って経緯を記録してください。'
        else  -- worker_failing, the cause of a worker's calls that fail otherwise
            'ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by created desc limit 5) と Vercel のワーカーのログを確認してください。'
        end)
$$;;

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
        'record_guards', jsonb_build_object(
            'guards', (select count(*) from document_jobs_internal.record_guards()),
            'problems', document_jobs_internal.record_guard_problems()),
        'checked_at', now());
end;
$$;

comment on function public.document_jobs_health() is
    'The flow''s health for an operator (the admin CLI''s health): the outages the health check holds open now, with what to check (advice, advice_ja); the worker''s answers of the last hour by status (pg_net keeps them 6 hours); which of the Vault secrets the database reads exist (names only, never a value); and the guards of the record of received faxes, how many there are and each that is not in place now (record_guard_problems). Security definer: only postgres may read Vault and the health check''s tables.';

-- The health check watches the record's guards too.
select cron.schedule('document-jobs-health', '* * * * *',
                     'select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing() + document_jobs_internal.check_reconciliation() + document_jobs_internal.check_record_guards()');
