"""One invocation of the worker (spec 4): claim one job at a time, run it, record the outcome.

At most MAX_JOBS_PER_INVOCATION jobs, within a time budget of BUDGET from the start; nothing new
is claimed once less than CLAIM_RESERVE remains, since a job claimed without time to finish
would only burn an attempt. The clock is a parameter, so tests never sleep.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta
from enum import StrEnum

from pydantic import BaseModel

from lib import log
from lib.budget import Checkpoint, Clock, Deadline, DeadlinePassed
from lib.failures import Action, JobFailure
from lib.queue import Job, LeaseLost, Queue, QueueUnavailable

# invoke_document_jobs (supabase/migrations) fans out one call per this many claimable jobs.
MAX_JOBS_PER_INVOCATION = 3
BUDGET = timedelta(seconds=240)  # maxDuration is 300 s: the rest is margin
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
    elapsed_ms: int = 0


def run_invocation(
    queue: Queue, kind: str, run_job: RunJob, clock: Clock = time.monotonic, started: float | None = None
) -> Summary:
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
                job = queue.claim(kind)
            except QueueUnavailable as error:
                log.event("claim_failed", logging.ERROR, kind=kind, error=str(error))
                summary.stopped_because = "database_error"
                break
        if job is None:
            break
        summary.claimed += 1
        job_started = clock()
        ids = {"job_id": job.id, "generation": job.generation, "pid": os.getpid()}
        log.event("job_started", **ids, kind=job.kind, attempt=job.attempts)
        outcome, failure, claimed_with_completion, next_job = settle(
            queue, job, run_job, _checkpoint(queue, job, deadline), lambda: cannot_claim() is None
        )
        setattr(summary, outcome.value, getattr(summary, outcome.value) + 1)
        log.event(
            "job_finished",
            **ids,
            kind=job.kind,
            attempt=job.attempts,
            outcome=outcome.value,
            error_code=failure.code if failure else None,
            duration_ms=round((clock() - job_started) * 1000),
            lease_held_until=round(queue.held_until(job), 3),
        )
        job = next_job
    summary.elapsed_ms = round((clock() - started) * 1000)
    return summary


def _checkpoint(queue: Queue, job: Job, deadline: Deadline) -> Checkpoint:
    """Before each step: stop for the time budget, and extend the lease unless it is fresh (just
    claimed, or renewed by recording the previous attachment: one round trip saved per step)."""

    def step() -> None:
        if deadline.remaining() < STEP_RESERVE.total_seconds():
            raise JobFailure("time_budget", "the invocation's time budget ran out mid-job")
        if queue.lease_is_fresh(job):
            return
        try:
            queue.extend(job)
        except QueueUnavailable as error:
            raise JobFailure("database_error", str(error)) from error

    return Checkpoint(deadline, step)


def settle(
    queue: Queue,
    job: Job,
    run_job: RunJob,
    checkpoint: Checkpoint,
    may_claim_next: Callable[[], bool] = lambda: False,
) -> tuple[Outcome, JobFailure | None, bool, Job | None]:
    """Runs the job and records how it ended, while the lease is ours. A job that succeeds is
    completed and, when `may_claim_next()` says so then, the next job of its kind is claimed in the
    same call. Returns (outcome, failure, whether that claim was made, the job it claimed or None)."""
    try:
        run_job(job, checkpoint)
    except LeaseLost:
        return Outcome.LOST, None, False, None
    except JobFailure as failure:
        return _record_failure(queue, job, failure), failure, False, None
    except DeadlinePassed as error:  # a download or upload stopped at the deadline
        failure = JobFailure("time_budget", str(error))
        return _record_failure(queue, job, failure), failure, False, None
    except QueueUnavailable as error:  # e.g. recording an attachment: the database failed mid-job
        failure = JobFailure("database_error", str(error))
        return _record_failure(queue, job, failure), failure, False, None
    except Exception as error:  # a bug: retried like a transient failure, and visible in the logs
        logging.getLogger(__name__).exception("job %s raised", job.id)
        failure = JobFailure("internal_error", type(error).__name__)
        return _record_failure(queue, job, failure), failure, False, None
    if not may_claim_next():
        return _record(job, lambda: queue.complete(job), Outcome.COMPLETED), None, False, None
    try:
        completed, next_job = queue.complete_and_claim_next(job, job.kind)
    except QueueUnavailable as error:
        log.event("outcome_not_recorded", logging.ERROR, job_id=job.id, outcome="completed", error=str(error))
        return Outcome.UNRECORDED, None, False, None
    return (Outcome.COMPLETED if completed else Outcome.LOST), None, True, next_job


def _record_failure(queue: Queue, job: Job, failure: JobFailure) -> Outcome:
    rule = failure.rule
    if rule.action is Action.RELEASE:
        delay = max(rule.delay, failure.retry_after or timedelta(0))
        return _record(job, lambda: queue.release(job, delay, failure.code, failure.message), Outcome.RELEASED)
    retryable = rule.action is Action.RETRY
    outcome = Outcome.RETRIED if retryable and job.attempts < job.max_attempts else Outcome.FAILED
    return _record(
        job,
        lambda: queue.fail(job, failure.code, failure.message, retryable=retryable, retry_after=failure.retry_after),
        outcome,
    )


def _record(job: Job, write: Callable[[], None], outcome: Outcome) -> Outcome:
    try:
        write()
    except LeaseLost:
        return Outcome.LOST
    except QueueUnavailable as error:
        log.event("outcome_not_recorded", logging.ERROR, job_id=job.id, outcome=outcome.value, error=str(error))
        return Outcome.UNRECORDED
    return outcome
