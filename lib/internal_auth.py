"""Authentication of internal calls (pg_net, from the cron job and from the webhook's kick) to the worker."""

from __future__ import annotations

import hmac
import logging

from lib.settings import InternalCallSettings

log = logging.getLogger(__name__)


def is_authorized(authorization: str | None, settings: InternalCallSettings) -> bool:
    """True when the header is `Bearer <INTERNAL_FUNCTION_SECRET>`, compared in constant time.

    With the variable unset every call is refused, and an error names the variable: pg_net
    records a 401 as just another answer, so only this log tells it apart from a wrong value in
    Vault.
    """
    if settings.internal_function_secret is None or not settings.internal_function_secret.get_secret_value():
        log.error("INTERNAL_FUNCTION_SECRET is not set: every call to the worker is refused")
        return False
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return False
    return hmac.compare_digest(token.encode(), settings.internal_function_secret.get_secret_value().encode())
