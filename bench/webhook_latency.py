"""Webhook -> attachments stored: the pg_net kick against the every-minute cron job alone.

Kick path: e-mails (each with `attachments` sample faxes) are added to the sample provider and
their signed email.received webhooks delivered one at a time; the next goes once the previous
e-mail's attachment rows all exist. The latency of an e-mail runs from just before its webhook is
sent to the creation of its last attachment row (both on this machine's clock).

Cron path: the same, but each kick is lost on purpose: the pg_net dispatcher is frozen while the
webhook is delivered, the kick it queued is deleted, and the dispatcher resumes; only the cron
job's next tick calls the worker. The deliveries are spread over one minute so that they sample
where in the cron minute an e-mail arrives. pg_cron ticks once a minute, so this sample is small.

python -m devstack run -- .venv/bin/python -m bench.webhook_latency [--quick]
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import httpx
import psycopg

from bench import flow
from bench.common import (
    Section,
    Table,
    connect,
    env,
    fmt,
    fmt_ratio,
    median,
    percentile,
    ratio,
    run_alone,
    vault_secrets,
)

TIMEOUT_S = 60
CRON_TIMEOUT_S = 150


@dataclass(frozen=True)
class Settings:
    emails: int  # per round, kick path
    rounds: int
    attachments: int
    cron_emails: int  # 0: the cron path is skipped


FULL = Settings(emails=10, rounds=3, attachments=2, cron_emails=5)
QUICK = Settings(emails=3, rounds=1, attachments=1, cron_emails=0)


def worker_elapsed_ms(conn: psycopg.Connection) -> list[float]:
    """The worker's own elapsed_ms, from the summaries pg_net recorded (one per invocation that claimed a job)."""
    rows = conn.execute(
        "select (content::jsonb ->> 'elapsed_ms')::float from net._http_response"
        " where status_code = 200 and (content::jsonb ->> 'claimed')::int > 0"
    ).fetchall()
    return [value for (value,) in rows if value is not None]


def gateway_requests() -> Counter[str]:
    """Requests the local gateway (PostgREST and Storage) has served, by method and path."""
    answer = httpx.get(f"{env('SUPABASE_URL')}/_control/requests", timeout=10)
    answer.raise_for_status()
    return Counter(answer.json())


def round_trips(before: Counter[str], after: Counter[str]) -> dict[str, int]:
    """The worker's requests to the database between two counts, by what they are: queue calls
    (RPCs other than the webhook's record_inbound_email), table reads; and Storage uploads."""
    served = after - before
    queue = sum(
        n for path, n in served.items() if "/rest/v1/rpc/" in path and not path.endswith("/record_inbound_email")
    )
    reads = sum(n for path, n in served.items() if path.startswith("GET /rest/v1/"))
    uploads = sum(n for path, n in served.items() if "/storage/v1/object/" in path)
    return {"queue": queue, "reads": reads, "uploads": uploads}


def kick_round(conn: psycopg.Connection, settings: Settings) -> tuple[list[float], list[float]]:
    """(latency ms per e-mail, webhook answer ms per delivery)."""
    latencies, answers = [], []
    for data in flow.add_emails(settings.emails, settings.attachments):
        started = time.perf_counter()
        sent_at, status = flow.deliver(data)
        answers.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise RuntimeError(f"the webhook answered {status}")
        email_id = data["email_id"]
        flow.wait_until(
            lambda email_id=email_id: flow.stored_at(conn, [email_id]).get(email_id, (0,))[0] >= settings.attachments,
            TIMEOUT_S,
            "the attachments through the kick",
        )
        latencies.append((flow.stored_at(conn, [email_id])[email_id][1] - sent_at).total_seconds() * 1000)
    return latencies, answers


