"""The inbound e-mail webhook (spec 6): verify the signature of the raw body, parse the event,
record the e-mail (which enqueues its job and kicks the worker, in the database) in one call.

Answers non-2xx only when the e-mail was not durably recorded, so that Resend redelivers; a
redelivery carries the same svix-id and e-mail id, and record_inbound_email returns what it
recorded the first time.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from lib import log
from lib.settings import ConfigError, WebhookSettings
from lib.supabase_client import TIMEOUT, service_client

Answer = tuple[int, dict[str, Any]]


class ReceivedEmailData(BaseModel):
    """`data` of an email.received event: metadata only. Everything but the id is optional here,
    so that an e-mail is never lost over a field; the whole object is stored verbatim."""

    model_config = ConfigDict(extra="allow")

    email_id: str = Field(min_length=1, max_length=200)


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


def verify(settings: WebhookSettings, headers: Mapping[str, str], body: bytes) -> bool:
    """Resend signs with Svix: the standard-webhooks scheme under svix-* header names."""
    mapped = {
        "webhook-id": headers.get("svix-id", ""),
        "webhook-timestamp": headers.get("svix-timestamp", ""),
        "webhook-signature": headers.get("svix-signature", ""),
    }
    try:
        Webhook(settings.resend_webhook_secret.get_secret_value()).verify(body, mapped, json_parse=False)
    except (WebhookVerificationError, ValueError):  # ValueError: a signature that is not "v1,<base64>"
        return False
    return True


def parse(body: bytes) -> Event | Answer:
    try:
        document = json.loads(body)
    except ValueError:  # also a body that is not UTF-8
        return error(400, "malformed_json", "the body is not valid JSON")
    try:
        return Event.model_validate(document)
    except ValidationError:
        return error(400, "malformed_event", "the event needs a string 'type' and an object 'data'")


def record(settings: WebhookSettings, webhook_id: str, data: ReceivedEmailData) -> Answer:
    from postgrest.exceptions import APIError

    with httpx.Client(timeout=TIMEOUT) as http:
        try:
            rows = (
                service_client(settings, http)
                .rpc(
                    "record_inbound_email",
                    {"p_provider_email_id": data.email_id, "p_webhook_id": webhook_id, "p_data": data.model_dump()},
                )
                .execute()
                .data
            )
        except (APIError, httpx.HTTPError) as failure:
            log.event("email_not_recorded", logging.ERROR, email_id=data.email_id, error=type(failure).__name__)
            return error(500, "not_recorded", "the e-mail could not be recorded; deliver it again")
    recorded = RecordedEmail.model_validate(rows[0])
    log.event("email_recorded", email_id=data.email_id, **recorded.model_dump())
    return 200, {"received": True, **recorded.model_dump()}


def handle(headers: Mapping[str, str], read_body: Callable[[int], bytes | None]) -> Answer:
    """The answer to one POST. `read_body(max_bytes)` gives the raw body, or None when it is larger."""
    try:
        settings = WebhookSettings.load()
    except ConfigError as failure:
        log.event("webhook_misconfigured", logging.ERROR, error=str(failure))
        return error(500, "misconfigured", "the webhook is not configured")
    body = read_body(settings.webhook_max_body_bytes)
    if body is None:
        return error(413, "body_too_large", f"the body is larger than {settings.webhook_max_body_bytes} bytes")
    if not verify(settings, headers, body):
        return error(401, "invalid_signature", "missing, invalid or expired signature")
    event = parse(body)
    if not isinstance(event, Event):
        return event
    if event.type != "email.received":
        return 200, {"received": True, "ignored": event.type}
    try:
        data = ReceivedEmailData.model_validate(event.data)
    except ValidationError:
        return error(400, "missing_email_id", "data.email_id must be a non-empty string")
    return record(settings, headers.get("svix-id", ""), data)
