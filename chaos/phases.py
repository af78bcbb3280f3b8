"""The chaos run's phases of failures that are not the job's own, after its main run, on its stack.

- A deleted key: Resend's key is deleted (the stand-in answers 400 validation_error "API key is
  invalid", as Resend's current reference says) and e-mails arrive. Their jobs must wait: each
  released, no attempt spent, none failed. The health check (called here on the chaos run's
  tick; the real pg_cron calls it every minute too) must raise the outage alert once, naming
  RESEND_API_KEY. Then the key is fixed, the release's 10-minute wait is made to pass (run_after
  moved, what time does, not code), and every job must complete with its attachments, and the
  recovery must be told once.
- A wrong webhook secret: e-mails arrive while the webhook's secret is wrong (signed with another
  one, as after a rotation gone wrong). Every delivery of Resend's full retry schedule (8 tries
  over about 27.6 hours, compressed here to a moment; the e-mails received 20 minutes ago, so
  that they are past webhooks_missing_after) gets 401 and records nothing. Reconciliation (its
  cron job's call, made on the run's tick) must record every one and their jobs store every
  attachment; the health check must raise webhooks_missing once; then the secret is fixed, a new
  e-mail's webhook is delivered, and the recovery must be told once.
- Lying Content-Lengths: each e-mail's first download lies about its length (shorter: the body
  ends there, which the HTTP client cannot notice; longer: the connection closes first).
  Nothing wrong may be stored: every job completes, every row and object has the provider's bytes.
"""

from __future__ import annotations

import base64
import hashlib
import queue
import secrets
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg

from devstack import stack
from devstack.tools import demo, inbound

WAIT_S = 180.0
TICK_S = 1.0


def provider_digests(env: dict[str, str]) -> dict[str, str]:
    """The sha256 of every attachment the Resend stand-in serves, by attachment id."""
    return httpx.get(f"{env['RESEND_API_URL']}/_control/attachments", timeout=10).json()


def _control(env: dict[str, str], path: str, body: dict[str, Any]) -> None:
    httpx.post(f"{env['RESEND_API_URL']}/_control/{path}", json=body, timeout=10).raise_for_status()


def _jobs(conn: psycopg.Connection[Any], email_ids: list[str]) -> list[dict[str, Any]]:
    return conn.execute(
        """select e.provider_email_id, j.status, j.attempts, j.last_error_code
             from document_jobs j join fax_received_emails e on e.id = j.fax_received_email_id
            where e.provider_email_id = any(%s) and j.kind = 'fetch_email'""",
        (email_ids,),
    ).fetchall()


def _until(conn: psycopg.Connection[Any], email_ids: list[str], done: Callable[[list[dict[str, Any]]], bool],
           tick: Callable[[], None]) -> list[dict[str, Any]]:  # fmt: skip
    """The phase's jobs once `done` holds (or when the wait is over), ticking meanwhile."""
    deadline = time.monotonic() + WAIT_S
    while not done(rows := _jobs(conn, email_ids)) and time.monotonic() < deadline:
        tick()
        time.sleep(TICK_S)
    return rows


def _deliver(env: dict[str, str], emails: list[dict[str, Any]]) -> list[int]:
    return [inbound.deliver_until_accepted(env["FUNCTIONS_URL"], env["RESEND_WEBHOOK_SECRET"], e) for e in emails]


