"""The local function host against a small project of its own, built by the real `vercel build`:
routing by config.json, Fluid compute (concurrent requests as threads of one warm instance, up to
its concurrency, new instances beyond), a process per request in cold mode, maxDuration and
crashes (each taking every request of its instance), and the runtime's per-request log tags."""

from __future__ import annotations

import errno
import json
import os
import selectors
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from chaos.audit import instances
from devstack import vercel_build
from devstack.standins.function_host import FunctionHost, FunctionLog

pytestmark = pytest.mark.slow  # starts function hosts and Vercel runtimes of its own

HANDLER = """
import json, os, sys, time
from http.server import BaseHTTPRequestHandler

{setup}

class handler(BaseHTTPRequestHandler):
    def do_POST(self):
        {action}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({{
            "pid": os.getpid(),
            "path": self.path,
            "headers": {{k.lower(): v for k, v in self.headers.items()}},
            "body_bytes": len(self.rfile.read(length)),
            "secret_seen": os.environ.get("INTERNAL_FUNCTION_SECRET"),
            "database_url_seen": os.environ.get("DATABASE_URL"),
        }}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        print(json.dumps({{"event": "answered", "pid": os.getpid()}}))
"""
# Holds its request for ?seconds=, then answers, or ends its whole process with ?exit=1.
HOLD = """
import json, os, sys, time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

class handler(BaseHTTPRequestHandler):
    def do_POST(self):
        query = parse_qs(urlsplit(self.path).query)
        print(json.dumps({"event": "holding", "vercel_id": self.headers.get("x-vercel-id")}), flush=True)
        time.sleep(float(query.get("seconds", ["0"])[0]))
        if query.get("exit"):
            os._exit(3)
        body = json.dumps({"pid": os.getpid(), "vercel_id": self.headers.get("x-vercel-id")}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
"""
FUNCTIONS = {
    "api/echo.py": HANDLER.format(setup="", action="pass"),
    "api/slow.py": HANDLER.format(setup="", action="time.sleep(30)"),
    "api/crash.py": HANDLER.format(setup="", action="os._exit(3)"),
    "api/broken.py": HANDLER.format(setup="raise RuntimeError('broken at import')", action="pass"),
    "api/hold.py": HOLD,
    "api/share.py": HOLD,
}
HOLD_MAX_DURATION_S = 3
# maxDuration counts from a request's arrival, a new instance's start included, which took over 3 s on a
# loaded machine: the test of how requests share instances holds on a function with room for that start.
VERCEL_JSON = {
    "functions": {
        "api/slow.py": {"maxDuration": 2},
        "api/hold.py": {"maxDuration": HOLD_MAX_DURATION_S},
        "api/share.py": {"maxDuration": 30},
    },
    "rewrites": [{"source": "/echo-elsewhere", "destination": "/api/echo"}],
    "headers": [{"source": "/docs/(.*)", "headers": [{"key": "X-Content-Type-Options", "value": "nosniff"}]}],
}


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> vercel_build.Build:
    source = tmp_path_factory.mktemp("project")
    for name, text in FUNCTIONS.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    (source / "vercel.json").write_text(json.dumps(VERCEL_JSON))
    (source / "requirements.txt").write_text("")
    (source / ".python-version").write_text("3.12\n")
    (source / "public").mkdir()
    (source / "public" / "robots.txt").write_text("User-agent: *\n")
    (source / "public" / "docs").mkdir()
    (source / "public" / "docs" / "page.js").write_text("export {};\n")
    (source / "notes.md").write_text("not public")
    return vercel_build.build_folder(source, tmp_path_factory.mktemp("build"))


def serve(build: vercel_build.Build, state: Path, **options: object) -> Iterator[tuple[str, Path]]:
    log = open(state / "host.log", "wb")  # noqa: SIM115  # closed below, after the host stops
    env = {"INTERNAL_FUNCTION_SECRET": "project-variable", "DATABASE_URL": "not-a-project-variable"}
    host = FunctionHost(build, env, state, log=log, **options)
    threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{host.server_address[1]}", state / "host.log"
    host.shutdown()
    host.stop_instances()
    log.close()


