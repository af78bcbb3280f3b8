"""Driving the whole flow on the local stack: e-mails in the sample provider, signed webhooks, the
cron job and the pg_net dispatcher held still when a benchmark needs it, and cleaning up after."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from bench.common import empty_shared_tables, env
from devstack import stack
from devstack.tools import inbound

CRON_JOB = "document-jobs"


def add_emails(count: int, attachments: int) -> list[dict[str, Any]]:
    return [inbound.add_email(env("RESEND_API_URL"), attachments=attachments) for _ in range(count)]


def deliver(data: dict[str, Any]) -> tuple[datetime, int]:
    """Delivers the e-mail's signed email.received webhook; returns when it was sent and the answer's status."""
    body = inbound.event(data)
    headers = inbound.signed_headers(env("RESEND_WEBHOOK_SECRET"), body)
    sent_at = datetime.now(UTC)
    return sent_at, inbound.deliver(env("FUNCTIONS_URL"), body, headers).status_code


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.05) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(poll_s)


def stored_at(conn: psycopg.Connection, provider_email_ids: list[str]) -> dict[str, tuple[int, datetime]]:
    """Per e-mail: how many attachment rows exist, and when the last one was written."""
    rows = conn.execute(
        """select e.provider_email_id, count(*), max(a.created_at)
             from public.fax_received_email_attachments a
             join public.fax_received_emails e on e.id = a.fax_received_email_id
            where e.provider_email_id = any(%s)
            group by 1""",
        (provider_email_ids,),
    ).fetchall()
    return {email_id: (count, last) for email_id, count, last in rows}


@contextlib.contextmanager
def cron_paused(admin: psycopg.Connection) -> Iterator[None]:
    """The every-minute cron job off (a benchmark ticks itself), and on again afterwards."""
    admin.execute("select cron.alter_job(jobid, active := false) from cron.job where jobname = %s", (CRON_JOB,))
    try:
        yield
    finally:
        admin.execute("select cron.alter_job(jobid, active := true) from cron.job where jobname = %s", (CRON_JOB,))


def seconds_past_minute() -> float:
    now = time.time()
    return now - 60 * (now // 60)


@contextlib.contextmanager
def dispatcher_frozen() -> Iterator[None]:
    """The stack's pg_net dispatcher stopped (SIGSTOP) and resumed (SIGCONT): requests queued
    meanwhile wait in net.http_request_queue, where the caller may delete them (a lost kick).
    Freezing keeps the same process, so the stack still stops what it started."""
    pid = stack.attach(env("DEVSTACK_FOLDER")).pids["pg_net_dispatcher"]
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def clean_up(admin: psycopg.Connection, settle_s: float = 30) -> None:
    """Waits for running jobs to end, deletes the objects the run stored, and empties the shared tables."""
    with contextlib.suppress(TimeoutError):
        wait_until(
            lambda: (
                admin.execute("select count(*) from public.document_jobs where status = 'running'").fetchone()[0] == 0
            ),
            settle_s,
            "running jobs to end",
            poll_s=0.2,
        )
    root = Path(env("DEVSTACK_STORAGE_DIR"))
    # The originals, and what the prepare_fax jobs derived from them (under fax_views/).
    stored = admin.execute(
        """select a.bucket, path from public.fax_received_email_attachments a
             left join public.fax_attachment_views v on v.attachment_id = a.id,
             lateral unnest(array[a.storage_path, v.view_path, v.thumbnail_path]) path
            where path is not null"""
    ).fetchall()
    for bucket, path in stored:
        target = root / bucket / path
        for file in (target, target.with_name(target.name + "#meta.json")):
            file.unlink(missing_ok=True)
        for folder in (target.parent, target.parent.parent):  # only when empty: the attachment's, the e-mail's
            with contextlib.suppress(OSError):
                folder.rmdir()
    empty_shared_tables(admin)


def in_flight(conn: psycopg.Connection[Any]) -> int:
    """Worker invocations in flight now, as the cap counts them (post_worker)."""
    row = conn.cursor(row_factory=tuple_row).execute("select document_jobs_internal.invocations_in_flight()").fetchone()
    return int(row[0]) if row else 0


def peak_in_flight(conn: psycopg.Connection[Any]) -> int:
    """The most worker invocations that were in flight at once, as the cap counts them: from each
    POST (document_jobs_internal.worker_requests) until pg_net recorded its answer."""
    spans = (
        conn.cursor(row_factory=tuple_row)
        .execute(
            """select w.created_at, r.created
                 from document_jobs_internal.worker_requests w
                 left join net._http_response r on r.id = w.request_id"""
        )
        .fetchall()
    )
    # An answer recorded at the same instant as a POST ends first: the cap did not count it.
    events = sorted([(posted, 1) for posted, _ in spans] + [(answered, -1) for _, answered in spans if answered])
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak
