"""A loopback HTTP server that records the requests it gets: where the worker would be."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, server: ThreadingHTTPServer, requests: queue.Queue[Received]) -> None:
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self.requests = requests

    def get(self, timeout: float = 10.0) -> Received:
        return self.requests.get(timeout=timeout)

    def drain(self) -> list[Received]:
        got = []
        while not self.requests.empty():
            got.append(self.requests.get_nowait())
        return got


@contextmanager
def receiver(status: int = 200) -> Iterator[Receiver]:
    requests: queue.Queue[Received] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.put(Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield Receiver(server, requests)
    finally:
        server.shutdown()
        server.server_close()
