"""pgbench, the ceiling's own C client: the ceiling (a one-row update on a small table, the most
the server commits), and the queue's calls as pgbench scripts, so that the ratio is the
database's alone."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict

from bench.common import admin_conninfo, connect
from devstack.cluster import PG_BIN

PGBENCH = PG_BIN / "pgbench"  # the PostgreSQL 15 binaries devstack runs (PG_BIN)
CEILING_SCHEMA = "bench_ceiling"
CEILING_ROWS = 1000  # small, and wide enough that 8 clients rarely update the same row at once
# Jobs queued per second of a pgbench run: pgbench aborts when a claim finds nothing, so more than it can take.
PGBENCH_JOBS_PER_SECOND = 20_000

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


def pgbench_tps(
    clients: int, seconds: float, script: Path, defines: tuple[str, ...] = (), conninfo: str | None = None
) -> float:
    """Transactions per second of `script` on the stack's server (or on `conninfo`'s)."""
    target = conninfo_to_dict(conninfo or admin_conninfo())
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


@dataclass(frozen=True)
class Variant:
    column: str
    script: str
    defines: tuple[str, ...] = ()  # pgbench -D: variables the script starts with
    before: bool = False  # on the cluster of the queue as it was (bench/throughput/before.py)


# What the worker calls (lib/worker/queue.py); the queue as it was before had only the name of the
# public API, which still answers as it did there (a wrapper of the _v2 call today).
COMPLETE = "select public.complete_document_job_v2(:id::uuid, :generation);\n"
COMPLETE_BEFORE = "select public.complete_document_job(:id::uuid, :generation);\n"
PGBENCH_VARIANTS = {
    # Each client's variables last across its transactions: the job that one claims, the next completes.
    "worker_calls_pgbench": Variant(
        "as the worker calls it",
        "select r -> 'next_job' ->> 'id' as id, r -> 'next_job' ->> 'generation' as generation"
        " from public.complete_document_job_and_claim_next_v2(:id::uuid, :generation, 'fetch_email', '5 minutes') r"
        " \\gset\n",
        defines=("id=00000000-0000-0000-0000-000000000000", "generation=0"),  # the first completes nothing
    ),
    "deployed": Variant(
        "two calls a job",
        "select id, generation from public.claim_document_jobs('fetch_email') \\gset\n" + COMPLETE,
    ),
    "before": Variant(
        "two calls, as before",
        "select id, generation from public.claim_document_jobs('fetch_email') \\gset\n" + COMPLETE_BEFORE,
        before=True,
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
