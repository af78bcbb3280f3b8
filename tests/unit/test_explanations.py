"""The one table of what codes mean and what to do (lib/failures.py, lib/explanations.py): every code
the database, the worker, the admin API and Supabase Auth can put on the screen has its meaning,
the clerk's advice and the operator's in English and in Japanese; advice names the screen's
actions only by the screen's own labels; a clerk's advice holds no engineer's step; and the page's
copy (public/admin/explanations.js) is what the table writes, not a text of its own."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from lib import explanations
from lib.admin import display
from lib.admin.cli import parser
from lib.explanations import (
    AUTH_REFUSALS,
    REFUSALS,
    auth_codes,
    finding_codes,
    job_codes,
    outage_codes,
    references,
    refusal_codes,
    resolve,
    resolved,
    screen_labels,
)
from lib.failures import DATABASE_CODES, FAILURES, FINDINGS, OUTAGES, Explanation, FailureCode

ROOT = Path(__file__).parents[2]
SCHEMA = (ROOT / "supabase" / "schema.sql").read_text(encoding="utf-8")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
TEXTS = ("meaning", "clerk", "operator")


def _complete(code: str, said: Explanation | None) -> list[str]:
    """What is missing or in the wrong language."""
    if said is None:
        return [f"{code}: no explanation"]
    problems = []
    for text in TEXTS:
        english, japanese = getattr(said, f"{text}_en"), getattr(said, f"{text}_ja")
        if not english.strip() or JAPANESE.search(english):
            problems.append(f"{code}: {text}_en is empty or not English")
        if not JAPANESE.search(japanese):
            problems.append(f"{code}: {text}_ja is not Japanese")
    return problems


def written() -> dict[str, Explanation]:
    """Every explanation as its module writes it (labels named by key), by group and code."""
    return {
        **{f"job.{code.value}": rule.explanation for code, rule in FAILURES.items()},
        **{f"job.{code}": said for code, said in DATABASE_CODES.items()},
        **{f"outage.{cause}": said for cause, said in OUTAGES.items()},
        **{f"finding.{code}": said for code, said in FINDINGS.items()},
        **{f"refusal.{code}": said for code, said in REFUSALS.items()},
        **{f"auth.{code}": said for code, said in AUTH_REFUSALS.items()},
    }


def _function_body(name: str) -> str:
    match = re.search(rf"CREATE FUNCTION {re.escape(name)}\(.*?\n\$\$;", SCHEMA, re.S)
    assert match, name
    return match.group(0)


def test_the_page_has_what_the_table_says() -> None:
    # A text changed in lib/ and not written out (make explanations) would drift from the CLI's.
    assert explanations.SCRIPT.read_text(encoding="utf-8") == explanations.script(), "run make explanations"


def test_every_error_code_a_job_can_carry_is_explained_in_both_languages() -> None:
    written_by_sql = set(re.findall(r"last_error_code\s*=\s*'([a-z_]+)'", SCHEMA))
    assert {"cancelled", "lease_expired"} <= written_by_sql, "the pattern still finds the database's codes"
    codes = {code.value for code in FailureCode} | written_by_sql
    table = job_codes()
    assert [p for code in sorted(codes) for p in _complete(code, table.get(code))] == []


def test_every_outage_cause_is_explained_and_the_database_keeps_only_causes() -> None:
    # The health check's own causes, as it names them to set_outage; the release causes are the
    # failure table's codes with a `check` (tests/database/test_limits_mirror.py holds the
    # database's list of them to it).
    causes = set(re.findall(r"set_outage\(\s*'([a-z_]+)'", SCHEMA))
    assert {"queue_stalled", "webhooks_missing"} <= causes, "the pattern still finds the causes"
    causes |= {code.value for code, rule in FAILURES.items() if rule.check}
    table = outage_codes()
    assert [p for cause in sorted(causes) for p in _complete(cause, table.get(cause))] == []


def test_every_finding_the_database_alerts_is_explained_in_both_languages() -> None:
    # What a job finds and the database alerts once (finding_advice names each), and nothing else.
    findings = set(re.findall(r"finding_advice(?:_ja)?\('([a-z_]+)'\)", SCHEMA))
    assert "original_differs" in findings, "the pattern still finds them"
    assert findings == set(FINDINGS)
    table = finding_codes()
    assert [p for code in sorted(findings) for p in _complete(code, table.get(code))] == []


# The functions that say why a job was not changed: a retry, a cancel, a batch of a bulk action.
REASON_FUNCTIONS = (
    "public.admin_retry_document_job",
    "public.admin_cancel_document_job",
    "document_jobs_internal.bulk_retry_batch",
    "document_jobs_internal.bulk_cancel_batch",
    "public.mark_fax_handling",
    "public.apply_fax_handling_bulk",
)


def test_every_refusal_of_the_admin_api_is_explained() -> None:
    # Every code lib/screen and the HTTP shell refuse with (lib/admin is the CLI's own and prints
    # its message), and every reason the database gives for a job an action did not change.
    sources = [*(ROOT / "lib" / "screen").glob("*.py"), ROOT / "lib" / "http_shell.py"]
    codes: set[str] = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r"(?:Refusal|unauthenticated)\(\s*\"([a-z_]+)\"", text))
        codes |= set(re.findall(r"\{\"error\": \"([a-z_]+)\"", text))
    assert {"not_admin", "bad_text", "session_ended", "internal_error"} <= codes, "the patterns still find them"
    for function in REASON_FUNCTIONS:
        codes |= set(re.findall(r"(?:then|else|'reason',|reason =)\s+'([a-z_]+)'", _function_body(function)))
    codes -= {"changed", "skipped"}  # a batch's outcomes, not reasons
    assert {"not_failed", "not_live", "job_deleted", "another_job_of_the_same_email", "handling_changed",
            "unchanged", "already_done", "read_only"} <= codes  # fmt: skip
    assert [p for code in sorted(codes) for p in _complete(code, refusal_codes().get(code))] == []


# What Supabase Auth's admin API answers (the CLI's operators command), never the page's sign-in,
# refresh or sign-out.
# A new password (updateUser after an e-mailed link) meets weak_password and same_password.
AUTH_ADMIN_ONLY = {"bad_json", "email_exists", "method_not_allowed", "not_admin", "not_found"}


def test_every_refusal_of_auth_the_page_can_meet_is_explained() -> None:
    standin = ROOT / "devstack" / "standins" / "auth"
    codes = {
        code
        for path in standin.glob("*.py")
        for code in re.findall(r"AuthError\(\s*\d+,\s*\"([a-z_]+)\"", path.read_text(encoding="utf-8"))
    }
    assert "invalid_credentials" in codes, "the pattern still finds the stand-in's codes"
    # And those of GoTrue's that a password sign-in meets on hosted projects.
    codes = (codes - AUTH_ADMIN_ONLY) | {"email_not_confirmed", "user_banned", "over_request_rate_limit"}
    assert [p for code in sorted(codes) for p in _complete(code, auth_codes().get(code))] == []


def test_the_cli_speaks_japanese_when_the_locale_says_so() -> None:
    assert display.language({"LANG": "ja_JP.UTF-8"}) == "ja"
    assert display.language({"LC_ALL": "ja", "LANG": "en_US.UTF-8"}) == "ja"
    assert display.language({"LC_ALL": "C.UTF-8", "LANG": "ja_JP.UTF-8"}) == "en", "LC_ALL comes first"
    assert display.language({"LC_MESSAGES": "ja_JP.UTF-8"}) == "ja"
    assert display.language({}) == "en"


# --- the same words as the screen -------------------------------------------------------------

# Words that name something done to a job. In advice they stand only inside a label of the screen
# (a reference, "{job.retry}", which lib/explanations.py fills from public/admin/i18n.js): advice
# names the screen's own buttons, never an action in words of its own. 「再試行してください」 names a
# button the screen does not have (its button is 再実行; its 再試行, "retried", is what the queue
# does on its own, as advice may say: 自動で再試行されます, "tried again on its own"). English
# past forms ("retried", "cancelled") say what was done, not what to do.
ACTION_WORDS = {
    "ja": re.compile(r"再試行(?!され)|再実行|取消|取り消|キャンセル|やり直|リトライ|再投入"),
    "en": re.compile(r"\b(?:retry|retries|retrying|cancel|cancels|cancell?ing|re-?run\w*|re-?queue\w*)\b", re.I),
}
# A meaning says what happened, in the screen's words too: none the screen does not use.
OTHER_WORDS = {
    "ja": re.compile(r"再試行(?!され)|キャンセル|やり直|リトライ|再投入"),
    "en": re.compile(r"\b(?:re-?run\w*|re-?queue\w*)\b", re.I),
}
# The CLI's commands, which operator's advice may name: `document-jobs-admin retry`.
CLI_COMMAND = re.compile(r"\bdocument-jobs-admin ([a-z-]+)")
# argparse lists a parser's subcommands only in its private actions.
CLI_COMMANDS = frozenset(next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)).choices)
# Where advice may send someone, besides the actions: the views, the states, and these parts of them.
PLACES = re.compile(
    r"(?:nav|state)\.\w+|jobs\.filter\w+|job\.(?:facts|email|attachments|attempts|lastError)"
    r"|overview\.(?:outages|failedNow|failures24h)|index\.reasonLabel"
)


def action_labels(labels: dict[str, dict[str, str]]) -> set[str]:
    """The keys of the screen's actions: the audit's names of them, and the buttons."""
    return {key for key in labels["en"] if key.startswith("action.")} | {
        "job.retry",
        "job.cancel",
        "jobs.bulkRetry",
        "jobs.bulkCancel",
        "jobs.bulkDone",
        "handling.take",
        "handling.markDone",
        "handling.reopen",
        "signIn.forgot",
        "accounts.invite",
        "accounts.reset",
        "index.save",
    }


def not_the_screens_words(name: str, text: str, language: str, labels: dict[str, dict[str, str]]) -> list[str]:
    """What in one text names an action otherwise than by the screen's label, or a place the screen lacks."""
    problems = []
    if name.endswith("meaning"):
        bare = re.sub(r"\{[^{}]*\}", "", text)
        problems += [f"{word!r} is no word of the screen" for word in OTHER_WORDS[language].findall(bare)]
        return problems
    for command in CLI_COMMAND.findall(text):
        if command not in CLI_COMMANDS:
            problems.append(f"document-jobs-admin has no command {command!r}")
    for key in references(text):
        if key not in labels[language]:
            problems.append(f"{{{key}}} is no label of the screen")
        elif key not in action_labels(labels) and not PLACES.fullmatch(key):
            problems.append(f"{{{key}}} is neither an action nor a view of the screen")
    bare = CLI_COMMAND.sub("", re.sub(r"\{[^{}]*\}", "", text))
    problems += [f"names an action as {word!r}, not by its label" for word in ACTION_WORDS[language].findall(bare)]
    quote = "「" if language == "ja" else "“"
    if quote in bare:
        problems.append(f"quotes a label by hand ({quote}…), not by its key")
    return problems


