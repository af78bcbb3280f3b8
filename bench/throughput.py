"""Throughput: no-op jobs per second at 1, 4 and 8 concurrent connections, against a ceiling,
with durability off (as the throwaway test cluster runs) and on (as hosted Supabase runs).

- this queue: N threads, each with its own connection, in a loop: as the worker calls it (one
  claim, then complete_document_job_and_claim_next for each job: one call and one transaction a
  job), and as two calls a job (claim_document_jobs then complete_document_job);
- Procrastinate, in a schema of its own (installed with its own schema API, dropped afterwards):
  its real worker (App.run_worker_async, concurrency N over a pool of N connections, an async
  no-op task, wait=False so it stops when the queue is empty), and its two SQL calls
  (procrastinate_fetch_job_v2, procrastinate_finish_job_v1) driven by the same threads as ours;
- the ceiling: pgbench's TPS for a one-row update on a small table at the same concurrency,
  halved, since a job needs at least two transactions (its claim and its completion).

Every figure is the median over `runs` runs; each run starts from a freshly filled queue. The
durability settings (fsync, synchronous_commit, full_page_writes) are switched on the same
cluster with ALTER SYSTEM and a reload, and reset afterwards; every other setting stays.

python -m devstack run -- .venv/bin/python -m bench.throughput [--quick]
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench.common import Section, Table, admin_conninfo, connect, env, fmt, fmt_ratio, median, ratio, run_alone
from devstack.cluster import DURABILITY, PG_BIN

PGBENCH = PG_BIN / "pgbench"  # the PostgreSQL 15 binaries devstack runs (PG_BIN)
PROCRASTINATE_SCHEMA = "bench_procrastinate"
CEILING_SCHEMA = "bench_ceiling"
BEFORE_SCHEMA = "bench_before"
CEILING_ROWS = 1000  # small, and wide enough that 8 clients rarely update the same row at once
QUEUE = "bench"
# Jobs queued per second of a pgbench run: pgbench aborts when a claim finds nothing, so more than it can take.
PGBENCH_JOBS_PER_SECOND = 20_000


@dataclass(frozen=True)
class Settings:
    concurrency: tuple[int, ...]
    seconds: float  # per run, for the thread harness and pgbench
    jobs: int  # queued before each run of this queue / Procrastinate's SQL (more than a run can take)
    worker_jobs: int  # queued before each run of Procrastinate's worker (it runs until they are done)
    runs: int


FULL = Settings(concurrency=(1, 4, 8), seconds=2.0, jobs=30_000, worker_jobs=2_000, runs=3)
QUICK = Settings(concurrency=(2,), seconds=0.3, jobs=6_000, worker_jobs=100, runs=1)


# --- the thread harness ---------------------------------------------------------------------------


def claim_complete_loop(
    conninfo: str, threads: int, seconds: float, step: Callable[[psycopg.Connection], bool]
) -> float:
    """Jobs per second: `threads` connections each running `step` (one claim and its completion)
    until `seconds` have passed or the queue is empty."""
    connections = [psycopg.connect(conninfo, autocommit=True) for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)
    done = [0] * threads
    stop_at = [0.0]

    def loop(index: int) -> None:
        conn = connections[index]
        barrier.wait()
        while time.perf_counter() < stop_at[0] and step(conn):
            done[index] += 1

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    started = time.perf_counter()
    stop_at[0] = started + seconds
    barrier.wait()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    for conn in connections:
        conn.close()
    return sum(done) / elapsed


def ours_step(conn: psycopg.Connection) -> bool:
    row = conn.execute("select id, generation from public.claim_document_jobs('fetch_email')").fetchone()
    if row is None:
        return False
    conn.execute("select public.complete_document_job(%s, %s)", row)
    return True


def worker_step() -> Callable[[psycopg.Connection], bool]:
    """As the worker calls the queue: the first job claimed alone, every later one with the
    completion of the one before (complete_document_job_and_claim_next). One step per job."""
    held: dict[int, tuple[object, int] | None] = {}

    def step(conn: psycopg.Connection) -> bool:
        key = id(conn)
        if key not in held:
            held[key] = conn.execute("select id, generation from public.claim_document_jobs('fetch_email')").fetchone()
        job = held[key]
        if job is None:
            return False
        answer = conn.execute(
            "select public.complete_document_job_and_claim_next(%s, %s, 'fetch_email')", job
        ).fetchone()[0]
        following = answer["next_job"]
        held[key] = None if following is None else (UUID(following["id"]), following["generation"])
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


# --- Procrastinate -----------------------------------------------------------------------------------


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
    def step(conn: psycopg.Connection) -> bool:
        row = conn.execute(
            "select id from procrastinate_fetch_job_v2(%s::varchar[], %s)", ([QUEUE], worker_id)
        ).fetchone()
        if row is None or row[0] is None:
            return False
        conn.execute("select procrastinate_finish_job_v1(%s, 'succeeded', false)", row)
        return True

    return step


# --- the ceiling -------------------------------------------------------------------------------------

CEILING_SCRIPT = f"""\\set id random(1, {CEILING_ROWS})
update {CEILING_SCHEMA}.counter set n = n + 1 where id = :id;
"""


def install_ceiling() -> None:
    with connect() as conn:
        conn.execute(f"drop schema if exists {CEILING_SCHEMA} cascade")
        conn.execute(f"create schema {CEILING_SCHEMA}")
        conn.execute(f"create table {CEILING_SCHEMA}.counter (id int primary key, n bigint not null default 0)")
        conn.execute(f"insert into {CEILING_SCHEMA}.counter (id) select generate_series(1, {CEILING_ROWS})")
        conn.execute(f"vacuum analyze {CEILING_SCHEMA}.counter")


def pgbench_tps(clients: int, seconds: float, script: Path) -> float:
    target = conninfo_to_dict(admin_conninfo())
    result = subprocess.run(
        [str(PGBENCH), "-n", "-M", "prepared", "-f", str(script), "-c", str(clients), "-j", str(clients),
         "-T", str(max(1, round(seconds))),
         "-h", str(target["host"]), "-p", str(target["port"]), "-U", str(target["user"]), str(target["dbname"])],
        capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"pgbench failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", result.stdout)
    if not match:
        raise RuntimeError(f"pgbench printed no TPS:\n{result.stdout}{result.stderr}")
    return float(match.group(1))


# --- the same claim -> complete driven by pgbench: where this queue's time goes -------------------------

# claim_document_jobs and complete_document_job as they were before the checks moved inline
# (migration 20261130003100), in a schema of the benchmark's own, on the same table: every
# argument checked through a document_jobs_internal helper (a PL/pgSQL call with its own SET
# search_path each), and the kind read from document_job_kinds on every claim.
BEFORE_FIX = f"""
drop schema if exists {BEFORE_SCHEMA} cascade;
create schema {BEFORE_SCHEMA};
create function {BEFORE_SCHEMA}.claim_document_jobs(p_kind text, p_limit int default 1,
                                                    p_lease interval default '5 minutes')
