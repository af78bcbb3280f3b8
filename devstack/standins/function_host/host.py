"""The host: a TCP server whose Router sends each request to its static file, its platform answer
or an instance of its function, and the pool of instances (Fluid: shared up to `concurrency`
requests; cold: one per request) with their IPC and logs."""

from __future__ import annotations

import base64
import contextlib
import json
import mimetypes
import os
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from devstack.standins.function_host.instance import FunctionLog, Instance, base_interpreter
from devstack.standins.function_host.relay import platform_error, read_head, relay
from devstack.standins.function_host.routes import Answer, Routes, Static
from devstack.vercel_build import Build, Bundle

Mode = Literal["fluid", "cold"]
DEFAULT_CONCURRENCY = 8
# Environment variables a Vercel project would set for the functions: the settings lib/ reads.
PROJECT_VARIABLES = (
    "SUPABASE_URL",
    "SUPABASE_SECRET_KEY",
    "SUPABASE_SERVICE_ROLE_KEY",  # a project with legacy keys (tests/flow/test_end_to_end.py plays one)
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


class FunctionHost(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a burst of webhooks (Resend delivers e-mails at once,
    # at 20 a second and more) overflowed it while the accepting thread started handlers, and the
    # kernel dropped connections (ListenOverflows), which Vercel's edge never does. SOMAXCONN, as
    # servers meant for load ask for (the kernel caps it at net.core.somaxconn).
    request_queue_size = socket.SOMAXCONN

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

    def note_invocation(self, invocation: str, instance: Instance) -> None:
        """A line in the log naming the instance (its pid) an invocation (its x-vercel-id) runs in.

        The chaos run's audit places each attempt with it: the attempt history already records the
        invocation that claimed (the worker sends its x-vercel-id with every call, the claim keeps
        it), and the instance is what the run kills or freezes. The host is the one party that
        knows both, and before the request reaches the instance, so an attempt whose claim was in
        flight when its instance died is placed too, where the worker's own log lines (written
        after its claim) would miss it. No schema or worker change: Vercel gives a function no
        instance name to record."""
        if instance.process is not None:
            line = {"event": "function_host_invocation", "invocation_id": invocation,
                    "pid": instance.process.pid, "at": round(time.time(), 3)}  # fmt: skip
            self.write_log(json.dumps(line) + "\n")

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


class Router(socketserver.BaseRequestHandler):
    server: FunctionHost

    def handle(self) -> None:
        arrived = time.monotonic()
        client: socket.socket = self.request
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head, rest = read_head(client)
        if head is None:
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3:
            client.sendall(platform_error(400, "BAD_REQUEST"))
            return
        path = parts[1].split("?", 1)[0]
        target = self.server.routes.resolve(path)
        extra = "".join(f"{name}: {value}\r\n" for name, value in self.server.routes.headers(path).items())
        if isinstance(target, Answer):
            client.sendall(platform_error(target.status, target.code, target.static_file, extra))
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
                client.sendall(platform_error(500, "FUNCTION_INVOCATION_FAILED"))
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
            self.server.note_invocation(vercel_id(invocation_id), instance)
            line_end = head.index(b"\r\n") + 2
            extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
            forwarded = head[:line_end] + extra + head[line_end:] + rest
            return relay(client, instance, forwarded, deadline, f"x-vercel-id: {vercel_id(invocation_id)}\r\n".encode())