def screens_words_problems(said: dict[str, Explanation], labels: dict[str, dict[str, str]]) -> list[str]:
    return [
        f"{code} {text}_{language}: {problem}"
        for code, explanation in said.items()
        for text in TEXTS
        for language in ("en", "ja")
        for problem in not_the_screens_words(text, getattr(explanation, f"{text}_{language}"), language, labels)
    ]


def test_advice_names_the_screens_actions_by_the_screens_own_labels() -> None:
    labels = screen_labels()
    assert labels["ja"]["job.retry"] == "再実行" and labels["en"]["jobs.bulkRetry"].startswith("Retry every")
    assert screens_words_problems(written(), labels) == []


def test_the_check_of_the_screens_words_fails_for_an_action_the_screen_does_not_have() -> None:
    labels = screen_labels()
    said = FAILURES[FailureCode.STORAGE_INVALID_KEY].explanation

    def problems(**texts: str) -> list[str]:
        return screens_words_problems({"x": Explanation(**{**said.__dict__, **texts})}, labels)

    assert problems() == []
    # The words the issue found: a button the screen does not have.
    assert problems(clerk_ja="ジョブを再試行してください。") == [
        "x clerk_ja: names an action as '再試行', not by its label"
    ]
    # The screen's word, but by hand: it would stay when the button is renamed.
    assert problems(clerk_ja="「再実行」を押してください。") == [
        "x clerk_ja: names an action as '再実行', not by its label",
        "x clerk_ja: quotes a label by hand (「…), not by its key",
    ]
    assert problems(operator_en="Retry the job.") == ["x operator_en: names an action as 'Retry', not by its label"]
    assert problems(clerk_en="Press {job.retryNow}.") == ["x clerk_en: {job.retryNow} is no label of the screen"]
    assert problems(clerk_ja="{outcome.retried}を押してください。") == [
        "x clerk_ja: {outcome.retried} is neither an action nor a view of the screen"
    ]
    assert problems(operator_en="Run document-jobs-admin requeue.") == [
        "x operator_en: document-jobs-admin has no command 'requeue'"
    ]
    assert problems(meaning_ja="管理者がキャンセルしました。") == [
        "x meaning_ja: 'キャンセル' is no word of the screen"
    ]
    # What may stand: the queue's own retry, the CLI's commands, past forms.
    assert (
        problems(clerk_ja="自動で再試行されます。", operator_en="Or document-jobs-admin retry; it was cancelled.") == []
    )