@pytest.fixture
def cold(build, tmp_path) -> Iterator[tuple[str, Path]]:
    yield from serve(build, tmp_path, mode="cold")


@pytest.fixture
def fluid(build, tmp_path) -> Iterator[tuple[str, Path]]:
    yield from serve(build, tmp_path, mode="fluid", concurrency=2)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:  # gone between the signal and the read (ProcessLookupError, FileNotFoundError)
        return False


def logged(log: Path, text: str, within_s: float = 10.0) -> str:
    """The host's log once it holds `text`: log lines arrive over IPC, possibly after the answer."""
    deadline = time.monotonic() + within_s
    while text not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    return log.read_text()


def gone(pid: int, within_s: float = 10.0) -> bool:
    """The host ends an instance right after relaying its answer, so just after the caller has it."""
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_each_request_gets_a_new_instance_that_ends_with_it(cold) -> None:
    url, _ = cold
    first = httpx.post(url + "/api/echo", timeout=60).json()
    second = httpx.post(url + "/api/echo", timeout=60).json()
    assert first["pid"] != second["pid"]
    assert gone(first["pid"]) and gone(second["pid"])


def test_under_fluid_an_instance_stays_up_and_serves_the_next_requests(fluid) -> None:
    url, _ = fluid
    first = httpx.post(url + "/api/echo", timeout=60).json()
    second = httpx.post(url + "/api/echo", timeout=60).json()
    assert first["pid"] == second["pid"] and alive(first["pid"])


def hold(url: str, seconds: float, function: str = "hold", **query: str) -> httpx.Response:
    return httpx.post(f"{url}/api/{function}", params={"seconds": str(seconds), **query}, timeout=60)


def test_concurrent_requests_share_an_instance_up_to_its_concurrency_then_get_a_new_one(fluid) -> None:
    url, _ = fluid  # concurrency 2
    hold(url, 0, "share")  # the first instance is up: the next requests need not wait for a cold start
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda _: hold(url, 1.5, "share").json(), range(3)))
    pids = [answer["pid"] for answer in answers]
    assert sorted(pids.count(pid) for pid in set(pids)) == [1, 2]
    assert len({answer["vercel_id"] for answer in answers}) == 3


def test_an_answer_carries_the_x_vercel_id_its_request_had(fluid) -> None:
    url, _ = fluid
    answer = hold(url, 0)
    assert answer.headers["x-vercel-id"] == answer.json()["vercel_id"]
    assert answer.headers["x-vercel-id"].startswith("dev1::")


def test_a_request_past_max_duration_ends_its_instance_and_every_request_on_it(fluid) -> None:
    url, _ = fluid
    first = hold(url, 0).json()["pid"]
    with ThreadPoolExecutor(2) as pool:
        late = pool.submit(hold, url, 30)  # passes maxDuration (3 s) and takes its instance with it
        time.sleep(0.5)
        other = pool.submit(hold, url, 10)  # on the same instance, within its own maxDuration
        late_answer, other_answer = late.result(), other.result()
    assert (late_answer.status_code, late_answer.headers["x-vercel-error"]) == (504, "FUNCTION_INVOCATION_TIMEOUT")
    assert (other_answer.status_code, other_answer.headers["x-vercel-error"]) == (500, "FUNCTION_INVOCATION_FAILED")
    assert gone(first)
    assert hold(url, 0).json()["pid"] != first  # the next request starts a new instance


def test_an_instance_that_dies_takes_every_request_on_it(fluid) -> None:
    url, _ = fluid
    pid = hold(url, 0).json()["pid"]
    with ThreadPoolExecutor(2) as pool:
        waiting = pool.submit(hold, url, 5)
        time.sleep(0.3)
        crashing = pool.submit(hold, url, 0.5, exit="1")
        assert crashing.result().status_code == 500
        assert (waiting.result().status_code, waiting.result().headers["x-vercel-error"]) == (
            500, "FUNCTION_INVOCATION_FAILED")  # fmt: skip
    assert gone(pid)


