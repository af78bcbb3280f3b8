"""Every code the admin screen can show, with its meaning and what to do, in English and Japanese:
a job's error codes, the health check's outages and what a job finds and alerts once without
failing (lib/failures.py), the admin API's refusals, the reasons a bulk action or an action did
not change a job, and Supabase Auth's refusals of a sign-in (by GoTrue's error `code`). What to
do is said twice: the clerk's advice, which the screen shows to everyone, and the operator's,
which it shows to admins, the CLI prints and the outage alerts carry.

A text names a label of the screen by its key in public/admin/i18n.js ("{job.retry}"); this
module puts the screen's own label in, quoted as the screen's language quotes it (「再実行」,
“Retry”), so that advice and button cannot drift apart. Everything that shows a text reads it
here, already resolved: the page's copy, the CLI (`health`), and the tests that hold the
database's copy of the operator's advice to lib's.

The page cannot import Python, and Vercel runs no build step here, so `make explanations`
(python -m lib.explanations) writes them into public/admin/explanations.js; a unit test
(tests/unit/test_explanations.py) fails when that file differs from what this module writes.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from lib.failures import DATABASE_CODES, FAILURES, FINDINGS, OUTAGES, RETRY_CANNOT_HELP, Explanation, FailureCode

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "public" / "admin" / "explanations.js"
I18N = ROOT / "public" / "admin" / "i18n.js"

# Who wrote a job error's message, for its label on the screen ("Message from Resend:"): it holds
# the provider's own words, which stay as they were (English), or an admin's reason.
Source = Literal["resend", "storage", "database", "download", "worker", "operator"]


def source(code: str) -> Source:
    if code == "cancelled":
        return "operator"
    for prefix, named in (("resend_", "resend"), ("storage_", "storage"), ("database_", "database"),
                          ("download_", "download")):  # fmt: skip
        if code.startswith(prefix):
            return named  # type: ignore[return-value]
    return "worker"


# --- the screen's labels ----------------------------------------------------------------------

# i18n.js holds one message a line: `"nav.jobs": "Jobs",` or `title: "Fax inbox admin",`, in one
# block per language (`  en: {`).
_MESSAGE = re.compile(r'^\s+(?:"([\w.]+)"|(\w+)):\s*("(?:[^"\\]|\\.)*"),?\s*$')
_LANGUAGE_BLOCK = re.compile(r"^  (\w+): \{$")
# A label named in a text: its key in braces. No other brace may stand in a text.
_REFERENCE = re.compile(r"\{([^{}]*)\}")
# How each language quotes a label of the screen in running text (the guides do the same).
_QUOTES = {"en": ("“", "”"), "ja": ("「", "」")}
Labels = Mapping[str, Mapping[str, str]]


def screen_labels() -> dict[str, dict[str, str]]:
    """Each language's texts of the screen (key: text), as public/admin/i18n.js's MESSAGES holds them."""
    texts: dict[str, dict[str, str]] = {}
    language = None
    source_text = I18N.read_text(encoding="utf-8")
    body = source_text[source_text.index("const MESSAGES = {") : source_text.index("\n};\n")]
    for line in body.splitlines():
        block = _LANGUAGE_BLOCK.match(line)
        if block:
            language = block.group(1)
            texts[language] = {}
            continue
        message = _MESSAGE.match(line)
        if message and language:
            texts[language][message.group(1) or message.group(2)] = json.loads(message.group(3))
    return texts


def references(text: str) -> list[str]:
    """The keys of the screen's labels a text names."""
    return _REFERENCE.findall(text)


def resolve(text: str, language: str, labels: Labels) -> str:
    """A text with each label it names put in, quoted, as the screen shows it in `language`."""

    def label(match: re.Match[str]) -> str:
        key = match.group(1)
        shown = labels[language].get(key)
        if shown is None or _REFERENCE.search(shown):
            raise ValueError(f"{{{key}}} is no label of the screen in {language} (public/admin/i18n.js): {text!r}")
        opening, closing = _QUOTES[language]
        return f"{opening}{shown}{closing}"

    return _REFERENCE.sub(label, text)