def cron_path(conn: psycopg.Connection, admin: psycopg.Connection, settings: Settings) -> tuple[list[float], int]:
    """(latency ms per e-mail, kicks deleted). Deliveries at evenly spread seconds of the minute,
    away from second 0 where pg_cron ticks (a tick's own POST is never deleted)."""
    emails = flow.add_emails(settings.cron_emails, settings.attachments)
    offsets = [6 + i * 48 / max(1, settings.cron_emails - 1) for i in range(settings.cron_emails)]
    while flow.seconds_past_minute() > 3:  # start at the top of a minute
        time.sleep(0.2)
    sent: dict[str, datetime] = {}
    lost = 0
    for data, offset in zip(emails, offsets, strict=True):
        while flow.seconds_past_minute() < offset:
            time.sleep(0.05)
        with flow.dispatcher_frozen():
            last_id = admin.execute("select coalesce(max(id), 0) from net.http_request_queue").fetchone()[0]
            sent[data["email_id"]], status = flow.deliver(data)
            lost += len(admin.execute("delete from net.http_request_queue where id > %s returning id",
                                      (last_id,)).fetchall())  # fmt: skip
        if status != 200:
            raise RuntimeError(f"the webhook answered {status}")
    ids = list(sent)
    flow.wait_until(
        lambda: (
            all(n >= settings.attachments for n, _ in flow.stored_at(conn, ids).values())
            and len(flow.stored_at(conn, ids)) == len(ids)
        ),
        CRON_TIMEOUT_S,
        "the cron job to call the worker",
        poll_s=0.5,
    )
    stored = flow.stored_at(conn, ids)
    return [(stored[i][1] - sent[i]).total_seconds() * 1000 for i in ids], lost


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "webhook_latency",
        "Webhook to attachments stored",
        f"Kick path: {settings.rounds} round(s) of {settings.emails} e-mails with {settings.attachments} sample fax "
        "PDF(s) each, webhooks delivered one at a time (the next once the previous e-mail's attachments are all "
        "stored); each figure is the median over the rounds of the round's p50 or p95. Cron path: "
        + (
            f"{settings.cron_emails} e-mails, delivered at evenly spread seconds of one minute with the kick "
            "deleted (pg_net dispatcher frozen with SIGSTOP, the queued request deleted, SIGCONT), so only "
            "pg_cron's next tick calls the worker; one round only, since the cron ticks once a minute: a small "
            "sample."
            if settings.cron_emails
            else "skipped in quick mode (it needs a real cron minute)."
        )
        + " Latency: from just before the webhook is sent to the creation of the e-mail's last attachment row.",
    )
    table = Table("webhook sent -> attachment rows stored", ["path", "e-mails", "p50 ms", "p95 ms", "max ms"])
    with connect() as admin, connect() as conn, vault_secrets(admin):
        flow.clean_up(admin)
        try:
            counted_from = gateway_requests()
            rounds = [kick_round(conn, settings) for _ in range(settings.rounds)]
            # Every e-mail is stored before the next webhook goes: one job per invocation, and
            # nothing else calls the gateway meanwhile (the cron job finds nothing claimable).
            trips = round_trips(counted_from, gateway_requests())
            all_kick = [value for latencies, _ in rounds for value in latencies]
            kick50 = median([percentile(r, 0.50) for r, _ in rounds])
            kick95 = median([percentile(r, 0.95) for r, _ in rounds])
            answer50 = median([percentile(a, 0.50) for _, a in rounds])
            worker = worker_elapsed_ms(conn)
            if worker:
                section.figures["worker_p50"] = median(worker)
                table.notes.append(f"the worker's own time per invocation: {fmt(median(worker), 0)} ms (p50)")
            table.add("with the pg_net kick", len(all_kick), fmt(kick50, 0), fmt(kick95, 0), fmt(max(all_kick), 0))
            jobs, n = len(all_kick), settings.attachments
            per_job = {name: count / jobs for name, count in trips.items()}
            section.figures |= {f"trips_{name}_per_job": value for name, value in per_job.items()}
            section.figures |= {"trips_attachments": n, "trips_jobs": jobs}
            trips_table = Table(
                f"database round trips per job ({n} attachment(s) a job, {jobs} jobs, counted by the gateway)",
                ["calls", "per job", "formula"],
            )
            trips_table.add(
                "queue calls (RPC, start_fetch_email_v2 included)", fmt(per_job["queue"], 2),
                f"n + 3 = {n + 3} (before: n + 2 = {n + 2}; 2n + 3 = {2 * n + 3} before that)",
            )  # fmt: skip
            trips_table.add("table reads", fmt(per_job["reads"], 2), "0 (before: 2, the e-mail and what is stored)")
            trips_table.add("all database calls", fmt(per_job["queue"] + per_job["reads"], 2),
                            f"n + 3 = {n + 3} (before: n + 4 = {n + 4}; 2n + 5 = {2 * n + 5} before that)")  # fmt: skip
            trips_table.add("Storage uploads", fmt(per_job["uploads"], 2), f"n = {n}")
            section.figures |= {"kick_p50": kick50, "kick_p95": kick95, "webhook_answer_p50": answer50}
            if settings.cron_emails:
                cron, lost = cron_path(conn, admin, settings)
                cron50, cron95 = percentile(cron, 0.50), percentile(cron, 0.95)
                table.add("cron job alone (kick lost)", len(cron), fmt(cron50, 0), fmt(cron95, 0), fmt(max(cron), 0))
                section.figures |= {"cron_p50": cron50, "cron_p95": cron95, "kicks_deleted": lost,
                                    "cron_emails": len(cron), "cron_over_kick_p50": ratio(cron50, kick50)}  # fmt: skip
                table.notes.append(
                    f"cron alone / kick, p50: {fmt_ratio(ratio(cron50, kick50))}; kicks deleted: {lost} of "
                    f"{settings.cron_emails}"
                )
            table.notes.append(f"the webhook's own answer took {fmt(answer50, 0)} ms (p50)")
        finally:
            flow.clean_up(admin)
    section.tables.append(table)
    section.tables.append(trips_table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)
