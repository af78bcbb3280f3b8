"""Round trips to the database per job: each one is an HTTP request through PostgREST when
deployed. A job with n attachments costs claim + start (its e-mail, what is stored, and the slot
of its Resend listing from the shared limiter) + n x record (which renews the lease) + the raw
message's two (the slot of its request to Resend, taken when it goes, and its record) + complete
(which claims the next job): n + 5 calls, none of them a table read. Without the raw message it
was n + 3; n + 4 (n + 2 queue calls and two table reads) before the limiter, which folded the
reads into the start; 2n + 5 before that. This test fails if the count grows; it counts
requests, it does not time them."""

from __future__ import annotations

import httpx
import pytest

from lib.limits import MAX_JOBS_PER_INVOCATION
from lib.supabase.storage import Storage
from lib.worker import fetch_email
from lib.worker.loop import STEP_RESERVE, run_invocation
from lib.worker.rate_limit import ResendLimiter
from lib.worker.resend import ResendClient
from tests.unit.fake_resend import PDF, RESEND, attachment, page, received
from tests.unit.fake_supabase import KEY, URL, job_row


def database_requests(router) -> list[str]:
    """The path of every request to PostgREST (not Storage), in order."""
    return [
        call.request.url.path.removeprefix("/rest/v1/")
        for call in router.calls
        if str(call.request.url).startswith(f"{URL}/rest/v1/")
    ]


def invocation(queue, fake, router, clock, http, client, jobs: int, attachments: int):
    for n in range(jobs):
        email_row = f"6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a1{n}"
        fake.emails[email_row] = f"em_{n}"
        fake.jobs.append(job_row(fax_received_email_id=email_row))
        router.get(f"{RESEND}/emails/receiving/em_{n}/attachments").mock(
            return_value=httpx.Response(200, json=page(*(attachment(10 * n + i) for i in range(attachments))))
        )
        router.get(f"{RESEND}/emails/receiving/em_{n}").mock(return_value=httpx.Response(200, json=received(None)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    limiter = ResendLimiter(client, STEP_RESERVE, clock, sleep=clock.advance)
    context = fetch_email.FetchContext(
        queue=queue,
        limiter=limiter,
        resend=ResendClient(http, RESEND, "re_test_key", pacing=limiter),
        storage=Storage(http, URL, KEY, "fax-attachments"),
        max_bytes=1_000,
    )
    return run_invocation(queue, fetch_email.KIND, lambda job, cp: fetch_email.run(job, context, cp), clock)


@pytest.mark.parametrize("attachments", [1, 2, 5])
def test_one_job_with_n_attachments_costs_n_plus_5_calls(queue, fake, router, clock, http, client, attachments):
    summary = invocation(queue, fake, router, clock, http, client, jobs=1, attachments=attachments)

    assert (summary.completed, len(fake.uploads)) == (1, attachments)
    requests = database_requests(router)
    assert requests == [
        "rpc/claim_document_jobs",
        "rpc/start_fetch_email_v2",  # the e-mail row, the stored ids and the listing's slot: no table read
        *["rpc/record_document_attachment_v3"] * attachments,
        "rpc/reserve_provider_request",  # the slot of the e-mail's own answer (its raw message)
        "rpc/record_raw_message_v2",  # the raw message, or why there is none
        "rpc/complete_document_job_and_claim_next_v2",  # it finds no next job: no further claim
    ]
    assert len(requests) == attachments + 5, "n + 3 without the raw message; n + 4 (two table reads) before"


@pytest.mark.parametrize("attachments", [1, 3])
def test_jobs_after_the_first_cost_one_call_less(queue, fake, router, clock, http, client, attachments) -> None:
    jobs = MAX_JOBS_PER_INVOCATION
    summary = invocation(queue, fake, router, clock, http, client, jobs=jobs, attachments=attachments)

    assert summary.completed == jobs
    requests = database_requests(router)
    # One claim for the invocation; each job's completion claims the next, but the last one's
    # does not ask: the invocation may claim no more than MAX_JOBS_PER_INVOCATION, and asks for
    # a follow-up instead.
    assert len(requests) == 1 + jobs * (attachments + 4)
    assert requests.count("rpc/claim_document_jobs") == 1
    assert requests.count("rpc/start_fetch_email_v2") == jobs
    assert requests[-1] == "rpc/complete_document_job_and_follow_up_v2"
    assert "rpc/extend_document_job_lease_v2" not in requests
    assert not [path for path in requests if not path.startswith("rpc/")], "no table reads"
