"""Failure alerts and outage alerts, over the local stack: the pg_net dispatcher really POSTs them
to a receiver on loopback, only after commit. Requests go out in order, so once a marker POST
sent after the transition has arrived, an alert that was not sent before it never will be."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta

import psycopg
import pytest

from tests.receiver import Received, Receiver, receiver
from tests.test_invoke import SECRET, store_secrets

ALERT_PATH = "/hooks/alerts"
STRAGGLER_S = 1.0  # a margin for ordering only: no assertion is about time
EMAIL = {"from": "Tanaka <fax@example.jp>", "subject": "注文書 <!channel> & more", "created_at": "2026-11-30T08:15:00Z"}


def store_alert_url(conn: psycopg.Connection, url: str) -> None:
    conn.execute("set role postgres")
    conn.execute("select vault.create_secret(%s, 'document_jobs_alert_url')", (url,))
    conn.execute("set role service_role")


def new_job(db: psycopg.Connection, email_id: str = "em_alert") -> dict:
    """An e-mail with its job, claimed: what a worker holds."""
    db.execute("select * from record_inbound_email(%s, 'msg_1', %s)", (email_id, json.dumps(EMAIL)))
    [job] = db.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    return job


def received_until_marker(conn: psycopg.Connection, hook: Receiver) -> list[Received]:
    """Every alert request sent so far. The dispatcher sends requests in order but on concurrent threads:
    once a marker POST queued after them has arrived, and a moment more, every earlier one has."""
    conn.execute("select net.http_post(%s, timeout_milliseconds => 5000)", (hook.url + "/marker",))
    got = []
    while (request := hook.get()).path != "/marker":
        got.append(request)
    time.sleep(STRAGGLER_S)
    return got + [r for r in hook.drain() if r.path != "/marker"]


def alerts_until_marker(conn: psycopg.Connection, hook: Receiver, event: str | None = None) -> list[dict]:
    """The alerts' bodies; only those of one event when named (the every-minute health check runs
    in the background, and a test about failed jobs is not about it)."""
    bodies = [json.loads(r.body) for r in received_until_marker(conn, hook)]
    return [body for body in bodies if event is None or body["event"] == event]


def failure_alerts(conn: psycopg.Connection, hook: Receiver) -> list[dict]:
    return alerts_until_marker(conn, hook, "document_job_failed")


@pytest.fixture
def hook(db):
    with receiver() as alerts:
        store_alert_url(db, alerts.url + ALERT_PATH)
        yield alerts


def test_a_permanent_failure_alerts_once_with_what_the_operator_needs(db, hook) -> None:
    with receiver() as worker:
        store_secrets(db, worker.url + "/api/internal/document-jobs")  # in Vault: must not reach the alert
        job = new_job(db)
        assert (
            db.execute(
                "select fail_document_job(%s, %s, 'resend_not_found', 'Resend: HTTP 404 not_found',"
                " p_retryable => false)",
                (job["id"], job["generation"]),
            ).fetchone()["fail_document_job"]
            == "failed"
        )

        [request] = [r for r in received_until_marker(db, hook) if json.loads(r.body)["event"] == "document_job_failed"]
    alert = json.loads(request.body)

    assert (request.path, request.headers["content-type"]) == (ALERT_PATH, "application/json")
    assert alert["event"] == "document_job_failed"
    assert alert["job"]["id"] == str(job["id"]) and alert["job"]["status"] == "failed"
    assert alert["attempts"] == 1 and alert["job"]["max_attempts"] == 5
    assert alert["error"] == {"code": "resend_not_found", "message": "Resend: HTTP 404 not_found"}
    assert (alert["email"]["from"], alert["email"]["subject"]) == (EMAIL["from"], EMAIL["subject"])
    assert alert["email"]["received_at"].startswith("2026-11-30T08:15:00")
    assert alert["retry_command"] == f"python -m lib.admin retry {job['id']}"
    text = alert["text"]
    assert str(job["id"]) in text and "resend_not_found" in text and alert["retry_command"] in text
    assert "注文書 &lt;!channel&gt; &amp; more" in text, "a subject cannot mention a whole chat channel"
    assert "2026-11-30T08:15:00Z" in text
    assert SECRET not in request.body.decode()


def test_attempts_used_up_lease_expired_and_cancelled_each_alert(db, hook) -> None:
    job = new_job(db, "em_used_up")
    db.execute("update document_jobs set attempts = max_attempts where id = %s", (job["id"],))
    db.execute("select fail_document_job(%s, %s, 'resend_unavailable', 'HTTP 503')", (job["id"], job["generation"]))
    swept = new_job(db, "em_swept")
    db.execute(
        "update document_jobs set attempts = max_attempts, lease_until = now() - interval '1 second' where id = %s",
        (swept["id"],),
    )
    db.execute("select invoke_document_jobs()")  # the cron's sweep
    db.execute("select * from record_inbound_email('em_cancelled', 'msg_1', '{}')")
    db.execute("select cancel_document_job(id, 'duplicate fax') from document_jobs where status = 'queued'")

    alerts = failure_alerts(db, hook)

    assert sorted(a["error"]["code"] for a in alerts) == ["cancelled", "lease_expired", "resend_unavailable"]
    assert {a["attempts"] for a in alerts if a["error"]["code"] != "cancelled"} == {5}


def test_a_retried_or_redelivered_job_that_completes_alerts_nothing(db, hook) -> None:
    job = new_job(db)
    db.execute("select * from record_inbound_email('em_alert', 'msg_1', %s)", (json.dumps(EMAIL),))  # redelivered
    db.execute("select fail_document_job(%s, %s, 'resend_unavailable', 'HTTP 503')", (job["id"], job["generation"]))
    db.execute("update document_jobs set run_after = now() where id = %s", (job["id"],))
    [again] = db.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    db.execute("select release_document_job(%s, %s, '0 seconds', 'time_budget', 'out of time')",
               (again["id"], again["generation"]))  # fmt: skip
    [last] = db.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    assert db.execute("select complete_document_job(%s, %s) as ok", (last["id"], last["generation"])).fetchone()["ok"]

    assert failure_alerts(db, hook) == []
    history = db.execute("select outcome from document_job_attempts order by generation").fetchall()
    assert [row["outcome"] for row in history] == ["retried", "released", "completed"]


def test_a_rolled_back_failure_sends_nothing(db, hook) -> None:
    job = new_job(db)
    with db.transaction(force_rollback=True):
        db.execute("select fail_document_job(%s, %s, 'resend_not_found', p_retryable => false)",
                   (job["id"], job["generation"]))  # fmt: skip
        assert db.execute("select status from document_jobs").fetchone()["status"] == "failed"

    assert failure_alerts(db, hook) == []
    assert db.execute("select status from document_jobs").fetchone()["status"] == "running"
    assert db.execute("select count(*) as n from document_job_attempts").fetchone()["n"] == 0


def test_no_alert_url_sends_nothing_and_warns_once(db) -> None:
    warnings: list[str] = []
    db.add_notice_handler(
        lambda n: warnings.append(n.message_primary) if n.severity_nonlocalized == "WARNING" else None
    )
    with receiver() as anywhere:
        job = new_job(db)
        db.execute("select fail_document_job(%s, %s, 'resend_not_found', p_retryable => false)",
                   (job["id"], job["generation"]))  # fmt: skip
        assert received_until_marker(db, anywhere) == []
    alert_warnings = [w for w in warnings if "alert" in w]  # the kick warns too: no worker URL either
    assert len(alert_warnings) == 1
    assert "document_jobs_alert_url" in alert_warnings[0] and str(job["id"]) in alert_warnings[0]


# --- outages ------------------------------------------------------------------------------------


def check_health(db: psycopg.Connection) -> int:
    """What the every-minute cron job document-jobs-health runs (as postgres, its owner)."""
    db.execute("set role postgres")
    try:
        return db.execute("select document_jobs_internal.check_health() as n").fetchone()["n"]
    finally:
        db.execute("set role service_role")


def as_postgres(db: psycopg.Connection, query: str, params: tuple = ()) -> list[dict]:
    db.execute("set role postgres")
    try:
        return db.execute(query, params).fetchall()
    finally:
        db.execute("set role service_role")


def wait_for_answers(db: psycopg.Connection, until: Callable[[list[int | None]], bool]) -> list[int | None]:
    """The worker's answers in net._http_response (not the alerts' nor the markers'), once `until` holds.
    The every-minute cron may call the worker too: tests ask for what they caused, not for a count."""
    deadline = time.monotonic() + 60
    query = """select r.status_code from net._http_response r
                 join document_jobs_internal.worker_requests w on w.request_id = r.id order by r.id"""
    while not until(answers := [row["status_code"] for row in as_postgres(db, query)]):
        assert time.monotonic() < deadline, f"the worker's answers were recorded in net._http_response: {answers}"
        time.sleep(0.1)
    return answers


def test_a_secret_mismatch_alerts_within_two_ticks_once_an_hour_and_recovery_once(db, stack_env) -> None:
    """Vault holds another secret than the worker's INTERNAL_FUNCTION_SECRET: every call is a 401."""
    worker_url = stack_env["FUNCTIONS_URL"] + "/api/internal/document-jobs"
    with receiver() as hook:
        store_alert_url(db, hook.url + ALERT_PATH)
        store_secrets(db, worker_url, "not-the-secret-the-worker-has")
        db.execute("insert into document_jobs (kind) values ('fetch_email')")  # claimable, target-less

        check_health(db)  # tick 1: the check finds nothing yet ...
        assert db.execute("select invoke_document_jobs() as n").fetchone()["n"] == 1  # ... and the worker is called
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 1)) == {401}
        check_health(db)  # tick 2 (the cron may have run it already: either way, one alert)

        [alert] = alerts_until_marker(db, hook)
        assert (alert["event"], alert["cause"]) == ("document_jobs_outage", "worker_unauthorized")
        assert "internal_function_secret" in alert["text"] and "INTERNAL_FUNCTION_SECRET" in alert["text"]
        assert stack_env["INTERNAL_FUNCTION_SECRET"] not in json.dumps(alert)
        assert "not-the-secret-the-worker-has" not in json.dumps(alert)

        db.execute("select invoke_document_jobs()")  # the next minutes: still 401, no second alert
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 2)) == {401}
        check_health(db)
        assert alerts_until_marker(db, hook) == []

        # An hour later, still broken: reminded once.
        as_postgres(db, "update document_jobs_internal.outages set alerted_at = alerted_at - %s, since = since - %s"
                        " where cause = 'worker_unauthorized' returning cause",
                    (timedelta(minutes=61), timedelta(minutes=61)))  # fmt: skip
        check_health(db)
        check_health(db)
        assert [a["cause"] for a in alerts_until_marker(db, hook)] == ["worker_unauthorized"]

        # The operator stores the right secret: the next call is answered 200, and recovery is told once.
        # Called with nothing to claim (a claimed job could fail and alert on its own), it answers 200.
        db.execute("update document_jobs set run_after = now() + interval '1 hour'")
        as_postgres(db, "select vault.update_secret(id, %s) from vault.secrets where name = 'internal_function_secret'",
                    (stack_env["INTERNAL_FUNCTION_SECRET"],))  # fmt: skip
        as_postgres(db, "select document_jobs_internal.post_worker(1)")
        wait_for_answers(db, lambda answers: 200 in answers)
        check_health(db)
        check_health(db)
        [recovered] = alerts_until_marker(db, hook)
        assert (recovered["event"], recovered["cause"]) == ("document_jobs_recovered", "worker_unauthorized")


