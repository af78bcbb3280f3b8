"""Facts that live both in Python and in SQL (or vercel.json), because neither side can read the
other at run time: the deployed functions do not ship vercel.json, and a migration cannot import
Python. The database owns the bounds and timings (document_jobs_internal.limits(), the claim's
default lease, the backoff); Python owns the failure table (which failure is a release, and its
delay). Each fact is defined once on each side, and these tests fail as soon as the two disagree.

| fact | owner | readers (pinned here) |
|---|---|---|
| the longest lease, the longest retry-after | limits() | lib/limits.py MAX_LEASE, MAX_RETRY_AFTER |
| the default lease | claim_document_jobs' p_lease default | lib/limits.py DEFAULT_LEASE |
| the free time-budget releases | limits() | lib/limits.py TIME_BUDGET_FREE_RELEASES |
| the jobs per invocation | limits() | lib/limits.py MAX_JOBS_PER_INVOCATION |
| the invocation header | limits() | lib/limits.py INVOCATION_HEADER |
| the delay of each release | lib/failures.py FAILURES | release_causes' advice |
| the job kind | document_job_kinds | lib/worker/fetch_email.py KIND, record_inbound_email |
| the kinds the worker claims, in order | document_job_kinds.claim_order | lib/worker/kinds.py KINDS (the registry) |
| the kind a fetch's completion enqueues | the trigger document_jobs_prepare_fax | lib/worker/prepare_fax.py KIND |
| the worker's maxDuration | vercel.json | lib/worker/loop.py BUDGET, the worker POST's timeout |
| the webhook's deadline | lib/webhook/endpoint.py DEADLINE | the webhook's maxDuration (vercel.json) |
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from lib.failures import FAILURES, Action
from lib.limits import (
    DEFAULT_LEASE,
    INVOCATION_HEADER,
    MAX_JOBS_PER_INVOCATION,
    MAX_LEASE,
    MAX_RETRY_AFTER,
    TIME_BUDGET_FREE_RELEASES,
)
from lib.settings import WorkerSettings
from lib.supabase.client import TIMEOUT
from lib.webhook.endpoint import DEADLINE
from lib.worker import endpoint, fetch_email, kinds, prepare_fax, reconcile
from lib.worker.loop import BUDGET
from lib.worker.rate_limit import MAX_PAUSE, MAX_WAIT_MS, PROVIDER
from tests.support.database import add_jobs, invoke, queued_requests
from tests.support.vault import store_secrets

VERCEL_JSON = Path(__file__).parents[2] / "vercel.json"
WORKER_FUNCTION = "api/internal/document_jobs.py"


def max_duration(function: str = WORKER_FUNCTION) -> timedelta:
    return timedelta(seconds=json.loads(VERCEL_JSON.read_text())["functions"][function]["maxDuration"])


@pytest.mark.parametrize("claimable", [1, MAX_JOBS_PER_INVOCATION, MAX_JOBS_PER_INVOCATION + 1,
                                       2 * MAX_JOBS_PER_INVOCATION + 1])  # fmt: skip
def test_the_fan_out_counts_what_one_invocation_handles(tx, claimable) -> None:
    # invoke_document_jobs POSTs once per MAX_JOBS_PER_INVOCATION claimable jobs (lib/limits.py):
    # with another divisor a backlog would start too many workers, or too few.
    store_secrets(tx)
    add_jobs(tx, claimable)
    assert invoke(tx, 20) == math.ceil(claimable / MAX_JOBS_PER_INVOCATION)


def test_the_worker_post_waits_as_long_as_the_function_may_run(tx) -> None:
    store_secrets(tx)
    add_jobs(tx, 1)
    invoke(tx)
    [request] = queued_requests(tx)
    assert timedelta(milliseconds=request["timeout_milliseconds"]) == max_duration()


def test_the_budget_leaves_room_for_the_last_network_wait() -> None:
    # A wait started just before the budget runs out is capped by its own timeout (lib/budget.py):
    # the longest of them must still end before Vercel stops the function at maxDuration.
    longest_wait = max(WorkerSettings.model_fields["resend_timeout_seconds"].default, TIMEOUT.read or 0)
    assert BUDGET + timedelta(seconds=longest_wait) < max_duration()


def test_the_webhook_gives_up_on_the_database_before_vercel_stops_it() -> None:
    # Past maxDuration Vercel answers 504 itself and ends the instance with every request on it;
    # the deadline (at most 10 s, tests/unit/test_webhook.py) must end the call well before.
    assert max_duration("api/webhooks/resend.py") >= 2 * DEADLINE


def test_the_database_default_lease_is_the_workers(db) -> None:
    # One transaction: now() stands still, so a lease reads back as exactly what was granted.
    add_jobs(db, 1)
    with db.transaction(force_rollback=True):
        claimed = db.execute("select id, generation, lease_until - now() as lease from claim_document_jobs(%s)",
                             (fetch_email.KIND,)).fetchone()  # fmt: skip
    # The claim's default (extend_document_job_lease_v2 has none: the worker always names its lease).
    assert claimed["lease"] == DEFAULT_LEASE


def test_the_webhook_enqueues_the_kind_the_worker_claims(db) -> None:
    recorded = db.execute("select job_id from record_inbound_email('em_kind', 'msg_kind', '{}')").fetchone()
    kind = db.execute("select kind from document_jobs where id = %s", (recorded["job_id"],)).fetchone()["kind"]
    assert kind == fetch_email.KIND
    assert db.execute("select 1 from document_job_kinds where kind = %s", (fetch_email.KIND,)).fetchone()


def test_the_cron_enqueues_the_reconciliation_kind_the_worker_claims(db) -> None:
    job_id = db.execute("select enqueue_document_jobs_reconciliation() as id").fetchone()["id"]
    kind = db.execute("select kind from document_jobs where id = %s", (job_id,)).fetchone()["kind"]
    assert kind == reconcile.KIND and reconcile.KIND in endpoint.KINDS


def test_the_worker_runs_exactly_the_kinds_the_database_orders_for_claiming(db) -> None:
    # The fan-out counts the jobs of these kinds, and every claim follows this order: a kind the
    # registry lacks would start workers that never claim it, one the table lacks is never claimed.
    ordered = db.execute("select kind from document_job_kinds where claim_order is not null order by claim_order")
    assert tuple(row["kind"] for row in ordered) == kinds.KINDS == endpoint.KINDS


def test_a_fetch_completion_enqueues_the_kind_the_worker_prepares_faxes_with(tx) -> None:
    email_id = tx.execute("select fax_received_email_id as id from record_inbound_email('em_p', 'msg_p', '{}')"
                          ).fetchone()["id"]  # fmt: skip
    tx.execute(
        """insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, size_bytes,
                  sha256, bucket, storage_path) values (%s, 'a', 1, repeat('0', 64), 'fax-attachments', 'x/a.pdf')""",
        (email_id,),
    )
    completed = "update document_jobs set status = 'completed', finished_at = now() where kind = %s"
    tx.execute(completed, (fetch_email.KIND,))
    enqueued = tx.execute("select kind from document_jobs where status = 'queued'").fetchall()
    assert [row["kind"] for row in enqueued] == [prepare_fax.KIND]
    assert prepare_fax.KIND in kinds.RUNNERS


@pytest.mark.parametrize("function", ["claim_document_jobs('fetch_email', 1, %s)",
                                      "extend_document_job_lease_v2(gen_random_uuid(), 1, %s)"])  # fmt: skip
def test_the_longest_lease_the_worker_may_ask_for_is_the_databases(tx, function) -> None:
    # JOB_LEASE_SECONDS is capped at MAX_LEASE (lib/settings.py): a longer one would be refused by
    # the database on every call, and the worker would claim nothing.
    tx.execute(f"select * from {function}", (MAX_LEASE,))
    with pytest.raises(psycopg.errors.InvalidParameterValue), tx.transaction():
        tx.execute(f"select * from {function}", (MAX_LEASE + timedelta(seconds=1),))


def test_the_workers_bounds_are_the_databases(admin) -> None:
    limits = admin.execute("select * from document_jobs_internal.limits()").fetchone()
    assert (limits["lease_max"], limits["retry_after_max"]) == (MAX_LEASE, MAX_RETRY_AFTER)
    assert limits["free_budget_releases"] == TIME_BUDGET_FREE_RELEASES
    assert limits["jobs_per_invocation"] == MAX_JOBS_PER_INVOCATION
    assert limits["invocation_header"] == INVOCATION_HEADER


def _every(delay: timedelta) -> str:
    return "every hour" if delay == timedelta(hours=1) else f"every {round(delay.total_seconds() / 60)} minutes"


def test_the_outage_advice_says_when_the_waiting_jobs_are_tried_again(admin) -> None:
    # The advice an operator reads in the outage alert tells the release's delay (lib/failures.py).
    advice = {row["code"]: row["advice"] for row in admin.execute(
        "select code, advice from document_jobs_internal.release_causes").fetchall()}  # fmt: skip
    delays = {code.value: rule.delay for code, rule in FAILURES.items() if rule.action is Action.RELEASE and rule.check}
    said = {code: text for code, text in advice.items() if "tried again" in text}
    assert said, "some advice says when the jobs are tried again"
    for code, text in said.items():
        assert _every(delays[code]) in text, (code, text)


def test_an_invocation_counts_as_in_flight_for_as_long_as_the_function_may_run(tx) -> None:
    # The cap on invocations in flight (post_worker) counts a POST never answered until its
    # maxDuration has passed: longer, and a lost answer would hold a place; shorter, and a slow
    # invocation would be joined by one too many.
    for age in (max_duration() - timedelta(seconds=1), max_duration() + timedelta(seconds=1)):
        tx.execute("set role postgres")
        tx.execute(
            "insert into document_jobs_internal.worker_requests (request_id, created_at)"
            " values (%s, clock_timestamp() - %s)",
            (int(age.total_seconds()), age),
        )
    counted = tx.execute("select document_jobs_internal.invocations_in_flight() as n").fetchone()["n"]
    tx.execute("set role service_role")
    assert counted == 1


def test_the_longest_wait_for_a_slot_is_the_functions_maxduration(tx) -> None:
    # lib/worker/rate_limit.py never asks to wait longer than MAX_WAIT_MS, which the database accepts.
    assert timedelta(milliseconds=MAX_WAIT_MS) == max_duration()
    assert tx.execute("select reserve_provider_request(%s, %s) as r", (PROVIDER, MAX_WAIT_MS)).fetchone()["r"]
    with pytest.raises(psycopg.errors.InvalidParameterValue), tx.transaction():
        tx.execute("select reserve_provider_request(%s, %s)", (PROVIDER, MAX_WAIT_MS + 1))


def test_the_longest_pause_the_worker_asks_for_is_the_databases(tx) -> None:
    tx.execute("select note_provider_rate_limit(%s, null, %s)", (PROVIDER, MAX_PAUSE))
    with pytest.raises(psycopg.errors.InvalidParameterValue), tx.transaction():
        tx.execute("select note_provider_rate_limit(%s, null, %s)", (PROVIDER, MAX_PAUSE + timedelta(seconds=1)))


def test_the_health_checks_release_causes_are_the_rules_that_name_a_check(admin) -> None:
    # A release whose code is not in the table would never raise an outage: jobs waiting in silence.
    rows = admin.execute("select code, check_what from document_jobs_internal.release_causes").fetchall()
    assert {row["code"]: row["check_what"] for row in rows} == {
        code.value: rule.check for code, rule in FAILURES.items() if rule.check
    }


@pytest.mark.parametrize(("streak", "attempt_given_back"), [(TIME_BUDGET_FREE_RELEASES - 1, True),
                                                             (TIME_BUDGET_FREE_RELEASES, False)])  # fmt: skip
def test_the_free_time_budget_releases_are_the_workers(tx, streak, attempt_given_back) -> None:
    # The worker logs time_budget_attempt_counted from TIME_BUDGET_FREE_RELEASES (lib/limits.py).
    add_jobs(tx, 1)
    tx.execute("update document_jobs set budget_releases = %s", (streak,))
    job = tx.execute("select * from claim_document_jobs(%s)", (fetch_email.KIND,)).fetchone()
    tx.execute("select release_document_job_v2(%s, %s, '0 seconds', 'time_budget', 'out of time')",
               (job["id"], job["generation"]))  # fmt: skip
    attempts = tx.execute("select attempts from document_jobs").fetchone()["attempts"]
    assert attempts == (job["attempts"] - 1 if attempt_given_back else job["attempts"])
