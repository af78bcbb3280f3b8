"""The lanes that let `make test` run pytest on several workers (tests/support/lanes.py): each test's
lane is what it asked for, a test that does not ask for the shared stack cannot reach it, and a
test not marked own_stack cannot start a stack."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from devstack import stack
from tests.support import lanes


@dataclass
class Collected:
    """What the lanes read of a collected test."""

    nodeid: str
    fixturenames: list[str] = field(default_factory=list)
    marks: list[pytest.Mark] = field(default_factory=list)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((mark for mark in self.marks if mark.name == name), None)


OWN_STACK = pytest.mark.own_stack.mark


def test_a_test_that_asks_for_the_stack_takes_its_module_into_the_shared_lane() -> None:
    items = [
        Collected("tests/a.py::test_unit"),
        Collected("tests/a.py::test_on_the_stack", ["db", "admin", "stack_env"]),
        Collected("tests/a.py::test_a_stack_of_its_own", ["stack_env"], [OWN_STACK]),
        Collected("tests/b.py::test_unit"),
        Collected("tests/b.py::test_another[1]"),
        Collected("tests/c.py::test_a_stack_of_its_own", [], [OWN_STACK]),
    ]
    assert lanes.lanes_of(items) == {  # type: ignore[arg-type]
        "tests/a.py::test_unit": lanes.SHARED_STACK,
        "tests/a.py::test_on_the_stack": lanes.SHARED_STACK,
        "tests/a.py::test_a_stack_of_its_own": lanes.OWN_STACKS,
        "tests/b.py::test_unit": "tests/b.py",
        "tests/b.py::test_another[1]": "tests/b.py",
        "tests/c.py::test_a_stack_of_its_own": lanes.OWN_STACKS,
    }


def test_on_a_worker_the_shared_lane_comes_first_then_the_own_stacks_each_in_its_order() -> None:
    order = ["tests/x.py", lanes.OWN_STACKS, lanes.SHARED_STACK, "tests/y.py", lanes.OWN_STACKS, lanes.SHARED_STACK]
    items = [Collected(f"t{n}", marks=[pytest.mark.xdist_group(lane).mark]) for n, lane in enumerate(order)]
    lanes.in_start_order(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == ["t2", "t5", "t1", "t4", "t0", "t3"]


def shared_stack_names(config: pytest.Config) -> frozenset[str]:
    """The names of the shared stack's settings; without a stack the tests below prove nothing."""
    names = lanes.stack_variables(config.stash[lanes.STARTING_ENVIRONMENT])
    if not names:
        pytest.fail("the local stack is not up: run `make test`, or `python -m devstack run -- pytest ...`")
    return names


def test_a_test_that_does_not_ask_for_the_stack_runs_without_its_settings(request, pytestconfig) -> None:
    names = shared_stack_names(pytestconfig)
    assert {"DATABASE_URL", "SUPABASE_URL", "SUPABASE_SECRET_KEY", "PGHOST", "DEVSTACK_FOLDER"} <= names
    assert lanes.lane(request.node) == "tests/tooling/test_lanes.py"
    assert sorted(names & set(os.environ)) == []
    # Nor do its subprocesses.
    seen = subprocess.run([sys.executable, "-c", "import json, os; print(json.dumps(sorted(os.environ)))"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert sorted(names & set(json.loads(seen.stdout))) == []


def test_a_test_not_marked_own_stack_cannot_start_a_stack(request) -> None:
    refusal = f"{request.node.nodeid} starts a stack of its own: mark it own_stack"
    with pytest.raises(RuntimeError, match=re.escape(refusal)):
        stack.start()
    # Nor can `devstack run` in a subprocess.
    run = subprocess.run([sys.executable, "-m", "devstack", "run", "--", "true"], capture_output=True, text=True)
    assert run.returncode != 0 and refusal in run.stderr, run.stderr


def test_a_tests_environment_comes_back_whole_after_it(request, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://localhost/example")  # as a run's environment has it
    refusal = os.environ[stack.NO_NEW_STACKS]
    with lanes.kept_to_its_lane(request.node, frozenset({"DATABASE_URL"})):
        assert "DATABASE_URL" not in os.environ
        os.environ["DATABASE_URL"] = "changed by the test"
    assert os.environ["DATABASE_URL"] == "postgresql://localhost/example"
    assert os.environ[stack.NO_NEW_STACKS] == refusal
