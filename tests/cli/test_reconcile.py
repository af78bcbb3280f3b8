"""python -m lib.admin reconcile against the local stack: back to --since (bounded by retention,
how long Resend keeps received e-mails), a dry run that counts and lists and records nothing, a run
audited with the admin's identity, its --json, a page of more items than the database takes at
once, the continuation a run stopped at its page bound prints (--after), the workers' shared Resend
limiter pacing a run and a page refused by the rate limit asked again, and health showing what
reconciliation found."""

from __future__ import annotations

import json
import shlex

import httpx
import pytest

from devstack.tools import inbound
from lib.admin import PROGRAM
from lib.admin import reconcile as by_hand


@pytest.fixture
def resend_cli(cli, stack_env, monkeypatch):
    httpx.post(f"{stack_env['RESEND_API_URL']}/_control/emails/clear", timeout=10).raise_for_status()
    httpx.delete(f"{stack_env['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()
    monkeypatch.setenv("RESEND_API_KEY", stack_env["RESEND_API_KEY"])
    monkeypatch.setenv("RESEND_API_URL", stack_env["RESEND_API_URL"])
    yield cli
    httpx.delete(f"{stack_env['RESEND_API_URL']}/_control/faults", timeout=10).raise_for_status()


def test_a_dry_run_counts_and_lists_and_records_nothing(resend_cli, db, stack_env, operator) -> None:
    missing = inbound.receive_without_webhook(
        stack_env["RESEND_API_URL"], count=3, attachments=1, age_seconds=20 * 3600
    )
    status, out, err = resend_cli("reconcile", "--since", "1d", "--dry-run", "--as", operator, "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)
    assert (answer["listed"], answer["recorded"], answer["dry_run"]) == (3, 0, True)
    assert sorted(answer["would_record"]) == sorted(e["email_id"] for e in missing)
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 0


def test_a_run_records_what_no_webhook_delivered_and_is_audited(resend_cli, db, admin, stack_env, operator) -> None:
    missing = inbound.receive_without_webhook(stack_env["RESEND_API_URL"], count=2, attachments=1, age_seconds=3 * 3600)
    status, out, _ = resend_cli("reconcile", "--since", "20h", "--as", operator, "--json")
    assert status == 0
    answer = json.loads(out)
    assert {k: answer[k] for k in ("listed", "recorded", "late")} == {"listed": 2, "recorded": 2, "late": 2}
    rows = db.execute("select provider_email_id, found_by from fax_received_emails").fetchall()
    assert sorted((r["provider_email_id"], r["found_by"]) for r in rows) == sorted(
        (e["email_id"], "reconciliation") for e in missing)  # fmt: skip
    [audit] = admin.execute("select actor_email, action, job_count from document_jobs_audit").fetchall()
    assert audit == {"actor_email": operator, "action": "reconcile", "job_count": 2}

    status, out, _ = resend_cli("reconcile", "--since", "20h", "--as", operator, "--json")
    assert json.loads(out)["recorded"] == 0, "a second run records nothing twice"


def test_since_is_bounded_by_the_retention_setting(resend_cli, db, operator) -> None:
    status, _, err = resend_cli("reconcile", "--since", "2d", "--as", operator)
    assert status != 0 and "retention (1 day)" in err
    db.execute("select set_document_jobs_reconciliation(p_retention => '3 days')")
    status, _, err = resend_cli("reconcile", "--since", "2d", "--as", operator)
    assert (status, err) == (0, ""), "the bound follows the setting"


def test_a_page_of_101_items_is_recorded_in_batches(resend_cli, db, stack_env, operator) -> None:
    url = stack_env["RESEND_API_URL"]
    missing = inbound.receive_without_webhook(url, count=101, attachments=1, age_seconds=3600)
    fault = {"kind": "edit_listing", "target": "received", "page_size": 101}  # more than `limit` allows
    httpx.post(f"{url}/_control/faults", json=fault, timeout=10).raise_for_status()
    status, out, err = resend_cli("reconcile", "--since", "20h", "--as", operator, "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)
    assert (answer["pages"], answer["listed"], answer["recorded"]) == (1, 101, 101)
    rows = db.execute("select provider_email_id from fax_received_emails").fetchall()
    assert sorted(r["provider_email_id"] for r in rows) == sorted(e["email_id"] for e in missing)


def test_a_run_stopped_at_its_page_bound_prints_a_continuation_that_reaches_the_rest(
    resend_cli, db, stack_env, operator, monkeypatch
) -> None:
    missing = inbound.receive_without_webhook(stack_env["RESEND_API_URL"], count=150, attachments=1, age_seconds=3600)
    monkeypatch.setattr(by_hand, "MAX_PAGES", 1)
    status, out, _ = resend_cli("reconcile", "--since", "20h", "--as", operator)
    assert status == 0
    [hint] = [line for line in out.splitlines() if "for the older rest run:" in line]
    command = shlex.split(hint.split("for the older rest run: ", 1)[1])
    assert command[:2] == [PROGRAM, "reconcile"] and "--after" in command
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 100

    status, out, _ = resend_cli(*command[1:], "--as", operator)
    assert status == 0 and "for the older rest" not in out
    rows = db.execute("select provider_email_id from fax_received_emails").fetchall()
    assert sorted(r["provider_email_id"] for r in rows) == sorted(e["email_id"] for e in missing), "all 150"


def test_a_run_takes_the_workers_limiter_slots_and_asks_again_for_a_page_the_rate_limit_refused(
    resend_cli, db, admin, stack_env, operator
) -> None:
    url = stack_env["RESEND_API_URL"]
    missing = inbound.receive_without_webhook(url, count=2, attachments=1, age_seconds=3600)
    refused = {"kind": "status", "target": "received", "status": 429, "name": "rate_limit_exceeded",
               "retry_after": 1, "count": 1}  # fmt: skip
    fired = httpx.get(f"{url}/_control/faults", timeout=10).json()  # what fired since the stack began
    httpx.post(f"{url}/_control/faults", json=refused, timeout=10).raise_for_status()
    status, out, err = resend_cli("reconcile", "--since", "20h", "--as", operator, "--json")
    assert (status, err) == (0, "")
    assert sorted(json.loads(out)["recorded_ids"]) == sorted(e["email_id"] for e in missing)
    refusals = httpx.get(f"{url}/_control/faults", timeout=10).json().get("status:429", 0)
    assert refusals == fired.get("status:429", 0) + 1, "the page was refused once, and then listed"
    limiter = admin.execute(
        "select next_at > '-infinity' as reserved, paused_until is not null as paused"
        " from document_jobs_rate_limits where provider = 'resend'"
    ).fetchone()
    assert limiter == {"reserved": True, "paused": True}, "its slots are the workers', and so is the 429's pause"


def test_health_shows_when_reconciliation_last_ran_and_what_it_found(resend_cli, db) -> None:
    _, out, _ = resend_cli("health")
    assert "reconciliation (every 10 min): never ran" in out
    with db.transaction():
        db.execute("select enqueue_document_jobs_reconciliation()")
    job = db.execute("select * from claim_document_jobs('reconcile_emails')").fetchone()
    db.execute("select finish_reconciliation_v2(%s, %s, 7, now(), null)", (job["id"], job["generation"]))
    _, out, _ = resend_cli("health", "--json")
    assert json.loads(out)["reconciliation"]["last_listed"] == 7
    _, text, _ = resend_cli("health")
    assert "listed 7, recorded 0 that no webhook delivered" in text
