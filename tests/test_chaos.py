"""A short chaos run (make chaos is the long one): crashes, a frozen worker, provider faults and
dropped database calls, then every check of devstack/chaos.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # a chaos run of its own: minutes


def test_a_short_chaos_run_passes_every_check(stack_env) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "devstack.chaos", "--emails", "40", "--seed", "7", "--time-limit", "240"],
        capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    assert "Checks: all passed" in result.stdout, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.returncode == 0
    assert "| jobs: completed |" in result.stdout
