"""A client of Resend's receiving API (inbound e-mails), on httpx.

Every call has a timeout, a User-Agent (without one Resend answers 403) and the API key; error
answers become ResendError with Resend's own fields (statusCode, name, message) and retry-after.
What they mean for a job is lib/failures.py's (from_resend_error). API requests keep to the
team's rate limit through a Pacing (lib/worker/rate_limit.py); downloads go to another host
(download_url), which the rate limit does not cover.

A listing is read item by item: an item Resend's own SDK allows (no `size`: it is NotRequired in
resend/emails/_received_email.py) is fetched with its size unknown, and an item that cannot be
fetched at all (no id, no download URL) is named, field by field, without losing the others. The
list of received e-mails is read the same way: an item that cannot be recorded is set apart with
what can be read of it (UnreadableEmail), and its page's other items go on.

A received e-mail's own answer (resend.com/docs/api-reference/emails/retrieve-received-email)
carries `raw`: {"download_url", "expires_at"}, a signed URL of the original message (the .eml,
its attachments included), or null; it is downloaded like an attachment, its size unknown.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lib.budget import Deadline, DeadlinePassed
from lib.storable import digest

USER_AGENT = "document-jobs/0.1 (+https://github.com/document-jobs)"
PAGE_SIZE = 100
MAX_PAGES = 100  # 10,000 attachments: far beyond any e-mail; a provider loop must not hold the worker
# A download is handed on in chunks of at most this size, so that what a job holds of an attachment
# does not grow with it (the instance-memory bench: 8 jobs of 40 MiB at once on one instance).
DOWNLOAD_CHUNK_BYTES = 64 * 1024


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


class LengthMismatch(DownloadError):
    """The body ended with fewer bytes than the listing's size, or went on past it (a lying
    Content-Length, a truncated object): nothing of it may be stored."""


class TooLarge(Exception):
    pass


class InvalidEmailId(ValueError):
    """An e-mail id that cannot be a path segment: "." and ".." would be normalised away by the
    HTTP client into another endpoint of Resend's API."""


def fetchable_url(value: str) -> str:
    """A download URL the worker may GET: http(s), with a host (ValueError otherwise)."""
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, UnicodeError):
        raise ValueError("is not a URL") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("is not an http(s) URL with a host")
    return value


class Attachment(BaseModel):
    """An item of GET /emails/receiving/{id}/attachments. download_url is valid for one hour: never store it.

    `size` is None when the listing did not give a usable one (missing, fractional, negative):
    the download's own cap still holds, and there is nothing to compare the body with."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    # Any string JSON can hold, a lone surrogate included (pydantic's min_length would refuse it).
    id: str
    filename: str | None = None
    content_type: str | None = None
    size: int | None = None
    download_url: str
    expires_at: str | None = None

    @field_validator("id")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value:  # the database refuses an empty id: retrying could never store it
            raise ValueError("must not be empty")
        return value

    @field_validator("download_url")
    @classmethod
    def _fetchable(cls, value: str) -> str:
        return fetchable_url(value)


class RawMessage(BaseModel):
    """The `raw` of GET /emails/receiving/{id}: where the original message can be downloaded, for a
    while (never store the URL)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    download_url: str
    expires_at: str | None = None

    @field_validator("download_url")
    @classmethod
    def _fetchable(cls, value: str) -> str:
        return fetchable_url(value)


@dataclass(frozen=True)
class Listing:
    """An e-mail's attachments as listed: the ones that can be fetched, and what was wrong with the
    others (`unusable`: "item 3 (id 'x'): download_url: Field required") or merely unknown
    (`unknown_sizes`: the ids whose size was missing or unusable)."""

    attachments: list[Attachment] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    unknown_sizes: list[str] = field(default_factory=list)


def _usable_size(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)  # 5100.0: JavaScript writes no other kind of number
    return None


def _item(raw: Any, position: int, listing: Listing) -> None:
    """Adds one listed item to `listing`, as an attachment or as what made it unusable."""
    if not isinstance(raw, dict):
        listing.unusable.append(f"item {position}: not an object")
        return
    size = _usable_size(raw.get("size"))
    try:
        attachment = Attachment.model_validate({**raw, "size": size})
    except ValidationError as error:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'item'}: {e['msg']}" for e in error.errors())
        named = f" (id {raw['id']!r:.80})" if isinstance(raw.get("id"), str) else ""
        listing.unusable.append(f"item {position}{named}: {fields}")
        return
    if size is None:
        listing.unknown_sizes.append(attachment.id)
    listing.attachments.append(attachment)


@dataclass
class ReceivedEmail:
    """An item of the list of received e-mails: its id (the webhook's email_id), Resend's
    created_at, and the item itself (what the e-mail row keeps as its data)."""

    id: str
    created_at: datetime
    item: dict[str, Any]


