"""How a job's failure is handled: THE table (tests/unit/test_failures.py holds the guides'
tables to it), and the translation of each service's errors into its stable codes.

retry   transient: fail_document_job(p_retryable => true); backoff, or the provider's retry-after
fail    permanent: fail_document_job(p_retryable => false); the job stops in `failed`
release not the job's fault: release_document_job; no attempt spent

A failure that is not the job's own (a key, a setting, a quota) is a release with a delay, never
`failed`: one key rotation must not park every fax. Its rule names what an operator checks
(`check`), and the health check raises an outage alert when such releases keep happening
(supabase/migrations/20261201002200_document_jobs_release_outages.sql holds the same names;
tests/database/test_limits_mirror.py compares them), with this module's advice in both languages
(release_causes.advice and advice_ja, outage_advice: tests/database/test_advice_is_lib_advice.py
fails when a text here changes and no migration copies it). Only what belongs to the job itself (the e-mail is gone,
an attachment is too large, its content or its id is refused) fails it at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum

from lib.errors import DatabaseError


class Action(StrEnum):
    RETRY = "retry"
    FAIL = "fail"
    RELEASE = "release"


class FailureCode(StrEnum):
    """The stable codes of FAILURES: what a job's last_error_code says (with lease_expired and
    cancelled, which only the database writes)."""

    RESEND_UNAVAILABLE = "resend_unavailable"
    RESEND_RATE_LIMITED = "resend_rate_limited"
    RESEND_RATE_LIMIT_WAIT = "resend_rate_limit_wait"
    RESEND_QUOTA_EXCEEDED = "resend_quota_exceeded"
    RESEND_NETWORK_ERROR = "resend_network_error"
    RESEND_TIMEOUT = "resend_timeout"
    RESEND_NOT_FOUND = "resend_not_found"
    RESEND_MALFORMED_RESPONSE = "resend_malformed_response"
    RESEND_UNAUTHORIZED = "resend_unauthorized"
    RESEND_MISCONFIGURED = "resend_misconfigured"
    RESEND_REJECTED = "resend_rejected"
    RESEND_UNEXPECTED_ANSWER = "resend_unexpected_answer"
    DOWNLOAD_EXPIRED = "download_expired"
    DOWNLOAD_FAILED = "download_failed"
    ATTACHMENT_TOO_LARGE = "attachment_too_large"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    STORAGE_UNAUTHORIZED = "storage_unauthorized"
    STORAGE_BUCKET_NOT_FOUND = "storage_bucket_not_found"
    STORAGE_TOO_LARGE = "storage_too_large"
    STORAGE_INVALID_KEY = "storage_invalid_key"
    STORAGE_REJECTED = "storage_rejected"
    DATABASE_ERROR = "database_error"
    DATABASE_UNAUTHORIZED = "database_unauthorized"
    EMAIL_NOT_FOUND = "email_not_found"
    # A stored fax the prepare_fax job cannot prepare for viewing (lib/worker/fax_pages.py): the job's
    # own, for good, and nothing is lost (the original stays stored and downloadable).
    FAX_FILE_DAMAGED = "fax_file_damaged"
    FAX_FILE_ENCRYPTED = "fax_file_encrypted"
    FAX_FILE_EMPTY = "fax_file_empty"
    FAX_PAGE_TOO_LARGE = "fax_page_too_large"
    # The stored original itself, read back by the prepare_fax job, is not what was recorded.
    ORIGINAL_MISSING = "original_missing"
    ORIGINAL_ALTERED = "original_altered"
    TIME_BUDGET = "time_budget"
    INTERNAL_ERROR = "internal_error"


@dataclass(frozen=True)
class Explanation:
    """What a code means and what to do about it, in English and Japanese: the one text the admin
    screen (public/admin/explanations.js, written from it by `make explanations`) and the CLI show."""

    meaning_en: str
    meaning_ja: str
    advice_en: str
    advice_ja: str

    def meaning(self, language: str) -> str:
        return self.meaning_ja if language == "ja" else self.meaning_en

    def advice(self, language: str) -> str:
        return self.advice_ja if language == "ja" else self.advice_en


@dataclass(frozen=True)
class Rule:
    action: Action
    meaning: str
    # For release: how long the job waits (a missing permission is not fixed in seconds).
    delay: timedelta = timedelta(0)
    # For a cause that is not the job's own: what the operator checks. The log line of every such
    # release names it, and the health check's outage alert for the code does too.
    check: str | None = None
    # The meaning for a clerk in Japanese, and what to do, in both languages.
    meaning_ja: str = field(kw_only=True)
    advice: str = field(kw_only=True)
    advice_ja: str = field(kw_only=True)

    @property
    def explanation(self) -> Explanation:
        return Explanation(self.meaning, self.meaning_ja, self.advice, self.advice_ja)


# The server key's settings (the secret key, or on projects that still have it the legacy JWT).
SUPABASE_KEY_SETTINGS = "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"
# A key or a setting is not fixed within seconds; asking again every 10 minutes costs nothing.
_SETTING_DELAY = timedelta(minutes=10)

_RETRIES_EN = "Nothing to do: the job is tried again on its own. If it keeps failing, retry it later."
_RETRIES_JA = "対応は不要です。ジョブは自動で再試行されます。失敗が続く場合は、しばらくしてから再試行してください。"
_RESEND_OUTAGE_EN = " If many jobs show it, check Resend's status page (resend-status.com)."
_RESEND_OUTAGE_JA = " 多くのジョブで起きている場合は、Resend の稼働状況ページ（resend-status.com）を確認してください。"
_SERVER_KEY_EN = (
    "Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the "
    "legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the "
    "waiting jobs are tried again every 10 minutes and drain on their own."
)
_SERVER_KEY_JA = (
    "Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。"
    "旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、"
    "再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
)
_BUG_EN = "Retry the job. If it fails the same way again, report it to the developers with the job id."
_BUG_JA = "ジョブを再試行してください。同じように失敗する場合は、ジョブIDを添えて開発者に連絡してください。"
# A fax that cannot be prepared for viewing: nothing is lost, and a clerk reads it from the original.
_KEPT_EN = "The original is stored unchanged: download it and open it on the computer. Retrying gives the same result."
_KEPT_JA = "原本はそのまま保存されています。原本をダウンロードして開いてください（再試行しても結果は変わりません）。"
_ORIGINAL_EN = (
    "A stored original must never change or go: check the bucket in Supabase's Storage (who deleted or overwrote the "
    "object, and when) and report it to the developers with the job id. Fetch the fax again from the Resend "
    "dashboard (Emails, Receiving) while Resend still has it."
)
_ORIGINAL_JA = (
    "保存した原本が変更・削除されることはあってはなりません。Supabase の Storage でバケットを確認し（いつ誰がファイルを"
    "削除・上書きしたか）、ジョブIDを添えて開発者に連絡してください。Resend にまだ残っていれば、Resend のダッシュボード"
    "（Emails → Receiving）から取得し直してください。"
)
_GIVE_UP_EN = (
    "Retrying does not help. Ask the sender to send the fax again, or fetch it from the Resend dashboard "
    "(Emails, Receiving)."
)
_GIVE_UP_JA = (
    "再試行しても解決しません。送信者に再送を依頼するか、Resend のダッシュボード（Emails → Receiving）から"
    "取得してください。"
)

FAILURES: dict[FailureCode, Rule] = {
    FailureCode.RESEND_UNAVAILABLE: Rule(
        Action.RETRY,
        "Resend answered 5xx, or 409, 423 or 425 (a conflicting or early request: a state that passes)",
        meaning_ja="Resend が一時的なエラーを返しました（5xx、または409・423・425）。",
        advice=_RETRIES_EN + _RESEND_OUTAGE_EN,
        advice_ja=_RETRIES_JA + _RESEND_OUTAGE_JA,
    ),
    # Throttling, not an outage and not the job's fault: the workers share a limiter so that a 429
    # stays rare (another application of the team took the window). At least a second: Resend
    # counts in one-second windows.
    FailureCode.RESEND_RATE_LIMITED: Rule(
        Action.RELEASE,
        "Resend answered 429 rate_limit_exceeded; its retry-after is honoured",
        timedelta(seconds=1),
        meaning_ja="Resend の呼び出し回数の上限（1秒あたり）に達しました（429 rate_limit_exceeded）。",
        advice="Nothing to do: the job waits as Resend asks and goes on. If it happens often, another "
        "application of the Resend team is using the same limit.",
        advice_ja="対応は不要です。Resend の指示どおり待ってから続行します。頻繁に起きる場合は、同じ Resend "
        "チームの別のアプリケーションが同じ上限を使っています。",
    ),
    FailureCode.RESEND_RATE_LIMIT_WAIT: Rule(
        Action.RELEASE,
        "the shared limiter's next Resend slot is further away than the time budget allows",
        meaning_ja="Resend の呼び出し枠の空きを待つ時間が、この実行の残り時間より長くなりました。",
        advice="Nothing to do: the next run goes on with the job; no attempt was spent.",
        advice_ja="対応は不要です。次の実行がこのジョブを続けます（試行回数は消費していません）。",
    ),
    # Not the job's fault, and retrying within the hour cannot help: wait without spending attempts.
    FailureCode.RESEND_QUOTA_EXCEEDED: Rule(
        Action.RELEASE,
        "Resend's daily or monthly quota is used up",
        delay=timedelta(hours=1),
        check="the Resend team's plan (its daily and monthly quota)",
        meaning_ja="Resend の1日または1か月の利用上限に達しました。",
        advice="Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting "
        "jobs are tried again every hour.",
        advice_ja="Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。"
        "待機中のジョブは1時間ごとに再試行されます。",
    ),
    FailureCode.RESEND_NETWORK_ERROR: Rule(
        Action.RETRY,
        "Resend could not be reached, or the connection broke",
        meaning_ja="Resend に接続できなかったか、通信が途中で切れました。",
        advice=_RETRIES_EN + _RESEND_OUTAGE_EN,
        advice_ja=_RETRIES_JA + _RESEND_OUTAGE_JA,
    ),
    FailureCode.RESEND_TIMEOUT: Rule(
        Action.RETRY,
        "Resend (or a proxy in front of it: 408) did not answer in time",
        meaning_ja="Resend（またはその手前の中継、408）が時間内に応答しませんでした。",
        advice=_RETRIES_EN + _RESEND_OUTAGE_EN,
        advice_ja=_RETRIES_JA + _RESEND_OUTAGE_JA,
    ),
    FailureCode.RESEND_NOT_FOUND: Rule(
        Action.FAIL,
        "Resend does not know the e-mail (404 not_found, 410)",
        meaning_ja="Resend にこのメールが見つかりません（404 not_found、410）。削除されたか、保存期間が過ぎています。",
        advice="Retrying does not help: the e-mail is gone from Resend. Ask the sender to send the fax again.",
        advice_ja="再試行しても解決しません。メールは Resend から消えています。送信者に再送を依頼してください。",
    ),
    FailureCode.RESEND_MALFORMED_RESPONSE: Rule(
        Action.FAIL,
        "Resend's answer did not have the documented shape (the message names the field)",
        meaning_ja="Resend の応答が仕様どおりの形ではありませんでした（メッセージに項目名があります）。",
        advice="Retry the job later; if it fails the same way, report it to the developers with the job id "
        "(Resend may have changed its API).",
        advice_ja="しばらくしてからジョブを再試行してください。同じように失敗する場合は、ジョブIDを添えて開発者に"
        "連絡してください（Resend の API が変わった可能性があります）。",
    ),
    FailureCode.RESEND_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "RESEND_API_KEY is missing, deleted, invalid or lacks receiving permission"
        " (400 validation_error naming the API key, 401, 403)",
        delay=_SETTING_DELAY,
        check="RESEND_API_KEY",
        meaning_ja="Resend が API キー（RESEND_API_KEY）を拒否しました。未設定・削除済み・誤り、または受信の権限がない"
        "（送信専用の）キーです。",
        advice="Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel "
        "and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.",
        advice_ja="Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に設定して"
        "再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。",
    ),
    FailureCode.RESEND_MISCONFIGURED: Rule(
        Action.RELEASE,
        "RESEND_API_URL is not Resend's API: a redirect, 405, or a 404 for the endpoint itself",
        delay=_SETTING_DELAY,
        check="RESEND_API_URL",
        meaning_ja="RESEND_API_URL が Resend の API を指していません"
        "（リダイレクト、405、またはエンドポイント自体の404）。",
        advice="Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the waiting "
        "jobs are tried again every 10 minutes.",
        advice_ja="Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。"
        "待機中のジョブは10分ごとに再試行されます。",
    ),
    FailureCode.RESEND_REJECTED: Rule(
        Action.FAIL,
        "Resend refused the request as invalid for this e-mail (400 about a field, 413, 414, 422, 431)",
        meaning_ja="Resend がこのメールへの要求を不正として拒否しました（項目についての400、413、414、422、431）。",
        advice=_GIVE_UP_EN,
        advice_ja=_GIVE_UP_JA,
    ),
    FailureCode.RESEND_UNEXPECTED_ANSWER: Rule(
        Action.RETRY,
        "an answer Resend does not document for this endpoint (another 4xx, a 1xx or 2xx but 200)",
        meaning_ja="Resend が、このエンドポイントの仕様にない応答を返しました（その他の4xx、200以外の1xx・2xx）。",
        advice=_RETRIES_EN + " If it fails for good, report it to the developers with the job id.",
        advice_ja=_RETRIES_JA + " 最終的に失敗した場合は、ジョブIDを添えて開発者に連絡してください。",
    ),
    FailureCode.DOWNLOAD_EXPIRED: Rule(
        Action.RETRY,
        "an attachment's download URL answered 403 even after listing afresh",
        meaning_ja="添付ファイルのダウンロードURLが、取得し直した後も403を返しました。",
        advice=_RETRIES_EN,
        advice_ja=_RETRIES_JA,
    ),
    FailureCode.DOWNLOAD_FAILED: Rule(
        Action.RETRY,
        "an attachment download failed (network, timeout, 5xx, or fewer or more bytes than listed)",
        meaning_ja="添付ファイルのダウンロードに失敗しました（通信、タイムアウト、5xx、またはサイズの不一致）。",
        advice=_RETRIES_EN,
        advice_ja=_RETRIES_JA,
    ),
    FailureCode.ATTACHMENT_TOO_LARGE: Rule(
        Action.FAIL,
        "an attachment is larger than ATTACHMENT_MAX_BYTES",
        meaning_ja="添付ファイルが上限（ATTACHMENT_MAX_BYTES）より大きいです。",
        advice="Fetch the fax from the Resend dashboard (Emails, Receiving), or raise ATTACHMENT_MAX_BYTES on "
        "Vercel, redeploy and retry the job.",
        advice_ja="Resend のダッシュボード（Emails → Receiving）から取得するか、Vercel の ATTACHMENT_MAX_BYTES を上げて"
        "再デプロイし、ジョブを再試行してください。",
    ),
    FailureCode.STORAGE_UNAVAILABLE: Rule(
        Action.RETRY,
        "Storage answered 5xx, 429 or 544, or could not be reached",
        meaning_ja="Supabase Storage が一時的なエラーを返したか（5xx、429、544）、接続できませんでした。",
        advice=_RETRIES_EN + " If many jobs show it, check status.supabase.com.",
        advice_ja=_RETRIES_JA + " 多くのジョブで起きている場合は status.supabase.com を確認してください。",
    ),
    FailureCode.STORAGE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "Storage refused the server key (401/403: InvalidJWT, AccessDenied)",
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
        meaning_ja="Supabase Storage がサーバーキーを拒否しました（401/403: InvalidJWT、AccessDenied）。",
        advice=_SERVER_KEY_EN,
        advice_ja=_SERVER_KEY_JA,
    ),
    FailureCode.STORAGE_BUCKET_NOT_FOUND: Rule(
        Action.RELEASE,
        "Storage has no bucket of that name (404 Bucket not found, NoSuchBucket, InvalidBucketName)",
        delay=_SETTING_DELAY,
        check="ATTACHMENTS_BUCKET",
        meaning_ja="Supabase Storage に ATTACHMENTS_BUCKET の名前のバケットがありません。",
        advice="Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the default) and "
        "redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes.",
        advice_ja="Vercel の ATTACHMENTS_BUCKET を直すか削除して"
        "（マイグレーションが既定の fax-attachments を作成します）"
        "再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。",
    ),
    FailureCode.STORAGE_TOO_LARGE: Rule(
        Action.FAIL,
        "Storage refused the object as too large (413)",
        meaning_ja="Supabase Storage がファイルを大きすぎるとして拒否しました（413）。",
        advice="Raise the file size limit of the bucket (and of the project) in Supabase's Storage settings, then "
        "retry the job.",
        advice_ja="Supabase の Storage 設定でバケット（とプロジェクト）のファイルサイズ上限を上げてから、"
        "ジョブを再試行してください。",
    ),
    FailureCode.STORAGE_INVALID_KEY: Rule(
        Action.FAIL,
        "Storage refused the object key (InvalidKey)",
        meaning_ja="Supabase Storage が保存先のパス（InvalidKey）を拒否しました。",
        advice=_BUG_EN,
        advice_ja=_BUG_JA,
    ),
    FailureCode.STORAGE_REJECTED: Rule(
        Action.FAIL,
        "Storage refused the upload for another reason (4xx)",
        meaning_ja="Supabase Storage がその他の理由（4xx）で保存を拒否しました。",
        advice=_BUG_EN,
        advice_ja=_BUG_JA,
    ),
    FailureCode.DATABASE_ERROR: Rule(
        Action.RETRY,
        "the database (PostgREST) failed or could not be reached",
        meaning_ja="データベース（PostgREST）がエラーを返したか、接続できませんでした。",
        advice=_RETRIES_EN + " If many jobs show it, check status.supabase.com.",
        advice_ja=_RETRIES_JA + " 多くのジョブで起きている場合は status.supabase.com を確認してください。",
    ),
    FailureCode.DATABASE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "the database (PostgREST) refused the server key (401/403: a JWT error, permission denied)",
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
        meaning_ja="データベース（PostgREST）がサーバーキーを拒否したか、権限が足りません（401/403）。",
        advice=_SERVER_KEY_EN,
        advice_ja=_SERVER_KEY_JA,
    ),
    FailureCode.EMAIL_NOT_FOUND: Rule(
        Action.FAIL,
        "the job's e-mail row does not exist",
        meaning_ja="ジョブの対象のメールの記録がデータベースにありません。",
        advice="Retrying does not help: the e-mail's record was deleted. Nothing else is affected.",
        advice_ja="再試行しても解決しません。メールの記録が削除されています。ほかへの影響はありません。",
    ),
    FailureCode.FAX_FILE_DAMAGED: Rule(
        Action.FAIL,
        "the stored fax could not be read for viewing: the file is damaged, cut short, or not what its type says",
        meaning_ja="ファイルが壊れているか途中で切れているため、表示用の変換ができませんでした。",
        advice=_KEPT_EN + " If the original does not open either, ask the sender to send the fax again.",
        advice_ja=_KEPT_JA + "原本も開けない場合は、送信元に再送を依頼してください。",
    ),
    FailureCode.FAX_FILE_ENCRYPTED: Rule(
        Action.FAIL,
        "the stored fax is a PDF protected by a password, so it could not be read for viewing",
        meaning_ja="パスワードで保護されたPDFのため、表示用の変換ができませんでした。",
        advice=_KEPT_EN + " It opens with the password the sender gives.",
        advice_ja=_KEPT_JA + "送信元から聞いたパスワードで開けます。",
    ),
    FailureCode.FAX_FILE_EMPTY: Rule(
        Action.FAIL,
        "the stored fax has no pages",
        meaning_ja="ページが1枚もないファイルのため、表示用の変換ができませんでした。",
        advice=_KEPT_EN + " If it is empty there too, ask the sender to send the fax again.",
        advice_ja=_KEPT_JA + "原本も空の場合は、送信元に再送を依頼してください。",
    ),
    FailureCode.FAX_PAGE_TOO_LARGE: Rule(
        Action.FAIL,
        "a page of the stored fax is larger than the pixel cap (lib/worker/fax_pages.py MAX_PAGE_PIXELS) or than PDF's "
        "largest page: a decompression bomb is not drawn",
        meaning_ja="ページの大きさ（画素数）が上限を超えているため、表示用の変換ができませんでした。",
        advice=_KEPT_EN,
        advice_ja=_KEPT_JA,
    ),
    FailureCode.ORIGINAL_MISSING: Rule(
        Action.FAIL,
        "the stored original is not in Storage (404) although its row says it was stored",
        meaning_ja="保存済みのはずの原本が Supabase Storage にありません。",
        advice=_ORIGINAL_EN,
        advice_ja=_ORIGINAL_JA,
    ),
    FailureCode.ORIGINAL_ALTERED: Rule(
        Action.FAIL,
        "the stored original's bytes are not those recorded (their SHA-256 differs from its row's)",
        meaning_ja="保存済みの原本の中身が、記録した内容（SHA-256）と一致しません。",
        advice=_ORIGINAL_EN,
        advice_ja=_ORIGINAL_JA,
    ),
    FailureCode.TIME_BUDGET: Rule(
        Action.RELEASE,
        "the invocation's time ran out mid-job; the next one resumes (bounded: see TIME_BUDGET_FREE_RELEASES)",
        meaning_ja="実行時間の上限に達したため、ジョブを途中で中断しました。次の実行が続きから再開します。",
        advice="Nothing to do. If it keeps happening, the attachments are large or slow to download.",
        advice_ja="対応は不要です。繰り返し起きる場合は、添付ファイルが大きいかダウンロードが遅いためです。",
    ),
    FailureCode.INTERNAL_ERROR: Rule(
        Action.RETRY,
        "an unexpected error in the worker (a bug): see the logs",
        meaning_ja="ワーカーで予期しないエラー（不具合）が起きました。",
        advice="The job is tried again on its own. If it fails for good, report it to the developers with the "
        "job id (the worker's logs on Vercel name the error).",
        advice_ja="ジョブは自動で再試行されます。最終的に失敗した場合は、ジョブIDを添えて開発者に連絡してください"
        "（Vercel のワーカーのログにエラーが記録されています）。",
    ),
}

# The two codes only the database writes as a job's last_error_code.
DATABASE_CODES: dict[str, Explanation] = {
    "cancelled": Explanation(
        "an admin cancelled the job (the message is their reason)",
        "管理者がジョブをキャンセルしました（メッセージはその理由です）。",
        "Nothing to do. Retry the job if it was cancelled by mistake; a bulk retry leaves cancelled jobs out "
        "unless its filter names the error code cancelled.",
        "対応は不要です。誤ってキャンセルした場合はジョブを再試行してください。一括再試行は、エラーコード cancelled "
        "で絞り込んだ場合を除き、キャンセルされたジョブを対象にしません。",
    ),
    "lease_expired": Explanation(
        "the worker running the job stopped answering (it ran past its time or crashed) and its lease ran out",
        "ジョブを実行中のワーカーが応答しなくなり（時間切れまたは異常終了）、実行権の期限が切れました。",
        _RETRIES_EN + " If many jobs show it, check the worker's logs on Vercel (timeouts, crashes).",
        _RETRIES_JA
        + " 多くのジョブで起きている場合は、Vercel のワーカーのログ（タイムアウト、異常終了）を確認してください。",
    ),
}

# The health check's outages that are not a release cause (the release causes are FAILURES' codes
# with a `check`, and their explanation is the code's). The database holds the causes and a copy of
# the advice (tests/database/test_advice_is_lib_advice.py holds it to these texts).
_WORKER_LOGS_EN = "the worker's logs on Vercel"
OUTAGES: dict[str, Explanation] = {
    "queue_stalled": Explanation(
        "no worker is taking the waiting jobs: the oldest claimable job waited longer than the threshold",
        "待機中のジョブを処理するワーカーがいません。最も古い待機ジョブが基準時間を超えて待っています。",
        "Check that the cron job document-jobs runs (select * from cron.job_run_details order by start_time desc "
        "limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker's answers "
        f"(select status_code, count(*) from net._http_response group by 1) and {_WORKER_LOGS_EN}.",
        "cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time desc "
        "limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select "
        "status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。",
    ),
    "worker_unauthorized": Explanation(
        "the worker refuses the database's calls (401)",
        "ワーカーがデータベースからの呼び出しを拒否しています（401）。",
        "Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on Vercel "
        "(or that variable is unset: the worker's log then names it). Store the same value in both (README: "
        "Rotating INTERNAL_FUNCTION_SECRET).",
        "Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う（または未設定で、"
        "その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください（README: "
        "Rotating INTERNAL_FUNCTION_SECRET）。",
    ),
    "worker_not_found": Explanation(
        "the worker's URL answers 404",
        "ワーカーのURLが404を返しています。",
        "Likely cause: the Vault secret document_jobs_url is wrong (it must be "
        "https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in "
        "Vault and the deployment on Vercel.",
        "Vault のシークレット document_jobs_url が誤っている（https://YOUR-APP.vercel.app/api/internal/document-jobs "
        "でなければなりません）か、デプロイがなくなっている可能性が高いです。Vault のURLと Vercel のデプロイを"
        "確認してください。",
    ),
    "worker_failing": Explanation(
        "the worker's calls fail (5xx, or no answer)",
        "ワーカーの呼び出しが失敗しています（5xx、または応答なし）。",
        "Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the "
        "database, or the database refuses its key, stopped_because database_unauthorized: check "
        "SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content "
        f"from net._http_response order by created desc limit 5) and {_WORKER_LOGS_EN}.",
        "ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、"
        "キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 または"
        "タイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by "
        "created desc limit 5) と Vercel のワーカーのログを確認してください。",
    ),
    "webhooks_missing": Explanation(
        "reconciliation recorded e-mails that Resend received and whose webhook never reached us (nothing is "
        "lost, but every new fax now waits for the next reconciliation run)",
        "Resend が受信したのに Webhook が届かなかったメールを、照合（reconciliation）が記録しました。"
        "失われたものはありませんが、新しいファクスは次の照合まで待つことになります。",
        "Check the webhook in Resend's dashboard (Webhooks: its URL must be "
        "https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature "
        "means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and "
        "redeploy), and Vercel's Deployment Protection, which answers 401 before the function runs "
        "(docs/DEPLOY.md).",
        "Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが "
        "https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature "
        "なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。"
        "また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。",
    ),
}


def job_error_explanation(code: str) -> Explanation | None:
    """What a job's last_error_code (or an attempt's error_code) means and what to do."""
    if code in DATABASE_CODES:
        return DATABASE_CODES[code]
    try:
        return FAILURES[FailureCode(code)].explanation
    except ValueError:
        return None


def outage_explanation(cause: str) -> Explanation | None:
    """What an open outage of the health check means and what to do: a release cause's is its code's."""
    if cause in OUTAGES:
        return OUTAGES[cause]
    return job_error_explanation(cause)


class JobFailure(Exception):
    """A failure with a stable code from FAILURES; `retry_after` is the provider's requested wait."""

    def __init__(self, code: FailureCode, message: str, retry_after: timedelta | None = None) -> None:
        self.code = FailureCode(code)  # ValueError for a code that is not in the table
        super().__init__(f"{self.code}: {message}")
        self.message = message
        self.retry_after = retry_after

    @property
    def rule(self) -> Rule:
        return FAILURES[self.code]


