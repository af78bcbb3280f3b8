"""The gateway's connections to the database, losing and regaining it as PostgREST does
(docs.postgrest.org: references/connection_pool, "Automatic Recovery"; references/errors,
"Connection errors"):

- When a connection fails (a pooled one found dead before its request, or one that breaks
  during it), every pooled connection is taken for dead with it: they all went to the same server,
  which restarted or went away. The pool is thrown away (PostgREST flushes its pool) and nothing
  waits on its connections again: before, each dead one cost a request the pool's check and
  backoff, and a pool grown to 20 dead connections made the requests after a restart wait the
  10 s acquisition timeout one after the other.
- While the database is away, requests get 503 at once, with the code for the cause and a
  `Retry-After` header: PGRST000 when no connection can be made ("Database connection error.
  Retrying the connection."), PGRST001 when a connection failed during the request ("Database
  client error. Retrying the connection."). `Retry-After` is the wait until PostgREST's next
  attempt: it retries with exponential backoff, 1 s doubling up to 32 s, from the loss.
- Each request in the meantime tries one fresh connection (one at a time; the others answer 503
  meanwhile), so the first request after the database is back gets a new pool and a 200, as
  PostgREST's flushed pool opens new connections for the requests after the server returns.

Local stack only.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed

RETRY_FIRST_S, RETRY_CAP_S = 1.0, 32.0  # PostgREST's backoff between reconnection attempts
PROBE_CONNECT_TIMEOUT_S = 2  # libpq's connect_timeout for the attempt a request makes
CONNECTION_ERROR = ("PGRST000", "Database connection error. Retrying the connection.")
CLIENT_ERROR = ("PGRST001", "Database client error. Retrying the connection.")


def log(message: str) -> None:
    print(f"gateway: {message}", file=sys.stderr, flush=True)


class DatabaseUnavailable(psycopg.OperationalError):
    """No connection to the database now: PostgREST's 503, with what to put in Retry-After."""

    def __init__(self, code: str, message: str, details: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.code, self.message, self.details, self.retry_after_s = code, message, details, retry_after_s


def retry_after(lost_for_s: float) -> int:
    """Seconds until the next attempt of a backoff of 1, 2, 4, ... 32, 32 s begun `lost_for_s` ago."""
    step, attempt_at = RETRY_FIRST_S, RETRY_FIRST_S
    while attempt_at <= lost_for_s:
        step = min(step * 2, RETRY_CAP_S)
        attempt_at += step
    return max(1, math.ceil(attempt_at - lost_for_s))


class Connections:
    """A pool (as "authenticator") that is replaced, not waited on, when its database goes away."""

    def __init__(self, conninfo: str, *, min_size: int, max_size: int, timeout: float, name: str) -> None:
        self.conninfo = conninfo
        self._settings: dict[str, Any] = {"min_size": min_size, "max_size": max_size, "timeout": timeout}
        self._name = name
        self._lock = threading.Lock()
        self._probing = threading.Lock()  # one reconnection attempt at a time
        self._pool: ConnectionPool | None = self._new_pool()
        self._lost_at: float | None = None  # monotonic time the database was lost; None while it is there
        self._lost_because = ""

    def _new_pool(self) -> ConnectionPool:
        return ConnectionPool(self.conninfo, open=False, kwargs={"autocommit": True}, name=self._name,
                              **self._settings)  # fmt: skip

    def open(self, timeout: float) -> None:
        assert self._pool is not None
        self._pool.open(wait=True, timeout=timeout)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A live connection for one request, or DatabaseUnavailable (PoolTimeout when the pool is
        only busy: PostgREST's 504 PGRST003)."""
        pool, conn = self._checked_out()
        try:
            yield conn
        except psycopg.OperationalError as error:
            if conn.broken:
                self._lost(pool, error)
                raise DatabaseUnavailable(*CLIENT_ERROR, str(error).strip(), self._retry_after()) from error
            raise
        finally:
            pool.putconn(conn)  # a broken one is discarded by the pool (or closed with it)

    def _checked_out(self) -> tuple[ConnectionPool, psycopg.Connection[Any]]:
        for _ in range(3):  # a pool found dead is replaced once; a third round means it died again
            pool = self._current_pool()
            try:
                conn = pool.getconn()
            except PoolClosed:  # thrown away while this request waited for one of its connections
                continue
            try:
                ConnectionPool.check_connection(conn)  # one empty query: a restarted server fails it at once
            except psycopg.OperationalError as error:
                pool.putconn(conn)
                self._lost(pool, error)
                continue
            return pool, conn
        raise DatabaseUnavailable(*CONNECTION_ERROR, self._lost_because, self._retry_after())

    def _current_pool(self) -> ConnectionPool:
        with self._lock:
            if self._pool is not None and self._lost_at is None:
                return self._pool
        if not self._probing.acquire(blocking=False):
            raise DatabaseUnavailable(*CONNECTION_ERROR, self._lost_because, self._retry_after())
        try:
            with self._lock:  # another request may have reconnected while this one came to the lock
                if self._pool is not None and self._lost_at is None:
                    return self._pool
            try:
                psycopg.connect(self.conninfo, connect_timeout=PROBE_CONNECT_TIMEOUT_S).close()
            except psycopg.OperationalError as error:
                with self._lock:
                    self._lost_because = str(error).strip()
                raise DatabaseUnavailable(*CONNECTION_ERROR, self._lost_because, self._retry_after()) from error
            pool = self._new_pool()
            pool.open(wait=False)  # its first connections are being made; getconn waits for one
            with self._lock:
                self._pool, self._lost_at = pool, None
            log("the database answers again: new connections")
            return pool
        finally:
            self._probing.release()

    def _lost(self, pool: ConnectionPool, error: psycopg.Error) -> None:
        """`pool`'s server went away: no request takes its connections again."""
        with self._lock:
            if pool is not self._pool:
                return  # already thrown away by another request
            self._pool = None
            self._lost_at = time.monotonic()
            self._lost_because = str(error).strip()
        log(
            f"lost the database ({self._lost_because.splitlines()[0] if self._lost_because else 'no answer'}):"
            " its pooled connections are discarded"
        )
        # Closing waits for the pool's workers: not in the request's time. Connections still out are
        # closed as they come back.
        threading.Thread(target=pool.close, kwargs={"timeout": 1.0}, daemon=True).start()

    def _retry_after(self) -> int:
        with self._lock:
            lost_at = self._lost_at
        return retry_after(time.monotonic() - lost_at) if lost_at is not None else int(RETRY_FIRST_S)
