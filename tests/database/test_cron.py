"""The cron registration, and pg_cron really calling invoke_document_jobs."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from tests.support.database import add_jobs
from tests.support.receiver import receiver
from tests.support.vault import SECRET, store_secrets

MIGRATIONS = Path(__file__).parents[2] / "supabase/migrations"
CRON_MIGRATION = next(MIGRATIONS.glob("*_document_jobs_cron.sql"))
# The alerts migration registers the health check; its cron statements are its last lines.
HEALTH_CRON = "\n".join(
    line for line in next(MIGRATIONS.glob("*_document_jobs_alerts.sql")).read_text().splitlines()
    if line.startswith("select cron.")
)  # fmt: skip
# Reconciliation registers its own cron job and extends the health check's command.
RECONCILE_CRON = "\n".join(
    line for line in next(MIGRATIONS.glob("*_document_jobs_reconcile_emails.sql")).read_text().splitlines()
    if line.startswith("select cron.")
)  # fmt: skip
# Verification registers its weekly cron job.
VERIFY_CRON = "\n".join(
    line for line in next(MIGRATIONS.glob("*_verify_originals.sql")).read_text().splitlines()
    if line.startswith("select cron.")
)  # fmt: skip


def test_registering_twice_leaves_one_job_of_each(admin, stack_env) -> None:
    # The older migrations' statements register older commands (the health check's grew since):
    # the shared stack gets the current ones back, for the tests after this one.
    current = admin.execute("select jobname, schedule, command from cron.job").fetchall()
    with psycopg.connect(stack_env["DATABASE_URL"], autocommit=True) as migrator:
        try:
            for _ in range(2):
                migrator.execute(CRON_MIGRATION.read_text())
                migrator.execute(HEALTH_CRON)
                migrator.execute(RECONCILE_CRON)
            jobs = admin.execute("select jobname, schedule, command from cron.job order by jobname").fetchall()
        finally:
            for job in current:
                migrator.execute("select cron.schedule(%(jobname)s, %(schedule)s, %(command)s)", job)

    assert HEALTH_CRON.count("select cron.") == 2
    assert [job["jobname"] for job in jobs] == [
        "document-jobs",
        "document-jobs-announce",
        "document-jobs-health",
        "document-jobs-purge",
        "document-jobs-reconcile",
        "document-jobs-verify",
    ]
    assert jobs[0]["schedule"] == "* * * * *"
    assert jobs[0]["command"] == "select public.invoke_document_jobs()"


@pytest.mark.slow  # waits for pg_cron's next tick, up to a minute: the one test that needs the real one
def test_pg_cron_calls_the_worker_when_work_is_waiting(db, admin) -> None:
    # Jobs inserted directly (no kick): only the every-minute cron can call the worker.
    with receiver() as worker:
        store_secrets(db, worker.url + "/api/internal/document-jobs")
        add_jobs(db, 4)

        got = worker.get(timeout=75)  # the cron ticks once a minute

        assert got.headers["authorization"] == f"Bearer {SECRET}"
        assert worker.get(timeout=10).path == got.path, "4 claimable jobs: a second POST in the same tick"
    # pg_cron records the run's end after the command's transaction commits, and pg_net may send the
    # POST before that (on a loaded machine, the health check starting in the same minute, seconds before).
    deadline = time.monotonic() + 30
    while not admin.execute(
        """select d.status from cron.job_run_details d join cron.job j using (jobid)
            where j.jobname = 'document-jobs' and d.status = 'succeeded'"""
    ).fetchall():
        assert time.monotonic() < deadline, "the run is recorded in cron.job_run_details"
        time.sleep(0.2)
