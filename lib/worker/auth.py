"""Authentication of internal calls (pg_net, from the cron job and from the webhook's kick) to the worker."""

from __future__ import annotations

import hmac
import logging

from lib import log
from lib.settings import InternalCallSettings


def is_authorized(authorization: str | None, settings: InternalCallSettings) -> bool:
    """True when the header is `Bearer <INTERNAL_FUNCTION_SECRET>`, compared in constant time.

    With the variable unset every call is refused, and an error names the variable: pg_net
    records a 401 as just another answer, so only this log tells it apart from a wrong value in
    Vault.
    """
    accepted = [
        secret.get_secret_value().encode()
        for secret in (settings.internal_function_secret, settings.internal_function_secret_previous)
        if secret is not None and secret.get_secret_value()
    ]
    if settings.internal_function_secret is None or not settings.internal_function_secret.get_secret_value():
        log.event(
            "worker_secret_missing",
            logging.ERROR,
            message="INTERNAL_FUNCTION_SECRET is not set: every call to the worker is refused",
        )
        return False
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return False
    # Compare with every accepted value (no early exit), so the time taken says nothing about which matched.
    matches = [hmac.compare_digest(token.encode(), secret) for secret in accepted]
    return any(matches)
