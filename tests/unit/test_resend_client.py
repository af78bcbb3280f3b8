"""The Resend receiving client: headers, pagination limits, errors, retry-after, streamed size cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from lib.worker.resend import (
    MAX_PAGES,
    InvalidEmailId,
    LengthMismatch,
    MalformedResponse,
    RawMessage,
    ResendClient,
    ResendError,
    TooLarge,
    parse_retry_after,
)

BASE = "https://resend.test"


@pytest.fixture
def resend(http) -> ResendClient:
    return ResendClient(http, BASE + "/", "re_key")


def test_error_answers_carry_resends_fields(resend, router) -> None:
    router.get(f"{BASE}/emails/receiving/em_1/attachments").mock(
        return_value=httpx.Response(
            429, headers={"retry-after": "7"},
            json={"statusCode": 429, "name": "rate_limit_exceeded", "message": "Too many requests"},
        )
    )  # fmt: skip
    with pytest.raises(ResendError) as raised:
        resend.list_attachments("em_1")
    error = raised.value
    assert (error.status, error.name, error.message, error.retry_after) == (
        429, "rate_limit_exceeded", "Too many requests", timedelta(seconds=7))  # fmt: skip
    assert "re_key" not in str(error)


def test_an_error_body_that_is_not_json_still_gives_the_status(resend, router) -> None:
    router.get(f"{BASE}/emails/receiving/em_1/attachments").mock(return_value=httpx.Response(502, text="<html>"))
    with pytest.raises(ResendError) as raised:
        resend.list_attachments("em_1")
    assert (raised.value.status, raised.value.name) == (502, None)


def test_email_ids_are_escaped_in_the_path(resend, router) -> None:
    route = router.get(url__startswith=f"{BASE}/emails/receiving/").mock(
        return_value=httpx.Response(200, json={"object": "list", "has_more": False, "data": []})
    )
    resend.list_attachments("../emails/x?y")
    assert route.calls.last.request.url.raw_path.startswith(b"/emails/receiving/..%2Femails%2Fx%3Fy/attachments")


def test_a_provider_that_pages_forever_is_cut_off(resend, router) -> None:
    item = {"id": "a", "size": 1, "download_url": "https://cdn/a"}
    router.get(f"{BASE}/emails/receiving/em_1/attachments").mock(
        return_value=httpx.Response(200, json={"object": "list", "has_more": True, "data": [item]})
    )
    with pytest.raises(MalformedResponse, match=f"more than {MAX_PAGES} pages"):
        resend.list_attachments("em_1")


def test_has_more_with_an_empty_page_is_malformed(resend, router) -> None:
    router.get(f"{BASE}/emails/receiving/em_1/attachments").mock(
        return_value=httpx.Response(200, json={"object": "list", "has_more": True, "data": []})
    )
    with pytest.raises(MalformedResponse):
        resend.list_attachments("em_1")


def test_download_stops_at_the_cap_even_without_content_length(resend, router) -> None:
    def chunks():
        for _ in range(100):
            yield b"x" * 100

    router.get("https://cdn.test/a").mock(return_value=httpx.Response(200, content=chunks()))
    with pytest.raises(TooLarge):
        resend.download("https://cdn.test/a", max_bytes=1_000)


def test_download_refuses_a_declared_size_over_the_cap(resend, router) -> None:
    router.get("https://cdn.test/a").mock(
        return_value=httpx.Response(200, headers={"content-length": "5000"}, content=b"x" * 5000)
    )
    with pytest.raises(TooLarge, match="5000 bytes declared"):
        resend.download("https://cdn.test/a", max_bytes=1_000)


def test_retry_after_in_seconds_and_as_a_date() -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("30") == timedelta(seconds=30)
    assert parse_retry_after("Sun, 29 Nov 2026 12:02:00 GMT", now) == timedelta(minutes=2)
    assert parse_retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now) == timedelta(0)
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("email_id", [".", "..", ""])
def test_an_email_id_the_client_would_normalise_away_is_refused_before_any_request(resend, router, email_id) -> None:
    # httpx resolves dot segments: /emails/receiving/../attachments would be GET /emails/attachments.
    route = router.get(url__startswith=BASE).mock(return_value=httpx.Response(200, json={"data": []}))
    with pytest.raises(InvalidEmailId):
        resend.list_attachments(email_id)
    assert not route.called


def test_an_error_that_is_not_resends_json_keeps_its_first_line(resend, router) -> None:
    # Cloudflare in front of Resend, for a request without a User-Agent (docs: knowledge-base/403-error-1010).
    router.get(f"{BASE}/emails/receiving/em_1/attachments").mock(
        return_value=httpx.Response(403, text="error code: 1010\n\x1b[2Jmore")
    )
    with pytest.raises(ResendError) as raised:
        resend.list_attachments("em_1")
    assert (raised.value.status, raised.value.name, raised.value.message) == (403, None, "error code: 1010")


def test_a_download_is_held_to_the_listed_size(resend, router) -> None:
    router.get("https://cdn.test/a").mock(return_value=httpx.Response(200, content=b"x" * 20))
    with pytest.raises(LengthMismatch, match="20 bytes received, 5100 listed"):
        resend.download("https://cdn.test/a", max_bytes=10_000, expected_size=5_100)
    assert resend.download("https://cdn.test/a", max_bytes=10_000, expected_size=20) == b"x" * 20
    assert resend.download("https://cdn.test/a", max_bytes=10_000) == b"x" * 20, "an unknown size: the cap only"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [({"object": "email", "id": "em_1", "raw": {"download_url": "https://cdn.test/raw?sig=1",
                                                "expires_at": "2026-12-07T10:00:00Z"}},
      RawMessage(download_url="https://cdn.test/raw?sig=1", expires_at="2026-12-07T10:00:00Z")),
     ({"object": "email", "id": "em_1", "raw": None}, None),
     ({"object": "email", "id": "em_1"}, None)],
    ids=["offered", "null", "absent"],
)  # fmt: skip
def test_the_raw_message_is_read_from_the_received_emails_answer(resend, router, answer, expected) -> None:
    route = router.get(f"{BASE}/emails/receiving/em_1").mock(return_value=httpx.Response(200, json=answer))
    assert resend.raw_message("em_1") == expected
    assert route.calls.last.request.headers["user-agent"].startswith("document-jobs/")


@pytest.mark.parametrize(
    "raw",
    [{"download_url": "file:///etc/passwd"}, {"expires_at": "x"}, "https://cdn.test/raw", [1]],
    ids=["not http", "no URL", "a string", "a list"],
)
def test_a_raw_member_without_a_usable_url_is_malformed(resend, router, raw) -> None:
    router.get(f"{BASE}/emails/receiving/em_1").mock(return_value=httpx.Response(200, json={"raw": raw}))
    with pytest.raises(MalformedResponse, match="raw"):
        resend.raw_message("em_1")


def test_the_received_emails_path_escapes_its_id(resend, router) -> None:
    route = router.get(url__startswith=f"{BASE}/emails/receiving/").mock(
        return_value=httpx.Response(200, json={"raw": None})
    )
    assert resend.raw_message("../emails/x?y") is None
    assert route.calls.last.request.url.raw_path == b"/emails/receiving/..%2Femails%2Fx%3Fy"
    with pytest.raises(InvalidEmailId):
        resend.raw_message("..")
