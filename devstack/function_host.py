"""Serves the output of a real `vercel build` the way Vercel's platform does, local stack only.

Stand-in for Vercel's router and function instances; the handler invocation itself is Vercel's:
each function runs in its bundle (devstack/vercel_build.py lays it out as a deploy does) under
Vercel's own Python runtime shim, `vc__handler__python` from the `vercel-runtime` package that the
build vendors, started in IPC mode as the platform starts it:

- `python -c 'import vc__handler__python'` in the bundle's root, with the `.vc-config.json`
  environment (PYTHONPATH=_vendor), the project's variables and VERCEL_IPC_PATH naming a Unix
  socket. The runtime imports the function, serves it on a loopback port (a ThreadingHTTPServer:
  a thread per request) and announces the port with a `server-started` message; its logs arrive
  as `log` messages tagged with the request they belong to (the runtime keeps the request's ids in
  a context variable) and go to this host's log, and to a log drain if one is given.
- The router applies `.vercel/output/config.json`'s routes (filesystem first, then rewrites and
  statuses, then the error phase) and serves `.vercel/output/static` for everything else, with
  the Content-Type of the file's extension and the headers of the routes vercel.json's "headers"
  made (applied here to static files and to the router's own answers, not to functions').
- Fluid compute, the default for new Vercel projects (docs: functions/fluid-compute, "Optimized
  concurrency"): a request goes to a running instance of its function that serves fewer than
  `concurrency` requests, else to a new instance; so concurrent requests run as threads of one
  process, and an instance stays up after its requests. Vercel publishes no per-instance limit
  for Python; the setting here is this host's (DEVSTACK_FUNCTIONS_CONCURRENCY). `--mode cold`
  starts a process per request instead, as a cold start (the cold-start benchmark).
- The request is passed on byte for byte, with Vercel's x-vercel-internal-* headers added; the
  original URL is kept, as a rewrite keeps it. The answer gets Vercel's `x-vercel-id` header.
- maxDuration from `.vc-config.json` is enforced from each request's arrival. Vercel "will
  terminate" a function that runs longer (docs: functions/configuring-functions/duration); under
  Fluid its requests share one process (functions/fluid-compute, "isolation boundary": "a global
  state/process"), and the pages do not say that only the late request ends. So, the strictest
  reading: the instance is killed, the late request gets 504 FUNCTION_INVOCATION_TIMEOUT, and every
  other request it had not answered yet 500 FUNCTION_INVOCATION_FAILED, as does any request of an
  instance that dies (a crash, a SIGKILL): everything in flight on an instance ends with it.

What it leaves out: regions, the network between router and instance, request/response size
limits, scaling down idle instances, the "miss" route phase (which only maps `*.py` URLs).

python -m devstack.function_host --port-file FILE [--build DIR] [--mode fluid|cold] [--concurrency N]

While an instance works on at least one request, the file invocations/<pid> beside FILE names its
function (for the chaos run to pick its victims).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import mimetypes
import os
import queue
import re
import selectors
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from devstack import vercel_build
from devstack.vercel_build import Build, Bundle

MAX_HEAD_BYTES = 64 * 1024
Mode = Literal["fluid", "cold"]
DEFAULT_CONCURRENCY = 8
# Environment variables a Vercel project would set for the functions: the settings lib/ reads.
PROJECT_VARIABLES = (
    "SUPABASE_URL",
    "SUPABASE_SECRET_KEY",
    "SUPABASE_SERVICE_ROLE_KEY",  # a project with legacy keys (tests/test_end_to_end.py plays one)
    "SUPABASE_PUBLISHABLE_KEY",  # the admin page's key
    "SUPABASE_ANON_KEY",  # the admin page's key on a project with legacy keys
    "SUPABASE_JWT_SECRET",  # a legacy project's HS256 user tokens (the admin function)
    "INTERNAL_FUNCTION_SECRET",
    "INTERNAL_FUNCTION_SECRET_PREVIOUS",
    "RESEND_API_KEY",
    "RESEND_API_URL",
    "RESEND_WEBHOOK_SECRET",
    "RESEND_TIMEOUT_SECONDS",
    "ATTACHMENTS_BUCKET",
    "ATTACHMENT_MAX_BYTES",
    "WEBHOOK_MAX_BODY_BYTES",
    "JOB_LEASE_SECONDS",
)


@dataclass(frozen=True)
class Answer:
    """A final status from the routes, or a platform error, answered by the router itself."""

    status: int
    code: str
    static_file: Path | None = None


@dataclass(frozen=True)
class Static:
    file: Path


class Routes:
    """Build Output API v3 routing, the subset this project's config.json uses."""

    def __init__(self, build: Build) -> None:
        self.routes = build.routes
        self.static = build.static
        self.functions = build.bundles()

    def _filesystem(self, path: str) -> Bundle | Static | None:
        if path in self.functions:
            return self.functions[path]
        candidate = (self.static / path.lstrip("/")).resolve()
        if candidate.is_file() and candidate.is_relative_to(self.static.resolve()):
            return Static(candidate)
        return None

    def resolve(self, path: str) -> Bundle | Static | Answer:
        phase: str | None = None
        result: Bundle | Static | Answer | None = None
        for route in self.routes:
            if "handle" in route:
                phase = route["handle"]
                if phase == "filesystem" and (hit := self._filesystem(path)):
                    return hit
                if phase in ("error", "miss"):
                    break
                continue
            match = re.match(route["src"], path)
            if not match:
                continue
            if "dest" in route:
                path = _substitute(route["dest"], match)
                if route.get("check") and (hit := self._filesystem(path)):
                    return hit
            if "status" in route:
                result = Answer(int(route["status"]), "NOT_FOUND" if route["status"] == 404 else "ERROR")
                break
        if result is None:
            result = Answer(404, "NOT_FOUND")
        return self._error_phase(path, result) if isinstance(result, Answer) else result

    def headers(self, path: str) -> dict[str, str]:
        """The headers of the routes before the filesystem phase whose src matches (vercel.json's "headers")."""
        found: dict[str, str] = {}
        for route in self.routes:
            if "handle" in route:
                break
            if "headers" in route and re.match(route["src"], path):
                found.update(route["headers"])
        return found

    def _error_phase(self, path: str, answer: Answer) -> Answer:
        in_error_phase = False
        for route in self.routes:
            if "handle" in route:
                in_error_phase = route["handle"] == "error"
                continue
            if in_error_phase and re.match(route["src"], path) and int(route.get("status", 0)) == answer.status:
                page = self.static / route.get("dest", "").lstrip("/")
                return Answer(answer.status, answer.code, page if page.is_file() else None)
        return answer


