"""The worker's end of the shared Resend limiter (lib/worker/rate_limit.py), on the fake clock: it waits
the slot the database answered before each API request, never for a slot its budget cannot
afford, and tells the database what Resend said about the limit (the team's real limit, a 429)."""

from __future__ import annotations

import httpx
import pytest

from lib.failures import JobFailure
from lib.worker.loop import run_invocation
from tests.unit import test_fetch_email as fetch_tests
from tests.unit.fake_supabase import job_row
from tests.unit.test_fetch_email import EMAIL_ROW, PDF, RESEND, attachment, list_route, page, run

# The fetch_email tests' fixtures: the job, and its context with a limiter on the fake clock.
limiter, context, job = fetch_tests.limiter, fetch_tests.context, fetch_tests.job

LISTING = f"{RESEND}/emails/receiving/em_123/attachments"
# After the attachments, the e-mail's own answer (for its raw message) takes a slot of its own.
RETRIEVE_SLOT = ["reserve_provider_request"]


def downloads_answer(router) -> None:
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))


def test_the_listing_waits_for_the_slot_the_start_reserved(queue, fake, router, context, clock, job) -> None:
    fake.slots = [{"reserved": True, "wait_ms": 1_750, "limit": 5}]
    listed_at = []

    def listing(request: httpx.Request) -> httpx.Response:
        listed_at.append(clock.now)
        return httpx.Response(200, json=page(attachment(1)), headers={"ratelimit-limit": "5"})

    router.get(LISTING).mock(side_effect=listing)
    downloads_answer(router)

    assert run(queue, context, clock).completed == 1
    assert listed_at == [1_000 + 1.75], "after the wait the database answered, not before"
    [(_, start)] = [call for call in fake.limiter_calls() if call[0] == "start_fetch_email_v2"]
    assert start["p_max_wait_ms"] == 220_000, "the budget's 240 s less the 20 s a step needs after the wait"
    assert [name for name, _ in fake.limiter_calls()] == ["start_fetch_email_v2", *RETRIEVE_SLOT], (
        "Resend's limit was the known one: not noted"
    )


def test_a_second_page_reserves_a_slot_of_its_own(queue, fake, router, context, clock, job) -> None:
    fake.slots = [{"reserved": True, "wait_ms": 0, "limit": 5}, {"reserved": True, "wait_ms": 250, "limit": 5}]
    listing = list_route(router, page(attachment(1), has_more=True), page(attachment(2)))
    downloads_answer(router)

    assert run(queue, context, clock).completed == 1
    assert len(listing.calls) == 2
    (name, reserve), *_ = fake.limiter_calls()[1:]
    assert (name, reserve["p_provider"]) == ("reserve_provider_request", "resend")
    assert clock.now >= 1_000.25


def test_a_slot_further_away_than_the_budget_allows_releases_the_job_and_stops(queue, fake, router, context, clock):
    fake.emails[EMAIL_ROW] = "em_123"
    fake.jobs = [job_row(fax_received_email_id=EMAIL_ROW), job_row(fax_received_email_id=EMAIL_ROW)]
    fake.slots = [{"reserved": False, "wait_ms": 400_000, "limit": 5}]
    listing = router.get(LISTING).mock(return_value=httpx.Response(200, json=page(attachment(1))))

    summary = run(queue, context, clock)

    assert (summary.claimed, summary.released, summary.stopped_because) == (1, 1, "rate_limit_wait")
    assert listing.calls == [], "Resend was not asked"
    assert clock.now == 1_000, "and nobody waited"
    [(name, release)] = fake.rpc_calls()
    assert name == "release_document_job_v2", "no follow-up: the limiter, not the invocations, is the bottleneck"
    assert (release["p_error_code"], release["p_retry_after"]) == ("resend_rate_limit_wait", "400.000 seconds")
    assert len(fake.jobs) == 1, "the next job is left for later"


def test_the_teams_real_limit_is_learned_from_ratelimit_limit(queue, fake, router, context, clock, job) -> None:
    router.get(LISTING).mock(
        return_value=httpx.Response(200, json=page(attachment(1)), headers={"ratelimit-limit": "10"})
    )
    downloads_answer(router)

    assert run(queue, context, clock).completed == 1
    [note] = [body for name, body in fake.limiter_calls() if name == "note_provider_rate_limit"]
    assert (note["p_provider"], note["p_limit"], note["p_retry_after"]) == ("resend", 10, None)


