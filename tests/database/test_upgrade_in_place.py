"""A database that applied the migrations before the fenced calls' _v2 functions upgrades in place,
as a deployed project does: `supabase db push` of the new migration keeps the old names answering
as before (the previous deploy's workers call them until the Vercel deploy replaces them), and the
jobs it finds get their last attempt's outcome from their history."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row

from devstack import cluster
from tests.support.projects import project_with, started

UPGRADE = "20261201006000"  # supabase/migrations/20261201006000_document_jobs_fenced_v2.sql


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """This project as it was before the upgrade: every migration older than it."""
    return project_with(tmp_path, (path for path in cluster.migrations() if path.name < UPGRADE))


@pytest.fixture
def before(project: Path) -> Iterator[cluster.Cluster]:
    with started(project) as database:
        yield database


def upgrade(database: cluster.Cluster, project: Path) -> None:
    for path in cluster.migrations():
        if path.name >= UPGRADE:
            shutil.copy(path, project / "supabase" / "migrations")
    cluster.apply_migrations(database, project)


def test_the_jobs_of_a_deployed_database_get_their_outcome_and_the_old_calls_keep_answering(
    project: Path, before: cluster.Cluster
) -> None:
    with psycopg.connect(before.conninfo(cluster.SUPERUSER), autocommit=True, row_factory=dict_row) as conn:
        conn.execute("set client_min_messages = error")  # the failure alerts' "no alert URL stored"
        ways = ["completed", "retried", "released", "failed", "cancelled", "running", "never claimed"]
        jobs = {}
        for way in ways:
            email = conn.execute(
                "insert into fax_received_emails (provider_email_id, data) values (%s, '{}') returning id", (way,)
            ).fetchone()["id"]
            jobs[way] = conn.execute("select job_id from enqueue_document_job('fetch_email', %s)", (email,)).fetchone()[
                "job_id"
            ]
        claimed = {row["id"]: row["generation"] for row in conn.execute(
            "select id, generation from claim_document_jobs('fetch_email', 100)").fetchall()}  # fmt: skip
        conn.execute("update document_jobs set status = 'queued', lease_until = null, generation = 0, attempts = 0"
                     " where id = %s", (jobs["never claimed"],))  # fmt: skip
        held = {way: (jobs[way], claimed[jobs[way]]) for way in ways if way != "never claimed"}
        conn.execute("select complete_document_job(%s, %s)", held["completed"])
        conn.execute("select fail_document_job(%s, %s, 'resend_unavailable', 'HTTP 503')", held["retried"])
        conn.execute("select release_document_job(%s, %s, '0 seconds', 'time_budget', 'out of time')", held["released"])
        conn.execute("select fail_document_job(%s, %s, 'resend_not_found', 'gone', false)", held["failed"])
        conn.execute("select cancel_document_job(%s, 'by hand')", (jobs["cancelled"],))

        upgrade(before, project)

        outcomes = {row["id"]: row["attempt_outcome"] for row in conn.execute(
            "select id, attempt_outcome from document_jobs").fetchall()}  # fmt: skip
        assert {way: outcomes[job] for way, job in jobs.items()} == {
            "completed": "completed",
            "retried": "retried",
            "released": "released",
            "failed": "failed",
            "cancelled": "cancelled",
            "running": None,  # its attempt has not ended
            "never claimed": None,
        }
        # A worker of the previous deploy, still running on the upgraded database.
        assert conn.execute("select extend_document_job_lease(%s, %s) as a", held["running"]).fetchone()["a"] is True
        assert conn.execute("select fail_document_job(%s, %s, 'x') as a", held["completed"]).fetchone()["a"] is None
        answer = conn.execute(
            "select complete_document_job_and_claim_next(%s, %s, 'fetch_email') as a", held["running"]
        ).fetchone()["a"]
        assert (answer["completed"], sorted(answer)) == (True, ["completed", "next_job"])
        assert answer["next_job"]["id"] in {str(jobs["released"]), str(jobs["never claimed"])}
        # Every old name, for a job that is not the caller's: the answer it always gave. (This is the
        # one test of the old names; supabase/future_migrations drops them, and this test with them.)
        lost = "gen_random_uuid(), 1"
        old_answers = {
            f"extend_document_job_lease({lost})": False,
            f"complete_document_job({lost})": False,
            f"complete_document_job_and_claim_next({lost}, 'fetch_email')": {"completed": False, "next_job": None},
            f"record_document_attachment({lost}, 'a', 'a.pdf', 'application/pdf', 1, '', 'bucket', 'x')": False,
            f"fail_document_job({lost}, 'x')": None,
            f"release_document_job({lost})": None,
            f"start_fetch_email({lost}, 0)": None,
            f"complete_document_job_and_follow_up({lost})": {"completed": False, "follow_ups": 0},
            f"fail_document_job_and_follow_up({lost}, 'x')": {"left_in": None, "follow_ups": 0},
            f"release_document_job_and_follow_up({lost})": {"left_in": None, "follow_ups": 0},
        }
        conn.execute("update document_jobs set status = 'completed', lease_until = null, finished_at = now()")
        answers = {call: conn.execute(f"select {call} as a").fetchone()["a"] for call in old_answers}
        assert answers == old_answers
