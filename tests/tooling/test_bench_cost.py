"""The cost section of make bench: the office's monthly bill is computed from the measured units
and the prices in one place (bench/cost.py PRICES), with the plans' fees, at hnd1's prices; and in
its quick mode, on the stack `make test` started, its invocations are told apart by who started
them and add up to what the host served, its idle day measured one reconciliation warm and one
cold, the bill comes out of the run's own figures, and it leaves nothing of its own behind. No
timings are asserted."""

from __future__ import annotations

import pytest

from bench import cost
from tests.support.database import reset

MIB = 1024 * 1024


def usage(faxes: int, cpu_s: dict[str, float], instance_s: dict[str, float], invocations: dict[str, int]) -> cost.Usage:
    return cost.Usage(faxes, MIB, cpu_s=cpu_s, instance_s=instance_s, invocations=invocations)


def test_the_functions_are_priced_at_hnd1_and_every_price_says_where_it_was_read() -> None:
    for name in ("vercel_active_cpu", "vercel_provisioned_memory"):
        assert "hnd1" in cost.PRICES[name].per, name
    for name, price in cost.PRICES.items():
        assert price.status in ("read", "copy", "assumed"), name
        assert price.source.startswith("https://"), name
        if price.status != "read":
            assert price.note, f"{name}: a copy or an assumption says where, or why"


def test_a_fax_costs_the_sum_of_its_steps_and_the_bill_adds_the_month() -> None:
    measured = usage(10, {"webhook": 4.0, "worker": 6.0}, {"webhook": 8.0, "worker": 12.0},
                     {"webhook": 10, "worker": 10})  # fmt: skip
    # The prepare job of the typical fax, measured apart: its CPU, its wall time, no invocation of its own.
    typical = cost.prepare_units({cost.prepare_job.TYPICAL: cost.prepare_job.Run(0.25, 0.5, 60.0, 70.0, 1, 1, 3)})
    assert (typical.cpu_s, typical.instance_s, typical.invocations) == (0.5, 0.25, 0.0)
    steps = cost.fax_steps(measured, typical)
    assert len(steps) == 3  # the webhook, the fetch_email job and the prepare_fax job
    per_fax = sum(steps.values(), cost.Units(0.0, 0.0, 0.0))
    assert (per_fax.cpu_s, per_fax.instance_s, per_fax.invocations) == (1.5, 2.25, 2.0)
    steps = cost.fax_steps(measured, cost.Units(0.0, 0.0, 0.0))
    # One job kind more per fax is one more step, and the bill follows it.
    prepared = steps | {"another job": cost.Units(0.5, 1.0, 1.0)}
    reconciliation = cost.Units(0.1, 0.2, 1.0)
    month = cost.monthly_bill(1000, steps, reconciliation, 10, MIB)
    more = cost.monthly_bill(1000, prepared, reconciliation, 10, MIB)
    assert more.fax_units.cpu_s == pytest.approx(month.fax_units.cpu_s + 500.0)
    assert month.fax_units.cpu_s == pytest.approx(1000.0)
    runs = 30 * 1440 // 10
    assert month.reconciliation_units.invocations == pytest.approx(runs)
    used = cost.Units(1000.0 + 0.1 * runs, 2000.0 + 0.2 * runs, 2000.0 + runs)
    expected = (used.cpu_s / 3600 * cost.PRICES["vercel_active_cpu"].usd
                + used.instance_s / 3600 * cost.FUNCTION_MEMORY_GB * cost.PRICES["vercel_provisioned_memory"].usd
                + used.invocations / 1e6 * cost.PRICES["vercel_invocations"].usd)  # fmt: skip
    assert month.vercel_usage_usd == pytest.approx(expected)
    assert month.storage_gb_added == pytest.approx(1000 / 1024)
    assert month.months_within_storage == pytest.approx(cost.SUPABASE_STORAGE_INCLUDED_GB * 1024 / 1000)


def test_the_office_pays_the_fees_and_only_the_usage_beyond_vercels_credit() -> None:
    fee, credit, plan = (cost.PRICES[name].usd for name in ("vercel_pro_fee", "vercel_pro_credit", "supabase_plan"))
    light = cost.monthly_bill(100, {"fax": cost.Units(1.0, 2.0, 2.0)}, cost.Units(0.0, 0.0, 0.0), 10, MIB)
    assert light.vercel_usage_usd < credit
    assert light.vercel_usd == fee
    assert light.total_usd == fee + plan
    # A month whose usage passes the credit pays what passes it, on top of the fee.
    heavy = cost.monthly_bill(100, {"fax": cost.Units(3600.0, 0.0, 0.0)}, cost.Units(0.0, 0.0, 0.0), 10, MIB)
    assert heavy.vercel_usage_usd == pytest.approx(100 * cost.PRICES["vercel_active_cpu"].usd)
    assert heavy.vercel_usd == pytest.approx(fee + heavy.vercel_usage_usd - credit)
    assert heavy.total_usd == pytest.approx(heavy.vercel_usd + plan)


@pytest.mark.slow  # drives faxes through a function host of its own
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
        # The bill, from this run's own units: a quiet office's faxes start both functions, and its
        # reconciliation the worker, so they cost more CPU than the warm ones; the month is the fees
        # while the usage stays under Vercel's credit.
        assert figures["bill_fax_cpu_ms_cold"] > figures["bill_fax_cpu_ms_warm"] > 0, figures
        assert figures["bill_reconcile_cpu_ms_cold"] > figures["bill_reconcile_cpu_ms_warm"] > 0, figures
        fees = cost.PRICES["vercel_pro_fee"].usd + cost.PRICES["supabase_plan"].usd
        for faxes in cost.MONTHLY_FAXES:
            assert figures[f"bill_vercel_usage_warm_usd_{faxes}"] < figures[f"bill_vercel_usage_usd_{faxes}"]
            assert figures[f"bill_vercel_usage_usd_{faxes}"] < cost.PRICES["vercel_pro_credit"].usd, figures
            assert figures[f"bill_total_usd_{faxes}"] == fees, figures
        assert "the office's monthly bill" in section.text()
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
