"""The invocation's time budget, for the loop (lib/worker/loop.py) and for the I/O inside a job.

Vercel kills an invocation at maxDuration; a job still running then keeps its lease until it
passes and loses an attempt. So the loop stops claiming in time and releases a job it cannot
finish, and a download or upload in progress stops at the deadline too: httpx's timeouts are
per network wait, and a body trickling in (or out) a few bytes at a time never trips them.
Each wait is therefore also capped by the time left, and the body loops check the deadline
between chunks. The worst overrun is one capped wait started just before the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

Clock = Callable[[], float]
_LEAST_WAIT = 0.01  # seconds; a timeout of 0 would make the socket non-blocking, not "no time left"


class DeadlinePassed(Exception):
    """The invocation's time budget ran out during a network call; the job is released (time_budget)."""


@dataclass(frozen=True)
class Deadline:
    at: float  # on `clock`
    clock: Clock = time.monotonic

    def remaining(self) -> float:
        return self.at - self.clock()

    def check(self, what: str) -> None:
        if self.remaining() <= 0:
            raise DeadlinePassed(f"{what}: the invocation's time budget ran out")

    def timeout(self, limit: float, connect: float = 5.0) -> httpx.Timeout:
        """httpx timeouts of at most `limit` (`connect` for connecting), and never past the deadline."""
        left = self.remaining()
        return httpx.Timeout(max(min(limit, left), _LEAST_WAIT), connect=max(min(connect, limit, left), _LEAST_WAIT))


@dataclass(frozen=True)
class Checkpoint:
    """Handed to a job with its lease. Call it before each step: it extends the lease unless it was
    renewed a moment ago (LeaseLost once the job is no longer ours) and raises
    JobFailure("time_budget") when too little time is left to start one. `deadline` bounds the
    network calls within a step."""

    deadline: Deadline
    step: Callable[[], None]

    def __call__(self) -> None:
        self.step()
