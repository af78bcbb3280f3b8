"""Connections to the local stack's database, and the queue's state written or read directly."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg.rows import dict_row


def connect(conninfo: str) -> psycopg.Connection[dict]:
    return psycopg.connect(conninfo, autocommit=True, row_factory=dict_row)


# Every table the tests write, emptied between tests. The record of received faxes among them refuses
# TRUNCATE to every role; document_jobs_test_cluster.reset_tables, which only a test cluster has
# (devstack/bootstrap.sql), is the one way its guard lets through.
RESET_TABLES = (
    "public.document_job_attempts", "public.document_jobs", "public.fax_attachment_views", "public.fax_index",
    "document_jobs_internal.fax_counterparties",
    "public.fax_index_history", "public.fax_received_email_attachments", "public.fax_received_email_raw_messages",
    "document_jobs_internal.discarded_objects", "public.fax_view_rotations", "public.fax_lines",
    "public.fax_received_emails", "public.fax_deletions", "public.fax_object_removals", "net.http_request_queue",
    "net._http_response",
    "vault.secrets", "document_jobs_internal.worker_requests", "public.document_jobs_audit",
    "document_jobs_internal.bulk_actions", "document_jobs_internal.bulk_action_jobs",
    "document_jobs_internal.hourly_outcomes", "document_jobs_internal.unreadable_listed_emails",
    "public.original_verifications", "public.original_verify_runs", "document_jobs_internal.original_mismatches",
    "public.fax_handling", "public.fax_handling_history", "document_jobs_internal.handling_bulk_actions",
    "document_jobs_internal.handling_bulk_action_faxes", "document_jobs_internal.fax_announcements",
    "document_jobs_internal.fax_senders", "public.fax_export_files", "public.fax_export_parts", "public.fax_exports",
)  # fmt: skip


def reset(admin: psycopg.Connection[dict]) -> None:
    """Empty every table the tests write, so that each test starts from nothing."""
    admin.execute("select document_jobs_test_cluster.reset_tables(%s::regclass[])", (list(RESET_TABLES),))
    admin.execute("update public.original_verification set sample = default, recent_days = default")
    admin.execute("update public.office_settings set announce_language = default, screen_url = default")
    admin.execute(
        "update document_jobs_internal.outages"
        " set active = false, since = null, alerted_at = null, alerted_level = null"
    )
    admin.execute(
        "update public.document_jobs_reconciliation set every_minutes = default, overlap = default,"
        " webhooks_missing_after = default, max_pages = default, retention = default, watermark = null,"
        " cursor = null, run_started_at = null, run_listed = 0, run_recorded = 0, run_late = 0, run_newest = null,"
        " last_run_at = null, last_listed = null, last_recorded = null, last_late = null, missing_found_at = null,"
        " outage_closed_at = null, last_completed_at = null, last_finding = null, last_finding_at = null,"
        " run_unreadable = 0, last_unreadable = null, missing_received_at = null, late_after_close = 0"
    )
    reset_rate_limit(admin)


def reset_rate_limit(admin: psycopg.Connection[dict]) -> None:
    """The Resend limiter and the cap of invocations in flight as a fresh deploy has them: a test's
    reservations (or a 429's pause) must not make the next test wait."""
    admin.execute(
        "update document_jobs_rate_limits set requests_per_second = default, share_for_others = default,"
        " burst = default, enabled = default, learned_at = null, next_at = default, paused_until = null"
    )
    admin.execute("update document_jobs_settings set max_invocations_in_flight = null")


def add_jobs(conn: psycopg.Connection, count: int, **columns: str) -> None:
    """Insert jobs straight into the table; column values are SQL expressions."""
    names = ", ".join(["kind", *columns])
    values = ", ".join(["'fetch_email'", *columns.values()])
    conn.execute(f"insert into document_jobs ({names}) select {values} from generate_series(1, %s)", (count,))


def queued_requests(conn: psycopg.Connection) -> list[dict]:
    """The HTTP requests pg_net has queued and not sent yet."""
    return conn.execute("select * from net.http_request_queue order by id").fetchall()


def invoke(conn: psycopg.Connection, max_invocations: int | None = None) -> int:
    """What the every-minute cron job runs: the number of worker POSTs it queued."""
    if max_invocations is None:
        return conn.execute("select invoke_document_jobs() as n").fetchone()["n"]
    return conn.execute("select invoke_document_jobs(%s) as n", (max_invocations,)).fetchone()["n"]


@contextmanager
def as_postgres(conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
    """`conn` (service_role) as postgres for a while: what an operator does in the SQL editor, and
    the role the cron jobs run as."""
    conn.execute("set role postgres")
    try:
        yield conn
    finally:
        conn.execute("set role service_role")


@contextmanager
def cron_paused(conninfo: str, jobname: str) -> Iterator[None]:
    """One of the stack's cron jobs off for a while, and a run of it already under way finished, on
    again afterwards. A connection each way: tests restart the database in between."""
    switch = "select cron.alter_job(jobid, active := %s) from cron.job where jobname = %s"
    running = ("select count(*) as n from cron.job_run_details d join cron.job j using (jobid)"
               " where j.jobname = %s and d.status in ('starting', 'running')")  # fmt: skip
    with connect(conninfo) as admin:
        admin.execute(switch, (False, jobname))
        deadline = time.monotonic() + 30
        while admin.execute(running, (jobname,)).fetchone()["n"] and time.monotonic() < deadline:
            time.sleep(0.1)
    try:
        yield
    finally:
        with connect(conninfo) as admin:
            admin.execute(switch, (True, jobname))


@contextmanager
def reconcile_cron_paused(conninfo: str) -> Iterator[None]:
    """The stack's every-10-minutes reconciliation off while the tests run, on again afterwards: a run
    of it in between would enqueue a job of its own among a test's and record a test's e-mails
    itself. The reconciliation tests run theirs by hand, as the cron job would."""
    with cron_paused(conninfo, "document-jobs-reconcile"):
        yield
