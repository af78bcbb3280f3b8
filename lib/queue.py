"""The job queue's client: one method per RPC of supabase/migrations, over the service-role client.

The queue's logic lives in SQL; this only names the calls and types their answers. Every write
after a claim passes the job's (id, generation) and raises LeaseLost when the database says the
worker no longer holds the job: the caller must then stop and write nothing more for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from lib.database import DatabaseError, execute, interval
from lib.fax_records import FetchStart, StoredAttachment
from lib.storable import storable_text

if TYPE_CHECKING:
    from supabase import Client

# The default p_lease of claim_document_jobs and extend_document_job_lease too (tests/test_constants.py).
DEFAULT_LEASE = timedelta(minutes=5)
# The database refuses a longer p_lease (claim_document_jobs, extend_document_job_lease,
# record_document_attachment): a worker set above it could claim nothing at all.
MAX_LEASE = timedelta(hours=1)
# fail_document_job and release_document_job refuse a longer wait (document_jobs_internal.
# require_retry_after): a provider that asks for more (a quota) is asked again after this.
MAX_RETRY_AFTER = timedelta(days=1)
# A lease renewed less than this share of it ago is fresh: extending it again would cost a round
# trip and gain almost nothing (see Queue.lease_is_fresh).
FRESH_SHARE = 0.1


class LeaseLost(Exception):
    """The job's lease passed and another worker claimed it (or an operator changed it)."""


# Where fail_document_job and release_document_job left a job they still held.
LeftIn = Literal["queued", "failed"]


