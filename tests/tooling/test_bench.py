"""make bench keeps working: every section in its quick mode (tiny sizes, one repetition), on a
stack of its own as `make bench` runs it (minutes that would otherwise hold up the shared stack's
tests). It asserts only that the bench ran, printed its sections and left nothing behind: no timings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]  # every bench section, on a stack of its own


SECTIONS = (
    "== Claim cost ==",
    "== Attempt history and failure alerts: cost per job ==",
    "== Throughput ==",
    "== Idle cost ==",
    "== Cold import time ==",
    "== Cold start through Vercel's runtime ==",
    "== Memory of one Fluid instance ==",
    "== The prepare job: time and memory by page count ==",
    "== Webhook to attachments stored ==",
    "== Burst drain at the provider's rate limit ==",
    "== What a fax costs ==",
    "== Admin screen: server time of its views on a big table ==",
    "== The fax viewer: first page drawn after opening a fax (Chromium, 390 px) ==",
)


def test_the_bench_runs_in_quick_mode(tmp_path) -> None:
    report = tmp_path / "BENCHMARKS.md"
    result = subprocess.run(
        [sys.executable, "-m", "devstack", "run", "--", sys.executable, "-m", "tests.support.bench_smoke", str(report)],
        capture_output=True, text=True, timeout=900,  # a hang guard: a stack's start, a build without
        # bytecode, and the burst's limiter-off arm waiting for a cron tick after its 429s, on any load
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for heading in SECTIONS:
        assert heading in result.stdout, f"{heading} missing:\n{result.stdout}"
    text = report.read_text()
    assert "## Machine and settings" in text
    assert "## What the figures show" in text
    left = json.loads(result.stdout.rsplit("leftovers: ", 1)[1].splitlines()[0])
    assert left == {"bench schemas": 0, "paused cron jobs": 0, "durability settings left on": 0, "jobs": 0}
    assert "durability on (as hosted Supabase)" in text, "the throughput section ran with durability on too"
