"""How a job's failure is handled: THE table (tests/unit/test_failures.py holds the guides'
tables to it), and the translation of each service's errors into its stable codes.

retry   transient: fail_document_job(p_retryable => true); backoff, or the provider's retry-after
fail    permanent: fail_document_job(p_retryable => false); the job stops in `failed`
release not the job's fault: release_document_job; no attempt spent

A failure that is not the job's own (a key, a setting, a quota) is a release with a delay, never
`failed`: one key rotation must not park every fax. Its rule names what an operator checks
(`check`), and the health check raises an outage alert when such releases keep happening
(supabase/migrations/20261201002200_document_jobs_release_outages.sql holds the same names;
tests/database/test_limits_mirror.py compares them). Only what belongs to the job itself (the e-mail is gone,
an attachment is too large, its content or its id is refused) fails it at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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
    TIME_BUDGET = "time_budget"
    INTERNAL_ERROR = "internal_error"


@dataclass(frozen=True)
class Rule:
    action: Action
    meaning: str
    # For release: how long the job waits (a missing permission is not fixed in seconds).
    delay: timedelta = timedelta(0)
    # For a cause that is not the job's own: what the operator checks. The log line of every such
    # release names it, and the health check's outage alert for the code does too.
    check: str | None = None


# The server key's settings (the secret key, or on projects that still have it the legacy JWT).
SUPABASE_KEY_SETTINGS = "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"
# A key or a setting is not fixed within seconds; asking again every 10 minutes costs nothing.
_SETTING_DELAY = timedelta(minutes=10)

FAILURES: dict[FailureCode, Rule] = {
    FailureCode.RESEND_UNAVAILABLE: Rule(
        Action.RETRY, "Resend answered 5xx, or 409, 423 or 425 (a conflicting or early request: a state that passes)"
    ),
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
        Action.RELEASE,
        "Resend's daily or monthly quota is used up",
        delay=timedelta(hours=1),
        check="the Resend team's plan (its daily and monthly quota)",
    ),
    FailureCode.RESEND_NETWORK_ERROR: Rule(Action.RETRY, "Resend could not be reached, or the connection broke"),
    FailureCode.RESEND_TIMEOUT: Rule(Action.RETRY, "Resend (or a proxy in front of it: 408) did not answer in time"),
    FailureCode.RESEND_NOT_FOUND: Rule(Action.FAIL, "Resend does not know the e-mail (404 not_found, 410)"),
    FailureCode.RESEND_MALFORMED_RESPONSE: Rule(
        Action.FAIL, "Resend's answer did not have the documented shape (the message names the field)"
    ),
    FailureCode.RESEND_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "RESEND_API_KEY is missing, deleted, invalid or lacks receiving permission"
        " (400 validation_error naming the API key, 401, 403)",
        delay=_SETTING_DELAY,
        check="RESEND_API_KEY",
    ),
    FailureCode.RESEND_MISCONFIGURED: Rule(
        Action.RELEASE,
        "RESEND_API_URL is not Resend's API: a redirect, 405, or a 404 for the endpoint itself",
        delay=_SETTING_DELAY,
        check="RESEND_API_URL",
    ),
    FailureCode.RESEND_REJECTED: Rule(
        Action.FAIL, "Resend refused the request as invalid for this e-mail (400 about a field, 413, 414, 422, 431)"
    ),
    FailureCode.RESEND_UNEXPECTED_ANSWER: Rule(
        Action.RETRY, "an answer Resend does not document for this endpoint (another 4xx, a 1xx or 2xx but 200)"
    ),
    FailureCode.DOWNLOAD_EXPIRED: Rule(
        Action.RETRY, "an attachment's download URL answered 403 even after listing afresh"
    ),
    FailureCode.DOWNLOAD_FAILED: Rule(
        Action.RETRY, "an attachment download failed (network, timeout, 5xx, or fewer or more bytes than listed)"
    ),
    FailureCode.ATTACHMENT_TOO_LARGE: Rule(Action.FAIL, "an attachment is larger than ATTACHMENT_MAX_BYTES"),
    FailureCode.STORAGE_UNAVAILABLE: Rule(Action.RETRY, "Storage answered 5xx, 429 or 544, or could not be reached"),
    FailureCode.STORAGE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "Storage refused the server key (401/403: InvalidJWT, AccessDenied)",
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
    ),
    FailureCode.STORAGE_BUCKET_NOT_FOUND: Rule(
        Action.RELEASE,
        "Storage has no bucket of that name (404 Bucket not found, NoSuchBucket, InvalidBucketName)",
        delay=_SETTING_DELAY,
        check="ATTACHMENTS_BUCKET",
    ),
    FailureCode.STORAGE_TOO_LARGE: Rule(Action.FAIL, "Storage refused the object as too large (413)"),
    FailureCode.STORAGE_INVALID_KEY: Rule(Action.FAIL, "Storage refused the object key (InvalidKey)"),
    FailureCode.STORAGE_REJECTED: Rule(Action.FAIL, "Storage refused the upload for another reason (4xx)"),
    FailureCode.DATABASE_ERROR: Rule(Action.RETRY, "the database (PostgREST) failed or could not be reached"),
    FailureCode.DATABASE_UNAUTHORIZED: Rule(
        Action.RELEASE,
        "the database (PostgREST) refused the server key (401/403: a JWT error, permission denied)",
        delay=_SETTING_DELAY,
        check=SUPABASE_KEY_SETTINGS,
    ),
    FailureCode.EMAIL_NOT_FOUND: Rule(Action.FAIL, "the job's e-mail row does not exist"),
    FailureCode.TIME_BUDGET: Rule(
        Action.RELEASE,
        "the invocation's time ran out mid-job; the next one resumes (bounded: see TIME_BUDGET_FREE_RELEASES)",
    ),
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