returns setof public.document_jobs
language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require(p_limit between 1 and 100, 'p_limit must be between 1 and 100');
    perform document_jobs_internal.require_lease(p_lease);
    perform document_jobs_internal.fail_expired();
    return query
    update public.document_jobs j
       set status = 'running', attempts = j.attempts + 1, generation = j.generation + 1,
           lease_until = now() + p_lease, started_at = coalesce(j.started_at, now())
     where j.id = any (array(
               select c.id from public.document_jobs_claimable c
                where c.kind = p_kind
                order by c.run_after, c.created_at
                limit p_limit
                  for update skip locked))
    returning j.*;
end;
$$;
create function {BEFORE_SCHEMA}.complete_document_job(p_job_id uuid, p_generation int)
returns boolean
language plpgsql security definer set search_path = '' as $$
begin
    perform document_jobs_internal.require_holder(p_job_id, p_generation);
    update public.document_jobs j
       set status = 'completed', lease_until = null, finished_at = now()
     where j.id = p_job_id and j.generation = p_generation and j.status = 'running';
    return found;
end;
$$;
"""
COMPLETE = "select public.complete_document_job(:id::uuid, :generation);\n"
PGBENCH_VARIANTS = {  # key: (column, pgbench script)
    "deployed": (
        "as deployed",
        "select id, generation from public.claim_document_jobs('fetch_email') \\gset\n" + COMPLETE,
    ),
    "before": (
        "checks as before",
        f"select id, generation from {BEFORE_SCHEMA}.claim_document_jobs('fetch_email') \\gset\n"
        f"select {BEFORE_SCHEMA}.complete_document_job(:id::uuid, :generation);\n",
    ),
    "bare": (
        "bare statements",
        "with picked as materialized (select c.id from public.document_jobs_claimable c where c.kind = 'fetch_email'"
        " order by c.run_after, c.created_at limit 1 for update skip locked)"
        " update public.document_jobs j set status = 'running', attempts = j.attempts + 1,"
        " generation = j.generation + 1, lease_until = now() + interval '5 minutes',"
        " started_at = coalesce(j.started_at, now()) from picked where j.id = picked.id"
        " returning j.id, j.generation \\gset\n"
        "update public.document_jobs j set status = 'completed', lease_until = null, finished_at = now()"
        " where j.id = :id::uuid and j.generation = :generation and j.status = 'running';\n",
    ),
}


# --- durability ------------------------------------------------------------------------------------


@contextmanager
def durability(mode: str) -> Iterator[None]:
    """The cluster with durability `mode` ("off": as devstack starts it; "on": as hosted Supabase
    runs), by ALTER SYSTEM and a reload; reset to the cluster's own settings afterwards."""
    settings = DURABILITY[mode]
    with connect() as conn:
        try:
            for name, value in settings.items():
                conn.execute(f"alter system set {name} = {value}")
            conn.execute("select pg_reload_conf()")
            wait_for_settings(conn, settings)
            yield
        finally:
            for name in settings:
                conn.execute(f"alter system reset {name}")
            conn.execute("select pg_reload_conf()")
            wait_for_settings(conn, DURABILITY["off"])


