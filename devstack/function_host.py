"""A stand-in for Vercel's function runtime, local stack only: serves every api/**/*.py function's
`handler` over loopback the way Vercel does.

- The URL comes from the file path (api/webhooks/resend.py -> /api/webhooks/resend), and the
  rewrites of vercel.json apply (exact sources).
- Each request runs in its own process, forked from a warm parent that has already imported
  the functions (as a reused Vercel instance has); a crash or a kill of one invocation touches
  no other.
- maxDuration from vercel.json's "functions" is enforced: when it passes, the invocation is
  ended and, if it had not answered yet, the caller gets Vercel's 504 FUNCTION_INVOCATION_TIMEOUT.

python -m devstack.function_host --port-file FILE   (the functions read their settings from the environment)

While an invocation runs, the file invocations/<pid> beside FILE names its function.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import json
import os
import signal
import socket
import socketserver
import sys
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MAX_DURATION_S = 300  # Vercel's default for functions without a "maxDuration"


@dataclass(frozen=True)
class Function:
    source: str  # api/internal/document_jobs.py
    module: str  # api.internal.document_jobs
    max_duration_s: int


@dataclass(frozen=True)
class Routes:
    functions: dict[str, Function]  # by URL path
    rewrites: dict[str, str]

    def find(self, path: str) -> Function | None:
        path = path.split("?", 1)[0].rstrip("/") or "/"
        return self.functions.get(self.rewrites.get(path, path))


def discover(root: Path = ROOT) -> Routes:
    config = json.loads((root / "vercel.json").read_text())
    settings: dict[str, dict[str, Any]] = config.get("functions", {})
    functions = {}
    for file in sorted((root / "api").rglob("*.py")):
        source = file.relative_to(root).as_posix()
        if file.name.startswith("_"):
            continue  # Vercel serves no function from files starting with "_"
        matching = [value for pattern, value in settings.items() if fnmatch.fnmatch(source, pattern)]
        max_duration = matching[-1].get("maxDuration", DEFAULT_MAX_DURATION_S) if matching else DEFAULT_MAX_DURATION_S
        url = "/" + source.removesuffix(".py")
        functions[url] = Function(source, source.removesuffix(".py").replace("/", "."), int(max_duration))
    rewrites = {rule["source"]: rule["destination"] for rule in config.get("rewrites", [])}
    return Routes(functions, rewrites)


class TrackingConnection:
    """The client's socket as the function's handler sees it; remembers whether it answered."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.first_line = b""

    def sendall(self, data: bytes) -> None:
        if not self.first_line:
            self.first_line = data.split(b"\r\n", 1)[0]
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def peek_request_line(sock: socket.socket) -> str:
    """The request line, left in the socket for the function's handler to read."""
    sock.settimeout(30)
    data = b""
    while b"\r\n" not in data and len(data) < 8192:
        data = sock.recv(8192, socket.MSG_PEEK)
        if not data:
            return ""
        if b"\r\n" not in data:
            time.sleep(0.01)
    sock.settimeout(None)
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def _answer(connection: TrackingConnection, status: str, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    connection.sendall(
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        f"Connection: close\r\n\r\n".encode()
        + payload
    )


class Invocation(socketserver.BaseRequestHandler):
    """Runs in the forked child: one request, one function invocation."""

    server: FunctionHost

    def handle(self) -> None:
        started = time.monotonic()
        connection = TrackingConnection(self.request)
        request_line = peek_request_line(self.request)
        parts = request_line.split(" ")
        function = self.server.routes.find(parts[1]) if len(parts) == 3 else None
        if function is None:
            _answer(connection, "404 Not Found", {"error": "NOT_FOUND"})
            return

        def timeout(signum: int, frame: FrameType | None) -> None:
            if not connection.first_line:
                _answer(connection, "504 Gateway Timeout", {"error": "FUNCTION_INVOCATION_TIMEOUT"})
            self._log(request_line, b"504 (maxDuration)", started)
            os._exit(0)

        signal.signal(signal.SIGALRM, timeout)
        signal.alarm(function.max_duration_s)
        handler: type[BaseHTTPRequestHandler] = importlib.import_module(function.module).handler
        # Which process runs which function, for the chaos run to pick its victims.
        running = self.server.invocations / str(os.getpid())
        running.write_text(function.source)
        try:
            handler(connection, self.client_address, self.server)  # type: ignore[arg-type]
        finally:
            signal.alarm(0)
            running.unlink(missing_ok=True)
            self._log(request_line, connection.first_line, started)

    def _log(self, request_line: str, status_line: bytes, started: float) -> None:
        status = status_line.decode("latin-1").split(" ", 2)[1] if status_line.count(b" ") else "-"
        elapsed_ms = (time.monotonic() - started) * 1000
        print(f"pid={os.getpid()} {request_line} -> {status} {elapsed_ms:.0f}ms", file=sys.stderr, flush=True)


class FunctionHost(socketserver.ForkingMixIn, socketserver.TCPServer):
    max_children = 64
    block_on_close = False

    def __init__(self, routes: Routes, invocations: Path) -> None:
        super().__init__(("127.0.0.1", 0), Invocation)
        self.routes = routes
        self.invocations = invocations
        invocations.mkdir(parents=True, exist_ok=True)


def warm(routes: Routes) -> None:
    """Import every function, and supabase, once in the parent: each forked invocation starts warm."""
    for function in routes.functions.values():
        importlib.import_module(function.module)
    importlib.import_module("supabase")


def main() -> None:
    parser = argparse.ArgumentParser(description="Vercel function host (local stack only)")
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    routes = discover()
    warm(routes)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with FunctionHost(routes, args.port_file.parent / "invocations") as host:
        temporary = args.port_file.with_suffix(".tmp")
        temporary.write_text(str(host.server_address[1]))
        temporary.replace(args.port_file)
        for url, function in routes.functions.items():
            print(f"serving {url} ({function.source}, maxDuration {function.max_duration_s} s)", file=sys.stderr)
        for source, destination in routes.rewrites.items():
            print(f"rewrite {source} -> {destination}", file=sys.stderr)
        host.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
