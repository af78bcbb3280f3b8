"""The job queue's client: one method per RPC of supabase/migrations, over the service-role client.

The queue's logic lives in SQL; this only names the calls and types their answers. Every write
after a claim passes the job's (id, generation) and raises LeaseLost when the database says the
worker no longer holds the job: the caller must then stop and write nothing more for it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from lib.database import execute
from lib.fax_records import StoredAttachment
from lib.storable import storable_text

if TYPE_CHECKING:
    from supabase import Client

# The default p_lease of claim_document_jobs and extend_document_job_lease too (tests/test_constants.py).
DEFAULT_LEASE = timedelta(minutes=5)
# fail_document_job and release_document_job refuse a longer wait (document_jobs_internal.
# require_retry_after): a provider that asks for more (a quota) is asked again after this.
MAX_RETRY_AFTER = timedelta(days=1)


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


def interval(value: timedelta) -> str:
    """A Postgres interval literal PostgREST can cast."""
    return f"{value.total_seconds():.3f} seconds"


class Queue:
    def __init__(self, client: Client, lease: timedelta = DEFAULT_LEASE) -> None:
        self._client = client
        self.lease = lease

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

    @staticmethod
    def _holder(job: Job, params: dict[str, Any]) -> dict[str, Any]:
        return {"p_job_id": str(job.id), "p_generation": job.generation, **params}

    @staticmethod
    def _lost(function: str, job: Job) -> LeaseLost:
        return LeaseLost(f"{function}: job {job.id} generation {job.generation} is no longer held")

    def claim(self, kind: str) -> Job | None:
        rows = self._rpc("claim_document_jobs", {"p_kind": kind, "p_limit": 1, "p_lease": interval(self.lease)})
        return Job.model_validate(rows[0]) if rows else None

    def extend(self, job: Job) -> None:
        self._guarded("extend_document_job_lease", job, p_lease=interval(self.lease))

    def complete(self, job: Job) -> None:
        self._guarded("complete_document_job", job)

    def fail(
        self, job: Job, code: str, message: str, *, retryable: bool, retry_after: timedelta | None = None
    ) -> LeftIn:
        """Records the failure. The database decides: queued again (backoff) or failed."""
        return self._guarded_state(
            "fail_document_job",
            job,
            p_error_code=code,
            p_error_message=message,
            p_retryable=retryable,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)) if retry_after is not None else None,
        )

    def record_attachment(self, job: Job, attachment: StoredAttachment) -> None:
        """Records an uploaded attachment of the job's e-mail, only while the job is still ours."""
        self._guarded(
            "record_document_attachment",
            job,
            **{f"p_{name}": value for name, value in attachment.model_dump(mode="json").items()},
        )

    def release(self, job: Job, retry_after: timedelta, code: str | None = None, message: str | None = None) -> LeftIn:
        return self._guarded_state(
            "release_document_job",
            job,
            p_retry_after=interval(min(retry_after, MAX_RETRY_AFTER)),
            p_error_code=code,
            p_error_message=message,
        )
