"""Reconciliation over real processes: e-mails Resend received whose webhook never came are listed
(GET /emails/receiving on the stand-in), recorded through record_inbound_email, fetched into
Storage by their fetch_email jobs; webhooks after or during a run record nothing twice; the
outage webhooks_missing alerts once and closes, and a run after the recovery (the schedule's or
one by hand) pages nobody; a refused key on the listing is released. A run always moves or says
why (the fault layer misbehaving as a listing could): a page that comes again ends it and the next
run starts from the newest page; an unreadable item is set apart, alerts once, and its page is
recorded; a failed run sends no fax failure alert and feeds reconciliation_stalled."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from devstack.tools import inbound
from lib.admin import cli as admin_cli
from tests.support.alerts import alerts_until_marker
from tests.support.database import as_postgres, connect
from tests.support.webhooks import deliver

WAIT_S = 180  # 250 e-mails: their listing, then 250 fetch_email jobs through the shared limiter


def wait_until(condition, timeout_s: float = WAIT_S, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def provider(env: dict[str, str], path: str, body: dict | None = None) -> dict:
    answer = httpx.post(f"{env['RESEND_API_URL']}/_control/{path}", json=body or {}, timeout=10)
    answer.raise_for_status()
    return answer.json()


def listing_requests(env: dict[str, str]) -> int:
    return httpx.get(f"{env['RESEND_API_URL']}/_control/stats", timeout=10).json().get("received", 0)


@pytest.fixture
def resend(env):
    """Resend with no e-mail of an earlier test, no fault, and its rate limit as it was."""
    provider(env, "emails/clear")
    httpx.delete(f"{env['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    yield env
    httpx.delete(f"{env['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    provider(env, "rate_limit", {"per_second": 5})


def fault(env: dict[str, str], body: dict) -> None:
    """A fault of the layer in front of the stand-in (chaos/layer/resend.py), on the received list."""
    httpx.post(f"{env['RESEND_API_URL']}/_control/faults", json={"target": "received"} | body,
               timeout=10).raise_for_status()  # fmt: skip


def status(db) -> dict:
    return db.execute("select document_jobs_reconciliation_status() as s").fetchone()["s"]


def reconciled(db) -> None:
    """A scheduled run, to its end."""
    before = db.execute("select count(*) as n from document_jobs where kind = 'reconcile_emails'").fetchone()["n"]
    assert reconcile(db) is not None
    wait_until(lambda: reconciliation_done(db) and db.execute(
        "select count(*) as n from document_jobs where kind = 'reconcile_emails'").fetchone()["n"] > before,
        what="the reconciliation")  # fmt: skip


def checked(db, check: str) -> None:
    """One of the checks the cron job document-jobs-health runs every minute (as postgres, its
    owner), now. The cron's own run may come first: the tests count the alerts, not the answers."""
    with as_postgres(db):
        db.execute(f"select document_jobs_internal.{check}()")


def causes(db, hook, cause: str) -> list[str]:
    """The events of the alerts sent so far about one cause."""
    return [a["event"] for a in alerts_until_marker(db, hook) if a.get("cause") == cause]


def reconcile(db) -> str | None:
    """What the cron job document-jobs-reconcile runs: a reconcile_emails job, kicked."""
    return db.execute("select enqueue_document_jobs_reconciliation() as id").fetchone()["id"]


def reconciliation_done(db) -> bool:
    row = db.execute("select count(*) filter (where status in ('queued', 'running')) as live, count(*) as n"
                     " from document_jobs where kind = 'reconcile_emails'").fetchone()  # fmt: skip
    return row["n"] > 0 and row["live"] == 0


def fetch_jobs(db) -> dict[str, int]:
    rows = db.execute("select status, count(*) as n from document_jobs where kind = 'fetch_email' group by 1")
    return {r["status"]: r["n"] for r in rows.fetchall()}


