"""Serves the output of a real `vercel build` the way Vercel's platform does, local stack only.

Stand-in for Vercel's router and function instances; the handler invocation itself is Vercel's:
each function runs in its bundle (devstack/vercel_build.py lays it out as a deploy does) under
Vercel's own Python runtime shim, `vc__handler__python` from the `vercel-runtime` package that the
build vendors, started in IPC mode as the platform starts it:

- `python -c 'import vc__handler__python'` in the bundle's root, with the `.vc-config.json`
  environment (PYTHONPATH=_vendor), the project's variables and VERCEL_IPC_PATH naming a Unix
  socket. The runtime imports the function, serves it on a loopback port and announces the port
  with a `server-started` message; its logs arrive as `log` messages and go to this host's log.
- The router applies `.vercel/output/config.json`'s routes (filesystem first, then rewrites and
  statuses, then the error phase) and serves `.vercel/output/static` for everything else.
- One runtime process per invocation, like a cold instance (`--warm` keeps instances and reuses
  idle ones, like a warm one). Served from the stack, instances read bytecode compiled at build
  time (devstack/vercel_build.py, `precompile`): faster starts, same behaviour.
- The request is passed on byte for byte, with Vercel's x-vercel-internal-* headers added; the
  original URL is kept, as a rewrite keeps it.
- maxDuration from `.vc-config.json` is enforced from the request's arrival: when it passes the
  instance is killed and, if it had not answered, the caller gets 504 FUNCTION_INVOCATION_TIMEOUT.
  An instance that dies without answering gives 500 FUNCTION_INVOCATION_FAILED.

What it leaves out: regions, the network between router and instance, concurrency limits,
request/response size limits, the "miss" route phase (which only maps `*.py` URLs).

python -m devstack.function_host --port-file FILE [--build DIR] [--warm]

While an instance works on a request, the file invocations/<pid> beside FILE names its function
(for the chaos run to pick its victims).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from devstack import vercel_build
from devstack.vercel_build import Build, Bundle

MAX_HEAD_BYTES = 64 * 1024
# Environment variables a Vercel project would set for the functions: the settings lib/ reads.
PROJECT_VARIABLES = (
    "SUPABASE_URL",
    "SUPABASE_SECRET_KEY",
    "SUPABASE_SERVICE_ROLE_KEY",  # a project with legacy keys (tests/test_end_to_end.py plays one)
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
    process: subprocess.Popen[bytes]
    ipc: socket.socket
    port: int = 0
    ready: threading.Event = field(default_factory=threading.Event)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()


class FunctionHost(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        build: Build,
        env: dict[str, str],
        state: Path,
        warm: bool = False,
        log: BinaryIO | None = None,
        bytecode_cache: Path | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", 0), Router)
        self.routes = Routes(build)
        self.project_env = {name: env[name] for name in PROJECT_VARIABLES if name in env}
        self.invocations = state / "invocations"
        self.invocations.mkdir(parents=True, exist_ok=True)
        self.ipc_folder = Path(tempfile.mkdtemp(prefix="ipc-", dir=state))
        self.warm = warm
        self.bytecode_cache = bytecode_cache
        self.log = log or sys.stderr.buffer
        self._log_lock = threading.Lock()
        self._lock = threading.Lock()
        self._idle: dict[str, list[Instance]] = {}
        self._live: set[Instance] = set()
        self._request_id = 0

    # -- instances --------------------------------------------------------------------------

    def start_instance(self, bundle: Bundle, deadline: float) -> Instance:
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
        if self.bytecode_cache:
            env["PYTHONPYCACHEPREFIX"] = str(self.bytecode_cache)
        process = subprocess.Popen(
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
            ipc, _ = listener.accept()
        except TimeoutError:
            ipc = socket.socket(socket.AF_UNIX)  # never connected: the runtime died or hung first
        finally:
            listener.close()
            ipc_path.unlink(missing_ok=True)
        instance = Instance(bundle, process, ipc)
        with self._lock:
            self._live.add(instance)
        threading.Thread(target=self._read_ipc, args=(instance,), daemon=True).start()
        while not instance.ready.wait(0.02):
            if not instance.alive or time.monotonic() > deadline:
                break
        return instance

    def _read_ipc(self, instance: Instance) -> None:
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
        elif kind == "unrecoverable-error":
            self.write_log(f"function_host: {instance.bundle.route} failed to start: {payload.get('message')}\n")

    def write_log(self, text: str) -> None:
        with self._log_lock:
            self.log.write(text.encode())
            self.log.flush()

    @contextlib.contextmanager
    def instance(self, bundle: Bundle, deadline: float) -> Iterator[Instance]:
        """A ready instance for one request: an idle warm one, or a new (cold) one."""
        instance = None
        with self._lock:
            idle = self._idle.get(bundle.route, [])
            while idle and instance is None:
                candidate = idle.pop()
                instance = candidate if candidate.alive else None
        instance = instance or self.start_instance(bundle, deadline)
        marker = self.invocations / str(instance.process.pid)
        marker.write_text(_entrypoint(bundle))
        reusable = False
        try:
            yield instance
            reusable = self.warm and instance.alive
        finally:
            marker.unlink(missing_ok=True)
            if reusable:
                with self._lock:
                    self._idle.setdefault(bundle.route, []).append(instance)
            else:
                self.retire(instance)

    def retire(self, instance: Instance) -> None:
        instance.kill()
        with contextlib.suppress(OSError):
            instance.ipc.shutdown(socket.SHUT_RDWR)
        with self._lock:
            self._live.discard(instance)

    def stop_instances(self) -> None:
        with self._lock:
            live = list(self._live)
        for instance in live:
            self.retire(instance)

    def next_request_id(self) -> int:
        with self._lock:
            self._request_id += 1
            return self._request_id


def _entrypoint(bundle: Bundle) -> str:
    """api/internal/document_jobs.py: the function's source file, as vercel.json names it."""
    return bundle.route.lstrip("/") + ".py"


