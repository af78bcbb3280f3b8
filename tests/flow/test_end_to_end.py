"""The whole flow over real processes: signed webhooks into the function host, record_inbound_email,
the pg_net kick through the dispatcher, the worker, the Resend sample provider, Storage."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from devstack import stack
from devstack.standins.function_host import FunctionHost
from devstack.tools import inbound
from devstack.vercel_build import Build
from tests.support.database import connect
from tests.support.webhooks import WAIT_S, deliver


def wait_until(condition, timeout_s: float = WAIT_S, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def statuses(db) -> list[str]:
    return [row["status"] for row in db.execute("select status from document_jobs order by status").fetchall()]


def done(faxes: int) -> list[str]:
    """The statuses of `faxes` faxes each fetched and then prepared (its fetch_email job, then the
    prepare_fax job the fetch's completion enqueued)."""
    return ["completed"] * 2 * faxes


def count_kind(db, kind: str) -> int:
    return db.execute("select count(*) as n from document_jobs where kind = %s", (kind,)).fetchone()["n"]


def count(db, table: str) -> int:
    return db.execute(f"select count(*) as n from {table}").fetchone()["n"]


def stored_files(env: dict[str, str]) -> list[Path]:
    """The stored attachments (the prepare_fax job's derived files live beside them, under fax_views/;
    each e-mail's raw message in its own raw/ folder)."""
    root = Path(env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments" / "fax_received_emails"
    files = root.rglob("*") if root.exists() else []
    return [p for p in files if p.is_file() and not p.name.endswith("#meta.json") and p.parent.name != "raw"]


def test_webhooks_are_recorded_kicked_and_fetched_into_storage(db, env) -> None:
    emails = [inbound.add_email(env["RESEND_API_URL"], attachments=2 + n % 3) for n in range(6)]

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda data: deliver(env, data), emails))

    assert [a.status_code for a in answers] == [200] * 6
    assert {a.json()["duplicate"] for a in answers} == {False}
    wait_until(lambda: statuses(db) == done(6), what="every fax fetched and prepared through the kick")
    expected = sorted((e["email_id"], a["id"], a["filename"]) for e in emails for a in e["attachments"])
    stored = db.execute(
        """select e.provider_email_id, a.provider_attachment_id, a.filename
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id"""
    ).fetchall()
    assert sorted((r["provider_email_id"], r["provider_attachment_id"], r["filename"]) for r in stored) == expected
    assert len(stored_files(env)) == len(expected)
    assert all(p.read_bytes().startswith(b"%PDF-") for p in stored_files(env))


def test_the_whole_flow_with_a_projects_legacy_service_role_key(db, stack_env, tmp_path) -> None:
    """A project that has not migrated: only SUPABASE_SERVICE_ROLE_KEY (the legacy JWT) is set."""
    legacy = {name: value for name, value in stack_env.items() if name != "SUPABASE_SECRET_KEY"}
    legacy["SUPABASE_SERVICE_ROLE_KEY"] = stack_env["DEVSTACK_LEGACY_SERVICE_ROLE_KEY"]
    with open(tmp_path / "host.log", "wb") as log:
        host = FunctionHost(Build(Path(stack_env["DEVSTACK_VERCEL_BUILD"])), legacy, tmp_path, log=log)
        threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{host.server_address[1]}"
            with connect(stack_env["DATABASE_URL"]) as operator:  # the kick goes to this deployment
                stack.store_vault_secrets(operator, {**legacy, "FUNCTIONS_URL": url})
            emails = [inbound.add_email(stack_env["RESEND_API_URL"], attachments=2) for _ in range(3)]
            for data in emails:
                body = inbound.event(data)
                answer = inbound.deliver(url, body, inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body))
                assert answer.status_code == 200, answer.text
            wait_until(lambda: statuses(db) == done(3), what="every job completed with the legacy key")
        finally:
            host.shutdown()
            host.stop_instances()
    assert count(db, "fax_received_email_attachments") == 6 == len(stored_files(stack_env))
    assert '"supabase_key_chosen"' not in (tmp_path / "host.log").read_text()  # one key: nothing to choose


def test_a_redelivered_webhook_creates_nothing_new(db, env) -> None:
    data = inbound.add_email(env["RESEND_API_URL"])

    first = deliver(env, data, msg_id="msg_redelivered")
    again = deliver(env, data, msg_id="msg_redelivered")

    assert (first.status_code, again.status_code) == (200, 200)
    assert (first.json()["duplicate"], again.json()["duplicate"]) == (False, True)
    assert again.json()["fax_received_email_id"] == first.json()["fax_received_email_id"]
    assert again.json()["job_id"] == first.json()["job_id"]
    assert (count(db, "fax_received_emails"), count_kind(db, "fetch_email")) == (1, 1)
    wait_until(lambda: statuses(db) == done(1), what="the job completed, and the fax prepared")


