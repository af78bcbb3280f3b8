"""Faults in front of the Resend stand-in (devstack/standins/resend.py), for requests that match
them, per e-mail or at random with a seed: 5xx, 429 with retry-after, slow answers, timeouts, any
status with any name and message, 404, expired download URLs, a download whose Content-Length lies
(shorter: the body ends there; longer: the connection closes first), and listings edited item by
item (a size removed or fractional, an id repeated). The list of received e-mails (GET
/emails/receiving) takes only faults that name it (target "received"): its items edited the same
way, and the page itself misbehaving (the newest page whatever the cursor, has_more forced, the
items dropped, more items than `limit` allows).

On the API host: POST /_control/faults adds a Fault (its JSON), DELETE /_control/faults clears
them, GET /_control/faults counts those that fired, by kind (and status)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel

from devstack.standins.resend import EXPIRED, Answer, Handler, Hosts, error, json_body, read_download_token

DOWNLOAD_KINDS = ("status", "slow", "timeout", "expired_url", "short_body", "long_length")


class ListingEdit(BaseModel):
    """A change to one item of a listing page: fields set or removed, or the item listed twice."""

    index: int
    set: dict[str, Any] = {}
    unset: list[str] = []
    duplicate: bool = False


class Fault(BaseModel):
    """What to do instead of the normal answer, for matching requests, `count` times (None: always).

    A fault with target "any" matches every request of its e-mail (or of every e-mail), "list" its
    listings only, "download" its downloads only. short_body: a download's Content-Length and body
    cut to `length` bytes (a lying length the client cannot notice); long_length: a Content-Length
    `length` bytes longer than the body, and the connection closed after the body; edit_listing: a
    listing page with `edits` applied."""

    kind: Literal["status", "slow", "timeout", "expired_url", "short_body", "long_length", "edit_listing"]
    target: Literal["list", "download", "any", "received"] = "any"
    email_id: str | None = None  # None: any e-mail
    status: int = 500
    name: str | None = "application_error"  # None: a body that is not JSON (`message` as plain text)
    message: str | None = None
    retry_after: int | None = None
    delay_s: float = 0.0
    probability: float = 1.0
    count: int | None = None
    length: int = 20
    edits: list[ListingEdit] = []
    # edit_listing of the received list: the newest page whatever the cursor, has_more as given,
    # no items, or pages of this many items (past the 100 `limit` allows), gathered from the
    # stand-in's own pages: each one a request its team rate limit counts.
    first_page: bool = False
    has_more: bool | None = None
    drop_items: bool = False
    page_size: int | None = None


class ResendFaults:
    def __init__(self, seed: int = 0) -> None:
        self._faults: list[Fault] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.fired: Counter[str] = Counter()  # "status:503", "timeout:", ...

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, target: str, email_id: str | None, kinds: tuple[str, ...]) -> Fault | None:
        """The first fault that fires for this request, counted down."""
        with self._lock:
            for fault in self._faults:
                # The received list takes only the faults that name it: the others predate it.
                if fault.target not in (target, "any" if target != "received" else target):
                    continue
                if fault.email_id not in (None, email_id):
                    continue
                if fault.kind not in kinds or fault.count == 0 or self._rng.random() >= fault.probability:
                    continue
                if fault.count is not None:
                    fault.count -= 1
                self.fired[f"{fault.kind}:{fault.status if fault.kind == 'status' else ''}"] += 1
                return fault
        return None

    def wrap(self, hosts: Hosts) -> Hosts:
        return Hosts(self._api(hosts.api), self._downloads(hosts.downloads))

    def _api(self, answer: Handler) -> Handler:
        def api(method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
            path = urlsplit(target).path
            if path == "/_control/faults":
                return self._control(method, body)
            parts = [p for p in path.split("/") if p]
            if parts == ["emails", "receiving"]:
                return self._received(answer, method, target, headers, body)
            if parts[:2] != ["emails", "receiving"] or len(parts) not in (3, 4, 5):
                return answer(method, target, headers, body)
            email_id, listing = parts[2], len(parts) == 4
            fault = self.take("list" if listing else "any", email_id, ("status", "slow", "timeout"))
            answered = _apply(fault) if fault else None
            if answered:
                return answered
            normal = answer(method, target, headers, body)
            edit = self.take("list", email_id, ("edit_listing",)) if listing and normal[0] == 200 else None
            return _edited(normal, edit) if edit else normal

        return api

    def _received(self, answer: Handler, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        """GET /emails/receiving through the faults that name it."""
        fault = self.take("received", None, ("status", "slow", "timeout"))
        answered = _apply(fault) if fault else None
        if answered:
            return answered
        edit = self.take("received", None, ("edit_listing",))
        if edit is None:
            return answer(method, target, headers, body)
        url = urlsplit(target)
        query = dict(parse_qsl(url.query))
        if edit.first_page:
            query.pop("after", None)
        status, normal_headers, content = answer(method, f"{url.path}?{urlencode(query)}", headers, body)
        if status != 200:
            return status, normal_headers, content
        listing = json.loads(content)
        while edit.page_size and len(listing["data"]) < edit.page_size and listing["has_more"]:
            more = query | {
                "after": listing["data"][-1]["id"],
                "limit": str(min(100, edit.page_size - len(listing["data"]))),
            }
            next_status, next_headers, next_content = answer(method, f"{url.path}?{urlencode(more)}", headers, body)
            if next_status != 200:
                # Each page it gathers is a request Resend counts (its team rate limit): one that is
                # refused is this request's answer, as Resend refuses a request over the limit. An
                # exception here would drop the connection instead: a fault nobody asked for.
                return next_status, next_headers, next_content
            following = json.loads(next_content)
            listing["data"] += following["data"]
            listing["has_more"] = following["has_more"]
        if edit.drop_items:
            listing["data"] = []
        if edit.has_more is not None:
            listing["has_more"] = edit.has_more
        return _edited((status, normal_headers, json_body(listing)), edit)

    def _downloads(self, answer: Handler) -> Handler:
        def downloads(method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
            token = read_download_token(urlsplit(target).path.rsplit("/", 1)[-1])
            fault = self.take("download", token[1][0], DOWNLOAD_KINDS) if token else None
            if fault is None:
                return answer(method, target, headers, body)
            if fault.kind == "expired_url":
                return EXPIRED
            answered = _apply(fault) if fault.kind in ("status", "slow", "timeout") else None
            if answered:
                return answered
            status, normal_headers, content = answer(method, target, headers, body)
            if status != 200 or fault.kind not in ("short_body", "long_length"):
                return status, normal_headers, content
            if fault.kind == "short_body":
                return status, normal_headers, content[: fault.length]
            return status, normal_headers | {"Content-Length": str(len(content) + fault.length)}, content

        return downloads

    def _control(self, method: str, body: bytes) -> Answer:
        if method == "POST":
            self.add(Fault.model_validate(json.loads(body or b"{}")))
            return 201, {"Content-Type": "application/json"}, json_body({"ok": True})
        if method == "DELETE":
            self.clear()
        return 200, {"Content-Type": "application/json"}, json_body(dict(self.fired))


def wrap(hosts: Hosts) -> Hosts:
    """What the stand-in's start calls when the stack names this layer."""
    return ResendFaults().wrap(hosts)


def _apply(fault: Fault) -> Answer | None:
    """The faulty answer, or None when the fault only delays the normal one."""
    if fault.kind in ("slow", "timeout"):
        time.sleep(fault.delay_s)
        return None if fault.kind == "slow" else (0, {}, b"")  # status 0: the connection dropped
    message = fault.message or f"injected {fault.status}"
    if fault.name is None:
        return fault.status, {"Content-Type": "text/plain; charset=UTF-8"}, message.encode()
    status, headers, body = error(fault.status, fault.name, message)
    if fault.retry_after is not None:
        headers["retry-after"] = str(fault.retry_after)
    return status, headers, body


def _edited(answer: Answer, fault: Fault) -> Answer:
    status, headers, body = answer
    listing = json.loads(body)
    page = listing["data"]
    for change in fault.edits:
        if change.duplicate:
            page.append(dict(page[change.index]))
            continue
        page[change.index].update(change.set)
        for name in change.unset:
            page[change.index].pop(name, None)
    return status, headers, json_body(listing)
