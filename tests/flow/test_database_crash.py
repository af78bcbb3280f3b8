"""A crash of the database stalls nothing. A stack of its own (the other tests share theirs): a
dozen e-mails kick the worker, the server is killed (`pg_ctl -m immediate`) and started again, so
that crash recovery empties pg_net's unlogged tables and starts its request ids again at 1; then
every webhook is answered 200 and processed within a minute, and no log has a 23505 (the pg_net
ids once were worker_requests' primary key: supabase/migrations/20261203001000_*)."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from devstack import stack
from devstack.tools import inbound
from tests.support.database import connect
from tests.support.webhooks import WAIT_S, deliver

# A whole stack of its own, and a crash of its database.
pytestmark = [pytest.mark.slow, pytest.mark.own_stack]

BEFORE, AFTER = 12, 20


def wait_until(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def completed(conninfo: str) -> int:
    with connect(conninfo) as conn:
        # The fetches: each stored fax's prepare_fax job completes too, at its own pace.
        query = "select count(*) as n from document_jobs where kind = 'fetch_email' and status = 'completed'"
        return conn.execute(query).fetchone()["n"]


def test_after_a_crash_every_webhook_is_answered_and_processed_and_no_kick_fails() -> None:
    running = stack.start()
    try:
        env = running.env
        admin_url = env["DEVSTACK_ADMIN_DATABASE_URL"]
        with connect(env["DATABASE_URL"]) as operator:
            stack.store_vault_secrets(operator, env)
        before = [deliver(env, inbound.add_email(env["RESEND_API_URL"])) for _ in range(BEFORE)]
        assert [answer.status_code for answer in before] == [200] * BEFORE
        wait_until(lambda: completed(admin_url) == BEFORE, WAIT_S, "the e-mails before the crash processed")
        with connect(admin_url) as admin:
            kicked = admin.execute(
                "select count(*) as n, max(request_id) as last from document_jobs_internal.worker_requests"
            ).fetchone()
        assert kicked["n"] >= BEFORE
        time.sleep(1)  # test clusters commit with synchronous_commit off: the WAL writer writes within 200 ms

        log_size = running.database.log.stat().st_size
        running.database.stop_server("immediate")  # a crash: no shutdown checkpoint, recovery at the next start
        running.database.start_server()
        assert "automatic recovery in progress" in running.database.log.read_text(errors="replace")[log_size:]

        emails = [inbound.add_email(env["RESEND_API_URL"]) for _ in range(AFTER)]
        with ThreadPoolExecutor(5) as threads:
            after = list(threads.map(lambda data: deliver(env, data), emails))
        assert [(answer.status_code, answer.json().get("duplicate")) for answer in after] == [(200, False)] * AFTER
        wait_until(lambda: completed(admin_url) == BEFORE + AFTER, 60, "every e-mail after the crash processed")

        with connect(admin_url) as admin:
            rows = admin.execute(
                """select count(*) filter (where request_id <= %(last)s) as repeated,
                          count(*) filter (where request_id is null) as gave_up
                     from document_jobs_internal.worker_requests""",
                {"last": kicked["last"]},
            ).fetchone()
        assert rows["repeated"] > 0, "pg_net's ids started again after the crash"
        assert rows["gave_up"] == kicked["n"], "the rows from before the crash gave up their pg_net ids"
        logs = {path.name: path.read_text(errors="replace") for path in Path(running.database.folder).glob("*.log")}
        assert {"postgres.log", "gateway.log", "function_host.log"} <= set(logs)
        assert [name for name, text in logs.items() if re.search(r"\b23505\b|worker_requests_pkey", text)] == []
    finally:
        stack.stop(running)