# --- Resend ---------------------------------------------------------------------------------------
# resend.com/docs/api-reference/errors classifies errors by `name`, and one status carries several
# names (a 400 validation_error is a field's error, or, from every endpoint but sending, "API key
# is invalid" for a key that does not exist or was deleted; older pages said 403 invalid_api_key).
# So the name decides first, then the status. Every name the reference lists, current or older,
# but throttling's (_is_throttling):
RESEND_NAMES: dict[str, FailureCode] = {
    "missing_api_key": FailureCode.RESEND_UNAUTHORIZED,  # 401
    "restricted_api_key": FailureCode.RESEND_UNAUTHORIZED,  # 401: a sending-only key
    "invalid_api_key": FailureCode.RESEND_UNAUTHORIZED,  # 403 on older pages
    "invalid_access": FailureCode.RESEND_UNAUTHORIZED,  # 422: the key's access level
    "invalid_scope": FailureCode.RESEND_UNAUTHORIZED,  # 422: the key's scope
    "daily_quota_exceeded": FailureCode.RESEND_QUOTA_EXCEEDED,  # 429
    "monthly_quota_exceeded": FailureCode.RESEND_QUOTA_EXCEEDED,  # 429
    "method_not_allowed": FailureCode.RESEND_MISCONFIGURED,  # 405: a GET here is always allowed
    "application_error": FailureCode.RESEND_UNAVAILABLE,  # 500
    "internal_server_error": FailureCode.RESEND_UNAVAILABLE,  # 500
}
# Every 4xx by status, documented for these endpoints or not. Resend documents 400, 401, 403, 404,
# 405, 409, 422 and 429; the others can come from a proxy in front, or from a future Resend.
RESEND_4XX: dict[int, FailureCode] = {
    400: FailureCode.RESEND_REJECTED,  # validation_error about a field, invalid_idempotency_key
    401: FailureCode.RESEND_UNAUTHORIZED,
    # invalid_api_key (older pages), the sending-only validation errors, and Cloudflare's
    # "error code: 1010" (not JSON) for a request without a User-Agent: all about the key or client.
    403: FailureCode.RESEND_UNAUTHORIZED,
    404: FailureCode.RESEND_NOT_FOUND,  # not_found for the e-mail (for the endpoint: misconfigured)
    405: FailureCode.RESEND_MISCONFIGURED,
    408: FailureCode.RESEND_TIMEOUT,  # undocumented: a proxy's timeout
    409: FailureCode.RESEND_UNAVAILABLE,  # idempotency conflicts (sending); on a GET, a state that passes
    410: FailureCode.RESEND_NOT_FOUND,  # undocumented: gone
    413: FailureCode.RESEND_REJECTED,  # undocumented: the request is too large (it has no body)
    414: FailureCode.RESEND_REJECTED,  # undocumented: the URL is too long (an absurd e-mail id)
    422: FailureCode.RESEND_REJECTED,  # invalid_parameter ("must be a valid UUID"), missing_required_field
    423: FailureCode.RESEND_UNAVAILABLE,  # undocumented: locked, for now
    425: FailureCode.RESEND_UNAVAILABLE,  # undocumented: too early
    431: FailureCode.RESEND_REJECTED,  # undocumented: headers too large
}
# Any other 4xx is RESEND_UNEXPECTED_ANSWER: retried, so a proxy's odd moment does not fail a
# fax at once, and failed after the attempts with the status in its message. A 429 that is not a
# quota is throttling, decided in one place of its own (_is_throttling).

