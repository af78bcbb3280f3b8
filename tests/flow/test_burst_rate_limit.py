"""Bursts against the rate-limited Resend stand-in of the stack (devstack/standins/resend.py: 5
requests a second per team, as Resend documents): concurrent workers keep to the rate, measured
at the stand-in; a 429 that comes anyway spends no attempt; a burst of webhooks starts no more
invocations than the cap; an invocation that stops with work left starts a follow-up, and one
that runs out of work does not."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest

from bench.flow import cron_paused, dispatcher_frozen, in_flight, peak_in_flight, wait_until
from devstack import stack
from devstack.standins.resend import RESEND_RATE_LIMIT
from devstack.tools import inbound
from lib.worker.endpoint import handle
from tests.support.database import reset
from tests.support.emails import receive_email

ATTACHMENTS = 1


@pytest.fixture
def provider(stack_env) -> Iterator[str]:
    """The stack's Resend stand-in, its rate-limit counts from zero, its faults cleared."""
    url = stack_env["RESEND_API_URL"]
    httpx.delete(f"{url}/_control/faults", timeout=10).raise_for_status()
    httpx.post(f"{url}/_control/rate_limit", json={"per_second": RESEND_RATE_LIMIT}, timeout=10).raise_for_status()
    yield url
    httpx.delete(f"{url}/_control/faults", timeout=10).raise_for_status()


def rate_limit_stats(provider: str) -> dict:
    return httpx.get(f"{provider}/_control/rate_limit", timeout=10).json()


def receive(db, provider: str, count: int, attachments: int = ATTACHMENTS) -> list[str]:
    """What the webhook records, for `count` new e-mails of the stand-in; without Vault secrets
    no worker is kicked. (An e-mail without attachments has no fax to prepare: its fetch is its
    only job.)"""
    ids = []
    for _ in range(count):
        data = inbound.add_email(provider, attachments=attachments)
        receive_email(db, data["email_id"], data, f"msg_{data['email_id']}")
        ids.append(data["email_id"])
    return ids


def invoke_in_threads(count: int) -> list[dict]:
    """`count` worker invocations at once, as Fluid compute runs them: threads of one process."""
    secret = os.environ["INTERNAL_FUNCTION_SECRET"]
    with ThreadPoolExecutor(count) as pool:
        answers = list(pool.map(lambda _: handle(f"Bearer {secret}"), range(count)))
    assert {status for status, _ in answers} == {200}, answers
    return [summary for _, summary in answers]


def statuses(db, kind: str | None = "fetch_email") -> dict[str, int]:
    """Jobs by status: the fetches (the rate limit's concern), or of every kind (None)."""
    rows = db.execute("select status, count(*) as n from document_jobs where %s::text is null or kind = %s group by 1",
                      (kind, kind))  # fmt: skip
    return {r["status"]: r["n"] for r in rows}


@pytest.mark.parametrize("limiter", ["on", "off"])
def test_concurrent_workers_keep_to_the_rate_measured_at_the_stand_in(db, admin, provider, limiter) -> None:
    workers, jobs = 6, 18  # every worker takes 3 jobs: each takes its requests' slots from the shared limiter
    # The share left to others also absorbs a request's lateness between its slot and its arrival
    # (a worker can only be late, never early). With the default fifth, slots 250 ms apart, a
    # process kept off the CPU for a quarter of a second on a loaded machine can put six requests
    # into one second (make bench saw it at a load of 40 on 2 cores: one 429, released without an
    # attempt). With half left, slots 400 ms apart, that takes a whole second of lateness.
    admin.execute("update document_jobs_rate_limits set enabled = %s, share_for_others = 0.5", (limiter == "on",))
    receive(db, provider, jobs)

    summaries = invoke_in_threads(workers)

    seen = rate_limit_stats(provider)
    if limiter == "off":  # the control: the same workers without the limiter meet Resend's limit
        assert seen["busiest_second"] > RESEND_RATE_LIMIT and seen["refused"] > 0, seen
        return
    assert seen["busiest_second"] <= RESEND_RATE_LIMIT, seen
    # Each job lists its attachments and retrieves its e-mail (for the raw message's URL).
    assert (seen["requests"], seen["refused"]) == (2 * jobs, 0), "two API requests a job, none refused"
    assert sum(s["completed"] for s in summaries) == jobs
    assert statuses(db) == {"completed": jobs}
    assert db.execute("select max(attempts) as n from document_jobs").fetchone()["n"] == 1
    # Each attachment and each raw message is downloaded from the download host, which is not limited.
    assert seen["downloads"] == jobs * (ATTACHMENTS + 1), "downloads go to the download host, which is not limited"


