"""`make up` leaves a stack that processes faxes: the Vault secrets are stored, sample faxes sent
with devstack.tools.send_faxes are stored (or fail as their fault says), a second `up` says a stack
is already up and reprints its admin URL, and `down` stops it all and says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psycopg
import pytest
from psycopg.rows import dict_row

from devstack import stack

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]


def devstack(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=300, env=env)


def test_make_up_processes_sample_faxes_and_a_second_up_says_it_is_up() -> None:
    assert not stack.up_stacks(), "a stack of `make up` is running here: `make down` first"
    started = devstack("devstack", "up")
    try:
        assert started.returncode == 0, started.stderr
        assert "logs in" in started.stdout
        env = stack.up_stacks()[0].env
        again = devstack("devstack", "up")
        assert again.returncode == 0, again.stderr
        assert "a stack is already up" in again.stdout and f"admin screen at {env['ADMIN_URL']}" in again.stdout
        assert "run 'make down' first" in again.stdout
        assert len(stack.up_stacks()) == 1

        # As after `source .devstack/env`: under `make test` the environment names the test's own
        # stack, which send_faxes would otherwise deliver to.
        shell = os.environ | env
        good = devstack("devstack.tools.send_faxes", "--count", "2", env=shell)
        bad = devstack("devstack.tools.send_faxes", "--fault", "not_found", env=shell)
        assert good.returncode == bad.returncode == 0, good.stderr + bad.stderr
        with psycopg.connect(env["DATABASE_URL"], autocommit=True, row_factory=dict_row) as conn:
            names = {r["name"] for r in conn.execute("select name from vault.decrypted_secrets")}
            assert names == {"document_jobs_url", "internal_function_secret"}
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                # The faxes' jobs: the stack's reconciliation (every 10 minutes) may add one of its own.
                jobs = conn.execute("select status, last_error_code from document_jobs where kind = 'fetch_email'"
                                    " order by status").fetchall()  # fmt: skip
                if len(jobs) == 3 and all(job["status"] in ("completed", "failed") for job in jobs):
                    break
                time.sleep(0.5)
        assert [(j["status"], j["last_error_code"]) for j in jobs] == [
            ("completed", None), ("completed", None), ("failed", "resend_not_found")
        ]  # fmt: skip
    finally:
        down = devstack("devstack", "down")
    assert not stack.up_stacks()
    assert down.returncode == 0 and f"stopped the stack of 'make up' at {env['SUPABASE_URL']}" in down.stdout
    again = devstack("devstack", "down")
    assert again.returncode == 0 and "no stack was up; nothing to stop" in again.stdout