def wait_for_settings(conn: psycopg.Connection, settings: dict[str, str], timeout_s: float = 10) -> None:
    """A reload is asynchronous: wait until a new session sees the settings."""
    deadline = time.monotonic() + timeout_s
    while True:
        with connect() as fresh:
            now = {name: fresh.execute(f"show {name}").fetchone()[0] for name in settings}
        if now == settings:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not take {settings} (it has {now})")
        time.sleep(0.1)


# --- the section --------------------------------------------------------------------------------------

MODES = ("off", "on")


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    section = Section(
        "throughput",
        "Throughput",
        f"No-op jobs per second at {', '.join(map(str, settings.concurrency))} concurrent connections, "
        f"{settings.runs} run(s) per figure (median), every arm of a run on the same server in turn, with "
        "durability off (fsync, synchronous_commit and full_page_writes off: the throwaway test cluster) and on "
        "(all three on, as hosted Supabase runs); the same cluster in the same run, switched with ALTER SYSTEM and "
        "a reload (all three take effect without a restart), every other setting unchanged. Each durability "
        "setting has its own ceiling. This queue: one Python thread per connection (psycopg, prepared after 5 "
        f"uses), for {settings.seconds:g} s, from {settings.jobs:,} queued jobs, called two ways: as the worker "
        "calls it (one claim, then complete_document_job_and_claim_next for each job: one call and one "
        "transaction a job) and as two calls a job (claim_document_jobs, complete_document_job). "
        "Procrastinate (same server, its own schema installed with its schema API): its real worker "
        "(run_worker_async, concurrency N, a pool of N connections, an async no-op task, wait=False) timed from "
        f"start to an empty queue of {settings.worker_jobs:,} jobs; and its two SQL calls (fetch_job_v2, "
        "finish_job_v1) driven by the same threads as this queue. Ceiling: pgbench -M prepared, a one-row update "
        f"on a {CEILING_ROWS:,}-row table, -c N -j N, for {max(1, round(settings.seconds))} s, halved, measured "
        "before and after the other arms of each run (the disk's flush time drifts); every arm starts right after "
        "a CHECKPOINT, so that none of them pays for the writes of the queue's refill "
        "(a job needs two state changes, its claim and its completion; the worker's combined call makes them in "
        "one transaction per job, so it may pass 1.0x). The client (Python or pgbench) shares the machine's cores "
        "with the server. The second table of each setting drives the two-call claim -> complete with pgbench "
        "instead (-M prepared, the same C client as the ceiling), to tell the client's cost from the database's: "
        "as deployed; with the argument checks as they were before (helper calls, the kind read on every claim; "
        "in a schema of the benchmark's own, on the same table); and as the bare statements without any function.",
    )
    conninfo = env("DATABASE_URL")
    install_procrastinate()
    install_ceiling()
    try:
        with tempfile.TemporaryDirectory() as folder, connect() as admin:
            admin.execute(BEFORE_FIX)
            script = Path(folder) / "one_row_update.sql"
            script.write_text(CEILING_SCRIPT)
            variants = {key: Path(folder) / f"{key}.sql" for key in PGBENCH_VARIANTS}
            for key, path in variants.items():
                path.write_text(PGBENCH_VARIANTS[key][1])
            for mode in MODES:
                with durability(mode):
                    section.tables += measure(mode, settings, conninfo, admin, script, variants, section.figures)
    finally:
        with connect() as conn:
            for schema in (PROCRASTINATE_SCHEMA, CEILING_SCHEMA, BEFORE_SCHEMA):
                conn.execute(f"drop schema if exists {schema} cascade")
            conn.execute("truncate public.document_jobs cascade")
    return section


