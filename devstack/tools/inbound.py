"""Plays Resend's side of the inbound flow on the local stack: adds an e-mail to the sample
provider and delivers its email.received webhook, signed by the svix library (Resend's signer),
not by our own code."""

from __future__ import annotations

import base64
import json
import mimetypes
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from svix.webhooks import Webhook


def add_email(
    provider_url: str,
    attachments: int | list[Path] = 2,
    email_id: str | None = None,
    sender: str | None = None,
    subject: str | None = None,
    sample: str | None = None,
) -> dict[str, Any]:
    """A new e-mail: with `attachments` sample fax PDFs, or these files (as a sender's mail client
    types them by their suffix), or one of the stand-in's named samples (efax, invoice); from
    `sender`, about `subject`, when given. Returns the event's `data`."""
    request: dict[str, Any] = {"email_id": email_id, "from": sender, "subject": subject, "sample": sample}
    if isinstance(attachments, list):
        request["attachments"] = [
            {"filename": path.name, "content_type": mimetypes.guess_type(path.name)[0] or "application/octet-stream",
             "content_base64": base64.b64encode(path.read_bytes()).decode()}
            for path in attachments
        ]  # fmt: skip
    else:
        request["attachments"] = attachments
    response = httpx.post(f"{provider_url}/_control/emails", json=request, timeout=60)
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


def receive_without_webhook(
    provider_url: str, count: int = 1, attachments: int = 2, age_seconds: float = 0
) -> list[dict[str, Any]]:
    """Resend "receives" `count` e-mails (`age_seconds` ago) and delivers no webhook for them: only
    its list of received e-mails (GET /emails/receiving) has them. Returns their events' `data`."""
    response = httpx.post(
        f"{provider_url}/_control/emails/batch",
        json={"count": count, "attachments": attachments, "age_seconds": age_seconds},
        timeout=30,
    )
    response.raise_for_status()
    result: list[dict[str, Any]] = response.json()
    return result


def event(data: dict[str, Any], event_type: str = "email.received") -> bytes:
    return json.dumps({"type": event_type, "created_at": datetime.now(UTC).isoformat(), "data": data}).encode()


def signed_headers(secret: str, body: bytes, msg_id: str | None = None, at: datetime | None = None) -> dict[str, str]:
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    at = at or datetime.now(UTC)
    return {
        "svix-id": msg_id,
        "svix-timestamp": str(int(at.timestamp())),
        "svix-signature": Webhook(secret).sign(msg_id, at, body.decode()),
        "content-type": "application/json",
    }


def deliver(functions_url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{functions_url}/api/webhooks/resend", content=body, headers=headers, timeout=30)


def deliver_until_accepted(functions_url: str, secret: str, data: dict[str, Any], within_s: float = 180.0) -> int:
    """As Resend delivers: the same svix-id on every redelivery, again until a 2xx (after a
    timeout too), the waits growing to 5 s (Resend's second retry). Resend keeps trying for about
    27 hours; here for `within_s`, so that a machine busy enough to let a cold start pass the
    webhook's maxDuration for a while does not lose an e-mail Resend would have redelivered. The
    last status (0: no answer)."""
    body = event(data)
    msg_id = f"msg_{data['email_id']}"
    deadline = time.monotonic() + within_s
    wait = 0.5
    while True:
        try:
            status = deliver(functions_url, body, signed_headers(secret, body, msg_id)).status_code
        except httpx.TransportError:
            status = 0
        if status == 200 or time.monotonic() + wait > deadline:
            return status
        time.sleep(wait)
        wait = min(wait * 2, 5.0)