_NAMES_THE_KEY = re.compile(r"\bapi[ _-]?key\b", re.IGNORECASE)
_NAMES_THE_ENDPOINT = re.compile(r"\b(endpoint|route)\b", re.IGNORECASE)


# Throttling, and only here: Resend's 429 `rate_limit_exceeded`, or a 429 without one of Resend's
# names (a proxy's). A 429 naming a quota is no throttling: it is in RESEND_NAMES.
def _is_throttling(status: int, name: str | None) -> bool:
    return name == "rate_limit_exceeded" or (status == 429 and name not in RESEND_NAMES)


def from_resend_error(status: int | None, name: str | None, message: str) -> FailureCode:
    """The code for an error answer of Resend's API (status None: it could not be reached)."""
    if status is None:
        return FailureCode.RESEND_NETWORK_ERROR
    if name == "validation_error" and _NAMES_THE_KEY.search(message):
        return FailureCode.RESEND_UNAUTHORIZED
    if _is_throttling(status, name):
        return FailureCode.RESEND_RATE_LIMITED
    if status == 404 and (name != "not_found" or _NAMES_THE_ENDPOINT.search(message)):
        return FailureCode.RESEND_MISCONFIGURED  # not Resend's answer about an e-mail: the URL is wrong
    if name in RESEND_NAMES:
        return RESEND_NAMES[name]
    if 300 <= status < 400:  # httpx does not follow redirects: http:// for https://, or another host
        return FailureCode.RESEND_MISCONFIGURED
    if status >= 500:
        return FailureCode.RESEND_UNAVAILABLE
    return RESEND_4XX.get(status, FailureCode.RESEND_UNEXPECTED_ANSWER)


