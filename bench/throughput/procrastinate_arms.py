"""Procrastinate, the peer queue, in a schema of its own on the same server (installed with its own
schema API): its real worker, and its two SQL calls driven as ours are."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import psycopg
from psycopg.conninfo import make_conninfo

from bench.common import admin_conninfo, connect

PROCRASTINATE_SCHEMA = "bench_procrastinate"
QUEUE = "bench"


def procrastinate_conninfo() -> str:
    return make_conninfo(admin_conninfo(), options=f"-c search_path={PROCRASTINATE_SCHEMA}")


def install_procrastinate() -> None:
    """Its schema, by its own API (SchemaManager.apply_schema), in a schema of ours."""
    import procrastinate

    with connect() as conn:
        conn.execute(f"drop schema if exists {PROCRASTINATE_SCHEMA} cascade")
        conn.execute(f"create schema {PROCRASTINATE_SCHEMA}")
    app = procrastinate.App(connector=procrastinate.SyncPsycopgConnector(conninfo=procrastinate_conninfo()))
    with app.open():
        app.schema_manager.apply_schema()


def fill_procrastinate(jobs: int) -> None:
    """`jobs` no-op jobs, deferred through its API (one batch)."""
    import procrastinate

    with connect(procrastinate_conninfo()) as conn:
        conn.execute("truncate procrastinate_events, procrastinate_jobs, procrastinate_workers cascade")
    app = procrastinate.App(connector=procrastinate.SyncPsycopgConnector(conninfo=procrastinate_conninfo()))

    @app.task(name="noop", queue=QUEUE)
    async def noop() -> None:
        return None

    with app.open():
        noop.batch_defer(*[{} for _ in range(jobs)])
    with connect(procrastinate_conninfo()) as conn:
        conn.execute("vacuum analyze procrastinate_jobs")
    with connect() as conn:
        conn.execute("checkpoint")  # every arm starts from a checkpoint, as the ceiling does


def procrastinate_worker(concurrency: int, jobs: int) -> float:
    """Jobs per second of its real worker, from start to the empty queue (wait=False)."""
    import procrastinate

    connector = procrastinate.PsycopgConnector(
        conninfo=procrastinate_conninfo(), min_size=concurrency, max_size=concurrency
    )
    app = procrastinate.App(connector=connector)

    @app.task(name="noop", queue=QUEUE)
    async def noop() -> None:
        return None

    async def work() -> float:
        async with app.open_async():
            await connector.execute_query_one_async("select 1")  # the pool is open and warm
            started = time.perf_counter()
            await app.run_worker_async(
                queues=[QUEUE], concurrency=concurrency, wait=False, listen_notify=False,
                install_signal_handlers=False, delete_jobs="never",
            )  # fmt: skip
            return time.perf_counter() - started

    elapsed = asyncio.run(work())
    with connect(procrastinate_conninfo()) as conn:
        done = conn.execute("select count(*) from procrastinate_jobs where status = 'succeeded'").fetchone()[0]
    if done != jobs:
        raise RuntimeError(f"Procrastinate's worker finished {done} of {jobs} jobs")
    return done / elapsed


def procrastinate_sql_step(worker_id: int) -> Callable[[psycopg.Connection], bool]:
    """Its fetch and finish, as two_calls_step calls ours (with functools.partial, a step factory)."""

    def step(conn: psycopg.Connection) -> bool:
        row = conn.execute(
            "select id from procrastinate_fetch_job_v2(%s::varchar[], %s)", ([QUEUE], worker_id)
        ).fetchone()
        if row is None or row[0] is None:
            return False
        conn.execute("select procrastinate_finish_job_v1(%s, 'succeeded', false)", row)
        return True

    return step
