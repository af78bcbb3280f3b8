"""Idle cost: invoke_document_jobs() when nothing is claimable, on a table with a long history.

pg_cron runs it every minute forever, so what it costs with nothing to do is paid ~525,600
times a year. Timed as one round trip (as pg_cron's own connection makes it); the plans and
buffers are those of the statements inside the function, captured with auto_explain (nested
statements, ANALYZE, BUFFERS), so they are the plans the function really runs.

python -m devstack run -- .venv/bin/python -m bench.idle_cost [--quick]
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import psycopg

from bench.common import Section, Table, connect, env, fmt, median, run_alone


@dataclass(frozen=True)
class Settings:
    finished: int
    backoff: int  # jobs waiting out a backoff (not claimable): the idle case after a provider outage
    calls: int
    runs: int


FULL = Settings(finished=1_000_000, backoff=50_000, calls=200, runs=3)
QUICK = Settings(finished=10_000, backoff=1_000, calls=20, runs=1)


def fill(conn: psycopg.Connection, finished: int) -> None:
    conn.execute("truncate public.document_jobs cascade")
    conn.execute(
        """insert into public.document_jobs (kind, status, attempts, generation, started_at, finished_at, created_at)
           select 'fetch_email', 'completed', 1, 1, now() - interval '1 day', now() - interval '1 day',
                  now() - interval '2 days'
             from generate_series(1, %s)""",
        (finished,),
    )
    conn.execute("vacuum analyze public.document_jobs")


def add_backoff(conn: psycopg.Connection, count: int) -> None:
    conn.execute(
        """insert into public.document_jobs (kind, attempts, run_after, last_error_code)
           select 'fetch_email', 1, now() + interval '1 hour', 'resend_unavailable' from generate_series(1, %s)""",
        (count,),
    )
    conn.execute("vacuum analyze public.document_jobs")


def invoke_ms(conn: psycopg.Connection, calls: int) -> list[float]:
    latencies = []
    for _ in range(calls):
        started = time.perf_counter()
        posts = conn.execute("select public.invoke_document_jobs()").fetchone()[0]
        latencies.append((time.perf_counter() - started) * 1000)
        if posts:
            raise RuntimeError(f"invoke_document_jobs queued {posts} POSTs: something is claimable")
    return latencies


def nested_plans(admin: psycopg.Connection) -> dict[str, str]:
    """The plans of the statements inside invoke_document_jobs(), by role: 'count' and 'sweep'."""
    messages: list[str] = []
    admin.add_notice_handler(lambda notice: messages.append(notice.message_primary or ""))
    admin.execute("load 'auto_explain'")
    for setting in ("log_nested_statements", "log_analyze", "log_buffers"):
        admin.execute(f"set auto_explain.{setting} = on")
    admin.execute("set auto_explain.log_min_duration = 0")
    admin.execute("set client_min_messages = log")
    try:
        admin.execute("select public.invoke_document_jobs()")
    finally:
        admin.execute("reset client_min_messages")
        admin.execute("set auto_explain.log_min_duration = -1")
    plans = {}
    for message in messages:
        if "from public.document_jobs_claimable" in message and "count(" in message:
            plans["count"] = message
        elif "lease_expired" in message and "for update skip locked" in message:
            plans["sweep"] = message
    return plans


def buffers(plan: str | None) -> str:
    """The top node's buffers (the whole statement's), e.g. 'shared hit=4'."""
    if not plan:
        return "n/a"
    match = re.search(r"Buffers: ([^\n]+)", plan)
    return match.group(1).strip() if match else "none (no pages touched)"


def pages(plan: str | None) -> float | None:
    """Pages the statement touched (shared hit + read), from its top node."""
    if not plan:
        return None
    return float(sum(int(n) for n in re.findall(r"(?:hit|read)=(\d+)", buffers(plan))))


def plan_body(plan: str) -> str:
    lines = plan.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(("Aggregate", "Limit", "Result"))), 0)
    return "\n".join(lines[start:])


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "idle_cost",
        "Idle cost",
        f"invoke_document_jobs() with nothing claimable, {settings.calls} calls per run, {settings.runs} run(s) "
        "(median of the runs' medians), one round trip each as postgres over the local socket. Then the same with "
        f"{settings.backoff:,} jobs waiting out a backoff (run_after an hour ahead: not claimable either), the "
        "idle minutes after a provider outage. Buffers: auto_explain (ANALYZE, BUFFERS, nested statements) on "
        "one call, so they are the plans the function itself runs.",
    )
    table = Table(
        "invoke_document_jobs() with nothing to do",
        ["table holds", "median ms", "count query buffers", "sweep buffers"],
    )
    plans_seen: dict[str, str] = {}
    with connect() as admin, connect(env("DATABASE_URL")) as conn:
        try:
            scenarios = (
                (f"{settings.finished:,} finished", lambda: fill(admin, settings.finished)),
                (f"{settings.finished:,} finished + {settings.backoff:,} in backoff",
                 lambda: add_backoff(admin, settings.backoff)),
            )  # fmt: skip
            for index, (label, prepare) in enumerate(scenarios):
                prepare()
                invoke_ms(conn, 5)  # warm
                value = median([median(invoke_ms(conn, settings.calls)) for _ in range(settings.runs)])
                plans = nested_plans(admin)
                table.add(label, fmt(value, 3), buffers(plans.get("count")), buffers(plans.get("sweep")))
                key = "history" if index == 0 else "backoff"
                section.figures[f"idle_ms_{key}"] = value
                section.figures[f"count_pages_{key}"] = pages(plans.get("count"))
                if "count" in plans:
                    plans_seen[f"count query, {label}"] = plan_body(plans["count"])
        finally:
            admin.execute("truncate public.document_jobs cascade")
    section.tables.append(table)
    section.blocks += [(f"EXPLAIN (ANALYZE, BUFFERS): {label}", plan) for label, plan in plans_seen.items()]
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)
