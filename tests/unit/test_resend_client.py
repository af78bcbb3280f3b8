"""The Resend receiving client: headers, pagination limits, errors, retry-after, streamed size cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from lib.resend_client import MAX_PAGES, MalformedResponse, ResendClient, ResendError, TooLarge, parse_retry_after

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
