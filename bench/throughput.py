"""Throughput: no-op jobs per second at 1, 4 and 8 concurrent connections, against a ceiling,
with durability off (as the throwaway test cluster runs) and on (as hosted Supabase runs).

- the ceiling: pgbench's TPS for a one-row update on a small table at the same concurrency,
  halved, since a job needs two state changes (its claim and its completion);
- this queue driven by pgbench, the ceiling's own client, so that the ratio is the database's
  alone: as the worker calls it (complete_document_job_and_claim_next: one transaction a job), as
  two calls a job, the two calls as they were before the per-call work, and the bare statements;
- this queue driven from Python, one process per connection (as deployed workers are), the same
  two ways; Procrastinate, in a schema of its own (installed with its own schema API, dropped
  afterwards): its real worker (App.run_worker_async, concurrency N over a pool of N connections,
  an async no-op task, wait=False so it stops when the queue is empty), and its two SQL calls
  (procrastinate_fetch_job_v2, procrastinate_finish_job_v1) driven by the same processes as ours.

Every figure is the median over `runs` runs; each run starts from a freshly filled queue. The
durability settings (fsync, synchronous_commit, full_page_writes) are switched on the same
cluster with ALTER SYSTEM and a reload, and reset afterwards; every other setting stays.

python -m devstack run -- .venv/bin/python -m bench.throughput [--quick]
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
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
    seconds: float  # per run, for the process harness and pgbench
    jobs: int  # queued before each run of this queue / Procrastinate's SQL (more than a run can take)
    worker_jobs: int  # queued before each run of Procrastinate's worker (it runs until they are done)
    runs: int


FULL = Settings(concurrency=(1, 4, 8), seconds=2.0, jobs=30_000, worker_jobs=2_000, runs=3)
QUICK = Settings(concurrency=(2,), seconds=0.3, jobs=6_000, worker_jobs=100, runs=1)


# --- the process harness ---------------------------------------------------------------------------


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
    """claim_document_jobs, then complete_document_job: two calls and two transactions a job."""

    def step(conn: psycopg.Connection) -> bool:
        row = conn.execute("select id, generation from public.claim_document_jobs('fetch_email')").fetchone()
        if row is None:
            return False
        conn.execute("select public.complete_document_job(%s, %s)", row)
        return True

    return step


def worker_step() -> Callable[[psycopg.Connection], bool]:
    """As the worker calls the queue: the first job claimed alone, every later one with the
    completion of the one before (complete_document_job_and_claim_next). One step per job."""
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
            "select public.complete_document_job_and_claim_next(%s, %s, 'fetch_email')", job
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


def pgbench_seconds(seconds: float) -> int:
    """pgbench -T takes whole seconds."""
    return max(1, round(seconds))


def pgbench_tps(clients: int, seconds: float, script: Path, defines: tuple[str, ...] = ()) -> float:
    target = conninfo_to_dict(admin_conninfo())
    result = subprocess.run(
        [str(PGBENCH), "-n", "-M", "prepared", "-f", str(script), "-c", str(clients), "-j", str(clients),
         "-T", str(pgbench_seconds(seconds)), *(arg for define in defines for arg in ("-D", define)),
         "-h", str(target["host"]), "-p", str(target["port"]), "-U", str(target["user"]), str(target["dbname"])],
        capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"pgbench failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", result.stdout)
    if not match:
        raise RuntimeError(f"pgbench printed no TPS:\n{result.stdout}{result.stderr}")
    return float(match.group(1))


# --- the same jobs driven by pgbench: the database's own cost -------------------------------------------

# The state before the per-call work, in a schema of the benchmark's own, on the same table:
# claim_document_jobs and complete_document_job as they were before the checks moved inline
# (migration 20261130003100), every argument checked through a document_jobs_internal helper (a
# PL/pgSQL call with its own SET search_path each) and the kind read from document_job_kinds on
# every claim; and the claim's BEFORE trigger (dropped by migration 20261130004000).
BEFORE_FIX = f"""
drop schema if exists {BEFORE_SCHEMA} cascade;
create schema {BEFORE_SCHEMA};
-- document_jobs_internal.require_lease as it was (migration 20261201006000 dropped it, unused).
create function {BEFORE_SCHEMA}.require_lease(p_lease interval) returns void
language plpgsql immutable set search_path = '' as $$
begin
    perform document_jobs_internal.require(
        p_lease > interval '0' and p_lease <= interval '1 hour', 'p_lease must be more than 0 and at most 1 hour');
end;
$$;
create function {BEFORE_SCHEMA}.claim_document_jobs(p_kind text, p_limit int default 1,
                                                    p_lease interval default '5 minutes')
