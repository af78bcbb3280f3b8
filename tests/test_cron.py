"""The cron registration, and pg_cron really calling invoke_document_jobs."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.receiver import receiver
from tests.test_invoke import SECRET, add_jobs, store_secrets

CRON_MIGRATION = next(Path(__file__).parent.parent.glob("supabase/migrations/*_document_jobs_cron.sql"))


def test_registering_twice_leaves_one_job_of_each(admin, stack_env) -> None:
    with psycopg.connect(stack_env["DATABASE_URL"], autocommit=True) as migrator:
        migrator.execute(CRON_MIGRATION.read_text())
        migrator.execute(CRON_MIGRATION.read_text())

    jobs = admin.execute("select jobname, schedule, command from cron.job order by jobname").fetchall()
    assert [job["jobname"] for job in jobs] == ["document-jobs", "document-jobs-purge"]
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
    runs = admin.execute(
        """select d.status from cron.job_run_details d join cron.job j using (jobid)
            where j.jobname = 'document-jobs' and d.status = 'succeeded'"""
    ).fetchall()
    assert runs, "the run is recorded in cron.job_run_details"