def test_a_killed_instance_takes_every_request_on_it(fluid) -> None:
    url, _ = fluid
    pid = hold(url, 0).json()["pid"]
    with ThreadPoolExecutor(2) as pool:
        held = [pool.submit(hold, url, 5) for _ in range(2)]
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)  # as the chaos run kills a worker
        assert [answer.result().status_code for answer in held] == [500, 500]


def test_each_log_line_carries_the_request_it_belongs_to(build, tmp_path) -> None:
    lines: list[FunctionLog] = []
    served = serve(build, tmp_path, mode="fluid", concurrency=4, log_drain=lines.append)
    url, _ = next(served)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: hold(url, 0.5), range(4)))
    next(served, None)
    held = [line for line in lines if line.text.startswith('{"event": "holding"')]
    assert len(held) == 4 and len({line.request_id for line in held}) == 4
    for line in held:  # the runtime's tag names the request the line was written in
        assert json.loads(line.text)["vercel_id"] == f"dev1::{line.invocation_id[:20]}"
    assert {json.loads(line.text)["vercel_id"] for line in held} == {a.headers["x-vercel-id"] for a in answers}


def test_the_log_names_the_instance_of_each_invocation_before_the_function_runs(fluid) -> None:
    """The chaos run's audit places each attempt (its invocation, as the claim recorded it) in the
    instance it kills or freezes, from these lines."""
    url, log = fluid  # concurrency 2: three requests at once take two instances
    hold(url, 0)
    with ThreadPoolExecutor(3) as pool:
        answers = [answer.json() for answer in pool.map(lambda _: hold(url, 1.0), range(3))]
    assert len({answer["pid"] for answer in answers}) == 2
    text = logged(log, answers[-1]["vercel_id"])
    where = instances(log)
    for answer in answers:
        assert where[answer["vercel_id"]].pid == answer["pid"]
        noted = text.index(f'"invocation_id": "{answer["vercel_id"]}"')
        assert noted < text.index(json.dumps({"event": "holding", "vercel_id": answer["vercel_id"]}))


def test_the_function_sees_project_variables_and_vercel_headers_but_not_the_host_environment(cold) -> None:
    url, _ = cold
    seen = httpx.post(url + "/api/echo", content=b"x" * 1000, timeout=60).json()
    assert seen["secret_seen"] == "project-variable"
    assert seen["database_url_seen"] is None
    assert seen["body_bytes"] == 1000
    assert seen["headers"]["x-forwarded-for"] == "127.0.0.1"
    assert "x-vercel-id" in seen["headers"]
    # Vercel's runtime consumes its internal headers; the function never sees them.
    assert not [name for name in seen["headers"] if name.startswith("x-vercel-internal-")]


def test_a_chunked_body_reaches_the_function_as_sent(cold) -> None:
    url, _ = cold
    seen = httpx.post(url + "/api/echo", content=iter([b"abc", b"def"]), timeout=60).json()
    assert seen["headers"].get("transfer-encoding") == "chunked"
    assert seen["body_bytes"] == 0  # the handler reads Content-Length only; what it does with chunks is its own


def test_a_rewrite_reaches_the_function_with_the_url_the_caller_asked_for(cold) -> None:
    url, _ = cold
    seen = httpx.post(url + "/echo-elsewhere?x=1", timeout=60).json()
    assert seen["path"] == "/echo-elsewhere?x=1"


def test_static_files_come_from_public_only_and_misses_are_404(cold) -> None:
    url, _ = cold
    assert httpx.get(url + "/robots.txt", timeout=10).text == "User-agent: *\n"
    for path in ("/notes.md", "/api/echo.py", "/api/missing", "/vercel.json", "/requirements.txt"):
        answer = httpx.get(url + path, timeout=10)
        assert (answer.status_code, answer.headers.get("x-vercel-error")) == (404, "NOT_FOUND"), path


