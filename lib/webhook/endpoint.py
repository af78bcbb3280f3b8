"""The inbound e-mail webhook: verify the signature of the raw body, parse the event,
record the e-mail (which enqueues its job and kicks the worker, in the database) in one call.

Answers non-2xx only when the e-mail was not durably recorded, so that Resend redelivers; a
redelivery carries the same svix-id and e-mail id, and record_inbound_email returns what it
recorded the first time. A signed event that can be stored at all is recorded: a field the row
cannot use (a `created_at` that is not a date and time) is left empty with a warning, and a
number Python's JSON cannot carry on exactly is kept as text; only a body that is not JSON, or an
event without an e-mail id the worker could ever fetch, is refused (400).

Svix waits about 15 s for an answer and retries a delivery that gets none: the request has one
DEADLINE, and a database that has not answered by then gets a 500 (not_recorded) before Svix gives
up on its own. Should the call still commit afterwards, the redelivery finds the e-mail (duplicate).
"""

from __future__ import annotations

import base64
import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from math import floor
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from standardwebhooks.webhooks import Webhook, WebhookVerificationError, hmac_data

from lib import log
from lib.budget import Deadline
from lib.errors import DatabaseError, Refusal
from lib.http_shell import Answer
from lib.settings import ConfigError, WebhookSettings
from lib.storable import REPLACED_KEY, pointers_to, storable_id, storable_json, storable_text
from lib.supabase.client import deadline_client, service_client
from lib.supabase.rpc import execute

# The whole request, from the handler's start to the database's answer; under Svix's ~15 s, with
# room for a cold start before the handler runs, and under the function's maxDuration (vercel.json).
DEADLINE = timedelta(seconds=10)

# PostgREST's answers for a database connection it could not make or lost (docs: errors, PGRST000 and
# PGRST001): the first call through a pooled connection after a database restart gets one. The call
# is made again, a few times within the deadline: record_inbound_email is idempotent by the e-mail's
# id, so a call that did commit before its connection broke is answered `duplicate` the second time.
CONNECTION_LOST = frozenset({"PGRST000", "PGRST001"})
ATTEMPTS = 3
PAUSE_S = 0.2
MAX_EMAIL_ID_LENGTH = 200  # Resend's ids are UUIDs (36 characters)
# The webhook stores, under this key of the e-mail's `data`, the JSON Pointers of numbers it kept as text.
NUMBERS_AS_TEXT_KEY = "_document_jobs_numbers_as_text"
# What record_inbound_email takes as the received time (document_jobs_internal.try_timestamptz,
# supabase/migrations/20261201002000_document_jobs_strict_received_at.sql; tests/database/test_bad_arguments.py
# holds the two to the same answers): an ISO 8601 date and time, nothing Postgres reads specially
# ("now", "infinity", "yesterday", "epoch", "today").
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?"
)


class ReceivedEmailData(BaseModel):
    """`data` of an email.received event: metadata only. Everything but the id is optional here,
    so that an e-mail is never lost over a field; the whole object is stored as received, but for
    text Postgres cannot store (lib/storable.py)."""

    model_config = ConfigDict(extra="allow")

    email_id: str = Field(min_length=1)


