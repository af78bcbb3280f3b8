"""The shell shared by the Vercel Python functions: JSON answers, 405 for every method but POST,
and an error boundary, so that any exception still gives a JSON 500 and its request log line."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from lib import log
from lib.errors import Refusal

Answer = tuple[int, dict[str, Any]]
JSON_CONTENT_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class Reply:
    """An answer of any content type; `error` is the code the request's log line names."""

    status: int
    body: bytes
    content_type: str = JSON_CONTENT_TYPE
    headers: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None


def json_reply(status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None) -> Reply:
    payload = json.dumps(body, ensure_ascii=False).encode()
    error = body.get("error")
    return Reply(status, payload, JSON_CONTENT_TYPE, headers or {}, error if isinstance(error, str) else None)


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
        self.respond(lambda: json_reply(*self.answer()))

    def respond(self, produce: Callable[[], Reply]) -> None:
        try:
            reply = produce()
        except Exception as error:
            # Without this, the exception would leave the runtime with no answer and no log line
            # of ours. Only the type and where it was raised: a message may quote input or settings.
            log.event("unhandled_error", logging.ERROR, **log.exception_fields(error))
            reply = json_reply(500, {"error": "internal_error"})
        self.send_reply(reply)

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        self.send_reply(json_reply(status, body))

    def send_reply(self, reply: Reply) -> None:
        # Logged before the answer is written: once it is, the caller may go on (and Vercel may
        # freeze the function) before a line written afterwards is out.
        log.event(
            "request",
            method=self.command,
            path=self.path.split("?", 1)[0],  # a query string is the caller's, and may hold anything
            status=reply.status,
            error=reply.error,
            duration_ms=round((time.monotonic() - self.started) * 1000),
        )
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        if reply.status == 405 and "Allow" not in reply.headers:
            self.send_header("Allow", "POST")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def read_body(self, max_bytes: int) -> bytes:
        """The whole body; a Refusal when it is chunked or has no length (411), a length that
        is not a number (400), or more than max_bytes (413; then it is not read at all)."""
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding") is not None or length is None:
            # http.server does not decode chunked bodies: reading "no Content-Length" as an empty
            # body would only fail later, as a signature mismatch that says nothing about the cause.
            self.close_connection = True  # the unread body must not be taken for the next request
            raise Refusal("length_required", "send the body with a Content-Length (not chunked)", 411)
        if not (length.strip().isascii() and length.strip().isdigit()):
            self.close_connection = True
            raise Refusal("invalid_content_length", "Content-Length must be a number of bytes", 400)
        if int(length) > max_bytes:
            self.close_connection = True
            raise Refusal("body_too_large", f"the body is larger than {max_bytes} bytes", 413)
        return self.rfile.read(int(length))

    def _method_not_allowed(self) -> None:
        self.send_json(405, {"error": "method_not_allowed"})

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _method_not_allowed

    def log_message(self, format: str, *args: Any) -> None:
        # The default writes every request line to stderr; the functions log JSON events instead.
        pass
