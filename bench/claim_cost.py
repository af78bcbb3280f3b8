"""Claim cost against backlog size: this schema next to the original design's.

The original design (spec 3.1) has only the unique index, so every claim sorts the whole
backlog. It is reproduced here, in a schema of its own, with its claim function.

python -m devstack run -- .venv/bin/python -m bench.claim_cost [--claims N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import psycopg

ORIGINAL_DESIGN = """
drop schema if exists original cascade;
create schema original;
create table original.document_jobs (like public.document_jobs including defaults);
alter table original.document_jobs add primary key (id);
create unique index on original.document_jobs (kind, fax_received_email_id) where status in ('queued', 'running');
create function original.claim_document_jobs(p_kind text, p_limit int default 1, p_lease interval default '5 minutes')
returns setof original.document_jobs language sql as $$
    update original.document_jobs j
       set status = 'running', attempts = j.attempts + 1, generation = j.generation + 1,
           lease_until = now() + p_lease, started_at = coalesce(j.started_at, now())
     where j.id in (select c.id from original.document_jobs c
                     where c.kind = p_kind
                       and ((c.status = 'queued' and c.run_after <= now())
                            or (c.status = 'running' and c.lease_until < now()))
                       and c.attempts < c.max_attempts
                     order by c.run_after, c.created_at
                     limit p_limit
                       for update skip locked)
    returning j.*
$$;
create function original.complete_document_job(p_job_id uuid, p_generation int) returns boolean language sql as $$
    update original.document_jobs set status = 'completed', lease_until = null, finished_at = now()
     where id = p_job_id and generation = p_generation and status = 'running' returning true
$$;
"""


def fill(conn: psycopg.Connection, schema: str, queued: int, finished: int) -> None:
    conn.execute(f"truncate {schema}.document_jobs")
    conn.execute(
        f"""insert into {schema}.document_jobs (kind, status, finished_at, created_at)
            select 'fetch_email', 'completed', now() - interval '1 day', now() - interval '2 days'
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


def claim_latencies(conn: psycopg.Connection, schema: str, claims: int) -> list[float]:
    """Milliseconds per claim (one round trip each). Each claimed job is completed and replaced by a
    new queued one (untimed), so the backlog keeps its size."""
    latencies = []
    for _ in range(claims):
        started = time.perf_counter()
        job_id, generation = conn.execute(
            f"select id, generation from {schema}.claim_document_jobs('fetch_email')"
        ).fetchone()
        latencies.append((time.perf_counter() - started) * 1000)
        conn.execute(f"select {schema}.complete_document_job(%s, %s)", (job_id, generation))
        conn.execute(f"insert into {schema}.document_jobs (kind) values ('fetch_email')")
    return latencies


def measure(conn: psycopg.Connection, schema: str, queued: int, finished: int, claims: int) -> float:
    fill(conn, schema, queued, finished)
    claim_latencies(conn, schema, 10)  # warm the cache and the plan
    return statistics.median(claim_latencies(conn, schema, claims))


def main() -> None:
    parser = argparse.ArgumentParser(description="claim cost against backlog size")
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--backlog", type=int, default=50_000)
    args = parser.parse_args()
    with psycopg.connect(os.environ["DEVSTACK_ADMIN_DATABASE_URL"], autocommit=True) as conn:
        conn.execute(ORIGINAL_DESIGN)
        print(f"median claim latency, ms ({args.claims} claims each, each job completed after its claim)")
        print(f"{'queued':>8} {'this schema':>12} {'original':>10} {'original/this':>14}")
        for queued in (100, args.backlog):
            ours = measure(conn, "public", queued, 0, args.claims)
            original = measure(conn, "original", queued, 0, args.claims)
            print(f"{queued:>8} {ours:>12.3f} {original:>10.3f} {original / ours:>14.1f}")
        conn.execute("truncate public.document_jobs")
        conn.execute("drop schema original cascade")


if __name__ == "__main__":
    main()