def test_250_emails_with_no_webhook_are_recorded_and_stored_after_one_reconciliation(db, resend) -> None:
    provider(resend, "rate_limit", {"per_second": 50})  # the team's limit raised: the test is about pages
    with as_postgres(db):
        db.execute("update document_jobs_rate_limits set requests_per_second = 50 where provider = 'resend'")
    received = inbound.receive_without_webhook(resend["RESEND_API_URL"], count=250, attachments=1, age_seconds=20 * 60)
    [young] = inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=60)
    before = listing_requests(resend)

    assert reconcile(db) is not None
    wait_until(lambda: reconciliation_done(db), what="the reconciliation")
    wait_until(lambda: fetch_jobs(db) == {"completed": 250}, what="every recorded e-mail's attachments stored")

    assert listing_requests(resend) - before == 3, "251 e-mails, 100 a page: three listing requests"
    rows = db.execute("select provider_email_id, found_by, webhook_id from fax_received_emails").fetchall()
    assert sorted(r["provider_email_id"] for r in rows) == sorted(e["email_id"] for e in received)
    assert {(r["found_by"], r["webhook_id"]) for r in rows} == {("reconciliation", None)}
    stored = db.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"]
    assert stored == 250
    status = db.execute("select document_jobs_reconciliation_status() as s").fetchone()["s"]
    assert (status["last_listed"], status["last_recorded"]) == (251, 250), "one, a minute old, waits for its webhook"
    assert young["email_id"] not in {r["provider_email_id"] for r in rows}
    # The screen lists and shows a job without an e-mail row (the reconciliation itself).
    [run] = db.execute("select id from document_jobs where kind = 'reconcile_emails'").fetchall()
    assert db.execute("select document_jobs_admin_job(%s) as j", (run["id"],)).fetchone()["j"]["job"]["kind"] == (
        "reconcile_emails")  # fmt: skip
    listed = db.execute('select document_jobs_admin_jobs(\'{"kind": "reconcile_emails"}\', null, null, 10) as l')
    assert listed.fetchone()["l"]

    # The webhook comes after all: answered duplicate, nothing twice, the mark stays.
    late = deliver(resend, received[0])
    assert (late.status_code, late.json()["duplicate"]) == (200, True)
    assert fetch_jobs(db) == {"completed": 250}
    assert db.execute("select found_by from fax_received_emails where provider_email_id = %s",
                      (received[0]["email_id"],)).fetchone()["found_by"] == "reconciliation"  # fmt: skip


def test_with_nothing_missed_a_run_makes_one_listing_request(db, resend) -> None:
    emails = [inbound.add_email(resend["RESEND_API_URL"], attachments=1) for _ in range(3)]
    assert [deliver(resend, data).status_code for data in emails] == [200] * 3
    wait_until(lambda: fetch_jobs(db) == {"completed": 3}, what="the webhooks' jobs")
    before = listing_requests(resend)

    reconcile(db)
    wait_until(lambda: reconciliation_done(db), what="the reconciliation")

    assert listing_requests(resend) - before == 1
    status = db.execute("select document_jobs_reconciliation_status() as s").fetchone()["s"]
    assert (status["last_listed"], status["last_recorded"]) == (3, 0)
    assert fetch_jobs(db) == {"completed": 3}


