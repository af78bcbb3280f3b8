"""One JSON line per event, on the function's standard error (Vercel keeps it in the runtime logs)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

log = logging.getLogger("document_jobs")


def configure() -> None:
    """JSON lines at INFO. httpx logs every URL at INFO, and a download URL is a signed secret: WARNING."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log `name` with `fields` and the time (`at`, Unix seconds). Never pass a secret, a key or a signed URL."""
    log.log(level, json.dumps({"event": name, "at": round(time.time(), 3), **fields}, default=str, ensure_ascii=False))
