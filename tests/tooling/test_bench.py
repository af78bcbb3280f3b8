"""make bench keeps working: every section in its quick mode (tiny sizes, one repetition), on the
stack `make test` started. It asserts only that the bench ran and printed its sections: no timings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.database import reset

pytestmark = pytest.mark.slow  # runs every bench section


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
)


def leftovers(admin) -> dict[str, int]:
    schemas = admin.execute("select count(*) as n from pg_namespace where nspname like 'bench\\_%'").fetchone()["n"]
    cron = admin.execute("select count(*) as n from cron.job where jobname = 'document-jobs' and not active")
    durable = admin.execute(
        "select count(*) as n from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes')"
        " and setting <> 'off'"
    ).fetchone()["n"]
    return {"bench schemas": schemas, "paused cron jobs": cron.fetchone()["n"], "durability settings left on": durable}


def test_the_bench_runs_in_quick_mode(admin, stack_env, tmp_path) -> None:
    reset(admin)  # no Vault secrets left by another test: nothing but the bench calls the worker
    report = tmp_path / "BENCHMARKS.md"
    try:
        result = subprocess.run(
            [sys.executable, "-m", "bench", "--quick", "--output", str(report)],
            capture_output=True, text=True, timeout=900,  # a hang guard: the cold-start section builds once without
            # bytecode, and the burst's limiter-off arm waits for a cron tick after its 429s (two requests a fax)
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        for heading in SECTIONS:
            assert heading in result.stdout, f"{heading} missing:\n{result.stdout}"
        text = report.read_text()
        assert "## Machine and settings" in text
        assert "## What the figures show" in text
        assert leftovers(admin) == {"bench schemas": 0, "paused cron jobs": 0, "durability settings left on": 0}
        assert "durability on (as hosted Supabase)" in text, "the throughput section ran with durability on too"
        assert admin.execute("select count(*) as n from public.document_jobs").fetchone()["n"] == 0
    finally:
        reset(admin)