def test_a_webhook_during_a_run_records_nothing_twice(db, stack_env) -> None:
    """The run's batch is recorded but not committed when the webhook comes: the webhook waits on
    the e-mail's unique key, then is answered duplicate."""
    db.execute("select enqueue_document_jobs_reconciliation()")
    job = db.execute("select * from claim_document_jobs('reconcile_emails')").fetchone()
    answers: list[dict] = []
    with connect(stack_env["DATABASE_URL"]) as webhook:
        webhook.execute("set role service_role")
        with db.transaction():
            recorded = db.execute(
                "select record_reconciled_emails_v2(%s, %s, jsonb_build_array(%s::jsonb)) as a",
                (job["id"], job["generation"], '{"id": "em_during", "created_at": "2026-12-01 00:00:00+00"}'),
            ).fetchone()["a"]
            assert recorded["recorded_ids"] == ["em_during"]
            thread = threading.Thread(target=lambda: answers.append(webhook.execute(
                "select * from record_inbound_email('em_during', 'msg_during', '{}')").fetchone()))  # fmt: skip
            thread.start()
            time.sleep(0.5)
            assert answers == [], "the webhook waits for the run's transaction"
        thread.join(10)
    assert answers[0]["duplicate"] is True
    rows = db.execute("select found_by, webhook_id from fax_received_emails").fetchall()
    assert rows == [{"found_by": "reconciliation", "webhook_id": None}]
    assert fetch_jobs(db) == {"queued": 1}


def test_webhooks_missing_alerts_once_and_closes_when_a_webhook_delivers(db, resend, hook) -> None:
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=2, attachments=1, age_seconds=20 * 60)
    reconcile(db)
    wait_until(lambda: reconciliation_done(db), what="the reconciliation")
    status = db.execute("select document_jobs_reconciliation_status() as s").fetchone()["s"]
    assert (status["last_recorded"], status["last_late"]) == (2, 2)

    with as_postgres(db):
        for _ in range(3):
            db.execute("select document_jobs_internal.check_webhooks_missing()")
    [down] = alerts_until_marker(db, hook, "document_jobs_outage")
    assert down["cause"] == "webhooks_missing" and "RESEND_WEBHOOK_SECRET" in down["advice"]
    health = db.execute("select document_jobs_health() as h").fetchone()["h"]
    assert [o["cause"] for o in health["outages"]] == ["webhooks_missing"]
    overview = db.execute("select document_jobs_admin_overview() as o").fetchone()["o"]
    assert [o["cause"] for o in overview["outages"]] == ["webhooks_missing"], "the screen's overview shows it"

    fresh = inbound.add_email(resend["RESEND_API_URL"], attachments=1)
    assert deliver(resend, fresh).status_code == 200
    with as_postgres(db):
        db.execute("select document_jobs_internal.check_webhooks_missing()")
    [up] = alerts_until_marker(db, hook, "document_jobs_recovered")
    assert up["cause"] == "webhooks_missing"
    assert db.execute("select document_jobs_health() as h").fetchone()["h"]["outages"] == []


def test_a_refused_key_on_the_listing_releases_the_run(db, resend) -> None:
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1)
    provider(resend, "key", {"deleted": True})
    try:
        reconcile(db)
        wait_until(lambda: db.execute("select count(*) as n from document_job_attempts a join document_jobs j"
                                      " on j.id = a.job_id where j.kind = 'reconcile_emails'").fetchone()["n"] > 0,
                   what="the attempt")  # fmt: skip
        job = db.execute("select status, attempts, last_error_code from document_jobs"
                         " where kind = 'reconcile_emails'").fetchone()  # fmt: skip
        assert job == {"status": "queued", "attempts": 0, "last_error_code": "resend_unauthorized"}
        assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 0
    finally:
        provider(resend, "key", {"deleted": False})