class Event(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    data: dict[str, Any]


class RecordedEmail(BaseModel):
    """What record_inbound_email answers."""

    fax_received_email_id: str
    job_id: str | None
    duplicate: bool


def error(status: int, code: str, message: str) -> Answer:
    return status, {"error": code, "message": message}


class _RawBodyWebhook(Webhook):
    """The Standard Webhooks scheme signs the body's bytes, but the library signs text it encodes as
    UTF-8, so a signed body that is not UTF-8 could never verify (a 401 for what is a malformed
    body, 400). The body comes here decoded with surrogateescape, which encodes back to exactly
    its bytes; the rest (headers, tolerance, several signatures) is the library's."""

    def sign(self, msg_id: str, timestamp: datetime, data: str) -> str:
        timestamp_str = str(floor(timestamp.replace(tzinfo=UTC).timestamp()))
        signature = hmac_data(self._whsecret, f"{msg_id}.{timestamp_str}.{data}".encode("utf-8", "surrogateescape"))
        return f"v1,{base64.b64encode(signature).decode()}"


def verify(settings: WebhookSettings, headers: Mapping[str, str], body: bytes) -> bool:
    """Resend signs with Svix: the standard-webhooks scheme under svix-* header names."""
    mapped = {
        "webhook-id": headers.get("svix-id", ""),
        "webhook-timestamp": headers.get("svix-timestamp", ""),
        "webhook-signature": headers.get("svix-signature", ""),
    }
    webhook = _RawBodyWebhook(settings.resend_webhook_secret.get_secret_value())
    try:
        webhook.verify(body.decode("utf-8", "surrogateescape"), mapped, json_parse=False)
    except (WebhookVerificationError, ValueError):  # ValueError: a signature that is not "v1,<base64>"
        return False
    return True


class _Unrepresentable(ValueError):
    """JSON (or JSON-like) that could not be passed on to the database as it is."""


def _refuse_constant(name: str) -> Any:
    # json.loads accepts NaN and Infinity, which are not JSON; httpx would then refuse to send them.
    raise _Unrepresentable(f"the body is not valid JSON ({name} is not a JSON value)")


class NumberText(str):
    """A JSON number kept as the text it was written in: one Python's JSON cannot carry on exactly
    (1e400 would become inf, which is not JSON; an integer of more than 4,300 digits is refused by
    int()). Resend's JSON comes from JavaScript, where neither occurs; jsonb could hold both."""


def _float(text: str) -> float | NumberText:
    number = float(text)
    return number if math.isfinite(number) else NumberText(text)


def _int(text: str) -> int | NumberText:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return NumberText(text)


def parse(body: bytes) -> Event | Answer:
    try:
        document = json.loads(body, parse_constant=_refuse_constant, parse_float=_float, parse_int=_int)
    except _Unrepresentable as refused:
        return error(400, "malformed_json", str(refused))
    except UnicodeDecodeError:
        return error(400, "malformed_json", "the body is not UTF-8 (JSON must be)")
    except ValueError:
        return error(400, "malformed_json", "the body is not valid JSON")
    except RecursionError:
        return error(400, "malformed_json", "the body is nested too deeply")
    try:
        return Event.model_validate(document)
    except ValidationError:
        return error(400, "malformed_event", "the event needs a string 'type' and an object 'data'")


class Storable(NamedTuple):
    """What record_inbound_email is given: the e-mail's and the delivery's ids made storable one to
    one (storable_id: two ids that differ only in text Postgres cannot store stay two e-mails), and
    the data with such text replaced (storable_json)."""

    email_id: str
    webhook_id: str
    data: dict[str, Any]


def storable(webhook_id: str, data: dict[str, Any]) -> Storable:
    """The ids and the event's data made storable (lib/storable.py); the JSON Pointers of what was
    replaced in the data are listed under REPLACED_KEY in it."""
    email_id = storable_id(data["email_id"])
    stored_id = storable_id(webhook_id)
    stored_data, replaced = storable_json(data)
    if replaced:
        stored_data[REPLACED_KEY] = replaced
    numbers_as_text = pointers_to(stored_data, NumberText)
    if numbers_as_text:
        stored_data[NUMBERS_AS_TEXT_KEY] = numbers_as_text
        log.event("email_numbers_kept_as_text", logging.WARNING, email_id=email_id,
                  numbers=numbers_as_text)  # fmt: skip
    if replaced or stored_id != webhook_id:
        log.event(
            "email_text_replaced",
            logging.WARNING,
            email_id=email_id,
            replaced=replaced,
            webhook_id_replaced=stored_id != webhook_id,
        )
    return Storable(email_id, stored_id, stored_data)


def usable_timestamp(value: Any) -> bool:
    """Whether record_inbound_email takes `value` (data.created_at) as the received time."""
    if not isinstance(value, str) or not _TIMESTAMP.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:  # 2026-02-30
        return False
    return True


def _warn_unusable_time(data: dict[str, Any]) -> None:
    created_at = data.get("created_at")
    if not usable_timestamp(created_at):
        log.event("email_received_at_unusable", logging.WARNING, email_id=data["email_id"],
                  created_at=repr(created_at)[:80], received_at=None)  # fmt: skip


def record(settings: WebhookSettings, stored: Storable, deadline: Deadline) -> Answer:
    email_id = stored.email_id
    params = {"p_provider_email_id": email_id, "p_webhook_id": stored.webhook_id, "p_data": stored.data}
    with deadline_client(deadline) as http:
        client = service_client(settings, http)
        for attempt in range(1, ATTEMPTS + 1):
            try:
                rows = execute("record_inbound_email", client.rpc("record_inbound_email", params))
                break
            except DatabaseError as failure:
                if failure.code in CONNECTION_LOST and attempt < ATTEMPTS and deadline.remaining() > PAUSE_S:
                    log.event("email_record_retried", logging.WARNING, email_id=email_id, code=failure.code,
                              attempt=attempt)  # fmt: skip
                    time.sleep(PAUSE_S)
                    continue
                # PostgREST's code and message say what the database refused (never a secret); for a
                # database that could not be reached, the message names only the network error.
                log.event("email_not_recorded", logging.ERROR, email_id=email_id, code=failure.code,
                          message=failure.message, details=failure.details,
                          deadline_passed=deadline.remaining() <= 0)  # fmt: skip
                return error(500, "not_recorded", "the e-mail could not be recorded; deliver it again")
    recorded = RecordedEmail.model_validate(rows[0])
    log.event("email_recorded", email_id=email_id, **recorded.model_dump())
    return 200, {"received": True, **recorded.model_dump()}


def handle(headers: Mapping[str, str], read_body: Callable[[int], bytes]) -> Answer:
    """The answer to one POST. `read_body(max_bytes)` gives the raw body, or raises a Refusal
    (chunked, no Content-Length, larger than max_bytes, ...)."""
    deadline = Deadline(time.monotonic() + DEADLINE.total_seconds())
    try:
        settings = WebhookSettings.load()
    except ConfigError as failure:
        log.event("webhook_misconfigured", logging.ERROR, error=str(failure))
        return error(500, "misconfigured", "the webhook is not configured")
    try:
        body = read_body(settings.webhook_max_body_bytes)
    except Refusal as unreadable:
        return unreadable.status, unreadable.body()
    if not verify(settings, headers, body):
        return error(401, "invalid_signature", "missing, invalid or expired signature")
    event = parse(body)
    if not isinstance(event, Event):
        return event
    if event.type != "email.received":
        return 200, {"received": True, "ignored": storable_text(event.type)}
    try:
        email_id = ReceivedEmailData.model_validate(event.data).email_id
    except ValidationError:
        return error(400, "missing_email_id", "data.email_id must be a non-empty string")
    if not email_id.strip():
        return error(400, "invalid_email_id", "data.email_id is only whitespace")
    if len(email_id) > MAX_EMAIL_ID_LENGTH:
        return error(400, "invalid_email_id", f"data.email_id is longer than {MAX_EMAIL_ID_LENGTH} characters")
    if email_id in (".", ".."):
        # A URL path normalises these away (GET /emails/receiving/../attachments is another endpoint).
        return error(400, "invalid_email_id", "data.email_id must not be . or ..")
    _warn_unusable_time(event.data)
    return record(settings, storable(headers.get("svix-id", ""), event.data), deadline)