def resolved(explanation: Explanation, labels: Labels | None = None) -> Explanation:
    """An explanation as it is shown: every label it names put in."""
    labels = screen_labels() if labels is None else labels
    return Explanation(
        meaning_en=resolve(explanation.meaning_en, "en", labels),
        meaning_ja=resolve(explanation.meaning_ja, "ja", labels),
        clerk_en=resolve(explanation.clerk_en, "en", labels),
        clerk_ja=resolve(explanation.clerk_ja, "ja", labels),
        operator_en=resolve(explanation.operator_en, "en", labels),
        operator_ja=resolve(explanation.operator_ja, "ja", labels),
    )


# --- the admin API's refusals, and Auth's -------------------------------------------------------


def _everyone(meaning_en: str, meaning_ja: str, advice_en: str, advice_ja: str) -> Explanation:
    """A refusal whose advice is the same for a clerk and an operator (sign in again, try again)."""
    return Explanation(
        meaning_en=meaning_en,
        meaning_ja=meaning_ja,
        clerk_en=advice_en,
        clerk_ja=advice_ja,
        operator_en=advice_en,
        operator_ja=advice_ja,
    )


_TRY_AGAIN_EN = "Try again in a moment."
_TRY_AGAIN_JA = "少し待ってからもう一度お試しください。"
_PERSISTS_CLERK_EN = " If it persists, call your system administrator."
_PERSISTS_CLERK_JA = "続く場合はシステム管理者に連絡してください。"
_SIGN_IN_AGAIN_EN = "Sign in again."
_SIGN_IN_AGAIN_JA = "もう一度ログインしてください。"
_REPORT_CLERK_EN = "Reload the page; if it happens again, call your system administrator."
_REPORT_CLERK_JA = "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。"
_REPORT_EN = "Reload the page; if it happens again, report it to the developers."
_REPORT_JA = "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"
_CALL_EN = "Call your system administrator."
_CALL_JA = "システム管理者に連絡してください。"


def _server_fault(meaning_en: str, meaning_ja: str, operator_en: str, operator_ja: str) -> Explanation:
    """A page's request the server could not answer: reload (a clerk calls), or what to fix."""
    return Explanation(
        meaning_en=meaning_en,
        meaning_ja=meaning_ja,
        clerk_en=_REPORT_CLERK_EN,
        clerk_ja=_REPORT_CLERK_JA,
        operator_en=operator_en,
        operator_ja=operator_ja,
    )