# --- Supabase Storage -----------------------------------------------------------------------------
# supabase.com/docs/guides/storage/debugging/error-codes: the `code` of the current error system
# decides first; bodies of the older system carry only `error` and the status as a string.
STORAGE_CODES: dict[str, FailureCode] = {
    "InvalidJWT": FailureCode.STORAGE_UNAUTHORIZED,  # 401 (older bodies: 400 "Invalid JWT")
    "AccessDenied": FailureCode.STORAGE_UNAUTHORIZED,  # 403: the key is not the service role's
    "NoSuchBucket": FailureCode.STORAGE_BUCKET_NOT_FOUND,  # 404
    "InvalidBucketName": FailureCode.STORAGE_BUCKET_NOT_FOUND,  # 400
    "EntityTooLarge": FailureCode.STORAGE_TOO_LARGE,  # 413
    "InvalidKey": FailureCode.STORAGE_INVALID_KEY,  # 400
    "InternalError": FailureCode.STORAGE_UNAVAILABLE,  # 500
    "DatabaseTimeout": FailureCode.STORAGE_UNAVAILABLE,  # 544
    "DatabaseError": FailureCode.STORAGE_UNAVAILABLE,  # 500
    "DatabaseReadOnly": FailureCode.STORAGE_UNAVAILABLE,  # 503
    "SlowDown": FailureCode.STORAGE_UNAVAILABLE,  # 503
    "LockTimeout": FailureCode.STORAGE_UNAVAILABLE,  # 503
    "ResourceLocked": FailureCode.STORAGE_UNAVAILABLE,  # 423
    "TenantNotFound": FailureCode.STORAGE_UNAVAILABLE,  # 404: Storage's own provisioning, not ours
}


