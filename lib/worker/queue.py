"""The job queue's client: one method per RPC of supabase/migrations, over the service-role client.

The queue's logic lives in SQL; this only names the calls and types their answers. Every write
after a claim calls a _v2 function with the job's (id, generation), whose one answer is Fenced
({"held", "state"}); `_fenced` raises LeaseLost when it says the worker no longer holds the job:
the caller must then stop and write nothing more for it. Each RPC's name is written out where it
is called, never built from parts, so that a search for a function of the migrations finds its caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

from lib.errors import DatabaseError
from lib.limits import DEFAULT_LEASE, MAX_RETRY_AFTER
from lib.originals import Read
from lib.storable import storable_text
from lib.supabase.rpc import execute, interval
from lib.worker.records import (
    FaxView,
    FetchStart,
    PrepareStart,
    ReconcileStart,
    StoredAttachment,
    StoredVersion,
    VerifyStart,
)

if TYPE_CHECKING:
    from supabase import Client

# A lease renewed less than this share of it ago is fresh: extending it again would cost a round
# trip and gain almost nothing (see Queue.lease_is_fresh).
FRESH_SHARE = 0.1


class LeaseLost(Exception):
    """The job's lease passed and another worker claimed it (or an operator changed it).
    `next_job` is the job complete_and_claim_next claimed all the same (ours), or None."""

    def __init__(self, function: str, job: Job, next_job: Job | None = None) -> None:
        super().__init__(f"{function}: job {job.id} generation {job.generation} is no longer held")
        self.next_job = next_job


# Where fail and release left a job they still held.
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


class Fenced(BaseModel):
    """The one answer of every fenced call (the _v2 functions): whether the job was still ours,
    and its status after the call. Some calls add to it, held or not: the next job claimed
    (complete and claim the next), the worker invocations started (the ..._and_follow_up writes);
    start_fetch_email_v2 adds what the job needs (its extra members, read as FetchStart)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    held: bool
    state: Literal["running", "queued", "failed", "completed"] | None
    next_job: Job | None = None
    follow_ups: int | None = None


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
        """The RPC's answer; DatabaseError (lib/supabase/rpc.py) when it fails."""
        # Text Postgres cannot store would make the call fail on every attempt (a file name with
        # U+0000 retried until the job fails): the same rule as the webhook's, for every argument.
        params = {name: storable_text(value) if isinstance(value, str) else value for name, value in params.items()}
        return execute(function, self._client.rpc(function, params))

    def _fenced(self, function: str, job: Job, **params: Any) -> Fenced:
        """Every write after a claim: the answer while the job is ours, LeaseLost once it is not."""
        answer = self._rpc(function, {"p_job_id": str(job.id), "p_generation": job.generation, **params})
        try:
            fenced = Fenced.model_validate(answer)
        except ValidationError as error:
            raise DatabaseError(function, f"unexpected answer {answer!r:.200}") from error
        # Counted whatever became of the job: the invocations were started all the same.
        self.follow_ups += fenced.follow_ups or 0
        if not fenced.held:
            raise LeaseLost(function, job, fenced.next_job)
        return fenced

    def _left_in(self, function: str, job: Job, **params: Any) -> LeftIn:
        state = self._fenced(function, job, **params).state
        if state not in ("queued", "failed"):
            raise DatabaseError(function, f"a held job left in {state!r}")
        return state

    def _claimed(self, job: Job | None, asked_at: float) -> Job | None:
        if job is not None:
            self._renewed(job, asked_at)
        return job

    def claim(self, kind: str) -> Job | None:
        asked_at = self._wall()
        rows = self._rpc("claim_document_jobs", {"p_kind": kind, "p_limit": 1, "p_lease": interval(self.lease)})
        return self._claimed(Job.model_validate(rows[0]) if rows else None, asked_at)

    def claim_first(self, kinds: tuple[str, ...]) -> Job | None:
        """A job of the first of `kinds` in the database's claim order (document_job_kinds.
        claim_order) that has one claimable, in one round trip."""
        if len(kinds) == 1:
            return self.claim(kinds[0])
        asked_at = self._wall()
        rows = self._rpc("claim_document_job_of_kinds", {"p_kinds": list(kinds), "p_lease": interval(self.lease)})
        return self._claimed(Job.model_validate(rows[0]) if rows else None, asked_at)

    def extend(self, job: Job) -> None:
        asked_at = self._wall()
        self._fenced("extend_document_job_lease_v2", job, p_lease=interval(self.lease))
        self._renewed(job, asked_at)

    def start_fetch_email(self, job: Job, max_wait_ms: int) -> FetchStart:
        """What a fetch_email job needs before it calls Resend, and its listing's slot of the
        Resend limiter (waiting at most max_wait_ms), in one round trip, while the job is ours."""
        fenced = self._fenced("start_fetch_email_v2", job, p_max_wait_ms=max_wait_ms)
        return FetchStart.model_validate(fenced.model_extra or {})

    def start_reconciliation(self, job: Job) -> ReconcileStart:
        """What a reconcile_emails job needs before it lists, while the job is ours."""
        fenced = self._fenced("start_reconciliation_v2", job)
        return ReconcileStart.model_validate(fenced.model_extra or {})

    def record_reconciled(
        self, job: Job, items: list[dict[str, Any]], unreadable: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Records a batch of listed e-mails the database does not have (the webhook's path) and
        notes the items that could not be read, only while the job is ours, renewing the lease in
        the same call. {"recorded", "late", "recorded_ids", "unreadable_new", ...}."""
        asked_at = self._wall()
        fenced = self._fenced(
            "record_reconciled_emails_v3", job, p_emails=items, p_unreadable=unreadable, p_lease=interval(self.lease)
        )
        self._renewed(job, asked_at)
        return dict(fenced.model_extra or {})

    def finish_reconciliation(
        self,
        job: Job,
        listed: int,
        newest: datetime | None,
        cursor: str | None,
        finding: str | None = None,
        unreadable: int = 0,
    ) -> bool:
        """How far the listing got, before the job completes: with a cursor the run continues in a
        follow-up job (True); with a finding it ended short and the watermark stays; with neither
        the watermark moves to `newest`."""
        fenced = self._fenced(
            "finish_reconciliation_v3",
            job,
            p_listed=listed,
            p_newest=newest.isoformat() if newest else None,
            p_cursor=cursor,
            p_finding=finding,
            p_unreadable=unreadable,
        )
        return bool((fenced.model_extra or {}).get("continues"))

    def start_prepare_fax(self, job: Job) -> PrepareStart:
        """What a prepare_fax job needs (its e-mail and the stored attachments), while the job is ours."""
        fenced = self._fenced("start_prepare_fax_v3", job)
        return PrepareStart.model_validate(fenced.model_extra or {})

    def record_fax_sender(self, job: Job, sender: dict[str, str | None]) -> None:
        """Records who sent the job's fax as the parser read it (for the announcements), only
        while the job is ours."""
        self._fenced("record_fax_sender_v1", job, p_sender=sender)

    def record_fax_view(self, job: Job, view: FaxView) -> None:
        """Records what was derived from one attachment (or why nothing was), only while the job is
        ours, renewing the lease in the same call."""
        asked_at = self._wall()
        self._fenced(
            "record_fax_attachment_view_v2",
            job,
            **{f"p_{name}": value for name, value in view.model_dump(mode="json").items()},
            p_lease=interval(self.lease),
        )
        self._renewed(job, asked_at)

    def start_verify_originals(self, job: Job) -> VerifyStart:
        """A verify_originals job's run (drawn on its first start) and the originals of it not read
        yet, while the job is ours."""
        fenced = self._fenced("start_verify_originals_v2", job)
        return VerifyStart.model_validate(fenced.model_extra or {})

    def record_original_checks(self, job: Job, run_id: int, reads: list[Read]) -> dict[str, Any]:
        """What was read of some originals of the job's run, judged and recorded by the database
        (which raises the outage original_mismatch), only while the job is ours, renewing the lease
        in the same call. {"checked", "mismatched", "mismatches", "alerts"}."""
        asked_at = self._wall()
        fenced = self._fenced(
            "record_original_checks_v2",
            job,
            p_run_id=run_id,
            p_checks=[read.model_dump(mode="json") for read in reads],
            p_lease=interval(self.lease),
        )
        self._renewed(job, asked_at)
        return dict(fenced.model_extra or {})

    def complete(self, job: Job, *, follow_up: bool = False) -> None:
        """`follow_up`: this is the invocation's last call; work still claimable starts invocations
        in the same transaction (within the database's cap)."""
        self._fenced("complete_document_job_and_follow_up_v2" if follow_up else "complete_document_job_v2", job)

    def complete_and_claim_next(self, job: Job, kinds: tuple[str, ...]) -> Job | None:
        """Completes `job` and claims the next job of `kinds` (in the database's claim order, as
        claim_first) in one round trip: the next job or None. When the lease of `job` was lost,
        LeaseLost carries the next job, which is ours all the same."""
        asked_at = self._wall()
        try:
            answer = self._fenced(
                "complete_document_job_and_claim_next_v2",
                job,
                p_kind=None,
                p_kinds=list(kinds),
                p_lease=interval(self.lease),
            )
        except LeaseLost as lost:
            self._claimed(lost.next_job, asked_at)
            raise
        return self._claimed(answer.next_job, asked_at)

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
        return self._left_in(
            "fail_document_job_and_follow_up_v2" if follow_up else "fail_document_job_v2",
            job,
            p_error_code=code,
            p_error_message=message,
            p_retryable=retryable,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)) if retry_after is not None else None,
        )

    def record_attachment(self, job: Job, attachment: StoredAttachment) -> int:
        """Records the stored versions of an attachment of the job's e-mail (all or none), only
        while the job is still ours, and renews the lease in the same call; answers how many
        versions the attachment has now (more than one: the database alerted original_differs)."""
        asked_at = self._wall()
        fenced = self._fenced(
            "record_document_attachment_v3",
            job,
            **{f"p_{name}": value for name, value in attachment.model_dump(mode="json").items()},
            p_lease=interval(self.lease),
        )
        self._renewed(job, asked_at)
        return int((fenced.model_extra or {}).get("versions", 1))

    def record_raw_message(
        self, job: Job, versions: tuple[StoredVersion, ...] | None, unavailable: str | None = None
    ) -> None:
        """Records the stored versions of the job's e-mail's raw message, or why there is none
        (`unavailable`), only while the job is ours, renewing the lease in the same call."""
        asked_at = self._wall()
        self._fenced(
            "record_raw_message_v2",
            job,
            p_versions=None if versions is None else [v.model_dump(mode="json") for v in versions],
            p_unavailable=unavailable,
            p_lease=interval(self.lease),
        )
        self._renewed(job, asked_at)

    def may_discard(self, job: Job, bucket: str, key: str, size: int, sha256: str, reason: str) -> bool:
        """Whether the object the job uploaded at `key` and found wrong may be deleted: the
        database says yes only while the job is ours and no row records the object, and then
        never lets that key be recorded (discard_unrecorded_object_v2). LeaseLost once the job is
        not ours."""
        fenced = self._fenced(
            "discard_unrecorded_object_v2",
            job,
            p_bucket=bucket,
            p_storage_path=key,
            p_size_bytes=size,
            p_sha256=sha256,
            p_reason=reason[:500],
        )
        return bool((fenced.model_extra or {}).get("discard"))

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
        return self._left_in(
            "release_document_job_and_follow_up_v2" if follow_up else "release_document_job_v2",
            job,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)),
            p_error_code=code,
            p_error_message=message,
        )