# The admin API's refusals (lib/screen, lib/http_shell) and the reasons the database gives for a
# job an action did not change (document_jobs_internal's retry and cancel, bulk actions).
REFUSALS: dict[str, Explanation] = {
    "missing_token": _everyone(
        "the request carried no access token",
        "要求にアクセストークンがありませんでした。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "invalid_token": _everyone(
        "the access token is not valid for this project",
        "アクセストークンがこのプロジェクトで有効ではありません。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "token_expired": _everyone(
        "the access token expired", "アクセストークンの有効期限が切れました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "session_ended": _everyone(
        "the session has ended (signed out elsewhere, or the access was removed)",
        "セッションが終了しました（別の場所でログアウトしたか、アクセス権が削除されました）。",
        "Sign in again; if that is refused, ask an admin for access.",
        "もう一度ログインしてください。拒否される場合は、管理者にアクセス権を依頼してください。",
    ),
    "no_role": Explanation(
        meaning_en="this account has no role on the admin screen",
        meaning_ja="このアカウントには管理画面の役割がありません。",
        clerk_en="Ask an admin to add it.",
        clerk_ja="管理者に追加を依頼してください。",
        operator_en="Add it with document-jobs-admin operators add.",
        operator_ja="document-jobs-admin operators add で追加してください。",
    ),
    "not_admin": _everyone(
        "only an admin may do this; this account is a viewer or a clerk",
        "この操作は管理者だけができます。このアカウントは閲覧者または事務担当者です。",
        "Ask an admin to do it, or to make this account an admin.",
        "管理者に操作を依頼するか、このアカウントを管理者にするよう依頼してください。",
    ),
    "read_only": Explanation(
        meaning_en="this account may only read: marking who is dealing with a fax and entering its index are for a "
        "clerk or an admin",
        meaning_ja="このアカウントは閲覧のみです。FAX の対応状況の記録と帳簿の項目の入力は、事務担当者か管理者が"
        "行います。",
        clerk_en="Ask a clerk or an admin to do it, or ask an admin to give this account the clerk role.",
        clerk_ja="事務担当者か管理者に依頼するか、このアカウントを事務担当者にするよう管理者に依頼してください。",
        operator_en="Give it the clerk role with document-jobs-admin operators add EMAIL --role clerk.",
        operator_ja="document-jobs-admin operators add EMAIL --role clerk で事務担当者にしてください。",
    ),
    "handling_changed": _everyone(
        "someone marked this fax since it was shown: the screen now shows how it stands",
        "表示した後に、ほかの人がこの FAX の対応状況を変更しました。現在の状況を表示しています。",
        "Check who has it now; mark it again only if you still need to.",
        "現在の担当者を確認し、必要な場合だけもう一度記録してください。",
    ),
    "already_done": _everyone(
        "someone marked this fax done after the faxes were counted",
        "数えた後に、ほかの人がこの FAX を対応済みにしました。",
        "Nothing to do.",
        "対応は不要です。",
    ),
    "unchanged": _everyone(
        "the fax already stood so: nothing was changed",
        "FAX はすでにその状況でした。何も変更していません。",
        "Nothing to do.",
        "対応は不要です。",
    ),
    "account_exists": Explanation(
        meaning_en="this e-mail address already has an account: it cannot be invited again",
        meaning_ja="このメールアドレスにはすでにアカウントがあります。もう一度招待することはできません。",
        clerk_en="To let them in again, send them {accounts.reset}.",
        clerk_ja="入れるようにするには{accounts.reset}を送ってください。",
        operator_en="To let them in again, send them {accounts.reset}; to change their role, use document-jobs-admin "
        "operators add EMAIL --role ROLE.",
        operator_ja="入れるようにするには{accounts.reset}を送ってください。役割を変えるには document-jobs-admin "
        "operators add EMAIL --role ROLE を使います。",
    ),
    "no_account": _everyone(
        "this e-mail address has no account",
        "このメールアドレスのアカウントはありません。",
        "Check the address, or invite them with {accounts.invite}.",
        "アドレスを確認するか、{accounts.invite}で招待してください。",
    ),
    "email_rate_limited": Explanation(
        meaning_en="Supabase Auth has sent as many e-mails as it may for now",
        meaning_ja="Supabase Auth は、いまはこれ以上メールを送れません（送信回数の上限）。",
        clerk_en="Wait a minute and try again.",
        clerk_ja="1分ほど待ってから、もう一度お試しください。",
        operator_en="Wait a minute and try again; if it persists, the project needs its own SMTP server "
        "(docs/DEPLOY.md: Auth's built-in sender allows only a few e-mails an hour).",
        operator_ja="1分ほど待って、もう一度お試しください。続く場合は、プロジェクトに独自の SMTP サーバーを設定して"
        "ください（docs/DEPLOY.md: Auth の組み込み送信は1時間に数通までです）。",
    ),
    "auth_refused": _everyone(
        "Supabase Auth refused the request (its message says why)",
        "Supabase Auth が要求を断りました（理由は Auth のメッセージにあります）。",
        "Check the e-mail address and try again.",
        "メールアドレスを確認して、もう一度お試しください。",
    ),
    "reason_required": _everyone(
        "a value entered before is being changed: a correction needs its reason",
        "入力済みの値を変更しています。訂正には理由が必要です。",
        "Write why it is corrected in {index.reasonLabel}, then press {index.save} again.",
        "{index.reasonLabel}に訂正の理由を書いてから、もう一度{index.save}を押してください。",
    ),
    "retention_not_over": _everyone(
        "this fax must still be kept: its keep-until date has not passed (the law's period), so nothing may delete it",
        "この FAX はまだ保存しなければなりません。保存期限（法律の保存期間）を過ぎていないため、削除できません。",
        "Nothing to do: keep it. It may be deleted once the keep-until date on its page has passed.",
        "対応は不要です。保存してください。FAX の画面の保存期限を過ぎた後なら削除できます。",
    ),
    "jobs_live": _everyone(
        "a job of this fax is waiting or running: it may still store a file, so the fax is not deleted now",
        "この FAX のジョブが待機中か実行中です。まだファイルを保存する可能性があるため、いまは削除しません。",
        "Wait until its jobs have ended, then delete it again.",
        "ジョブが終わるのを待ってから、もう一度削除してください。",
    ),
    "index_changed": _everyone(
        "someone changed this fax's index since this page was opened",
        "このページを開いた後に、別の人がこのFAXの帳簿の項目を変更しました。",
        "Reload the page, check the values now entered, and correct them again if needed.",
        "ページを再読み込みして現在の値を確認し、必要ならもう一度訂正してください。",
    ),
    "auth_unavailable": Explanation(
        meaning_en="Supabase Auth could not be reached, or answered unexpectedly",
        meaning_ja="Supabase Auth に接続できないか、予期しない応答でした。",
        clerk_en=_TRY_AGAIN_EN + _PERSISTS_CLERK_EN,
        clerk_ja=_TRY_AGAIN_JA + _PERSISTS_CLERK_JA,
        operator_en=_TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        operator_ja=_TRY_AGAIN_JA + "続く場合は status.supabase.com を確認してください。",
    ),
    "bad_request": _everyone(
        "the request was not valid (the server's message says which part)",
        "要求が正しくありませんでした（サーバーのメッセージに該当箇所があります）。",
        "Correct the input (a filter, a reason, a date) and try again.",
        "入力（絞り込み条件、理由、日時）を直して、もう一度お試しください。",
    ),
    "bad_text": _everyone(
        "the input holds a character no text may hold (U+0000, or a lone surrogate)",
        "入力に使えない文字（U+0000 または単独のサロゲート）が含まれています。",
        "Remove the character (often from pasted text) and try again.",
        "その文字（貼り付けた文字列によく含まれます）を取り除いて、もう一度お試しください。",
    ),
    "bad_cursor": _everyone(
        "the page position in the address is not one this list gave",
        "アドレスのページ位置が、この一覧が出したものではありません。",
        "Open the list from its first page.",
        "一覧を最初のページから開いてください。",
    ),
    "malformed_json": _server_fault(
        "the request's body is not a valid JSON object",
        "要求の本文が正しい JSON オブジェクトではありません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "body_too_large": _everyone(
        "the request's body is too large",
        "要求の本文が大きすぎます。",
        "Shorten the reason and try again.",
        "理由を短くして、もう一度お試しください。",
    ),
    "invalid_content_length": _server_fault(
        "the request's Content-Length is not valid",
        "要求の Content-Length が正しくありません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "length_required": _server_fault(
        "the request did not say its body's length", "要求が本文の長さを示していません。", _REPORT_EN, _REPORT_JA
    ),
    "method_not_allowed": _server_fault(
        "this address does not take that kind of request",
        "このアドレスはその種類の要求を受け付けません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "not_found": _everyone(
        "it does not exist (any more)",
        "見つかりません（削除された可能性があります）。",
        "Go back to the list and refresh it.",
        "一覧に戻って更新してください。",
    ),
    "forbidden": Explanation(
        meaning_en="the database refused this for the server's key",
        meaning_ja="データベースがサーバーのキーに対してこの操作を拒否しました。",
        clerk_en=_CALL_EN,
        clerk_ja=_CALL_JA,
        operator_en="Check SUPABASE_SECRET_KEY on Vercel (a secret key of this project, not the publishable one).",
        operator_ja="Vercel の SUPABASE_SECRET_KEY（公開用ではなく、このプロジェクトのシークレットキー）を"
        "確認してください。",
    ),
    "database_unavailable": Explanation(
        meaning_en="the database did not answer as expected",
        meaning_ja="データベースが想定どおりに応答しませんでした。",
        clerk_en=_TRY_AGAIN_EN + _PERSISTS_CLERK_EN,
        clerk_ja=_TRY_AGAIN_JA + _PERSISTS_CLERK_JA,
        operator_en=_TRY_AGAIN_EN + " If it persists, check status.supabase.com and the function's logs on Vercel.",
        operator_ja=_TRY_AGAIN_JA + "続く場合は status.supabase.com と Vercel の関数のログを確認してください。",
    ),
    "storage_unavailable": Explanation(
        meaning_en="Supabase Storage could not make the download link",
        meaning_ja="Supabase Storage がダウンロードリンクを作成できませんでした。",
        clerk_en=_TRY_AGAIN_EN + _PERSISTS_CLERK_EN,
        clerk_ja=_TRY_AGAIN_JA + _PERSISTS_CLERK_JA,
        operator_en=_TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        operator_ja=_TRY_AGAIN_JA + "続く場合は status.supabase.com を確認してください。",
    ),
    "misconfigured": Explanation(
        meaning_en="the admin screen is not configured on the server",
        meaning_ja="サーバーで管理画面が設定されていません。",
        clerk_en=_CALL_EN,
        clerk_ja=_CALL_JA,
        operator_en="Check the settings on Vercel (SUPABASE_URL, the keys) and the function's logs.",
        operator_ja="Vercel の設定（SUPABASE_URL、キー）と関数のログを確認してください。",
    ),
    "internal_error": _server_fault(
        "the server failed unexpectedly",
        "サーバーで予期しないエラーが起きました。",
        _REPORT_EN + " The function's logs on Vercel name the error.",
        _REPORT_JA + " Vercel の関数のログにエラーが記録されています。",
    ),
    "not_failed": _everyone(
        "the job is not failed (any more): only a failed job can be retried",
        "このジョブは（もう）失敗状態ではありません。再実行できるのは失敗したジョブだけです。",
        "Refresh to see its state now.",
        "更新して現在の状態を確認してください。",
    ),
    "not_live": _everyone(
        "the job is not queued or running (any more): only those can be cancelled",
        "このジョブは（もう）待機中でも実行中でもありません。取り消せるのはそれらだけです。",
        "Refresh to see its state now.",
        "更新して現在の状態を確認してください。",
    ),
    "another_live_job": _everyone(
        "another job for the same e-mail is queued or running",
        "同じメールの別のジョブが待機中か実行中です。",
        "Let that job finish, or first press {job.cancel} on its page.",
        "そのジョブの完了を待つか、先にそのジョブの画面で{job.cancel}を押してください。",
    ),
    "another_job_of_the_same_email": _everyone(
        "a newer job of the same e-mail was retried instead",
        "代わりに、同じメールのより新しいジョブを再実行しました。",
        "Nothing to do.",
        "対応は不要です。",
    ),
    "job_deleted": _everyone(
        "the job no longer exists", "このジョブはもう存在しません。", "Nothing to do.", "対応は不要です。"
    ),
}

