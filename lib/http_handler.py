"""The shell shared by the Vercel Python functions: JSON answers, 405 for every method but POST."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from lib import log


class JsonHandler(BaseHTTPRequestHandler):
    """Subclasses implement do_POST; every other method is answered 405. One JSON log line per request."""

    # Headers and body are two writes: without TCP_NODELAY the body can wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        self.started = time.monotonic()
        super().setup()

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        if status == 405:
            self.send_header("Allow", "POST")
        self.end_headers()
        self.wfile.write(payload)
        log.event(
            "request",
            method=self.command,
            path=self.path.split("?", 1)[0],  # a query string is the caller's, and may hold anything
            status=status,
            error=body.get("error"),
            duration_ms=round((time.monotonic() - self.started) * 1000),
        )

    def read_body(self, max_bytes: int) -> bytes | None:
        """The whole body, or None when it is larger than max_bytes (then it is not read at all)."""
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > max_bytes:
            self.close_connection = True  # the unread body must not be taken for the next request
            return None
        return self.rfile.read(int(length))

    def _method_not_allowed(self) -> None:
        self.send_json(405, {"error": "method_not_allowed"})

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _method_not_allowed

    def log_message(self, format: str, *args: Any) -> None:
        # The default writes every request line to stderr; the functions log JSON events instead.
        pass