def test_a_429_releases_the_job_spends_no_attempt_and_pauses_every_worker(db, admin, provider) -> None:
    [email_id] = receive(db, provider, 1)
    fault = {"kind": "status", "status": 429, "name": "rate_limit_exceeded", "retry_after": 2, "target": "list",
             "email_id": email_id, "count": 1}  # fmt: skip
    httpx.post(f"{provider}/_control/faults", json=fault, timeout=10).raise_for_status()

    [summary] = invoke_in_threads(1)

    assert (summary["claimed"], summary["released"], summary["retried"], summary["failed"]) == (1, 1, 0, 0)
    job = db.execute(
        "select status, attempts, last_error_code, run_after - now() as wait from document_jobs"
        " where kind = 'fetch_email'"
    ).fetchone()
    assert (job["status"], job["attempts"], job["last_error_code"]) == ("queued", 0, "resend_rate_limited")
    assert timedelta(seconds=1) < job["wait"] <= timedelta(seconds=2), "retry-after honoured"
    [attempt] = db.execute("select outcome, error_code from document_job_attempts").fetchall()
    assert attempt == {"outcome": "released", "error_code": "resend_rate_limited"}
    paused = admin.execute("select paused_until - now() as pause from document_jobs_rate_limits").fetchone()["pause"]
    assert timedelta(seconds=1) < paused <= timedelta(seconds=2), "no worker gets a slot before it"

    time.sleep(job["wait"].total_seconds())
    [summary] = invoke_in_threads(1)
    assert summary["completed"] == 2, "the fetch, then in its chain the prepare_fax job its completion enqueued"
    fetched = db.execute("select status, attempts from document_jobs where kind = 'fetch_email'").fetchone()
    assert fetched == {"status": "completed", "attempts": 1}


def store_vault_secrets(admin, stack_env) -> None:
    admin.execute("set role postgres")
    stack.store_vault_secrets(admin, stack_env)
    admin.execute("reset role")


@pytest.mark.slow  # 30 webhooks and their jobs through the function host: about a minute
def test_a_burst_of_30_webhooks_queues_at_most_the_cap_of_worker_posts(db, admin, stack_env, provider) -> None:
    store_vault_secrets(admin, stack_env)
    cap = admin.execute("select document_jobs_internal.invocation_cap() as n").fetchone()["n"]
    emails = [inbound.add_email(provider, attachments=ATTACHMENTS) for _ in range(30)]

    def deliver(data) -> int:
        body = inbound.event(data)
        headers = inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body)
        return inbound.deliver(stack_env["FUNCTIONS_URL"], body, headers).status_code

    try:
        with dispatcher_frozen():  # nothing is sent or answered while the burst arrives
            with ThreadPoolExecutor(8) as pool:
                assert set(pool.map(deliver, emails)) == {200}
            queued = admin.execute("select count(*) as n from document_jobs_internal.worker_requests").fetchone()["n"]
            assert queued == cap < 30, "30 kicks, but only as many worker POSTs as the cap"
            assert db.execute("select count(*) as n from document_jobs").fetchone()["n"] == 30

        # Each fax fetched, then prepared: 30 fetches and 30 preparations.
        wait_until(lambda: statuses(db, None) == {"completed": 60}, 180, "the burst to drain")
        wait_until(lambda: in_flight(admin) == 0, 30, "the last invocations to answer")
        assert peak_in_flight(admin) <= cap
        # The default share of a fifth absorbs a request up to a quarter of a second late for its
        # slot; on a loaded machine one can be later, and Resend's 429 for it is a release.
        throttled = db.execute(
            "select count(*) filter (where outcome <> 'released') as spent, count(*) as n from document_job_attempts"
            " where error_code in ('resend_rate_limited', 'resend_rate_limit_wait')"
        ).fetchone()
        assert throttled["spent"] == 0, "no attempt spent on throttling"
        assert rate_limit_stats(provider)["refused"] == throttled["n"]
        assert db.execute("select max(attempts) as n from document_jobs").fetchone()["n"] == 1
    finally:
        reset(admin)


@pytest.mark.parametrize(("emails", "posts"), [(4, 2), (3, 1)])
def test_a_follow_up_is_started_when_work_remains_and_not_when_it_does_not(db, admin, stack_env, provider, emails,
                                                                           posts) -> None:  # fmt: skip
    receive(db, provider, emails, attachments=0)  # no Vault secrets yet: no kicks; nothing to prepare
    store_vault_secrets(admin, stack_env)
    try:
        with cron_paused(admin):
            assert admin.execute("select invoke_document_jobs(1) as n").fetchone()["n"] == 1  # one invocation
            wait_until(lambda: statuses(db) == {"completed": emails}, 60, "the jobs to complete")
            wait_until(lambda: in_flight(admin) == 0, 30, "the invocations to answer")
            answers = [json.loads(r["content"]) for r in admin.execute(
                "select r.content from net._http_response r join document_jobs_internal.worker_requests w"
                " on w.request_id = r.id order by w.created_at")]  # fmt: skip
        assert len(answers) == posts
        first = answers[0]
        assert (first["claimed"], first["stopped_because"]) == (3, "max_jobs")
        assert first["follow_ups"] == posts - 1, "a follow-up only for the job left over"
        assert [a["follow_ups"] for a in answers[1:]] == [0] * (posts - 1)
    finally:
        reset(admin)
