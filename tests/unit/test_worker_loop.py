"""The invocation loop: job cap, time budget, lease loss, outcomes that cannot be recorded."""

from __future__ import annotations

import json
import logging

from lib.failures import FailureCode, JobFailure
from lib.limits import MAX_JOBS_PER_INVOCATION, TIME_BUDGET_FREE_RELEASES
from lib.worker.loop import run_invocation
from lib.worker.records import StoredAttachment, StoredVersion
from tests.unit.fake_supabase import job_row

# A completion claims the next job of the invocation's kinds, in the database's claim order
# (p_kinds; p_kind is what a worker of the previous deploy sends instead).
NEXT_OF_KINDS = {"p_kind": None, "p_kinds": ["fetch_email"], "p_lease": "300.000 seconds"}


def test_claims_one_at_a_time_and_at_most_three(queue, fake, clock) -> None:
    fake.jobs = [job_row(generation=n) for n in range(1, 6)]
    ran = []

    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: ran.append(job.id), clock)

    assert MAX_JOBS_PER_INVOCATION == 3
    assert (summary.claimed, summary.completed, summary.stopped_because) == (3, 3, "max_jobs")
    claims = [body for name, body in fake.calls if name == "claim_document_jobs"]
    assert claims == [{"p_kind": "fetch_email", "p_limit": 1, "p_lease": "300.000 seconds"}]
    held = [
        {"p_job_id": str(job_id), "p_generation": generation} for job_id, generation in zip(ran, (1, 2, 3), strict=True)
    ]
    assert fake.rpc_calls() == [
        ("complete_document_job_and_claim_next_v2", held[0] | NEXT_OF_KINDS),
        ("complete_document_job_and_claim_next_v2", held[1] | NEXT_OF_KINDS),
        ("complete_document_job_and_follow_up_v2", held[2]),
    ], "the next job is claimed with each completion, but not with the third: no more may be claimed, and the"
    " database is asked to start a follow-up invocation for what is left"
    assert len(fake.jobs) == 2, "two jobs left for the next invocation"


def test_stops_when_no_work_is_left(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: None, clock)
    assert (summary.claimed, summary.completed, summary.stopped_because) == (1, 1, "no_work")
    assert [name for name, _ in fake.calls] == ["claim_document_jobs", "complete_document_job_and_claim_next_v2"]


def test_a_completion_near_the_end_of_the_budget_claims_nothing_with_it(queue, fake, clock) -> None:
    fake.jobs = [job_row(), job_row()]

    # After 215 s, 25 s of the 240 s budget are left: too little to start another job.
    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: clock.advance(215), clock)

    assert (summary.claimed, summary.completed, summary.stopped_because) == (1, 1, "time_budget")
    assert [name for name, _ in fake.calls] == ["claim_document_jobs", "complete_document_job_and_follow_up_v2"]
    assert len(fake.jobs) == 1


def test_a_job_claimed_with_a_completion_whose_lease_was_lost_is_still_run(queue, fake, clock) -> None:
    fake.jobs = [job_row(generation=1), job_row(generation=2)]
    fake.guarded = False  # the first job's completion is refused: its lease was lost
    ran = []

    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: ran.append(job.generation), clock)

    assert ran == [1, 2]
    assert (summary.claimed, summary.lost) == (2, 2)


def test_claims_nothing_new_with_less_than_30_seconds_left(queue, fake, clock) -> None:
    fake.jobs = [job_row() for _ in range(3)]

    # Each job takes 106 s: after two, 240 - 212 = 28 s are left, too little to start a third.
    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: clock.advance(106), clock)

    assert (summary.claimed, summary.completed, summary.stopped_because) == (2, 2, "time_budget")
    assert len(fake.jobs) == 1


