"""invoke_document_jobs and the worker kick: when the database calls the worker, and how."""

from __future__ import annotations

import json
import time

import psycopg
import pytest

from tests.support.database import add_jobs, invoke, queued_requests
from tests.support.emails import receive_email
from tests.support.receiver import receiver
from tests.support.vault import SECRET, WORKER_URL, store_secrets


def test_no_post_when_nothing_is_claimable(tx) -> None:
    store_secrets(tx)
    add_jobs(tx, 5, run_after="now() + interval '1 minute'")  # in backoff
    add_jobs(tx, 5, status="'running'", attempts="1", lease_until="now() + interval '1 minute'")  # live leases
    add_jobs(tx, 5, status="'completed'", finished_at="now()")
    add_jobs(tx, 5, status="'failed'", finished_at="now()")
    add_jobs(tx, 5, attempts="5")  # no attempt left

    assert invoke(tx) == 0
    assert queued_requests(tx) == []


@pytest.mark.parametrize(
    ("claimable", "max_invocations", "posts"),
    # Up to the cap of invocations in flight (12 by default; none are in flight here).
    [(1, None, 1), (3, None, 1), (4, None, 2), (7, None, 3), (12, None, 4), (500, None, 12), (500, 2, 2), (2, 10, 1),
     (500, 20, 12)],
)  # fmt: skip
def test_fans_out_one_post_per_three_claimable_jobs_within_the_cap(tx, claimable, max_invocations, posts) -> None:
    store_secrets(tx)
    add_jobs(tx, claimable)
    add_jobs(tx, 3, run_after="now() + interval '1 hour'")  # not claimable: not counted

    assert invoke(tx, max_invocations) == posts
    assert len(queued_requests(tx)) == posts


def test_expired_running_jobs_count_as_claimable(tx) -> None:
    store_secrets(tx)
    add_jobs(tx, 4, status="'running'", attempts="1", generation="1", lease_until="now() - interval '1 second'")
    assert invoke(tx) == 2


def test_expired_exhausted_jobs_are_failed_without_a_post(tx) -> None:
    store_secrets(tx)
    add_jobs(tx, 3, status="'running'", attempts="5", generation="5", lease_until="now() - interval '1 second'")

    assert invoke(tx) == 0
    assert queued_requests(tx) == []
    rows = tx.execute("select status, last_error_code, lease_until from document_jobs").fetchall()
    assert rows == [{"status": "failed", "last_error_code": "lease_expired", "lease_until": None}] * 3


def test_the_queued_request_is_what_the_worker_expects(tx) -> None:
    store_secrets(tx)
    add_jobs(tx, 1)

    assert invoke(tx) == 1

    [request] = queued_requests(tx)
    assert request["method"] == "POST"
    assert request["url"] == WORKER_URL
    assert request["headers"] == {"Content-Type": "application/json", "Authorization": f"Bearer {SECRET}"}
    assert json.loads(bytes(request["body"])) == {}
    assert request["timeout_milliseconds"] == 300_000, "as long as the worker's maxDuration"


@pytest.mark.parametrize(
    ("url", "secret", "missing"),
    [
        (WORKER_URL, None, "internal_function_secret"),
        (None, SECRET, "document_jobs_url"),
    ],
)
def test_missing_vault_secret_warns_and_posts_nothing(tx, url, secret, missing) -> None:
    warnings: list[str] = []  # a Diagnostic is valid only inside the handler: copy what we need
    tx.add_notice_handler(
        lambda n: warnings.append(n.message_primary) if n.severity_nonlocalized == "WARNING" else None
    )
    store_secrets(tx, url, secret)
    add_jobs(tx, 4)

    assert invoke(tx) == 0
    assert queued_requests(tx) == []
    assert len(warnings) == 1 and missing in warnings[0]


def test_max_invocations_must_be_positive(tx) -> None:
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="p_max_invocations"):
        invoke(tx, 0)


def test_record_inbound_email_kicks_the_worker_once(tx) -> None:
    store_secrets(tx)
    data = {"email_id": "em_kick", "from": "fax@example.jp", "to": ["inbox@example.com"], "subject": "FAX"}

    first = receive_email(tx, "em_kick", data)
    again = receive_email(tx, "em_kick", data)

    assert first["duplicate"] is False and again["duplicate"] is True
    assert (again["fax_received_email_id"], again["job_id"]) == (first["fax_received_email_id"], first["job_id"])
    assert len(queued_requests(tx)) == 1, "a redelivery does not kick again"
    assert tx.execute("select count(*) as n from document_jobs").fetchone()["n"] == 1
    email = tx.execute("select * from fax_received_emails").fetchone()
    assert (email["from_address"], email["to_addresses"], email["subject"], email["webhook_id"]) == (
        "fax@example.jp",
        ["inbox@example.com"],
        "FAX",
        "msg_1",
    )
    assert email["data"] == data


def test_the_dispatcher_sends_committed_requests(db) -> None:
    with receiver() as worker:
        store_secrets(db, worker.url + "/api/internal/document-jobs")
        receive_email(db, "em_sent")

        got = worker.get()

        assert (got.method, got.path) == ("POST", "/api/internal/document-jobs")
        assert got.headers["authorization"] == f"Bearer {SECRET}"
        assert json.loads(got.body) == {}
        deadline = time.monotonic() + 10
        while not (responses := db.execute("select status_code from net._http_response").fetchall()):
            assert time.monotonic() < deadline, "the answer was recorded in net._http_response"
            time.sleep(0.05)
        assert responses[0]["status_code"] == 200


def test_a_rolled_back_request_is_never_sent(db) -> None:
    with receiver() as worker:
        store_secrets(db, worker.url + "/kick")
        with db.transaction(force_rollback=True):
            receive_email(db, "em_gone")
        # Requests go out in order: once a later one has arrived, the rolled-back one never will.
        db.execute("select net.http_post(%s)", (worker.url + "/marker",))

        assert worker.get().path == "/marker"
        assert worker.drain() == []
        assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 0
