"""The invocation's time budget, for the loop (lib/worker/loop.py) and for the I/O inside a job.

Vercel kills an invocation at maxDuration; a job still running then keeps its lease until it
passes and loses an attempt. So the loop stops claiming in time and releases a job it cannot
finish, and a download or upload in progress stops at the deadline too: httpx's timeouts are
per network wait, and a body trickling in (or out) a few bytes at a time never trips them.
Each wait is therefore also capped by the time left, and the body loops check the deadline
between chunks. The worst overrun is one capped wait started just before the deadline.

Where the body is read by a library (supabase-py reads a PostgREST answer whole), the deadline
goes below it instead: `deadline_transport` caps every network wait of every request (connecting,
TLS, each write and each read, the answer's headers included) by the time left, and fails the
request with a timeout once the deadline has passed. That makes it a deadline for the whole call.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
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


_WRITE_CHUNK = 64 * 1024  # bytes per capped write: httpcore waits up to its timeout for each send


def _wait(deadline: Deadline, timeout: float | None, timed_out: type[httpcore.TimeoutException]) -> float:
    """The timeout of one network wait: at most the time left; `timed_out` once none is left."""
    left = deadline.remaining()
    if left <= 0:
        raise timed_out("the deadline passed")
    return max(left if timeout is None else min(left, timeout), _LEAST_WAIT)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _wait(self._deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), _WRITE_CHUNK):
            chunk = buffer[start : start + _WRITE_CHUNK]
            self._stream.write(chunk, _wait(self._deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        upgraded = self._stream.start_tls(
            ssl_context, server_hostname, _wait(self._deadline, timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(upgraded, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, deadline: Deadline) -> None:
        self._backend = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _wait(self._deadline, timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_unix_socket(
            path, _wait(self._deadline, timeout, httpcore.ConnectTimeout), socket_options
        )
        return _DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_transport(deadline: Deadline, verify: ssl.SSLContext) -> httpx.HTTPTransport:
    """An httpx transport none of whose network waits outlasts `deadline`, and whose requests fail
    with httpx's timeout of the phase they were in (ConnectTimeout, WriteTimeout, ReadTimeout) once
    it has passed. A client over it needs no timeouts of its own (timeout=None)."""
    transport = httpx.HTTPTransport(verify=verify)
    # httpx 0.28 builds its httpcore pool without a way to name the network backend; the pool
    # takes one (httpcore's documented `network_backend`), so the transport's pool is made again.
    transport._pool = httpcore.ConnectionPool(ssl_context=verify, network_backend=_DeadlineBackend(deadline))
    return transport
