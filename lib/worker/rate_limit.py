"""The worker's end of the Resend rate limit that every worker shares, in the database
(supabase/migrations/..._document_jobs_rate_limit.sql): before each Resend API request the worker
waits for a slot the database handed out, and it tells the database what Resend said about the
limit.

The database answers a wait relative to its own clock, in milliseconds; the worker sleeps that
long from when the answer arrived, so it can only be late for its slot, never early, whatever
its own clock says. A slot further away than the invocation's time budget allows is not taken:
the job is released without spending an attempt (resend_rate_limit_wait), and so is a job whose
request met a 429 anyway (resend_rate_limited), which also keeps every worker off Resend for the
429's retry-after.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

import httpx

from lib import log
from lib.budget import Clock, Deadline
from lib.errors import DatabaseError
from lib.failures import FailureCode, JobFailure, from_resend_error
from lib.supabase.rpc import execute, interval
from lib.worker.records import Slot

if TYPE_CHECKING:
    from lib.worker.resend import ResendError
    from supabase import Client

PROVIDER = "resend"  # the row of document_jobs_rate_limits
# reserve_provider_request refuses a longer p_max_wait_ms: no invocation may run longer (maxDuration).
MAX_WAIT_MS = 300_000
# note_provider_rate_limit refuses a longer pause: a longer one would stop every job for longer
# than any rate limit asks.
MAX_PAUSE = timedelta(hours=1)
# A 429 without retry-after: Resend counts in one-second windows.
DEFAULT_PAUSE = timedelta(seconds=1)


class ResendLimiter:
    """One invocation's pacing of its Resend API requests (ResendClient calls `before_request` and
    `after_response` around each). `margin` is the time a request and the step after it need: a
    slot is taken only when at least that much of the budget is left after the wait."""

    def __init__(
        self,
        client: Client,
        margin: timedelta,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._margin_s = margin.total_seconds()
        self._clock = clock
        self._sleep = sleep
        self._due: float | None = None  # a slot already reserved for the next request, on `clock`
        self._known_limit: int | None = None  # the team's limit as the database last said it

    def max_wait_ms(self, deadline: Deadline | None) -> int:
        """The longest wait for a slot this invocation can afford now."""
        if deadline is None:
            return MAX_WAIT_MS
        affordable_s = min(deadline.remaining() - self._margin_s, MAX_WAIT_MS / 1000)  # a deadline may be infinite
        return max(0, math.floor(affordable_s * 1000))

    def granted(self, slot: Slot) -> None:
        """Holds a slot reserved for the next request (start_fetch_email reserves the listing's);
        JobFailure(resend_rate_limit_wait) when it could not be reserved in time."""
        self._known_limit = slot.limit
        if not slot.reserved:
            raise JobFailure(
                FailureCode.RESEND_RATE_LIMIT_WAIT,
                f"the next Resend slot is {slot.wait_ms / 1000:.1f} s away, more than the time budget allows",
                timedelta(milliseconds=slot.wait_ms),
            )
        self._due = self._clock() + slot.wait_ms / 1000

    def before_request(self, deadline: Deadline | None) -> None:
        """Waits for the request's slot, reserving one first unless one is held."""
        if self._due is None:
            self.granted(self._reserve(deadline))
        due, self._due = self._due, None
        if due is not None and (wait := due - self._clock()) > 0:
            self._sleep(wait)

    def after_response(self, headers: httpx.Headers, error: ResendError | None) -> None:
        """Tells the database what the answer said about the limit, when that is news: the team's
        limit (ratelimit-limit) when it differs from what the database said, and a 429."""
        limit = _limit(headers.get("ratelimit-limit"))
        learned = limit if limit is not None and limit != self._known_limit else None
        pause = _pause(error)
        if learned is None and pause is None:
            return
        params = {"p_provider": PROVIDER, "p_limit": learned, "p_retry_after": interval(pause) if pause else None}
        try:
            execute("note_provider_rate_limit", self._client.rpc("note_provider_rate_limit", params))
        except DatabaseError as error_noted:  # the job goes on; the next answer tells again
            log.event("rate_limit_not_noted", logging.WARNING, error=str(error_noted))
            return
        if learned is not None:
            self._known_limit = learned
            log.event("rate_limit_learned", provider=PROVIDER, requests_per_second=learned)

    def _reserve(self, deadline: Deadline | None) -> Slot:
        params = {"p_provider": PROVIDER, "p_max_wait_ms": self.max_wait_ms(deadline)}
        try:
            answer = execute("reserve_provider_request", self._client.rpc("reserve_provider_request", params))
        except DatabaseError as error:
            raise JobFailure(FailureCode.DATABASE_ERROR, str(error)) from error
        return Slot.model_validate(answer)


def _limit(value: str | None) -> int | None:
    """ratelimit-limit: a number of requests (1 to 1000, what the database accepts), else ignored."""
    if value is None or not value.strip().isdigit():
        return None
    limit = int(value.strip())
    return limit if 1 <= limit <= 1000 else None


def _pause(error: ResendError | None) -> timedelta | None:
    """How long every worker keeps off Resend after this answer: after a 429 of the rate limit
    (not of a quota, which seconds do not fix), its retry-after."""
    if error is None or error.status is None:
        return None
    if from_resend_error(error.status, error.name, error.message) is not FailureCode.RESEND_RATE_LIMITED:
        return None
    return min(error.retry_after or DEFAULT_PAUSE, MAX_PAUSE)
