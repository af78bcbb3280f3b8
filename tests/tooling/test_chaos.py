"""A short chaos run (make chaos is the long one): crashes, a frozen worker, provider faults and
dropped database calls, then every check of chaos/; then its phases
(chaos/phases.py): a deleted Resend key, and lying Content-Lengths."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]  # a chaos run of its own: minutes


def test_a_short_chaos_run_passes_every_check(stack_env) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chaos", "--emails", "40", "--seed", "7", "--time-limit", "240"],
        capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    assert "Checks: all passed" in result.stdout, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.returncode == 0
    assert "| jobs: completed |" in result.stdout
    # The phases, with 4 e-mails each: a deleted key waits, alerts once and drains after the fix;
    # lying lengths store nothing but the provider's bytes.
    for figure in ("deleted key: jobs waiting, no attempt spent | 4", "deleted key: outage alerts | 1",
                   "deleted key: recovery alerts | 1", "deleted key: jobs completed after the fix | 4",
                   "lying lengths: jobs retried (download_failed) | 4",
                   "lying lengths: jobs completed with the provider's bytes | 4"):  # fmt: skip
        assert f"| phases: {figure} |" in result.stdout, figure
