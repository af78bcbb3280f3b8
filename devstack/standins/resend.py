"""A Resend-compatible sample provider, local stack only: the receiving API the worker calls.

Same public API as Resend's receiving endpoints (paths, pagination, error bodies, rate-limit
headers, one-hour download URLs), serving e-mails added through its Python API or its control
endpoints (/_control/...). Its refusals are the ones Resend documents today:

- resend.com/docs/api-reference/errors: a key that does not exist or was deleted (and any
  Authorization that is not a key) is 400 validation_error "API key is invalid" from every
  endpoint but sending (older pages said 403 invalid_api_key); no Authorization is 401
  missing_api_key "Missing API key in the authorization header."; a sending-only key is 401
  restricted_api_key "This API key is restricted to only send emails."; an unknown route is 404
  not_found "The requested endpoint does not exist."; another method 405 method_not_allowed.
- resend.com/docs/knowledge-base/403-error-1010: a request without a User-Agent is refused
  before it reaches the API, with 403 and the plain-text body "error code: 1010" (not JSON).
- resend.com/docs/api-reference/emails/list-received-emails and api-reference/pagination: GET
  /emails/receiving lists the received e-mails, `limit` 1 to 100 (anything else: 422
  validation_error; the stand-in always wants it, as the product always sends it), `after` or
  `before` an e-mail id whose own item is left out, {"object": "list", "has_more", "data"}; each
  item has id, to, from, created_at ("2025-10-09 14:37:40.951732+00": a space, not "T"),
  subject, bcc, cc, reply_to, message_id and the attachments' metadata without download URLs.
  No page states an order: the stand-in lists newest first but shuffles each run of
  LIST_SHUFFLE e-mails among themselves, so an e-mail may come a page after an older one.
- resend.com/docs/dashboard/receiving/attachments and the SDK's resend/emails/_received_email.py:
  each listed attachment has id, filename, content_type, content_disposition, content_id,
  download_url (valid for an hour), expires_at, and `size`, which the SDK types NotRequired.
- resend.com/docs/api-reference/emails/retrieve-received-email: GET /emails/receiving/{id}
  answers the e-mail with `raw`, "object | null": {"download_url": a signed URL of the original
  message (the .eml, attachments included), "expires_at": ISO 8601}. The stand-in serves the
  message from its download host (an RFC 5322 message with its attachments in base64, the same
  bytes every time), or answers `raw` null for an e-mail added with "raw": false.

An e-mail added through the control endpoint (POST /_control/emails) is received without any
webhook: the tests deliver the webhook themselves (devstack/tools/inbound.py), or not at all. Its
body says what the e-mail is: {"attachments": n} sample PDFs, or {"attachments": [{"filename",
"content_type", "content_base64"}, ...]} the files given (a real TIFF, as `make faxes FILE=...`
sends), or {"sample": "efax" | "invoice"} one of the faxes of devstack/standins/sample_faxes.py;
and "from", "to", "subject" override the sample's; "raw": false makes Resend offer no raw message.
The key it accepts can be marked deleted (POST /_control/key {"deleted": true}) and restored.
Faults that Resend does not choose to answer (5xx, timeouts, lying lengths, edited listings) are
not the stand-in's: a fault layer wraps its two hosts' handlers (Hosts, devstack/standins/layer.py).

It enforces the team's rate limit as Resend documents it (TeamRateLimit below; 5 requests a
second unless told otherwise), and serves the download URLs from a host of its own, as Resend's
come from a storage host, not from api.resend.com.

python -m devstack.standins.resend --port-file FILE [--rate-limit N]   (RESEND_API_KEY: the key
it accepts; --rate-limit 0: no limit)
"""

from __future__ import annotations

import argparse
import base64
import email.utils
import hashlib
import hmac
import json
import math
import os
import random
import re
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from uuid import uuid4

from devstack.standins import sample_faxes
from devstack.standins.layer import fault_layer
from devstack.standins.sample_faxes import FILENAMES, pdf

Clock = Callable[[], float]
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class SampleAttachment:
    filename: str | None
    content_type: str
    content: bytes
    id: str = field(default_factory=lambda: str(uuid4()))