def _platform_error(status: int, code: str, page: Path | None = None) -> bytes:
    body = page.read_bytes() if page else f"An error occurred with this function\n\n{code}\n".encode()
    reason = {404: "Not Found", 500: "Internal Server Error", 504: "Gateway Timeout"}.get(status, "Error")
    content_type = "text/html; charset=utf-8" if page else "text/plain; charset=utf-8"
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nx-vercel-error: {code}\r\n"
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
        target = self.server.routes.resolve(parts[1].split("?", 1)[0])
        if isinstance(target, Answer):
            client.sendall(_platform_error(target.status, target.code, target.static_file))
            status = str(target.status)
        elif isinstance(target, Static):
            body = target.file.read_bytes()
            client.sendall(
                f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
            )
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
                "x-vercel-id": f"dev1::{invocation_id[:20]}",
                "x-forwarded-for": self.client_address[0],
                "x-real-ip": self.client_address[0],
                "x-forwarded-proto": "http",
            }
            line_end = head.index(b"\r\n") + 2
            extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
            forwarded = head[:line_end] + extra + head[line_end:] + rest
            return _relay(client, instance, forwarded, deadline)


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


def _relay(client: socket.socket, instance: Instance, forwarded: bytes, deadline: float) -> str:
    """Pass the request to the instance and its answer back, until the instance closes the connection."""
    status = "-"
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
                        status = data.split(b" ", 2)[1].decode("latin-1") if data.count(b" ") >= 2 else "?"
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


def serve(build: Build, port_file: Path, warm: bool) -> None:
    host = FunctionHost(build, dict(os.environ), port_file.parent, warm=warm, bytecode_cache=build.bytecode_cache)

    def stop(*_: object) -> None:
        host.stop_instances()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for route, bundle in host.routes.functions.items():
        host.write_log(f"function_host: serving {route} from {bundle.folder} (maxDuration {bundle.max_duration_s} s)\n")
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
        "--warm",
        action="store_true",
        default=os.environ.get("DEVSTACK_FUNCTIONS_WARM") == "1",
        help="reuse idle instances instead of one per request ($DEVSTACK_FUNCTIONS_WARM=1)",
    )
    args = parser.parse_args()
    build = Build(args.build) if args.build else vercel_build.build_working_tree()
    serve(build, args.port_file, args.warm)


if __name__ == "__main__":
    main()