@pytest.mark.parametrize(
    ("status", "cause", "advice"),
    [(404, "worker_not_found", "document_jobs_url"), (503, "worker_failing", "503")],
)
def test_a_wrong_url_or_a_failing_worker_names_its_cause(db, status, cause, advice) -> None:
    with receiver() as hook, receiver(status) as worker:
        store_alert_url(db, hook.url + ALERT_PATH)
        store_secrets(db, worker.url + "/api/internal/document-jobs")
        db.execute("insert into document_jobs (kind) values ('fetch_email')")
        db.execute("select invoke_document_jobs()")
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 1)) == {status}
        check_health(db)

        alerts = alerts_until_marker(db, hook)
        assert [(a["event"], a["cause"]) for a in alerts] == [("document_jobs_outage", cause)], alerts
        assert advice in alerts[0]["text"]


def test_a_stalled_queue_alerts_and_recovers_once(db) -> None:
    with receiver() as hook:
        store_alert_url(db, hook.url + ALERT_PATH)
        # Nobody calls the worker (no Vault secrets): the oldest job has waited 11 minutes.
        db.execute("insert into document_jobs (kind, run_after) values ('fetch_email', now() - interval '11 minutes')")
        check_health(db)
        check_health(db)
        [alert] = alerts_until_marker(db, hook)
        assert alert["cause"] == "queue_stalled" and "11 min" in alert["text"]
        assert "cron.job_run_details" in alert["text"]

        db.execute("update document_jobs set status = 'completed', finished_at = now()")
        check_health(db)
        check_health(db)
        [recovered] = alerts_until_marker(db, hook)
        assert (recovered["event"], recovered["cause"]) == ("document_jobs_recovered", "queue_stalled")


def test_the_health_check_is_a_cron_job_of_its_own(admin) -> None:
    [job] = admin.execute("select schedule, command from cron.job where jobname = 'document-jobs-health'").fetchall()
    assert job == {"schedule": "* * * * *", "command": "select document_jobs_internal.check_health()"}
