"""make demo: the whole flow on the local stack, end to end.

Starts the stack, stores the Vault secrets as an operator would, adds sample faxed e-mails to
the Resend sample provider, delivers their signed email.received webhooks to the webhook
function, waits while the kicks and the worker fetch every attachment into Storage, prints a
summary, and stops everything it started.

.venv/bin/python -m devstack.demo [--emails N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import psycopg
from psycopg.rows import dict_row

from devstack import inbound, lifecycle, stack
from lib.admin import display_width

TIMEOUT_S = 180


def progress(conn: psycopg.Connection, expected: int, started: float) -> tuple[int, dict[str, int]]:
    stored = conn.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"]
    jobs = {r["status"]: r["n"] for r in conn.execute("select status, count(*) as n from document_jobs group by 1")}
    done = round(30 * stored / expected) if expected else 30
    counts = ", ".join(f"{n} {status}" for status, n in sorted(jobs.items()))
    bar = f"[{'#' * done}{'.' * (30 - done)}]"
    line = f"\r  {bar} {stored}/{expected} attachments stored · jobs: {counts} · {time.monotonic() - started:4.1f} s "
    print(line, end="" if sys.stdout.isatty() else "\n", flush=True)
    return stored, jobs


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(email_count: int, seed: int) -> int:
    rng = random.Random(seed)
    print("Starting the local stack (PostgreSQL with pg_cron, pg_net and Vault stand-ins, PostgREST and Storage")
    print("stand-ins, the Vercel function host and the Resend sample provider)...")
    running = stack.start()
    try:
        env = running.env
        with psycopg.connect(env["DATABASE_URL"], autocommit=True, row_factory=dict_row) as conn:
            print("Storing the Vault secrets that the cron job and the kick read.")
            stack.store_vault_secrets(conn, env)
            emails = [
                inbound.add_email(env["RESEND_API_URL"], attachments=rng.randint(1, 4)) for _ in range(email_count)
            ]
            expected = sum(len(e["attachments"]) for e in emails)
            print(f"Delivering {email_count} signed email.received webhooks ({expected} fax attachments) ...")
            sent_at: dict[str, datetime] = {}

            def deliver(data: dict) -> int:
                body = inbound.event(data)
                sent_at[data["email_id"]] = datetime.now(UTC)
                return inbound.deliver(
                    env["FUNCTIONS_URL"], body, inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body)
                ).status_code

            started = time.monotonic()
            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(deliver, emails))
            print(f"  webhook answers: {', '.join(f'{answers.count(s)} x {s}' for s in sorted(set(answers)))}")
            print("Waiting for the worker to store every attachment:")
            while True:
                stored, jobs = progress(conn, expected, started)
                if stored >= expected and set(jobs) == {"completed"}:
                    break
                if time.monotonic() - started > TIMEOUT_S:
                    print(f"\nTimed out after {TIMEOUT_S} s; logs are in {running.database.folder}")
                    return 1
                time.sleep(0.25)
            print()
            summarize(conn, emails, sent_at)
        return 0 if answers.count(200) == len(answers) else 1
    finally:
        print("Stopping the local stack.")
        stack.stop(running)


def summarize(conn: psycopg.Connection, emails: list[dict], sent_at: dict[str, datetime]) -> None:
    rows = conn.execute(
        """select e.provider_email_id, a.filename, a.size_bytes, a.storage_path, a.created_at
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id
            order by e.provider_email_id, a.filename"""
    ).fetchall()
    jobs = conn.execute(
        "select status, count(*) as n, sum(attempts) as attempts from document_jobs group by 1"
    ).fetchall()
    calls = conn.execute("select status_code, count(*) as n from net._http_response group by 1").fetchall()
    print(f"\nE-mails received: {len(emails)}")
    print("Jobs: " + ", ".join(f"{r['n']} {r['status']} ({r['attempts']} attempts)" for r in jobs))
    print(
        "Worker calls through pg_net, answered so far: "
        + (", ".join(f"{r['n']} x HTTP {r['status_code']}" for r in calls) or "none")
    )
    print(f"\nStored files ({len(rows)}):")
    width = max(display_width(r["filename"] or "(no name)") for r in rows)
    for r in rows:
        name = r["filename"] or "(no name)"
        padding = " " * (width - display_width(name))
        print(f"  {r['provider_email_id'][:8]}  {name}{padding}  {r['size_bytes']:>6} bytes  {r['storage_path']}")
    latencies = []
    for email in emails:
        last = max(r["created_at"] for r in rows if r["provider_email_id"] == email["email_id"])
        latencies.append((last - sent_at[email["email_id"]]).total_seconds() * 1000)
    print(f"\nWebhook sent -> all of its attachments stored, per e-mail: p50 {statistics.median(latencies):.0f} ms, "
          f"p95 {percentile(latencies, 0.95):.0f} ms, max {max(latencies):.0f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description="the whole flow on the local stack")
    parser.add_argument("--emails", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    with lifecycle.guarded(stack.stop_record):
        code = run(args.emails, args.seed)
    sys.exit(code)


if __name__ == "__main__":
    main()
