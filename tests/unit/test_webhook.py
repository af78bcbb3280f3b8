"""The webhook over real loopback HTTP, signed by the svix library, with PostgREST answered by respx."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from svix.webhooks import Webhook

from api.webhooks.resend import handler
from lib.budget import Deadline
from lib.webhook import endpoint
from tests.support.peers import ENDLESS_HEAD, stalling_peer
from tests.support.serve import serve
from tests.unit.fake_supabase import KEY, URL

SECRET = "whsec_" + base64.b64encode(b"unit-test-webhook-signing-key-32").decode()
EVENT = {
    "type": "email.received",
    "created_at": "2026-11-29T10:00:00.000Z",
    "data": {"email_id": "em_42", "from": "fax@example.jp", "to": ["faxes@example.com"], "subject": "FAX",
             "attachments": [{"id": "att_1", "filename": "請求書.pdf", "content_type": "application/pdf"}]},
}  # fmt: skip
RECORDED = {
    "fax_received_email_id": "7d3c6a4e-2b1f-4f0e-9a8b-1c2d3e4f5a6b",
    "job_id": "0b9e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
    "duplicate": False,
}


@pytest.fixture
def webhook_url(monkeypatch) -> Iterator[str]:
    for name, value in {"SUPABASE_URL": URL, "SUPABASE_SECRET_KEY": KEY, "RESEND_WEBHOOK_SECRET": SECRET,
                        "WEBHOOK_MAX_BODY_BYTES": "400000"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    with serve(handler) as url:
        yield url + "/api/webhooks/resend"


@pytest.fixture
def record_rpc(router):
    return router.post(f"{URL}/rest/v1/rpc/record_inbound_email").mock(
        return_value=httpx.Response(200, json=[RECORDED])
    )


def signed(body: bytes, msg_id: str = "msg_2Lh9", at: datetime | None = None, secret: str = SECRET) -> dict[str, str]:
    at = at or datetime.now(UTC)
    try:
        signature = Webhook(secret).sign(msg_id, at, body.decode())
    except UnicodeDecodeError:
        # svix signs text. The scheme signs the body's bytes (standardwebhooks.com): by hand, for a
        # body that is not UTF-8.
        key = base64.b64decode(secret.removeprefix("whsec_"))
        mac = hmac.new(key, f"{msg_id}.{int(at.timestamp())}.".encode() + body, hashlib.sha256).digest()
        signature = "v1," + base64.b64encode(mac).decode()
    return {"svix-id": msg_id, "svix-timestamp": str(int(at.timestamp())), "svix-signature": signature}


def post(url: str, body: bytes, headers: dict[str, str], method: str = "POST", timeout: float = 10) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body if method == "POST" else None, method=method,
                                     headers={"Content-Type": "application/json", **headers})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_received_email_is_recorded_in_one_call(webhook_url, record_rpc) -> None:
    body = json.dumps(EVENT, ensure_ascii=False).encode()

    status, answer = post(webhook_url, body, signed(body))

    assert (status, answer) == (200, {"received": True, **RECORDED})
    [call] = record_rpc.calls
    assert json.loads(call.request.content) == {
        "p_provider_email_id": "em_42", "p_webhook_id": "msg_2Lh9", "p_data": EVENT["data"]}  # fmt: skip
    # A secret key goes in apikey only (Supabase's API-key rules); lib/supabase/client.py api_headers.
    assert call.request.headers["apikey"] == KEY
    assert "authorization" not in call.request.headers


def test_any_one_of_several_signatures_may_match(webhook_url, record_rpc) -> None:
    body = json.dumps(EVENT).encode()
    headers = signed(body)
    other = Webhook("whsec_" + base64.b64encode(b"an-old-rotated-out-signing-key!!").decode())
    headers["svix-signature"] = (
        f"{other.sign('msg_2Lh9', datetime.now(UTC), body.decode())} {headers['svix-signature']}"
    )
    assert post(webhook_url, body, headers)[0] == 200


BAD_SIGNATURES = {
    "no headers": lambda body: {},
    "wrong secret": lambda body: signed(body, secret="whsec_" + base64.b64encode(b"x" * 32).decode()),
    "six minutes old": lambda body: signed(body, at=datetime.now(UTC) - timedelta(minutes=6)),
    "six minutes ahead": lambda body: signed(body, at=datetime.now(UTC) + timedelta(minutes=6)),
    "other id": lambda body: signed(body) | {"svix-id": "msg_other"},
    "signature without version": lambda body: signed(body) | {"svix-signature": "bm90LWEtc2lnbmF0dXJl"},
    "signature not base64": lambda body: signed(body) | {"svix-signature": "v1,***"},
    "body changed after signing": lambda body: signed(body.replace(b"em_42", b"em_43")),
}


@pytest.mark.parametrize("case", BAD_SIGNATURES)
def test_a_bad_signature_is_refused_and_nothing_recorded(webhook_url, record_rpc, case) -> None:
    body = json.dumps(EVENT).encode()
    status, answer = post(webhook_url, body, BAD_SIGNATURES[case](body))
    assert (status, answer["error"]) == (401, "invalid_signature")
    assert not record_rpc.called


@pytest.mark.parametrize(
    ("body", "code"),
    [(b"{not json", "malformed_json"),
     (b'["a list"]', "malformed_event"),
     (b'{"type": "email.received"}', "malformed_event"),
     (b'{"type": "email.received", "data": {}}', "missing_email_id"),
     (b'{"type": "email.received", "data": {"email_id": ""}}', "missing_email_id"),
     (b'{"type": "email.received", "data": {"email_id": 42}}', "missing_email_id"),
     # Not JSON, though Python's parser takes them; JavaScript (Resend) never writes them.
     (b'{"type": "email.received", "data": {"email_id": "em", "pages": NaN}}', "malformed_json"),
     (b'{"type": "email.received", "data": {"email_id": "em", "pages": -Infinity}}', "malformed_json"),
     (b'{"type": "email.received", "data": {"email_id": "em", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
      "malformed_json"),
     (b'{"type": "email.received", "data": {"email_id": "em", "subject": "\xff\xfe"}}', "malformed_json")],
    ids=["not json", "a list", "no data", "no email_id", "empty email_id", "email_id not a string", "NaN",
         "Infinity", "nested too deeply", "not UTF-8"],
)  # fmt: skip
def test_a_malformed_event_gets_400_with_a_clear_code(webhook_url, record_rpc, body, code) -> None:
    status, answer = post(webhook_url, body, signed(body))
    assert (status, answer["error"]) == (400, code)
    assert answer["message"]
    assert not record_rpc.called


def test_other_event_types_are_acknowledged_and_ignored(webhook_url, record_rpc) -> None:
    body = json.dumps({"type": "email.delivered", "data": {"email_id": "em_1"}}).encode()
    assert post(webhook_url, body, signed(body)) == (200, {"received": True, "ignored": "email.delivered"})
    assert not record_rpc.called


def test_a_body_over_the_cap_gets_413_unread(webhook_url, record_rpc) -> None:
    body = json.dumps(EVENT | {"padding": "x" * 500_000}).encode()
    status, answer = post(webhook_url, body, signed(body))
    assert (status, answer["error"]) == (413, "body_too_large")
    assert not record_rpc.called


@pytest.mark.parametrize(
    "failure",
    [httpx.Response(503, json={"code": "PGRST001", "message": "Database client error", "details": None, "hint": None}),
     httpx.ConnectError("refused")],
    ids=["database down", "PostgREST unreachable"],
)  # fmt: skip
def test_an_email_that_could_not_be_recorded_gets_500_so_resend_redelivers(webhook_url, router, failure) -> None:
    route = router.post(f"{URL}/rest/v1/rpc/record_inbound_email")
    route.mock(side_effect=failure) if isinstance(failure, Exception) else route.mock(return_value=failure)
    body = json.dumps(EVENT).encode()

    status, answer = post(webhook_url, body, signed(body))

    assert (status, answer["error"]) == (500, "not_recorded")
    assert KEY not in json.dumps(answer) and "Traceback" not in json.dumps(answer)


def test_a_connection_postgrest_lost_is_tried_again_and_the_email_recorded(webhook_url, router, record_rpc) -> None:
    # After a database restart the first call through a pooled connection gets PGRST001 from
    # PostgREST; record_inbound_email is idempotent, so the webhook calls it again.
    lost = httpx.Response(503, json={"code": "PGRST001", "message": "Database client error", "details": None,
                                     "hint": None}, headers={"Retry-After": "1"})  # fmt: skip
    record_rpc.side_effect = [lost, httpx.Response(200, json=[RECORDED])]
    body = json.dumps(EVENT).encode()

    status, answer = post(webhook_url, body, signed(body))

    assert (status, answer["received"]) == (200, True)
    assert record_rpc.call_count == 2


SVIX_WAITS_S = 15  # for an answer, then it counts the delivery failed and retries (docs: Svix)


@pytest.mark.parametrize("trickle", [b"", ENDLESS_HEAD], ids=["never answers", "answers a byte at a time"])
def test_a_stalled_database_gets_a_500_before_svix_gives_up(webhook_url, monkeypatch, caplog, trickle) -> None:
    # The peer stalls until the test ends, far longer than any deadline, each trickled byte well
    # within a per-read timeout: without the deadline the answer would come after the 20 s read
    # timeout, or never, and the client below would give up first. A short deadline keeps it quick;
    # the one the webhook uses is pinned by the next test.
    monkeypatch.setattr(endpoint, "DEADLINE", timedelta(seconds=1))
    body = json.dumps(EVENT).encode()
    with stalling_peer(trickle=trickle) as database:
        monkeypatch.setenv("SUPABASE_URL", database)
        status, answer = post(webhook_url, body, signed(body), timeout=SVIX_WAITS_S)

    assert (status, answer["error"]) == (500, "not_recorded")
    [logged] = [json.loads(r.getMessage()) for r in caplog.records if "email_not_recorded" in r.getMessage()]
    assert (logged["message"], logged["deadline_passed"]) == ("unreachable (ReadTimeout)", True)


def test_the_database_call_gets_the_webhooks_deadline_from_the_requests_start(webhook_url, record_rpc, monkeypatch):
    given: list[Deadline] = []
    monkeypatch.setattr(endpoint, "deadline_client", lambda deadline: given.append(deadline) or httpx.Client())
    body = json.dumps(EVENT).encode()

    before = time.monotonic()
    assert post(webhook_url, body, signed(body))[0] == 200
    after = time.monotonic()

    [deadline] = given
    assert before + endpoint.DEADLINE.total_seconds() <= deadline.at <= after + endpoint.DEADLINE.total_seconds()
    assert endpoint.DEADLINE <= timedelta(seconds=10) < timedelta(seconds=SVIX_WAITS_S)


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_other_methods_get_405(webhook_url, method) -> None:
    assert post(webhook_url, b"", {}, method=method) == (405, {"error": "method_not_allowed"})


def test_a_missing_secret_is_a_500_naming_the_variable_in_the_log(webhook_url, monkeypatch, caplog) -> None:
    monkeypatch.delenv("RESEND_WEBHOOK_SECRET")
    body = json.dumps(EVENT).encode()
    assert post(webhook_url, body, signed(body))[0] == 500
    assert "RESEND_WEBHOOK_SECRET" in caplog.text


# Written from PostgreSQL's rules, independently of lib/storable.py: jsonb refuses the escape \u0000
# and lone surrogates, and a body that is not UTF-8 cannot be sent at all.
def postgres_accepts(body: bytes) -> bool:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return "\\u0000" not in text and "\x00" not in text and not re.search(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}", text)


def test_text_postgres_cannot_store_is_replaced_and_the_fact_recorded(webhook_url, record_rpc, caplog) -> None:
    data = {"email_id": "em_\x0042", "from": "fax@example.jp", "subject": "FAX\x00 \ud800受信",
            "headers": {"x-fax\x00id": "a\udfff"},
            "attachments": [{"id": "att_1", "filename": "請求書\x00.pdf",
                             "content_type": "application/pdf"}]}  # fmt: skip
    body = json.dumps({"type": "email.received", "data": data}).encode()  # \u0000, \ud800: as JavaScript writes them

    status, answer = post(webhook_url, body, signed(body))

    assert (status, answer) == (200, {"received": True, **RECORDED})
    [call] = record_rpc.calls
    assert postgres_accepts(call.request.content)
    sent = json.loads(call.request.content)
    # The ids keep their digest (lib/storable.py storable_id): "em_\ufffd42" may be another e-mail's.
    assert sent["p_provider_email_id"] == "em_\ufffd42\ufffdsha256:" + hashlib.sha256(b"em_\x0042").hexdigest()
    assert sent["p_data"] == {
        "email_id": "em_\ufffd42", "from": "fax@example.jp", "subject": "FAX\ufffd \ufffd受信",
        "headers": {"x-fax\ufffdid": "a\ufffd"},
        "attachments": [{"id": "att_1", "filename": "請求書\ufffd.pdf", "content_type": "application/pdf"}],
        "_document_jobs_replaced_text": ["/email_id", "/subject", "/headers/x-fax\ufffdid",
                                         "/attachments/0/filename"],
    }  # fmt: skip
    [replaced] = [json.loads(r.getMessage()) for r in caplog.records if "email_text_replaced" in r.getMessage()]
    assert replaced["replaced"] == sent["p_data"]["_document_jobs_replaced_text"]


def test_email_ids_that_differ_only_in_text_postgres_cannot_store_are_sent_as_two_ids(webhook_url, record_rpc):
    sent = []
    for email_id in ["a\x00b", "a\ufffdb"]:
        body = json.dumps({"type": "email.received", "data": {"email_id": email_id}}).encode()
        assert post(webhook_url, body, signed(body))[0] == 200
        sent.append(record_rpc.calls.last.request.content)
    assert all(postgres_accepts(content) for content in sent)
    first, second = (json.loads(content)["p_provider_email_id"] for content in sent)
    assert second == "a\ufffdb" and first != second


def test_svix_ids_that_differ_only_in_text_postgres_cannot_store_stay_two_ids() -> None:
    # Directly: an HTTP client sends no NUL in a header, and a header decodes as Latin-1 (no U+FFFD).
    first, second = (endpoint.storable(msg_id, {"email_id": "em_1"}).webhook_id for msg_id in ["m\x00", "m\ufffd"])
    assert second == "m\ufffd" and first != second and "\x00" not in first


def test_an_event_without_such_text_is_stored_exactly_as_received(webhook_url, record_rpc) -> None:
    body = json.dumps(EVENT, ensure_ascii=False).encode()
    assert post(webhook_url, body, signed(body))[0] == 200
    assert json.loads(record_rpc.calls.last.request.content)["p_data"] == EVENT["data"]


def test_the_log_names_what_the_database_refused(webhook_url, router, caplog) -> None:
    router.post(f"{URL}/rest/v1/rpc/record_inbound_email").mock(return_value=httpx.Response(400, json={
        "code": "22P05", "message": "unsupported Unicode escape sequence",
        "details": "\\u0000 cannot be converted to text.", "hint": None}))  # fmt: skip
    body = json.dumps(EVENT).encode()

    assert post(webhook_url, body, signed(body))[0] == 500

    [logged] = [json.loads(r.getMessage()) for r in caplog.records if "email_not_recorded" in r.getMessage()]
    assert (logged["code"], logged["message"]) == ("22P05", "unsupported Unicode escape sequence")
    assert KEY not in caplog.text


def raw_post(url: str, head: list[tuple[str, str]], body: bytes | list[bytes] = b"") -> tuple[int, dict]:
    """A POST with exactly these headers (urllib would add a Content-Length), in one write; a
    list body is sent chunked. The answer is read until the server closes the connection."""
    parts = urllib.parse.urlsplit(url)
    if isinstance(body, list):
        body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in body) + b"0\r\n\r\n"
    lines = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}", *(f"{n}: {v}" for n, v in head), "", ""]
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as connection:
        connection.sendall("\r\n".join(lines).encode() + body)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def test_a_chunked_body_gets_411_not_a_signature_failure(webhook_url, record_rpc) -> None:
    body = json.dumps(EVENT).encode()
    head = [*signed(body).items(), ("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")]

    status, answer = raw_post(webhook_url, head, [body[:40], body[40:]])

    assert (status, answer["error"]) == (411, "length_required")
    assert "Content-Length" in answer["message"]
    assert not record_rpc.called


@pytest.mark.parametrize(
    ("length", "status", "code"),
    [(None, 411, "length_required"), ("many", 400, "invalid_content_length"), ("-5", 400, "invalid_content_length"),
     ("1e3", 400, "invalid_content_length")],
    ids=["none", "a word", "negative", "an exponent"],
)  # fmt: skip
def test_a_missing_or_odd_content_length_is_answered_clearly(webhook_url, record_rpc, length, status, code) -> None:
    body = json.dumps(EVENT).encode()
    head = [*signed(body).items(), *([("Content-Length", length)] if length else [])]

    answer = raw_post(webhook_url, head)

    assert (answer[0], answer[1]["error"]) == (status, code)
    assert not record_rpc.called


@pytest.mark.parametrize(
    ("email_id", "words"),
    [("   ", "only whitespace"), ("\t\n\u3000", "only whitespace"), ("e" * 201, "longer than 200 characters")],
    ids=["spaces", "other whitespace", "201 characters"],
)  # fmt: skip
def test_a_blank_or_overlong_email_id_gets_400_saying_which(webhook_url, record_rpc, email_id, words) -> None:
    body = json.dumps({"type": "email.received", "data": {"email_id": email_id}}).encode()
    status, answer = post(webhook_url, body, signed(body))
    assert (status, answer["error"]) == (400, "invalid_email_id")
    assert words in answer["message"]
    assert not record_rpc.called


@pytest.mark.parametrize("email_id", [".", ".."])
def test_an_email_id_a_url_path_would_normalise_away_gets_400(webhook_url, record_rpc, email_id) -> None:
    body = json.dumps({"type": "email.received", "data": {"email_id": email_id}}).encode()
    status, answer = post(webhook_url, body, signed(body))
    assert (status, answer["error"], answer["message"]) == (
        400,
        "invalid_email_id",
        "data.email_id must not be . or ..",
    )
    assert not record_rpc.called


def test_a_body_that_is_not_utf8_is_refused_as_unsigned_unless_its_signature_holds(webhook_url, record_rpc) -> None:
    body = b'{"type": "email.received", "data": {"email_id": "em", "subject": "\x93FAX\x94"}}'  # cp1252 quotes
    assert post(webhook_url, body, signed(body, secret="whsec_" + base64.b64encode(b"x" * 32).decode()))[1] == {
        "error": "invalid_signature", "message": "missing, invalid or expired signature"}  # fmt: skip
    status, answer = post(webhook_url, body, signed(body))
    assert (status, answer["error"]) == (400, "malformed_json"), "signed but not JSON: malformed, not unsigned"
    assert "UTF-8" in answer["message"]


@pytest.mark.parametrize(
    ("number", "kept"),
    [(b"1e400", "1e400"), (b"-1e400", "-1e400"), (b"9" * 5000, "9" * 5000)],
    ids=["beyond a double", "below a double", "5,000 digits"],
)  # fmt: skip
def test_a_number_python_cannot_carry_exactly_is_recorded_as_text(webhook_url, record_rpc, caplog, number, kept):
    body = b'{"type": "email.received", "data": {"email_id": "em_n", "pages": [1, ' + number + b"]}}"
    status, _ = post(webhook_url, body, signed(body))
    assert status == 200
    sent = json.loads(record_rpc.calls.last.request.content)["p_data"]
    assert sent["pages"] == [1, kept]
    assert sent["_document_jobs_numbers_as_text"] == ["/pages/1"]
    assert "email_numbers_kept_as_text" in caplog.text


@pytest.mark.parametrize("created_at", ["now", "infinity", "yesterday", "epoch", "2026-02-30T10:00:00Z", 1764490502,
                                        None, "2026-11-30T08:15:02.000Z"])  # fmt: skip
def test_an_unusable_created_at_is_recorded_with_a_warning_not_refused(webhook_url, record_rpc, caplog, created_at):
    data = {"email_id": "em_t"} | ({} if created_at is None else {"created_at": created_at})
    body = json.dumps({"type": "email.received", "data": data}).encode()
    assert post(webhook_url, body, signed(body))[0] == 200
    assert json.loads(record_rpc.calls.last.request.content)["p_data"] == data, "recorded as received"
    warned = "email_received_at_unusable" in caplog.text
    assert warned == (created_at != "2026-11-30T08:15:02.000Z")


def test_an_email_id_of_200_characters_is_recorded(webhook_url, record_rpc) -> None:
    body = json.dumps({"type": "email.received", "data": {"email_id": "e" * 200}}).encode()
    assert post(webhook_url, body, signed(body))[0] == 200


def request_lines(caplog) -> list[dict]:
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == "document_jobs"]
    return [e for e in logged if e["event"] == "request"]


def test_any_exception_gives_a_json_500_and_one_request_log_line(webhook_url, monkeypatch, caplog) -> None:
    caplog.set_level(logging.INFO)

    def broken(headers, read_body):
        raise RuntimeError(f"a bug, with {KEY} in its message")

    monkeypatch.setattr("lib.webhook.endpoint.handle", broken)
    body = json.dumps(EVENT).encode()

    assert post(webhook_url, body, signed(body)) == (500, {"error": "internal_error"})
    assert [(r["status"], r["error"]) for r in request_lines(caplog)] == [(500, "internal_error")]
    [unhandled] = [json.loads(r.getMessage()) for r in caplog.records if "unhandled_error" in r.getMessage()]
    assert unhandled["error"] == "RuntimeError"
    assert any("broken" in frame for frame in unhandled["where"])
    assert KEY not in caplog.text


@pytest.mark.parametrize(
    ("name", "value"),
    [("SUPABASE_URL", "project.supabase.co"), ("SUPABASE_URL", "https://proj ect.supabase.co"),
     ("RESEND_WEBHOOK_SECRET", "whsec_*not*base64*"), ("WEBHOOK_MAX_BODY_BYTES", "-1")],
)  # fmt: skip
def test_a_malformed_setting_is_a_500_naming_the_variable(webhook_url, record_rpc, monkeypatch, caplog, name, value):
    monkeypatch.setenv(name, value)
    body = json.dumps(EVENT).encode()

    assert post(webhook_url, body, signed(body)) == (
        500, {"error": "misconfigured", "message": "the webhook is not configured"})  # fmt: skip
    assert f"{name} (" in caplog.text
    assert not record_rpc.called
