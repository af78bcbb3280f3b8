"""The Resend sample provider behaves like Resend's receiving API, and its faults fire as asked:
checked through the worker's own Resend client, over loopback HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from devstack.resend_provider import Fault, ResendProvider, sample_email
from lib.resend_client import USER_AGENT, DownloadError, ResendClient, ResendError, ResendTimeout

KEY = "re_provider_test"


@pytest.fixture
def provider() -> Iterator[ResendProvider]:
    provider = ResendProvider(KEY, seed=3)
    with provider.serve():
        yield provider


@pytest.fixture
def client(provider) -> Iterator[ResendClient]:
    with httpx.Client() as http:
        yield ResendClient(http, provider.url, KEY)


def test_lists_pages_and_downloads_real_pdfs(provider, client) -> None:
    email = provider.add_email(sample_email("em_1", attachment_count=150))
    listed = client.list_attachments("em_1")  # 100 per page: two pages
    assert [a.id for a in listed] == [a.id for a in email.attachments]
    data = client.download(listed[0].download_url, max_bytes=1_000_000)
    assert data == email.attachments[0].content and data.startswith(b"%PDF-1.4")
    assert listed[0].filename == email.attachments[0].filename


@pytest.mark.parametrize(
    ("headers", "status", "name"),
    [({"User-Agent": USER_AGENT}, 401, "missing_api_key"),
     ({"User-Agent": USER_AGENT, "Authorization": "Bearer re_wrong"}, 403, "invalid_api_key"),
     ({"Authorization": f"Bearer {KEY}"}, 403, "missing_user_agent")],
)  # fmt: skip
def test_refuses_missing_keys_and_user_agents_like_resend(provider, headers, status, name) -> None:
    provider.add_email(sample_email("em_1"))
    answer = httpx.get(
        f"{provider.url}/emails/receiving/em_1/attachments",
        headers=headers | {"User-Agent": headers.get("User-Agent", "")},
    )
    assert (answer.status_code, answer.json()["name"]) == (status, name)


def test_an_unknown_email_is_404(provider, client) -> None:
    with pytest.raises(ResendError) as raised:
        client.list_attachments("em_missing")
    assert (raised.value.status, raised.value.name) == (404, "not_found")


@pytest.mark.parametrize(
    ("fault", "status", "name", "retry_after"),
    [(Fault(kind="status", status=503, name="application_error"), 503, "application_error", None),
     (Fault(kind="status", status=429, name="rate_limit_exceeded", retry_after=30), 429, "rate_limit_exceeded",
      timedelta(seconds=30)),
     (Fault(kind="status", status=401, name="restricted_api_key"), 401, "restricted_api_key", None),
     (Fault(kind="status", status=404, name="not_found"), 404, "not_found", None)],
)  # fmt: skip
def test_injected_error_answers(provider, client, fault, status, name, retry_after) -> None:
    provider.add_email(sample_email("em_1"))
    provider.add_fault(fault.model_copy(update={"email_id": "em_1", "count": 1}))
    with pytest.raises(ResendError) as raised:
        client.list_attachments("em_1")
    assert (raised.value.status, raised.value.name, raised.value.retry_after) == (status, name, retry_after)
    assert len(client.list_attachments("em_1")) == 2, "count=1: the next call is answered normally"


def test_faults_can_target_one_email(provider, client) -> None:
    provider.add_email(sample_email("em_1"))
    provider.add_email(sample_email("em_2"))
    provider.add_fault(Fault(kind="status", status=500, email_id="em_1"))
    assert len(client.list_attachments("em_2")) == 2
    with pytest.raises(ResendError):
        client.list_attachments("em_1")


def test_random_faults_follow_the_seed() -> None:
    def outcomes(seed: int) -> list[bool]:
        provider = ResendProvider(KEY, seed=seed)
        provider.add_email(sample_email("em_1"))
        provider.add_fault(Fault(kind="status", status=500, probability=0.5))
        headers = {"authorization": f"Bearer {KEY}", "user-agent": "t"}
        return [provider.handle("GET", "/emails/receiving/em_1/attachments", headers)[0] == 500 for _ in range(40)]

    assert outcomes(11) == outcomes(11)
    assert 5 < sum(outcomes(11)) < 35


def test_slow_answers_and_timeouts(provider, client) -> None:
    provider.add_email(sample_email("em_1"))
    provider.add_fault(Fault(kind="slow", delay_s=0.3, count=1))
    started = time.monotonic()
    assert len(client.list_attachments("em_1")) == 2
    assert time.monotonic() - started >= 0.3
    provider.add_fault(Fault(kind="timeout", delay_s=0.1, count=1))
    with pytest.raises(ResendError) as raised:  # the connection is dropped without an answer
        client.list_attachments("em_1")
    assert raised.value.status is None or isinstance(raised.value, ResendTimeout)


def test_expired_download_urls_answer_403(provider, client) -> None:
    provider.add_email(sample_email("em_1"))
    [first, _] = client.list_attachments("em_1")
    provider.add_fault(Fault(kind="expired_url", target="download", count=1))
    with pytest.raises(DownloadError) as raised:
        client.download(first.download_url, 1_000_000)
    assert raised.value.status == 403
    assert client.download(first.download_url, 1_000_000).startswith(b"%PDF")


def test_download_urls_expire_after_their_lifetime() -> None:
    provider = ResendProvider(KEY, url_ttl_s=-1)
    with provider.serve(), httpx.Client() as http:
        provider.add_email(sample_email("em_1"))
        client = ResendClient(http, provider.url, KEY)
        [item, _] = client.list_attachments("em_1")
        with pytest.raises(DownloadError) as raised:
            client.download(item.download_url, 1_000_000)
    assert raised.value.status == 403
