"""The queue's functions against a model of its state machine (docs/QUEUE.md, "The job's life"), driven by Hypothesis.

A `RuleBasedStateMachine` calls the real functions as service_role, in random sequences: enqueue, claim,
and the worker's fenced calls as it makes them (the _v2 functions: extend, record an attachment with or
without renewing the lease, complete, complete and claim the next job, fail transient or permanent with or
without a retry-after, release), an operator's cancel and manual retry, and time passing (every timestamp
shifted into the past, no sleeping). A pure-Python model says, for each call,
what it must return and what every job's row must look like afterwards; after every step the database is
compared with the model. What this proves, for every sequence Hypothesis tries:

- a claim takes exactly the jobs the specification calls claimable (queued with run_after <= now(), or
  running with a passed lease; attempts < max_attempts), oldest run_after, created_at first, up to p_limit,
  and counts the attempt and bumps the generation; running jobs whose lease passed with no attempt left end
  in failed / lease_expired;
- every worker write succeeds only for the current generation of a running job, and answers
  {"held": true, "state": <the status it left>}; a refused one (a stale or forged generation, a finished
  or cancelled job) answers {"held": false, "state": null} and changes nothing, not even an attachment
  row; complete-and-claim-next claims the next job either way;
- an attachment is recorded only while held; recording it with a lease renews the lease and ends the
  streak of time-budget releases; from the fourth time-budget release in a row each counts its attempt;
- each ended attempt's outcome (completed, retried, released, failed, cancelled, lease_expired) is what
  the function that ended it says, on the job and in the attempt history;
- a transient failure waits the backoff for its attempt (1, 5, 15, 60 minutes, +-10 %) or the provider's
  longer retry-after; a permanent one, or the last attempt, is final; release gives the attempt back;
- a manual retry re-queues a failed job with attempts 0, and refuses with a clear 23505 error while another
  job for the same target is live; enqueue never makes a second live job for a target;
- at all times: at most one queued or running job per target, a lease exactly while running, generations
  never decrease, attempts never exceed max_attempts;
- a fetch_email job that completes for an e-mail with a recorded attachment enqueues the e-mail's
  prepare_fax job (queued, unless one is live): the model adds it, and since the machine claims
  fetch_email only (as a worker of the previous deploy does), it stays queued unless cancelled or retried.

The model is exact, not approximate: each call runs in its own transaction that first reads now(), the
time every function in that transaction sees. The one random value (the backoff's jitter) is checked
against its range and then read back. The every-minute cron job may sweep an expired, exhausted job at
any moment; the model accepts that sweep once the lease has passed, and the worker calls lock the rows
first, so the cron cannot change a row between the model's prediction and the call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from lib.limits import TIME_BUDGET_FREE_RELEASES
from tests.conftest import connect, reset

KIND = "fetch_email"
PREPARE = "prepare_fax"  # enqueued when a fetch with stored attachments completes (the trigger)
TARGETS = 3
MESSAGE_LIMIT = 4000
JITTER = 0.1
SLACK = timedelta(milliseconds=1)  # interval * double rounds to the microsecond
ANY_TEXT = "<any text>"  # the model's stand-in for a message whose wording is the implementation's

# About 10 s on a 2-core machine (a step is a handful of round trips). A failure takes longer: Hypothesis then
# spends up to 5 minutes shrinking it to a short sequence of steps.
SETTINGS = settings(
    max_examples=100,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

LEASES = st.sampled_from([timedelta(seconds=30), timedelta(minutes=5), timedelta(hours=1)])
RETRY_AFTERS = st.sampled_from([None, timedelta(0), timedelta(seconds=30), timedelta(minutes=10), timedelta(hours=2)])
ERROR_CODES = st.sampled_from(["timeout", "provider_unavailable", "bad_attachment"])
MESSAGES = st.sampled_from([None, "it went wrong", "x" * (MESSAGE_LIMIT + 100)])
MAX_ATTEMPTS = st.sampled_from([5, 5, 2, 1])  # fewer than 5: exhaustion within a short run
GENERATION_OFFSETS = st.sampled_from([0, 0, 0, 0, -1, 1])  # mostly as held, sometimes forged
TIME_STEPS = st.one_of(st.integers(1, 120), st.integers(120, 6 * 3600)).map(lambda s: timedelta(seconds=s))


def backoff(failed_attempt: int) -> timedelta:
    """The wait after the n-th failed attempt, before jitter."""
    if failed_attempt <= 1:
        return timedelta(minutes=1)
    return timedelta(minutes={2: 5, 3: 15}.get(failed_attempt, 60))


def truncated(message: str | None) -> str | None:
    return None if message is None else message[:MESSAGE_LIMIT]


class Holder(NamedTuple):
    """What a worker keeps after a claim; old ones stay around as stale holders."""

    job_id: UUID
    generation: int


@dataclass
class Job:
    id: UUID
    target: int
    max_attempts: int
    created_at: datetime
    run_after: datetime
    status: str = "queued"
    attempts: int = 0
    generation: int = 0
    lease_until: datetime | None = None
    started_at: datetime | None = None
    finished: bool = False
    last_error_code: str | None = None
    last_error_message: str | None = None
    budget_releases: int = 0
    kind: str = KIND
    attempt_outcome: str | None = None
    # (generation, outcome) of every ended attempt, as document_job_attempts must hold them
    history: list[tuple[int, str]] = field(default_factory=list)

    def end_attempt(self, outcome: str) -> None:
        self.attempt_outcome = outcome
        self.history.append((self.generation, outcome))

    @property
    def live(self) -> bool:
        return self.status in ("queued", "running")

    def claimable(self, now: datetime) -> bool:
        """Claimable by this machine's claims, which name fetch_email alone."""
        if self.kind != KIND or self.attempts >= self.max_attempts:
            return False
        if self.status == "queued":
            return self.run_after <= now
        return self.status == "running" and self.lease_until is not None and self.lease_until < now

    def sweepable(self, now: datetime) -> bool:
        """Running, lease passed, no attempt left: the sweep (in a claim, or the cron) fails it."""
        return (
            self.status == "running"
            and self.lease_until is not None
            and self.lease_until < now
            and self.attempts >= self.max_attempts
        )

    def sweep(self) -> None:
        self.status = "failed"
        self.lease_until = None
        self.finished = True
        self.last_error_code = "lease_expired"
        self.last_error_message = ANY_TEXT
        self.end_attempt("lease_expired")

    def held_by(self, generation: int) -> bool:
        return self.status == "running" and self.generation == generation

    def expected_row(self, actual: dict[str, Any]) -> dict[str, Any]:
        message = self.last_error_message
        if message == ANY_TEXT and actual["last_error_message"]:
            message = actual["last_error_message"]
        return {
            "status": self.status,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "generation": self.generation,
            "run_after": self.run_after,
            "lease_until": self.lease_until,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished": self.finished,
            "last_error_code": self.last_error_code,
            "last_error_message": message,
            "budget_releases": self.budget_releases,
            "attempt_outcome": self.attempt_outcome,
        }


