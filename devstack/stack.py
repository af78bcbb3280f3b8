"""Starts and stops the whole local stack and says how to reach it (environment variables, with
the names the deployed code reads):

- the database cluster (devstack/cluster.py),
- the API gateway: the PostgREST and Storage stand-ins (devstack/gateway.py),
- the pg_net dispatcher (devstack/pg_net_dispatcher.py),
- the Resend sample provider (devstack/resend_provider.py),
- the Vercel function host serving api/ (devstack/function_host.py).
"""

from __future__ import annotations

import base64
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
from typing import Any

import jwt
import psycopg

from devstack import cluster

STATE_FILE = cluster.ROOT / ".devstack" / "state.json"
ENV_FILE = cluster.ROOT / ".devstack" / "env"
READY_TIMEOUT_S = 30.0
# name -> module and whether it reports a port (else a ready file)
PROCESSES = {
    "gateway": ("devstack.gateway", "--port-file"),
    "pg_net_dispatcher": ("devstack.pg_net_dispatcher", "--ready-file"),
    "resend_provider": ("devstack.resend_provider", "--port-file"),
    "function_host": ("devstack.function_host", "--port-file"),
}
WORKER_PATH = "/api/internal/document-jobs"  # the rewrite in vercel.json
URL_VARIABLE = {"gateway": "SUPABASE_URL", "resend_provider": "RESEND_API_URL", "function_host": "FUNCTIONS_URL"}


def api_key(jwt_secret: str, role: str) -> str:
    """A Supabase-style API key: an HS256 JWT whose "role" claim picks the database role."""
    now = int(time.time())
    return jwt.encode({"iss": "supabase-local", "role": role, "iat": now, "exp": now + 10 * 365 * 86400}, jwt_secret)


@dataclass
class Stack:
    database: cluster.Cluster
    env: dict[str, str] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def state_file(self) -> Path:
        return self.database.folder / "state.json"

    def start_process(self, name: str) -> None:
        module, flag = PROCESSES[name]
        signal_file = self.database.folder / f"{name}.{'port' if flag == '--port-file' else 'ready'}"
        signal_file.unlink(missing_ok=True)
        with open(self.database.folder / f"{name}.log", "ab") as log:  # the child keeps its own copy
            process = subprocess.Popen(
                [sys.executable, "-m", module, flag, str(signal_file)],
                cwd=cluster.ROOT,
                env={**os.environ, **self.env},
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.pids[name] = process.pid
        value = _wait_for_file(signal_file, process, name)
        if name in URL_VARIABLE:
            self.env[URL_VARIABLE[name]] = f"http://127.0.0.1:{value}"
        self.save()

    def stop_process(self, name: str) -> None:
        pid = self.pids.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        _wait_gone(pid)
        self.save()

    def save(self) -> None:
        """The stack's own state, in its folder: tests stop and restart its processes through it."""
        state = {"folder": str(self.database.folder), "pids": self.pids, "env": self.env}
        self.state_file.write_text(json.dumps(state))


def _wait_for_file(path: Path, process: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}; see {path.parent / what}.log")
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start within {READY_TIMEOUT_S} s")


def start(extra_env: dict[str, str] | None = None) -> Stack:
    """`extra_env` reaches every process, the functions included (e.g. JOB_LEASE_SECONDS for a chaos run)."""
    database = cluster.start()
    stack = Stack(database)
    try:
        jwt_secret = secrets.token_urlsafe(32)
        stack.env.update(
            database.libpq_env("postgres"),
            DATABASE_URL=database.conninfo("postgres"),
            DEVSTACK_ADMIN_DATABASE_URL=database.conninfo(cluster.SUPERUSER),
            DEVSTACK_AUTHENTICATOR_DATABASE_URL=database.conninfo("authenticator"),
            # For the Supabase CLI (`supabase migration list --db-url "$SUPABASE_DB_URL"`): TCP, as it needs.
            SUPABASE_DB_URL=database.url(),
            PGPASSFILE=str(database.passfile),
            DEVSTACK_FOLDER=str(database.folder),
            DEVSTACK_STORAGE_DIR=str(database.folder / "storage"),
            SUPABASE_JWT_SECRET=jwt_secret,
            SUPABASE_ANON_KEY=api_key(jwt_secret, "anon"),
            SUPABASE_SERVICE_ROLE_KEY=api_key(jwt_secret, "service_role"),
            # What the functions read on Vercel; throwaway values made for this stack alone.
            INTERNAL_FUNCTION_SECRET=secrets.token_urlsafe(32),
            RESEND_API_KEY="re_local_" + secrets.token_urlsafe(16),
            RESEND_WEBHOOK_SECRET="whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
        )
        stack.env.update(extra_env or {})
        for name in PROCESSES:
            stack.start_process(name)
    except BaseException:
        stop(stack)
        raise
    return stack


def stop(stack: Stack) -> None:
    if stack.state_file.exists():  # a test may have restarted a process since: take the pids from the file
        stack.pids = json.loads(stack.state_file.read_text())["pids"]
    for name in list(stack.pids):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(stack.pids[name], signal.SIGTERM)
    for pid in stack.pids.values():
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


def attach(folder: str | Path) -> Stack:
    """The running stack whose folder is `folder` (DEVSTACK_FOLDER), from another process."""
    state = json.loads((Path(folder) / "state.json").read_text())
    return Stack(cluster.Cluster(Path(state["folder"])), env=state["env"], pids=state["pids"])


def save_for_up(stack: Stack) -> None:
    STATE_FILE.parent.mkdir(exist_ok=True)
    STATE_FILE.write_text(json.dumps({"folder": str(stack.database.folder)}))
    ENV_FILE.write_text("".join(f"export {key}='{value}'\n" for key, value in sorted(stack.env.items())))


def store_vault_secrets(conn: psycopg.Connection[Any], env: dict[str, str]) -> None:
    """What an operator does once after deploying: tell the database where the worker is, and its secret.
    `conn` is postgres, as in the SQL editor: service_role has no access to Vault."""
    conn.execute("select vault.create_secret(%s, 'document_jobs_url')", (env["FUNCTIONS_URL"] + WORKER_PATH,))
    conn.execute("select vault.create_secret(%s, 'internal_function_secret')", (env["INTERNAL_FUNCTION_SECRET"],))


def forget() -> None:
    STATE_FILE.unlink(missing_ok=True)
    ENV_FILE.unlink(missing_ok=True)


def load() -> Stack | None:
    """The stack started by an earlier "up", if its state is still here."""
    if not STATE_FILE.exists():
        return None
    return attach(json.loads(STATE_FILE.read_text())["folder"])