class Job(BaseModel):
    """A row of public.document_jobs, as claim_document_jobs returns it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    kind: str
    fax_received_email_id: UUID | None
    status: str
    attempts: int
    max_attempts: int
    generation: int
    run_after: datetime
    lease_until: datetime | None
    created_at: datetime
    started_at: datetime | None
    # Releases for the time budget since the last attachment stored (release_document_job bounds them).
    budget_releases: int = 0


class Queue:
    """`wall` is the wall clock (time.time): the logs of different processes are compared by it."""

    def __init__(self, client: Client, lease: timedelta = DEFAULT_LEASE, wall: Callable[[], float] = time.time) -> None:
        self._client = client
        self.lease = lease
        self._wall = wall
        # job id and generation -> until when the job is known to be ours (wall clock, read before
        # the claim or renewal was asked for, so never later than the database's lease_until).
        self._held: dict[tuple[UUID, int], float] = {}
        # Worker invocations the ..._and_follow_up writes started (the database decides how many).
        self.follow_ups = 0

    def held_until(self, job: Job) -> float:
        return self._held.get((job.id, job.generation), 0.0)

    def lease_is_fresh(self, job: Job) -> bool:
        """True while less than FRESH_SHARE of the lease has passed since the claim or the last renewal
        (extend, or recording an attachment): a checkpoint then need not extend it again."""
        lease = self.lease.total_seconds()
        return self.held_until(job) - self._wall() > lease * (1 - FRESH_SHARE)

    def _renewed(self, job: Job, asked_at: float) -> None:
        self._held[(job.id, job.generation)] = asked_at + self.lease.total_seconds()

    def _rpc(self, function: str, params: dict[str, Any]) -> Any:
        """The RPC's answer; DatabaseError (lib/database.py) when it fails."""
        # Text Postgres cannot store would make the call fail on every attempt (a file name with
        # U+0000 retried until the job fails): the same rule as the webhook's, for every argument.
        params = {name: storable_text(value) if isinstance(value, str) else value for name, value in params.items()}
        return execute(function, self._client.rpc(function, params))

    def _guarded(self, function: str, job: Job, **params: Any) -> None:
        if self._rpc(function, self._holder(job, params)) is not True:
            raise self._lost(function, job)

    def _guarded_state(self, function: str, job: Job, **params: Any) -> LeftIn:
        """For the writes that answer the state they left the job in, or null once it is not ours."""
        state = self._rpc(function, self._holder(job, params))
        if state not in ("queued", "failed"):
            raise self._lost(function, job)
        return "queued" if state == "queued" else "failed"

    def _followed_up(self, function: str, job: Job, answer_key: str, **params: Any) -> Any:
        """A write of an invocation's last call (..._and_follow_up): its own answer, under
        `answer_key`; the follow-up invocations it started are counted, whatever became of the job."""
        answer = self._rpc(f"{function}_and_follow_up", self._holder(job, params))
        if not isinstance(answer, dict) or not isinstance(answer.get("follow_ups"), int):
            raise DatabaseError(f"{function}_and_follow_up", f"unexpected answer {answer!r:.200}")
        self.follow_ups += answer["follow_ups"]
        return answer.get(answer_key)

    def _written_state(self, function: str, job: Job, follow_up: bool, **params: Any) -> LeftIn:
        if not follow_up:
            return self._guarded_state(function, job, **params)
        state = self._followed_up(function, job, "left_in", **params)
        if state not in ("queued", "failed"):
            raise self._lost(function, job)
        return "queued" if state == "queued" else "failed"

    @staticmethod
    def _holder(job: Job, params: dict[str, Any]) -> dict[str, Any]:
        return {"p_job_id": str(job.id), "p_generation": job.generation, **params}

    @staticmethod
    def _lost(function: str, job: Job) -> LeaseLost:
        return LeaseLost(f"{function}: job {job.id} generation {job.generation} is no longer held")

    def _claimed(self, row: dict[str, Any] | None, asked_at: float) -> Job | None:
        if not row:
            return None
        job = Job.model_validate(row)
        self._renewed(job, asked_at)
        return job

    def claim(self, kind: str) -> Job | None:
        asked_at = self._wall()
        rows = self._rpc("claim_document_jobs", {"p_kind": kind, "p_limit": 1, "p_lease": interval(self.lease)})
        return self._claimed(rows[0] if rows else None, asked_at)

    def extend(self, job: Job) -> None:
        asked_at = self._wall()
        self._guarded("extend_document_job_lease", job, p_lease=interval(self.lease))
        self._renewed(job, asked_at)

    def start_fetch_email(self, job: Job, max_wait_ms: int) -> FetchStart:
        """What a fetch_email job needs before it calls Resend, and its listing's slot of the
        Resend limiter (waiting at most max_wait_ms), in one round trip, while the job is ours."""
        answer = self._rpc("start_fetch_email", self._holder(job, {"p_max_wait_ms": max_wait_ms}))
        if not answer:  # null: the job is no longer ours
            raise self._lost("start_fetch_email", job)
        return FetchStart.model_validate(answer)

    def complete(self, job: Job, *, follow_up: bool = False) -> None:
        """`follow_up`: this is the invocation's last call; work still claimable starts invocations
        in the same transaction (within the database's cap)."""
        if not follow_up:
            self._guarded("complete_document_job", job)
        elif self._followed_up("complete_document_job", job, "completed") is not True:
            raise self._lost("complete_document_job_and_follow_up", job)

    def complete_and_claim_next(self, job: Job, kind: str) -> tuple[bool, Job | None]:
        """Completes `job` and claims the next job of `kind` in one round trip: (whether `job` was
        completed, the next job or None). False means the lease of `job` was lost; the next job,
        if any, is ours all the same."""
        asked_at = self._wall()
        answer = self._rpc(
            "complete_document_job_and_claim_next",
            self._holder(job, {"p_kind": kind, "p_lease": interval(self.lease)}),
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("completed"), bool):
            raise DatabaseError("complete_document_job_and_claim_next", f"unexpected answer {answer!r:.200}")
        return answer["completed"], self._claimed(answer.get("next_job"), asked_at)

    def fail(
        self,
        job: Job,
        code: str,
        message: str,
        *,
        retryable: bool,
        retry_after: timedelta | None = None,
        follow_up: bool = False,
    ) -> LeftIn:
        """Records the failure. The database decides: queued again (backoff) or failed."""
        return self._written_state(
            "fail_document_job",
            job,
            follow_up,
            p_error_code=code,
            p_error_message=message,
            p_retryable=retryable,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)) if retry_after is not None else None,
        )

    def record_attachment(self, job: Job, attachment: StoredAttachment) -> None:
        """Records an uploaded attachment of the job's e-mail, only while the job is still ours,
        and renews the lease in the same call."""
        asked_at = self._wall()
        self._guarded(
            "record_document_attachment",
            job,
            **{f"p_{name}": value for name, value in attachment.model_dump(mode="json").items()},
            p_lease=interval(self.lease),
        )
        self._renewed(job, asked_at)

    def release(
        self,
        job: Job,
        retry_after: timedelta,
        code: str | None = None,
        message: str | None = None,
        *,
        follow_up: bool = False,
    ) -> LeftIn:
        """Queued again, attempt given back; `failed` only when a time_budget release was one too
        many in a row and the attempt it counted was the last."""
        return self._written_state(
            "release_document_job",
            job,
            follow_up,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)),
            p_error_code=code,
            p_error_message=message,
        )
