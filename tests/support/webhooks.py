"""Signed webhooks into the function host, as Resend delivers them."""

from __future__ import annotations

import httpx

from devstack.tools import inbound

WAIT_S = 60  # how long a test waits for what a delivered webhook causes


def deliver(env: dict[str, str], data: dict, msg_id: str | None = None) -> httpx.Response:
    body = inbound.event(data)
    return inbound.deliver(
        env["FUNCTIONS_URL"], body, inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body, msg_id)
    )