# Supabase Auth's (GoTrue's) refusals, by the error `code` of its answer (supabase.com/docs/guides/
# auth/debugging/error-codes): those a password sign-in, a refresh or a sign-out can meet.
AUTH_REFUSALS: dict[str, Explanation] = {
    "invalid_credentials": Explanation(
        meaning_en="the e-mail address or the password is wrong",
        meaning_ja="メールアドレスまたはパスワードが違います。",
        clerk_en="Check both and try again; if you forgot the password, press {signIn.forgot} and set a new one "
        "with the link that is e-mailed to you.",
        clerk_ja="両方を確認して、もう一度お試しください。パスワードを忘れた場合は、{signIn.forgot}を押し、"
        "メールで届くリンクから新しいパスワードを設定してください。",
        operator_en="Check both and try again; {signIn.forgot} e-mails a link to set a new one (an admin can send it "
        "too: document-jobs-admin operators reset-password).",
        operator_ja="両方を確認して、もう一度お試しください。{signIn.forgot}から新しいパスワードを設定するリンクが"
        "メールで届きます（管理者も送れます: document-jobs-admin operators reset-password）。",
    ),
    "email_not_confirmed": _everyone(
        "this e-mail address is not confirmed yet",
        "このメールアドレスはまだ確認されていません。",
        "Confirm it with the link Supabase sent, or ask an admin to add the account again.",
        "Supabase から届いたリンクで確認するか、管理者にアカウントの再追加を依頼してください。",
    ),
    "user_banned": _everyone(
        "this account is blocked",
        "このアカウントは停止されています。",
        "Ask an admin.",
        "管理者に問い合わせてください。",
    ),
    "user_not_found": _everyone(
        "this account does not exist (any more)",
        "このアカウントは存在しません（削除された可能性があります）。",
        "Ask an admin for access.",
        "管理者にアクセス権を依頼してください。",
    ),
    "over_request_rate_limit": _everyone(
        "too many attempts from here",
        "試行が多すぎます。",
        "Wait a few minutes and try again.",
        "数分待ってから、もう一度お試しください。",
    ),
    "validation_failed": _everyone(
        "the e-mail address or the password is missing or not valid",
        "メールアドレスまたはパスワードが空か、正しい形式ではありません。",
        "Enter an e-mail address and a password.",
        "メールアドレスとパスワードを入力してください。",
    ),
    "email_address_invalid": _everyone(
        "the e-mail address is not valid",
        "メールアドレスが正しくありません。",
        "Check the e-mail address.",
        "メールアドレスを確認してください。",
    ),
    "session_not_found": _everyone(
        "the session has ended", "セッションが終了しました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "session_expired": _everyone(
        "the session expired", "セッションの有効期限が切れました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "refresh_token_not_found": _everyone(
        "the session could not be renewed", "セッションを更新できませんでした。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "refresh_token_already_used": _everyone(
        "the session was renewed elsewhere and ended here",
        "セッションが別の場所で更新され、ここでは終了しました。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "bad_jwt": _everyone(
        "the access token is not valid", "アクセストークンが正しくありません。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "no_authorization": _everyone(
        "the request carried no access token",
        "要求にアクセストークンがありませんでした。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "request_timeout": _everyone(
        "Supabase Auth took too long to answer",
        "Supabase Auth の応答に時間がかかりすぎました。",
        _TRY_AGAIN_EN,
        _TRY_AGAIN_JA,
    ),
    "unexpected_failure": Explanation(
        meaning_en="Supabase Auth failed unexpectedly",
        meaning_ja="Supabase Auth で予期しないエラーが起きました。",
        clerk_en=_TRY_AGAIN_EN + _PERSISTS_CLERK_EN,
        clerk_ja=_TRY_AGAIN_JA + _PERSISTS_CLERK_JA,
        operator_en=_TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        operator_ja=_TRY_AGAIN_JA + "続く場合は status.supabase.com を確認してください。",
    ),
    "otp_expired": _everyone(
        "the e-mailed link is not valid any more (used already, or more than a day old)",
        "メールのリンクは使えなくなっています（使用済みか、1日以上前のものです）。",
        "Ask for a new e-mail with {signIn.forgot}, and use the newest link.",
        "{signIn.forgot}からもう一度メールを送り、いちばん新しいリンクを使ってください。",
    ),
    "over_email_send_rate_limit": Explanation(
        meaning_en="Supabase Auth has sent as many e-mails as it may for now",
        meaning_ja="Supabase Auth は、いまはこれ以上メールを送れません（送信回数の上限）。",
        clerk_en="Wait a minute, check your inbox (and its spam folder), then try again.",
        clerk_ja="1分ほど待ち、受信トレイ（迷惑メールのフォルダも）を確認してから、もう一度お試しください。",
        operator_en="Wait a minute and try again; if it persists, the project needs its own SMTP server "
        "(docs/DEPLOY.md: Auth's built-in sender allows only a few e-mails an hour).",
        operator_ja="1分ほど待って、もう一度お試しください。続く場合は、プロジェクトに独自の SMTP サーバーを設定して"
        "ください（docs/DEPLOY.md: Auth の組み込み送信は1時間に数通までです）。",
    ),
    "weak_password": _everyone(
        "the new password is too short or too weak for this project",
        "新しいパスワードが短すぎるか、このプロジェクトの条件を満たしていません。",
        "Choose a longer password (at least the length Supabase Auth's message gives).",
        "もっと長いパスワードにしてください（Supabase Auth のメッセージにある文字数以上）。",
    ),
    "same_password": _everyone(
        "the new password is the one the account already has",
        "新しいパスワードが、いまのパスワードと同じです。",
        "Choose a different password.",
        "別のパスワードにしてください。",
    ),
    "email_provider_disabled": Explanation(
        meaning_en="sign-in with e-mail and password is turned off for this project",
        meaning_ja="このプロジェクトではメールとパスワードでのログインが無効です。",
        clerk_en=_CALL_EN,
        clerk_ja=_CALL_JA,
        operator_en="Turn on the Email provider in Supabase (Authentication, Sign In / Providers).",
        operator_ja="Supabase の Authentication → Sign In / Providers で Email を有効にしてください。",
    ),
}


