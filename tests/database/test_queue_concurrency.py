"""Many workers claiming from one queue at once: every job is claimed exactly once."""

from __future__ import annotations

import threading
from collections import Counter

import psycopg
from psycopg.rows import dict_row

JOBS = 2_000
WORKERS = 8


def claim_until_empty(
    conninfo: str, limit: int, claimed: list[tuple[str, int, bool]], start: threading.Barrier
) -> None:
    with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("set role service_role")
        start.wait()
        while rows := conn.execute(
            "select id::text, generation from claim_document_jobs('fetch_email', %s, '5 minutes')", (limit,)
        ).fetchall():
            for row in rows:
                completed = conn.execute(
                    "select (complete_document_job_v2(%s, %s) ->> 'held')::boolean as ok",
                    (row["id"], row["generation"]),
                )
                claimed.append((row["id"], row["generation"], completed.fetchone()["ok"]))


def run_workers(conninfo: str) -> list[tuple[str, int, bool]]:
    claimed: list[tuple[str, int, bool]] = []  # list.append is atomic under the GIL
    start = threading.Barrier(WORKERS)
    threads = [
        threading.Thread(target=claim_until_empty, args=(conninfo, 1 + n % 3, claimed, start)) for n in range(WORKERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return claimed


def test_concurrent_claimers_take_each_job_exactly_once(db, admin, stack_env) -> None:
    admin.execute("insert into document_jobs (kind) select 'fetch_email' from generate_series(1, %s)", (JOBS,))

    claimed = run_workers(stack_env["DATABASE_URL"])

    counts = Counter(job_id for job_id, _, _ in claimed)
    assert len(counts) == JOBS, "every job was claimed"
    assert max(counts.values()) == 1, "no job was claimed twice"
    assert {(generation, completed) for _, generation, completed in claimed} == {(1, True)}
    status = admin.execute("select status, count(*) as n from document_jobs group by status").fetchall()
    assert status == [{"status": "completed", "n": JOBS}]


def test_concurrent_claimers_share_expired_leases_exactly_once(db, admin, stack_env) -> None:
    # Jobs whose workers died: running, lease passed. Each must be re-claimed by exactly one claimer.
    admin.execute(
        """insert into document_jobs (kind, status, attempts, generation, started_at, lease_until, run_after)
           select 'fetch_email', 'running', 1, 1, now() - interval '10 minutes', now() - interval '1 second',
                  now() - interval '10 minutes'
             from generate_series(1, %s)""",
        (JOBS // 2,),
    )

    claimed = run_workers(stack_env["DATABASE_URL"])

    counts = Counter(job_id for job_id, _, _ in claimed)
    assert len(counts) == JOBS // 2 and max(counts.values()) == 1
    assert {(generation, completed) for _, generation, completed in claimed} == {(2, True)}, "re-claimed: generation 2"
    assert (
        admin.execute("select count(*) as n from document_jobs where status = 'completed' and attempts = 2").fetchone()[
            "n"
        ]
        == JOBS // 2
    )
