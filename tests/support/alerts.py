"""Reading the alerts pg_net really POSTs to a receiver on loopback, and the health check the
every-minute cron job runs."""

from __future__ import annotations

import json
import time

import psycopg

from tests.support.database import as_postgres
from tests.support.receiver import Received, Receiver

ALERT_PATH = "/hooks/alerts"
STRAGGLER_S = 1.0  # a margin for ordering only: no assertion is about time


def received_until_marker(conn: psycopg.Connection, hook: Receiver) -> list[Received]:
    """Every alert request sent so far. The dispatcher sends requests in order but on concurrent threads:
    once a marker POST queued after them has arrived, and a moment more, every earlier one has."""
    conn.execute("select net.http_post(%s, timeout_milliseconds => 5000)", (hook.url + "/marker",))
    got = []
    while (request := hook.get()).path != "/marker":
        got.append(request)
    time.sleep(STRAGGLER_S)
    return got + [r for r in hook.drain() if r.path != "/marker"]


def alerts_until_marker(conn: psycopg.Connection, hook: Receiver, event: str | None = None) -> list[dict]:
    """The alerts' bodies; only those of one event when named (the every-minute health check runs
    in the background, and a test about failed jobs is not about it)."""
    bodies = [json.loads(r.body) for r in received_until_marker(conn, hook)]
    return [body for body in bodies if event is None or body["event"] == event]


def check_health(db: psycopg.Connection) -> int:
    """What the every-minute cron job document-jobs-health runs (as postgres, its owner)."""
    with as_postgres(db):
        return db.execute("select document_jobs_internal.check_health() as n").fetchone()["n"]
