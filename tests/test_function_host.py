"""The local function host against a small project of its own, built by the real `vercel build`:
routing by config.json, one instance per request (or reused when warm), maxDuration, crashes."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from devstack import vercel_build
from devstack.function_host import FunctionHost

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
FUNCTIONS = {
    "api/echo.py": HANDLER.format(setup="", action="pass"),
    "api/slow.py": HANDLER.format(setup="", action="time.sleep(30)"),
    "api/crash.py": HANDLER.format(setup="", action="os._exit(3)"),
    "api/broken.py": HANDLER.format(setup="raise RuntimeError('broken at import')", action="pass"),
}
VERCEL_JSON = {
    "functions": {"api/slow.py": {"maxDuration": 2}},
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


def serve(build: vercel_build.Build, state: Path, warm: bool = False) -> Iterator[tuple[str, Path]]:
    log = open(state / "host.log", "wb")  # noqa: SIM115  # closed below, after the host stops
    env = {"INTERNAL_FUNCTION_SECRET": "project-variable", "DATABASE_URL": "not-a-project-variable"}
    host = FunctionHost(build, env, state, warm=warm, log=log)
    threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{host.server_address[1]}", state / "host.log"
    host.shutdown()
    host.stop_instances()
    log.close()


@pytest.fixture
def cold(build, tmp_path) -> Iterator[tuple[str, Path]]:
    yield from serve(build, tmp_path)


@pytest.fixture
def warm(build, tmp_path) -> Iterator[tuple[str, Path]]:
    yield from serve(build, tmp_path, warm=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


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


def test_a_warm_host_reuses_an_idle_instance(warm) -> None:
    url, _ = warm
    first = httpx.post(url + "/api/echo", timeout=60).json()
    second = httpx.post(url + "/api/echo", timeout=60).json()
    assert first["pid"] == second["pid"] and alive(first["pid"])


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