@dataclass(frozen=True)
class SampleEmail:
    email_id: str
    attachments: tuple[SampleAttachment, ...]
    sender: str = "fax-gateway@example.jp"
    to: tuple[str, ...] = ("faxes@example.com",)
    subject: str = "FAX受信"
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    raw: bool = True  # whether the retrieve answer offers the raw message (else `raw` is null)

    def raw_message(self) -> bytes:
        """The e-mail as Resend received it: an RFC 5322 message, MIME multipart/mixed, its text and
        its attachments in base64; the same bytes every time (a boundary of the e-mail's own)."""
        boundary = "=_" + hashlib.sha256(self.email_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        created = datetime.fromisoformat(self.created_at)
        lines = [
            f"From: {_header_text(self.sender)}",
            f"To: {', '.join(_header_text(to) for to in self.to)}",
            f"Subject: {_encoded_word(self.subject)}",
            f"Date: {email.utils.format_datetime(created if created.tzinfo else created.replace(tzinfo=UTC))}",
            f"Message-ID: <{_header_text(self.email_id)}@fax.example.jp>",
            "MIME-Version: 1.0",
            f'Content-Type: multipart/mixed; boundary="{boundary}"',
            "",
            f"--{boundary}",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: base64",
            "",
            *_base64_lines("FAXを受信しました。\n".encode()),
        ]
        for attachment in self.attachments:
            name = "" if attachment.filename is None else f'; filename="{_encoded_word(attachment.filename)}"'
            lines += [
                f"--{boundary}",
                f"Content-Type: {_header_text(attachment.content_type)}",
                "Content-Transfer-Encoding: base64",
                f"Content-Disposition: attachment{name}",
                "",
                *_base64_lines(attachment.content),
            ]
        lines += [f"--{boundary}--", ""]
        return "\r\n".join(lines).encode("ascii")

    def list_item(self) -> dict[str, Any]:
        """The e-mail as GET /emails/receiving lists it: metadata, no download URLs."""
        data = self.webhook_data()
        return {
            "id": self.email_id,
            "to": data["to"],
            "from": data["from"],
            "created_at": listing_time(self.created_at),
            "subject": data["subject"],
            "bcc": [],
            "cc": [],
            "reply_to": [],
            "message_id": data["message_id"],
            "attachments": [
                a | {"size": len(attachment.content)}
                for a, attachment in zip(data["attachments"], self.attachments, strict=True)
            ],
        }

    def webhook_data(self) -> dict[str, Any]:
        """The `data` of the email.received event Resend sends for this e-mail."""
        return {
            "email_id": self.email_id,
            "created_at": self.created_at,
            "from": self.sender,
            "to": list(self.to),
            "cc": [],
            "bcc": [],
            "message_id": f"<{self.email_id}@fax.example.jp>",
            "subject": self.subject,
            "attachments": [
                {"id": a.id, "filename": a.filename, "content_type": a.content_type,
                 "content_disposition": "attachment", "content_id": None}
                for a in self.attachments
            ],
        }  # fmt: skip


def _header_text(text: str) -> str:
    """Text a header can hold as it is: printable ASCII, anything else as "?"."""
    return "".join(c if " " <= c <= "~" else "?" for c in text)


def _encoded_word(text: str) -> str:
    """RFC 2047's B encoding of UTF-8 text (a lone surrogate as U+FFFD)."""
    data = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode()
    return f"=?UTF-8?B?{base64.b64encode(data).decode()}?="


def _base64_lines(data: bytes) -> list[str]:
    encoded = base64.b64encode(data).decode()
    return [encoded[start : start + 76] for start in range(0, len(encoded), 76)]


def listing_time(iso: str) -> str:
    """An ISO time as the list of received e-mails writes it: `2025-10-09 14:37:40.951732+00`."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


# One answer: (status, headers, body). Status 0: no answer, the connection is closed; a
# Content-Length among the headers is sent as it is, and the connection closed after the body.
Answer = tuple[int, dict[str, str], bytes]
# A host's request handler: (method, target, headers with lower-case names, body) -> its answer.
Handler = Callable[[str, str, dict[str, str], bytes], Answer]


@dataclass(frozen=True)
class Hosts:
    """The handlers of the API host and of the download host."""

    api: Handler
    downloads: Handler


def sample_email(
    email_id: str | None = None, attachment_count: int = 2, rng: random.Random | None = None
) -> SampleEmail:
    rng = rng or random.Random()
    attachments = tuple(
        SampleAttachment(
            filename=FILENAMES[(n + rng.randrange(len(FILENAMES))) % len(FILENAMES)],
            content_type="application/pdf",
            content=pdf(f"FAX {email_id or ''} part {n + 1}", page_count=1 + rng.randrange(3)),
        )
        for n in range(attachment_count)
    )
    return SampleEmail(email_id or str(uuid4()), attachments)


def efax_email(email_id: str | None = None) -> SampleEmail:
    """A fax as an eFax-style service delivers it: a 3-page CCITT G4 TIFF at standard resolution,
    the sender's number only in the subject."""
    tiff = SampleAttachment(sample_faxes.EFAX_FILENAME, "image/tiff", sample_faxes.fax_tiff())
    return SampleEmail(email_id or str(uuid4()), (tiff,), sample_faxes.EFAX_SENDER, subject=sample_faxes.EFAX_SUBJECT)


def invoice_email(email_id: str | None = None) -> SampleEmail:
    """A PDF invoice from 株式会社山田商事, its Japanese text in a font it does not embed."""
    invoice = SampleAttachment(sample_faxes.INVOICE_FILENAME, "application/pdf", sample_faxes.invoice_pdf())
    return SampleEmail(email_id or str(uuid4()), (invoice,), sample_faxes.INVOICE_SENDER,
                       subject=sample_faxes.INVOICE_SUBJECT)  # fmt: skip


SAMPLES: dict[str, Callable[[str | None], SampleEmail]] = {"efax": efax_email, "invoice": invoice_email}


def given_email(email_id: str | None, files: list[dict[str, Any]]) -> SampleEmail:
    """An e-mail carrying the files given: [{"filename", "content_type", "content_base64"}, ...]."""
    attachments = tuple(
        SampleAttachment(
            file.get("filename"),
            file.get("content_type") or "application/octet-stream",
            base64.b64decode(file["content_base64"], validate=True),
        )
        for file in files
    )
    return SampleEmail(email_id or str(uuid4()), attachments)


# Resend's api-reference/rate-limit: "5 requests per second per team" by default (an older page
# said 2), shared by every API key of the team.
RESEND_RATE_LIMIT = 5
# The list of received e-mails promises no order: runs of this many come shuffled.
LIST_SHUFFLE = 10
WINDOW_S = 1.0


class TeamRateLimit:
    """Resend's team-wide rate limit (docs: api-reference/rate-limit; api-reference/errors for the
    429), as its headers describe it, after every authenticated API request:

    - ratelimit-limit: the most requests allowed within a window (one second);
    - ratelimit-remaining: how many are left within the current window;
    - ratelimit-reset: how many seconds until the limit resets (delta seconds, as in the IETF
      draft the page cites, not a timestamp);
    - over the limit: 429 `rate_limit_exceeded`, "Too many requests. Please limit the number of
      requests per second. Or contact support to increase rate limit.", with retry-after, how many
      seconds to wait before a follow-up request.

    The page does not say where a window begins. The strictest reading is used: no span of one
    second, wherever it starts, admits more than the limit (a fixed window, however aligned,
    admits everything this does). Refused requests do not fill the window.

    Downloads go to another host, about which Resend's pages say nothing: they are not limited,
    but counted, with whether each would have been refused had it counted toward the limit.
    Every API request's arrival is kept, admitted or not, so that a test can measure the busiest
    second at this end.
    """

    def __init__(self, per_second: int | None = RESEND_RATE_LIMIT, clock: Clock = time.monotonic) -> None:
        self.per_second = per_second or None
        self._clock = clock
        self._lock = threading.Lock()
        self._admitted: deque[float] = deque()  # admitted API requests of the last second
        self._with_downloads: deque[float] = deque()  # the same, had downloads counted too
        self.arrivals: list[float] = []
        self.refused = 0
        self.downloads = 0
        self.downloads_over_limit = 0

    def admit(self) -> tuple[bool, dict[str, str]]:
        """Whether this API request is admitted, and the ratelimit-* headers of its answer (with
        retry-after when it is not)."""
        now = self._clock()
        with self._lock:
            self.arrivals.append(now)
            if self.per_second is None:
                return True, {}
            _expire(self._admitted, now)
            _expire(self._with_downloads, now)
            admitted = len(self._admitted) < self.per_second
            if admitted:
                self._admitted.append(now)
                self._with_downloads.append(now)
            else:
                self.refused += 1
            reset = max(1, math.ceil(self._admitted[0] + WINDOW_S - now)) if self._admitted else 1
            headers = {
                "ratelimit-limit": str(self.per_second),
                "ratelimit-remaining": str(self.per_second - len(self._admitted)),
                "ratelimit-reset": str(reset),
            }
        if not admitted:
            headers["retry-after"] = str(reset)
        return admitted, headers

    def download(self) -> None:
        now = self._clock()
        with self._lock:
            self.downloads += 1
            if self.per_second is None:
                return
            _expire(self._with_downloads, now)
            if len(self._with_downloads) < self.per_second:
                self._with_downloads.append(now)
            else:
                self.downloads_over_limit += 1

    def busiest_second(self) -> int:
        """The most API requests (admitted or refused) that arrived within any one second."""
        with self._lock:
            arrivals = sorted(self.arrivals)
        most, start = 0, 0
        for end, at in enumerate(arrivals):
            while at - arrivals[start] >= WINDOW_S:
                start += 1
            most = max(most, end - start + 1)
        return most

    def stats(self) -> dict[str, Any]:
        return {
            "per_second": self.per_second,
            "requests": len(self.arrivals),
            "refused": self.refused,
            "busiest_second": self.busiest_second(),
            "downloads": self.downloads,
            "downloads_over_limit_if_counted": self.downloads_over_limit,
        }


def _expire(window: deque[float], now: float) -> None:
    while window and now - window[0] >= WINDOW_S:
        window.popleft()


class ResendProvider:
    def __init__(
        self,
        api_key: str,
        seed: int = 0,
        url_ttl_s: int = 3600,
        restricted_key: str | None = None,
        rate_limit: int | None = RESEND_RATE_LIMIT,
    ) -> None:
        self.api_key = api_key
        self.key_deleted = False
        self.restricted_key = restricted_key  # a sending-only key, which receiving refuses
        self.url_ttl_s = url_ttl_s
        self.url = ""
        self.downloads_url = ""  # the download host
        self.rate_limit = TeamRateLimit(rate_limit)
        self._emails: dict[str, SampleEmail] = {}
        self._received: list[str] = []  # e-mail ids in the order they were received
        self.list_shuffle = LIST_SHUFFLE
        self._list_seed = seed
        self._rng = random.Random(seed)
        self._signing_key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # "list", "download", "email", "rate_limited", ...

    def add_email(self, email: SampleEmail) -> SampleEmail:
        with self._lock:
            if email.email_id not in self._emails:
                self._received.append(email.email_id)
            self._emails[email.email_id] = email
        return email

    def listing_order(self) -> list[SampleEmail]:
        """The e-mails in the order the list serves them: newest first, each run of list_shuffle
        shuffled among themselves (the same shuffle on every call, so the cursors stay valid)."""
        with self._lock:
            emails = [self._emails[i] for i in self._received]
        emails.sort(key=lambda e: datetime.fromisoformat(e.created_at), reverse=True)
        if self.list_shuffle > 1:
            rng = random.Random(self._list_seed)
            for start in range(0, len(emails), self.list_shuffle):
                run = emails[start : start + self.list_shuffle]
                rng.shuffle(run)
                emails[start : start + self.list_shuffle] = run
        return emails

    def download_url(self, email_id: str, attachment_id: str, expires: int) -> str:
        payload = f"{email_id}/{attachment_id}/{expires}".encode()
        signature = hmac.new(self._signing_key, payload, hashlib.sha256).hexdigest()
        return f"{self.downloads_url}/_downloads/{base64.urlsafe_b64encode(payload).decode()}?signature={signature}"

    def _raw_item(self, email: SampleEmail) -> dict[str, Any] | None:
        """The retrieve answer's `raw`: the original message's download URL (an empty attachment id
        in its token names the message: no attachment's id is empty), or null."""
        if not email.raw:
            return None
        expires = int(time.time()) + self.url_ttl_s
        return {
            "download_url": self.download_url(email.email_id, "", expires),
            "expires_at": datetime.fromtimestamp(expires, UTC).isoformat(),
        }

    def _attachment_item(self, email: SampleEmail, attachment: SampleAttachment) -> dict[str, Any]:
        expires = int(time.time()) + self.url_ttl_s
        return {
            "id": attachment.id,
            "filename": attachment.filename,
            "content_type": attachment.content_type,
            "content_id": None,
            "content_disposition": "attachment",
            "size": len(attachment.content),
            "download_url": self.download_url(email.email_id, attachment.id, expires),
            "expires_at": datetime.fromtimestamp(expires, UTC).isoformat(),
        }

    def hosts(self) -> Hosts:
        return Hosts(self.api, self.downloads)

    def api(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        """A request to the API host: Resend's receiving API, or the control endpoints."""
        if target.startswith("/_control/"):
            return self.control(method, target, body)
        return self.handle(method, target, headers)

    def handle(self, method: str, target: str, headers: dict[str, str]) -> Answer:
        """One request to the receiving API."""
        parts = urlsplit(target)
        path = [p for p in parts.path.split("/") if p]
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if not headers.get("user-agent"):  # refused in front of the API (Cloudflare), as plain text
            return 403, {"Content-Type": "text/plain; charset=UTF-8"}, b"error code: 1010"
        refused = self._refuse_key(headers.get("authorization", ""))
        if refused:
            return refused
        if path[:2] != ["emails", "receiving"] or len(path) not in (2, 3, 4, 5):
            return error(404, "not_found", "The requested endpoint does not exist.")
        if method != "GET":
            return error(405, "method_not_allowed", "Method is not allowed for the requested path.")
        admitted, limit_headers = self.rate_limit.admit()
        if not admitted:
            self.requests["rate_limited"] += 1
            status, headers, body = error(429, "rate_limit_exceeded", RATE_LIMIT_MESSAGE)
            return status, headers | limit_headers, body
        status, headers, body = self._api(path, query)
        return status, headers | limit_headers, body

    def downloads(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        """A request to the download host."""
        parts = urlsplit(target)
        path = [p for p in parts.path.split("/") if p]
        if method != "GET" or path[:1] != ["_downloads"] or len(path) != 2:
            return 404, {"Content-Type": "application/xml"}, b"<Error><Code>NoSuchKey</Code></Error>"
        self.rate_limit.download()
        return self._download(path[1], {k: v[0] for k, v in parse_qs(parts.query).items()}.get("signature", ""))

    def _api(self, path: list[str], query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if len(path) == 2:
            self.requests["received"] += 1
            return self._list_received(query)
        email_id = path[2]
        kind = "list" if len(path) == 4 else "email" if len(path) == 3 else "attachment"
        self.requests[kind] += 1
        email = self._emails.get(email_id)
        if email is None or (len(path) >= 4 and path[3] != "attachments"):
            return error(404, "not_found", "Email not found")
        if kind == "email":
            body = email.webhook_data() | {"object": "email", "id": email.email_id, "raw": self._raw_item(email)}
            return _json(200, body)
        if kind == "attachment":
            found = [a for a in email.attachments if a.id == path[4]]
            return (
                _json(200, self._attachment_item(email, found[0]))
                if found
                else error(404, "not_found", "Attachment not found")
            )
        return self._list(email, query)

    def _refuse_key(self, authorization: str) -> tuple[int, dict[str, str], bytes] | None:
        if not authorization:
            return error(401, "missing_api_key", "Missing API key in the authorization header.")
        if self.restricted_key and hmac.compare_digest(
            authorization.encode(), f"Bearer {self.restricted_key}".encode()
        ):
            return error(401, "restricted_api_key", "This API key is restricted to only send emails.")
        if self.key_deleted or not hmac.compare_digest(authorization.encode(), f"Bearer {self.api_key}".encode()):
            return error(400, "validation_error", "API key is invalid")
        return None

    def _list(self, email: SampleEmail, query: dict[str, str]) -> Answer:
        limit = max(1, min(int(query.get("limit", "20")) if query.get("limit", "").isdigit() else 20, 100))
        items = list(email.attachments)
        if "after" in query:
            ids = [a.id for a in items]
            items = items[ids.index(query["after"]) + 1 :] if query["after"] in ids else []
        page = [self._attachment_item(email, a) for a in items[:limit]]
        return _json(200, {"object": "list", "has_more": len(items) > limit, "data": page})

    def _list_received(self, query: dict[str, str]) -> Answer:
        """GET /emails/receiving (resend.com/docs/api-reference/emails/list-received-emails)."""
        raw_limit = query.get("limit")
        if raw_limit is None or not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 100:
            return error(422, "validation_error", "The `limit` parameter must be a number between 1 and 100.")
        if "after" in query and "before" in query:
            return error(422, "validation_error", "You can only use `after` or `before`, not both.")
        limit = int(raw_limit)
        emails = self.listing_order()
        ids = [e.email_id for e in emails]
        if "after" in query:
            emails = emails[ids.index(query["after"]) + 1 :] if query["after"] in ids else []
            page, has_more = emails[:limit], len(emails) > limit
        elif "before" in query:
            emails = emails[: ids.index(query["before"])] if query["before"] in ids else []
            page, has_more = emails[-limit:], len(emails) > limit
        else:
            page, has_more = emails[:limit], len(emails) > limit
        return _json(200, {"object": "list", "has_more": has_more, "data": [e.list_item() for e in page]})

    def _download(self, token: str, signature: str) -> Answer:
        self.requests["download"] += 1
        read = read_download_token(token)
        if read is None:
            return 403, {"Content-Type": "application/xml"}, b"<Error><Code>AccessDenied</Code></Error>"
        payload, (email_id, attachment_id, expires) = read
        expected = hmac.new(self._signing_key, payload, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature) or int(expires) < time.time():
            return EXPIRED
        email = self._emails.get(email_id)
        if email is not None and attachment_id == "" and email.raw:
            return 200, {"Content-Type": "message/rfc822"}, email.raw_message()
        found = [a for a in email.attachments if a.id == attachment_id] if email else []
        if not found:
            return 404, {"Content-Type": "application/xml"}, b"<Error><Code>NoSuchKey</Code></Error>"
        return 200, {"Content-Type": found[0].content_type}, found[0].content

    def control(self, method: str, path: str, body: bytes) -> Answer:
        """The control endpoints the demo and the chaos run use from another process."""
        request = json.loads(body or b"{}")
        if (method, path) == ("POST", "/_control/emails"):  # received, no webhook delivered
            return _json(201, self._received_email(request).webhook_data())
        if (method, path) == ("POST", "/_control/emails/batch"):  # {"count": n, ...}: n e-mails
            count = int(request.get("count", 1))
            return _json(201, [self._received_email(request | {"email_id": None}).webhook_data() for _ in range(count)])
        if (method, path) == ("POST", "/_control/emails/clear"):  # Resend forgets every e-mail
            with self._lock:
                self._emails.clear()
                self._received.clear()
            return _json(200, {"cleared": True})
        if (method, path) == ("POST", "/_control/listing"):  # {"shuffle": n}: runs shuffled (0: none)
            self.list_shuffle = int(request.get("shuffle", LIST_SHUFFLE))
            return _json(200, {"shuffle": self.list_shuffle})
        if (method, path) == ("GET", "/_control/stats"):
            return _json(200, dict(self.requests))
        if (method, path) == ("GET", "/_control/rate_limit"):
            return _json(200, self.rate_limit.stats())
        if (method, path) == ("POST", "/_control/rate_limit"):  # a new limit (null: none), and counts from zero
            self.rate_limit = TeamRateLimit(request.get("per_second", RESEND_RATE_LIMIT))
            return _json(200, self.rate_limit.stats())
        if (method, path) == ("POST", "/_control/key"):
            self.key_deleted = bool(request.get("deleted"))
            return _json(200, {"deleted": self.key_deleted})
        if (method, path) == ("GET", "/_control/attachments"):
            with self._lock:
                emails = list(self._emails.values())
            digests = {a.id: hashlib.sha256(a.content).hexdigest() for email in emails for a in email.attachments}
            return _json(200, digests)
        return error(404, "not_found", "Route not found")

    def _received_email(self, request: dict[str, Any]) -> SampleEmail:
        """An e-mail received now, or `age_seconds` ago: sample PDFs, the files given, or a named
        sample, from and about whom the request says."""
        given = request.get("attachments", 2)
        if request.get("sample"):
            email = SAMPLES[request["sample"]](request.get("email_id"))
        elif isinstance(given, list):
            email = given_email(request.get("email_id"), given)
        else:
            email = sample_email(request.get("email_id"), int(given), self._rng)
        if request.get("from"):
            email = replace(email, sender=str(request["from"]))
        if request.get("to"):
            email = replace(email, to=tuple(str(to) for to in request["to"]))
        if request.get("subject") is not None:
            email = replace(email, subject=str(request["subject"]))
        if request.get("raw") is not None:
            email = replace(email, raw=bool(request["raw"]))
        if request.get("age_seconds"):
            at = datetime.now(UTC).timestamp() - float(request["age_seconds"])
            email = replace(email, created_at=datetime.fromtimestamp(at, UTC).isoformat())
        return self.add_email(email)

    @contextmanager
    def serve(self, front: Callable[[Hosts], Hosts] | None = None) -> Iterator[str]:
        """Serve the API and the download host on free loopback ports in threads, through `front`
        if given (a fault layer); yields the API's base URL."""
        hosts = front(self.hosts()) if front else self.hosts()
        servers = [
            ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(handler)) for handler in (hosts.api, hosts.downloads)
        ]
        self.url, self.downloads_url = (f"http://127.0.0.1:{server.server_address[1]}" for server in servers)
        for server in servers:
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        try:
            yield self.url
        finally:
            for server in servers:
                server.shutdown()
                server.server_close()


RATE_LIMIT_MESSAGE = (
    "Too many requests. Please limit the number of requests per second. Or contact support to increase rate limit."
)


EXPIRED: Answer = (
    403,
    {"Content-Type": "application/xml"},
    b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
)


def read_download_token(token: str) -> tuple[bytes, list[str]] | None:
    """A download URL's token: its signed payload and (email id, attachment id, expiry), or None."""
    try:
        payload = base64.urlsafe_b64decode(token.encode())
        parts = payload.decode().split("/")
    except ValueError:
        return None
    return (payload, parts) if len(parts) == 3 else None


def json_body(body: Any) -> bytes:
    """As JavaScript's JSON.stringify writes it: UTF-8, and a lone surrogate (an id or a name set
    by a test) as its \\u escape."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(body, ensure_ascii=False)).encode()


def _json(status: int, body: Any) -> Answer:
    headers = {"Content-Type": "application/json", "ratelimit-limit": "5", "ratelimit-remaining": "4",
               "ratelimit-reset": "1"}  # fmt: skip
    return status, headers, json_body(body)


def error(status: int, name: str, message: str) -> Answer:
    """An error as Resend's API answers it."""
    return _json(status, {"statusCode": status, "name": name, "message": message})


def _handler_for(handle: Handler) -> type[BaseHTTPRequestHandler]:

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # see devstack/standins/gateway.py

        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, response_headers, payload = handle(self.command, self.path, headers, body)
            if status == 0:
                self.close_connection = True
                return
            self.send_response(status)
            for name, value in response_headers.items():
                self.send_header(name, value)
            if "Content-Length" in response_headers:  # a length of its own: the body may not end there
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description="Resend-compatible sample provider (local stack only)")
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rate-limit", type=int, default=RESEND_RATE_LIMIT, help="requests a second; 0: no limit")
    args = parser.parse_args()
    provider = ResendProvider(os.environ["RESEND_API_KEY"], seed=args.seed, rate_limit=args.rate_limit)
    layer = fault_layer("resend")
    with provider.serve(layer.wrap if layer else None) as url:
        args.port_file.write_text(url.rsplit(":", 1)[1])
        threading.Event().wait()


if __name__ == "__main__":
    main()
