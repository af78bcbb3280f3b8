"""The queue driven from Python: a process per connection, as deployed workers are, each running a
step (one job: its claim and its completion) until the time is up or the queue is empty."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from uuid import UUID

import psycopg


def claim_complete_loop(
    conninfo: str, processes: int, seconds: float, make_step: Callable[[], Callable[[psycopg.Connection], bool]]
) -> float:
    """Jobs per second: `processes` processes, each with its own connection, running the step that
    `make_step` makes (one job: its claim and its completion) until `seconds` have passed or the
    queue is empty. Processes rather than threads: a deployed worker is a process of its own (one
    per function instance), and threads of one interpreter would share its lock."""
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(processes + 1, timeout=60)
    results = context.Queue()
    workers = [
        context.Process(target=loop, args=(conninfo, seconds, make_step, ready, results)) for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        ready.wait()
        counts = [results.get(timeout=seconds + 60) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.terminate()
    if any(worker.exitcode != 0 for worker in workers):
        raise RuntimeError(f"a benchmark process failed: exit codes {[worker.exitcode for worker in workers]}")
    started = min(start for _, start, _ in counts)
    finished = max(end for _, _, end in counts)
    return sum(done for done, _, _ in counts) / (finished - started)


def loop(conninfo: str, seconds: float, make_step: Callable[[], Callable[[psycopg.Connection], bool]],
         ready: Barrier, results: Queue) -> None:  # fmt: skip
    """One process of claim_complete_loop: (jobs done, start, end), on the machine's monotonic clock."""
    step = make_step()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        ready.wait()
        started = time.monotonic()
        stop_at = started + seconds
        done = 0
        while time.monotonic() < stop_at and step(conn):
            done += 1
        results.put((done, started, time.monotonic()))


def two_calls_step() -> Callable[[psycopg.Connection], bool]:
    """claim_document_jobs, then complete_document_job_v2: two calls and two transactions a job."""

    def step(conn: psycopg.Connection) -> bool:
        row = conn.execute("select id, generation from public.claim_document_jobs('fetch_email')").fetchone()
        if row is None:
            return False
        conn.execute("select public.complete_document_job_v2(%s, %s)", row)
        return True

    return step


def worker_step() -> Callable[[psycopg.Connection], bool]:
    """As the worker calls the queue: the first job claimed alone, every later one with the
    completion of the one before (complete_document_job_and_claim_next_v2). One step per job."""
    claimed = False
    job: tuple[object, int] | None = None

    def step(conn: psycopg.Connection) -> bool:
        nonlocal claimed, job
        if not claimed:
            job = conn.execute("select id, generation from public.claim_document_jobs('fetch_email')").fetchone()
            claimed = True
        if job is None:
            return False
        answer = conn.execute(
            "select public.complete_document_job_and_claim_next_v2(%s, %s, 'fetch_email', '5 minutes')", job
        ).fetchone()[0]
        following = answer["next_job"]
        job = None if following is None else (UUID(following["id"]), following["generation"])
        return True

    return step


def fill_ours(conn: psycopg.Connection, jobs: int) -> None:
    conn.execute("truncate public.document_jobs cascade")
    conn.execute(
        """insert into public.document_jobs (kind, run_after)
           select 'fetch_email', now() - interval '1 hour' + g * interval '1 ms' from generate_series(1, %s) g""",
        (jobs,),
    )
    conn.execute("vacuum analyze public.document_jobs")
    conn.execute("checkpoint")  # every arm starts from a checkpoint, as the ceiling does
