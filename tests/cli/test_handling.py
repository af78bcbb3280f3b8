"""Who is dealing with a fax from the admin CLI (document-jobs-admin handle), against the local stack:
a clerk of --as takes a fax and closes it with a note, named by its job's short id or by its
e-mail's id; the fax's handling and its marks are shown; a viewer is refused (read_only) and
nothing changes; a bulk mark done counts the faxes first (--dry-run, printing the command that
marks exactly those) and marks them with --confirm, audited once; `operators add --role clerk`
makes a clerk."""

from __future__ import annotations

import json
import shlex

from lib.admin import PROGRAM
from tests.support.emails import failed_email
from tests.support.operators import new_account


def handling(db, fax: str) -> tuple[str, str | None, str | None] | None:
    row = db.execute("select state, assignee_email, note from fax_handling where fax_received_email_id = %s",
                     (fax,)).fetchone()  # fmt: skip
    return (row["state"], row["assignee_email"], row["note"]) if row else None


def test_a_clerk_takes_a_fax_and_closes_it_with_a_note(cli, db, stack_env) -> None:
    clerk = stack_env["DEVSTACK_CLERK_EMAIL"]
    job_id, fax = failed_email(db, "lost", "resend_not_found")

    status, out, err = cli("handle", job_id[:8], "--mark", "in_progress", "--as", clerk)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == f"fax {fax} marked in progress (対応中); recorded in the audit as {clerk}"
    assert handling(db, fax) == ("in_progress", clerk, None)

    status, out, _ = cli("handle", fax, "--mark", "done", "--note", "送信元に再送を依頼済み", "--as", clerk)
    assert status == 0 and "note: 送信元に再送を依頼済み" in out
    assert handling(db, fax) == ("done", clerk, "送信元に再送を依頼済み")

    status, out, _ = cli("handle", fax, "--mark", "done", "--as", clerk)
    assert status == 0 and out.startswith(f"fax {fax} already stood so: nothing changed")

    status, out, _ = cli("handle", job_id)
    lines = out.splitlines()
    assert lines[:4] == [f"fax {fax}", lines[1], "note: 送信元に再送を依頼済み", "marks (2, newest first)"]
    assert lines[1].startswith(f"handling: done (対応済み), closed by {clerk} at ")
    assert lines[4].endswith(f"{clerk}: in_progress -> done  note: 送信元に再送を依頼済み")
    assert lines[5].endswith(f"{clerk}: new -> in_progress")
    audit = db.execute("select action, actor_email, reason from document_jobs_audit order by id").fetchall()
    assert [(a["action"], a["actor_email"], a["reason"]) for a in audit] == [
        ("handle", clerk, None), ("handle", clerk, "送信元に再送を依頼済み")]  # fmt: skip


def test_a_viewer_may_not_mark_and_a_clerk_may_not_retry(cli, db, stack_env) -> None:
    job_id, fax = failed_email(db, "viewer")
    viewer = stack_env["DEVSTACK_VIEWER_EMAIL"]
    status, _, err = cli("--json", "handle", fax, "--mark", "done", "--as", viewer)
    refusal = json.loads(err)
    assert (status, refusal["error"]) == (1, "read_only")
    assert refusal["message"] == f"{viewer} is a viewer: only a clerk or an admin may mark faxes"
    status, _, err = cli("--json", "retry", job_id, "--as", stack_env["DEVSTACK_CLERK_EMAIL"])
    assert (status, json.loads(err)["error"]) == (1, "not_an_admin")
    status, _, err = cli("--json", "handle", fax, "--mark", "archived", "--as", stack_env["DEVSTACK_CLERK_EMAIL"])
    assert (status, json.loads(err)["error"]) == (2, "usage")
    assert handling(db, fax) is None
    assert db.execute("select count(*) as n from document_jobs_audit").fetchone()["n"] == 0


def test_a_bulk_mark_done_counts_first_then_marks_exactly_those(cli, db, stack_env) -> None:
    clerk = stack_env["DEVSTACK_CLERK_EMAIL"]
    lost = [failed_email(db, f"lost {i}", "resend_not_found")[1] for i in range(2)]
    _, other = failed_email(db, "other", "storage_too_large")

    status, out, err = cli("handle", "--mark", "done", "--error-code", "resend_not_found", "--as", clerk, "--dry-run")
    assert (status, err) == (0, "")
    first, second, third = out.splitlines()
    assert first == ("2 faxes would be marked done (error code resend_not_found; each fax once, those already done "
                     "left out); dry run: nothing changed.")  # fmt: skip
    assert second.startswith("To mark exactly these 2 done, within 15 minutes (until ")
    words = shlex.split(third)
    assert words[:3] == [PROGRAM, "handle", "--confirm"] and words[4:] == ["--as", clerk, "--note", "WHY"]
    assert [handling(db, fax) for fax in (*lost, other)] == [None] * 3

    status, _, err = cli("--json", *words[1:])
    assert (status, json.loads(err)["error"]) == (2, "reason_placeholder"), "the placeholder is no note"
    status, out, err = cli(*words[1:-1], "asked the senders again")
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == (
        f"marked done 2 of 2 faxes (error code resend_not_found) as {clerk}, note 'asked the senders again'"
    )
    assert [handling(db, fax) for fax in lost] == [("done", clerk, "asked the senders again")] * 2
    assert handling(db, other) is None
    audit = db.execute("select action, job_count, reason from document_jobs_audit").fetchall()
    assert [(a["action"], a["job_count"], a["reason"]) for a in audit] == [
        ("bulk_handle", 2, "asked the senders again")]  # fmt: skip


def test_operators_add_makes_a_clerk(cli, stack_env) -> None:
    account, _ = new_account(stack_env)
    status, out, _ = cli("operators", "add", account["email"], "--role", "clerk")
    assert status == 0 and out.strip() == f"{account['email']} is now an operator (clerk)"
    status, out, _ = cli("operators", "list", "--json")
    assert {o["email"]: o["role"] for o in json.loads(out)}[account["email"]] == "clerk"
