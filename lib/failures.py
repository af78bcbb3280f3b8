"""How a job's failure is handled: THE table (tests/unit/test_failures.py holds the guides'
tables to it), and the translation of each service's errors into its stable codes.

retry   transient: fail_document_job(p_retryable => true); backoff, or the provider's retry-after
fail    permanent: fail_document_job(p_retryable => false); the job stops in `failed`
release not the job's fault: release_document_job; no attempt spent

A failure that is not the job's own (a key, a setting, a quota) is a release with a delay, never
`failed`: one key rotation must not park every fax. Its rule names what an operator checks
(`check`), and the health check raises an outage alert when such releases keep happening
(supabase/migrations/20261201002200_document_jobs_release_outages.sql holds the same names;
tests/database/test_limits_mirror.py compares them), with this module's operator's advice in both
languages (release_causes.advice and advice_ja, outage_advice: tests/database/test_advice_is_lib_advice.py
fails when a text here changes and no migration copies it). Only what belongs to the job itself (the e-mail is gone,
an attachment is too large, its content or its id is refused) fails it at once.

Every code (FAILURES, DATABASE_CODES, OUTAGES) is explained to two readers, the clerk and the
operator, in English and Japanese (Explanation); lib/explanations.py is what shows the texts, with
the screen's labels put in.
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
    # An original read for an admin's export (the export_faxes job) is missing or not as recorded.
    EXPORT_ORIGINAL_MISMATCH = "export_original_mismatch"
    TIME_BUDGET = "time_budget"
    INTERNAL_ERROR = "internal_error"


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """What a code means and what to do about it, in English and Japanese, said to two readers.

    clerk: what everyone who reads the screen does (a viewer; later a clerk): press one of the
    screen's buttons, tell the sender, call whom. Never an engineer's step: no setting, no
    redeploy, no Vault, no SQL, no logs (tests/unit/test_explanations.py).
    operator: the engineer's steps (Vercel's variables, redeploys, Vault, SQL, logs). The screen
    shows it to admins below the clerk's; the CLI prints it; the outage alerts carry it (the
    database's copy: release_causes.advice, outage_advice; tests/database/test_advice_is_lib_advice.py).

    A text names a label of the screen by its key in public/admin/i18n.js, in braces:
    "{state.failed}になった場合は{job.retry}を押してください" is shown as
    「失敗」になった場合は「再実行」を押してください, and "press {job.retry}" as press “Retry”.
    lib/explanations.py puts the screen's own label in, quoted, for the page, the CLI and the SQL
    copy alike: a button renamed on the screen is renamed in every advice that names it, and an
    action is named only by its button (the test of it: tests/unit/test_explanations.py).
    """

    meaning_en: str
    meaning_ja: str
    clerk_en: str
    clerk_ja: str
    operator_en: str
    operator_ja: str

    def meaning(self, language: str) -> str:
        return self.meaning_ja if language == "ja" else self.meaning_en

    def clerk(self, language: str) -> str:
        return self.clerk_ja if language == "ja" else self.clerk_en

    def operator(self, language: str) -> str:
        return self.operator_ja if language == "ja" else self.operator_en


@dataclass(frozen=True)
class Rule:
    action: Action
    explanation: Explanation
    # For release: how long the job waits (a missing permission is not fixed in seconds).
    delay: timedelta = field(default=timedelta(0), kw_only=True)
    # For a cause that is not the job's own: what the operator checks. The log line of every such
    # release names it, and the health check's outage alert for the code does too.
    check: str | None = field(default=None, kw_only=True)
    # False where the advice says a retry by hand cannot help (the same e-mail is gone, the same file
    # gives the same result): the screen offers no {job.retry} for a job that ended with the code
    # (lib/explanations.py writes it into the page's table), and the fax is closed by marking it done
    # instead (tests/unit/test_failures.py holds this to the advice's words).
    retry_helps: bool = field(default=True, kw_only=True)


# The server key's settings (the secret key, or on projects that still have it the legacy JWT).
SUPABASE_KEY_SETTINGS = "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"
# A key or a setting is not fixed within seconds; asking again every 10 minutes costs nothing.
_SETTING_DELAY = timedelta(minutes=10)

# A passing failure: the queue tries it again on its own (the screen's 再試行, "retried": the
# queue's, never a person's); a job that ended failed is retried by a person with {job.retry}.
_PASSING_CLERK_EN = (
    "Nothing to do: it is tried again on its own. If the job ends {state.failed}, press {job.retry}; if it "
    "fails again, call your system administrator."
)
_PASSING_CLERK_JA = (
    "対応は不要です。自動で再試行されます。{state.failed}になった場合は{job.retry}を押し、"
    "また失敗したらシステム管理者に連絡してください。"
)
_PASSING_EN = "Nothing to do: the job is tried again on its own."
_PASSING_JA = "対応は不要です。ジョブは自動で再試行されます。"
_ENDED_FAILED_EN = (
    " A job that ended {state.failed}: press {job.retry} once the cause is gone (many at once: {jobs.bulkRetry} "
    "on {nav.jobs}, filtered by this error code)."
)
_ENDED_FAILED_JA = (
    "{state.failed}になったジョブは、原因が解消してから{job.retry}を押してください（まとめてなら、{nav.jobs}で"
    "このエラーコードに絞り込んで{jobs.bulkRetry}）。"
)
_RESEND_OUTAGE_EN = " If many jobs show it, check Resend's status page (resend-status.com)."
_RESEND_OUTAGE_JA = "多くのジョブで起きている場合は、Resend の稼働状況ページ（resend-status.com）を確認してください。"
_SUPABASE_OUTAGE_EN = " If many jobs show it, check status.supabase.com."
_SUPABASE_OUTAGE_JA = "多くのジョブで起きている場合は status.supabase.com を確認してください。"
# Not the fax's fault, nothing a clerk can fix: the jobs wait (an outage alert when it lasts).
_SETTING_CLERK_EN = (
    "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your "
    "system administrator soon."
)
_SETTING_CLERK_JA = (
    "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。"
)
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
# Probably a bug of ours, or a change of the provider's: once more, then the developers.
_BUG_CLERK_EN = "Press {job.retry}. If it fails the same way, call your system administrator with the job's id."
_BUG_CLERK_JA = (
    "{job.retry}を押してください。同じように失敗する場合は、ジョブの ID を添えてシステム管理者に連絡してください。"
)
# A fax that cannot be prepared for viewing: nothing is lost, and a clerk reads it from the original.
_KEPT_CLERK_EN = (
    "The fax is stored unchanged, but it cannot be shown here: download the original and open it on the computer. "
    "Pressing {job.retry} gives the same result."
)
_KEPT_CLERK_JA = (
    "FAX はそのまま保存されていますが、画面には表示できません。原本をダウンロードしてパソコンで開いてください。"
    "{job.retry}を押しても結果は変わりません。"
)
_KEPT_OPERATOR_EN = (
    "Nothing is lost: the original is stored unchanged and downloads as it came; only its viewing copy and thumbnail "
    "are missing. {job.retry} gives the same result for the same file."
)
_KEPT_OPERATOR_JA = (
    "失われたものはありません。原本は変更されずに保存されており、届いたとおりにダウンロードできます。ないのは表示用の"
    "変換とサムネイルだけです。同じファイルでは{job.retry}を押しても結果は変わりません。"
)
# A stored original gone or changed: never the product's doing, and what the law asks to notice.
_ORIGINAL_CLERK_EN = (
    "The stored original of this fax is missing or changed. Do not rely on what the screen shows of it: call your "
    "system administrator today with the job's id."
)
_ORIGINAL_CLERK_JA = (
    "この FAX の保存済みの原本が見つからないか、変更されています。画面の表示をそのまま使わず、ジョブの ID を添えて"
    "今日中にシステム管理者に連絡してください。"
)
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
_BUG_EN = "Press {job.retry}. If it fails the same way again, report it to the developers with the job id."
_BUG_JA = "{job.retry}を押してください。同じように失敗する場合は、ジョブIDを添えて開発者に連絡してください。"
# Nothing to do, for a clerk or an operator: the job waits a little and goes on.
_WAITS_CLERK_EN = "Nothing to do: it goes on by itself in a moment."
_WAITS_CLERK_JA = "対応は不要です。少し待ってから自動で続きます。"
_OUTAGE_CLERK_EN = (
    "Faxes are not being fetched now; the waiting ones come in on their own once it is fixed. Call your system "
    "administrator soon, with the code and the time shown."
)
_OUTAGE_CLERK_JA = (
    "FAX の取り込みが止まっています。直れば、待っている FAX は自動で取り込まれます。表示されているコードと"
    "開始時刻を添えて、早めにシステム管理者に連絡してください。"
)

FAILURES: dict[FailureCode, Rule] = {
    FailureCode.RESEND_UNAVAILABLE: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="Resend answered 5xx, or 409, 423 or 425 (a conflicting or early request: a state that passes)",
            meaning_ja="Resend が一時的なエラーを返しました（5xx、または409・423・425）。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _RESEND_OUTAGE_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _RESEND_OUTAGE_JA + _ENDED_FAILED_JA,
        ),
    ),
    # Throttling, not an outage and not the job's fault: the workers share a limiter so that a 429
    # stays rare (another application of the team took the window). At least a second: Resend
    # counts in one-second windows.
    FailureCode.RESEND_RATE_LIMITED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="Resend answered 429 rate_limit_exceeded; its retry-after is honoured",
            meaning_ja="Resend の呼び出し回数の上限（1秒あたり）に達しました（429 rate_limit_exceeded）。",
            clerk_en=_WAITS_CLERK_EN,
            clerk_ja=_WAITS_CLERK_JA,
            operator_en="Nothing to do: the job waits as Resend asks and goes on. If it happens often, another "
            "application of the Resend team is using the same limit.",
            operator_ja="対応は不要です。Resend の指示どおり待ってから続行します。頻繁に起きる場合は、同じ Resend "
            "チームの別のアプリケーションが同じ上限を使っています。",
        ),
        delay=timedelta(seconds=1),
    ),
    FailureCode.RESEND_RATE_LIMIT_WAIT: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="the shared limiter's next Resend slot is further away than the time budget allows",
            meaning_ja="Resend の呼び出し枠の空きを待つ時間が、この実行の残り時間より長くなりました。",
            clerk_en=_WAITS_CLERK_EN,
            clerk_ja=_WAITS_CLERK_JA,
            operator_en="Nothing to do: the next run goes on with the job; no attempt was spent.",
            operator_ja="対応は不要です。次の実行がこのジョブを続けます（試行回数は消費していません）。",
        ),
    ),
    # Not the job's fault, and retrying within the hour cannot help: wait without spending attempts.
    FailureCode.RESEND_QUOTA_EXCEEDED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="Resend's daily or monthly quota is used up",
            meaning_ja="Resend の1日または1か月の利用上限に達しました。",
            clerk_en="Faxes wait until the e-mail service's plan allows more, and come in on their own then. "
            "Tell whoever manages the e-mail service's plan (Resend) soon.",
            clerk_ja="受信サービスの契約の上限に達したため、FAX の取り込みを待っています。上限が解除されれば自動で"
            "取り込まれます。受信サービス（Resend）の契約を管理している方に早めに連絡してください。",
            operator_en="Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the "
            "waiting jobs are tried again every hour.",
            operator_ja="Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。"
            "待機中のジョブは1時間ごとに再試行されます。",
        ),
        delay=timedelta(hours=1),
        check="the Resend team's plan (its daily and monthly quota)",
    ),
    FailureCode.RESEND_NETWORK_ERROR: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="Resend could not be reached, or the connection broke",
            meaning_ja="Resend に接続できなかったか、通信が途中で切れました。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _RESEND_OUTAGE_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _RESEND_OUTAGE_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.RESEND_TIMEOUT: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="Resend (or a proxy in front of it: 408) did not answer in time",
            meaning_ja="Resend（またはその手前の中継、408）が時間内に応答しませんでした。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _RESEND_OUTAGE_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _RESEND_OUTAGE_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.RESEND_NOT_FOUND: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Resend does not know the e-mail (404 not_found, 410)",
            meaning_ja="Resend にこのメールが見つかりません（404 not_found、410）。"
            "削除されたか、保存期間が過ぎています。",
            clerk_en="Pressing {job.retry} does not help: the e-mail service no longer has this fax. Ask the sender "
            "to send it again, then close this one with {handling.markDone} and a note (for example: asked the "
            "sender to send it again).",
            clerk_ja="{job.retry}を押しても解決しません。受信サービスにこの FAX が残っていないため、送信者に再送を"
            "依頼し、メモ（例: 送信元に再送を依頼済み）を付けて{handling.markDone}を押してください。",
            operator_en="{job.retry} does not help: the e-mail is gone from Resend. The e-mail's row keeps what its "
            "webhook said (sender, subject, time): ask the sender to send the fax again, and close this one with "
            "{handling.markDone} (many at once: {jobs.bulkDone} on {nav.jobs}, filtered by this error code).",
            operator_ja="{job.retry}を押しても解決しません。メールは Resend から消えています。メールの記録には Webhook "
            "の内容（送信者、件名、日時）が残っているので、送信者に再送を依頼し、この FAX は{handling.markDone}で"
            "閉じてください（まとめてなら、{nav.jobs}でこのエラーコードに絞り込んで{jobs.bulkDone}）。",
        ),
        retry_helps=False,
    ),
    FailureCode.RESEND_MALFORMED_RESPONSE: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Resend's answer did not have the documented shape (the message names the field)",
            meaning_ja="Resend の応答が仕様どおりの形ではありませんでした（メッセージに項目名があります）。",
            clerk_en="Press {job.retry} a little later. If it fails the same way, call your system administrator "
            "with the job's id.",
            clerk_ja="しばらくしてから{job.retry}を押してください。同じように失敗する場合は、ジョブの ID を添えて"
            "システム管理者に連絡してください。",
            operator_en="Press {job.retry} later; if it fails the same way, report it to the developers with the job "
            "id (Resend may have changed its API).",
            operator_ja="しばらくしてから{job.retry}を押してください。同じように失敗する場合は、ジョブIDを添えて開発者に"
            "連絡してください（Resend の API が変わった可能性があります）。",
        ),
    ),
    FailureCode.RESEND_UNAUTHORIZED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="RESEND_API_KEY is missing, deleted, invalid or lacks receiving permission"
            " (400 validation_error naming the API key, 401, 403)",
            meaning_ja="Resend が API キー（RESEND_API_KEY）を拒否しました。未設定・削除済み・誤り、または受信の権限が"
            "ない（送信専用の）キーです。",
            clerk_en=_SETTING_CLERK_EN,
            clerk_ja=_SETTING_CLERK_JA,
            operator_en="Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on "
            "Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own.",
            operator_ja="Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に"
            "設定して再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。",
        ),
        delay=_SETTING_DELAY,
        check="RESEND_API_KEY",
    ),
    FailureCode.RESEND_MISCONFIGURED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="RESEND_API_URL is not Resend's API: a redirect, 405, or a 404 for the endpoint itself",
            meaning_ja="RESEND_API_URL が Resend の API を指していません"
            "（リダイレクト、405、またはエンドポイント自体の404）。",
            clerk_en=_SETTING_CLERK_EN,
            clerk_ja=_SETTING_CLERK_JA,
            operator_en="Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the "
            "waiting jobs are tried again every 10 minutes.",
            operator_ja="Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。"
            "待機中のジョブは10分ごとに再試行されます。",
        ),
        delay=_SETTING_DELAY,
        check="RESEND_API_URL",
    ),
    FailureCode.RESEND_REJECTED: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Resend refused the request as invalid for this e-mail (400 about a field, 413, 414, 422, 431)",
            meaning_ja="Resend がこのメールへの要求を不正として拒否しました（項目についての400、413、414、422、431）。",
            clerk_en="Pressing {job.retry} does not help. Ask the sender to send the fax again, and tell your system "
            "administrator the job's id; then close this one with {handling.markDone} and a note.",
            clerk_ja="{job.retry}を押しても解決しません。送信者に再送を依頼し、ジョブの ID をシステム管理者に"
            "伝えてから、メモを付けて{handling.markDone}を押してください。",
            operator_en="{job.retry} does not help. Ask the sender to send the fax again, or fetch it from the Resend "
            "dashboard (Emails, Receiving).",
            operator_ja="{job.retry}を押しても解決しません。送信者に再送を依頼するか、Resend のダッシュボード"
            "（Emails → Receiving）から取得してください。",
        ),
        retry_helps=False,
    ),
    FailureCode.RESEND_UNEXPECTED_ANSWER: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="an answer Resend does not document for this endpoint (another 4xx, a 1xx or 2xx but 200)",
            meaning_ja="Resend が、このエンドポイントの仕様にない応答を返しました（その他の4xx、200以外の1xx・2xx）。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + " If it ends {state.failed}, report it to the developers with the job id.",
            operator_ja=_PASSING_JA + "{state.failed}になった場合は、ジョブIDを添えて開発者に連絡してください。",
        ),
    ),
    FailureCode.DOWNLOAD_EXPIRED: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="an attachment's download URL answered 403 even after listing afresh",
            meaning_ja="添付ファイルのダウンロードURLが、取得し直した後も403を返しました。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.DOWNLOAD_FAILED: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="an attachment download failed (network, timeout, 5xx, or fewer or more bytes than listed)",
            meaning_ja="添付ファイルのダウンロードに失敗しました（通信、タイムアウト、5xx、またはサイズの不一致）。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.ATTACHMENT_TOO_LARGE: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="an attachment is larger than ATTACHMENT_MAX_BYTES",
            meaning_ja="添付ファイルが上限（ATTACHMENT_MAX_BYTES）より大きいです。",
            clerk_en="The fax is larger than this system takes. Call your system administrator, who can still get "
            "it from the e-mail service; if it is urgent, ask the sender to send it in parts.",
            clerk_ja="FAX が大きすぎて取り込めません。システム管理者に連絡してください"
            "（受信サービスから取り出せます）。急ぐ場合は、送信者に分けて送るよう依頼してください。",
            operator_en="Fetch the fax from the Resend dashboard (Emails, Receiving), or raise ATTACHMENT_MAX_BYTES on "
            "Vercel, redeploy and press {job.retry}.",
            operator_ja="Resend のダッシュボード（Emails → Receiving）から取得するか、Vercel の ATTACHMENT_MAX_BYTES を"
            "上げて再デプロイし、{job.retry}を押してください。",
        ),
    ),
    FailureCode.STORAGE_UNAVAILABLE: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="Storage answered 5xx, 429 or 544, or could not be reached",
            meaning_ja="Supabase Storage が一時的なエラーを返したか（5xx、429、544）、接続できませんでした。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _SUPABASE_OUTAGE_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _SUPABASE_OUTAGE_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.STORAGE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="Storage refused the server key (401/403: InvalidJWT, AccessDenied)",
            meaning_ja="Supabase Storage がサーバーキーを拒否しました（401/403: InvalidJWT、AccessDenied）。",
            clerk_en=_SETTING_CLERK_EN,
            clerk_ja=_SETTING_CLERK_JA,
            operator_en=_SERVER_KEY_EN,
            operator_ja=_SERVER_KEY_JA,
        ),
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
    ),
    FailureCode.STORAGE_BUCKET_NOT_FOUND: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="Storage has no bucket of that name (404 Bucket not found, NoSuchBucket, InvalidBucketName)",
            meaning_ja="Supabase Storage に ATTACHMENTS_BUCKET の名前のバケットがありません。",
            clerk_en=_SETTING_CLERK_EN,
            clerk_ja=_SETTING_CLERK_JA,
            operator_en="Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the "
            "default) and redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes.",
            operator_ja="Vercel の ATTACHMENTS_BUCKET を直すか削除して"
            "（マイグレーションが既定の fax-attachments を作成します）"
            "再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。",
        ),
        delay=_SETTING_DELAY,
        check="ATTACHMENTS_BUCKET",
    ),
    FailureCode.STORAGE_TOO_LARGE: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Storage refused the object as too large (413)",
            meaning_ja="Supabase Storage がファイルを大きすぎるとして拒否しました（413）。",
            clerk_en="Call your system administrator to raise the storage's size limit; then press {job.retry}.",
            clerk_ja="保存先のサイズの上限を上げるよう、システム管理者に連絡してください。上がったら{job.retry}を"
            "押してください。",
            operator_en="Raise the file size limit of the bucket (and of the project) in Supabase's Storage settings, "
            "then press {job.retry}.",
            operator_ja="Supabase の Storage 設定でバケット（とプロジェクト）のファイルサイズ上限を上げてから、"
            "{job.retry}を押してください。",
        ),
    ),
    FailureCode.STORAGE_INVALID_KEY: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Storage refused the object key (InvalidKey)",
            meaning_ja="Supabase Storage が保存先のパス（InvalidKey）を拒否しました。",
            clerk_en=_BUG_CLERK_EN,
            clerk_ja=_BUG_CLERK_JA,
            operator_en=_BUG_EN,
            operator_ja=_BUG_JA,
        ),
    ),
    FailureCode.STORAGE_REJECTED: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="Storage refused the upload for another reason (4xx)",
            meaning_ja="Supabase Storage がその他の理由（4xx）で保存を拒否しました。",
            clerk_en=_BUG_CLERK_EN,
            clerk_ja=_BUG_CLERK_JA,
            operator_en=_BUG_EN,
            operator_ja=_BUG_JA,
        ),
    ),
    FailureCode.DATABASE_ERROR: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="the database (PostgREST) failed or could not be reached",
            meaning_ja="データベース（PostgREST）がエラーを返したか、接続できませんでした。",
            clerk_en=_PASSING_CLERK_EN,
            clerk_ja=_PASSING_CLERK_JA,
            operator_en=_PASSING_EN + _SUPABASE_OUTAGE_EN + _ENDED_FAILED_EN,
            operator_ja=_PASSING_JA + _SUPABASE_OUTAGE_JA + _ENDED_FAILED_JA,
        ),
    ),
    FailureCode.DATABASE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="the database (PostgREST) refused the server key (401/403: a JWT error, permission denied)",
            meaning_ja="データベース（PostgREST）がサーバーキーを拒否したか、権限が足りません（401/403）。",
            clerk_en=_SETTING_CLERK_EN,
            clerk_ja=_SETTING_CLERK_JA,
            operator_en=_SERVER_KEY_EN,
            operator_ja=_SERVER_KEY_JA,
        ),
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
    ),
    FailureCode.EMAIL_NOT_FOUND: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the job's e-mail row does not exist",
            meaning_ja="ジョブの対象のメールの記録がデータベースにありません。",
            clerk_en="Pressing {job.retry} does not help: the record of this fax was deleted. Call your system "
            "administrator with the job's id.",
            clerk_ja="{job.retry}を押しても解決しません。この FAX の記録が削除されています。ジョブの ID を添えて"
            "システム管理者に連絡してください。",
            operator_en="{job.retry} does not help: the e-mail's record was deleted. Nothing else is affected.",
            operator_ja="{job.retry}を押しても解決しません。メールの記録が削除されています。ほかへの影響はありません。",
        ),
        retry_helps=False,
    ),
    FailureCode.FAX_FILE_DAMAGED: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the stored fax could not be read for viewing: the file is damaged, cut short, or not what its "
            "type says",
            meaning_ja="ファイルが壊れているか途中で切れているため、表示用の変換ができませんでした。",
            clerk_en=_KEPT_CLERK_EN + " If the original does not open either, ask the sender to send the fax again.",
            clerk_ja=_KEPT_CLERK_JA + "原本も開けない場合は、送信元に再送を依頼してください。",
            operator_en=_KEPT_OPERATOR_EN,
            operator_ja=_KEPT_OPERATOR_JA,
        ),
        retry_helps=False,
    ),
    FailureCode.FAX_FILE_ENCRYPTED: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the stored fax is a PDF protected by a password, so it could not be read for viewing",
            meaning_ja="パスワードで保護されたPDFのため、表示用の変換ができませんでした。",
            clerk_en=_KEPT_CLERK_EN + " It opens with the password the sender gives.",
            clerk_ja=_KEPT_CLERK_JA + "送信元から聞いたパスワードで開けます。",
            operator_en=_KEPT_OPERATOR_EN,
            operator_ja=_KEPT_OPERATOR_JA,
        ),
        retry_helps=False,
    ),
    FailureCode.FAX_FILE_EMPTY: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the stored fax has no pages",
            meaning_ja="ページが1枚もないファイルのため、表示用の変換ができませんでした。",
            clerk_en=_KEPT_CLERK_EN + " If it is empty there too, ask the sender to send the fax again.",
            clerk_ja=_KEPT_CLERK_JA + "原本も空の場合は、送信元に再送を依頼してください。",
            operator_en=_KEPT_OPERATOR_EN,
            operator_ja=_KEPT_OPERATOR_JA,
        ),
        retry_helps=False,
    ),
    FailureCode.FAX_PAGE_TOO_LARGE: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="a page of the stored fax is larger than the pixel cap (lib/worker/fax_pages.py "
            "MAX_PAGE_PIXELS) or than PDF's largest page: a decompression bomb is not drawn",
            meaning_ja="ページの大きさ（画素数）が上限を超えているため、表示用の変換ができませんでした。",
            clerk_en=_KEPT_CLERK_EN,
            clerk_ja=_KEPT_CLERK_JA,
            operator_en=_KEPT_OPERATOR_EN,
            operator_ja=_KEPT_OPERATOR_JA,
        ),
        retry_helps=False,
    ),
    FailureCode.ORIGINAL_MISSING: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the stored original is not in Storage (404) although its row says it was stored",
            meaning_ja="保存済みのはずの原本が Supabase Storage にありません。",
            clerk_en=_ORIGINAL_CLERK_EN,
            clerk_ja=_ORIGINAL_CLERK_JA,
            operator_en=_ORIGINAL_EN,
            operator_ja=_ORIGINAL_JA,
        ),
    ),
    FailureCode.ORIGINAL_ALTERED: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the stored original's bytes are not those recorded (their SHA-256 differs from its row's)",
            meaning_ja="保存済みの原本の中身が、記録した内容（SHA-256）と一致しません。",
            clerk_en=_ORIGINAL_CLERK_EN,
            clerk_ja=_ORIGINAL_CLERK_JA,
            operator_en=_ORIGINAL_EN,
            operator_ja=_ORIGINAL_JA,
        ),
    ),
    FailureCode.EXPORT_ORIGINAL_MISMATCH: Rule(
        Action.FAIL,
        Explanation(
            meaning_en="the export stopped: an original it read from Storage is missing, or its bytes are not those "
            "recorded (size or SHA-256)",
            meaning_ja="エクスポートを中止しました。Storage から読んだ原本が見つからないか、記録した内容（サイズまたは"
            " SHA-256）と一致しません。",
            clerk_en="Do not hand out any part of this export. Call your system administrator today with the job's id.",
            clerk_ja="このエクスポートは、どの部分も渡さないでください。ジョブの ID を添えて今日中にシステム管理者に"
            "連絡してください。",
            operator_en="The job's error names the original (its fax's short id, its key). Run document-jobs-admin "
            "verify, which records the finding and opens the outage; put the original back at its key from the "
            "office's own copy, then press {job.retry}: the export goes on after its last stored part.",
            operator_ja="ジョブのエラーに原本（FAX の短い ID とキー）が示されています。document-jobs-admin verify を"
            "実行して記録し（障害として開きます）、事務所の控えから同じキーに原本を戻したうえで{job.retry}を押して"
            "ください。エクスポートは保存済みの最後の部分の続きから再開します。",
        ),
    ),
    FailureCode.TIME_BUDGET: Rule(
        Action.RELEASE,
        Explanation(
            meaning_en="the invocation's time ran out mid-job; the next one resumes (bounded: see "
            "TIME_BUDGET_FREE_RELEASES)",
            meaning_ja="実行時間の上限に達したため、ジョブを途中で中断しました。次の実行が続きから再開します。",
            clerk_en="Nothing to do: the next run goes on where this one stopped. If the job ends {state.failed}, "
            "press {job.retry}; if it fails again, call your system administrator.",
            clerk_ja="対応は不要です。次の実行が続きから取り込みます。{state.failed}になった場合は{job.retry}を押し、"
            "また失敗したらシステム管理者に連絡してください。",
            operator_en="Nothing to do. If it keeps happening, the attachments are large or slow to download "
            "({job.attempts} says how long each took); a job that ended {state.failed}: press {job.retry}.",
            operator_ja="対応は不要です。繰り返し起きる場合は、添付ファイルが大きいかダウンロードが遅いためです"
            "（{job.attempts}に所要時間があります）。{state.failed}になったジョブは{job.retry}を押してください。",
        ),
    ),
    FailureCode.INTERNAL_ERROR: Rule(
        Action.RETRY,
        Explanation(
            meaning_en="an unexpected error in the worker (a bug): see the logs",
            meaning_ja="ワーカーで予期しないエラー（不具合）が起きました。",
            clerk_en="Nothing to do: it is tried again on its own. If the job ends {state.failed}, call your system "
            "administrator with the job's id.",
            clerk_ja="対応は不要です。自動で再試行されます。{state.failed}になった場合は、ジョブの ID を添えて"
            "システム管理者に連絡してください。",
            operator_en="The job is tried again on its own. If it ends {state.failed}, report it to the developers "
            "with the job id (the worker's logs on Vercel name the error).",
            operator_ja="ジョブは自動で再試行されます。{state.failed}になった場合は、ジョブIDを添えて開発者に連絡して"
            "ください（Vercel のワーカーのログにエラーが記録されています）。",
        ),
    ),
}

# The codes whose advice says a retry by hand cannot help (Rule.retry_helps).
RETRY_CANNOT_HELP = frozenset(code.value for code, rule in FAILURES.items() if not rule.retry_helps)

# The two codes only the database writes as a job's last_error_code.
DATABASE_CODES: dict[str, Explanation] = {
    "cancelled": Explanation(
        meaning_en="an admin cancelled the job (the message is their reason)",
        meaning_ja="管理者がジョブを取り消しました（メッセージはその理由です）。",
        clerk_en="Nothing to do. {nav.audit} says who did it and why; if it was a mistake, press {job.retry}.",
        clerk_ja="対応は不要です。操作した人と理由は{nav.audit}で確認できます。誤りだった場合は{job.retry}を"
        "押してください。",
        operator_en="Nothing to do; if it was a mistake, press {job.retry}. {jobs.bulkRetry} leaves these jobs out "
        "unless its {jobs.filterCode} is cancelled.",
        operator_ja="対応は不要です。誤りだった場合は{job.retry}を押してください。{jobs.bulkRetry}は、"
        "{jobs.filterCode}を cancelled で絞り込んだ場合を除き、このジョブを含みません。",
    ),
    "lease_expired": Explanation(
        meaning_en="the worker running the job stopped answering (it ran past its time or crashed) and its lease "
        "ran out",
        meaning_ja="ジョブを実行中のワーカーが応答しなくなり（時間切れまたは異常終了）、実行権の期限が切れました。",
        clerk_en=_PASSING_CLERK_EN,
        clerk_ja=_PASSING_CLERK_JA,
        operator_en=_PASSING_EN
        + " If many jobs show it, check the worker's logs on Vercel (timeouts, crashes)."
        + _ENDED_FAILED_EN,
        operator_ja=_PASSING_JA
        + "多くのジョブで起きている場合は、Vercel のワーカーのログ（タイムアウト、異常終了）を確認してください。"
        + _ENDED_FAILED_JA,
    ),
}

# The health check's outages that are not a release cause (the release causes are FAILURES' codes
# with a `check`, and their explanation is the code's). The database holds the causes and a copy of
# the operator's advice (tests/database/test_advice_is_lib_advice.py holds it to these texts).
_WORKER_LOGS_EN = "the worker's logs on Vercel"
OUTAGES: dict[str, Explanation] = {
    "queue_stalled": Explanation(
        meaning_en="no worker is taking the waiting jobs: the oldest claimable job waited longer than the threshold",
        meaning_ja="待機中のジョブを処理するワーカーがいません。最も古い待機ジョブが基準時間を超えて待っています。",
        clerk_en=_OUTAGE_CLERK_EN,
        clerk_ja=_OUTAGE_CLERK_JA,
        operator_en="Check that the cron job document-jobs runs (select * from cron.job_run_details order by "
        "start_time desc limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker's "
        f"answers (select status_code, count(*) from net._http_response group by 1) and {_WORKER_LOGS_EN}.",
        operator_ja="cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time "
        "desc limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select "
        "status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。",
    ),
    "worker_unauthorized": Explanation(
        meaning_en="the worker refuses the database's calls (401)",
        meaning_ja="ワーカーがデータベースからの呼び出しを拒否しています（401）。",
        clerk_en=_OUTAGE_CLERK_EN,
        clerk_ja=_OUTAGE_CLERK_JA,
        operator_en="Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on "
        "Vercel (or that variable is unset: the worker's log then names it). Store the same value in both (README: "
        "Rotating INTERNAL_FUNCTION_SECRET).",
        operator_ja="Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う"
        "（または未設定で、その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください"
        "（README: Rotating INTERNAL_FUNCTION_SECRET）。",
    ),
    "worker_not_found": Explanation(
        meaning_en="the worker's URL answers 404",
        meaning_ja="ワーカーのURLが404を返しています。",
        clerk_en=_OUTAGE_CLERK_EN,
        clerk_ja=_OUTAGE_CLERK_JA,
        operator_en="Likely cause: the Vault secret document_jobs_url is wrong (it must be "
        "https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in "
        "Vault and the deployment on Vercel.",
        operator_ja="Vault のシークレット document_jobs_url が誤っている"
        "（https://YOUR-APP.vercel.app/api/internal/document-jobs でなければなりません）か、デプロイがなくなっている"
        "可能性が高いです。Vault のURLと Vercel のデプロイを確認してください。",
    ),
    "worker_failing": Explanation(
        meaning_en="the worker's calls fail (5xx, or no answer)",
        meaning_ja="ワーカーの呼び出しが失敗しています（5xx、または応答なし）。",
        clerk_en=_OUTAGE_CLERK_EN,
        clerk_ja=_OUTAGE_CLERK_JA,
        operator_en="Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot "
        "reach the database, or the database refuses its key, stopped_because database_unauthorized: check "
        "SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content "
        f"from net._http_response order by created desc limit 5) and {_WORKER_LOGS_EN}.",
        operator_ja="ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続"
        "できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。"
        "504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by "
        "created desc limit 5) と Vercel のワーカーのログを確認してください。",
    ),
    "webhooks_missing": Explanation(
        meaning_en="reconciliation recorded e-mails that Resend received and whose webhook never reached us: every "
        "new fax now waits for the next reconciliation run, and nothing else records them (if reconciliation stalls "
        "too, a fax is lost once Resend stops keeping it)",
        meaning_ja="Resend が受信したのに Webhook が届かなかったメールを、照合（reconciliation）が記録しました。"
        "新しいファクスは次の照合まで待ち、照合のほかに記録する仕組みはありません（照合も止まると、Resend "
        "の保存期間が過ぎたファクスは失われます）。",
        clerk_en="The notices that a fax arrived are not coming: faxes are picked up by a regular check instead, "
        "and show in the list later than usual. Call your system administrator today.",
        clerk_ja="FAX の到着の知らせが届いていません。FAX は定期的な確認で取り込まれますが、一覧に出るまで"
        "普段より時間がかかります。今日中にシステム管理者に連絡してください。",
        operator_en="Check the webhook in Resend's dashboard (Webhooks: its URL must be "
        "https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature "
        "means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and "
        "redeploy), and Vercel's Deployment Protection, which answers 401 before the function runs "
        "(docs/DEPLOY.md).",
        operator_ja="Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが "
        "https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature "
        "なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。"
        "また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。",
    ),
    # Reconciliation is the only net once webhooks fail: the three causes below say when it does not
    # hold (check_reconciliation in supabase/migrations/20261204100000_reconciliation_never_silent.sql).
    "reconciliation_stalled": Explanation(
        meaning_en="reconciliation, which records the e-mails whose webhook never came, has not listed Resend's "
        "received e-mails back to where its last run got: no run completed within three of its intervals, or a run "
        "has been under way for over an hour",
        meaning_ja="Webhook が届かなかったメールを記録する照合（reconciliation）が、Resend の受信メールを前回の到達点"
        "まで確認できていません（3回分の間隔のうちに完了した実行がないか、1時間を超えて実行中です）。",
        clerk_en="The regular check that picks up faxes whose arrival notice was lost has stopped. Faxes still come "
        "in as usual while the notices work. Call your system administrator today, with the time shown.",
        clerk_ja="到着の知らせが届かなかった FAX を拾う定期的な確認が止まっています。知らせが届いている間は、FAX は"
        "普段どおり届きます。表示されている時刻を添えて、今日中にシステム管理者に連絡してください。",
        operator_en="Run document-jobs-admin health: its reconciliation lines name the last run's finding or error. "
        "A refused key or a wrong URL is an outage of its own (resend_unauthorized, resend_misconfigured); an outage "
        "of Resend's shows on resend-status.com. Meanwhile a fax whose webhook fails is recorded by nothing: if "
        "webhooks_missing is open too, run document-jobs-admin reconcile --since with the time of the last "
        "complete run.",
        operator_ja="document-jobs-admin health を実行してください。照合の行に、前回の実行が止まった理由またはエラーが"
        "出ます。キーの拒否やURLの誤りはそれぞれ別の障害（resend_unauthorized、resend_misconfigured）として出ます。"
        "Resend 側の障害は resend-status.com で確認できます。その間、Webhook が届かなかったファクスを記録する"
        "ものはありません。webhooks_missing も出ている場合は、最後に完了した実行の時刻を指定して "
        "document-jobs-admin reconcile --since を実行してください。",
    ),
    "retention_window_closing": Explanation(
        meaning_en="reconciliation has not listed Resend's received e-mails for more than half (then three "
        "quarters) of the time Resend keeps them (the setting retention): an e-mail of that gap whose webhook never "
        "came is lost once Resend deletes it",
        meaning_ja="照合（reconciliation）が、Resend の受信メールを保存期間（設定 retention）の半分（その後は4分の3）"
        "を超えて確認できていません。この間に受信し Webhook が届かなかったメールは、Resend が削除すると失われます。",
        clerk_en="Faxes whose arrival notice was lost may soon be lost for good. Call your system administrator "
        "now, with the date shown.",
        clerk_ja="到着の知らせが届かなかった FAX が、まもなく取り出せなくなるおそれがあります。表示されている日時を"
        "添えて、すぐにシステム管理者に連絡してください。",
        operator_en="Before the date the alert names, run the command it names (document-jobs-admin reconcile "
        "--since ...; health prints it too), then find why the scheduled reconciliation does not keep up "
        "(reconciliation_stalled).",
        operator_ja="通知に書かれた日時より前に、通知に書かれたコマンド（document-jobs-admin reconcile --since ...。"
        "health にも表示されます）を実行してください。そのうえで、定期的な照合が追いつかない原因を確認してください"
        "（reconciliation_stalled）。",
    ),
    "reconciliation_unreadable": Explanation(
        meaning_en="Resend listed e-mails that reconciliation cannot read (no id, or a created_at that is not a "
        "time or is more than a day ahead): they are not recorded, and they may be faxes",
        meaning_ja="照合（reconciliation）が読み取れないメールを Resend が一覧に返しました（IDがない、または "
        "created_at が日時でないか1日以上先の日時）。これらは記録されていません。ファクスの可能性があります。",
        clerk_en="A received e-mail could not be read and is not in the list: it may be a fax. Call your system "
        "administrator, with the time and sender shown.",
        clerk_ja="受信したメールを読み取れず、一覧に載っていないものがあります。FAX の可能性があります。表示されて"
        "いる日時と送信者を添えて、システム管理者に連絡してください。",
        operator_en="Look each one up in the Resend dashboard (Emails, Receiving) by what health and the overview "
        "show of it (id, time, sender, subject). If it is a fax, save its attachments from there or ask the sender "
        "to send it again. Report the listing to the developers: Resend's list did not have its documented shape.",
        operator_ja="health と概要画面に表示される情報（ID、日時、送信者、件名）で、Resend のダッシュボード（Emails → "
        "Receiving）から1件ずつ探してください。ファクスであれば、そこから添付ファイルを保存するか、送信者に再送を"
        "依頼してください。Resend の一覧が仕様どおりの形ではなかったことを開発者に連絡してください。",
    ),
    # The record of received faxes refuses every change in the database (record_guards in
    # supabase/migrations/20261207110100_records_that_cannot_change.sql), but the tables' owner can
    # still switch a guard off: this cause says so within a minute.
    "records_unguarded": Explanation(
        meaning_en="a guard that keeps the record of received faxes from being changed or deleted is not in place: "
        "a trigger of a record table is missing, disabled or altered, or a role was granted UPDATE, DELETE or "
        "TRUNCATE on one (only the tables' owner can do either)",
        meaning_ja="受信した FAX の記録を変更・削除から守る仕組みが外れています。記録のテーブルのトリガーが"
        "ないか、無効にされたか、書き換えられたか、またはロールに UPDATE・DELETE・TRUNCATE の権限が与えられて"
        "います（どちらもテーブルの所有者にしかできません）。",
        clerk_en="Faxes still come in as usual. The protection of the stored faxes against changes is off: call your "
        "system administrator today.",
        clerk_ja="FAX は通常どおり届きます。保存した FAX を変更から守る仕組みが外れているため、今日中にシステム"
        "管理者に連絡してください。",
        operator_en="Run document-jobs-admin health: it names each guard that is not in place. Only the tables' owner "
        "(postgres: a migration, the SQL editor) can do this: find out who did and why (the database's logs in the "
        "Supabase dashboard). As postgres, select document_jobs_internal.guard_record_tables(); puts every guard "
        "back (it re-creates, re-enables and revokes). What changed while a guard was off cannot be told from the "
        "database: check the originals against their SHA-256 and record what happened under the office's rules.",
        operator_ja="document-jobs-admin health を実行してください。外れている仕組みが1つずつ表示されます。これが"
        "できるのはテーブルの所有者（postgres: マイグレーション、SQL Editor）だけなので、誰がなぜ行ったかを確認して"
        "ください（Supabase のダッシュボードのデータベースのログ）。postgres で select "
        "document_jobs_internal.guard_record_tables(); を実行すると、すべての仕組みが元に戻ります（トリガーを作り"
        "直して有効にし、与えられた権限を外します）。外れていた間に変更されたものはデータベースからは分かりません。原本を記録"
        "した SHA-256 と照合し、事務処理規程に従って経緯を記録してください。",
    ),
    # A stored original read back (document-jobs-admin verify, the weekly verify_originals job) that is
    # not what was recorded (check_original_mismatches in 20261207170000_verify_originals.sql).
    "original_mismatch": Explanation(
        meaning_en="a stored original, read back from Storage, is not what was recorded when it was stored (it is "
        "missing, or its size or SHA-256 differs): the kept record of a received fax has changed",
        meaning_ja="Storage から読み直した保存済みの原本が、保存したときの記録と一致しません"
        "（原本がない、またはサイズか SHA-256 が違います）。受信した FAX の保存記録が変わっています。",
        clerk_en="A stored fax may have been changed or removed. Delete nothing, and call your system administrator "
        "today, with the time shown.",
        clerk_ja="保存した FAX が変更または削除されたおそれがあります。何も削除せず、表示されている日時を添えて、"
        "今日中にシステム管理者に連絡してください。",
        operator_en="Run document-jobs-admin verify: it prints each fax (by its short id) whose stored original is "
        "missing or differs. For each, look at the object in Storage's dashboard (its size and last modified time) "
        "and in the project's logs (who wrote or deleted it, and when), then put the original back at the same key "
        "from the office's own copy (the export) and run document-jobs-admin verify again: the outage closes once "
        "every original reads as recorded. Record what happened under the office's rule.",
        operator_ja="document-jobs-admin verify を実行してください。保存した原本がない、または一致しない FAX が短い ID "
        "とともに表示されます。それぞれについて、Storage のダッシュボードでそのオブジェクト（サイズと最終更新日時）を、"
        "プロジェクトのログで誰がいつ書き込みまたは削除したかを確認し、事務所の控え（エクスポート）から同じキーに原本を"
        "戻したうえで、もう一度 document-jobs-admin verify を実行してください。すべての原本が記録どおりに読めると、"
        "この障害は閉じます。経緯は事務処理規程に従って記録してください。",
    ),
}


# What a job finds and records without failing: the database alerts each once, with the operator's
# advice in both languages (its copy: finding_advice and finding_advice_ja, held to these texts by
# tests/database/test_advice_is_lib_advice.py).
FINDINGS: dict[str, Explanation] = {
    # lib/worker/fetch_email.py: an object already at an original's key whose SHA-256 is not the
    # download's. Neither is replaced: the new bytes go beside it, and both are recorded as versions.
    "original_differs": Explanation(
        meaning_en="an original was already in Storage at its key with other bytes than those Resend served for "
        "the same file: neither replaced the other, and both are kept and recorded, each a version of the "
        "attachment with its own SHA-256",
        meaning_ja="Storage の同じ保存先に、Resend から取得した内容と異なる原本がすでにありました。どちらも上書き"
        "せず、それぞれの SHA-256 とともに添付ファイルの版として両方を保存・記録しています。",
        clerk_en="One file of this fax is kept in two versions with different contents. Do not delete or replace "
        "either, and do not decide yourself which one is right: call your system administrator today with the "
        "fax's id.",
        clerk_ja="この FAX のファイルの1つが、内容の異なる2つの版で保存されています。どちらも削除・差し替えせず、"
        "どちらが正しいかを自分で判断しないでください。FAX の ID を添えて、今日中にシステム管理者に連絡して"
        "ください。",
        operator_en="Nothing was overwritten. Download each version (document-jobs-admin download with the job id "
        "writes them all; the alert names their SHA-256), compare them with the fax in the Resend dashboard (Emails, "
        "Receiving) while Resend still keeps it, and record which one the office relies on, as its rule against "
        "improper correction and deletion asks. A worker that stopped between an upload and its record leaves such "
        "an object; if versions keep appearing, report it to the developers with the job id.",
        operator_ja="上書きされたものはありません。各版をダウンロードし（ジョブIDを指定した document-jobs-admin "
        "download ですべて書き出せます。各版の SHA-256 は通知に記載されています）、Resend に残っている間に "
        "Resend のダッシュボード（Emails → Receiving）の FAX と照合して、事務所がどちらに依拠するかを、"
        "訂正削除の防止に関する事務処理規程に従って記録してください。アップロードから記録までの間に止まった"
        "ワーカーがこのような版を残すことがあります。繰り返し起きる場合は、ジョブIDを添えて開発者に連絡して"
        "ください。",
    ),
}


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