# What an unreadable item shows of itself (to an operator who looks it up in Resend's dashboard),
# each value cut to this many characters.
_SHOWN_FIELDS = ("id", "created_at", "from", "to", "subject", "message_id")
_SHOWN_CHARS = 300
_SHOWN_FILES = 10


@dataclass(frozen=True)
class UnreadableEmail:
    """An item of the list of received e-mails that cannot be recorded: no usable id, or a
    created_at that is not a time or lies more than a day ahead of the database's clock. It may be
    a fax, so it is reported with what can be read of it (`shown`: its id, created_at, sender,
    recipients, subject, message id and file names, as listed, each cut short; a value that is no
    string as its JSON), once: `fingerprint` names the item across listings (its id's digest, or
    the whole item's when it has no usable id)."""

    position: int
    reason: str
    fingerprint: str
    id: str | None  # the item's id when it is a non-empty string
    shown: dict[str, Any]


@dataclass
class ReceivedPage:
    """A page of the list: the items that can be recorded, those that cannot, `has_more`, what
    names the page (its first and last items' ids, for a page that comes again) and the cursor of
    the next page (the last id on it that is a string, None when none is)."""

    has_more: bool
    emails: list[ReceivedEmail] = field(default_factory=list)
    unreadable: list[UnreadableEmail] = field(default_factory=list)
    size: int = 0
    signature: tuple[str, str] | None = None
    cursor: str | None = None

    @property
    def last_id(self) -> str | None:
        """The cursor of the next page: the id of the page's last item that has one."""
        return self.cursor


