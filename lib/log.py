"""One JSON line per event, on the function's standard error (Vercel keeps it in the runtime logs).

Every line the functions write is such an event: log.event's own, and whatever another library
logs through `logging` (supabase-py's warnings, say), which configure() turns into an event
"log" with its logger, level and message. An exception attached to a record becomes its type
and where it was raised, never its message or a multi-line traceback: a message may quote input
or settings, and Vercel's log handler would write a traceback as lines of plain text.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import traceback
from types import TracebackType
from typing import Any

log = logging.getLogger("document_jobs")

_FRAMES = 6  # the innermost frames of a traceback that an event keeps


def configure() -> None:
    """JSON lines at INFO. httpx logs every URL at INFO, and a download URL is a signed secret: WARNING.

    The record factory, not a formatter, makes every record JSON: Vercel's runtime installs its
    own handler on the root logger, which writes the record's message and ignores formatters."""
    logging.setLogRecordFactory(JsonRecord)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log `name` with `fields` and the time (`at`, Unix seconds). Never pass a secret, a key or a signed URL."""
    log.log(level, json.dumps({"event": name, "at": round(time.time(), 3), **fields}, default=str, ensure_ascii=False))


def exception_fields(error: BaseException) -> dict[str, Any]:
    """What an event says about an exception: its type and the innermost frames (file:line function)."""
    return {"error": type(error).__name__, "where": _where(error.__traceback__)}


def _where(tb: TracebackType | None) -> list[str]:
    frames = traceback.extract_tb(tb)[-_FRAMES:]
    return [f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} {frame.name}" for frame in frames]


class JsonRecord(logging.LogRecord):
    """A log record whose message is one JSON event, and which carries no exception to be
    rendered as a traceback (the exception is folded into the event instead)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        error = self.exc_info[1] if self.exc_info else None
        try:
            message = super().getMessage()
        except Exception:  # arguments that do not fit the format: logging would report it later
            message = str(self.msg)
        fields: dict[str, Any] = {"event": "log", "at": round(self.created, 3), "logger": self.name,
                                  "level": self.levelname.lower(), "message": message}  # fmt: skip
        if self.name == log.name:  # log.event's message is an event already
            with contextlib.suppress(ValueError):
                event = json.loads(message)
                if isinstance(event, dict) and "event" in event:
                    if error is None:
                        return
                    fields = event
        if error is not None:
            fields |= exception_fields(error)
        self.msg, self.args = json.dumps(fields, default=str, ensure_ascii=False), ()
        self.exc_info, self.exc_text = None, None