def observed_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": row["status"],
        "attempts": row["attempts"],
        "max_attempts": row["max_attempts"],
        "generation": row["generation"],
        "run_after": row["run_after"],
        "lease_until": row["lease_until"],
        "created_at": row["created_at"],
        "started_at": row["started_at"],
        "finished": row["finished_at"] is not None,
        "last_error_code": row["last_error_code"],
        "last_error_message": row["last_error_message"],
        "budget_releases": row["budget_releases"],
        "attempt_outcome": row["attempt_outcome"],
    }


class QueueMachine(RuleBasedStateMachine):
    # Set by the test on a subclass: the superuser (setup, time travel, inspection) and service_role.
    admin: psycopg.Connection[dict]
    conn: psycopg.Connection[dict]

    targets: list[UUID]  # the e-mails the jobs are for: new ones for each example

    def __init__(self) -> None:
        super().__init__()
        # Each example starts from an empty queue and e-mails of its own, with no attachment: an
        # attachment's row, the record, is never deleted. (The test resets everything once; a delete of
        # the jobs and an insert here cost a fraction of a reset, which matters when Hypothesis replays
        # thousands of examples to shrink one.)
        self.admin.execute("delete from document_jobs")
        self.targets = [
            row["id"]
            for row in self.admin.execute(
                "insert into fax_received_emails (provider_email_id, data)"
                " select 'property-' || gen_random_uuid(), '{}' from generate_series(1, %s) returning id",
                (TARGETS,),
            ).fetchall()
        ]
        self.stored: set[tuple[UUID, str]] = set()  # (e-mail, attachment id) of every recorded attachment
        self.model: dict[UUID, Job] = {}  # in creation order
        self.held: list[Holder] = []  # every (job, generation) a claim ever handed out
        self.seen_generation: dict[UUID, int] = {}

    # -- helpers ------------------------------------------------------------------------------------

    def absorb_sweeps(self, rows: list[dict[str, Any]], now: datetime) -> None:
        """The cron may have failed an expired, exhausted job already: legal once the model allows it."""
        for row in rows:
            job = self.model.get(row["id"])
            if (
                job is not None
                and job.sweepable(now)
                and row["status"] == "failed"
                and row["last_error_code"] == "lease_expired"
            ):
                job.sweep()

    @contextmanager
    def transaction(self) -> Iterator[datetime]:
        """One transaction as service_role; yields its now(). Locks every job row first (the cron's sweep
        skips locked rows), so that what the model predicts from cannot change under the call."""
        with self.conn.transaction():
            now = self.conn.execute("select now() as now").fetchone()["now"]
            rows = self.conn.execute("select * from document_jobs for update").fetchall()
            self.absorb_sweeps(rows, now)
            yield now

    def row(self, job_id: UUID) -> dict[str, Any]:
        return self.conn.execute("select * from document_jobs where id = %s", (job_id,)).fetchone()

    def live_job(self, target: int, kind: str = KIND) -> Job | None:
        live = [job for job in self.model.values() if job.target == target and job.kind == kind and job.live]
        assert len(live) <= 1
        return live[0] if live else None

    def draw_holder(self, data: st.DataObject) -> tuple[Job, int]:
        """A worker's (job, generation): often the holder of a running job, else any holder ever handed out
        (mostly stale ones by then), sometimes with a forged generation."""
        current = [Holder(job.id, job.generation) for job in self.model.values() if job.status == "running"]
        pool = current if current and data.draw(st.booleans(), label="current holder") else self.held
        holder = data.draw(st.sampled_from(pool), label="holder")
        return self.model[holder.job_id], holder.generation + data.draw(GENERATION_OFFSETS, label="offset")

    def worker_call(self, job: Job, generation: int, function: str, *params: Any) -> tuple[bool, datetime, dict]:
        """Calls a fenced worker function (a _v2 one) as (job, generation) and checks its answer against the
        model: {"held": true, "state": ...} exactly when the model says the job is held, else
        {"held": false, "state": null} and nothing changed. Returns whether it held, the transaction's now()
        and the row after the call; the answer is in self.answer."""
        arguments = ", ".join(["%s"] * (2 + len(params)))
        with self.transaction() as now:
            expected = job.held_by(generation)
            before = self.row(job.id), self.attachments()
            self.answer = self.conn.execute(
                f"select {function}({arguments}) as answer", (job.id, generation, *params)
            ).fetchone()["answer"]
            after = self.row(job.id), self.attachments()
        held = self.answer["held"]
        assert held is expected, f"{function} as generation {generation} of {job}: expected {expected}, got {held}"
        if not held:
            assert self.answer == {"held": False, "state": None}, "the one answer of a lost lease"
            assert after == before, "a refused call changed the row"
        return held, now, after[0]

    def attachments(self) -> set[tuple[UUID, str]]:
        rows = self.conn.execute(
            "select fax_received_email_id, provider_attachment_id from fax_received_email_attachments"
            " where fax_received_email_id = any(%s)",
            (self.targets,),
        )
        return {(row["fax_received_email_id"], row["provider_attachment_id"]) for row in rows.fetchall()}

    def claimed(self, rows: list[dict[str, Any]], now: datetime, limit: int, lease: timedelta) -> None:
        """The model of a claim (its sweep first), checked against the rows it returned."""
        for job in self.model.values():
            if job.sweepable(now):
                job.sweep()
        claimable = sorted(
            (job for job in self.model.values() if job.claimable(now)), key=lambda job: (job.run_after, job.created_at)
        )
        expected = claimable[:limit]
        assert sorted(row["id"] for row in rows) == sorted(job.id for job in expected), (
            f"claim(limit={limit}) at {now}: expected {[job.id for job in expected]} of {claimable},"
            f" got {[row['id'] for row in rows]}"
        )
        for job in expected:
            if job.status == "running":  # its lease passed: the attempt that held it is over
                job.history.append((job.generation, "lease_expired"))
            job.status = "running"
            job.attempts += 1
            job.generation += 1
            job.lease_until = now + lease
            job.started_at = job.started_at or now
            job.attempt_outcome = None
        by_id = {row["id"]: row for row in rows}
        for job in expected:
            assert observed_row(by_id[job.id]) == job.expected_row(by_id[job.id]), "the returned row"
        self.held.extend(Holder(job.id, job.generation) for job in expected)

    # -- rules --------------------------------------------------------------------------------------

    @initialize(max_attempts=st.lists(MAX_ATTEMPTS, min_size=TARGETS, max_size=TARGETS))
    def a_job_per_target(self, max_attempts: list[int]) -> None:
        for email, attempts in enumerate(max_attempts):
            self.enqueue(email, attempts)

    @rule(email=st.integers(0, TARGETS - 1), max_attempts=MAX_ATTEMPTS)
    def enqueue(self, email: int, max_attempts: int) -> None:
        with self.transaction() as now:
            live = self.live_job(email)
            result = self.conn.execute(
                "select * from enqueue_document_job(%s, %s)", (KIND, self.targets[email])
            ).fetchone()
        if live is not None:
            assert result == {"job_id": live.id, "created": False}, "enqueue returns the live job"
            return
        assert result["created"] is True
        assert result["job_id"] not in self.model
        job = Job(id=result["job_id"], target=email, max_attempts=5, created_at=now, run_after=now)
        self.model[job.id] = job
        if max_attempts != job.max_attempts:  # fewer attempts: exhaustion within a short run
            self.admin.execute("update document_jobs set max_attempts = %s where id = %s", (max_attempts, job.id))
            job.max_attempts = max_attempts

    @precondition(lambda self: any(job.live for job in self.model.values()))
    @rule(limit=st.integers(1, 3), lease=LEASES)
    def claim(self, limit: int, lease: timedelta) -> None:
        # No locking here: the claim's own sweep is under test, and the model performs the same sweep.
        with self.conn.transaction():
            now = self.conn.execute("select now() as now").fetchone()["now"]
            rows = self.conn.execute("select * from claim_document_jobs(%s, %s, %s)", (KIND, limit, lease)).fetchall()
        self.claimed(rows, now, limit, lease)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), lease=LEASES)
    def extend(self, data: st.DataObject, lease: timedelta) -> None:
        job, generation = self.draw_holder(data)
        held, now, _ = self.worker_call(job, generation, "extend_document_job_lease_v2", lease)
        if held:
            assert self.answer["state"] == "running"
            job.lease_until = now + lease

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), attachment=st.sampled_from(["att_a", "att_b"]), lease=st.one_of(st.none(), LEASES))
    def record_attachment(self, data: st.DataObject, attachment: str, lease: timedelta | None) -> None:
        job, generation = self.draw_holder(data)
        # One object, one record: each e-mail's attachment at a key of its own, as the worker's keys are.
        key = f"fax_received_emails/{self.targets[job.target]}/{attachment}.pdf"
        held, now, _ = self.worker_call(
            job, generation, "record_document_attachment_v2", attachment, f"{attachment}.pdf", "application/pdf", 1,
            "0" * 64, "fax-attachments", key, lease,
        )  # fmt: skip
        if held:
            assert self.answer["state"] == "running"
            self.stored.add((self.targets[job.target], attachment))
            if lease is not None:  # renewed: and the streak of time-budget releases ends
                job.lease_until = now + lease
                job.budget_releases = 0

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        job, generation = self.draw_holder(data)
        held, now, _ = self.worker_call(job, generation, "complete_document_job_v2")
        if held:
            self.completed(job, now)

    def completed(self, job: Job, now: datetime) -> None:
        assert self.answer["state"] == "completed"
        job.status = "completed"
        job.lease_until = None
        job.finished = True
        job.end_attempt("completed")
        email = self.targets[job.target]
        if job.kind == KIND and any(e == email for e, _ in self.stored) and self.live_job(job.target, PREPARE) is None:
            row = self.conn.execute(
                "select id from document_jobs where kind = %s and fax_received_email_id = %s and status = 'queued'",
                (PREPARE, email),
            ).fetchone()
            assert row is not None, "a completed fetch with stored attachments enqueues its prepare_fax job"
            self.model[row["id"]] = Job(id=row["id"], target=job.target, max_attempts=5, created_at=now,
                                        run_after=now, kind=PREPARE)  # fmt: skip

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), lease=LEASES)
    def complete_and_claim_next(self, data: st.DataObject, lease: timedelta) -> None:
        """The worker's hot path: the completion and the claim of the next job, one transaction."""
        job, generation = self.draw_holder(data)
        with self.transaction() as now:
            expected = job.held_by(generation)
            answer = self.conn.execute(
                "select complete_document_job_and_claim_next_v2(%s, %s, %s, %s) as answer",
                (job.id, generation, KIND, lease),
            ).fetchone()["answer"]
        self.answer = {key: value for key, value in answer.items() if key != "next_job"}
        assert answer["held"] is expected, f"complete_and_claim_next as generation {generation} of {job}"
        if expected:
            self.completed(job, now)
        else:
            assert self.answer == {"held": False, "state": None}, "the one answer of a lost lease"
        # The next job is claimed whether or not the completion held (PostgREST hands it over as JSON).
        next_rows = [] if answer["next_job"] is None else [self.row(UUID(answer["next_job"]["id"]))]
        self.claimed(next_rows, now, 1, lease)

    @rule(data=st.data(), reason=MESSAGES)
    def cancel(self, data: st.DataObject, reason: str | None) -> None:
        """An operator cancels a job: mostly a live one, sometimes one that has finished."""
        live = [job for job in self.model.values() if job.live]
        pool = live if live and data.draw(st.booleans(), label="a live job") else list(self.model.values())
        if not pool:
            return
        job = data.draw(st.sampled_from(pool), label="job")
        with self.transaction():
            before = self.row(job.id)
            ok = self.conn.execute("select cancel_document_job(%s, %s) as ok", (job.id, reason)).fetchone()["ok"]
            after = self.row(job.id)
        assert ok is job.live, f"cancel of {job}"
        if not ok:
            assert after == before, "a refused cancel changed the row"
            return
        if job.status == "running":  # its worker's next fenced call finds the job no longer held
            job.end_attempt("cancelled")
        else:
            job.attempt_outcome = "cancelled"
        job.status = "failed"
        job.lease_until = None
        job.finished = True
        job.last_error_code = "cancelled"
        job.last_error_message = truncated(reason) or "cancelled by an operator"

    @precondition(lambda self: bool(self.held))
    @rule(
        data=st.data(),
        code=ERROR_CODES,
        message=MESSAGES,
        retryable=st.booleans(),
        retry_after=RETRY_AFTERS,
    )
    def fail(
        self, data: st.DataObject, code: str, message: str | None, retryable: bool, retry_after: timedelta | None
    ) -> None:
        job, generation = self.draw_holder(data)
        held, now, after = self.worker_call(
            job, generation, "fail_document_job_v2", code, message, retryable, retry_after
        )
        if not held:
            return
        job.lease_until = None
        job.last_error_code = code
        job.last_error_message = truncated(message)
        if retryable and job.attempts < job.max_attempts:
            base = backoff(job.attempts)
            wait = retry_after or timedelta(0)
            low, high = now + max(base * (1 - JITTER), wait), now + max(base * (1 + JITTER), wait)
            assert low - SLACK <= after["run_after"] <= high + SLACK, (
                f"after failed attempt {job.attempts} (retry_after {retry_after}): run_after - now ="
                f" {after['run_after'] - now}, expected between {low - now} and {high - now}"
            )
            job.status = "queued"
            job.run_after = after["run_after"]  # the jitter is random: read back once it is in range
            job.end_attempt("retried")
        else:
            job.status = "failed"
            job.finished = True
            job.end_attempt("failed")
        assert self.answer["state"] == job.status, "fail answers the state it left the job in"

    @precondition(lambda self: bool(self.held))
    @rule(
        data=st.data(),
        retry_after=RETRY_AFTERS,
        code=st.sampled_from([None, "time_budget", "permission_denied"]),
        message=MESSAGES,
    )
    def release(
        self, data: st.DataObject, retry_after: timedelta | None, code: str | None, message: str | None
    ) -> None:
        job, generation = self.draw_holder(data)
        held, now, _ = self.worker_call(job, generation, "release_document_job_v2", retry_after, code, message)
        if not held:
            return
        # From the fourth time-budget release in a row (nothing stored between), each counts its attempt.
        counted = code == "time_budget" and job.budget_releases >= TIME_BUDGET_FREE_RELEASES
        failed = counted and job.attempts >= job.max_attempts
        job.lease_until = None
        if code == "time_budget":
            job.budget_releases += 1
        if failed:
            job.status = "failed"
            job.finished = True
        else:
            job.status = "queued"
            job.run_after = now + (retry_after or timedelta(0))
        if not counted:
            job.attempts = max(job.attempts - 1, 0)
        if code is not None:
            job.last_error_code = code
            job.last_error_message = ANY_TEXT if counted else truncated(message)
        job.end_attempt("failed" if failed else "retried" if counted else "released")
        assert self.answer["state"] == job.status, "release answers the state it left the job in"

    @precondition(lambda self: any(job.status == "failed" for job in self.model.values()))
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        """An admin re-runs a job: mostly a failed one, sometimes one in another state."""
        failed = [job for job in self.model.values() if job.status == "failed"]
        pool = failed if data.draw(st.booleans(), label="a failed job") else list(self.model.values())
        job = data.draw(st.sampled_from(pool), label="job")
        error: psycopg.Error | None = None
        ok: bool | None = None
        with self.transaction() as now:
            live = self.live_job(job.target, job.kind)
            blocked = job.status == "failed" and live is not None
            before = self.row(job.id)
            try:
                with self.conn.transaction():  # a savepoint: the error leaves the outer transaction usable
                    ok = self.conn.execute("select retry_document_job(%s) as ok", (job.id,)).fetchone()["ok"]
            except psycopg.Error as caught:
                error = caught
            after = self.row(job.id)
        if blocked:
            assert isinstance(error, psycopg.errors.UniqueViolation), f"retry while {live} is live: {error!r}"
            assert "another job for the same target" in str(error), str(error)
            assert after == before, "a refused retry changed the row"
            return
        assert error is None, f"retry of {job}: {error!r}"
        assert ok is (job.status == "failed")
        if not ok:
            assert after == before, "a refused retry changed the row"
            return
        job.status = "queued"
        job.attempts = 0
        job.budget_releases = 0
        job.run_after = now
        job.lease_until = None
        job.finished = False

    @precondition(lambda self: bool(self.model))
    @rule(delta=TIME_STEPS)
    def pass_time(self, delta: timedelta) -> None:
        """Time passes: every timestamp moves into the past by delta, in the database and in the model."""
        self.admin.execute(
            """update document_jobs
                  set run_after = run_after - %(d)s, lease_until = lease_until - %(d)s,
                      created_at = created_at - %(d)s, started_at = started_at - %(d)s,
                      finished_at = finished_at - %(d)s""",
            {"d": delta},
        )
        for job in self.model.values():
            job.run_after -= delta
            job.created_at -= delta
            if job.lease_until is not None:
                job.lease_until -= delta
            if job.started_at is not None:
                job.started_at -= delta

    # -- invariants, against the database -----------------------------------------------------------

    @invariant()
    def database_matches_model(self) -> None:
        rows = self.admin.execute("select j.*, now() as observed_at from document_jobs j").fetchall()
        if rows:
            self.absorb_sweeps(rows, rows[0]["observed_at"])
        assert {row["id"] for row in rows} == set(self.model), "the same jobs exist"
        for row in rows:
            job = self.model[row["id"]]
            assert observed_row(row) == job.expected_row(row), f"job {job.id}"

    @invariant()
    def history_matches_model(self) -> None:
        """Every ended attempt is in document_job_attempts with the outcome the model gave it."""
        jobs = self.admin.execute("select j.*, now() as observed_at from document_jobs j").fetchall()
        if jobs:
            self.absorb_sweeps(jobs, jobs[0]["observed_at"])
        rows = self.admin.execute("select job_id, generation, outcome from document_job_attempts").fetchall()
        assert {(row["job_id"], row["generation"]): row["outcome"] for row in rows} == {
            (job.id, generation): outcome for job in self.model.values() for generation, outcome in job.history
        }

    @invariant()
    def attachments_only_while_held(self) -> None:
        assert self.attachments() == self.stored

    @invariant()
    def at_most_one_live_job_per_target(self) -> None:
        duplicates = self.admin.execute(
            """select kind, fax_received_email_id, count(*) as n from document_jobs
                where status in ('queued', 'running') group by 1, 2 having count(*) > 1"""
        ).fetchall()
        assert duplicates == []

    @invariant()
    def lease_exactly_while_running(self) -> None:
        wrong = self.admin.execute(
            "select id, status, lease_until from document_jobs where (status = 'running') <> (lease_until is not null)"
        ).fetchall()
        assert wrong == []

    @invariant()
    def generation_never_decreases(self) -> None:
        for row in self.admin.execute("select id, generation from document_jobs").fetchall():
            assert row["generation"] >= self.seen_generation.get(row["id"], 0), f"job {row['id']}"
            self.seen_generation[row["id"]] = row["generation"]

    @invariant()
    def attempts_within_max_attempts(self) -> None:
        wrong = self.admin.execute(
            "select id, attempts, max_attempts from document_jobs where attempts < 0 or attempts > max_attempts"
        ).fetchall()
        assert wrong == []


@pytest.mark.slow  # hundreds of generated sequences against the real database
def test_queue_functions_follow_the_state_machine(stack_env: dict[str, str], admin: psycopg.Connection[dict]) -> None:
    with connect(stack_env["DATABASE_URL"]) as conn:
        conn.execute("set role service_role")
        reset(admin)
        machine = type("BoundQueueMachine", (QueueMachine,), {"admin": admin, "conn": conn})
        try:
            run_state_machine_as_test(machine, settings=SETTINGS)
        finally:
            reset(admin)