@pytest.mark.slow  # stops and restarts the stack's database
def test_a_webhook_while_the_database_is_down_gets_500_and_its_redelivery_is_processed(db, env) -> None:
    # The restart ends every connection, the test's own included: it reconnects afterwards.
    data = inbound.add_email(env["RESEND_API_URL"])
    database = stack.attach(env["DEVSTACK_FOLDER"]).database
    database.stop_server()
    try:
        down = deliver(env, data, msg_id="msg_during_outage")
    finally:
        database.start_server()

    assert (down.status_code, down.json()["error"]) == (500, "not_recorded")
    # Resend redelivers with backoff until it gets a 2xx.
    answers = []
    wait_until(lambda: answers.append(deliver(env, data, msg_id="msg_during_outage")) or answers[-1].status_code == 200,
               what="a redelivery accepted after the database came back")  # fmt: skip
    assert answers[-1].json()["duplicate"] is False, "the failed delivery recorded nothing"
    with connect(env["DATABASE_URL"]) as again:
        wait_until(lambda: statuses(again) == done(1), what="the redelivered e-mail processed")


SVIX_WAITS_S = 15  # for an answer, then it counts the delivery failed and retries (docs: Svix)


def calls_of(admin, function: str, waiting_for_a_lock: bool = False) -> int:
    """The database sessions still in a call of `function` (not idle: its transaction not ended)."""
    return admin.execute(
        "select count(*) as n from pg_stat_activity where query like %s and state <> 'idle'"
        " and (not %s or wait_event_type = 'Lock')",
        (f"%{function}%", waiting_for_a_lock),
    ).fetchone()["n"]


def test_a_database_stalled_past_the_webhooks_deadline_gets_500_before_svix_gives_up(db, admin, stack_env) -> None:
    # A real stall: record_inbound_email waits on a lock the test holds for as long as it likes.
    # Without the webhook's deadline the function would wait for the database client's 20 s read
    # timeout, and this client (as Svix, 15 s) would give up first.
    functions = stack_env["FUNCTIONS_URL"]
    ignored = inbound.event({"email_id": "em_warm"}, event_type="email.sent")  # a warm instance: no cold start
    warm = inbound.deliver(functions, ignored, inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], ignored))
    assert warm.status_code == 200
    body = inbound.event({"email_id": "em_stalled", "subject": "stalled"})
    headers = inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body, "msg_stalled")
    with admin.transaction():
        admin.execute("lock table public.fax_received_emails in share mode")  # reads go on, inserts wait
        stalled = httpx.post(f"{functions}/api/webhooks/resend", content=body, headers=headers, timeout=SVIX_WAITS_S)
        assert calls_of(admin, "record_inbound_email", waiting_for_a_lock=True) == 1, "the call reached the database"

    assert (stalled.status_code, stalled.json()["error"]) == (500, "not_recorded")
    # The call the webhook gave up on may still commit once the lock is gone: harmless, the
    # redelivery (same svix-id, same e-mail id) finds it and creates nothing twice.
    wait_until(lambda: calls_of(admin, "record_inbound_email") == 0, what="the stalled call to end")
    late = count(db, "fax_received_emails")
    again = deliver(stack_env, {"email_id": "em_stalled", "subject": "stalled"}, msg_id="msg_stalled")
    assert (again.status_code, again.json()["duplicate"]) == (200, late == 1)
    assert (count(db, "fax_received_emails"), count(db, "document_jobs")) == (1, 1)


def test_a_webhook_with_text_postgres_cannot_store_is_recorded_and_says_so(db, stack_env) -> None:
    # No Vault secrets: the e-mail is recorded and its job queued, no worker called.
    data = {"email_id": "em_\x00nul", "from": "fax@example.jp", "to": ["faxes@example.com"],
            "subject": "FAX\x00\ud800", "attachments": [{"id": "att_1", "filename": "請求書\x00.pdf"}]}  # fmt: skip

    answers = [deliver(stack_env, data, msg_id="msg_nul") for _ in range(2)]

    assert [(a.status_code, a.json()["duplicate"]) for a in answers] == [(200, False), (200, True)]
    row = db.execute("select provider_email_id, subject, data from fax_received_emails").fetchone()
    assert row["provider_email_id"] == "em_\ufffdnul\ufffdsha256:" + hashlib.sha256(b"em_\x00nul").hexdigest()
    assert (row["data"]["email_id"], row["subject"]) == ("em_\ufffdnul", "FAX\ufffd\ufffd")
    assert row["data"]["attachments"][0]["filename"] == "請求書\ufffd.pdf"
    assert row["data"]["_document_jobs_replaced_text"] == ["/email_id", "/subject", "/attachments/0/filename"]
    assert statuses(db) == ["queued"]


