"""Starts and stops the whole local stack: the database cluster, the pg_net dispatcher and the
API gateway (PostgREST and Storage stand-ins), and says how to reach them (environment
variables, the same names the deployed code reads)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jwt

from devstack import cluster

STATE_FILE = cluster.ROOT / ".devstack" / "state.json"
ENV_FILE = cluster.ROOT / ".devstack" / "env"
READY_TIMEOUT_S = 20.0


def api_key(jwt_secret: str, role: str) -> str:
    """A Supabase-style API key: an HS256 JWT whose "role" claim picks the database role."""
    return jwt.encode(
        {"iss": "supabase-local", "role": role, "iat": int(time.time()), "exp": int(time.time()) + 10 * 365 * 86400},
        jwt_secret,
        algorithm="HS256",
    )


@dataclass
class Stack:
    database: cluster.Cluster
    env: dict[str, str] = field(default_factory=dict)
    pids: list[int] = field(default_factory=list)

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.database.folder / f"{name}.log", "ab") as log:  # the child keeps its own copy
            process = subprocess.Popen(
                [sys.executable, "-m", *args],
                cwd=cluster.ROOT,
                env={**os.environ, **self.env},
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.pids.append(process.pid)
        return process

    def save(self) -> None:
        STATE_FILE.parent.mkdir(exist_ok=True)
        STATE_FILE.write_text(json.dumps({"folder": str(self.database.folder), "pids": self.pids, "env": self.env}))
        ENV_FILE.write_text("".join(f"export {key}='{value}'\n" for key, value in sorted(self.env.items())))


def _wait_for_file(path: Path, process: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}; see its log in {path.parent}")
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start within {READY_TIMEOUT_S} s")


def start() -> Stack:
    database = cluster.start()
    stack = Stack(database)
    try:
        jwt_secret = secrets.token_urlsafe(32)
        stack.env.update(
            database.libpq_env("postgres"),
            DATABASE_URL=database.conninfo("postgres"),
            DEVSTACK_ADMIN_DATABASE_URL=database.conninfo(cluster.SUPERUSER),
            DEVSTACK_AUTHENTICATOR_DATABASE_URL=database.conninfo("authenticator"),
            DEVSTACK_FOLDER=str(database.folder),
            DEVSTACK_STORAGE_DIR=str(database.folder / "storage"),
            SUPABASE_JWT_SECRET=jwt_secret,
            SUPABASE_ANON_KEY=api_key(jwt_secret, "anon"),
            SUPABASE_SERVICE_ROLE_KEY=api_key(jwt_secret, "service_role"),
        )
        port_file = database.folder / "gateway.port"
        gateway = stack.spawn("gateway", "devstack.gateway", "--port-file", str(port_file))
        stack.env["SUPABASE_URL"] = f"http://127.0.0.1:{_wait_for_file(port_file, gateway, 'the API gateway')}"
        ready_file = database.folder / "dispatcher.ready"
        dispatcher = stack.spawn("pg_net_dispatcher", "devstack.pg_net_dispatcher", "--ready-file", str(ready_file))
        _wait_for_file(ready_file, dispatcher, "the pg_net dispatcher")
    except BaseException:
        stop(stack)
        raise
    return stack


def stop(stack: Stack) -> None:
    for pid in stack.pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    for pid in stack.pids:
        _wait_gone(pid)
    stack.database.stop()


def _wait_gone(pid: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def forget() -> None:
    STATE_FILE.unlink(missing_ok=True)
    ENV_FILE.unlink(missing_ok=True)


def load() -> Stack | None:
    """The stack started by an earlier "up", if its state is still here."""
    if not STATE_FILE.exists():
        return None
    state = json.loads(STATE_FILE.read_text())
    return Stack(cluster.Cluster(Path(state["folder"])), env=state["env"], pids=state["pids"])