def test_a_429_on_the_listing_releases_the_run_and_spends_no_attempt(db, resend) -> None:
    """Resend's own rate limit (the team's, shared with whatever else uses the key) answers the
    listing 429: the run is released after the Retry-After, with no attempt spent, and lists again."""
    [missed] = inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=20 * 60)
    provider(resend, "rate_limit", {"per_second": 1})
    headers = {"Authorization": f"Bearer {resend['RESEND_API_KEY']}"}
    stop = threading.Event()

    def another_user_of_the_key() -> None:
        # Keeps the team's one request a second taken: the slot is taken again within a request's
        # time of its freeing, so the worker's listing finds it free only by a rare chance.
        with httpx.Client(base_url=resend["RESEND_API_URL"], headers=headers, timeout=5) as client:
            while not stop.is_set():
                client.get("/emails/receiving", params={"limit": 1})

    def attempts() -> list[dict]:
        return db.execute(
            "select a.job_id, a.outcome, a.error_code from document_job_attempts a join document_jobs j on"
            " j.id = a.job_id where j.kind = 'reconcile_emails' order by a.job_id, a.generation"
        ).fetchall()

    def limited() -> list[dict]:
        return [a for a in attempts() if a["error_code"] == "resend_rate_limited"]

    hammer = threading.Thread(target=another_user_of_the_key)
    hammer.start()
    try:
        # The hammer takes the slot again a request's time after it frees; a worker that lists in that
        # gap is answered, and its run completes without a 429. The wider the gap (on a loaded machine
        # the hammer waits for a core), the likelier: a run that completed so is followed by another,
        # as the next scheduled one would, until one is refused.
        reconcile(db)
        deadline = time.monotonic() + 120
        while not limited():
            assert time.monotonic() < deadline, f"timed out waiting for a 429: {attempts()}"
            if reconciliation_done(db):
                reconcile(db)
            time.sleep(0.2)
    finally:
        stop.set()
        hammer.join()
    wait_until(lambda: reconciliation_done(db), 60, "the run after the limit")
    assert {a["outcome"] for a in limited()} == {"released"}
    refused = limited()[0]["job_id"]
    job = db.execute("select status, attempts from document_jobs where id = %s", (refused,)).fetchone()
    assert job == {"status": "completed", "attempts": 1}, "the 429s spent no attempt: only the run that listed"
    recorded = db.execute("select found_by from fax_received_emails where provider_email_id = %s",
                          (missed["email_id"],)).fetchone()  # fmt: skip
    assert recorded == {"found_by": "reconciliation"}


# --- a run always moves or says why -----------------------------------------------------------------


def test_a_page_that_comes_again_ends_the_run_and_the_next_run_lists_from_the_newest_page(db, resend) -> None:
    received = inbound.receive_without_webhook(resend["RESEND_API_URL"], count=150, attachments=1, age_seconds=20 * 60)
    fault(resend, {"kind": "edit_listing", "first_page": True})  # every cursor answered with the newest page
    before = listing_requests(resend)

    reconciled(db)

    assert listing_requests(resend) - before == 2, "the page came again once: no tenth page, no follow-up job"
    said = status(db)
    assert "same page again" in said["last_finding"]
    assert said["watermark"] is None, "the watermark does not pass the pages the run did not list"
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 100

    httpx.delete(f"{resend['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    [newest] = inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=16 * 60)
    reconciled(db)
    rows = db.execute("select provider_email_id from fax_received_emails").fetchall()
    assert sorted(r["provider_email_id"] for r in rows) == sorted(e["email_id"] for e in [*received, newest])
    said = status(db)
    assert (said["last_finding"], said["watermark"] is not None) == (None, True), "the next run starts from the top"


def test_an_unreadable_item_alerts_once_and_the_rest_of_its_page_is_recorded(db, resend, hook) -> None:
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=3, attachments=1, age_seconds=20 * 60)
    fault(resend, {"kind": "edit_listing", "edits": [
        {"index": 1, "set": {"created_at": "Tue, 01 Dec 2026 00:05:00 GMT", "subject": "FAX <b>注文書</b>"}},
        {"index": 2, "unset": ["id"]},
    ]})  # fmt: skip

    reconciled(db)
    job = db.execute("select status, last_error_code from document_jobs where kind = 'reconcile_emails'").fetchone()
    assert job == {"status": "completed", "last_error_code": None}, "the page is not failed for its items"
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 1
    assert [u["reason"] for u in sorted(status(db)["unreadable"], key=lambda u: u["reason"])] == [
        "a created_at that is not a time", "no id"]  # fmt: skip

    checked(db, "check_reconciliation")
    [down] = [
        a for a in alerts_until_marker(db, hook, "document_jobs_outage") if a["cause"] == "reconciliation_unreadable"
    ]
    assert "<b>" not in down["text"], "the sender's text is never a line of the alert"
    reconciled(db)  # listed again by the next run
    checked(db, "check_reconciliation")
    assert causes(db, hook, "reconciliation_unreadable") == [], "noted once: no second alert"
    overview = db.execute("select document_jobs_admin_overview() as o").fetchone()["o"]
    [outage] = overview["outages"]
    shown = {e["item"].get("subject") for e in outage["details"]["emails"]}
    assert "FAX <b>注文書</b>" in shown, "the overview shows what can be read of it"


