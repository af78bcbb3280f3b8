"""One invocation of the worker: claim one job at a time, run it, record the outcome.

At most MAX_JOBS_PER_INVOCATION jobs, within a time budget of BUDGET from the start; nothing new
is claimed once less than CLAIM_RESERVE remains, since a job claimed without time to finish
would only burn an attempt. An invocation that stops at either while work is left starts its
follow-up in its last write (the database decides whether work is claimable and the cap allows
one), so a burst drains without waiting for the cron. The clock is a parameter, so tests never
sleep.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any, assert_never

from pydantic import BaseModel

from lib import log
from lib.budget import Checkpoint, Clock, Deadline, DeadlinePassed
from lib.errors import DatabaseError
from lib.failures import Action, FailureCode, JobFailure, database_failure
from lib.limits import MAX_JOBS_PER_INVOCATION, TIME_BUDGET_FREE_RELEASES
from lib.worker.queue import Job, LeaseLost, Queue

# vercel.json's maxDuration (300 s) is what the budget leaves a margin to: tests/database/test_limits_mirror.py
# fails when either side changes alone.
BUDGET = timedelta(seconds=240)
CLAIM_RESERVE = timedelta(seconds=30)
STEP_RESERVE = timedelta(seconds=20)  # the least time left to start on one more attachment

RunJob = Callable[[Job, Checkpoint], object]


class Outcome(StrEnum):
    COMPLETED = "completed"
    RETRIED = "retried"
    FAILED = "failed"
    RELEASED = "released"
    LOST = "lost"  # the lease was lost: nothing more was written
    UNRECORDED = "unrecorded"  # the outcome could not be written: the lease will pass and the job run again


class Summary(BaseModel):
    claimed: int = 0
    completed: int = 0
    retried: int = 0
    failed: int = 0
    released: int = 0
    lost: int = 0
    unrecorded: int = 0
    stopped_because: str = "no_work"
    follow_ups: int = 0  # invocations the last write started
    elapsed_ms: int = 0

    def add(self, outcome: Outcome) -> None:
        match outcome:
            case Outcome.COMPLETED:
                self.completed += 1
            case Outcome.RETRIED:
                self.retried += 1
            case Outcome.FAILED:
                self.failed += 1
            case Outcome.RELEASED:
                self.released += 1
            case Outcome.LOST:
                self.lost += 1
            case Outcome.UNRECORDED:
                self.unrecorded += 1
            case _:
                assert_never(outcome)


def run_invocation(
    queue: Queue,
    kind: str | Sequence[str],
    run_job: RunJob,
    clock: Clock = time.monotonic,
    started: float | None = None,
) -> Summary:
    """`kind`: the kind this invocation works on, or several (the worker passes
    lib/worker/kinds.py KINDS). Every claim, the loop's own (its first, and after a job that did
    not complete) and a completion's in the same call, takes a job of the first of them in the
    database's claim order (document_job_kinds.claim_order) that has one claimable: a
    fetch_email completion chains into a reconciliation, the next fetch, or a prepare_fax job."""
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    started = clock() if started is None else started
    deadline = Deadline(started + BUDGET.total_seconds(), clock)
    summary = Summary()

    def cannot_claim() -> str | None:
        """Why no further job may be claimed now, or None when one may."""
        if summary.claimed >= MAX_JOBS_PER_INVOCATION:
            return "max_jobs"
        if deadline.remaining() < CLAIM_RESERVE.total_seconds():
            return "time_budget"
        return None

    # A job that completes asks for the next one in the same call when another may be claimed
    # (Queue.complete_and_claim_next); otherwise the loop claims on its own, or stops.
    job: Job | None = None
    claimed_with_completion = False
    while True:
        if not claimed_with_completion:
            stop = cannot_claim()
            if stop is not None:
                summary.stopped_because = stop
                break
            try:
                job = queue.claim_first(kinds)
            except DatabaseError as error:
                failure = database_failure(error)
                log.event("claim_failed", logging.ERROR, kind=",".join(kinds), error=failure.message,
                          error_code=failure.code, check=failure.rule.check)  # fmt: skip
                summary.stopped_because = failure.code
                break
        if job is None:
            break
        summary.claimed += 1
        job_started = clock()
        ids: dict[str, Any] = {"job_id": job.id, "generation": job.generation, "pid": os.getpid()}
        log.event("job_started", **ids, kind=job.kind, attempt=job.attempts)
        settled = settle(queue, job, run_job, _checkpoint(queue, job, deadline), cannot_claim, kinds)
        summary.add(settled.outcome)
        log.event(
            "job_finished",
            **ids,
            kind=job.kind,
            attempt=job.attempts,
            outcome=settled.outcome.value,
            error_code=settled.failure.code if settled.failure else None,
            # Not the job's own (a key, a setting, a quota): what to check, in the line itself.
            check=settled.failure.rule.check if settled.failure else None,
            duration_ms=round((clock() - job_started) * 1000),
            lease_held_until=round(queue.held_until(job), 3),
        )
        if settled.stop is not None:
            summary.stopped_because = settled.stop
            break
        claimed_with_completion, job = settled.claimed_next, settled.next_job
    summary.follow_ups = queue.follow_ups
    summary.elapsed_ms = round((clock() - started) * 1000)
    return summary


def _checkpoint(queue: Queue, job: Job, deadline: Deadline) -> Checkpoint:
    """Before each step: stop for the time budget, and extend the lease unless it is fresh (just
    claimed, or renewed by recording the previous attachment: one round trip saved per step)."""

    def step() -> None:
        if deadline.remaining() < STEP_RESERVE.total_seconds():
            raise JobFailure(FailureCode.TIME_BUDGET, "the invocation's time budget ran out mid-job")
        if queue.lease_is_fresh(job):
            return
        try:
            queue.extend(job)
        except DatabaseError as error:
            raise database_failure(error) from error

    return Checkpoint(deadline, step)


# Stops of an invocation whose last write starts its follow-up: it could go on, but may not.
FOLLOWED_UP_STOPS = ("max_jobs", "time_budget")


@dataclass(frozen=True)
class Settled:
    outcome: Outcome
    failure: JobFailure | None = None
    claimed_next: bool = False  # the completion asked for the next job (which may be None)
    next_job: Job | None = None
    stop: str | None = None  # why the invocation stops after this job; None: it goes on


def settle(
    queue: Queue,
    job: Job,
    run_job: RunJob,
    checkpoint: Checkpoint,
    cannot_claim: Callable[[], str | None] = lambda: "max_jobs",
    next_kinds: tuple[str, ...] | None = None,
) -> Settled:
    """Runs the job and records how it ended, while the lease is ours. `cannot_claim()`, asked
    once the job has run, says whether the invocation stops after it: if not, a job that succeeds
    is completed and the next job of `next_kinds` (its own kind unless given) claimed in the
    same call; if it stops at its job cap or time budget, the write asks for a follow-up
    invocation. A wait for a Resend slot that the budget cannot afford stops it too, without a
    follow-up: the limiter is the bottleneck."""
    try:
        run_job(job, checkpoint)
    except LeaseLost:
        return Settled(Outcome.LOST, stop=cannot_claim())
    except Exception as error:
        failure = _as_failure(job, error)
        stop = "rate_limit_wait" if failure.code is FailureCode.RESEND_RATE_LIMIT_WAIT else cannot_claim()
        return Settled(_record_failure(queue, job, failure, stop in FOLLOWED_UP_STOPS), failure, stop=stop)
    stop = cannot_claim()
    if stop is not None:
        return Settled(_complete(queue, job, stop in FOLLOWED_UP_STOPS), stop=stop)
    try:
        next_job = queue.complete_and_claim_next(job, next_kinds or (job.kind,))
    except LeaseLost as lost:
        return Settled(Outcome.LOST, None, True, lost.next_job)
    except DatabaseError as error:
        log.event("outcome_not_recorded", logging.ERROR, job_id=job.id, write="complete", error=str(error))
        return Settled(Outcome.UNRECORDED)
    return Settled(Outcome.COMPLETED, None, True, next_job)


def _as_failure(job: Job, error: Exception) -> JobFailure:
    if isinstance(error, JobFailure):
        return error
    if isinstance(error, DeadlinePassed):  # a download or upload stopped at the deadline
        return JobFailure(FailureCode.TIME_BUDGET, str(error))
    if isinstance(error, DatabaseError):  # e.g. recording an attachment: the database failed mid-job
        return database_failure(error)
    # A bug: retried like a transient failure, and visible in the logs.
    log.event("job_raised", logging.ERROR, job_id=job.id, **log.exception_fields(error))
    return JobFailure(FailureCode.INTERNAL_ERROR, type(error).__name__)


def _record_failure(queue: Queue, job: Job, failure: JobFailure, follow_up: bool) -> Outcome:
    rule = failure.rule
    if rule.action is Action.RELEASE:
        delay = max(rule.delay, failure.retry_after or timedelta(0))
        if failure.code is FailureCode.TIME_BUDGET and job.budget_releases >= TIME_BUDGET_FREE_RELEASES:
            # release_document_job counts this attempt (it may end the job in `failed`): say why.
            log.event("time_budget_attempt_counted", logging.WARNING, job_id=job.id, attempt=job.attempts,
                      max_attempts=job.max_attempts, releases_in_a_row=job.budget_releases + 1,
                      free_releases=TIME_BUDGET_FREE_RELEASES)  # fmt: skip

        def release() -> Outcome:
            left_in = queue.release(job, delay, failure.code, failure.message, follow_up=follow_up)
            return Outcome.RELEASED if left_in == "queued" else Outcome.FAILED

        return _record(job, "release", release)

    def fail() -> Outcome:
        # Retried or final is the database's decision (attempts left, p_retryable): report it.
        left_in = queue.fail(
            job,
            failure.code,
            failure.message,
            retryable=rule.action is Action.RETRY,
            retry_after=failure.retry_after,
            follow_up=follow_up,
        )
        return Outcome.RETRIED if left_in == "queued" else Outcome.FAILED

    return _record(job, "fail", fail)


def _complete(queue: Queue, job: Job, follow_up: bool) -> Outcome:
    def complete() -> Outcome:
        queue.complete(job, follow_up=follow_up)
        return Outcome.COMPLETED

    return _record(job, "complete", complete)


def _record(job: Job, write_name: str, write: Callable[[], Outcome]) -> Outcome:
    """The outcome `write` reports, LOST when the job is no longer ours, UNRECORDED when the
    database could not be told (the lease will pass and the job run again)."""
    try:
        return write()
    except LeaseLost:
        return Outcome.LOST
    except DatabaseError as error:
        log.event("outcome_not_recorded", logging.ERROR, job_id=job.id, write=write_name, error=str(error))
        return Outcome.UNRECORDED
