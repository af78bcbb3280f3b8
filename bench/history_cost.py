"""The extra cost per job of the attempt history and the failure alert (the triggers on document_jobs).

Claim then complete (the common path), and claim then a permanent failure with an alert URL stored
(the alert path), on one connection, with the triggers enabled and then disabled, alternating,
in one run. Rows written and WAL bytes per job come from the database's own counters.

python -m devstack run -- .venv/bin/python -m bench.history_cost [--quick]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from bench.common import Section, Table, connect, fmt, median, percentile, run_alone
from devstack import stack

TRIGGERS = ("document_jobs_record_attempt", "document_jobs_alert_failed")
# Nothing listens there: the dispatcher's POST is refused at once. The alert is queued all the same.
ALERT_URL = "http://127.0.0.1:9/alerts"
BACKLOG = 100


@dataclass(frozen=True)
class Settings:
    jobs: int
    runs: int
    warmup: int


FULL = Settings(jobs=300, runs=5, warmup=30)
QUICK = Settings(jobs=20, runs=1, warmup=3)


def set_triggers(conn: psycopg.Connection, enabled: bool) -> None:
    for trigger in TRIGGERS:
        conn.execute(f"alter table public.document_jobs {'enable' if enabled else 'disable'} trigger {trigger}")


def counters(conn: psycopg.Connection) -> tuple[int, int, int]:
    """(WAL bytes so far, attempt rows, requests queued through pg_net so far)."""
    wal, attempts = conn.execute(
        "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, (select count(*) from document_job_attempts)"
    ).fetchone()
    requests = conn.execute("select last_value from net.http_request_queue_id_seq").fetchone()[0]
    return wal, attempts, requests


def one_run(conn: psycopg.Connection, outcome: str, jobs: int) -> tuple[list[float], tuple[int, int, int]]:
    """Milliseconds per claim -> outcome, and the counters' growth over the run. Each job taken is
    replaced by a new queued one (untimed), so the backlog keeps its size."""
    before = counters(conn)
    latencies = []
    for _ in range(jobs):
        started = time.perf_counter()
        job_id, generation = conn.execute("select id, generation from claim_document_jobs('fetch_email')").fetchone()
        if outcome == "completed":
            conn.execute("select complete_document_job_v2(%s, %s)", (job_id, generation))
        else:
            conn.execute(
                "select fail_document_job_v2(%s, %s, 'resend_not_found', 'Resend: HTTP 404', p_retryable => false)",
                (job_id, generation),
            )
        latencies.append((time.perf_counter() - started) * 1000)
        conn.execute("insert into document_jobs (kind) values ('fetch_email')")
    after = counters(conn)
    return latencies, (after[0] - before[0], after[1] - before[1], after[2] - before[2])


def alert_sql_latencies(conn: psycopg.Connection, count: int) -> list[float]:
    """Milliseconds to build and queue one failure alert (the trigger's work), rolled back: never sent."""
    latencies = []
    for _ in range(count):
        with conn.transaction(force_rollback=True):
            started = time.perf_counter()
            conn.execute(
                "select document_jobs_internal.post_alert(document_jobs_internal.job_failed_alert(j))"
                " from public.document_jobs j limit 1"
            )
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "history_cost",
        "Attempt history and failure alerts: cost per job",
        f"Claim then complete, and claim then a permanent failure (an alert URL stored, so the alert is "
        f"queued through pg_net), on one connection as postgres, {settings.jobs} jobs per run after "
        f"{settings.warmup} to warm up, {settings.runs} run(s) per mode, the modes alternating: with the two "
        "triggers on document_jobs (attempt row, failure alert) and with them disabled. A backlog of "
        f"{BACKLOG} target-less queued jobs; each job taken is replaced (untimed). Latency: the median over the "
        "runs of each run's p50; rows and WAL: per job, from the database's counters (WAL includes the untimed "
        "insert of the replacement job, the same in both modes).",
    )
    table = Table(
        "per job: claim -> outcome",
        ["outcome", "triggers", "p50 ms", "p99 ms", "attempt rows", "alerts queued", "WAL bytes"],
    )
    with connect() as conn:
        conn.execute("truncate public.document_jobs cascade")
        conn.execute(
            "insert into document_jobs (kind, run_after) select 'fetch_email', now() - interval '1 minute' "
            "from generate_series(1, %s)",
            (BACKLOG,),
        )
        stack.store_vault_secret(conn, stack.ALERT_URL_SECRET, ALERT_URL)
        conn.execute("set client_min_messages = error")
        try:
            for outcome in ("completed", "failed"):
                samples: dict[bool, list[tuple[list[float], tuple[int, int, int]]]] = {True: [], False: []}
                for enabled in (True, False):
                    set_triggers(conn, enabled)
                    one_run(conn, outcome, settings.warmup)
                for _ in range(settings.runs):
                    for enabled in (True, False):
                        set_triggers(conn, enabled)
                        samples[enabled].append(one_run(conn, outcome, settings.jobs))
                p50s = {}
                for enabled in (True, False):
                    runs = samples[enabled]
                    p50s[enabled] = median([percentile(lat, 0.50) for lat, _ in runs])
                    p99 = median([percentile(lat, 0.99) for lat, _ in runs])
                    total = settings.jobs * len(runs)
                    wal, attempts, alerts = (sum(c[i] for _, c in runs) / total for i in range(3))
                    table.add(outcome, "on" if enabled else "off", fmt(p50s[enabled], 3), fmt(p99, 3),
                              fmt(attempts), fmt(alerts), fmt(wal, 0))  # fmt: skip
                    mode = "on" if enabled else "off"
                    section.figures |= {
                        f"{outcome}_{mode}_p50_ms": p50s[enabled],
                        f"{outcome}_{mode}_attempt_rows": attempts,
                        f"{outcome}_{mode}_alerts": alerts,
                        f"{outcome}_{mode}_wal_bytes": wal,
                    }
                section.figures[f"{outcome}_extra_p50_ms"] = p50s[True] - p50s[False]
            alert_sql = alert_sql_latencies(conn, settings.jobs)
            section.figures["alert_sql_p50_ms"] = percentile(alert_sql, 0.50)
        finally:
            set_triggers(conn, True)
            conn.execute("delete from vault.secrets where name = %s", (stack.ALERT_URL_SECRET,))
            conn.execute("truncate public.document_jobs cascade")
    table.notes.append(
        f"the failure path with triggers on includes the local pg_net stand-in sending each alert on the same "
        f"cores (a Python process that opens a connection per answer; hosted pg_net is a C background worker): "
        f"building and queuing one alert alone, in a transaction rolled back so that nothing is sent, takes "
        f"{fmt(section.figures['alert_sql_p50_ms'], 3)} ms (p50 of {settings.jobs})"
    )
    table.notes.append(
        "besides these, every worker POST (the kick of each new e-mail, the cron's calls) writes one "
        "row to document_jobs_internal.worker_requests, so that the health check can read the worker's answers"
    )
    section.tables.append(table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)