def test_a_job_still_running_when_the_budget_runs_out_is_released_without_delay(queue, fake, clock) -> None:
    fake.jobs = [job_row(), job_row()]

    def slow_job(job, checkpoint) -> None:
        checkpoint()  # first attachment: plenty of time
        clock.advance(225)
        checkpoint()  # 15 s left: not enough for another attachment

    summary = run_invocation(queue, "fetch_email", slow_job, clock)

    assert (summary.claimed, summary.released, summary.stopped_because) == (1, 1, "time_budget")
    [(_, release)] = fake.rpc_calls("release_document_job_and_follow_up_v2")  # the invocation's last call
    assert release["p_retry_after"] == "0.000 seconds"
    assert release["p_error_code"] == "time_budget"
    assert [name for name, _ in fake.rpc_calls()] == ["release_document_job_and_follow_up_v2"], (
        "the fresh lease is not extended, and the job is not failed"
    )


def budget_out(job, checkpoint) -> None:
    raise JobFailure(FailureCode.TIME_BUDGET, "the invocation's time budget ran out mid-job")


def test_a_time_budget_release_past_the_free_ones_says_its_attempt_counts(queue, fake, clock, caplog) -> None:
    fake.jobs = [job_row(attempts=2, budget_releases=TIME_BUDGET_FREE_RELEASES - 1),
                 job_row(attempts=2, budget_releases=TIME_BUDGET_FREE_RELEASES)]  # fmt: skip

    run_invocation(queue, "fetch_email", budget_out, clock)  # the first: still free
    run_invocation(queue, "fetch_email", budget_out, clock)  # the second: counted

    logged = [json.loads(r.getMessage()) for r in caplog.records if "time_budget_attempt_counted" in r.getMessage()]
    assert [(e["releases_in_a_row"], e["attempt"], e["free_releases"]) for e in logged] == [
        (TIME_BUDGET_FREE_RELEASES + 1, 2, TIME_BUDGET_FREE_RELEASES)]  # fmt: skip


def test_a_time_budget_release_that_the_database_ends_in_failed_counts_as_failed(queue, fake, clock) -> None:
    fake.jobs = [job_row(attempts=5, budget_releases=TIME_BUDGET_FREE_RELEASES)]
    fake.release_answer = "failed"  # release_document_job_v2 counted the last attempt
    summary = run_invocation(queue, "fetch_email", budget_out, clock)
    assert (summary.failed, summary.released) == (1, 0)


def test_a_lost_lease_stops_the_job_and_writes_nothing_more(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    fake.guarded = False  # extend answers false: another worker holds the job now
    after_checkpoint = []

    def job(job, checkpoint) -> None:
        clock.advance(31)  # over a tenth of the lease (300 s): the checkpoint extends it
        checkpoint()
        after_checkpoint.append("worked on")

    summary = run_invocation(queue, "fetch_email", job, clock)

    assert (summary.claimed, summary.lost) == (1, 1)
    assert after_checkpoint == []
    assert [name for name, _ in fake.rpc_calls()] == ["extend_document_job_lease_v2"]


def test_a_lease_lost_at_completion_counts_as_lost(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    fake.guarded = False
    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: None, clock)
    assert (summary.completed, summary.lost) == (0, 1)


def test_an_outcome_that_cannot_be_recorded_is_logged_and_the_loop_goes_on(queue, fake, clock, caplog) -> None:
    fake.jobs = [job_row(), job_row()]
    fake.unreachable_rpcs = {"complete_document_job_v2", "complete_document_job_and_claim_next_v2"}

    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: None, clock)

    assert (summary.claimed, summary.unrecorded, summary.completed) == (2, 2, 0)
    assert "outcome_not_recorded" in caplog.text


def test_a_failing_claim_ends_the_invocation(queue, fake, clock) -> None:
    fake.unreachable_rpcs = {"claim_document_jobs"}
    summary = run_invocation(queue, "fetch_email", lambda job, checkpoint: None, clock)
    assert (summary.claimed, summary.stopped_because) == (0, "database_error")


def test_an_unexpected_error_is_retried_as_internal_error(queue, fake, clock) -> None:
    fake.jobs = [job_row(attempts=1)]

    def broken(job, checkpoint) -> None:
        raise KeyError("bug")

    summary = run_invocation(queue, "fetch_email", broken, clock)

    assert summary.retried == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("internal_error", True)


def test_the_last_attempt_of_a_transient_failure_counts_as_failed(queue, fake, clock) -> None:
    fake.jobs = [job_row(attempts=5, max_attempts=5)]

    def unavailable(job, checkpoint) -> None:
        raise JobFailure("resend_unavailable", "HTTP 503")

    summary = run_invocation(queue, "fetch_email", unavailable, clock)
    assert (summary.retried, summary.failed) == (0, 1)


