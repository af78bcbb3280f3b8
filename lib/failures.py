"""How a job's failure is handled: THE table (spec 5), and the translation of each service's errors
into its stable codes.

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


@dataclass(frozen=True)
class Rule:
    action: Action
    meaning: str
    # For release: how long the job waits (a missing permission is not fixed in seconds).
    delay: timedelta = timedelta(0)


FAILURES: dict[str, Rule] = {
    "resend_unavailable": Rule(Action.RETRY, "Resend answered 5xx"),
    "resend_rate_limited": Rule(Action.RETRY, "Resend answered 429; its retry-after is honoured"),
    # Not the job's fault, and retrying within the hour cannot help: wait without spending attempts.
    "resend_quota_exceeded": Rule(
        Action.RELEASE, "Resend's daily or monthly quota is used up", delay=timedelta(hours=1)
    ),
    "resend_network_error": Rule(Action.RETRY, "Resend could not be reached, or the connection broke"),
    "resend_timeout": Rule(Action.RETRY, "Resend did not answer in time"),
    "resend_not_found": Rule(Action.FAIL, "Resend does not know the e-mail (404)"),
    "resend_malformed_response": Rule(Action.FAIL, "Resend's answer did not have the documented shape"),
    "resend_unauthorized": Rule(
        Action.RELEASE,
        "RESEND_API_KEY is missing, invalid or lacks receiving permission (401/403)",
        delay=timedelta(minutes=10),
    ),
    "resend_rejected": Rule(Action.FAIL, "Resend refused the request for another reason (4xx)"),
    "download_expired": Rule(Action.RETRY, "an attachment's download URL answered 403 even after listing afresh"),
    "download_failed": Rule(Action.RETRY, "an attachment download failed (network, timeout or 5xx)"),
    "attachment_too_large": Rule(Action.FAIL, "an attachment is larger than ATTACHMENT_MAX_BYTES"),
    "storage_unavailable": Rule(Action.RETRY, "Storage answered 5xx, 429 or 544, or could not be reached"),
    "storage_too_large": Rule(Action.FAIL, "Storage refused the object as too large (413)"),
    "storage_invalid_key": Rule(Action.FAIL, "Storage refused the object key (InvalidKey)"),
    "storage_rejected": Rule(Action.FAIL, "Storage refused the upload for another reason (4xx)"),
    "database_error": Rule(Action.RETRY, "the database (PostgREST) failed or could not be reached"),
    "email_not_found": Rule(Action.FAIL, "the job's e-mail row does not exist"),
    "time_budget": Rule(Action.RELEASE, "the invocation's time ran out mid-job; the next one resumes"),
    "internal_error": Rule(Action.RETRY, "an unexpected error in the worker (a bug): see the logs"),
}


class JobFailure(Exception):
    """A failure with a stable code from FAILURES; `retry_after` is the provider's requested wait."""

    def __init__(self, code: str, message: str, retry_after: timedelta | None = None) -> None:
        if code not in FAILURES:
            raise ValueError(f"unknown failure code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @property
    def rule(self) -> Rule:
        return FAILURES[self.code]


def from_resend_status(status: int, name: str | None) -> str:
    """The code for an error answer of Resend's API."""
    if status in (401, 403):
        return "resend_unauthorized"
    if status == 404:
        return "resend_not_found"
    if status == 429:
        return (
            "resend_quota_exceeded"
            if name in ("daily_quota_exceeded", "monthly_quota_exceeded")
            else "resend_rate_limited"
        )
    if status >= 500:
        return "resend_unavailable"
    return "resend_rejected"


def from_storage_status(status: int, error: str | None) -> str:
    """The code for a Storage error, by the status in its body (Storage answers most errors with HTTP 400)."""
    if status in (429, 544) or status >= 500:
        return "storage_unavailable"
    if status == 413:
        return "storage_too_large"
    if error == "InvalidKey" or (status == 400 and error and "key" in error.lower()):
        return "storage_invalid_key"
    return "storage_rejected"
