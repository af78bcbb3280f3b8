"""Structured logs: one JSON line per request and per job outcome, and never a secret, a key or a
signed URL in them."""

from __future__ import annotations

import base64
import json
import logging
import urllib.request
from datetime import UTC, datetime

import httpx
import pytest
from svix.webhooks import Webhook

from api.internal.document_jobs import handler as worker_handler
from api.webhooks.resend import handler as webhook_handler
from tests.support.serve import serve
from tests.unit.fake_supabase import KEY, URL, job_row

INTERNAL = "internal-secret-that-must-not-leak"
RESEND_KEY = "re_key_that_must_not_leak"
WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"webhook-secret-that-must-not-lea").decode()
SIGNED_URL = "https://cdn.resend.test/att_1?signature=SIGNED-URL-SECRET"
SECRETS = [INTERNAL, RESEND_KEY, WEBHOOK_SECRET, KEY, "SIGNED-URL-SECRET", "Bearer"]


@pytest.fixture(autouse=True)
def env(monkeypatch) -> None:
    for name, value in {"INTERNAL_FUNCTION_SECRET": INTERNAL, "SUPABASE_URL": URL, "SUPABASE_SECRET_KEY": KEY,
                        "RESEND_API_KEY": RESEND_KEY, "RESEND_API_URL": "https://resend.test",
                        "RESEND_WEBHOOK_SECRET": WEBHOOK_SECRET}.items():  # fmt: skip
        monkeypatch.setenv(name, value)


def events(caplog: pytest.LogCaptureFixture) -> list[dict]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "document_jobs"]


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_worker_logs_the_request_and_each_job_without_secrets(fake, router, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake.emails["6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10"] = "em_1"
    job = job_row(fax_received_email_id="6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10", attempts=2)
    fake.jobs = [job, job_row(fax_received_email_id="00000000-0000-0000-0000-000000000000")]
    item = {"id": "att_1", "filename": "請求書.pdf", "content_type": "application/pdf", "size": 4,
            "download_url": SIGNED_URL}  # fmt: skip
    router.get("https://resend.test/emails/receiving/em_1/attachments").mock(
        return_value=httpx.Response(200, json={"object": "list", "has_more": False, "data": [item]})
    )
    router.get(SIGNED_URL).mock(return_value=httpx.Response(403))  # expired, twice: a logged failure

    with serve(worker_handler) as base:
        status = post(base + "/api/internal/document_jobs", b"{}", {"Authorization": f"Bearer {INTERNAL}"})
        refused = post(base + "/api/internal/document_jobs", b"{}", {"Authorization": "Bearer wrong"})

    assert (status, refused) == (200, 401)
    logged = events(caplog)
    jobs = [e for e in logged if e["event"] == "job_finished"]
    assert [(j["job_id"], j["generation"], j["kind"], j["attempt"], j["outcome"], j["error_code"]) for j in jobs] == [
        (job["id"], 1, "fetch_email", 2, "retried", "download_expired"),
        (jobs[1]["job_id"], 1, "fetch_email", 1, "failed", "email_not_found"),
    ]
    assert all(isinstance(j["duration_ms"], int) for j in jobs)
    requests = [e for e in logged if e["event"] == "request"]
    assert [(r["path"], r["status"], r["error"]) for r in requests] == [
        ("/api/internal/document_jobs", 200, None),
        ("/api/internal/document_jobs", 401, "unauthorized"),
    ]
    assert not [secret for secret in SECRETS if secret in caplog.text]


def test_the_webhook_logs_one_line_per_request_without_secrets(router, caplog) -> None:
    caplog.set_level(logging.INFO)
    router.post(f"{URL}/rest/v1/rpc/record_inbound_email").mock(
        return_value=httpx.Response(200, json=[{"fax_received_email_id": "e1", "job_id": "j1", "duplicate": False}])
    )
    body = json.dumps({"type": "email.received", "data": {"email_id": "em_9"}}).encode()
    now = datetime.now(UTC)
    headers = {"svix-id": "msg_1", "svix-timestamp": str(int(now.timestamp())),
               "svix-signature": Webhook(WEBHOOK_SECRET).sign("msg_1", now, body.decode())}  # fmt: skip

    with serve(webhook_handler) as base:
        statuses = [post(base + "/api/webhooks/resend", body, headers),
                    post(base + "/api/webhooks/resend?token=abc", body, {})]  # fmt: skip

    assert statuses == [200, 401]
    requests = [e for e in events(caplog) if e["event"] == "request"]
    assert [(r["method"], r["path"], r["status"], r["error"]) for r in requests] == [
        ("POST", "/api/webhooks/resend", 200, None),
        ("POST", "/api/webhooks/resend", 401, "invalid_signature"),
    ]
    assert [e["event"] for e in events(caplog)].count("email_recorded") == 1
    assert not [secret for secret in [*SECRETS, "token=abc"] if secret in caplog.text]


def every_line_is_a_json_event(caplog: pytest.LogCaptureFixture) -> list[dict]:
    """Each record's message as the handler would write it: one JSON object with an event name,
    and no exception left on the record for a handler to render as a traceback."""
    lines = []
    for record in caplog.records:
        [line] = record.getMessage().splitlines()
        lines.append(json.loads(line))
        assert "event" in lines[-1] and record.exc_info is None, line
    return lines


def test_other_libraries_records_and_their_exceptions_become_json_events(caplog) -> None:
    from lib import log

    caplog.set_level(logging.INFO)
    log.configure()  # what both functions do when they are loaded
    try:
        raise KeyError("a message that may quote input")
    except KeyError:
        logging.getLogger("somelibrary").exception("it failed for %s", "reasons")
    logging.getLogger("document_jobs").warning("not JSON by mistake")

    [library, ours] = every_line_is_a_json_event(caplog)
    assert (library["event"], library["logger"], library["level"], library["message"]) == (
        "log", "somelibrary", "error", "it failed for reasons")  # fmt: skip
    assert library["error"] == "KeyError" and library["where"][-1].startswith("test_logs.py:")
    assert "may quote input" not in caplog.text and "Traceback" not in caplog.text
    assert (ours["event"], ours["message"]) == ("log", "not JSON by mistake")


def test_a_bug_in_a_job_and_a_missing_secret_are_json_events(fake, caplog, monkeypatch) -> None:
    from lib.worker import endpoint as worker_endpoint

    caplog.set_level(logging.INFO)
    fake.jobs = [job_row()]
    monkeypatch.setattr("lib.worker.fetch_email.run", lambda job, context, checkpoint: {}["bug"])
    assert worker_endpoint.handle(f"Bearer {INTERNAL}")[0] == 200
    monkeypatch.delenv("INTERNAL_FUNCTION_SECRET")
    assert worker_endpoint.handle(f"Bearer {INTERNAL}")[0] == 401

    logged = every_line_is_a_json_event(caplog)
    [raised] = [e for e in logged if e["event"] == "job_raised"]
    assert (raised["error"], raised["job_id"]) == ("KeyError", fake.claimed and next(iter(fake.claimed)))
    assert [e["event"] for e in logged if e.get("message", "").startswith("INTERNAL_FUNCTION_SECRET")] == [
        "worker_secret_missing"
    ]
