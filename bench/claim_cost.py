"""Claim cost against backlog and history: this schema next to the original design's.

The original design has only the unique index, so every claim sorts the whole
backlog. It is reproduced here, in a schema of its own (dropped afterwards), with its claim function.

Each sample is one claim and the complete that follows it (two round trips, timed together); the
job is then replaced by a new queued one (untimed), so the backlog keeps its size. A run is
`claims` samples after a warm-up; each figure is the median over `runs` runs of that run's p50 or p99.

python -m devstack run -- .venv/bin/python -m bench.claim_cost [--quick]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from bench.common import Section, Table, connect, fmt, fmt_ratio, median, percentile, ratio, run_alone

SCHEMA = "bench_original"
ORIGINAL_DESIGN = f"""
drop schema if exists {SCHEMA} cascade;
create schema {SCHEMA};
create table {SCHEMA}.document_jobs (like public.document_jobs including defaults);
alter table {SCHEMA}.document_jobs add primary key (id);
create unique index on {SCHEMA}.document_jobs (kind, fax_received_email_id) where status in ('queued', 'running');
create function {SCHEMA}.claim_document_jobs(p_kind text, p_limit int default 1,
                                             p_lease interval default '5 minutes')
returns setof {SCHEMA}.document_jobs language sql as $$
    update {SCHEMA}.document_jobs j
       set status = 'running', attempts = j.attempts + 1, generation = j.generation + 1,
           lease_until = now() + p_lease, started_at = coalesce(j.started_at, now())
     where j.id in (select c.id from {SCHEMA}.document_jobs c
                     where c.kind = p_kind
                       and ((c.status = 'queued' and c.run_after <= now())
                            or (c.status = 'running' and c.lease_until < now()))
                       and c.attempts < c.max_attempts
                     order by c.run_after, c.created_at
                     limit p_limit
                       for update skip locked)
    returning j.*
$$;
create function {SCHEMA}.complete_document_job(p_job_id uuid, p_generation int) returns boolean language sql as $$
    update {SCHEMA}.document_jobs set status = 'completed', lease_until = null, finished_at = now()
     where id = p_job_id and generation = p_generation and status = 'running' returning true
$$;
"""
# Each design's schema and its completion: this schema's as the worker calls it (lib/worker/queue.py).
DESIGNS = {"this schema": ("public", "complete_document_job_v2"), "original design": (SCHEMA, "complete_document_job")}


@dataclass(frozen=True)
class Scale:
    label: str
    queued: int
    finished: int


@dataclass(frozen=True)
class Settings:
    scales: tuple[Scale, ...]
    claims: int
    runs: int
    warmup: int


FULL = Settings(
    scales=(
        Scale("100 queued", 100, 0),
        Scale("50,000 queued", 50_000, 0),
        Scale("50,000 queued + 1,000,000 finished", 50_000, 1_000_000),
    ),
    claims=200,
    runs=3,
    warmup=20,
)
QUICK = Settings(
    scales=(Scale("100 queued", 100, 0), Scale("1,000 queued", 1_000, 0), Scale("1,000 + 10,000 finished", 1_000,
                                                                                10_000)),
    claims=20,
    runs=1,
    warmup=3,
)  # fmt: skip


def fill(conn: psycopg.Connection, schema: str, queued: int, finished: int) -> None:
    conn.execute(f"truncate {schema}.document_jobs cascade")  # the attempts too
    conn.execute(
        f"""insert into {schema}.document_jobs (kind, status, finished_at, created_at, started_at, attempts,
                                                generation)
            select 'fetch_email', 'completed', now() - interval '1 day', now() - interval '2 days',
                   now() - interval '1 day', 1, 1
              from generate_series(1, %s)""",
        (finished,),
    )
    conn.execute(
        f"""insert into {schema}.document_jobs (kind, run_after, created_at)
            select 'fetch_email', now() - interval '1 hour' + g * interval '1 ms', now() - interval '1 hour'
              from generate_series(1, %s) g""",
        (queued,),
    )
    conn.execute(f"vacuum analyze {schema}.document_jobs")


def claim_complete_latencies(conn: psycopg.Connection, schema: str, complete: str, claims: int) -> list[float]:
    """Milliseconds per claim + complete; each claimed job is then replaced by a new queued one."""
    latencies = []
    for _ in range(claims):
        started = time.perf_counter()
        row = conn.execute(f"select id, generation from {schema}.claim_document_jobs('fetch_email')").fetchone()
        if row is None:
            raise RuntimeError(f"{schema}: nothing claimable")
        conn.execute(f"select {schema}.{complete}(%s, %s)", row)
        latencies.append((time.perf_counter() - started) * 1000)
        conn.execute(f"insert into {schema}.document_jobs (kind) values ('fetch_email')")
    return latencies


def measure(conn: psycopg.Connection, schema: str, complete: str, settings: Settings) -> tuple[float, float]:
    """(p50, p99) in ms: the medians over the runs."""
    claim_complete_latencies(conn, schema, complete, settings.warmup)  # the cache and the plans
    runs = [claim_complete_latencies(conn, schema, complete, settings.claims) for _ in range(settings.runs)]
    return median([percentile(r, 0.50) for r in runs]), median([percentile(r, 0.99) for r in runs])


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "claim_cost",
        "Claim cost",
        f"Claim then complete (two round trips, timed together) on one connection, {settings.claims} per run after "
        f"{settings.warmup} to warm up, {settings.runs} run(s) per figure: each figure is the median over the runs "
        "of that run's p50 or p99. Each completed job is replaced by a new queued one (untimed) so the backlog "
        "keeps its size. The original design is the same table with only the unique index, and its own claim "
        "function (no sweep of expired leases), in a schema of its own.",
    )
    table = Table(
        "claim -> complete latency, ms",
        ["jobs in the table", "this p50", "this p99", "original p50", "original p99", "original/this p50",
         "original/this p99"],
    )  # fmt: skip
    with connect() as conn:
        conn.execute(ORIGINAL_DESIGN)
        try:
            for scale in settings.scales:
                p50, p99 = {}, {}
                for design, (schema, complete) in DESIGNS.items():
                    fill(conn, schema, scale.queued, scale.finished)
                    p50[design], p99[design] = measure(conn, schema, complete, settings)
                r50 = ratio(p50["original design"], p50["this schema"])
                r99 = ratio(p99["original design"], p99["this schema"])
                table.add(scale.label, fmt(p50["this schema"]), fmt(p99["this schema"]), fmt(p50["original design"]),
                          fmt(p99["original design"]), fmt_ratio(r50), fmt_ratio(r99))  # fmt: skip
                key = f"{scale.queued}_{scale.finished}"
                section.figures |= {
                    f"this_p50_{key}": p50["this schema"],
                    f"this_p99_{key}": p99["this schema"],
                    f"original_p50_{key}": p50["original design"],
                    f"original_p99_{key}": p99["original design"],
                    f"ratio_p50_{key}": r50,
                    f"ratio_p99_{key}": r99,
                }
        finally:
            conn.execute(f"drop schema if exists {SCHEMA} cascade")
            conn.execute("truncate public.document_jobs cascade")
    section.tables.append(table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)