def test_a_label_named_in_advice_is_the_screens_label_quoted() -> None:
    labels = {"en": {"job.retry": "Retry", "job.heading": "Job {id}"}, "ja": {"job.retry": "再実行"}}
    assert resolve("{job.retry}を押してください。", "ja", labels) == "「再実行」を押してください。"
    assert resolve("Press {job.retry}.", "en", labels) == "Press “Retry”."
    with pytest.raises(ValueError, match=r"job\.retryNow"):
        resolve("Press {job.retryNow}.", "en", labels)
    with pytest.raises(ValueError, match=r"job\.heading"):  # a message with a blank is no label
        resolve("Open {job.heading}.", "en", labels)
    # What the screen and the CLI show has the screen's labels in, and nothing left to fill.
    shown = {**job_codes(), **outage_codes(), **refusal_codes(), **auth_codes()}
    assert "「再実行」を押してください" in shown["storage_invalid_key"].clerk_ja
    assert not [code for code, said in shown.items() for text in said.__dict__.values() if "{" in text]
    # A button renamed on the screen is renamed in the advice.
    renamed = {language: {**texts, "job.retry": "取り込み直す"} for language, texts in screen_labels().items()}
    clerk = resolved(FAILURES[FailureCode.STORAGE_INVALID_KEY].explanation, renamed).clerk_ja
    assert clerk.startswith("「取り込み直す」を押してください")


