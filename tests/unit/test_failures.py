"""The failure table (lib/failures.py): one rule for every code, no code outside it, the guides'
two tables of codes (docs/QUEUE.md's failure table, docs/OPERATIONS.md's error codes) saying the
same, and what every answer of Resend, Storage and the database is classified as."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from lib.errors import DatabaseError
from lib.explanations import table
from lib.failures import (
    FAILURES,
    RESEND_4XX,
    RETRY_CANNOT_HELP,
    Action,
    FailureCode,
    JobFailure,
    database_failure,
    from_resend_error,
    from_storage_error,
)


def test_every_code_has_exactly_one_rule() -> None:
    assert list(FAILURES) == list(FailureCode)


def test_a_retry_is_offered_unless_the_advice_says_it_cannot_help() -> None:
    # The screen offers no retry for these codes (public/admin/job.js, through explanations.js): what
    # it leaves out is exactly what the advice tells a clerk a retry cannot help with.
    cannot_help = {
        code.value
        for code, rule in FAILURES.items()
        if re.search(r"\{job\.retry\}[^.]*(?:does not help|gives the same result)", rule.explanation.clerk_en)
    }
    assert {"resend_not_found", "fax_file_damaged"} <= cannot_help, "the pattern still finds the advice"
    assert cannot_help == RETRY_CANNOT_HELP
    assert {code: False for code in cannot_help} == {
        code: entry.get("retry") for code, entry in table()["job"].items() if code in cannot_help
    }
    assert not [code for code, entry in table()["job"].items() if "retry" in entry and code not in cannot_help]


def test_a_code_outside_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="not_a_code"):
        JobFailure("not_a_code", "message")  # type: ignore[arg-type]  # what mypy stops in lib/


DOCS = Path(__file__).parents[2] / "docs"
# Codes only the database writes (the expired-lease sweep, an operator's cancel), not the worker.
DATABASE_CODES = {"lease_expired", "cancelled"}


def doc_table(doc: str, after: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after the line starting with `after`."""
    lines = (DOCS / doc).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # without the header and the |---| line


