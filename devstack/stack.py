"""Starts and stops the whole local stack and says how to reach it (environment variables, with
the names the deployed code reads):

- the database cluster (devstack/cluster.py),
- the API gateway: the PostgREST, Storage and Auth stand-ins (devstack/standins/gateway.py), with an
  operator (admin) and a viewer of the admin screen signed up in Auth,
- the pg_net dispatcher (devstack/standins/pg_net.py),
- the Resend sample provider (devstack/standins/resend.py),
- the Vercel function host serving the output of a real `vercel build` of api/ through Vercel's
  own Python runtime (devstack/vercel_build.py, devstack/standins/function_host/).
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

from devstack import cluster, lifecycle, vercel_build
from devstack.standins import auth

ENV_FILE = cluster.ROOT / ".devstack" / "env"
READY_TIMEOUT_S = 30.0
# name -> module and whether it reports a port (else a ready file)
PROCESSES = {
    "gateway": ("devstack.standins.gateway", "--port-file"),
    "pg_net_dispatcher": ("devstack.standins.pg_net", "--ready-file"),
    "resend_provider": ("devstack.standins.resend", "--port-file"),
    "function_host": ("devstack.standins.function_host", "--port-file"),
}
# Faults go in front of the stand-ins through the chaos run's layer (chaos/layer/, loaded by each
# stand-in's start: devstack/standins/layer.py); the tests, the demo and `make faxes` inject them too.
# DEVSTACK_FAULT_LAYER set empty starts the stand-ins without it.
FAULT_LAYER = "chaos.layer"
WORKER_PATH = "/api/internal/document-jobs"  # the rewrite in vercel.json
ADMIN_PATH = "/admin"  # the admin screen's page (vercel.json rewrites it to api/admin.py)
# The local admin screen's accounts, one per role (example.com is reserved: no mail ever goes anywhere).
OPERATORS = {
    "OPERATOR": ("operator@example.com", "admin"),
    "CLERK": ("clerk@example.com", "clerk"),
    "VIEWER": ("viewer@example.com", "viewer"),
}
URL_VARIABLE = {"gateway": "SUPABASE_URL", "resend_provider": "RESEND_API_URL", "function_host": "FUNCTIONS_URL"}
# Set, to the reason, around a test that may not start a stack (tests/support/lanes.py): a start
# reaps stacks whose owner died, which another test may be about to count.
NO_NEW_STACKS = "DEVSTACK_NO_NEW_STACKS"


def legacy_api_key(jwt_secret: str, role: str) -> str:
    """A legacy Supabase API key: an HS256 JWT whose "role" claim picks the database role."""
    now = int(time.time())
    return jwt.encode({"iss": "supabase-local", "role": role, "iat": now, "exp": now + 10 * 365 * 86400}, jwt_secret)


def new_api_key(kind: str) -> str:
    """A key of the form a new project has (sb_secret_..., sb_publishable_...): not a JWT."""
    return f"sb_{kind}_{secrets.token_urlsafe(24)}"


@dataclass
class Stack:
    database: cluster.Cluster
    record: lifecycle.Record
    env: dict[str, str] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def state_file(self) -> Path:
        return self.database.folder / "state.json"

    def start_process(self, name: str) -> None:
        module, flag = PROCESSES[name]
        signal_file = self.database.folder / f"{name}.{'port' if flag == '--port-file' else 'ready'}"
        signal_file.unlink(missing_ok=True)
        with open(self.database.folder / f"{name}.log", "ab") as log, lifecycle.signals_blocked():
            process = subprocess.Popen(  # the child keeps its own copy of the log
                [sys.executable, "-m", module, flag, str(signal_file)],
                cwd=cluster.ROOT,
                env={**os.environ, **self.env},
                stdout=log,
                stderr=log,
                start_new_session=True,
                preexec_fn=lifecycle.unblock_signals,
            )
            self.pids[name] = process.pid
            self.save()
        value = _wait_for_file(signal_file, process, name)
        if name in URL_VARIABLE:
            self.env[URL_VARIABLE[name]] = f"http://127.0.0.1:{value}"
        self.save()

    def stop_process(self, name: str) -> None:
        pid = self.pids.pop(name)
        lifecycle.stop_group(pid)
        self.save()

    def save(self) -> None:
        """The stack's own state, in its folder: tests stop and restart its processes through it.
        The record (devstack/lifecycle.py) names the same processes, for whoever must clean up."""
        state = {"folder": str(self.database.folder), "pids": self.pids, "env": self.env, "record": self.record.id}
        self.state_file.write_text(json.dumps(state))
        self.record.process_groups = dict(self.pids)
        self.record.save()


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
    if refusal := os.environ.get(NO_NEW_STACKS):
        raise RuntimeError(refusal)
    # Built before anything starts: a build failure is the first thing a developer should see.
    lifecycle.reap_stale(stop_record)
    build = vercel_build.build_working_tree()
    record = lifecycle.new_record()

    def made(folder: Path) -> None:
        record.folder = str(folder)
        record.save()

    database = cluster.start(on_folder=made)
    stack = Stack(database, record)
    try:
        jwt_secret = secrets.token_urlsafe(32)
        signing_key, key_id = auth.new_signing_key()
        stack.env.update(
            database.libpq_env("postgres"),
            DATABASE_URL=database.conninfo("postgres"),
            DEVSTACK_ADMIN_DATABASE_URL=database.conninfo(cluster.SUPERUSER),
            DEVSTACK_AUTHENTICATOR_DATABASE_URL=database.conninfo("authenticator"),
            DEVSTACK_AUTH_DATABASE_URL=database.conninfo("supabase_auth_admin"),
            # For the Supabase CLI (`supabase migration list --db-url "$SUPABASE_DB_URL"`): TCP, as it needs.
            SUPABASE_DB_URL=database.url(),
            PGPASSFILE=str(database.passfile),
            DEVSTACK_FOLDER=str(database.folder),
            DEVSTACK_STORAGE_DIR=str(database.folder / "storage"),
            DEVSTACK_VERCEL_BUILD=str(build.folder),
            SUPABASE_JWT_SECRET=jwt_secret,
            # The keys of a new project: what the functions, the demo, the tests and the chaos run use.
            SUPABASE_SECRET_KEY=new_api_key("secret"),
            SUPABASE_PUBLISHABLE_KEY=new_api_key("publishable"),
            # The same project's legacy JWT keys, under names no deployed code reads: for the runs
            # that play a project which has not migrated (SUPABASE_SERVICE_ROLE_KEY set to this).
            DEVSTACK_LEGACY_ANON_KEY=legacy_api_key(jwt_secret, "anon"),
            DEVSTACK_LEGACY_SERVICE_ROLE_KEY=legacy_api_key(jwt_secret, "service_role"),
            # The Auth stand-in's ES256 signing key (its public part is the JWKS).
            DEVSTACK_AUTH_SIGNING_KEY=signing_key,
            DEVSTACK_AUTH_KEY_ID=key_id,
            # What the functions read on Vercel; throwaway values made for this stack alone.
            INTERNAL_FUNCTION_SECRET=secrets.token_urlsafe(32),
            RESEND_API_KEY="re_local_" + secrets.token_urlsafe(16),
            RESEND_WEBHOOK_SECRET="whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
            DEVSTACK_FAULT_LAYER=os.environ.get("DEVSTACK_FAULT_LAYER", FAULT_LAYER),
        )
        stack.env.update(extra_env or {})
        for name in PROCESSES:
            stack.start_process(name)
        add_operators(stack)
    except BaseException:
        stop(stack)
        raise
    return stack


def add_operators(stack: Stack) -> None:
    """An admin and a viewer of the admin screen, through the operators CLI's own code (Auth's admin API)."""
    import httpx

    from lib.admin.operators import AuthAdmin, add
    from lib.settings import SupabaseSettings

    settings = SupabaseSettings(
        supabase_url=stack.env["SUPABASE_URL"], supabase_secret_key=stack.env["SUPABASE_SECRET_KEY"]
    )
    with httpx.Client() as http:
        for name, (email, role) in OPERATORS.items():
            password = secrets.token_urlsafe(12)
            add(AuthAdmin(http, settings), email, role, password)
            stack.env[f"DEVSTACK_{name}_EMAIL"], stack.env[f"DEVSTACK_{name}_PASSWORD"] = email, password
    stack.env["ADMIN_URL"] = stack.env["FUNCTIONS_URL"] + ADMIN_PATH
    # Auth's Site URL is the screen's, as docs/DEPLOY.md asks of a project: the e-mailed links of a
    # recovery or an invitation return to it.
    httpx.post(f"{stack.env['SUPABASE_URL']}/_control/auth", json={"site_url": stack.env["ADMIN_URL"]},
               timeout=10).raise_for_status()  # fmt: skip
    stack.save()


def stop(stack: Stack) -> None:
    if stack.state_file.exists():  # a test may have restarted a process since: take the pids from the file
        stack.pids = json.loads(stack.state_file.read_text())["pids"]
    stack.record.process_groups = dict(stack.pids)
    stop_record(stack.record)
    stack.record.forget()


def stop_record(record: lifecycle.Record) -> None:
    """Stop every process of a stack and delete its folder, from its record alone."""
    for pgid in record.process_groups.values():  # each process leads its own group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
    for pgid in record.process_groups.values():
        lifecycle.stop_group(pgid)
    if record.folder:
        cluster.Cluster(Path(record.folder)).stop()


def attach(folder: str | Path) -> Stack:
    """The running stack whose folder is `folder` (DEVSTACK_FOLDER), from another process."""
    state = json.loads((Path(folder) / "state.json").read_text())
    record = next(r for r in lifecycle.records() if r.id == state["record"])
    return Stack(cluster.Cluster(Path(state["folder"])), record, env=state["env"], pids=state["pids"])


def save_for_up(stack: Stack) -> None:
    """Hand the stack over to nobody: it outlives the `up` command until `down`."""
    stack.record.owner_pid = stack.record.owner_started = None
    stack.record.save()
    ENV_FILE.parent.mkdir(exist_ok=True)
    ENV_FILE.write_text("".join(f"export {key}='{value}'\n" for key, value in sorted(stack.env.items())))


# The Vault secrets the database reads (docs/DEPLOY.md, step 4): where the worker is, its secret, and
# where failure alerts go.
WORKER_URL_SECRET = "document_jobs_url"
WORKER_SECRET_SECRET = "internal_function_secret"
ALERT_URL_SECRET = "document_jobs_alert_url"
ANNOUNCE_URL_SECRET = "document_jobs_announce_url"  # opt-in: new faxes announced in a chat


def store_vault_secret(conn: psycopg.Connection[Any], name: str, value: str) -> None:
    """One secret, as an operator stores it in the SQL editor. `conn` is postgres (or the cluster's
    superuser): service_role has no access to Vault."""
    conn.execute("select vault.create_secret(%s, %s)", (value, name))


def store_vault_secrets(conn: psycopg.Connection[Any], env: dict[str, str]) -> None:
    """What an operator does once after deploying: tell the database where the worker is, and its secret."""
    store_vault_secret(conn, WORKER_URL_SECRET, env["FUNCTIONS_URL"] + WORKER_PATH)
    store_vault_secret(conn, WORKER_SECRET_SECRET, env["INTERNAL_FUNCTION_SECRET"])


def up_stacks() -> list[Stack]:
    """The stacks that `up` started and no `down` has stopped yet."""
    found = []
    for record in lifecycle.records():
        if record.owner_pid is None and record.folder and (Path(record.folder) / "state.json").exists():
            found.append(attach(record.folder))
    return found


def down() -> tuple[list[Stack], int]:
    """Stop what `up` started, and any stack a killed command left behind: the stacks of `up`
    that were stopped, and how many left-behind ones."""
    stopped = up_stacks()
    for running in stopped:
        stop(running)
    reaped = lifecycle.reap_stale(stop_record)
    ENV_FILE.unlink(missing_ok=True)
    return stopped, reaped
