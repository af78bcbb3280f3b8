"""The lanes that let `make test` run pytest on several workers (tests/support/lanes.py): a test
that does not ask for the shared stack cannot reach it, a test not marked own_stack cannot start a
stack, and each test's lane is what it asked for."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from devstack import stack
from tests.support import lanes


def started_with_a_stack(config: pytest.Config) -> frozenset[str]:
    """The names of the shared stack's settings; without a stack this file proves nothing."""
    names = lanes.stack_variables(config.stash[lanes.STARTING_ENVIRONMENT])
    if not names:
        pytest.fail("the local stack is not up: run `make test`, or `python -m devstack run -- pytest ...`")
    return names


def test_a_test_that_does_not_ask_for_the_stack_runs_without_its_settings(request, pytestconfig) -> None:
    names = started_with_a_stack(pytestconfig)
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
    assert run.returncode != 0 and "mark it own_stack" in run.stderr, run.stderr


def test_a_test_that_asks_for_the_stack_is_in_its_lane_with_its_settings(request, stack_env) -> None:
    assert lanes.lane(request.node) == lanes.SHARED_STACK
    assert os.environ["DATABASE_URL"] == stack_env["DATABASE_URL"]
    assert stack.NO_NEW_STACKS in os.environ


@pytest.mark.own_stack  # it starts none: it shows what the mark allows, and nothing is cheaper
def test_a_test_marked_own_stack_is_in_its_lane_without_the_shared_stacks_settings(request, pytestconfig) -> None:
    names = started_with_a_stack(pytestconfig)
    assert lanes.lane(request.node) == lanes.OWN_STACKS
    assert stack.NO_NEW_STACKS not in os.environ
    assert sorted(names & set(os.environ)) == []


def test_a_tests_environment_comes_back_whole_after_it(request, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://localhost/example")  # as a run's environment has it
    refusal = os.environ[stack.NO_NEW_STACKS]
    with lanes.kept_to_its_lane(request.node, frozenset({"DATABASE_URL"})):
        assert "DATABASE_URL" not in os.environ
        os.environ["DATABASE_URL"] = "changed by the test"
    assert os.environ["DATABASE_URL"] == "postgresql://localhost/example"
    assert os.environ[stack.NO_NEW_STACKS] == refusal
