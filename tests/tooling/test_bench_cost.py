"""The cost section of make bench in its quick mode, on the stack `make test` started: its
invocations are told apart by who started them and add up to what the host served, its idle day
measured one reconciliation, and it leaves nothing of its own behind. No timings are asserted."""

from __future__ import annotations

import pytest

from bench import cost
from tests.support.database import reset

pytestmark = pytest.mark.slow  # drives faxes through a function host of its own


def test_the_cost_section_splits_the_invocations_and_leaves_nothing(admin, stack_env) -> None:
    reset(admin)  # no Vault secrets left by another test: nothing but the bench calls the worker
    reconcile = "select active from cron.job where jobname = 'document-jobs-reconcile'"
    active_before = admin.execute(reconcile).fetchone()["active"]
    try:
        section = cost.run(True)
        figures = section.figures
        # One at a time, every webhook's kick starts the invocation that stores its fax, and nothing else does.
        assert figures["kick_per_fax_100kib_single"] == 1.0, figures
        assert figures["follow_up_per_fax_100kib_single"] == 0.0, figures
        for run in ("single", "burst"):
            assert figures[f"posts_unattributed_100kib_{run}"] == 0, figures
            assert figures[f"usd_per_1000_100kib_{run}"] > 0, figures
        every = admin.execute("select every_minutes from public.document_jobs_reconciliation").fetchone()
        assert figures["idle_reconcile_listings"] == 1, figures
        assert figures["idle_reconcile_invocations_a_day"] == 1440 // every["every_minutes"], figures
        assert figures["idle_posts_a_day"] == 0, "an empty queue makes the cron call no worker"
        assert "worker invocations per 1,000 faxes, by who started them" in section.text()
        schemas = admin.execute("select count(*) as n from pg_namespace where nspname = %s", (cost.POSTS_SCHEMA,))
        assert schemas.fetchone()["n"] == 0
        triggers = admin.execute(
            "select count(*) as n from pg_trigger where tgrelid = 'document_jobs_internal.worker_requests'::regclass"
            " and not tgisinternal"
        )
        assert triggers.fetchone()["n"] == 0
        assert admin.execute(reconcile).fetchone()["active"] == active_before
        assert admin.execute("select count(*) as n from public.document_jobs").fetchone()["n"] == 0
    finally:
        reset(admin)
