"""Throughput: no-op jobs per second at 1, 4 and 8 concurrent connections, against a ceiling,
with durability off (as the throwaway test cluster runs) and on (as hosted Supabase runs).

- the ceiling: pgbench's TPS for a one-row update on a small table at the same concurrency,
  halved, since a job needs two state changes (its claim and its completion);
- this queue driven by pgbench, the ceiling's own client, so that the ratio is the database's
  alone: as the worker calls it (complete_document_job_and_claim_next_v2: one transaction a job), as
  two calls a job, the two calls as they were before the per-call work (the queue built from the
  migrations at an older commit, on a cluster of its own: before.py), and the bare statements;
- this queue driven from Python, one process per connection (as deployed workers are), the same
  two ways; Procrastinate, in a schema of its own (installed with its own schema API, dropped
  afterwards): its real worker (App.run_worker_async, concurrency N over a pool of N connections,
  an async no-op task, wait=False so it stops when the queue is empty), and its two SQL calls
  (procrastinate_fetch_job_v2, procrastinate_finish_job_v1) driven by the same processes as ours.

Every figure is the median over `runs` runs; each run starts from a freshly filled queue. The
durability settings (fsync, synchronous_commit, full_page_writes) are switched on the same
cluster with ALTER SYSTEM and a reload, and reset afterwards; every other setting stays.

python -m devstack run -- .venv/bin/python -m bench.throughput [--quick]

The arms: pgbench_arms.py (the ceiling, and the queue's calls as pgbench scripts), python_clients.py
(a process per connection), procrastinate_arms.py, before.py; durability.py switches durability.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import psycopg

from bench.common import Section, Table, connect, env, fmt, fmt_ratio, median, ratio
from bench.throughput.before import before_cluster
from bench.throughput.durability import durability
from bench.throughput.pgbench_arms import (
    CEILING_ROWS,
    CEILING_SCHEMA,
    CEILING_SCRIPT,
    PGBENCH_JOBS_PER_SECOND,
    PGBENCH_VARIANTS,
    install_ceiling,
    pgbench_seconds,
    pgbench_tps,
)
from bench.throughput.procrastinate_arms import (
    PROCRASTINATE_SCHEMA,
    fill_procrastinate,
    install_procrastinate,
    procrastinate_conninfo,
    procrastinate_sql_step,
    procrastinate_worker,
)
from bench.throughput.python_clients import claim_complete_loop, fill_ours, two_calls_step, worker_step


@dataclass(frozen=True)
class Settings:
    concurrency: tuple[int, ...]
    seconds: float  # per run, for the process harness and pgbench
    jobs: int  # queued before each run of this queue / Procrastinate's SQL (more than a run can take)
    worker_jobs: int  # queued before each run of Procrastinate's worker (it runs until they are done)
    runs: int


FULL = Settings(concurrency=(1, 4, 8), seconds=2.0, jobs=30_000, worker_jobs=2_000, runs=3)
QUICK = Settings(concurrency=(2,), seconds=0.3, jobs=6_000, worker_jobs=100, runs=1)
MODES = ("off", "on")


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    seconds = pgbench_seconds(settings.seconds)
    section = Section(
        "throughput",
        "Throughput",
        f"No-op jobs per second at {', '.join(map(str, settings.concurrency))} concurrent connections, "
        f"{settings.runs} run(s) per figure (median), every arm of a run in turn, on the same server but one, with "
        "durability off (fsync, synchronous_commit and full_page_writes off: the throwaway test cluster) and on "
        "(all three on, as hosted Supabase runs); the same cluster in the same run, switched with ALTER SYSTEM and "
        "a reload (all three take effect without a restart), every other setting unchanged. Each durability "
        "setting has its own ceiling: pgbench -M prepared, a one-row update on a "
        f"{CEILING_ROWS:,}-row table, -c N -j N, for {seconds} s, halved (a job needs two state changes, its "
        "claim and its completion; the worker's combined call makes them in one transaction, so it may pass "
        "1.0x), measured before and after the other arms of each run (the disk's flush time drifts). Every arm "
        "starts right after a CHECKPOINT, so that none of them pays for the writes of the queue's refill. "
        "The first table of each setting drives this queue with pgbench, the ceiling's own C client (-M "
        f"prepared, for {seconds} s, from a backlog it cannot empty): as the worker calls it (one "
        "complete_document_job_and_claim_next_v2 a job: the completion of the job the client holds and the claim "
        "of its next, one transaction); as two calls a job (claim_document_jobs, complete_document_job_v2); the same "
        "two calls as they were before the per-call work (argument checks through helper functions, the kind "
        "read on every claim, the claim noted by a BEFORE trigger: the queue built by supabase db push from "
        "the migrations at an older commit, on a cluster of its own with the same settings on the same machine, "
        "its durability switched with the stack's); and as the bare statements without any function. The second "
        "table drives it from Python, "
        "one process per connection as deployed workers are (psycopg, prepared after 5 uses), for "
        f"{settings.seconds:g} s, from {settings.jobs:,} queued jobs, the same two ways; beside it Procrastinate "
        "(same server, its own schema installed with its schema API): its real worker (run_worker_async, "
        "concurrency N, a pool of N connections, an async no-op task, wait=False) timed from start to an empty "
        f"queue of {settings.worker_jobs:,} jobs, and its two SQL calls (fetch_job_v2, finish_job_v1) driven by "
        "the same processes as this queue. Every client shares the machine's cores with the server.",
    )
    conninfo = env("DATABASE_URL")
    install_procrastinate()
    install_ceiling()
    try:
        with tempfile.TemporaryDirectory() as folder, connect() as admin, before_cluster() as before_conninfo:
            script = Path(folder) / "one_row_update.sql"
            script.write_text(CEILING_SCRIPT)
            scripts = {key: Path(folder) / f"{key}.sql" for key in PGBENCH_VARIANTS}
            for key, path in scripts.items():
                path.write_text(PGBENCH_VARIANTS[key].script)
            for mode in MODES:
                with durability(mode), durability(mode, before_conninfo), connect(before_conninfo) as before:
                    section.tables += measure(mode, settings, conninfo, (admin, before), before_conninfo, script,
                                              scripts, section.figures)  # fmt: skip
    finally:
        with connect() as conn:
            for schema in (PROCRASTINATE_SCHEMA, CEILING_SCHEMA):
                conn.execute(f"drop schema if exists {schema} cascade")
            conn.execute("truncate public.document_jobs cascade")
    return section


def measure(
    mode: str,
    settings: Settings,
    conninfo: str,
    admins: tuple[psycopg.Connection, psycopg.Connection],  # the stack's cluster, the "before" cluster
    before_conninfo: str,
    ceiling_script: Path,
    scripts: dict[str, Path],
    figures_out: dict[str, float],
) -> list[Table]:
    admin, before = admins
    label = f"durability {mode}" + (" (as hosted Supabase)" if mode == "on" else " (throwaway test cluster)")
    ceiling_column = "ceiling (pgbench TPS / 2)"
    by_pgbench = Table(
        f"jobs per second, driven by pgbench, {label} (ratio: to the ceiling)",
        ["connections", ceiling_column,
         *(cell for variant in PGBENCH_VARIANTS.values() for cell in (variant.column, "ratio"))],
    )  # fmt: skip
    python_arms = {"worker_calls": "as the worker calls it", "ours": "two calls a job",
                   "worker": "Procrastinate worker", "sql": "Procrastinate SQL"}  # fmt: skip
    by_python = Table(
        f"jobs per second, Python clients (a process per connection), {label} (ratio: to the ceiling)",
        ["connections", ceiling_column, *(cell for column in python_arms.values() for cell in (column, "ratio"))],
    )
    for n in settings.concurrency:
        samples: dict[str, list[float]] = {key: [] for key in ("ceiling", *PGBENCH_VARIANTS, *python_arms)}
        for _ in range(settings.runs):
            # The ceiling before and after the arms: the disk's flush time drifts while a run goes on.
            admin.execute("checkpoint")
            samples["ceiling"].append(pgbench_tps(n, settings.seconds, ceiling_script) / 2)
            for key, variant in PGBENCH_VARIANTS.items():
                target = before if variant.before else admin
                fill_ours(target, PGBENCH_JOBS_PER_SECOND * pgbench_seconds(settings.seconds))
                on = before_conninfo if variant.before else None
                samples[key].append(pgbench_tps(n, settings.seconds, scripts[key], variant.defines, on))
            fill_ours(admin, settings.jobs)
            samples["worker_calls"].append(claim_complete_loop(conninfo, n, settings.seconds, worker_step))
            fill_ours(admin, settings.jobs)
            samples["ours"].append(claim_complete_loop(conninfo, n, settings.seconds, two_calls_step))
            fill_procrastinate(settings.worker_jobs)
            samples["worker"].append(procrastinate_worker(n, settings.worker_jobs))
            fill_procrastinate(settings.jobs)
            with connect(procrastinate_conninfo()) as conn:
                worker_id = conn.execute("select worker_id from procrastinate_register_worker_v1()").fetchone()[0]
            sql_step = partial(procrastinate_sql_step, worker_id)
            samples["sql"].append(claim_complete_loop(procrastinate_conninfo(), n, settings.seconds, sql_step))
            admin.execute("checkpoint")
            samples["ceiling"].append(pgbench_tps(n, settings.seconds, ceiling_script) / 2)
        figures = {name: median(values) for name, values in samples.items()}
        ceiling = figures["ceiling"]

        by_pgbench.add(n, fmt(ceiling), *ratio_cells(figures, PGBENCH_VARIANTS, ceiling))
        by_python.add(n, fmt(ceiling), *ratio_cells(figures, python_arms, ceiling))
        for name, value in figures.items():
            figures_out[f"{mode}_{name}_{n}"] = value
            figures_out[f"{mode}_{name}_ratio_{n}"] = ratio(value, ceiling)
    return [by_pgbench, by_python]


def ratio_cells(figures: dict[str, float], keys: Iterable[str], ceiling: float) -> list[str]:
    """Each arm's figure and its ratio to the ceiling, side by side."""
    return [cell for key in keys for cell in (fmt(figures[key]), fmt_ratio(ratio(figures[key], ceiling)))]
