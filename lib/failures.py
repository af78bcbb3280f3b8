"""How a job's failure is handled: THE table (tests/unit/test_failures.py holds the README's
tables to it), and the translation of each service's errors into its stable codes.

retry   transient: fail_document_job(p_retryable => true); backoff, or the provider's retry-after
fail    permanent: fail_document_job(p_retryable => false); the job stops in `failed`
release not the job's fault: release_document_job; no attempt spent
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum


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
    RESEND_REJECTED = "resend_rejected"
    DOWNLOAD_EXPIRED = "download_expired"
    DOWNLOAD_FAILED = "download_failed"
    ATTACHMENT_TOO_LARGE = "attachment_too_large"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    STORAGE_TOO_LARGE = "storage_too_large"
    STORAGE_INVALID_KEY = "storage_invalid_key"
    STORAGE_REJECTED = "storage_rejected"
    DATABASE_ERROR = "database_error"
    EMAIL_NOT_FOUND = "email_not_found"
    TIME_BUDGET = "time_budget"
    INTERNAL_ERROR = "internal_error"


@dataclass(frozen=True)
class Rule:
    action: Action
    meaning: str
    # For release: how long the job waits (a missing permission is not fixed in seconds).
    delay: timedelta = timedelta(0)


FAILURES: dict[FailureCode, Rule] = {
    FailureCode.RESEND_UNAVAILABLE: Rule(Action.RETRY, "Resend answered 5xx"),
    # Throttling, not an outage and not the job's fault: the workers share a limiter so that a 429
    # stays rare (another application of the team took the window). At least a second: Resend
    # counts in one-second windows.
    FailureCode.RESEND_RATE_LIMITED: Rule(
        Action.RELEASE, "Resend answered 429 rate_limit_exceeded; its retry-after is honoured", timedelta(seconds=1)
    ),
    FailureCode.RESEND_RATE_LIMIT_WAIT: Rule(
        Action.RELEASE, "the shared limiter's next Resend slot is further away than the time budget allows"
    ),
    # Not the job's fault, and retrying within the hour cannot help: wait without spending attempts.
    FailureCode.RESEND_QUOTA_EXCEEDED: Rule(
        Action.RELEASE, "Resend's daily or monthly quota is used up", delay=timedelta(hours=1)
    ),
    FailureCode.RESEND_NETWORK_ERROR: Rule(Action.RETRY, "Resend could not be reached, or the connection broke"),
    FailureCode.RESEND_TIMEOUT: Rule(Action.RETRY, "Resend did not answer in time"),
    FailureCode.RESEND_NOT_FOUND: Rule(Action.FAIL, "Resend does not know the e-mail (404)"),
    FailureCode.RESEND_MALFORMED_RESPONSE: Rule(Action.FAIL, "Resend's answer did not have the documented shape"),
    FailureCode.RESEND_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "RESEND_API_KEY is missing, invalid or lacks receiving permission (401/403)",
        delay=timedelta(minutes=10),
    ),
    FailureCode.RESEND_REJECTED: Rule(Action.FAIL, "Resend refused the request for another reason (4xx)"),
    FailureCode.DOWNLOAD_EXPIRED: Rule(
        Action.RETRY, "an attachment's download URL answered 403 even after listing afresh"
    ),
    FailureCode.DOWNLOAD_FAILED: Rule(Action.RETRY, "an attachment download failed (network, timeout or 5xx)"),
    FailureCode.ATTACHMENT_TOO_LARGE: Rule(Action.FAIL, "an attachment is larger than ATTACHMENT_MAX_BYTES"),
    FailureCode.STORAGE_UNAVAILABLE: Rule(Action.RETRY, "Storage answered 5xx, 429 or 544, or could not be reached"),
    FailureCode.STORAGE_TOO_LARGE: Rule(Action.FAIL, "Storage refused the object as too large (413)"),
    FailureCode.STORAGE_INVALID_KEY: Rule(Action.FAIL, "Storage refused the object key (InvalidKey)"),
    FailureCode.STORAGE_REJECTED: Rule(Action.FAIL, "Storage refused the upload for another reason (4xx)"),
    FailureCode.DATABASE_ERROR: Rule(Action.RETRY, "the database (PostgREST) failed or could not be reached"),
    FailureCode.EMAIL_NOT_FOUND: Rule(Action.FAIL, "the job's e-mail row does not exist"),
    FailureCode.TIME_BUDGET: Rule(Action.RELEASE, "the invocation's time ran out mid-job; the next one resumes"),
    FailureCode.INTERNAL_ERROR: Rule(Action.RETRY, "an unexpected error in the worker (a bug): see the logs"),
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


def from_resend_status(status: int, name: str | None) -> FailureCode:
    """The code for an error answer of Resend's API."""
    if status in (401, 403):
        return FailureCode.RESEND_UNAUTHORIZED
    if status == 404:
        return FailureCode.RESEND_NOT_FOUND
    if status == 429:
        return (
            FailureCode.RESEND_QUOTA_EXCEEDED
            if name in ("daily_quota_exceeded", "monthly_quota_exceeded")
            else FailureCode.RESEND_RATE_LIMITED
        )
    if status >= 500:
        return FailureCode.RESEND_UNAVAILABLE
    return FailureCode.RESEND_REJECTED


def from_storage_status(status: int, error: str | None) -> FailureCode:
    """The code for a Storage error, by the status in its body (Storage answers most errors with HTTP 400)."""
    if status in (429, 544) or status >= 500:
        return FailureCode.STORAGE_UNAVAILABLE
    if status == 413:
        return FailureCode.STORAGE_TOO_LARGE
    if error == "InvalidKey" or (status == 400 and error and "key" in error.lower()):
        return FailureCode.STORAGE_INVALID_KEY
    return FailureCode.STORAGE_REJECTED
