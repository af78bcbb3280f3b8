"""Durability switched on a running cluster: off, as devstack starts it (a throwaway test cluster),
or on, as hosted Supabase runs; by ALTER SYSTEM and a reload (fsync, synchronous_commit and
full_page_writes all take effect without a restart)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench.common import connect
from devstack.cluster import DURABILITY


@contextmanager
def durability(mode: str, conninfo: str | None = None) -> Iterator[None]:
    """The cluster (the stack's, or `conninfo`'s) with durability `mode` ("off": as devstack starts
    it; "on": as hosted Supabase runs), by ALTER SYSTEM and a reload; reset to the cluster's own
    settings afterwards."""
    settings = DURABILITY[mode]
    with connect(conninfo) as conn:
        try:
            for name, value in settings.items():
                conn.execute(f"alter system set {name} = {value}")
            conn.execute("select pg_reload_conf()")
            wait_for_settings(conninfo, settings)
            yield
        finally:
            for name in settings:
                conn.execute(f"alter system reset {name}")
            conn.execute("select pg_reload_conf()")
            wait_for_settings(conninfo, DURABILITY["off"])


def wait_for_settings(conninfo: str | None, settings: dict[str, str], timeout_s: float = 10) -> None:
    """A reload is asynchronous: wait until a new session sees the settings."""
    deadline = time.monotonic() + timeout_s
    while True:
        with connect(conninfo) as fresh:
            now = {name: fresh.execute(f"show {name}").fetchone()[0] for name in settings}
        if now == settings:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not take {settings} (it has {now})")
        time.sleep(0.1)