def from_storage_error(status: int, code: str | None, error: str | None) -> FailureCode:
    """The code for a Storage error, by its `code`, else by the status in its body (Storage answers
    most errors with HTTP 400 and the real status as a string) and its `error`."""
    if code in STORAGE_CODES:
        return STORAGE_CODES[code]
    if status in (401, 403):
        return FailureCode.STORAGE_UNAUTHORIZED
    if status == 404 and error and "bucket" in error.lower():
        return FailureCode.STORAGE_BUCKET_NOT_FOUND
    if status in (429, 544) or status >= 500:
        return FailureCode.STORAGE_UNAVAILABLE
    if status == 413:
        return FailureCode.STORAGE_TOO_LARGE
    if error == "InvalidKey" or (status == 400 and error and error.lower() == "invalid key"):
        return FailureCode.STORAGE_INVALID_KEY
    return FailureCode.STORAGE_REJECTED


# --- the database (PostgREST) ---------------------------------------------------------------------
# PostgREST's codes for a key it refuses (PGRST300-303: the JWT; docs.postgrest.org, errors), the
# SQLSTATE of a role that lacks a privilege (42501: 401 or 403, what a publishable key gets), and
# the HTTP status itself when the answer had no error body (supabase-py's default error).
_DATABASE_KEY_CODES = frozenset({"PGRST300", "PGRST301", "PGRST302", "PGRST303", "42501", "401", "403"})
# The API gateway in front answers without a code: {"message": "Invalid API key", "hint": ...}.
_GATEWAY_REFUSAL = re.compile(r"\bapi[ _-]?key\b|\bJW[ST]\b", re.IGNORECASE)


def from_database_error(error: DatabaseError) -> FailureCode:
    if error.code in _DATABASE_KEY_CODES:
        return FailureCode.DATABASE_UNAUTHORIZED
    if error.code is None and not error.unreachable and _GATEWAY_REFUSAL.search(error.message):
        return FailureCode.DATABASE_UNAUTHORIZED
    return FailureCode.DATABASE_ERROR


def database_failure(error: DatabaseError) -> JobFailure:
    """A database error as a job's failure; a refused key says which settings hold it."""
    code = from_database_error(error)
    rule = FAILURES[code]
    return JobFailure(code, f"{error} (check {rule.check})" if rule.check else str(error))