def _substitute(dest: str, match: re.Match[str]) -> str:
    """A route's dest with $1, $2... replaced by what its src captured."""
    return re.sub(r"\$(\d+)", lambda group: match.group(int(group.group(1))) or "", dest)


def base_interpreter(runtime: str) -> str:
    """The interpreter a bundle's runtime names (python3.12), without this virtualenv's packages."""
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if runtime != here:
        raise RuntimeError(f"the build asks for {runtime}; this stack runs {here} (see .python-version)")
    return getattr(sys, "_base_executable", sys.executable)


@dataclass(eq=False)  # compared and hashed by identity: each is one process
class Instance:
    """One running copy of Vercel's Python runtime serving one function (a Lambda instance)."""

    bundle: Bundle
    process: subprocess.Popen[bytes] | None = None  # None while it starts
    ipc: socket.socket | None = None
    port: int = 0
    ready: threading.Event = field(default_factory=threading.Event)  # set once it serves, or is gone
    in_flight: int = 0  # requests routed to it and not finished (the host's lock guards it)
    peak: int = 0  # the most it served at once

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def gone(self) -> bool:
        """Started and ended (or never got going): it takes no more requests."""
        return self.ready.is_set() and not (self.alive and self.port)

    def kill(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()


@dataclass(frozen=True)
class FunctionLog:
    """One line a function wrote, with the request it belongs to, as Vercel's runtime tags it."""

    route: str
    pid: int
    invocation_id: str  # "0" for a line written outside any request (at import)
    request_id: int
    text: str


class FunctionHost(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        build: Build,
        env: dict[str, str],
        state: Path,
        mode: Mode = "fluid",
        concurrency: int = DEFAULT_CONCURRENCY,
        log: BinaryIO | None = None,
        log_drain: Callable[[FunctionLog], None] | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", 0), Router)
        self.routes = Routes(build)
        self.project_env = {name: env[name] for name in PROJECT_VARIABLES if name in env}
        self.invocations = state / "invocations"
        self.invocations.mkdir(parents=True, exist_ok=True)
        self.ipc_folder = Path(tempfile.mkdtemp(prefix="ipc-", dir=state))
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.mode = mode
        self.concurrency = concurrency
        self.log = log or sys.stderr.buffer
        self.log_drain = log_drain
        self._log_lock = threading.Lock()
        self._lock = threading.Lock()
        self._warm: dict[str, list[Instance]] = {}  # route -> its running instances (fluid)
        self._live: set[Instance] = set()
        self._request_id = 0

    # -- instances --------------------------------------------------------------------------

    def launch(self, instance: Instance, deadline: float) -> None:
        """Start the runtime for `instance` and wait (until `deadline`) for it to serve."""
        bundle = instance.bundle
        ipc_path = self.ipc_folder / f"{uuid.uuid4().hex[:12]}.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(ipc_path))
        listener.listen(1)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "VERCEL": "1",
            "VERCEL_ENV": "development",
            "VERCEL_REGION": "dev1",
            **self.project_env,
            **bundle.config.get("environment", {}),
            "VERCEL_IPC_PATH": str(ipc_path),
        }
        instance.process = subprocess.Popen(
            [base_interpreter(bundle.config["runtime"]), "-c", "import vc__handler__python"],
            cwd=bundle.folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            # In the host's process group: stopping the host's group stops its instances too, even
            # when the host itself was killed first.
        )
        listener.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            instance.ipc, _ = listener.accept()
        except TimeoutError:
            instance.ipc = socket.socket(socket.AF_UNIX)  # never connected: the runtime died or hung first
        finally:
            listener.close()
            ipc_path.unlink(missing_ok=True)
        threading.Thread(target=self._read_ipc, args=(instance,), daemon=True).start()
        while not instance.ready.wait(0.02):
            if not instance.alive or time.monotonic() > deadline:
                instance.ready.set()  # gone, or too slow for this request: nobody waits for it
                break

    def _read_ipc(self, instance: Instance) -> None:
        assert instance.ipc is not None
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := instance.ipc.recv(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    self._on_message(instance, json.loads(raw))
        instance.ready.set()  # the runtime is gone: nobody waits for it any longer

    def _on_message(self, instance: Instance, message: dict) -> None:
        kind, payload = message.get("type"), message.get("payload", {})
        if kind == "server-started":
            instance.port = int(payload["httpPort"])
            instance.ready.set()
        elif kind == "log":
            text = base64.b64decode(payload.get("message", "")).decode(errors="replace")
            self.write_log(text if text.endswith("\n") else text + "\n")
            if self.log_drain and instance.process:
                context = payload.get("context") or {}
                for line in text.splitlines():
                    self.log_drain(FunctionLog(instance.bundle.route, instance.process.pid,
                                               str(context.get("invocationId", "0")),
                                               int(context.get("requestId", 0)), line))  # fmt: skip
        elif kind == "unrecoverable-error":
            self.write_log(f"function_host: {instance.bundle.route} failed to start: {payload.get('message')}\n")

    def write_log(self, text: str) -> None:
        with self._log_lock:
            self.log.write(text.encode())
            self.log.flush()

    @contextlib.contextmanager
    def instance(self, bundle: Bundle, deadline: float) -> Iterator[Instance]:
        """The instance for one request, once it serves (or is gone: then its port is 0)."""
        instance, new = self._reserve(bundle)
        try:
            if new:
                self.launch(instance, deadline)
            else:
                instance.ready.wait(max(deadline - time.monotonic(), 0))
            if instance.alive and instance.process:
                with self._lock:
                    (self.invocations / str(instance.process.pid)).write_text(_entrypoint(bundle))
            yield instance
        finally:
            self._release(instance)

    def _reserve(self, bundle: Bundle) -> tuple[Instance, bool]:
        """A place on a running (or starting) instance with room, else on a new one (True)."""
        with self._lock:
            warm = self._warm.setdefault(bundle.route, []) if self.mode == "fluid" else []
            warm[:] = [candidate for candidate in warm if not candidate.gone]
            instance = next((candidate for candidate in warm if candidate.in_flight < self.concurrency), None)
            new = instance is None
            if instance is None:
                instance = Instance(bundle)
                warm.append(instance)
                self._live.add(instance)
            instance.in_flight += 1
            instance.peak = max(instance.peak, instance.in_flight)
            return instance, new

    def _release(self, instance: Instance) -> None:
        with self._lock:
            instance.in_flight -= 1
            idle = instance.in_flight == 0
            if idle and instance.process:
                (self.invocations / str(instance.process.pid)).unlink(missing_ok=True)
        if idle and (self.mode == "cold" or instance.gone):
            self.retire(instance)

    def warm_instances(self, route: str) -> list[Instance]:
        """The running instances of a function, oldest first (fluid mode)."""
        with self._lock:
            return [instance for instance in self._warm.get(route, []) if not instance.gone]

    def retire(self, instance: Instance) -> None:
        instance.kill()
        if instance.ipc is not None:
            with contextlib.suppress(OSError):
                instance.ipc.shutdown(socket.SHUT_RDWR)
        with self._lock:
            self._live.discard(instance)
            with contextlib.suppress(ValueError):
                self._warm.get(instance.bundle.route, []).remove(instance)

    def stop_instances(self) -> None:
        with self._lock:
            live = list(self._live)
        for instance in live:
            self.retire(instance)

    def next_request_id(self) -> int:
        with self._lock:
            self._request_id += 1
            return self._request_id


def vercel_id(invocation_id: str) -> str:
    """The x-vercel-id of an invocation, as the request and its answer carry it (region::id)."""
    return f"dev1::{invocation_id[:20]}"


def _entrypoint(bundle: Bundle) -> str:
    """api/internal/document_jobs.py: the function's source file, as vercel.json names it."""
    return bundle.route.lstrip("/") + ".py"


def _platform_error(status: int, code: str, page: Path | None = None, extra: str = "") -> bytes:
    body = page.read_bytes() if page else f"An error occurred with this function\n\n{code}\n".encode()
    reason = {404: "Not Found", 500: "Internal Server Error", 504: "Gateway Timeout"}.get(status, "Error")
    content_type = "text/html; charset=utf-8" if page else "text/plain; charset=utf-8"
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nx-vercel-error: {code}\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


class Router(socketserver.BaseRequestHandler):
    server: FunctionHost

    def handle(self) -> None:
        arrived = time.monotonic()
        client: socket.socket = self.request
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head, rest = _read_head(client)
        if head is None:
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3:
            client.sendall(_platform_error(400, "BAD_REQUEST"))
            return
        path = parts[1].split("?", 1)[0]
        target = self.server.routes.resolve(path)
        extra = "".join(f"{name}: {value}\r\n" for name, value in self.server.routes.headers(path).items())
        if isinstance(target, Answer):
            client.sendall(_platform_error(target.status, target.code, target.static_file, extra))
            status = str(target.status)
        elif isinstance(target, Static):
            body = target.file.read_bytes()
            content_type = mimetypes.guess_type(target.file.name)[0] or "application/octet-stream"
            if content_type.startswith("text/"):
                content_type += "; charset=utf-8"
            head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{extra}Content-Length: {len(body)}\r\n"
            client.sendall(f"{head}Connection: close\r\n\r\n".encode() + body)
            status = "200"
        else:
            status = self.invoke(target, head, rest, client, arrived)
        elapsed_ms = (time.monotonic() - arrived) * 1000
        self.server.write_log(f"function_host: {request_line} -> {status} {elapsed_ms:.0f}ms\n")

    def invoke(self, bundle: Bundle, head: bytes, rest: bytes, client: socket.socket, arrived: float) -> str:
        deadline = arrived + bundle.max_duration_s
        with self.server.instance(bundle, deadline) as instance:
            if not instance.port:
                client.sendall(_platform_error(500, "FUNCTION_INVOCATION_FAILED"))
                return "500 (the runtime did not start)"
            invocation_id = uuid.uuid4().hex
            headers = {
                "x-vercel-internal-invocation-id": invocation_id,
                "x-vercel-internal-request-id": str(self.server.next_request_id()),
                "x-vercel-internal-span-id": uuid.uuid4().hex[:16],
                "x-vercel-internal-trace-id": uuid.uuid4().hex,
                "x-vercel-id": vercel_id(invocation_id),
                "x-forwarded-for": self.client_address[0],
                "x-real-ip": self.client_address[0],
                "x-forwarded-proto": "http",
            }
            line_end = head.index(b"\r\n") + 2
            extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
            forwarded = head[:line_end] + extra + head[line_end:] + rest
            return _relay(
                client, instance, forwarded, deadline, f"x-vercel-id: {vercel_id(invocation_id)}\r\n".encode()
            )


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    client.settimeout(30)
    data = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in data and len(data) < MAX_HEAD_BYTES:
            chunk = client.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
    client.settimeout(None)
    if b"\r\n\r\n" not in data:
        return None, b""
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _relay(client: socket.socket, instance: Instance, forwarded: bytes, deadline: float, added: bytes) -> str:
    """Pass the request to the instance and its answer back, with the `added` header lines after
    its status line, until the instance closes the connection."""
    status = "-"
    status_line = b""  # the answer's first bytes, until its status line is whole
    try:
        upstream = socket.create_connection(("127.0.0.1", instance.port), timeout=5)
    except OSError:
        client.sendall(_platform_error(500, "FUNCTION_INVOCATION_FAILED"))
        return "500 (the runtime refused the connection)"
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client_open = True
    outgoing: queue.Queue[bytes | None] = queue.Queue()
    outgoing.put(forwarded)
    threading.Thread(target=_write_all, args=(upstream, outgoing), daemon=True).start()
    with upstream, selectors.DefaultSelector() as selector, _closing(outgoing):
        selector.register(upstream, selectors.EVENT_READ)
        selector.register(client, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                instance.kill()
                if status == "-":
                    with contextlib.suppress(OSError):
                        client.sendall(_platform_error(504, "FUNCTION_INVOCATION_TIMEOUT"))
                    return "504 (maxDuration)"
                return f"{status} (then killed at maxDuration)"
            for key, _ in selector.select(timeout=min(remaining, 0.5)):
                try:
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                except OSError:
                    data = b""
                if key.fileobj is upstream:
                    if not data:
                        if status == "-":
                            with contextlib.suppress(OSError):
                                client.sendall(_platform_error(500, "FUNCTION_INVOCATION_FAILED"))
                            return "500 (no answer)"
                        return status
                    if status == "-":
                        status_line += data
                        if b"\r\n" not in status_line:
                            continue
                        end = status_line.index(b"\r\n") + 2
                        first = status_line[:end]
                        status = first.split(b" ", 2)[1].decode("latin-1") if first.count(b" ") >= 2 else "?"
                        data = first + added + status_line[end:]
                    if client_open:
                        try:
                            client.sendall(data)
                        except OSError:
                            client_open = False  # the caller gave up; the function runs on, as on Vercel
                elif data:
                    outgoing.put(data)
                else:
                    selector.unregister(client)  # the caller closed its side; keep relaying the answer
                    client_open = False


def _write_all(sock: socket.socket, outgoing: queue.Queue[bytes | None]) -> None:
    """Writes what the caller sends, in order, on a thread of its own: a function that answers
    before it has read the whole body (a 413) must not keep its answer from being read."""
    while (data := outgoing.get()) is not None:
        try:
            sock.sendall(data)
        except OSError:
            return  # the function closed its side; its answer is read all the same


@contextlib.contextmanager
def _closing(outgoing: queue.Queue[bytes | None]) -> Iterator[None]:
    try:
        yield
    finally:
        outgoing.put(None)


def serve(build: Build, port_file: Path, mode: Mode, concurrency: int) -> None:
    host = FunctionHost(build, dict(os.environ), port_file.parent, mode=mode, concurrency=concurrency)

    def stop(*_: object) -> None:
        host.stop_instances()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    shape = f"up to {concurrency} concurrent requests per instance" if mode == "fluid" else "a process per request"
    for route, bundle in host.routes.functions.items():
        host.write_log(f"function_host: serving {route} from {bundle.folder} (maxDuration {bundle.max_duration_s} s, "
                       f"{mode}: {shape})\n")  # fmt: skip
    temporary = port_file.with_suffix(".tmp")
    temporary.write_text(str(host.server_address[1]))
    temporary.replace(port_file)
    host.serve_forever(poll_interval=0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description="Vercel router and function instances (local stack only)")
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument(
        "--build",
        type=Path,
        default=os.environ.get("DEVSTACK_VERCEL_BUILD"),
        help="a build folder (default: $DEVSTACK_VERCEL_BUILD, else build the working tree)",
    )
    parser.add_argument(
        "--mode",
        choices=["fluid", "cold"],
        default=os.environ.get("DEVSTACK_FUNCTIONS_MODE", "fluid"),
        help="fluid: concurrent requests share warm instances; cold: a process per request ($DEVSTACK_FUNCTIONS_MODE)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=int(os.environ.get("DEVSTACK_FUNCTIONS_CONCURRENCY", DEFAULT_CONCURRENCY)),
        help=f"requests one instance serves at once in fluid mode (default {DEFAULT_CONCURRENCY}; "
        "$DEVSTACK_FUNCTIONS_CONCURRENCY)",
    )
    args = parser.parse_args()
    build = Build(args.build) if args.build else vercel_build.build_working_tree()
    serve(build, args.port_file, args.mode, args.concurrency)


if __name__ == "__main__":
    main()
