"""One JSON line per event, on the function's standard error (Vercel keeps it in the runtime logs)."""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger("document_jobs")


def configure() -> None:
    """JSON lines at INFO. httpx logs every URL at INFO, and a download URL is a signed secret: WARNING."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log `name` with `fields`. Never pass a secret, an API key or a signed URL."""
    log.log(level, json.dumps({"event": name, **fields}, default=str, ensure_ascii=False))
