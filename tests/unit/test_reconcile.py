"""The reconcile_emails job and the client of Resend's list of received e-mails, with Resend and
PostgREST answered by respx: pages back to the watermark (a whole page older ends it, whatever
the order), the page bound and its cursor, one limiter slot per page, the failure table, and a
run that always moves or says why (an unreadable item set apart, a page that comes again, a
cursor that does not advance, has_more with an empty page, a page of any size)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from lib.failures import FailureCode, JobFailure
from lib.storable import storable_id
from lib.worker import reconcile
from lib.worker.loop import STEP_RESERVE, run_invocation
from lib.worker.rate_limit import ResendLimiter
from lib.worker.resend import ResendClient, parse_created_at
from tests.unit.fake_resend import RESEND
from tests.unit.fake_supabase import job_row

WATERMARK = datetime(2026, 12, 1, tzinfo=UTC)
LIST = f"{RESEND}/emails/receiving"


def item(n: int, minutes_after_watermark: float) -> dict[str, Any]:
    at = WATERMARK + timedelta(minutes=minutes_after_watermark)
    attachment = {"id": f"att_{n}", "filename": "a.pdf", "content_type": "application/pdf", "content_id": None,
                  "content_disposition": "attachment", "size": 9}  # fmt: skip
    return {"id": f"em_{n}", "created_at": at.strftime("%Y-%m-%d %H:%M:%S.%f+00"), "from": "fax@example.jp",
            "to": ["faxes@example.com"], "subject": "FAX", "message_id": f"<{n}@x>", "bcc": [], "cc": [],
            "reply_to": [], "attachments": [attachment]}  # fmt: skip


def listing(*items: dict[str, Any], has_more: bool = False) -> httpx.Response:
    return httpx.Response(200, content=json.dumps({"object": "list", "has_more": has_more, "data": list(items)}))


@pytest.fixture
def limiter(client, clock) -> ResendLimiter:
    return ResendLimiter(client, STEP_RESERVE, clock, sleep=clock.advance)


@pytest.fixture
def context(http, queue, limiter) -> reconcile.ReconcileContext:
    return reconcile.ReconcileContext(queue=queue, resend=ResendClient(http, RESEND, "re_test_key", pacing=limiter))


@pytest.fixture
def job(fake) -> dict[str, Any]:
    row = job_row(kind=reconcile.KIND, fax_received_email_id=None)
    fake.jobs = [row]
    return row


def run(queue, context, clock):
    return run_invocation(queue, reconcile.KIND, lambda job, checkpoint: reconcile.run(job, context, checkpoint), clock)


def test_the_created_at_of_the_list_is_read_in_resends_form_and_in_iso() -> None:
    assert parse_created_at("2025-10-09 14:37:40.951732+00") == datetime(2025, 10, 9, 14, 37, 40, 951732, UTC)
    assert parse_created_at("2025-10-09T14:37:40Z") == datetime(2025, 10, 9, 14, 37, 40, tzinfo=UTC)
    assert parse_created_at("yesterday") is None and parse_created_at(None) is None


def test_the_client_always_sends_limit_and_the_cursor(http, router) -> None:
    route = router.get(LIST).mock(side_effect=[listing(item(1, 5), has_more=True), listing(item(2, 4))])
    client = ResendClient(http, RESEND, "re_key")
    first = client.list_received(None)
    second = client.list_received(first.last_id)
    assert [dict(c.request.url.params) for c in route.calls] == [{"limit": "100"}, {"limit": "100", "after": "em_1"}]
    assert (first.has_more, second.has_more, second.emails[0].id) == (True, False, "em_2")


def test_with_nothing_missed_a_run_makes_one_listing_request(queue, fake, router, context, clock, job) -> None:
    fake.recorded_ids = ["em_1", "em_2"]
    route = router.get(LIST).mock(side_effect=[listing(item(1, -5), item(2, -90), has_more=True)])
    summary = run(queue, context, clock)
    assert summary.completed == 1 and route.call_count == 1
    assert [len(b["p_emails"]) for _, b in fake.rpc_calls("record_reconciled_emails_v3")] == [2]
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert (finish["p_listed"], finish["p_cursor"]) == (2, None)
    assert finish["p_newest"].startswith("2026-11-30T23:55:00")
    assert [n for n, _ in fake.limiter_calls()] == ["reserve_provider_request"], "one slot of the limiter, one page"


def test_a_page_older_throughout_ends_the_run_not_the_first_older_item(
    queue, fake, router, context, clock, job
) -> None:
    # The order is not promised: an older e-mail first on a page does not end the walk.
    route = router.get(LIST).mock(side_effect=[
        listing(item(1, -120), item(2, 30), has_more=True),
        listing(item(3, -61), item(4, 10), has_more=True),
        listing(item(5, -61), item(6, -200), has_more=True),
    ])  # fmt: skip
    fake.reconcile_start = {
        "stop_before": (WATERMARK - timedelta(hours=1)).isoformat(),
        "cursor": None,
        "max_pages": 10,
        "now": WATERMARK.isoformat(),
    }
    run(queue, context, clock)
    assert route.call_count == 3
    assert fake.recorded_ids == [f"em_{n}" for n in range(1, 7)], "what the older pages list is recorded too"
    assert [dict(c.request.url.params).get("after") for c in route.calls] == [None, "em_2", "em_4"]
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert finish["p_newest"].startswith("2026-12-01T00:30:00")


def test_a_run_stops_at_its_page_bound_and_its_follow_up_continues_after_the_cursor(
    queue, fake, router, context, clock, job
) -> None:
    fake.reconcile_start = {
        "stop_before": WATERMARK.isoformat(),
        "cursor": "em_0",
        "max_pages": 2,
        "now": WATERMARK.isoformat(),
    }
    route = router.get(LIST).mock(
        side_effect=[listing(item(1, 50), has_more=True), listing(item(2, 40), has_more=True)]
    )
    summary = run(queue, context, clock)
    assert summary.completed == 1 and route.call_count == 2
    assert dict(route.calls[0].request.url.params)["after"] == "em_0", "it starts after the kept cursor"
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert finish["p_cursor"] == "em_2"


@pytest.mark.parametrize(
    ("status", "body", "headers", "write", "code"),
    [(429, {"name": "rate_limit_exceeded", "message": "Too many requests"}, {"retry-after": "3"},
      "release_document_job_v2", "resend_rate_limited"),
     (400, {"name": "validation_error", "message": "API key is invalid"}, {},
      "release_document_job_v2", "resend_unauthorized"),
     (401, {"name": "restricted_api_key", "message": "This API key is restricted to only send emails."}, {},
      "release_document_job_v2", "resend_unauthorized"),
     (500, {"name": "application_error", "message": "boom"}, {}, "fail_document_job_v2", "resend_unavailable"),
     (503, {"name": "application_error", "message": "later"}, {}, "fail_document_job_v2", "resend_unavailable")],
    ids=["429", "a deleted key", "a sending-only key", "500", "503"],
)  # fmt: skip
def test_a_refused_listing_follows_the_failure_table(
    queue, fake, router, context, clock, job, status, body, headers, write, code
) -> None:
    router.get(LIST).mock(return_value=httpx.Response(status, json={"statusCode": status, **body}, headers=headers))
    run(queue, context, clock)
    [(name, written)] = [c for c in fake.rpc_calls() if c[0].startswith(("fail_", "release_"))]
    assert (name, written["p_error_code"]) == (write, code)
    if write == "fail_document_job_v2":
        assert written["p_retryable"] is True, "a 5xx is retried"
    assert not fake.rpc_calls("finish_reconciliation_v3"), "the watermark does not move"


def test_a_walk_by_hand_asks_again_for_a_page_the_rate_limit_refused_each_after_its_pause(
    http, router, fake, limiter
) -> None:
    refused = httpx.Response(429, json={"statusCode": 429, "name": "rate_limit_exceeded", "message": "Too many"},
                             headers={"retry-after": "2"})  # fmt: skip
    route = router.get(LIST).mock(side_effect=[refused, refused, listing(item(1, 5))])
    resend = ResendClient(http, RESEND, "re_test_key", pacing=limiter)
    recorded: list[str] = []

    def record(items: list[dict[str, Any]], unreadable: list[dict[str, Any]]) -> dict[str, Any]:
        recorded.extend(str(i["id"]) for i in items)
        return {"recorded": len(items)}

    seen = reconcile.walk(resend, record, WATERMARK, None, 10, None, rate_limited_retries=2)
    assert (recorded, seen.pages, route.call_count) == (["em_1"], 1, 3)
    limiter_calls = [(name, body.get("p_retry_after")) for name, body in fake.calls]
    assert [name for name, _ in limiter_calls] == ["reserve_provider_request", "note_provider_rate_limit"] * 2 + [
        "reserve_provider_request"
    ], "every request waits for a slot, and each 429 pauses every worker before the next slot"
    assert all(pause for name, pause in limiter_calls if name == "note_provider_rate_limit")

    route.side_effect = [refused, refused]
    with pytest.raises(JobFailure) as given_up:
        reconcile.walk(resend, record, WATERMARK, None, 10, None, rate_limited_retries=1)
    assert given_up.value.code is FailureCode.RESEND_RATE_LIMITED, "asked again only so many times"


def test_text_postgres_cannot_store_is_replaced_before_it_is_sent(queue, fake, router, context, clock, job) -> None:
    odd = item(1, 5) | {"subject": "a\u0000b"}
    router.get(LIST).mock(return_value=listing(odd))
    run(queue, context, clock)
    [(_, recorded)] = fake.rpc_calls("record_reconciled_emails_v3")
    assert recorded["p_emails"][0]["subject"] == "a\ufffdb"


def test_the_worker_claims_reconciliation_before_fetch_email(queue, fake, router, context, clock) -> None:
    fake.jobs = [job_row(kind=reconcile.KIND, fax_received_email_id=None)]
    router.get(LIST).mock(return_value=listing())
    summary = run_invocation(queue, (reconcile.KIND, "fetch_email"),
                             lambda job, checkpoint: reconcile.run(job, context, checkpoint), clock)  # fmt: skip
    assert summary.completed == 1
    claims = [(n, b.get("p_kinds", b.get("p_kind"))) for n, b in fake.calls if "claim" in n]
    assert claims == [("claim_document_job_of_kinds", ["reconcile_emails", "fetch_email"]),
                      ("complete_document_job_and_claim_next_v2", ["reconcile_emails", "fetch_email"])]  # fmt: skip


# --- a run that always moves or says why ------------------------------------------------------------

BAD_ITEMS = {
    "no id": ({"id": None}, "no id"),
    "an id that is a number": ({"id": 42}, "an id that is not a string"),
    "created_at null": ({"created_at": None}, "a created_at that is not a time"),
    "created_at a number": ({"created_at": 1764547200}, "a created_at that is not a time"),
    "created_at in RFC 1123": ({"created_at": "Tue, 01 Dec 2026 00:05:00 GMT"}, "a created_at that is not a time"),
    "created_at in 2999": ({"created_at": "2999-01-01 00:00:00+00"}, "a created_at more than a day ahead"),
}


@pytest.mark.parametrize("bad", sorted(BAD_ITEMS))
def test_an_unreadable_item_is_set_apart_and_the_rest_of_its_page_recorded(
    queue, fake, router, context, clock, job, bad
) -> None:
    change, reason = BAD_ITEMS[bad]
    odd = item(2, 7) | change
    if change.get("id", "") is None:
        del odd["id"]
    router.get(LIST).mock(return_value=listing(item(1, 5), odd, item(3, 6)))

    summary = run(queue, context, clock)

    assert summary.completed == 1, "the page is not failed for one item"
    assert fake.recorded_ids == ["em_1", "em_3"]
    [(_, recorded)] = fake.rpc_calls("record_reconciled_emails_v3")
    [unreadable] = recorded["p_unreadable"]
    assert unreadable["reason"].startswith(reason)
    assert unreadable["item"]["subject"] == "FAX" and unreadable["item"]["from"] == "fax@example.jp"
    assert unreadable["item"]["files"] == ["a.pdf"], "what can be read of it goes with it"
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert (finish["p_unreadable"], finish["p_finding"], finish["p_cursor"]) == (1, None, None)
    assert finish["p_newest"].startswith("2026-12-01T00:06:00"), "an unreadable time is no newest"


def test_an_unreadable_item_is_noted_under_the_same_fingerprint_by_every_run(
    queue, fake, router, context, clock
) -> None:
    odd = item(2, 7) | {"created_at": None}
    nameless = item(3, 7)
    del nameless["id"]
    router.get(LIST).mock(return_value=listing(item(1, 5), odd, nameless))
    for _ in range(2):
        fake.jobs = [job_row(kind=reconcile.KIND, fax_received_email_id=None)]
        run(queue, context, clock)
    calls = fake.rpc_calls("record_reconciled_emails_v3")
    assert [[u["fingerprint"] for u in b["p_unreadable"]] for _, b in calls] == [fake.unreadable_noted] * 2
    assert len(set(fake.unreadable_noted)) == 2
    assert [u["provider_email_id"] for u in calls[0][1]["p_unreadable"]] == ["em_2", None]


def test_a_page_that_comes_again_ends_the_run_with_a_finding(queue, fake, router, context, clock, job) -> None:
    # The API answers every cursor with the newest page: without the check, ten pages and a follow-up.
    route = router.get(LIST).mock(return_value=listing(item(1, 50), item(2, 40), has_more=True))
    summary = run(queue, context, clock)
    assert summary.completed == 1 and route.call_count == 2
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert finish["p_cursor"] is None, "no follow-up continues a loop"
    assert "same page again" in finish["p_finding"]
    assert len(fake.rpc_calls("record_reconciled_emails_v3")) == 1, "the page is recorded once"


def test_a_cursor_that_does_not_advance_ends_the_run_with_a_finding(queue, fake, router, context, clock, job) -> None:
    route = router.get(LIST).mock(side_effect=[
        listing(item(1, 50), item(2, 40), has_more=True),
        listing(item(3, 45), item(2, 40), has_more=True),
    ])  # fmt: skip
    run(queue, context, clock)
    assert route.call_count == 2
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert (finish["p_cursor"], "does not advance" in finish["p_finding"]) == (None, True)
    assert fake.recorded_ids == ["em_1", "em_2", "em_3"]


def test_has_more_with_an_empty_page_ends_the_run_with_a_finding(queue, fake, router, context, clock, job) -> None:
    route = router.get(LIST).mock(side_effect=[listing(item(1, 50), has_more=True), listing(has_more=True)])
    summary = run(queue, context, clock)
    assert summary.completed == 1 and route.call_count == 2
    [(_, finish)] = fake.rpc_calls("finish_reconciliation_v3")
    assert (finish["p_cursor"], "empty page" in finish["p_finding"]) == (None, True)
    assert fake.recorded_ids == ["em_1"]


def test_a_page_of_101_items_is_recorded_in_batches_the_database_takes(
    queue, fake, router, context, clock, job
) -> None:
    router.get(LIST).mock(return_value=listing(*(item(n, 5) for n in range(101))))
    summary = run(queue, context, clock)
    assert summary.completed == 1
    assert [len(b["p_emails"]) for _, b in fake.rpc_calls("record_reconciled_emails_v3")] == [100, 1]
    assert len(fake.recorded_ids) == 101


def test_an_id_postgres_cannot_store_is_stored_as_the_webhook_stores_it(
    queue, fake, router, context, clock, job
) -> None:
    router.get(LIST).mock(return_value=listing(item(1, 5) | {"id": "em_\u0000x"}, item(2, 5) | {"id": "em_\ufffdx"}))
    run(queue, context, clock)
    [(_, recorded)] = fake.rpc_calls("record_reconciled_emails_v3")
    assert [i["id"] for i in recorded["p_emails"]] == [storable_id("em_\u0000x"), "em_\ufffdx"], "two e-mails, two ids"
    assert recorded["p_emails"][0]["id"].startswith("em_\ufffdx\ufffdsha256:")