def parse_created_at(value: Any) -> datetime | None:
    """Resend's created_at (`2025-10-09 14:37:40.951732+00`, or ISO 8601 with a T), else None."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace(" ", "T", 1)
    if text.endswith(("+00", "-00")) or (len(text) > 3 and text[-3] in "+-" and text[-2:].isdigit()):
        text += ":00"
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _shown_value(value: Any) -> Any:
    if isinstance(value, str):
        return value[:_SHOWN_CHARS]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v[:_SHOWN_CHARS] for v in value[:_SHOWN_FILES]]
    return json.dumps(value, ensure_ascii=False)[:_SHOWN_CHARS]


def _shown(raw: dict[str, Any]) -> dict[str, Any]:
    shown = {name: _shown_value(raw[name]) for name in _SHOWN_FIELDS if name in raw}
    attachments = raw.get("attachments")
    if isinstance(attachments, list):
        names = [a.get("filename") for a in attachments if isinstance(a, dict)]
        shown["files"] = [n[:_SHOWN_CHARS] if isinstance(n, str) else None for n in names[:_SHOWN_FILES]]
    return shown


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def _unreadable(raw: Any, position: int, reason: str) -> UnreadableEmail:
    email_id = raw.get("id") if isinstance(raw, dict) else None
    usable_id = email_id if isinstance(email_id, str) and email_id else None
    fingerprint = f"id:{digest(usable_id)}" if usable_id else f"item:{digest(_canonical(raw))}"
    shown = _shown(raw) if isinstance(raw, dict) else {"item": _shown_value(raw)}
    return UnreadableEmail(position, reason, fingerprint, usable_id, shown)


def _received(raw: Any, position: int, not_after: datetime | None) -> ReceivedEmail | UnreadableEmail:
    """The item, or why it cannot be recorded. The reasons are fixed phrases: they reach an alert."""
    if not isinstance(raw, dict):
        return _unreadable(raw, position, "not an object")
    email_id, created_at = raw.get("id"), parse_created_at(raw.get("created_at"))
    if "id" not in raw:
        return _unreadable(raw, position, "no id")
    if not isinstance(email_id, str):
        return _unreadable(raw, position, "an id that is not a string")
    if not email_id:
        return _unreadable(raw, position, "an empty id")
    if created_at is None:
        return _unreadable(raw, position, "a created_at that is not a time")
    if not_after is not None and created_at > not_after:
        # Young until then, it would be left for its webhook on every run, silently, for ever.
        return _unreadable(raw, position, "a created_at more than a day ahead of the database's clock")
    return ReceivedEmail(email_id, created_at, raw)


def _page_signature(items: list[Any]) -> tuple[str, str] | None:
    """The page's first and last items' ids, as listed (a page that comes again has the same)."""
    if not items:
        return None
    ids = [_canonical(i.get("id")) if isinstance(i, dict) else _canonical(i) for i in (items[0], items[-1])]
    return ids[0], ids[1]


def _cursor(items: list[Any]) -> str | None:
    for raw in reversed(items):
        if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"]:
            return str(raw["id"])
    return None


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
    # An answer that is not Resend's JSON (Cloudflare's "error code: 1010" for a request without a
    # User-Agent, a proxy's page) keeps a short first line of it: it is what tells them apart.
    text = "" if body.name else response.text.strip().split("\n", 1)[0]
    shown = "".join(c if c.isprintable() else " " for c in text)[:120]
    return ResendError(
        response.status_code,
        body.name,
        body.message or shown or response.reason_phrase,
        parse_retry_after(response.headers.get("retry-after")),
    )


def _parse_page(content: bytes, what: str = "attachment list") -> tuple[bool, list[Any]]:
    """The page's has_more and its raw items (`what`: the list, for the messages)."""
    # Python's parser, not pydantic's: pydantic's JSON parser refuses a lone surrogate escape
    # ("\ud800", which JavaScript writes readily), and one odd file name would fail the whole job
    # as a malformed answer. lib/storable.py makes such text storable later.
    try:
        document = json.loads(content)
    except (ValueError, RecursionError):
        raise MalformedResponse(f"{what}: not JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise MalformedResponse(f"{what}: 'data' is not a list")
    has_more = document.get("has_more", False)
    if not isinstance(has_more, bool):
        raise MalformedResponse(f"{what}: 'has_more' is not true or false")
    return has_more, document["data"]


def received_email_path(email_id: str) -> str:
    """The received e-mail's path for an e-mail id, every character of the id escaped."""
    if email_id in ("", ".", ".."):
        raise InvalidEmailId(f"the e-mail id {email_id!r} cannot name a Resend e-mail")
    return f"/emails/receiving/{quote(email_id, safe='')}"


def email_path(email_id: str) -> str:
    """The listing's path for an e-mail id, every character of the id escaped."""
    return f"{received_email_path(email_id)}/attachments"


class Pacing(Protocol):
    """What the client asks before and tells after each API request (lib/worker/rate_limit.py)."""

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

    def list_attachments(self, email_id: str, deadline: Deadline | None = None) -> Listing:
        """Every attachment of a received e-mail, following the pagination."""
        listing = Listing()
        for position, raw in enumerate(self._iter_items(email_id, deadline), start=1):
            _item(raw, position, listing)
        return listing

    def raw_message(self, email_id: str, deadline: Deadline | None = None) -> RawMessage | None:
        """The `raw` of the received e-mail (GET /emails/receiving/{id}): where its original message
        downloads from, or None when Resend offers none (null, or no such member)."""
        content = self._get_json(received_email_path(email_id), {}, deadline)
        try:
            document = json.loads(content)
        except (ValueError, RecursionError):
            raise MalformedResponse("received e-mail: not JSON") from None
        if not isinstance(document, dict):
            raise MalformedResponse("received e-mail: not an object")
        raw = document.get("raw")
        if raw is None:
            return None
        try:
            return RawMessage.model_validate(raw)
        except ValidationError as error:
            fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'raw'}: {e['msg']}" for e in error.errors())
            raise MalformedResponse(f"received e-mail: raw: {fields}") from None

    def _iter_items(self, email_id: str, deadline: Deadline | None) -> Iterator[Any]:
        path = email_path(email_id)
        params: dict[str, str | int] = {"limit": PAGE_SIZE}
        for _ in range(MAX_PAGES):
            has_more, items = _parse_page(self._get_json(path, params, deadline))
            yield from items
            if not has_more:
                return
            if not items:
                raise MalformedResponse("attachment list: has_more with an empty page")
            last = items[-1].get("id") if isinstance(items[-1], dict) else None
            if not isinstance(last, str) or not last:
                raise MalformedResponse("attachment list: has_more after an item without an id to continue after")
            params["after"] = last
        raise MalformedResponse(f"attachment list: more than {MAX_PAGES} pages")

    def list_received(
        self, after: str | None, deadline: Deadline | None = None, not_after: datetime | None = None
    ) -> ReceivedPage:
        """One page of GET /emails/receiving (resend.com/docs/api-reference/emails/list-received-emails),
        `limit` always sent (one version of the page says that without it everything comes at once),
        after the e-mail id `after` (the cursor's own item is left out). Items are read one by one:
        one that cannot be recorded (no id, a created_at that is no time or later than `not_after`)
        is set apart as unreadable, and the page, whatever its size, is never refused for it."""
        params: dict[str, str | int] = {"limit": PAGE_SIZE}
        if after is not None:
            params["after"] = after
        has_more, items = _parse_page(self._get_json("/emails/receiving", params, deadline), "received e-mails")
        page = ReceivedPage(has_more=has_more, size=len(items), signature=_page_signature(items), cursor=_cursor(items))
        for position, raw in enumerate(items, start=1):
            read = _received(raw, position, not_after)
            if isinstance(read, ReceivedEmail):
                page.emails.append(read)
            else:
                page.unreadable.append(read)
        return page

    @contextlib.contextmanager
    def open_download(
        self, url: str, max_bytes: int, deadline: Deadline | None = None, expected_size: int | None = None
    ) -> Iterator[Download]:
        """The attachment's body, opened: its status and declared length are checked here (a
        DownloadError, or TooLarge for a Content-Length over max_bytes), its bytes stream from the
        Download the block iterates, and the response is closed when the block ends."""
        if deadline:
            deadline.check("download")
        headers = {"User-Agent": USER_AGENT}
        with contextlib.ExitStack() as opened:
            try:
                response = opened.enter_context(
                    self._http.stream("GET", url, headers=headers, timeout=self._timeout(deadline))
                )
            except httpx.HTTPError as error:
                raise _download_failure(error, deadline) from error
            if response.status_code != 200:
                raise DownloadError(response.status_code, f"download answered {response.status_code}")
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise TooLarge(f"{declared} bytes declared, the cap is {max_bytes}")
            yield Download(response, max_bytes, deadline, expected_size)

    def download(
        self, url: str, max_bytes: int, deadline: Deadline | None = None, expected_size: int | None = None
    ) -> bytes:
        """The attachment's bytes, whole (open_download's checks): for a caller that needs them all
        at once; the worker streams them to Storage instead."""
        with self.open_download(url, max_bytes, deadline, expected_size) as body:
            return b"".join(body)


