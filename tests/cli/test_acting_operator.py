"""--as checks what the admin screen checks: the admin it names must be live in Supabase Auth now (not
banned, not deleted) and an admin, or nothing is done and nothing is audited in their name. Bans and
deletions through Auth's admin API (the local stack's Auth stand-in, as GoTrue's PUT and DELETE
/admin/users/{id} take them). The CLI refuses them at its lookup (lib/admin/bulk.py actor), and the
action's own database call refuses them too (document_jobs_internal.acting_operator): an admin banned,
deleted or demoted after the lookup, or between a dry run and its confirm, is refused by the action itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from devstack.tools import inbound
from lib.admin.operators import AuthAdmin
from tests.support.emails import email_with_job, failed_email
from tests.support.operators import ban, delete_user, new_account, set_app_metadata

ADMIN = {"document_jobs_role": "admin"}


@pytest.fixture
def resend_cli(cli, stack_env, monkeypatch):
    """The CLI, with Resend's settings for reconcile; Resend's stand-in has received nothing yet."""
    httpx.post(f"{stack_env['RESEND_API_URL']}/_control/emails/clear", timeout=10).raise_for_status()
    monkeypatch.setenv("RESEND_API_KEY", stack_env["RESEND_API_KEY"])
    monkeypatch.setenv("RESEND_API_URL", stack_env["RESEND_API_URL"])
    return cli


@pytest.fixture
def work(db, resend_cli, stack_env) -> dict[str, str]:
    """A failed job, a queued one, a bulk retry counted by a live admin, and an e-mail Resend has and
    no webhook delivered: something for each action to do."""
    account, _ = new_account(stack_env, app_metadata=ADMIN)
    failed, _ = failed_email(db, "to retry", "resend_not_found")
    queued, _ = email_with_job(db)
    status, out, _ = resend_cli("--json", "retry", "--error-code", "resend_not_found", "--as", account["email"],
                                "--dry-run")  # fmt: skip
    assert status == 0
    inbound.receive_without_webhook(stack_env["RESEND_API_URL"], count=1, attachments=1, age_seconds=86400)
    return {"id": account["id"], "email": account["email"], "failed": failed, "queued": queued,
            "bulk_action_id": json.loads(out)["bulk_action_id"]}  # fmt: skip


def actions(work: dict[str, str]) -> list[tuple[str, ...]]:
    """Every command that acts in the name of --as: one job, in bulk, a counted bulk action, reconcile."""
    email = work["email"]
    return [
        ("retry", work["failed"], "--as", email),
        ("cancel", work["queued"], "--as", email, "--reason", "duplicate fax"),
        ("retry", "--error-code", "resend_not_found", "--as", email, "--dry-run"),
        ("cancel", "--state", "queued", "--as", email, "--reason", "test batch", "--yes"),
        ("confirm", work["bulk_action_id"], "--as", email, "--reason", "key rotated"),
        ("reconcile", "--since", "12h", "--as", email),
    ]


def nothing_done(db, admin, work: dict[str, str]) -> None:
    assert admin.execute("select count(*) as n from document_jobs_audit").fetchone()["n"] == 0, "nobody audited"
    states = db.execute("select id::text, status from document_jobs where id = any(%s::uuid[])",
                        ([work["failed"], work["queued"]],)).fetchall()  # fmt: skip
    assert {row["id"]: row["status"] for row in states} == {work["failed"]: "failed", work["queued"]: "queued"}
    assert db.execute("select count(*) as n from fax_received_emails where found_by = 'reconciliation'").fetchone()[
        "n"] == 0, "nothing reconciled"  # fmt: skip


def test_an_admin_whom_auth_has_banned_is_refused_by_every_command_that_acts(resend_cli, db, admin, stack_env,
                                                                             work) -> None:  # fmt: skip
    banned = ban(stack_env, work["id"], "24h")
    assert banned["banned_until"], "Auth answers the ban"

    for argv in actions(work):
        status, out, err = resend_cli("--json", *argv)
        refusal = json.loads(err)
        assert (status, out, refusal["error"]) == (1, "", "operator_banned"), argv
        assert refusal["message"].startswith(f"{work['email']} is banned in Supabase Auth until "), refusal
    status, _, err = resend_cli(*actions(work)[0])
    assert status == 1 and err.startswith(f"error: {work['email']} is banned in Supabase Auth until ")
    nothing_done(db, admin, work)

    ban(stack_env, work["id"], "none")  # lifted, as GoTrue's ban_duration "none" lifts it
    assert resend_cli(*actions(work)[0])[0] == 0, "the same admin acts again once the ban is lifted"


def _after_the_lookup(monkeypatch, change: Callable[[], Any]) -> None:
    """The CLI's lookup answers the admin as Auth had them; Auth changes them right after (for
    real, through its admin API), before the action's call: what a ban racing the CLI does."""
    find = AuthAdmin.find

    def find_then_change(self: AuthAdmin, email: str) -> dict[str, Any] | None:
        user = find(self, email)
        change()
        return user

    monkeypatch.setattr(AuthAdmin, "find", find_then_change)


def test_a_ban_after_the_lookup_is_refused_by_the_actions_own_call(resend_cli, db, admin, stack_env, work,
                                                                   monkeypatch) -> None:  # fmt: skip
    _after_the_lookup(monkeypatch, lambda: ban(stack_env, work["id"], "24h"))
    for argv in actions(work):
        ban(stack_env, work["id"], "none")  # live when the CLI looks
        status, out, err = resend_cli("--json", *argv)
        refusal = json.loads(err)
        assert (status, out, refusal["error"]) == (1, "", "operator_banned"), argv
        # The database's words: the time in UTC with its offset, as the alerts print it.
        assert refusal["message"].startswith(f"{work['email']} is banned in Supabase Auth until "), refusal
        assert refusal["message"].endswith(" +00:00: a banned user may not act"), refusal
    nothing_done(db, admin, work)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda env, user: delete_user(env, user["id"], soft=True), "operator_deleted"),
        (lambda env, user: delete_user(env, user["id"], soft=False), "operator_deleted"),
        (lambda env, user: set_app_metadata(env, user["id"], {"document_jobs_role": "viewer"}), "not_an_admin"),
        (lambda env, user: set_app_metadata(env, user["id"], {"document_jobs_role": None}), "not_an_operator"),
    ],
    ids=["soft-deleted", "hard-deleted", "made a viewer", "role removed"],
)
def test_a_deletion_or_a_role_change_after_the_lookup_is_refused_too(resend_cli, db, admin, stack_env, work,
                                                                     monkeypatch, change, code) -> None:  # fmt: skip
    _after_the_lookup(monkeypatch, lambda: change(stack_env, work))
    status, out, err = resend_cli("--json", "retry", work["failed"], "--as", work["email"])
    assert (status, out, json.loads(err)["error"]) == (1, "", code)
    nothing_done(db, admin, work)