def _stored_as_the_provider_serves(conn: psycopg.Connection[Any], env: dict[str, str],
                                   emails: list[dict[str, Any]]) -> list[str]:  # fmt: skip
    """What differs from the provider's attachments: a missing or extra row, other bytes."""
    problems = []
    digests = provider_digests(env)
    storage = Path(env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments"
    for data in emails:
        rows = conn.execute(
            """select a.provider_attachment_id, a.sha256, a.storage_path
                 from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id
                where e.provider_email_id = %s""",
            (data["email_id"],),
        ).fetchall()
        expected = sorted((a["id"], digests[a["id"]]) for a in data["attachments"])
        if sorted((r["provider_attachment_id"], r["sha256"]) for r in rows) != expected:
            problems.append(f"e-mail {data['email_id']}: the stored rows are not the provider's attachments")
        for row in rows:
            if hashlib.sha256((storage / row["storage_path"]).read_bytes()).hexdigest() != row["sha256"]:
                problems.append(f"attachment {row['provider_attachment_id']}: the object is not the row's bytes")
    return problems


def _alerts(chat: demo.ChatWebhook, settle_s: float = 3.0) -> list[dict[str, Any]]:
    """The alerts received so far, after waiting `settle_s` for any still being sent."""
    time.sleep(settle_s)
    got = []
    while True:
        try:
            got.append(chat.received.get_nowait())
        except queue.Empty:
            return got


def deleted_key(conn: psycopg.Connection[Any], env: dict[str, str], count: int,
                chat: demo.ChatWebhook) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    problems: list[str] = []

    def tick() -> None:
        conn.execute("select invoke_document_jobs()")
        conn.execute("select document_jobs_internal.check_health()")

    def outages(alerts: list[dict[str, Any]], event: str) -> int:
        return sum(1 for a in alerts if a.get("event") == event and a.get("cause") == "resend_unauthorized")

    _alerts(chat, 0)  # what the main run left
    emails = [inbound.add_email(env["RESEND_API_URL"], attachments=2) for _ in range(count)]
    ids = [data["email_id"] for data in emails]
    _control(env, "key", {"deleted": True})
    try:
        answers = _deliver(env, emails)
        rows = _until(conn, ids, lambda rows: len(rows) == count and all(r["last_error_code"] for r in rows), tick)
        waiting = [
            r
            for r in rows
            if (r["status"], r["attempts"], r["last_error_code"]) == ("queued", 0, "resend_unauthorized")
        ]
        if len(waiting) != count:
            problems.append(f"deleted key: {count - len(waiting)} of {count} jobs not waiting without an attempt: "
                            f"{Counter((r['status'], r['last_error_code']) for r in rows)}")  # fmt: skip
        for _ in range(5):  # five more ticks while the key stays deleted: still one alert
            tick()
            time.sleep(TICK_S)
        during = _alerts(chat)
    finally:
        _control(env, "key", {"deleted": False})  # the operator sets a key that works
    conn.execute("update document_jobs set run_after = now() where status = 'queued'")  # the 10 minutes pass
    rows = _until(conn, ids, lambda rows: all(r["status"] == "completed" for r in rows), tick)
    tick()  # the health check's next minute, after the last completion
    after = _alerts(chat)
    if outages(during, "document_jobs_outage") != 1:
        problems.append(f"deleted key: {outages(during, 'document_jobs_outage')} outage alerts, expected 1")
    named = [a for a in during if a.get("cause") == "resend_unauthorized" and "RESEND_API_KEY" in str(a.get("text"))]
    if not named:
        problems.append("deleted key: the outage alert does not name RESEND_API_KEY")
    if outages(after, "document_jobs_recovered") != 1:
        problems.append(f"deleted key: {outages(after, 'document_jobs_recovered')} recovery alerts, expected 1")
    completed = sum(1 for r in rows if r["status"] == "completed")
    if completed != count:
        problems.append(f"deleted key: {completed} of {count} jobs completed after the key was fixed")
    problems += _stored_as_the_provider_serves(conn, env, emails)
    return problems, {
        "deleted key: e-mails": count,
        "deleted key: webhook answers 200": answers.count(200),
        "deleted key: jobs waiting, no attempt spent": len(waiting),
        "deleted key: outage alerts": outages(during, "document_jobs_outage"),
        "deleted key: recovery alerts": outages(after, "document_jobs_recovered"),
        "deleted key: jobs completed after the fix": completed,
    }


RESEND_TRIES = 8  # Resend's deliveries of one event: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h


def wrong_secret(conn: psycopg.Connection[Any], env: dict[str, str], count: int,
                 chat: demo.ChatWebhook) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    problems: list[str] = []

    def tick() -> None:
        conn.execute("select invoke_document_jobs()")
        conn.execute("select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing()")

    def outages(alerts: list[dict[str, Any]], event: str) -> int:
        return sum(1 for a in alerts if a.get("event") == event and a.get("cause") == "webhooks_missing")

    _alerts(chat, 0)
    wrong = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    emails = inbound.receive_without_webhook(env["RESEND_API_URL"], count=count, attachments=2, age_seconds=20 * 60)
    ids = [data["email_id"] for data in emails]
    answers: Counter[int] = Counter()
    for data in emails:
        body = inbound.event(data)
        for _ in range(RESEND_TRIES):  # the same svix-id every time, as Resend redelivers
            headers = inbound.signed_headers(wrong, body, f"msg_{data['email_id']}")
            answers[inbound.deliver(env["FUNCTIONS_URL"], body, headers).status_code] += 1
    # (The cron job document-jobs-reconcile may already have recorded some: never a webhook.)
    recorded_by_webhooks = conn.execute(
        "select count(*) as n from fax_received_emails where provider_email_id = any(%s) and found_by = 'webhook'",
        (ids,),
    ).fetchone()["n"]
    if answers != Counter({401: count * RESEND_TRIES}) or recorded_by_webhooks:
        problems.append(f"wrong secret: the deliveries were answered {dict(answers)}, "
                        f"{recorded_by_webhooks} recorded by a webhook")  # fmt: skip
    conn.execute("select enqueue_document_jobs_reconciliation()")  # the cron job document-jobs-reconcile
    rows = _until(conn, ids, lambda rows: len(rows) == count and all(r["status"] == "completed" for r in rows), tick)
    for _ in range(5):  # five more ticks with the secret still wrong: still one alert
        tick()
        time.sleep(TICK_S)
    during = _alerts(chat)
    # The operator fixes the secret: the next e-mail's webhook is delivered, and the outage closes.
    fresh = inbound.add_email(env["RESEND_API_URL"], attachments=1)
    fixed = inbound.deliver_until_accepted(env["FUNCTIONS_URL"], env["RESEND_WEBHOOK_SECRET"], fresh)
    tick()
    after = _alerts(chat)
    found = conn.execute(
        "select count(*) as n from fax_received_emails where provider_email_id = any(%s)"
        " and found_by = 'reconciliation' and webhook_id is null",
        (ids,),
    ).fetchone()["n"]
    completed = sum(1 for r in rows if r["status"] == "completed")
    if found != count or completed != count:
        problems.append(f"wrong secret: {found} of {count} e-mails found by reconciliation, {completed} jobs completed")
    if outages(during, "document_jobs_outage") != 1:
        problems.append(f"wrong secret: {outages(during, 'document_jobs_outage')} webhooks_missing alerts, expected 1")
    if fixed != 200 or outages(after, "document_jobs_recovered") != 1:
        problems.append(f"wrong secret: the fixed webhook answered {fixed}, "
                        f"{outages(after, 'document_jobs_recovered')} recovery alerts, expected 1")  # fmt: skip
    problems += _stored_as_the_provider_serves(conn, env, emails)
    return problems, {
        "wrong secret: e-mails": count,
        "wrong secret: deliveries refused (401), of 8 each": answers.get(401, 0),
        "wrong secret: e-mails found by reconciliation": found,
        "wrong secret: jobs completed": completed,
        "wrong secret: webhooks_missing alerts": outages(during, "document_jobs_outage"),
        "wrong secret: recovery alerts": outages(after, "document_jobs_recovered"),
    }


def lying_lengths(conn: psycopg.Connection[Any], env: dict[str, str], count: int) -> tuple[list[str], dict[str, Any]]:
    emails = [inbound.add_email(env["RESEND_API_URL"], attachments=2) for _ in range(count)]
    ids = [data["email_id"] for data in emails]
    for n, data in enumerate(emails):
        lie = {"kind": "short_body", "length": 20} if n % 2 == 0 else {"kind": "long_length", "length": 100}
        _control(env, "faults", lie | {"target": "download", "count": 1, "email_id": data["email_id"]})
    answers = _deliver(env, emails)
    rows = _until(conn, ids, lambda rows: len(rows) == count and all(r["status"] == "completed" for r in rows),
                  lambda: conn.execute("select invoke_document_jobs()"))  # fmt: skip
    problems = [f"lying lengths: e-mail {r['provider_email_id']}: job {r['status']}" for r in rows
                if r["status"] != "completed"]  # fmt: skip
    problems += _stored_as_the_provider_serves(conn, env, emails)
    # From the attempts, not the job's last error: the retry lists the e-mail again, and a release
    # for the rate limit on the way (5 requests a second) would be the last error named.
    attempts = conn.execute(
        """select e.provider_email_id, array_agg(a.outcome || ' ' || coalesce(a.error_code, '')
                                                  order by a.generation) as attempts
             from document_job_attempts a join document_jobs j on j.id = a.job_id
             join fax_received_emails e on e.id = j.fax_received_email_id
            where e.provider_email_id = any(%s) and j.kind = 'fetch_email' group by 1""",
        (ids,),
    ).fetchall()
    retried = sum(1 for r in attempts if "retried download_failed" in r["attempts"])
    if retried != count:
        problems.append(f"lying lengths: {retried} of {count} jobs retried for their download (download_failed): "
                        + "; ".join(f"{r['provider_email_id']}: {r['attempts']}" for r in attempts
                                    if "retried download_failed" not in r["attempts"]))  # fmt: skip
    return problems, {
        "lying lengths: e-mails": count,
        "lying lengths: webhook answers 200": answers.count(200),
        "lying lengths: downloads that lied (shorter, longer)": f"{(count + 1) // 2}, {count // 2}",
        "lying lengths: jobs retried (download_failed)": retried,
        "lying lengths: jobs completed with the provider's bytes": sum(1 for r in rows if r["status"] == "completed"),
    }


def run_all(conn: psycopg.Connection[Any], env: dict[str, str], count: int) -> tuple[list[str], dict[str, Any]]:
    """The three phases; their problems and figures. Without the main run's random faults (slow answers,
    dropped database calls), so that what each phase shows is its own fault's doing."""
    httpx.delete(f"{env['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    httpx.post(f"{env['SUPABASE_URL']}/_control/faults", json={"rpcs": [], "probability": 0}, timeout=10)
    chat = demo.start_chat_webhook()
    stack.store_vault_secret(conn, stack.ALERT_URL_SECRET, chat.url)
    problems, figures = deleted_key(conn, env, count, chat)
    missing, webhooks = wrong_secret(conn, env, count, chat)
    more, lying = lying_lengths(conn, env, count)
    return problems + missing + more, figures | webhooks | lying