class Download:
    """An attachment's body as it streams in, chunk by chunk (at most DOWNLOAD_CHUNK_BYTES each: what
    a job holds of it at a time), counted and hashed on the way. Iterating it raises TooLarge as soon
    as the bytes pass max_bytes, DeadlinePassed as soon as the deadline passes (checked between
    chunks), LengthMismatch when `expected_size` (the listing's) is known and the body is shorter
    (at its end) or longer (at the chunk that passes it), and DownloadError for a network failure.
    It can be iterated once; `finish` reads what a consumer left unread, with the same checks."""

    def __init__(self, response: httpx.Response, max_bytes: int, deadline: Deadline | None,
                 expected_size: int | None) -> None:  # fmt: skip
        self.expected_size = expected_size
        self.size = 0  # the bytes handed on so far
        self.complete = False  # the body ended, and every check held
        self._digest = hashlib.sha256()
        self._chunks = self._stream(response, max_bytes, deadline)

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes handed on so far (the whole body's once `complete`)."""
        return self._digest.hexdigest()

    @property
    def all_listed_sent(self) -> bool:
        """As many bytes handed on as the listing announced: a receiver told that length may hold a
        whole object, even if the body then went on or failed."""
        return self.expected_size is not None and self.size == self.expected_size

    def finish(self) -> None:
        """Reads the rest of the body, if any, with the same checks: a body that goes on past the
        listed size is found even when its consumer stopped at that size."""
        for _ in self._chunks:
            pass
        if not self.complete:
            raise DownloadError(None, "download: the body was not read to its end")

    def _stream(self, response: httpx.Response, max_bytes: int, deadline: Deadline | None) -> Iterator[bytes]:
        expected = self.expected_size
        try:
            # As the bytes arrive (httpcore reads at most 64 KiB at a time; iter_bytes with a
            # chunk_size would gather them, deadline unchecked), each cut to the bound.
            for arrived in response.iter_bytes():
                for start in range(0, len(arrived), DOWNLOAD_CHUNK_BYTES):
                    chunk = arrived[start : start + DOWNLOAD_CHUNK_BYTES]
                    received = self.size + len(chunk)
                    if expected is not None and received > expected:
                        raise LengthMismatch(200, f"more than the {expected} bytes listed")
                    if received > max_bytes:
                        raise TooLarge(f"more than {max_bytes} bytes")
                    self._digest.update(chunk)
                    self.size = received
                    yield chunk
                    if deadline and not self.all_listed_sent:  # once whole, only the end is left to read
                        deadline.check("download")
        except httpx.HTTPError as error:
            raise _download_failure(error, deadline) from error
        if expected is not None and self.size != expected:
            raise LengthMismatch(200, f"{self.size} bytes received, {expected} listed")
        self.complete = True


def _download_failure(error: httpx.HTTPError, deadline: Deadline | None) -> Exception:
    if isinstance(error, httpx.TimeoutException) and deadline and deadline.remaining() <= 0:
        return DeadlinePassed("download: the invocation's time budget ran out")
    return DownloadError(None, f"download failed: {type(error).__name__}")