# --- what shows them --------------------------------------------------------------------------


def job_codes(labels: Labels | None = None) -> dict[str, Explanation]:
    """Every code a job or an attempt can carry as its error, as shown."""
    labels = screen_labels() if labels is None else labels
    written = {**{code.value: rule.explanation for code, rule in FAILURES.items()}, **DATABASE_CODES}
    return {code: resolved(said, labels) for code, said in written.items()}


def outage_codes(labels: Labels | None = None) -> dict[str, Explanation]:
    """Every cause of the health check, as shown: its own, and the release causes (FAILURES with a check)."""
    labels = screen_labels() if labels is None else labels
    written = {**OUTAGES, **{code.value: FAILURES[code].explanation for code in FailureCode if FAILURES[code].check}}
    return {cause: resolved(said, labels) for cause, said in written.items()}


def finding_codes(labels: Labels | None = None) -> dict[str, Explanation]:
    """What a job records and alerts once without failing (lib/failures.py FINDINGS), as shown."""
    labels = screen_labels() if labels is None else labels
    return {code: resolved(said, labels) for code, said in FINDINGS.items()}


def refusal_codes(labels: Labels | None = None) -> dict[str, Explanation]:
    """The admin API's refusals, as shown."""
    labels = screen_labels() if labels is None else labels
    return {code: resolved(said, labels) for code, said in REFUSALS.items()}


