"""The shell shared by the Vercel Python functions: JSON answers, 405 for every method but POST,
and an error boundary, so that any exception still gives a JSON 500 and its request log line."""

from __future__ import annotations

import json
import logging
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from lib import log

Answer = tuple[int, dict[str, Any]]


class UnreadableBody(Exception):
    """The request body cannot be read as sent: the answer to give instead."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class JsonHandler(BaseHTTPRequestHandler):
    """Subclasses implement answer(): parse the request, call one lib function, return its answer.
    Every other method than POST is answered 405. One JSON log line per request."""

    # Headers and body are two writes: without TCP_NODELAY the body can wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        self.started = time.monotonic()
        super().setup()

    def answer(self) -> Answer:
        raise NotImplementedError

    def do_POST(self) -> None:
        try:
            status, body = self.answer()
        except Exception as error:
            # Without this, the exception would leave the runtime with no answer and no log line
            # of ours. Only the type and where it was raised: a message may quote input or settings.
            log.event("unhandled_error", logging.ERROR, **log.exception_fields(error))
            status, body = 500, {"error": "internal_error"}
        self.send_json(status, body)

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body, ensure_ascii=False).encode()
        # Logged before the answer is written: once it is, the caller may go on (and Vercel may
        # freeze the function) before a line written afterwards is out.
        log.event(
            "request",
            method=self.command,
            path=self.path.split("?", 1)[0],  # a query string is the caller's, and may hold anything
            status=status,
            error=body.get("error"),
            duration_ms=round((time.monotonic() - self.started) * 1000),
        )
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        if status == 405:
            self.send_header("Allow", "POST")
        self.end_headers()
        self.wfile.write(payload)

    def read_body(self, max_bytes: int) -> bytes:
        """The whole body; UnreadableBody when it is chunked or has no length (411), a length that
        is not a number (400), or more than max_bytes (413; then it is not read at all)."""
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding") is not None or length is None:
            # http.server does not decode chunked bodies: reading "no Content-Length" as an empty
            # body would only fail later, as a signature mismatch that says nothing about the cause.
            self.close_connection = True  # the unread body must not be taken for the next request
            raise UnreadableBody(411, "length_required", "send the body with a Content-Length (not chunked)")
        if not (length.strip().isascii() and length.strip().isdigit()):
            self.close_connection = True
            raise UnreadableBody(400, "invalid_content_length", "Content-Length must be a number of bytes")
        if int(length) > max_bytes:
            self.close_connection = True
            raise UnreadableBody(413, "body_too_large", f"the body is larger than {max_bytes} bytes")
        return self.rfile.read(int(length))

    def _method_not_allowed(self) -> None:
        self.send_json(405, {"error": "method_not_allowed"})

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _method_not_allowed

    def log_message(self, format: str, *args: Any) -> None:
        # The default writes every request line to stderr; the functions log JSON events instead.
        pass
