"""The worker's HTTP shell over real loopback HTTP: authentication, methods, the JSON summary."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator

import httpx
import pytest

from api.internal.document_jobs import handler
from tests.support.serve import serve
from tests.unit.fake_supabase import KEY, URL

SECRET = "a-long-random-internal-secret"


@pytest.fixture
def worker_url(monkeypatch) -> Iterator[str]:
    for name, value in {"INTERNAL_FUNCTION_SECRET": SECRET, "SUPABASE_URL": URL, "SUPABASE_SECRET_KEY": KEY,
                        "RESEND_API_KEY": "re_unit", "RESEND_API_URL": "https://resend.test"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    with serve(handler) as url:
        yield url + "/api/internal/document_jobs"


def call(url: str, method: str = "POST", authorization: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"} | ({"Authorization": authorization} if authorization else {})
    request = urllib.request.Request(url, data=b"{}" if method == "POST" else None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-secret", f"Basic {SECRET}", SECRET, "Bearer "])
def test_refuses_a_missing_or_wrong_secret(worker_url, fake, authorization) -> None:
    assert call(worker_url, authorization=authorization) == (401, {"error": "unauthorized"})
    assert fake.calls == [], "nothing is claimed"


def test_runs_an_invocation_with_the_right_secret(worker_url, fake) -> None:
    status, body = call(worker_url, authorization=f"Bearer {SECRET}")
    assert status == 200
    assert (body["claimed"], body["stopped_because"]) == (0, "no_work")
    # Every kind of the registry in one call, in claim order (lib/worker/kinds.py says why).
    assert [(name, body["p_kinds"]) for name, body in fake.calls] == [
        (
            "claim_document_job_of_kinds",
            ["reconcile_emails", "fetch_email", "prepare_fax", "verify_originals", "export_faxes"],
        )
    ]


def test_an_unset_secret_refuses_every_call_and_says_why_in_the_log(worker_url, fake, monkeypatch, caplog) -> None:
    monkeypatch.delenv("INTERNAL_FUNCTION_SECRET")
    assert call(worker_url, authorization="Bearer ") == (401, {"error": "unauthorized"})
    assert call(worker_url, authorization=f"Bearer {SECRET}") == (401, {"error": "unauthorized"})
    assert "INTERNAL_FUNCTION_SECRET is not set" in caplog.text
    assert SECRET not in caplog.text


def test_missing_settings_answer_500_naming_nothing_secret(worker_url, fake, monkeypatch, caplog) -> None:
    monkeypatch.delenv("RESEND_API_KEY")
    assert call(worker_url, authorization=f"Bearer {SECRET}") == (500, {"error": "misconfigured"})
    assert "RESEND_API_KEY" in caplog.text
    assert KEY not in caplog.text


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_other_methods_get_405(worker_url, method) -> None:
    assert call(worker_url, method=method, authorization=f"Bearer {SECRET}") == (405, {"error": "method_not_allowed"})


def test_during_a_rotation_the_previous_secret_is_accepted_too(worker_url, fake, monkeypatch) -> None:
    monkeypatch.setenv("INTERNAL_FUNCTION_SECRET", "the-new-secret")
    monkeypatch.setenv("INTERNAL_FUNCTION_SECRET_PREVIOUS", SECRET)
    assert call(worker_url, authorization="Bearer the-new-secret")[0] == 200
    assert call(worker_url, authorization=f"Bearer {SECRET}")[0] == 200
    assert call(worker_url, authorization="Bearer some-other-secret")[0] == 401


def test_a_previous_secret_alone_opens_nothing(worker_url, fake, monkeypatch) -> None:
    monkeypatch.delenv("INTERNAL_FUNCTION_SECRET")
    monkeypatch.setenv("INTERNAL_FUNCTION_SECRET_PREVIOUS", SECRET)
    assert call(worker_url, authorization=f"Bearer {SECRET}")[0] == 401


def test_a_database_that_cannot_be_reached_answers_503_with_the_summary(worker_url, fake) -> None:
    fake.unreachable_rpcs = {"claim_document_job_of_kinds"}

    status, body = call(worker_url, authorization=f"Bearer {SECRET}")

    # pg_net keeps this status in net._http_response: a 200 would show the outage as a success.
    assert status == 503
    assert (body["claimed"], body["stopped_because"]) == (0, "database_error")


def test_a_database_that_refuses_the_key_answers_503_and_the_log_names_the_settings(worker_url, fake, caplog) -> None:
    # What PostgREST answers a publishable key (role anon) calling the claim: 401, SQLSTATE 42501.
    fake.refused_rpcs["claim_document_job_of_kinds"] = httpx.Response(
        401, json={"code": "42501", "message": "permission denied for function claim_document_job_of_kinds",
                   "details": None, "hint": None})  # fmt: skip
    status, body = call(worker_url, authorization=f"Bearer {SECRET}")
    assert (status, body["stopped_because"]) == (503, "database_unauthorized")
    [line] = [json.loads(r.getMessage()) for r in caplog.records if '"claim_failed"' in r.getMessage()]
    assert line["check"] == "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"


def test_any_exception_gives_a_json_500_and_one_request_log_line(worker_url, fake, monkeypatch, caplog) -> None:
    caplog.set_level(logging.INFO)

    def broken(authorization, **_: object):
        raise RuntimeError(f"a bug, quoting {authorization}")

    monkeypatch.setattr("lib.worker.endpoint.handle", broken)

    assert call(worker_url, authorization=f"Bearer {SECRET}") == (500, {"error": "internal_error"})
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == "document_jobs"]
    assert [(e["status"], e["error"]) for e in logged if e["event"] == "request"] == [(500, "internal_error")]
    assert [e["error"] for e in logged if e["event"] == "unhandled_error"] == ["RuntimeError"]
    assert SECRET not in caplog.text


@pytest.mark.parametrize(
    ("name", "value"), [("SUPABASE_URL", "project.supabase.co"), ("RESEND_API_URL", "https://resend .test")]
)
def test_a_malformed_url_is_a_500_naming_the_variable(worker_url, fake, monkeypatch, caplog, name, value) -> None:
    monkeypatch.setenv(name, value)
    assert call(worker_url, authorization=f"Bearer {SECRET}") == (500, {"error": "misconfigured"})
    assert f"{name} (" in caplog.text
    assert fake.calls == []
