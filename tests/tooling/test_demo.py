"""make demo keeps working: a short run of it, on a stack of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]  # a whole stack of its own


def test_the_demo_runs_end_to_end(stack_env) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "devstack.tools.demo", "--emails", "3", "--seed", "1"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "E-mails received: 3" in result.stdout
    assert "Jobs: 3 fetch_email completed (3 attempts), 3 prepare_fax completed (3 attempts)" in result.stdout
    assert "Webhook sent -> all of its attachments stored" in result.stdout
    assert "alert received after" in result.stdout and "Fax not fetched: job" in result.stdout
    assert "attempt 1 failed (resend_not_found)" in result.stdout
    shot = result.stdout.rsplit("screenshot: ", 1)[1].splitlines()[0]
    assert Path(shot).read_bytes().startswith(b"\x89PNG"), "the admin screen, as a picture"
