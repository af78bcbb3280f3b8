"""The Resend sample provider behaves like Resend's receiving API: checked through the worker's own
Resend client, over loopback HTTP. (The faults put in front of it: tests/standins/test_fault_layer.py.)"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from PIL import Image

from devstack.standins.resend import ResendProvider, TeamRateLimit, sample_email
from devstack.standins.sample_faxes import EFAX_SUBJECT, fax_tiff
from lib.worker.resend import USER_AGENT, DownloadError, ResendClient, ResendError, parse_created_at

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
    listed = client.list_attachments("em_1").attachments  # 100 per page: two pages
    assert [a.id for a in listed] == [a.id for a in email.attachments]
    data = client.download(listed[0].download_url, max_bytes=1_000_000)
    assert data == email.attachments[0].content and data.startswith(b"%PDF-1.4")
    assert listed[0].filename == email.attachments[0].filename


@pytest.mark.parametrize(
    ("headers", "status", "name", "message"),
    [({"User-Agent": USER_AGENT}, 401, "missing_api_key", "Missing API key in the authorization header."),
     ({"User-Agent": USER_AGENT, "Authorization": "Bearer re_wrong"}, 400, "validation_error", "API key is invalid"),
     ({"User-Agent": USER_AGENT, "Authorization": "Basic x"}, 400, "validation_error", "API key is invalid"),
     ({"User-Agent": USER_AGENT, "Authorization": "Bearer re_sending_only"}, 401, "restricted_api_key",
      "This API key is restricted to only send emails.")],
    ids=["no key", "an unknown key", "not a key", "a sending-only key"],
)  # fmt: skip
def test_refuses_keys_as_resends_current_reference_says(headers, status, name, message) -> None:
    provider = ResendProvider(KEY, restricted_key="re_sending_only")
    with provider.serve():
        provider.add_email(sample_email("em_1"))
        answer = httpx.get(f"{provider.url}/emails/receiving/em_1/attachments", headers=headers)
    assert answer.json() == {"statusCode": status, "name": name, "message": message}
    assert answer.status_code == status


def test_a_deleted_key_is_an_invalid_one_until_restored(provider, client) -> None:
    provider.add_email(sample_email("em_1"))
    httpx.post(f"{provider.url}/_control/key", json={"deleted": True}).raise_for_status()
    with pytest.raises(ResendError) as raised:
        client.list_attachments("em_1")
    assert (raised.value.status, raised.value.name, raised.value.message) == (400, "validation_error",
                                                                              "API key is invalid")  # fmt: skip
    httpx.post(f"{provider.url}/_control/key", json={"deleted": False}).raise_for_status()
    assert len(client.list_attachments("em_1").attachments) == 2


def test_without_a_user_agent_the_answer_is_cloudflares_plain_403(provider) -> None:
    provider.add_email(sample_email("em_1"))
    answer = httpx.get(f"{provider.url}/emails/receiving/em_1/attachments",
                       headers={"User-Agent": "", "Authorization": f"Bearer {KEY}"})  # fmt: skip
    assert (answer.status_code, answer.text, answer.headers["content-type"]) == (
        403, "error code: 1010", "text/plain; charset=UTF-8")  # fmt: skip


def test_an_unknown_route_and_method_are_answered_as_documented(provider) -> None:
    headers = {"User-Agent": USER_AGENT, "Authorization": f"Bearer {KEY}"}
    assert httpx.get(f"{provider.url}/emails/sent", headers=headers).json()["message"] == (
        "The requested endpoint does not exist.")  # fmt: skip
    answer = httpx.post(f"{provider.url}/emails/receiving/em_1/attachments", headers=headers)
    assert (answer.status_code, answer.json()["name"]) == (405, "method_not_allowed")


def test_an_unknown_email_is_404(provider, client) -> None:
    with pytest.raises(ResendError) as raised:
        client.list_attachments("em_missing")
    assert (raised.value.status, raised.value.name) == (404, "not_found")


def test_download_urls_expire_after_their_lifetime() -> None:
    provider = ResendProvider(KEY, url_ttl_s=-1)
    with provider.serve(), httpx.Client() as http:
        provider.add_email(sample_email("em_1"))
        client = ResendClient(http, provider.url, KEY)
        [item, _] = client.list_attachments("em_1").attachments
        with pytest.raises(DownloadError) as raised:
            client.download(item.download_url, 1_000_000)
    assert raised.value.status == 403


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def api(provider: ResendProvider) -> httpx.Response:
    return httpx.get(f"{provider.url}/emails/receiving/em_1/attachments",
                     headers={"Authorization": f"Bearer {KEY}", "User-Agent": USER_AGENT})  # fmt: skip


def test_the_teams_rate_limit_is_enforced_per_second_with_resends_headers(provider) -> None:
    clock = Clock()
    provider.rate_limit = TeamRateLimit(5, clock=clock)
    provider.add_email(sample_email("em_1"))

    answers = [api(provider) for _ in range(6)]

    assert [a.status_code for a in answers] == [200] * 5 + [429]
    assert [a.headers["ratelimit-remaining"] for a in answers] == ["4", "3", "2", "1", "0", "0"]
    assert {(a.headers["ratelimit-limit"], a.headers["ratelimit-reset"]) for a in answers} == {("5", "1")}
    refused = answers[-1]
    assert refused.headers["retry-after"] == "1"
    assert refused.json() == {
        "statusCode": 429, "name": "rate_limit_exceeded",
        "message": "Too many requests. Please limit the number of requests per second. Or contact support to "
                   "increase rate limit.",
    }  # fmt: skip
    assert "retry-after" not in answers[0].headers
    clock.now += 0.999
    assert api(provider).status_code == 429, "the same second: still full (refusals do not fill it)"
    clock.now += 0.001
    assert api(provider).status_code == 200, "a second after the first: room again"
    assert provider.rate_limit.stats() | {"downloads": None} == {
        "per_second": 5, "requests": 8, "refused": 2, "busiest_second": 7, "downloads": None,
        "downloads_over_limit_if_counted": 0,
    }  # fmt: skip


def test_no_span_of_a_second_admits_more_than_the_limit_wherever_it_starts() -> None:
    clock = Clock()
    limit = TeamRateLimit(5, clock=clock)
    admitted = []
    for step in range(400):  # a request every 70 ms: 14 a second are asked for
        clock.now = 100 + step * 0.07
        if limit.admit()[0]:
            admitted.append(clock.now)
    assert all(later - earlier >= 1.0 for earlier, later in zip(admitted, admitted[5:], strict=False))
    assert len(admitted) >= 5 * 27, "and the limit is used: 5 a second over 28 s"


def test_downloads_come_from_another_host_and_are_counted_not_limited(provider, client) -> None:
    provider.rate_limit = TeamRateLimit(5, clock=Clock())  # the clock stands still: one second
    email = provider.add_email(sample_email("em_1", attachment_count=8))
    listed = client.list_attachments("em_1").attachments

    assert all(httpx.URL(item.download_url).port != httpx.URL(provider.url).port for item in listed)
    on_the_api_host = httpx.get(f"{provider.url}/_downloads/x?signature=y",
                                headers={"Authorization": f"Bearer {KEY}", "User-Agent": USER_AGENT})  # fmt: skip
    assert on_the_api_host.status_code == 404, "not on the API host"
    assert [client.download(item.download_url, 1_000_000) for item in listed] == [a.content for a in email.attachments]
    stats = provider.rate_limit.stats()
    assert (stats["requests"], stats["refused"], stats["downloads"]) == (1, 0, 8)
    assert stats["downloads_over_limit_if_counted"] == 4, "1 listing + 4 downloads fill the second; 4 would be over"


def test_the_limit_can_be_changed_or_lifted_through_the_control_endpoint(provider) -> None:
    provider.add_email(sample_email("em_1"))
    assert httpx.post(f"{provider.url}/_control/rate_limit", json={"per_second": None}).json()["per_second"] is None
    assert {api(provider).status_code for _ in range(12)} == {200}
    stats = httpx.post(f"{provider.url}/_control/rate_limit", json={"per_second": 2}).json()
    assert (stats["per_second"], stats["requests"]) == (2, 0)
    assert [api(provider).status_code for _ in range(3)] == [200, 200, 429]
    assert httpx.get(f"{provider.url}/_control/rate_limit").json()["refused"] == 1


def test_the_control_endpoint_has_each_attachments_digest(provider) -> None:
    email = provider.add_email(sample_email("em_1"))
    digests = httpx.get(f"{provider.url}/_control/attachments").json()
    assert digests == {a.id: hashlib.sha256(a.content).hexdigest() for a in email.attachments}


def received(provider: ResendProvider, **params: object) -> httpx.Response:
    return httpx.get(f"{provider.url}/emails/receiving", params=params,
                     headers={"Authorization": f"Bearer {KEY}", "User-Agent": USER_AGENT})  # fmt: skip


def test_lists_received_emails_in_pages_with_cursors_that_exclude_themselves(provider, client) -> None:
    provider.rate_limit = TeamRateLimit(None)
    added = [provider.add_email(sample_email(f"em_{n:03}", attachment_count=1)) for n in range(250)]
    seen, after, pages = [], None, 0
    while True:
        page = client.list_received(after)
        pages += 1
        seen += [e.id for e in page.emails]
        if not page.has_more:
            break
        after = page.last_id
    assert pages == 3 and sorted(seen) == sorted(e.email_id for e in added), "each e-mail once, in three pages"
    first = received(provider, limit=2).json()
    after_first = received(provider, limit=2, after=first["data"][0]["id"]).json()
    assert first["data"][0]["id"] not in [i["id"] for i in after_first["data"]]
    before = received(provider, limit=5, before=first["data"][1]["id"]).json()
    assert [i["id"] for i in before["data"]] == [first["data"][0]["id"]] and not before["has_more"]


def test_a_listed_item_has_resends_fields_and_no_download_urls(provider) -> None:
    email = provider.add_email(sample_email("em_1", attachment_count=2))
    [item] = received(provider, limit=1).json()["data"]
    assert set(item) == {"id", "to", "from", "created_at", "subject", "bcc", "cc", "reply_to", "message_id",
                         "attachments"}  # fmt: skip
    assert item["id"] == "em_1" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00", item["created_at"])
    assert [a["id"] for a in item["attachments"]] == [a.id for a in email.attachments]
    assert all("download_url" not in a and a["size"] > 0 for a in item["attachments"])


@pytest.mark.parametrize("limit", [None, 0, 101, "x"])
def test_a_limit_out_of_bounds_is_resends_validation_error(provider, limit) -> None:
    answer = received(provider) if limit is None else received(provider, limit=limit)
    assert answer.status_code == 422
    assert answer.json()["name"] == "validation_error"


def test_the_list_promises_no_order_and_the_stand_in_keeps_none(provider) -> None:
    for n in range(30):
        provider.add_email(replace(sample_email(f"em_{n:02}", 0), created_at=f"2026-12-01T00:00:{n:02}+00:00"))
    listed = [i["created_at"] for i in received(provider, limit=30).json()["data"]]
    assert sorted(listed, reverse=True) != listed, "newest first, but shuffled in runs"
    assert sorted(listed[:10], reverse=True) == sorted(listed, reverse=True)[:10], "only within a run"


def test_the_list_counts_against_the_teams_rate_limit(provider) -> None:
    provider.rate_limit = TeamRateLimit(2, clock=Clock())
    answers = [received(provider, limit=1).status_code for _ in range(3)]
    assert answers == [200, 200, 429]


def test_an_email_received_through_the_control_endpoint_has_no_webhook_and_may_be_old(provider) -> None:
    made = httpx.post(f"{provider.url}/_control/emails/batch", json={"count": 3, "age_seconds": 3600}).json()
    listed = received(provider, limit=10).json()["data"]
    assert sorted(i["id"] for i in listed) == sorted(m["email_id"] for m in made)
    oldest_allowed = datetime.now(UTC) - timedelta(minutes=59)
    assert all(parse_created_at(i["created_at"]) < oldest_allowed for i in listed)


def test_the_control_endpoint_takes_given_files_a_sender_and_a_subject(provider, client) -> None:
    # What `make faxes FILE=... FROM=... SUBJECT=...` sends (devstack/tools/inbound.py add_email).
    tiff = fax_tiff(pages=2)
    given = {"filename": "FAX.tif", "content_type": "image/tiff", "content_base64": base64.b64encode(tiff).decode()}
    data = httpx.post(f"{provider.url}/_control/emails", json={
        "attachments": [given], "from": "eFax <message@efax.example.jp>", "subject": EFAX_SUBJECT}).json()  # fmt: skip
    assert (data["from"], data["subject"]) == ("eFax <message@efax.example.jp>", EFAX_SUBJECT)
    [item] = client.list_attachments(data["email_id"]).attachments
    assert (item.filename, item.content_type, item.size) == ("FAX.tif", "image/tiff", len(tiff))
    assert httpx.get(item.download_url).content == tiff


def test_the_named_samples_are_the_faxes_japanese_offices_get(provider, client) -> None:
    efax = httpx.post(f"{provider.url}/_control/emails", json={"sample": "efax"}).json()
    assert efax["subject"] == "eFax メッセージ 送信元 06-1111-2222 - 3 ページ"
    [item] = client.list_attachments(efax["email_id"]).attachments
    with Image.open(io.BytesIO(httpx.get(item.download_url).content)) as image:
        assert (image.n_frames, image.info["compression"], image.info["dpi"]) == (3, "group4", (204, 98))
    invoice = httpx.post(f"{provider.url}/_control/emails", json={"sample": "invoice"}).json()
    assert "株式会社山田商事" in invoice["from"]
    [item] = client.list_attachments(invoice["email_id"]).attachments
    pdf = httpx.get(item.download_url).content
    assert pdf.startswith(b"%PDF-") and b"/HeiseiKakuGo-W5" in pdf and b"/FontFile" not in pdf, "a font not embedded"


def test_the_received_email_offers_its_raw_message_as_a_download(provider, client) -> None:
    email = provider.add_email(sample_email("em_raw", attachment_count=2))
    answer = httpx.get(f"{provider.url}/emails/receiving/em_raw",
                       headers={"User-Agent": USER_AGENT, "Authorization": f"Bearer {KEY}"}).json()  # fmt: skip
    expires = datetime.fromisoformat(answer["raw"]["expires_at"])
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1), "valid for an hour"
    raw = client.raw_message("em_raw")
    assert raw is not None and raw.download_url == answer["raw"]["download_url"]
    data = client.download(raw.download_url, max_bytes=1_000_000)
    assert data == email.raw_message() == client.download(raw.download_url, max_bytes=1_000_000), "the same bytes"
    assert data.startswith(b"From: ") and b"\r\nMessage-ID: <em_raw@fax.example.jp>\r\n" in data
    for attachment in email.attachments:
        assert base64.b64encode(attachment.content)[:76] in data, "every attachment in it, base64"


def test_an_email_added_without_a_raw_message_answers_raw_null(provider, client) -> None:
    provider.add_email(replace(sample_email("em_plain"), raw=False))
    assert client.raw_message("em_plain") is None
    httpx.post(f"{provider.url}/_control/emails", json={"email_id": "em_ctl", "attachments": 1, "raw": False})
    assert client.raw_message("em_ctl") is None