def measure(
    mode: str,
    settings: Settings,
    conninfo: str,
    admin: psycopg.Connection,
    script: Path,
    variants: dict[str, Path],
    figures_out: dict[str, float],
) -> list[Table]:
    label = f"durability {mode}" + (" (as hosted Supabase)" if mode == "on" else " (throwaway test cluster)")
    headers = ["connections", "ceiling (pgbench TPS / 2)", "as the worker calls it", "ratio", "two calls a job",
               "ratio", "Procrastinate worker", "ratio", "Procrastinate SQL", "ratio"]  # fmt: skip
    table = Table(f"jobs per second, Python clients, {label} (ratio: to the ceiling)", headers)
    diagnostic = Table(
        f"jobs per second, claim -> complete driven by pgbench, {label} (ratio: to the ceiling)",
        ["connections", *(f"{name}{suffix}" for name, _ in PGBENCH_VARIANTS.values() for suffix in ("", " ratio"))],
    )
    for n in settings.concurrency:
        samples: dict[str, list[float]] = {"ceiling": [], "worker_calls": [], "ours": [], "worker": [], "sql": []}
        samples |= {key: [] for key in variants}
        for _ in range(settings.runs):
            # The ceiling before and after the arms: the disk's flush time drifts while a run goes on.
            admin.execute("checkpoint")
            samples["ceiling"].append(pgbench_tps(n, settings.seconds, script) / 2)
            fill_ours(admin, settings.jobs)
            samples["worker_calls"].append(claim_complete_loop(conninfo, n, settings.seconds, worker_step()))
            fill_ours(admin, settings.jobs)
            samples["ours"].append(claim_complete_loop(conninfo, n, settings.seconds, ours_step))
            for key, path in variants.items():
                fill_ours(admin, PGBENCH_JOBS_PER_SECOND * max(1, round(settings.seconds)))
                samples[key].append(pgbench_tps(n, settings.seconds, path))
            fill_procrastinate(settings.worker_jobs)
            samples["worker"].append(procrastinate_worker(n, settings.worker_jobs))
            fill_procrastinate(settings.jobs)
            with connect(procrastinate_conninfo()) as conn:
                worker_id = conn.execute("select worker_id from procrastinate_register_worker_v1()").fetchone()
            step = procrastinate_sql_step(worker_id[0])
            samples["sql"].append(claim_complete_loop(procrastinate_conninfo(), n, settings.seconds, step))
            admin.execute("checkpoint")
            samples["ceiling"].append(pgbench_tps(n, settings.seconds, script) / 2)
        figures = {name: median(values) for name, values in samples.items()}
        ceiling = figures["ceiling"]
        arms = ("worker_calls", "ours", "worker", "sql")
        table.add(n, fmt(ceiling), *(c for a in arms for c in (fmt(figures[a]), fmt_ratio(ratio(figures[a], ceiling)))))
        diagnostic.add(
            n, *(cell for key in variants for cell in (fmt(figures[key]), fmt_ratio(ratio(figures[key], ceiling))))
        )
        for name, value in figures.items():
            figures_out[f"{mode}_{name}_{n}"] = value
            figures_out[f"{mode}_{name}_ratio_{n}"] = ratio(value, ceiling)
    return [table, diagnostic]


if __name__ == "__main__":
    run_alone(run, __doc__)