def test_a_failed_run_sends_no_fax_alert_and_a_stall_alerts_once_until_a_run_completes(db, resend, hook) -> None:
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=20 * 60)
    fault(resend, {"kind": "status", "status": 200, "name": None, "message": "<html>maintenance</html>"})
    reconcile(db)
    wait_until(lambda: db.execute("select status from document_jobs where kind = 'reconcile_emails'").fetchone()[
        "status"] == "failed", what="the failed run")  # fmt: skip
    with as_postgres(db):  # three of its intervals pass
        db.execute("update document_jobs_reconciliation set last_completed_at = now() - interval '31 minutes'")
    checked(db, "check_reconciliation")
    checked(db, "check_reconciliation")
    sent = alerts_until_marker(db, hook)
    [down] = [a for a in sent if a.get("cause") == "reconciliation_stalled"]
    assert down["event"] == "document_jobs_outage" and "resend_malformed_response" in down["text"]
    assert [a for a in sent if a["event"] == "document_job_failed"] == [], "no Fax not fetched for a reconciliation"

    httpx.delete(f"{resend['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    reconciled(db)
    checked(db, "check_reconciliation")
    assert causes(db, hook, "reconciliation_stalled") == ["document_jobs_recovered"]


def test_after_a_recovery_neither_the_scheduled_nor_a_manual_run_pages_again(db, resend, hook, monkeypatch) -> None:
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=2, attachments=1, age_seconds=20 * 60)
    reconciled(db)
    checked(db, "check_webhooks_missing")
    assert deliver(resend, inbound.add_email(resend["RESEND_API_URL"], attachments=1)).status_code == 200
    checked(db, "check_webhooks_missing")  # a webhook came: recovered
    assert causes(db, hook, "webhooks_missing") == ["document_jobs_outage", "document_jobs_recovered"]
    with as_postgres(db):  # two hours pass for the one-alert-an-hour rule: only the fix holds the page
        db.execute("update document_jobs_internal.outages set alerted_at = now() - interval '2 hours'"
                   " where cause = 'webhooks_missing'")  # fmt: skip

    # Received during the outage, found after it: by the schedule's next run ...
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=25 * 60)
    reconciled(db)
    assert status(db)["last_late"] == 1
    checked(db, "check_webhooks_missing")
    # ... and by a run by hand, further back than the schedule reaches.
    inbound.receive_without_webhook(resend["RESEND_API_URL"], count=1, attachments=1, age_seconds=5 * 3600)
    for name in ("SUPABASE_URL", "SUPABASE_SECRET_KEY", "RESEND_API_KEY", "RESEND_API_URL"):
        monkeypatch.setenv(name, resend[name])
    assert admin_cli.main(["reconcile", "--since", "20h", "--as", resend["DEVSTACK_OPERATOR_EMAIL"]]) == 0
    checked(db, "check_webhooks_missing")

    assert causes(db, hook, "webhooks_missing") == [], "nothing sent"
    said = status(db)
    assert said["late_after_close"] == 2, "counted where reconciliation keeps its figures"
    assert db.execute("select document_jobs_health() as h").fetchone()["h"]["outages"] == []