# An engineer's step: a setting (a variable's name), Vercel, a redeploy, Vault, SQL, the CLI, a
# provider's dashboard or status page, logs. The clerk's advice says whom to call instead.
ENGINEERS_STEP = re.compile(
    r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|Vercel|redeploy|再デプロイ|Vault|\bSQL\b|\bselect\b|document-jobs-admin"
    r"|dashboard|ダッシュボード|\blogs?\b|ログ(?!イン|アウト)|status\.supabase\.com|resend-status\.com|cron",
    re.I,
)


def test_the_clerks_advice_has_no_engineers_step_and_the_operators_says_more() -> None:
    steps = [
        f"{code} clerk_{language}: {step!r}"
        for code, said in written().items()
        for language in ("en", "ja")
        for step in ENGINEERS_STEP.findall(said.clerk(language))
    ]
    assert steps == []
    # Each code of a job or an outage has the engineer's own advice (a refusal may say the same to both).
    same = [code for code, said in written().items() if code.split(".")[0] in ("job", "outage", "finding")
            and said.operator_en == said.clerk_en]  # fmt: skip
    assert same == []


def test_the_check_of_the_clerks_advice_finds_an_engineers_step() -> None:
    found = ENGINEERS_STEP.findall(
        "Set RESEND_API_KEY on Vercel and redeploy; see the logs. Vault の値を直し、再デプロイしてください。"
    )
    assert found == ["RESEND_API_KEY", "Vercel", "redeploy", "logs", "Vault", "再デプロイ"]
    assert ENGINEERS_STEP.findall("もう一度ログインしてください。システム管理者に連絡してください。") == []