def test_two_email_ids_that_differ_only_in_text_postgres_cannot_store_are_two_emails(db, stack_env) -> None:
    # "a\u0000b" made storable must not become "a\ufffdb", another e-mail's id (lib/storable.py storable_id).
    deliveries = [({"email_id": "a\x00b", "subject": "first"}, "msg_nul_1"),
                  ({"email_id": "a\ufffdb", "subject": "second"}, "msg_nul_2")]  # fmt: skip

    first = [deliver(stack_env, data, msg_id=msg_id) for data, msg_id in deliveries]
    again = [deliver(stack_env, data, msg_id=msg_id) for data, msg_id in deliveries]

    assert [(a.status_code, a.json()["duplicate"]) for a in first] == [(200, False), (200, False)]
    assert [(a.status_code, a.json()["duplicate"]) for a in again] == [(200, True), (200, True)]
    assert [a.json()["fax_received_email_id"] for a in again] == [a.json()["fax_received_email_id"] for a in first]
    rows = db.execute("select subject, data ->> 'email_id' as email_id from fax_received_emails order by subject")
    assert [(r["subject"], r["email_id"]) for r in rows] == [("first", "a\ufffdb"), ("second", "a\ufffdb")]
    jobs = db.execute("select distinct fax_received_email_id from document_jobs").fetchall()
    assert {j["fax_received_email_id"] for j in jobs} == {uuid.UUID(a.json()["fax_received_email_id"]) for a in first}
    assert statuses(db) == ["queued", "queued"]


@pytest.mark.slow  # stops and restarts the stack's database
def test_the_worker_answers_503_while_the_database_is_down(db, stack_env) -> None:
    import httpx

    database = stack.attach(stack_env["DEVSTACK_FOLDER"]).database
    database.stop_server()
    try:
        answer = httpx.post(stack_env["FUNCTIONS_URL"] + "/api/internal/document-jobs", json={}, timeout=60,
                            headers={"Authorization": f"Bearer {stack_env['INTERNAL_FUNCTION_SECRET']}"})  # fmt: skip
    finally:
        database.start_server()

    # What pg_net would record in net._http_response: the outage, not a success.
    assert answer.status_code == 503
    assert (answer.json()["claimed"], answer.json()["stopped_because"]) == (0, "database_error")
    assert stack_env["INTERNAL_FUNCTION_SECRET"] not in answer.text


def test_a_lost_kick_is_made_up_for_by_the_cron_entry_point(db, admin, env) -> None:
    # The cron job's command, called here rather than waited for: tests/database/test_cron.py shows that
    # pg_cron really runs it every minute.
    running = stack.attach(env["DEVSTACK_FOLDER"])
    running.stop_process("pg_net_dispatcher")
    try:
        answer = deliver(env, inbound.add_email(env["RESEND_API_URL"]))
        assert answer.status_code == 200
        lost = admin.execute("delete from net.http_request_queue returning id").fetchall()
        assert len(lost) == 1, "the kick was queued, and is now lost"
    finally:
        running.start_process("pg_net_dispatcher")

    assert db.execute("select public.invoke_document_jobs() as posts").fetchone()["posts"] == 1
    wait_until(lambda: statuses(db) == done(1), what="the worker called by invoke_document_jobs")


def stale_headers(env: dict[str, str], body: bytes) -> dict[str, str]:
    return inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body, at=datetime.now(UTC) - timedelta(minutes=10))


BAD_DELIVERIES = {
    "bad signature": (lambda env, body: inbound.signed_headers("whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==", body),
                      None, 401, "invalid_signature"),
    "stale timestamp": (stale_headers, None, 401, "invalid_signature"),
    "malformed JSON": (None, b'{"type": "email.received", "data": ', 400, "malformed_json"),
    "missing email_id": (None, b'{"type": "email.received", "data": {"from": "x@example.jp"}}', 400,
                         "missing_email_id"),
    "oversized body": (None, json.dumps({"type": "email.received", "data": {"email_id": "em_big",
                                                                            "pad": "x" * 1_100_000}}).encode(),
                       413, "body_too_large"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_DELIVERIES)
def test_bad_deliveries_get_their_answer_and_record_nothing(db, env, case) -> None:
    make_headers, body, status, code = BAD_DELIVERIES[case]
    body = body or inbound.event({"email_id": "em_bad"})
    headers = (make_headers or (lambda env, body: inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body)))(
        env, body
    )

    answer = inbound.deliver(env["FUNCTIONS_URL"], body, headers)

    assert (answer.status_code, answer.json()["error"]) == (status, code)
    assert env["RESEND_WEBHOOK_SECRET"] not in answer.text
    assert (count(db, "fax_received_emails"), count(db, "document_jobs")) == (0, 0)


def test_get_is_refused(db, env) -> None:
    import httpx

    answer = httpx.get(env["FUNCTIONS_URL"] + "/api/webhooks/resend")
    assert (answer.status_code, answer.json()) == (405, {"error": "method_not_allowed"})
