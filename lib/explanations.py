"""Every code the admin screen can show, with its meaning and what to do, in English and Japanese:
a job's error codes and the health check's outages (lib/failures.py, which the CLI's `health`
reads too), the admin API's refusals, the reasons a bulk action or an action did not change a
job, and Supabase Auth's refusals of a sign-in (by GoTrue's error `code`).

The page cannot import Python, and Vercel runs no build step here, so `make explanations`
(python -m lib.explanations) writes them into public/admin/explanations.js; a unit test
(tests/unit/test_explanations.py) fails when that file differs from what this module writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from lib.failures import DATABASE_CODES, FAILURES, OUTAGES, Explanation, FailureCode

SCRIPT = Path(__file__).resolve().parent.parent / "public" / "admin" / "explanations.js"

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


_TRY_AGAIN_EN = "Try again in a moment."
_TRY_AGAIN_JA = "少し待ってからもう一度お試しください。"
_SIGN_IN_AGAIN_EN = "Sign in again."
_SIGN_IN_AGAIN_JA = "もう一度ログインしてください。"
_REPORT_EN = "Reload the page; if it happens again, report it to the developers."
_REPORT_JA = "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"

# The admin API's refusals (lib/screen, lib/http_shell) and the reasons the database gives for a
# job an action did not change (document_jobs_internal's retry and cancel, bulk actions).
REFUSALS: dict[str, Explanation] = {
    "missing_token": Explanation(
        "the request carried no access token",
        "要求にアクセストークンがありませんでした。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "invalid_token": Explanation(
        "the access token is not valid for this project",
        "アクセストークンがこのプロジェクトで有効ではありません。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "token_expired": Explanation(
        "the access token expired", "アクセストークンの有効期限が切れました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "session_ended": Explanation(
        "the session has ended (signed out elsewhere, or the access was removed)",
        "セッションが終了しました（別の場所でログアウトしたか、アクセス権が削除されました）。",
        "Sign in again; if that is refused, ask an admin for access.",
        "もう一度ログインしてください。拒否される場合は、管理者にアクセス権を依頼してください。",
    ),
    "no_role": Explanation(
        "this account has no role on the admin screen",
        "このアカウントには管理画面の役割がありません。",
        "Ask an admin to add it (document-jobs-admin operators add).",
        "管理者に追加を依頼してください（document-jobs-admin operators add）。",
    ),
    "not_admin": Explanation(
        "only an admin may do this; this account is a viewer",
        "この操作は管理者だけができます。このアカウントは閲覧者です。",
        "Ask an admin to do it, or to make this account an admin.",
        "管理者に操作を依頼するか、このアカウントを管理者にするよう依頼してください。",
    ),
    "auth_unavailable": Explanation(
        "Supabase Auth could not be reached, or answered unexpectedly",
        "Supabase Auth に接続できないか、予期しない応答でした。",
        _TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        _TRY_AGAIN_JA + " 続く場合は status.supabase.com を確認してください。",
    ),
    "bad_request": Explanation(
        "the request was not valid (the server's message says which part)",
        "要求が正しくありませんでした（サーバーのメッセージに該当箇所があります）。",
        "Correct the input (a filter, a reason, a date) and try again.",
        "入力（絞り込み条件、理由、日時）を直して、もう一度お試しください。",
    ),
    "bad_text": Explanation(
        "the input holds a character no text may hold (U+0000, or a lone surrogate)",
        "入力に使えない文字（U+0000 または単独のサロゲート）が含まれています。",
        "Remove the character (often from pasted text) and try again.",
        "その文字（貼り付けた文字列によく含まれます）を取り除いて、もう一度お試しください。",
    ),
    "bad_cursor": Explanation(
        "the page position in the address is not one this list gave",
        "アドレスのページ位置が、この一覧が出したものではありません。",
        "Open the list from its first page.",
        "一覧を最初のページから開いてください。",
    ),
    "malformed_json": Explanation(
        "the request's body is not a valid JSON object",
        "要求の本文が正しい JSON オブジェクトではありません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "body_too_large": Explanation(
        "the request's body is too large",
        "要求の本文が大きすぎます。",
        "Shorten the reason and try again.",
        "理由を短くして、もう一度お試しください。",
    ),
    "invalid_content_length": Explanation(
        "the request's Content-Length is not valid",
        "要求の Content-Length が正しくありません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "length_required": Explanation(
        "the request did not say its body's length", "要求が本文の長さを示していません。", _REPORT_EN, _REPORT_JA
    ),
    "method_not_allowed": Explanation(
        "this address does not take that kind of request",
        "このアドレスはその種類の要求を受け付けません。",
        _REPORT_EN,
        _REPORT_JA,
    ),
    "not_found": Explanation(
        "it does not exist (any more)",
        "見つかりません（削除された可能性があります）。",
        "Go back to the list and refresh it.",
        "一覧に戻って更新してください。",
    ),
    "forbidden": Explanation(
        "the database refused this for the server's key",
        "データベースがサーバーのキーに対してこの操作を拒否しました。",
        "Check SUPABASE_SECRET_KEY on Vercel (a secret key of this project, not the publishable one).",
        "Vercel の SUPABASE_SECRET_KEY（公開用ではなく、このプロジェクトのシークレットキー）を確認してください。",
    ),
    "database_unavailable": Explanation(
        "the database did not answer as expected",
        "データベースが想定どおりに応答しませんでした。",
        _TRY_AGAIN_EN + " If it persists, check status.supabase.com and the function's logs on Vercel.",
        _TRY_AGAIN_JA + " 続く場合は status.supabase.com と Vercel の関数のログを確認してください。",
    ),
    "storage_unavailable": Explanation(
        "Supabase Storage could not make the download link",
        "Supabase Storage がダウンロードリンクを作成できませんでした。",
        _TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        _TRY_AGAIN_JA + " 続く場合は status.supabase.com を確認してください。",
    ),
    "misconfigured": Explanation(
        "the admin screen is not configured on the server",
        "サーバーで管理画面が設定されていません。",
        "An operator checks the settings on Vercel (SUPABASE_URL, the keys) and the function's logs.",
        "運用担当者が Vercel の設定（SUPABASE_URL、キー）と関数のログを確認してください。",
    ),
    "internal_error": Explanation(
        "the server failed unexpectedly", "サーバーで予期しないエラーが起きました。", _REPORT_EN, _REPORT_JA
    ),
    "not_failed": Explanation(
        "the job is not failed (any more): only a failed job can be retried",
        "このジョブは（もう）失敗状態ではありません。再試行できるのは失敗したジョブだけです。",
        "Refresh to see its state now.",
        "更新して現在の状態を確認してください。",
    ),
    "not_live": Explanation(
        "the job is not queued or running (any more): only those can be cancelled",
        "このジョブは（もう）待機中でも実行中でもありません。キャンセルできるのはそれらだけです。",
        "Refresh to see its state now.",
        "更新して現在の状態を確認してください。",
    ),
    "another_live_job": Explanation(
        "another job for the same e-mail is queued or running",
        "同じメールの別のジョブが待機中か実行中です。",
        "Let that job finish, or cancel it first.",
        "そのジョブの完了を待つか、先にキャンセルしてください。",
    ),
    "another_job_of_the_same_email": Explanation(
        "a newer job of the same e-mail was retried instead",
        "代わりに、同じメールのより新しいジョブが再試行されました。",
        "Nothing to do.",
        "対応は不要です。",
    ),
    "job_deleted": Explanation(
        "the job no longer exists", "このジョブはもう存在しません。", "Nothing to do.", "対応は不要です。"
    ),
}

# Supabase Auth's (GoTrue's) refusals, by the error `code` of its answer (supabase.com/docs/guides/
# auth/debugging/error-codes): those a password sign-in, a refresh or a sign-out can meet.
AUTH_REFUSALS: dict[str, Explanation] = {
    "invalid_credentials": Explanation(
        "the e-mail address or the password is wrong",
        "メールアドレスまたはパスワードが違います。",
        "Check both and try again; an admin can set a new password (document-jobs-admin operators).",
        "両方を確認して、もう一度お試しください。"
        "管理者は新しいパスワードを設定できます（document-jobs-admin operators）。",
    ),
    "email_not_confirmed": Explanation(
        "this e-mail address is not confirmed yet",
        "このメールアドレスはまだ確認されていません。",
        "Confirm it with the link Supabase sent, or ask an admin to add the account again.",
        "Supabase から届いたリンクで確認するか、管理者にアカウントの再追加を依頼してください。",
    ),
    "user_banned": Explanation(
        "this account is blocked",
        "このアカウントは停止されています。",
        "Ask an admin.",
        "管理者に問い合わせてください。",
    ),
    "user_not_found": Explanation(
        "this account does not exist (any more)",
        "このアカウントは存在しません（削除された可能性があります）。",
        "Ask an admin for access.",
        "管理者にアクセス権を依頼してください。",
    ),
    "over_request_rate_limit": Explanation(
        "too many attempts from here",
        "試行が多すぎます。",
        "Wait a few minutes and try again.",
        "数分待ってから、もう一度お試しください。",
    ),
    "validation_failed": Explanation(
        "the e-mail address or the password is missing or not valid",
        "メールアドレスまたはパスワードが空か、正しい形式ではありません。",
        "Enter an e-mail address and a password.",
        "メールアドレスとパスワードを入力してください。",
    ),
    "email_address_invalid": Explanation(
        "the e-mail address is not valid",
        "メールアドレスが正しくありません。",
        "Check the e-mail address.",
        "メールアドレスを確認してください。",
    ),
    "session_not_found": Explanation(
        "the session has ended", "セッションが終了しました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "session_expired": Explanation(
        "the session expired", "セッションの有効期限が切れました。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "refresh_token_not_found": Explanation(
        "the session could not be renewed", "セッションを更新できませんでした。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "refresh_token_already_used": Explanation(
        "the session was renewed elsewhere and ended here",
        "セッションが別の場所で更新され、ここでは終了しました。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "bad_jwt": Explanation(
        "the access token is not valid", "アクセストークンが正しくありません。", _SIGN_IN_AGAIN_EN, _SIGN_IN_AGAIN_JA
    ),
    "no_authorization": Explanation(
        "the request carried no access token",
        "要求にアクセストークンがありませんでした。",
        _SIGN_IN_AGAIN_EN,
        _SIGN_IN_AGAIN_JA,
    ),
    "request_timeout": Explanation(
        "Supabase Auth took too long to answer",
        "Supabase Auth の応答に時間がかかりすぎました。",
        _TRY_AGAIN_EN,
        _TRY_AGAIN_JA,
    ),
    "unexpected_failure": Explanation(
        "Supabase Auth failed unexpectedly",
        "Supabase Auth で予期しないエラーが起きました。",
        _TRY_AGAIN_EN + " If it persists, check status.supabase.com.",
        _TRY_AGAIN_JA + " 続く場合は status.supabase.com を確認してください。",
    ),
    "email_provider_disabled": Explanation(
        "sign-in with e-mail and password is turned off for this project",
        "このプロジェクトではメールとパスワードでのログインが無効です。",
        "An operator turns on the Email provider in Supabase (Authentication, Sign In / Providers).",
        "運用担当者が Supabase の Authentication → Sign In / Providers で Email を有効にしてください。",
    ),
}


def job_codes() -> dict[str, Explanation]:
    """Every code a job or an attempt can carry as its error."""
    return {**{code.value: rule.explanation for code, rule in FAILURES.items()}, **DATABASE_CODES}


def outage_codes() -> dict[str, Explanation]:
    """Every cause of the health check: its own, and the release causes (FAILURES with a check)."""
    return {**OUTAGES, **{code.value: FAILURES[code].explanation for code in FailureCode if FAILURES[code].check}}


def _said(explanation: Explanation) -> dict[str, dict[str, str]]:
    return {
        "en": {"meaning": explanation.meaning_en, "advice": explanation.advice_en},
        "ja": {"meaning": explanation.meaning_ja, "advice": explanation.advice_ja},
    }


def table() -> dict[str, dict[str, dict[str, Any]]]:
    """The page's table: group (job, outage, refusal, auth), then code."""
    return {
        "job": {code: {"source": source(code), **_said(said)} for code, said in sorted(job_codes().items())},
        "outage": {code: _said(said) for code, said in sorted(outage_codes().items())},
        "refusal": {code: _said(said) for code, said in sorted(REFUSALS.items())},
        "auth": {code: _said(said) for code, said in sorted(AUTH_REFUSALS.items())},
    }


def script() -> str:
    """public/admin/explanations.js as `make explanations` writes it."""
    body = json.dumps(table(), ensure_ascii=False, indent=2)
    return (
        "// @ts-check\n"
        "// Written by `make explanations` from lib/failures.py and lib/explanations.py: do not edit here.\n"
        "// Every code the screen shows, what it means and what to do, in English and Japanese.\n\n"
        "/** @typedef {{ meaning: string, advice: string }} Said */\n"
        "/** @typedef {{ en: Said, ja: Said, source?: string }} Explained */\n"
        '/** @type {Record<"job" | "outage" | "refusal" | "auth", Record<string, Explained>>} */\n'
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