@pytest.mark.parametrize("header", ["5", None, "many", "0", "100000"])
def test_a_known_missing_or_unusable_limit_is_not_noted(queue, fake, router, context, clock, job, header) -> None:
    headers = {"ratelimit-limit": header} if header is not None else {}
    router.get(LISTING).mock(return_value=httpx.Response(200, json=page(attachment(1)), headers=headers))
    downloads_answer(router)

    assert run(queue, context, clock).completed == 1
    assert [name for name, _ in fake.limiter_calls()] == ["start_fetch_email_v2", *RETRIEVE_SLOT]


def test_a_429_pauses_every_worker_and_releases_the_job(queue, fake, router, context, clock, job) -> None:
    router.get(LISTING).mock(
        return_value=httpx.Response(
            429,
            headers={"retry-after": "2", "ratelimit-limit": "5", "ratelimit-remaining": "0", "ratelimit-reset": "2"},
            json={"statusCode": 429, "name": "rate_limit_exceeded", "message": "Too many requests"},
        )
    )

    summary = run(queue, context, clock)

    assert (summary.released, summary.retried, summary.failed) == (1, 0, 0), "no attempt spent"
    [(_, note)] = fake.limiter_calls()[1:]
    assert (note["p_limit"], note["p_retry_after"]) == (None, "2.000 seconds")
    [(name, release)] = fake.rpc_calls()
    assert name == "release_document_job_v2"
    assert (release["p_error_code"], release["p_retry_after"]) == ("resend_rate_limited", "2.000 seconds")


def test_a_quota_429_is_no_pause_of_the_limiter(queue, fake, router, context, clock, job) -> None:
    router.get(LISTING).mock(
        return_value=httpx.Response(429, json={"statusCode": 429, "name": "daily_quota_exceeded", "message": "q"})
    )
    run(queue, context, clock)
    assert [name for name, _ in fake.limiter_calls()] == ["start_fetch_email_v2"]


def test_the_job_goes_on_when_the_limit_cannot_be_noted(queue, fake, router, context, clock, job) -> None:
    fake.unreachable_rpcs = {"note_provider_rate_limit"}
    router.get(LISTING).mock(
        return_value=httpx.Response(200, json=page(attachment(1)), headers={"ratelimit-limit": "10"})
    )
    downloads_answer(router)
    assert run(queue, context, clock).completed == 1


def test_a_start_whose_lease_was_lost_writes_nothing(queue, fake, router, context, clock, job) -> None:
    fake.guarded = False  # start_fetch_email_v2 answers null: the job is no longer ours
    listing = router.get(LISTING).mock(return_value=httpx.Response(200, json=page(attachment(1))))

    summary = run(queue, context, clock)

    assert summary.lost == 1
    assert listing.calls == []
    assert fake.rpc_calls() == []


def test_an_invocation_stopping_with_work_left_counts_the_follow_ups_the_database_started(queue, fake, clock):
    fake.jobs = [job_row() for _ in range(4)]
    fake.follow_ups = 1

    summary = run_invocation(queue, "fetch_email", lambda claimed, checkpoint: None, clock)

    assert (summary.stopped_because, summary.follow_ups) == ("max_jobs", 1)


def test_an_invocation_that_runs_out_of_work_asks_for_no_follow_up(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    fake.follow_ups = 1  # what a follow-up call would answer: it is not made

    summary = run_invocation(queue, "fetch_email", lambda claimed, checkpoint: None, clock)

    assert (summary.stopped_because, summary.follow_ups) == ("no_work", 0)
    assert "_and_follow_up" not in "".join(name for name, _ in fake.calls)


@pytest.mark.parametrize(("code", "write"), [("resend_unavailable", "fail_document_job_and_follow_up_v2"),
                                             ("time_budget", "release_document_job_and_follow_up_v2")])  # fmt: skip
def test_the_third_job_failing_or_released_asks_for_the_follow_up_in_that_write(queue, fake, clock, code, write):
    fake.jobs = [job_row() for _ in range(4)]
    ran = []

    def third_fails(claimed, checkpoint) -> None:
        ran.append(claimed.id)
        if len(ran) == 3:
            raise JobFailure(code, "x")

    summary = run_invocation(queue, "fetch_email", third_fails, clock)

    assert summary.stopped_because == "max_jobs"
    assert [name for name, _ in fake.rpc_calls()][-1] == write
