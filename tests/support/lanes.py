"""Which tests may run at the same time. `make test` runs pytest on several workers (pytest-xdist,
`--dist loadgroup`; docs/LOCAL_STACK.md says how), and each test is in one lane:

- SHARED_STACK: every test that asks for the stack `make test` started (the `stack_env` fixture,
  directly or through `admin`, `db`, `env`, `hook`, `cli`, ...). They run one after another on one
  worker, in the order they are collected: they empty the queue's tables, store and delete Vault
  secrets, pause cron jobs, change the rate limit and the settings, restart the database, and count
  what the stand-ins saw, so two of them at once would see each other's rows and requests.
- OWN_STACKS: tests marked `own_stack` (they start whole stacks of their own: `devstack run`/`up`/
  `down`, the demo, the chaos run, `stack.start()`). One at a time, on one worker: their stacks are
  recorded in the checkout's `.devstack/stacks/`, where the next start reaps what a killed one left
  (the lifecycle tests count exactly that), and each loads both cores. They may run beside the
  shared stack's tests: they never touch its stack.
- Every other test runs beside anything, its module on one worker (module fixtures, such as a
  `vercel build` or a virtualenv, are made once).

A test outside SHARED_STACK cannot reach the shared stack by accident: while it runs, the settings
`devstack run` exported (DATABASE_URL, SUPABASE_URL, PGHOST, ...) are out of the environment its code
and its subprocesses see, so a test that uses the stack without asking for `stack_env` fails in
every run, on one worker or several, instead of racing the stack's own tests now and then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

SHARED_STACK = "shared_stack"
OWN_STACKS = "own_stacks"
OWN_STACK_MARK = "own_stack"
STACK_FIXTURE = "stack_env"


def lane(item: pytest.Item) -> str:
    if item.get_closest_marker(OWN_STACK_MARK):
        return OWN_STACKS
    if STACK_FIXTURE in getattr(item, "fixturenames", ()):
        return SHARED_STACK
    return item.nodeid.split("::", 1)[0]  # its module


# The longest lanes start first, one on each worker: pytest-xdist hands out the groups in the order
# their first tests are collected (with its reordering by group size off, see tests/conftest.py).
FIRST = {SHARED_STACK: 0, OWN_STACKS: 1}


def group(items: list[pytest.Item], for_workers: bool) -> None:
    """Each test's lane as its xdist_group (what `--dist loadgroup` schedules by); on a worker of
    pytest-xdist, the shared stack's lane first and the own stacks' second, each in its own order."""
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(lane(item)))
    if for_workers:
        items.sort(key=lambda item: FIRST.get(lane(item), len(FIRST)))  # stable: each lane keeps its order


def stack_variables(environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The names `devstack run` exported for its stack (from the stack's own state file), none when
    no stack is up."""
    folder = environ.get("DEVSTACK_FOLDER")
    state = Path(folder) / "state.json" if folder else None
    if state is None or not state.exists():
        return frozenset()
    return frozenset(json.loads(state.read_text())["env"]) | {"DEVSTACK_FOLDER"}


@contextmanager
def out_of_reach(item: pytest.Item, names: frozenset[str]) -> Iterator[None]:
    """The shared stack's settings out of the environment while `item` runs, unless it is in SHARED_STACK."""
    if lane(item) == SHARED_STACK or not names:
        yield
        return
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)