returns setof public.document_jobs
language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
    perform document_jobs_internal.require_kind(p_kind);
    perform document_jobs_internal.require(p_limit between 1 and 100, 'p_limit must be between 1 and 100');
    perform {BEFORE_SCHEMA}.require_lease(p_lease);
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
-- The claim's note of its attempt, as a BEFORE trigger on every generation change (until
-- migration 20261130004000); created on public.document_jobs only while this arm runs.
create function {BEFORE_SCHEMA}.note_claim() returns trigger
language plpgsql set search_path = '' as $$
begin
    new.attempt_started_at := now();
    new.attempt_invocation_id := left(
        nullif(current_setting('request.headers', true), '')::jsonb ->> 'x-document-jobs-invocation', 200);
    return new;
end;
$$;
"""

NOTE_CLAIM_TRIGGER = f"""create trigger bench_before_note_claim before update on public.document_jobs
    for each row when (new.generation is distinct from old.generation)
    execute function {BEFORE_SCHEMA}.note_claim()"""


@dataclass(frozen=True)
class Variant:
    column: str
    script: str
    defines: tuple[str, ...] = ()  # pgbench -D: variables the script starts with
    setup: str = ""  # SQL run before the arm, and its undoing after it
    teardown: str = ""


COMPLETE = "select public.complete_document_job(:id::uuid, :generation);\n"
PGBENCH_VARIANTS = {
    # Each client's variables last across its transactions: the job that one claims, the next completes.
    "worker_calls_pgbench": Variant(
        "as the worker calls it",
        "select r -> 'next_job' ->> 'id' as id, r -> 'next_job' ->> 'generation' as generation"
        " from public.complete_document_job_and_claim_next(:id::uuid, :generation, 'fetch_email') r \\gset\n",
        defines=("id=00000000-0000-0000-0000-000000000000", "generation=0"),  # the first completes nothing
    ),
    "deployed": Variant(
        "two calls a job",
        "select id, generation from public.claim_document_jobs('fetch_email') \\gset\n" + COMPLETE,
    ),
    "before": Variant(
        "two calls, as before",
        f"select id, generation from {BEFORE_SCHEMA}.claim_document_jobs('fetch_email') \\gset\n"
        f"select {BEFORE_SCHEMA}.complete_document_job(:id::uuid, :generation);\n",
        setup=NOTE_CLAIM_TRIGGER,
        teardown="drop trigger bench_before_note_claim on public.document_jobs",
    ),
    "bare": Variant(
        "bare statements",
        "with picked as materialized (select c.id from public.document_jobs_claimable c where c.kind = 'fetch_email'"
        " order by c.run_after, c.created_at limit 1 for update skip locked)"
        " update public.document_jobs j set status = 'running', attempts = j.attempts + 1,"
        " generation = j.generation + 1, lease_until = now() + interval '5 minutes',"
        " started_at = coalesce(j.started_at, now()), attempt_started_at = now() from picked where j.id = picked.id"
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
    seconds = pgbench_seconds(settings.seconds)
    section = Section(
        "throughput",
        "Throughput",
        f"No-op jobs per second at {', '.join(map(str, settings.concurrency))} concurrent connections, "
        f"{settings.runs} run(s) per figure (median), every arm of a run on the same server in turn, with "
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
        "complete_document_job_and_claim_next a job: the completion of the job the client holds and the claim of "
        "its next, one transaction); as two calls a job (claim_document_jobs, complete_document_job); the same "
        "two calls as they were before the per-call work (argument checks through helper functions, the kind "
        "read on every claim, the claim noted by a BEFORE trigger; in a schema of the benchmark's own, on the "
        "same table); and as the bare statements without any function. The second table drives it from Python, "
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
        with tempfile.TemporaryDirectory() as folder, connect() as admin:
            admin.execute(BEFORE_FIX)
            script = Path(folder) / "one_row_update.sql"
            script.write_text(CEILING_SCRIPT)
            scripts = {key: Path(folder) / f"{key}.sql" for key in PGBENCH_VARIANTS}
            for key, path in scripts.items():
                path.write_text(PGBENCH_VARIANTS[key].script)
            for mode in MODES:
                with durability(mode):
                    section.tables += measure(mode, settings, conninfo, admin, script, scripts, section.figures)
    finally:
        with connect() as conn:
            # The cascade also takes the "before" arm's trigger on document_jobs, had its teardown not run.
            for schema in (PROCRASTINATE_SCHEMA, CEILING_SCHEMA, BEFORE_SCHEMA):
                conn.execute(f"drop schema if exists {schema} cascade")
            conn.execute("truncate public.document_jobs cascade")
    return section


def measure(
    mode: str,
    settings: Settings,
    conninfo: str,
    admin: psycopg.Connection,
    ceiling_script: Path,
    scripts: dict[str, Path],
    figures_out: dict[str, float],
) -> list[Table]:
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
                fill_ours(admin, PGBENCH_JOBS_PER_SECOND * pgbench_seconds(settings.seconds))
                if variant.setup:
                    admin.execute(variant.setup)
                try:
                    samples[key].append(pgbench_tps(n, settings.seconds, scripts[key], variant.defines))
                finally:
                    if variant.teardown:
                        admin.execute(variant.teardown)
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


if __name__ == "__main__":
    run_alone(run, __doc__)