def codes(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def delay(action: str) -> timedelta:
    if action.endswith("no delay") or "," not in action:
        return timedelta(0)
    amount, unit = action.split(",", 1)[1].split()
    return timedelta(**{{"h": "hours", "min": "minutes", "s": "seconds"}[unit]: int(amount)})


def test_the_guides_failure_table_is_the_one_in_lib() -> None:
    rows = doc_table("QUEUE.md", "Each failure has a stable code")
    described = {code: action for _, cell, action in rows for code in codes(cell)}
    assert sorted(described) == sorted(FailureCode)
    for code, action in described.items():
        rule = FAILURES[FailureCode(code)]
        assert (action.split(",")[0], delay(action)) == (rule.action.value, rule.delay), code


def test_the_guides_error_codes_are_every_code_a_job_can_end_with() -> None:
    rows = doc_table("OPERATIONS.md", "`last_error_code` of a job")
    assert sorted(code for cell, *_ in rows for code in codes(cell)) == sorted({*FailureCode, *DATABASE_CODES})


# --- what each service's answers mean (lib/failures.py), written out independently -------------

RESEND_ANSWERS = [
    # (status, name, message, code): Resend's error reference, current and older, and what it leaves out
    (400, "validation_error", "API key is invalid", "resend_unauthorized"),  # a deleted or unknown key
    (400, "validation_error", "The `limit` field must be a number between 1 and 100.", "resend_rejected"),
    (400, "invalid_idempotency_key", "The key must be between 1-256 chars.", "resend_rejected"),
    (401, "missing_api_key", "Missing API key in the authorization header.", "resend_unauthorized"),
    (401, "restricted_api_key", "This API key is restricted to only send emails.", "resend_unauthorized"),
    (403, "invalid_api_key", "API key is invalid.", "resend_unauthorized"),  # older pages
    (403, None, "error code: 1010", "resend_unauthorized"),  # Cloudflare: no User-Agent
    (404, "not_found", "Email not found", "resend_not_found"),
    (404, "not_found", "The requested endpoint does not exist.", "resend_misconfigured"),
    (404, None, "Not Found", "resend_misconfigured"),  # not Resend's answer at all
    (405, "method_not_allowed", "Method is not allowed for the requested path.", "resend_misconfigured"),
    (408, None, "Request Timeout", "resend_timeout"),  # a proxy in front
    (409, "concurrent_idempotent_requests", "Same idempotency key used while ...", "resend_unavailable"),
    (409, None, "Conflict", "resend_unavailable"),
    (410, None, "Gone", "resend_not_found"),
    (422, "invalid_parameter", "The parameter must be a valid UUID.", "resend_rejected"),
    (422, "invalid_scope", "This endpoint does not support the specified scope.", "resend_unauthorized"),
    (429, "rate_limit_exceeded", "Too many requests.", "resend_rate_limited"),
    (429, None, "Too Many Requests", "resend_rate_limited"),  # a proxy's throttling
    (429, "daily_quota_exceeded", "You have reached your daily email sending quota.", "resend_quota_exceeded"),
    (429, "monthly_quota_exceeded", "You have reached your monthly email sending quota.", "resend_quota_exceeded"),
    (418, None, "I'm a teapot", "resend_unexpected_answer"),
    (499, None, "Client Closed Request", "resend_unexpected_answer"),
    (301, None, "Moved Permanently", "resend_misconfigured"),  # http:// for https://
    (204, None, "No Content", "resend_unexpected_answer"),
    (500, "application_error", "An unexpected error occurred.", "resend_unavailable"),
    (503, None, "<html>", "resend_unavailable"),
    (None, None, "ConnectError", "resend_network_error"),
]


@pytest.mark.parametrize(("status", "name", "message", "code"), RESEND_ANSWERS)
def test_resend_answers_are_classified_by_name_then_status(status, name, message, code) -> None:
    assert from_resend_error(status, name, message) == code


def test_a_validation_error_is_a_key_problem_only_when_its_message_names_the_key() -> None:
    assert from_resend_error(400, "validation_error", "api_key: API key is invalid") == "resend_unauthorized"
    assert from_resend_error(400, "validation_error", "The `after` cursor is invalid") == "resend_rejected"
    assert FAILURES[FailureCode.RESEND_UNAUTHORIZED].action is Action.RELEASE
    assert FAILURES[FailureCode.RESEND_REJECTED].action is Action.FAIL


def test_every_4xx_has_a_decision_and_none_of_the_undocumented_fails_at_once() -> None:
    documented = {400, 401, 403, 404, 405, 409, 422, 429}
    for status in range(400, 500):
        rule = FAILURES[from_resend_error(status, None, "")]
        if status not in documented and status not in RESEND_4XX:
            assert rule.action is Action.RETRY, status
    assert FAILURES[from_resend_error(408, None, "")].action is Action.RETRY


STORAGE_ANSWERS = [
    # (status in the body, code, error, failure): supabase.com/docs/guides/storage/debugging/error-codes
    (404, "NoSuchBucket", "Bucket not found", "storage_bucket_not_found"),
    (404, None, "Bucket not found", "storage_bucket_not_found"),  # the older bodies
    (400, "InvalidBucketName", "The bucket name is invalid", "storage_bucket_not_found"),
    (401, "InvalidJWT", "invalid signature", "storage_unauthorized"),
    (400, "InvalidJWT", "Invalid Compact JWS", "storage_unauthorized"),
    (403, "AccessDenied", "new row violates row-level security policy", "storage_unauthorized"),
    (403, None, "Unauthorized", "storage_unauthorized"),
    (401, None, "Invalid API key", "storage_unauthorized"),  # the API gateway in front
    (413, "EntityTooLarge", "Payload too large", "storage_too_large"),
    (400, "InvalidKey", "Invalid key: x", "storage_invalid_key"),
    (544, "DatabaseTimeout", "timeout", "storage_unavailable"),
    (404, "TenantNotFound", "Tenant not found", "storage_unavailable"),
    (409, "KeyAlreadyExists", "Duplicate", "storage_rejected"),
    (415, "InvalidMimeType", "mime type not supported", "storage_rejected"),
]


@pytest.mark.parametrize(("status", "code", "error", "failure"), STORAGE_ANSWERS)
def test_storage_answers_are_classified_by_code_then_status(status, code, error, failure) -> None:
    assert from_storage_error(status, code, error) == failure


@pytest.mark.parametrize(
    ("error", "code"),
    [(DatabaseError("claim", "JWSError JWSInvalidSignature", code="PGRST301"), "database_unauthorized"),
     (DatabaseError("claim", "permission denied for function claim_document_jobs", code="42501"),
      "database_unauthorized"),
     (DatabaseError("claim", "Invalid API key"), "database_unauthorized"),  # the gateway: no code
     (DatabaseError("claim", "Unauthorized", code="401"), "database_unauthorized"),  # no error body
     (DatabaseError("claim", "unreachable (ConnectError)", unreachable=True), "database_error"),
     (DatabaseError("claim", "connection failure", code="08006"), "database_error"),
     (DatabaseError("claim", "canceling statement due to statement timeout", code="57014"), "database_error")],
    ids=["JWT refused", "permission denied", "gateway: invalid API key", "401 without a body", "unreachable",
         "connection failure", "statement timeout"],
)  # fmt: skip
def test_database_errors_a_refused_key_is_a_release_naming_both_settings(error, code) -> None:
    failure = database_failure(error)
    assert failure.code == code
    if code == "database_unauthorized":
        assert failure.rule.action is Action.RELEASE
        assert "SUPABASE_SECRET_KEY" in failure.message and "SUPABASE_SERVICE_ROLE_KEY" in failure.message


def test_every_release_that_is_not_the_jobs_own_names_what_to_check() -> None:
    # Out of time and throttling are nobody's fault and no outage: nothing for an operator to check.
    no_outage = {FailureCode.TIME_BUDGET, FailureCode.RESEND_RATE_LIMITED, FailureCode.RESEND_RATE_LIMIT_WAIT}
    for code, rule in FAILURES.items():
        if rule.action is Action.RELEASE and code not in no_outage:
            assert rule.check and rule.delay > timedelta(0), code
        else:
            assert rule.check is None, code