def test_static_files_have_their_type_and_the_headers_of_vercel_json(cold) -> None:
    url, _ = cold
    script = httpx.get(url + "/docs/page.js", timeout=10)
    assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert script.headers["X-Content-Type-Options"] == "nosniff"
    robots = httpx.get(url + "/robots.txt", timeout=10)
    assert robots.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "X-Content-Type-Options" not in robots.headers, "only the routes' own sources"


def test_max_duration_ends_the_instance_with_504(cold) -> None:
    url, log = cold
    started = time.monotonic()
    answer = httpx.post(url + "/api/slow", timeout=60)
    assert (answer.status_code, answer.headers.get("x-vercel-error")) == (504, "FUNCTION_INVOCATION_TIMEOUT")
    assert time.monotonic() - started < 25  # the function sleeps 30 s; maxDuration is 2 s
    assert "POST /api/slow HTTP/1.1 -> 504" in logged(log, "POST /api/slow HTTP/1.1 -> 504")


def test_an_instance_that_dies_mid_request_gives_500(cold) -> None:
    url, _ = cold
    answer = httpx.post(url + "/api/crash", timeout=60)
    assert (answer.status_code, answer.headers.get("x-vercel-error")) == (500, "FUNCTION_INVOCATION_FAILED")


def test_a_function_that_fails_to_import_gives_500_and_the_log_says_why(cold) -> None:
    url, log = cold
    answer = httpx.post(url + "/api/broken", timeout=60)
    assert answer.status_code == 500
    assert "broken at import" in logged(log, "broken at import")


def test_function_output_reaches_the_host_log_through_the_runtime(cold) -> None:
    url, log = cold
    pid = httpx.post(url + "/api/echo", timeout=60).json()["pid"]
    text = logged(log, json.dumps({"event": "answered", "pid": pid}))
    lines = [json.loads(line) for line in text.splitlines() if line.startswith('{"event"')]
    assert {"event": "answered", "pid": pid} in lines


BURST = 200  # the webhooks of a busy second or two, all at once


def test_a_burst_of_connections_is_queued_not_dropped_while_the_host_is_busy(build, tmp_path) -> None:
    # The host accepts nothing until every client has connected: the kernel must hold all of them
    # in the listen backlog. With socketserver's backlog of 5 it dropped the SYNs beyond it, and
    # those connections would only have been made by the clients' retransmissions (seconds later),
    # which no accept here would ever have let through.
    with open(tmp_path / "host.log", "wb") as log:
        host = FunctionHost(build, {}, tmp_path, log=log, mode="cold")
        clients = [socket.socket() for _ in range(BURST)]
        serving = threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        try:
            for client in clients:
                client.setblocking(False)
                assert client.connect_ex(host.server_address) in (0, errno.EINPROGRESS)
            with selectors.DefaultSelector() as waiting:
                for client in clients:
                    waiting.register(client, selectors.EVENT_WRITE)
                connected = 0
                deadline = time.monotonic() + 30
                while connected < BURST and time.monotonic() < deadline:
                    for key, _ in waiting.select(timeout=1):
                        assert key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0  # type: ignore[union-attr]
                        waiting.unregister(key.fileobj)
                        connected += 1
            assert connected == BURST, f"{BURST - connected} of {BURST} connections were not taken into the backlog"
            for client in clients:
                client.setblocking(True)
                client.settimeout(60)
                client.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
            serving.start()
            answers = [read_answer(client) for client in clients]
        finally:
            for client in clients:
                client.close()
            if serving.is_alive():
                host.shutdown()  # waits for serve_forever: only once it runs
            host.server_close()
    assert [answer.split(b"\r\n", 1)[0] for answer in answers] == [b"HTTP/1.1 200 OK"] * BURST
    assert all(answer.endswith(b"User-agent: *\n") for answer in answers)


def read_answer(client: socket.socket) -> bytes:
    """A whole answer of the host's static files (it closes the connection after each)."""
    chunks = []
    while chunk := client.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