def auth_codes(labels: Labels | None = None) -> dict[str, Explanation]:
    """Auth's refusals of a sign-in, as shown."""
    labels = screen_labels() if labels is None else labels
    return {code: resolved(said, labels) for code, said in AUTH_REFUSALS.items()}


def job_error_explanation(code: str) -> Explanation | None:
    """What a job's last_error_code (or an attempt's error_code) means and what to do, as shown."""
    return job_codes().get(code)


def outage_explanation(cause: str) -> Explanation | None:
    """What an open outage of the health check means and what to do, as shown (a release cause's is its code's)."""
    return outage_codes().get(cause)


def _said(explanation: Explanation) -> dict[str, dict[str, str]]:
    """Both languages' texts for the page; the operator's only where it says more than the clerk's."""
    said: dict[str, dict[str, str]] = {}
    for language in ("en", "ja"):
        clerk, operator = explanation.clerk(language), explanation.operator(language)
        said[language] = {"meaning": explanation.meaning(language), "clerk": clerk}
        if operator != clerk:
            said[language]["operator"] = operator
    return said


def table() -> dict[str, dict[str, dict[str, Any]]]:
    """The page's table: group (job, outage, finding, refusal, auth), then code."""
    labels = screen_labels()
    return {
        "job": {
            code: {"source": source(code), **({"retry": False} if code in RETRY_CANNOT_HELP else {}), **_said(said)}
            for code, said in sorted(job_codes(labels).items())
        },
        "outage": {code: _said(said) for code, said in sorted(outage_codes(labels).items())},
        "finding": {code: _said(said) for code, said in sorted(finding_codes(labels).items())},
        "refusal": {code: _said(said) for code, said in sorted(refusal_codes(labels).items())},
        "auth": {code: _said(said) for code, said in sorted(auth_codes(labels).items())},
    }


def script() -> str:
    """public/admin/explanations.js as `make explanations` writes it."""
    body = json.dumps(table(), ensure_ascii=False, indent=2)
    return (
        "// @ts-check\n"
        "// Written by `make explanations` from lib/failures.py and lib/explanations.py: do not edit here.\n"
        "// Every code the screen shows, what it means and what to do, in English and Japanese: the\n"
        "// clerk's advice for everyone, and the operator's (when it says more) for admins.\n\n"
        "/** @typedef {{ meaning: string, clerk: string, operator?: string }} Said */\n"
        "/** @typedef {{ en: Said, ja: Said, source?: string, retry?: false }} Explained */\n"
        "// retry: false where the advice says a retry cannot help: the screen offers no retry for the code.\n"
        '/** @type {Record<"job" | "outage" | "finding" | "refusal" | "auth", Record<string, Explained>>} */\n'
        f"export const EXPLANATIONS = {body};\n"
    )


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        if SCRIPT.read_text(encoding="utf-8") != script():
            print(f"{SCRIPT.name} is stale: run make explanations", file=sys.stderr)
            return 1
        return 0
    SCRIPT.write_text(script(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
