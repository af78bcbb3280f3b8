"""Which tests may run at the same time. `make test` runs pytest on several workers (pytest-xdist,
`--dist loadgroup`; docs/LOCAL_STACK.md says how), and each test is in one lane:

- SHARED_STACK: every test that asks for the stack `make test` started (the `stack_env` fixture,
  directly or through `admin`, `db`, `env`, `hook`, `cli`, ...), and the rest of its module. They
  run one after another on one worker, in the order they are collected: they empty the queue's
  tables, store and delete Vault secrets, pause cron jobs, change the rate limit and the settings,
  restart the database, and count what the stand-ins saw, so two of them at once would see each
  other's rows and requests. The module's other tests come along so that its module fixtures (a
  `vercel build`, a virtualenv) are made once.
- OWN_STACKS: tests marked `own_stack` (they start whole stacks of their own: `devstack run`/`up`/
  `down`, the demo, the chaos run, `stack.start()`). One at a time, on one worker: their stacks are
  recorded in the checkout's `.devstack/stacks/`, where the next start reaps what a killed one left
  (the lifecycle tests count exactly that), and each loads both cores. They may run beside the
  shared stack's tests: they never touch its stack.
- Every other test runs beside anything, its module on one worker (its module fixtures made once).

A test cannot leave its lane by accident. Outside SHARED_STACK, the settings `devstack run`
exported (DATABASE_URL, SUPABASE_URL, PGHOST, ...) are out of the environment its code and its
subprocesses see; outside OWN_STACKS, a start of a stack (devstack/stack.py) is refused. So a test
that uses the shared stack without asking for `stack_env`, or starts a stack without the mark, fails
in every run, on one worker or several, instead of racing another test now and then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from devstack import stack

SHARED_STACK = "shared_stack"
OWN_STACKS = "own_stacks"
OWN_STACK_MARK = "own_stack"
STACK_FIXTURE = "stack_env"
# The environment as the run began (a test outside the shared stack's lane runs without the stack's
# settings, and may still be the first on its worker to ask for `stack_env`), and those settings' names.
STARTING_ENVIRONMENT = pytest.StashKey[dict[str, str]]()
SHARED_STACK_NAMES = pytest.StashKey[frozenset[str]]()


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def lanes_of(items: Sequence[pytest.Item]) -> dict[str, str]:
    """Each test's lane, by node id. A module with any test that asks for the stack runs wholly in the
    shared stack's lane, so that its module fixtures (a `vercel build`, a virtualenv) are made once."""
    shared_modules = {module_of(item) for item in items if STACK_FIXTURE in getattr(item, "fixturenames", ())}
    lanes = {}
    for item in items:
        if item.get_closest_marker(OWN_STACK_MARK):
            lanes[item.nodeid] = OWN_STACKS
        elif module_of(item) in shared_modules:
            lanes[item.nodeid] = SHARED_STACK
        else:
            lanes[item.nodeid] = module_of(item)
    return lanes


def lane(item: pytest.Item) -> str:
    """The lane group() gave `item`."""
    marker = item.get_closest_marker("xdist_group")
    assert marker is not None and marker.args, f"{item.nodeid} has no lane: tests/conftest.py gives every test one"
    return str(marker.args[0])


# The longest lanes start first, one on each worker: pytest-xdist hands out the groups in the order
# their first tests are collected (with its reordering by group size off, see tests/conftest.py).
FIRST = {SHARED_STACK: 0, OWN_STACKS: 1}


def group(items: list[pytest.Item], for_workers: bool) -> None:
    """Each test's lane as its xdist_group (what `--dist loadgroup` schedules by); on a worker of
    pytest-xdist, the shared stack's lane first and the own stacks' second, each in its own order."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            raise pytest.UsageError(f"{item.nodeid}: a test's lane comes from tests/support/lanes.py, not xdist_group")
    lanes = lanes_of(items)
    for item in items:
        item.add_marker(pytest.mark.xdist_group(lanes[item.nodeid]))
    if for_workers:
        in_start_order(items)


def in_start_order(items: list[pytest.Item]) -> None:
    """The shared stack's lane first, the own stacks' next, then the rest, each in its own order."""
    items.sort(key=lambda item: FIRST.get(lane(item), len(FIRST)))  # a stable sort


def stack_variables(environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The names `devstack run` exported for its stack (from the stack's own state file), none when
    no stack is up."""
    folder = environ.get("DEVSTACK_FOLDER")
    state = Path(folder) / "state.json" if folder else None
    if state is None or not state.exists():
        return frozenset()
    return frozenset(json.loads(state.read_text())["env"]) | {"DEVSTACK_FOLDER"}


@contextmanager
def kept_to_its_lane(item: pytest.Item, names: frozenset[str]) -> Iterator[None]:
    """While `item` runs: the shared stack's settings (`names`) out of the environment unless it is in
    SHARED_STACK, and a start of a stack refused unless it is in OWN_STACKS."""
    its_lane = lane(item)
    touched = (names if its_lane != SHARED_STACK else frozenset()) | {stack.NO_NEW_STACKS}
    saved = {name: os.environ[name] for name in touched if name in os.environ}
    for name in touched:
        os.environ.pop(name, None)
    if its_lane != OWN_STACKS:
        os.environ[stack.NO_NEW_STACKS] = (
            f"{item.nodeid} starts a stack of its own: mark it own_stack (tests/support/lanes.py), "
            "so that it never runs beside another test that starts one"
        )
    try:
        yield
    finally:
        for name in touched:
            os.environ.pop(name, None)
        os.environ.update(saved)