def test_a_database_failure_mid_job_is_a_transient_database_error(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    fake.unreachable_rpcs = {"record_document_attachment_v3"}

    stored = StoredAttachment(
        provider_attachment_id="a", filename=None, content_type=None,
        versions=(StoredVersion(version=1, size_bytes=1, sha256="0" * 64, bucket="b", storage_path="p"),),
    )  # fmt: skip

    def records(job, checkpoint) -> None:
        queue.record_attachment(job, stored)

    summary = run_invocation(queue, "fetch_email", records, clock)

    assert summary.retried == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("database_error", True)


def test_the_summary_reports_what_the_database_decided(queue, fake, clock, caplog) -> None:
    # Attempts are left by the job's own row, but the database answers that the failure was final
    # (a max_attempts lowered by hand, say): the worker reports the row, not its own arithmetic.
    caplog.set_level(logging.INFO)
    fake.jobs = [job_row(attempts=1, max_attempts=5)]
    fake.fail_answer = "failed"

    def unavailable(job, checkpoint) -> None:
        raise JobFailure("resend_unavailable", "HTTP 503")

    summary = run_invocation(queue, "fetch_email", unavailable, clock)

    assert (summary.retried, summary.failed) == (0, 1)
    [finished] = [json.loads(r.getMessage()) for r in caplog.records if '"job_finished"' in r.getMessage()]
    assert finished["outcome"] == "failed"


def test_a_fail_answered_with_null_means_the_lease_was_lost(queue, fake, clock) -> None:
    fake.jobs = [job_row()]

    def unavailable(job, checkpoint) -> None:
        fake.guarded = False  # another worker took the job meanwhile: fail answers null
        raise JobFailure("resend_unavailable", "HTTP 503")

    summary = run_invocation(queue, "fetch_email", unavailable, clock)
    assert (summary.retried, summary.failed, summary.lost) == (0, 0, 1)


def test_every_outcome_has_its_own_counter() -> None:
    from lib.worker.loop import Outcome, Summary

    for outcome in Outcome:
        summary = Summary()
        summary.add(outcome)
        counters = {name: value for name, value in summary.model_dump().items() if isinstance(value, int) and value}
        assert counters == {outcome.value: 1}


def test_a_checkpoint_extends_the_lease_only_once_a_tenth_of_it_has_passed(queue, fake, clock) -> None:
    fake.jobs = [job_row()]
    stored = StoredAttachment(
        provider_attachment_id="a", filename=None, content_type=None,
        versions=(StoredVersion(version=1, size_bytes=1, sha256="0" * 64, bucket="b", storage_path="p"),),
    )  # fmt: skip
    seen = []

    def steps(job, checkpoint) -> None:
        def step(label: str) -> None:
            checkpoint()
            seen.append((label, [name for name, _ in fake.rpc_calls()]))

        step("just claimed: fresh")
        clock.advance(29)
        step("29 s later: still fresh")
        clock.advance(2)
        step("31 s after the claim: extended")
        clock.advance(29)
        step("29 s after the extension: fresh")
        clock.advance(31)
        queue.record_attachment(job, stored)  # renews the lease too
        clock.advance(29)
        step("29 s after recording an attachment: fresh")
        clock.advance(2)
        step("31 s after it: extended")

    summary = run_invocation(queue, "fetch_email", steps, clock)

    assert summary.completed == 1
    extended = ["extend_document_job_lease_v2"]
    recorded = [*extended, "record_document_attachment_v3"]
    assert seen == [
        ("just claimed: fresh", []),
        ("29 s later: still fresh", []),
        ("31 s after the claim: extended", extended),
        ("29 s after the extension: fresh", extended),
        ("29 s after recording an attachment: fresh", recorded),
        ("31 s after it: extended", [*recorded, "extend_document_job_lease_v2"]),
    ]
    [(_, record)] = fake.rpc_calls("record_document_attachment_v3")
    assert record["p_lease"] == "300.000 seconds"
