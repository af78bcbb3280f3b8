"""Settings are checked when they are loaded: a bad URL or number is a ConfigError that names the
variable and what is wrong with it, never its value, rather than an exception from deep inside a
request."""

from __future__ import annotations

import base64

import pytest

from lib.settings import ConfigError, WebhookSettings, WorkerSettings

SECRET = "whsec_" + base64.b64encode(b"unit-test-webhook-signing-key-32").decode()
VALID = {"SUPABASE_URL": "https://project.supabase.co", "SUPABASE_SECRET_KEY": "sb_secret_service-key",
         "RESEND_API_KEY": "re_key", "RESEND_WEBHOOK_SECRET": SECRET}  # fmt: skip

INVALID = [
    ("SUPABASE_URL", "project.supabase.co"),  # no scheme: supabase-py raises "Invalid URL" per request
    ("SUPABASE_URL", "https://"),
    ("SUPABASE_URL", "ftp://project.supabase.co"),
    ("SUPABASE_URL", "https://proj ect.supabase.co"),  # httpx raises InvalidURL per request
    ("SUPABASE_URL", "https://project.supabase.co\n"),
    ("SUPABASE_URL", "https://admin:hunter2@project.supabase.co"),
    ("SUPABASE_URL", "https://project.supabase.co?x=1"),
    ("SUPABASE_URL", "https://project.supabase.co:99999"),
    ("SUPABASE_SECRET_KEY", ""),
    ("SUPABASE_SERVICE_ROLE_KEY", ""),
    ("SUPABASE_SECRET_KEY", "sb_publishable_abc"),  # the anon role: every call would be refused
    ("RESEND_API_URL", "api.resend.com"),
    ("RESEND_API_KEY", ""),
    ("ATTACHMENT_MAX_BYTES", "-1"),
    ("ATTACHMENT_MAX_BYTES", "0"),
    ("ATTACHMENT_MAX_BYTES", "forty megabytes"),
    ("JOB_LEASE_SECONDS", "2"),
    ("JOB_LEASE_SECONDS", "3601"),  # the database refuses a lease over an hour: every claim would fail
    ("RESEND_TIMEOUT_SECONDS", "0"),
    ("RESEND_TIMEOUT_SECONDS", "nan"),
    ("RESEND_TIMEOUT_SECONDS", "inf"),
    ("ATTACHMENTS_BUCKET", ""),
    ("ATTACHMENTS_BUCKET", "fax/attachments"),
    ("ATTACHMENTS_BUCKET", ".."),
]


@pytest.mark.parametrize(("name", "value"), INVALID, ids=[f"{n}={v!r}" for n, v in INVALID])
def test_a_bad_worker_setting_is_named_and_its_value_is_not_repeated(monkeypatch, name, value) -> None:
    for key, good in VALID.items():
        monkeypatch.setenv(key, good)
    monkeypatch.setenv(name, value)

    with pytest.raises(ConfigError) as refused:
        WorkerSettings.load()

    message = str(refused.value)
    assert f"{name} (" in message
    assert [other for other in VALID if f"{other} (" in message and other != name] == []


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [("SUPABASE_URL", "https://admin:hunter2@project.supabase.co", "hunter2"),
     ("SUPABASE_URL", "https://hunter2 .supabase.co", "hunter2"),
     ("ATTACHMENT_MAX_BYTES", "hunter2", "hunter2"),
     ("RESEND_WEBHOOK_SECRET", "whsec_hunter2!", "hunter2")],
)  # fmt: skip
def test_the_message_never_repeats_the_value(monkeypatch, name, value, secret) -> None:
    for key, good in VALID.items():
        monkeypatch.setenv(key, good)
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as refused:
        (WebhookSettings if name == "RESEND_WEBHOOK_SECRET" else WorkerSettings).load()
    assert name in str(refused.value)
    assert secret not in str(refused.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("RESEND_WEBHOOK_SECRET", "whsec_not base64!"), ("RESEND_WEBHOOK_SECRET", "whsec_"),
     ("WEBHOOK_MAX_BODY_BYTES", "0"), ("SUPABASE_URL", "localhost:54321")],
)  # fmt: skip
def test_a_bad_webhook_setting_is_named(monkeypatch, name, value) -> None:
    for key, good in VALID.items():
        monkeypatch.setenv(key, good)
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=f"{name} \\("):
        WebhookSettings.load()


def test_good_settings_load(monkeypatch) -> None:
    for key, good in VALID.items():
        monkeypatch.setenv(key, good)
    monkeypatch.setenv("SUPABASE_URL", "http://127.0.0.1:54321/")
    monkeypatch.setenv("RESEND_API_URL", "https://api.resend.com/")
    settings = WorkerSettings.load()
    assert (settings.supabase_url, settings.resend_api_url) == ("http://127.0.0.1:54321", "https://api.resend.com")
    assert WebhookSettings.load().resend_webhook_secret.get_secret_value() == SECRET
