"""make demo: the whole flow on the local stack, end to end.

Starts the stack, stores the Vault secrets as an operator would, adds sample faxed e-mails to
the Resend sample provider, delivers their signed email.received webhooks to the webhook
function, waits while the kicks and the worker fetch every attachment into Storage, prints a
summary; then gives one more e-mail a permanent fault (Resend no longer knows it) and shows the
failure alert the database sends to the operator's chat webhook (here a local stand-in); takes a
screenshot of the admin screen showing that failed job (Debian's chromium, headless) and prints
where it is; and stops everything it started.

.venv/bin/python -m devstack.tools.demo [--emails N]
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import psycopg
from psycopg.rows import dict_row

from devstack import lifecycle, stack
from devstack.tools import inbound
from lib.admin import command_line
from lib.admin.display import width as display_width

TIMEOUT_S = 180
ALERT_TIMEOUT_S = 90
SCREENSHOT = stack.ENV_FILE.parent / "demo" / "admin-failed-job.png"


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
            print("Storing the Vault secrets that the cron job and the kick read, and the alert URL")
            print("(a chat webhook; here a local stand-in that prints what it gets).")
            stack.store_vault_secrets(conn, env)
            chat = start_chat_webhook()
            stack.store_vault_secret(conn, stack.ALERT_URL_SECRET, chat.url)
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
            print("Waiting for the worker to store every attachment and prepare every fax:")
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
            failed_job = show_failure_alert(conn, env, chat)
            shot = failed_job is not None and screenshot_admin(env, failed_job)
        return 0 if answers.count(200) == len(answers) and shot else 1
    finally:
        print("Stopping the local stack.")
        stack.stop(running)


class ChatWebhook:
    """Where a Slack or Teams incoming webhook would be: collects the alerts the database POSTs."""

    def __init__(self, server: ThreadingHTTPServer, received: queue.Queue[dict]) -> None:
        self.url = f"http://127.0.0.1:{server.server_address[1]}/chat-webhook"
        self.received = received


def start_chat_webhook() -> ChatWebhook:
    received: queue.Queue[dict] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.put(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()  # ends with the demo's process
    return ChatWebhook(server, received)


def show_failure_alert(conn: psycopg.Connection, env: dict[str, str], chat: ChatWebhook) -> str | None:
    """One more e-mail, which Resend answers 404 for (a permanent fault): its job fails at once, and
    the database alerts the operator in the same transaction. The failed job's id, once its alert came."""
    data = inbound.add_email(env["RESEND_API_URL"], attachments=1)
    fault = {"kind": "status", "status": 404, "name": "not_found", "target": "list", "email_id": data["email_id"]}
    httpx.post(f"{env['RESEND_API_URL']}/_control/faults", json=fault, timeout=10).raise_for_status()
    print("\nOne more e-mail, which Resend answers 404 for (a permanent fault): its job fails, and the")
    print("database sends the operator a failure alert (Vault: document_jobs_alert_url) as it commits.")
    body = inbound.event(data)
    inbound.deliver(env["FUNCTIONS_URL"], body, inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body))
    started = time.monotonic()
    try:
        alert = chat.received.get(timeout=ALERT_TIMEOUT_S)
    except queue.Empty:
        print(f"  no alert arrived within {ALERT_TIMEOUT_S} s")
        return None
    print(f"  alert received after {time.monotonic() - started:.1f} s: event {alert['event']}, its text:")
    print("\n".join("    | " + line for line in alert["text"].splitlines()))
    print(f"  and fields for machines: {', '.join(sorted(alert))}")
    history = conn.execute(
        "select attempt, outcome, error_code from document_job_attempts where job_id = %s order by generation",
        (alert["job"]["id"],),
    ).fetchall()
    print(f"  the job's history ({command_line('show', '<job id>')}): "
          + "; ".join(f"attempt {h['attempt']} {h['outcome']} ({h['error_code']})" for h in history))  # fmt: skip
    return str(alert["job"]["id"]) if alert["event"] == "document_job_failed" else None


def screenshot_admin(env: dict[str, str], job_id: str) -> bool:
    """The admin screen as an operator sees the failed job: signed in, the failed jobs listed, the job opened."""
    from playwright.sync_api import sync_playwright

    from devstack import browser

    print("\nThe admin screen, as the operator signs in, lists the failed jobs and opens that one:")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = browser.launch(playwright)
        try:
            page = chromium.new_page(viewport={"width": 1280, "height": 800}, locale="en-US")
            page.goto(env["ADMIN_URL"])
            page.fill("input[name=email]", env["DEVSTACK_OPERATOR_EMAIL"])
            page.fill("input[name=password]", env["DEVSTACK_OPERATOR_PASSWORD"])
            page.click("form.sign-in button[type=submit]")
            page.wait_for_selector("span.who")  # signed in (the first view is the inbox)
            page.goto(f"{env['ADMIN_URL']}#/jobs?state=failed")
            page.click(f'tr[data-job-id="{job_id}"] a', timeout=30_000)
            page.wait_for_selector("ol.timeline .attempt-error")
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            chromium.close()
    print(f"  {env['ADMIN_URL']} (sign in as {env['DEVSTACK_OPERATOR_EMAIL']}); screenshot: {SCREENSHOT}")
    return SCREENSHOT.exists()


def summarize(conn: psycopg.Connection, emails: list[dict], sent_at: dict[str, datetime]) -> None:
    rows = conn.execute(
        """select e.provider_email_id, a.filename, a.size_bytes, a.storage_path, a.created_at
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id
            order by e.provider_email_id, a.filename"""
    ).fetchall()
    jobs = conn.execute(  # each fax fetched, then prepared for the screen (its prepare_fax job)
        "select kind, status, count(*) as n, sum(attempts) as attempts from document_jobs group by 1, 2 order by 1, 2"
    ).fetchall()
    calls = conn.execute("select status_code, count(*) as n from net._http_response group by 1").fetchall()
    print(f"\nE-mails received: {len(emails)}")
    print("Jobs: " + ", ".join(f"{r['n']} {r['kind']} {r['status']} ({r['attempts']} attempts)" for r in jobs))
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
    print("  (all e-mails at once on a just-started stack: the first requests start the functions' instances")
    print("  cold on this machine's cores; make bench measures one e-mail at a time on a warm host:")
    print("  docs/BENCHMARKS.md, 'Webhook to stored')")


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
