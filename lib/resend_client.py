"""A client of Resend's receiving API (inbound e-mails), on httpx.

Every call has a timeout, a User-Agent (without one Resend answers 403) and the API key; error
answers become ResendError with Resend's own fields (statusCode, name, message) and retry-after.
API requests keep to the team's rate limit through a Pacing (lib/rate_limit.py); downloads go to
another host (download_url), which the rate limit does not cover.
"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Protocol
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lib.budget import Deadline, DeadlinePassed

USER_AGENT = "document-jobs/0.1 (+https://github.com/document-jobs)"
PAGE_SIZE = 100
MAX_PAGES = 100  # 10,000 attachments: far beyond any e-mail; a provider loop must not hold the worker


class ResendError(Exception):
    """Resend answered an error, or could not be reached (status None)."""

    def __init__(
        self, status: int | None, name: str | None, message: str, retry_after: timedelta | None = None
    ) -> None:
        super().__init__(f"Resend {status or 'unreachable'} {name or ''}: {message}".strip())
        self.status = status
        self.name = name
        self.message = message
        self.retry_after = retry_after


class ResendTimeout(ResendError):
    pass


class MalformedResponse(Exception):
    """An answer without the documented shape."""


class DownloadError(Exception):
    """An attachment download failed; `status` is None for network errors and timeouts."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


class TooLarge(Exception):
    pass


class Attachment(BaseModel):
    """An item of GET /emails/receiving/{id}/attachments. download_url is valid for one hour: never store it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = Field(min_length=1)  # the database refuses an empty id: retrying could never store it
    filename: str | None = None
    content_type: str | None = None
    size: int = Field(ge=0)
    download_url: str
    expires_at: str | None = None


class _AttachmentPage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    has_more: bool = False
    data: list[Attachment]


class _ErrorBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    message: str | None = None


def parse_retry_after(value: str | None, now: datetime | None = None) -> timedelta | None:
    """retry-after in seconds or as an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when - (now or datetime.now(UTC)), timedelta(0))


def _error(response: httpx.Response) -> ResendError:
    try:
        body = _ErrorBody.model_validate_json(response.content)
    except ValidationError:
        body = _ErrorBody()
    return ResendError(
        response.status_code,
        body.name,
        body.message or response.reason_phrase,
        parse_retry_after(response.headers.get("retry-after")),
    )


def _parse_page(content: bytes) -> _AttachmentPage:
    # Python's parser, not pydantic's: pydantic's JSON parser refuses a lone surrogate escape
    # ("\ud800", which JavaScript writes readily), and one odd file name would fail the whole job
    # as a malformed answer. lib/storable.py makes such text storable later.
    try:
        document = json.loads(content)
    except (ValueError, RecursionError):
        raise MalformedResponse("attachment list: not JSON") from None
    try:
        return _AttachmentPage.model_validate(document)
    except ValidationError as error:
        raise MalformedResponse(f"attachment list: {error.error_count()} invalid fields") from None


class Pacing(Protocol):
    """What the client asks before and tells after each API request (lib/rate_limit.py)."""

    def before_request(self, deadline: Deadline | None) -> None: ...

    def after_response(self, headers: httpx.Headers, error: ResendError | None) -> None: ...


class ResendClient:
    """Every call takes an optional Deadline (lib/budget.py): no wait outlasts it, and a download
    stops at it even while bytes keep trickling in (DeadlinePassed)."""

    def __init__(
        self, http: httpx.Client, base_url: str, api_key: str, timeout: float = 30.0, pacing: Pacing | None = None
    ) -> None:
        self._http = http
        self._pacing = pacing
        self._timeout_s = timeout
        self._base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}

    def _timeout(self, deadline: Deadline | None) -> httpx.Timeout:
        no_deadline = Deadline(float("inf"))  # the configured timeouts alone
        return (deadline or no_deadline).timeout(self._timeout_s)

    def _get_json(self, path: str, params: dict[str, str | int], deadline: Deadline | None) -> bytes:
        if deadline:
            deadline.check("Resend")
        if self._pacing:  # waits for the request's slot, never past the deadline
            self._pacing.before_request(deadline)
        try:
            response = self._http.get(
                f"{self._base_url}{path}", params=params, headers=self._headers, timeout=self._timeout(deadline)
            )
        except httpx.TimeoutException as error:
            if deadline and deadline.remaining() <= 0:
                raise DeadlinePassed("Resend: the invocation's time budget ran out") from error
            raise ResendTimeout(None, None, f"timed out: {type(error).__name__}") from error
        except httpx.HTTPError as error:
            raise ResendError(None, None, f"{type(error).__name__}") from error
        refused = _error(response) if response.status_code != 200 else None
        if self._pacing:
            self._pacing.after_response(response.headers, refused)
        if refused:
            raise refused
        return response.content

    def list_attachments(self, email_id: str, deadline: Deadline | None = None) -> list[Attachment]:
        """Every attachment of a received e-mail, following the pagination."""
        return list(self._iter_attachments(email_id, deadline))

    def _iter_attachments(self, email_id: str, deadline: Deadline | None) -> Iterator[Attachment]:
        params: dict[str, str | int] = {"limit": PAGE_SIZE}
        for _ in range(MAX_PAGES):
            content = self._get_json(f"/emails/receiving/{quote(email_id, safe='')}/attachments", params, deadline)
            page = _parse_page(content)
            yield from page.data
            if not page.has_more:
                return
            if not page.data:
                raise MalformedResponse("attachment list: has_more with an empty page")
            params["after"] = page.data[-1].id
        raise MalformedResponse(f"attachment list: more than {MAX_PAGES} pages")

    def download(self, url: str, max_bytes: int, deadline: Deadline | None = None) -> bytes:
        """The attachment's bytes, streamed; TooLarge as soon as they pass max_bytes, DeadlinePassed
        as soon as the deadline passes."""
        if deadline:
            deadline.check("download")
        headers = {"User-Agent": USER_AGENT}
        try:
            with self._http.stream("GET", url, headers=headers, timeout=self._timeout(deadline)) as response:
                if response.status_code != 200:
                    raise DownloadError(response.status_code, f"download answered {response.status_code}")
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise TooLarge(f"{declared} bytes declared, the cap is {max_bytes}")
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge(f"more than {max_bytes} bytes")
                    chunks.append(chunk)
                    if deadline:
                        deadline.check("download")
                return b"".join(chunks)
        except httpx.TimeoutException as error:
            if deadline and deadline.remaining() <= 0:
                raise DeadlinePassed("download: the invocation's time budget ran out") from error
            raise DownloadError(None, f"download failed: {type(error).__name__}") from error
        except httpx.HTTPError as error:
            raise DownloadError(None, f"download failed: {type(error).__name__}") from error
