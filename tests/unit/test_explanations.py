"""The one table of what codes mean and what to do (lib/failures.py, lib/explanations.py): every code
the database, the worker, the admin API and Supabase Auth can put on the screen has its meaning
and its advice in English and in Japanese, and the page's copy (public/admin/explanations.js) is
what the table writes, not a text of its own."""

from __future__ import annotations

import re
from pathlib import Path

from lib import explanations
from lib.admin import display
from lib.explanations import AUTH_REFUSALS, REFUSALS, job_codes, outage_codes
from lib.failures import FAILURES, Explanation, FailureCode

ROOT = Path(__file__).parents[2]
SCHEMA = (ROOT / "supabase" / "schema.sql").read_text(encoding="utf-8")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _complete(code: str, said: Explanation | None) -> list[str]:
    """What is missing or in the wrong language."""
    if said is None:
        return [f"{code}: no explanation"]
    problems = []
    for name in ("meaning_en", "advice_en"):
        text = getattr(said, name)
        if not text.strip() or JAPANESE.search(text):
            problems.append(f"{code}: {name} is empty or not English")
    for name in ("meaning_ja", "advice_ja"):
        if not JAPANESE.search(getattr(said, name)):
            problems.append(f"{code}: {name} is not Japanese")
    return problems


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


# The functions that say why a job was not changed: a retry, a cancel, a batch of a bulk action.
REASON_FUNCTIONS = (
    "public.admin_retry_document_job",
    "public.admin_cancel_document_job",
    "document_jobs_internal.bulk_retry_batch",
    "document_jobs_internal.bulk_cancel_batch",
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
        codes |= set(re.findall(r"(?:then|else|'reason',)\s+'([a-z_]+)'", _function_body(function)))
    codes -= {"changed", "skipped"}  # a batch's outcomes, not reasons
    assert {"not_failed", "not_live", "job_deleted", "another_job_of_the_same_email"} <= codes
    assert [p for code in sorted(codes) for p in _complete(code, REFUSALS.get(code))] == []


# What Supabase Auth's admin API answers (the CLI's operators command), never the page's sign-in,
# refresh or sign-out.
AUTH_ADMIN_ONLY = {"bad_json", "email_exists", "weak_password", "method_not_allowed", "not_admin", "not_found"}


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
    assert [p for code in sorted(codes) for p in _complete(code, AUTH_REFUSALS.get(code))] == []


def test_the_cli_speaks_japanese_when_the_locale_says_so() -> None:
    assert display.language({"LANG": "ja_JP.UTF-8"}) == "ja"
    assert display.language({"LC_ALL": "ja", "LANG": "en_US.UTF-8"}) == "ja"
    assert display.language({"LC_ALL": "C.UTF-8", "LANG": "ja_JP.UTF-8"}) == "en", "LC_ALL comes first"
    assert display.language({"LC_MESSAGES": "ja_JP.UTF-8"}) == "ja"
    assert display.language({}) == "en"
