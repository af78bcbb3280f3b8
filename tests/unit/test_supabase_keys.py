"""Supabase's two kinds of server key: the secret key (sb_secret_..., not a JWT) goes in `apikey`
only; a legacy service_role JWT in `apikey` and `Authorization`. The settings choose the key; the
key's form chooses the headers. Resend's own Authorization is never touched, on the one HTTP
client the worker shares between them."""

from __future__ import annotations

import json
import logging
import time

import httpx
import jwt
import pytest

from lib import settings
from lib.settings import ConfigError, SupabaseSettings, WorkerSettings
from lib.supabase.keys import api_headers
from lib.worker import fetch_email
from lib.worker.endpoint import connected
from lib.worker.loop import run_invocation
from tests.unit.fake_supabase import KEY, URL, job_row

RESEND, CDN = "https://resend.test", "https://cdn.resend.test"
LEGACY = jwt.encode({"role": "service_role", "exp": int(time.time()) + 3600}, "a-legacy-jwt-secret-of-32-bytes!")
EMAIL_ROW = "6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10"


@pytest.mark.parametrize(
    ("key", "expected"),
    [("sb_secret_AbC-12_xyz", {"apikey": "sb_secret_AbC-12_xyz"}),
     ("sb_publishable_AbC-12_xyz", {"apikey": "sb_publishable_AbC-12_xyz"}),
     (LEGACY, {"apikey": LEGACY, "Authorization": f"Bearer {LEGACY}"})],
    ids=["secret key", "publishable key", "legacy JWT"],
)  # fmt: skip
def test_the_headers_follow_the_keys_form(key, expected) -> None:
    assert api_headers(key) == expected


def load(monkeypatch, **variables: str) -> SupabaseSettings:
    for name in ("SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SUPABASE_URL", URL)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return SupabaseSettings.load()


def test_neither_key_is_a_configuration_error_naming_both(monkeypatch) -> None:
    with pytest.raises(ConfigError) as refused:
        load(monkeypatch)
    assert "SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY must be set" in str(refused.value)


@pytest.mark.parametrize("name", ["SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY"])
def test_either_key_alone_is_the_server_key(monkeypatch, name) -> None:
    assert load(monkeypatch, **{name: KEY}).server_key == KEY


@pytest.mark.parametrize("name", ["SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY"])
def test_a_publishable_key_is_refused_by_name_without_its_value(monkeypatch, name) -> None:
    with pytest.raises(ConfigError) as refused:
        load(monkeypatch, **{name: "sb_publishable_hunter2"})
    assert f"{name} (" in str(refused.value) and "hunter2" not in str(refused.value)


def test_with_both_set_the_secret_key_wins_and_the_log_says_so_once(monkeypatch, caplog) -> None:
    monkeypatch.setattr(settings, "_BOTH_KEYS_NOTED", settings._Once())  # a fresh process, as far as it knows
    caplog.set_level(logging.INFO)
    for _ in range(3):  # three requests of one instance
        assert load(monkeypatch, SUPABASE_SECRET_KEY=KEY, SUPABASE_SERVICE_ROLE_KEY=LEGACY).server_key == KEY
    events = [json.loads(r.getMessage()) for r in caplog.records if '"supabase_key_chosen"' in r.getMessage()]
    assert [(e["using"], e["ignored"]) for e in events] == [("SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY")]
    assert KEY not in caplog.text and LEGACY not in caplog.text


@pytest.mark.parametrize("key", [KEY, LEGACY], ids=["secret key", "legacy JWT"])
def test_on_the_shared_client_supabase_calls_follow_the_key_and_resend_keeps_its_own(router, fake, key) -> None:
    fake.emails[EMAIL_ROW] = "em_123"
    fake.jobs = [job_row(fax_received_email_id=EMAIL_ROW)]
    item = {"id": "att_1", "filename": "fax.pdf", "content_type": "application/pdf", "size": 5,
            "download_url": f"{CDN}/att_1?sig=s", "expires_at": None}  # fmt: skip
    router.get(f"{RESEND}/emails/receiving/em_123/attachments").mock(
        return_value=httpx.Response(200, json={"object": "list", "has_more": False, "data": [item]})
    )
    router.get(url__startswith=CDN).mock(return_value=httpx.Response(200, content=b"%PDF-"))
    router.get(f"{RESEND}/emails/receiving/em_123").mock(  # its raw message: offered too
        return_value=httpx.Response(200, json={"object": "email", "id": "em_123",
                                               "raw": {"download_url": f"{CDN}/raw?sig=s", "expires_at": None}})
    )  # fmt: skip
    worker = WorkerSettings(supabase_url=URL, supabase_secret_key=key, resend_api_key="re_test_key",
                            resend_api_url=RESEND)  # fmt: skip

    with connected(worker) as (queue, run_job):
        assert run_invocation(queue, fetch_email.KIND, run_job, time.monotonic).completed == 1

    requests = [call.request for call in router.calls]
    to_supabase = [r for r in requests if str(r.url).startswith(URL)]
    to_resend = [r for r in requests if str(r.url).startswith(RESEND)]
    downloads = [r for r in requests if str(r.url).startswith(CDN)]
    assert {r.url.path.split("/")[1] for r in to_supabase} == {"rest", "storage"} and to_resend and downloads
    for request in to_supabase:
        assert request.headers.get_list("apikey") == [key], request.url
        assert request.headers.get("authorization") == (None if key == KEY else f"Bearer {key}"), request.url
    assert {r.headers["authorization"] for r in to_resend} == {"Bearer re_test_key"}
    assert [r.headers.get("authorization") for r in downloads] == [None, None]  # a signed URL needs no key
    assert all(key not in r.headers.get("authorization", "") for r in to_resend + downloads)
