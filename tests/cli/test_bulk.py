"""Bulk retry and cancel from the admin CLI, against the local stack: the admin screen's own
server-side action (prepare, then apply in batches), a dry run that counts and prints the command
that confirms exactly those jobs, the actor an admin looked up in Supabase Auth (the stand-in),
the audit, and every refusal with its code and exit status."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta

import pytest

from lib.admin import PROGRAM
from tests.support.emails import failed_email
from tests.support.operators import new_account, sign_in


def statuses(db, ids) -> dict[str, tuple[str, int, str | None]]:
    rows = db.execute("select id::text, status, attempts, last_error_code from document_jobs"
                      " where id = any(%s::uuid[])", (list(ids),)).fetchall()  # fmt: skip
    return {row["id"]: (row["status"], row["attempts"], row["last_error_code"]) for row in rows}


def audit(admin, bulk_action_id: str) -> list[dict]:
    return admin.execute(
        "select actor_id::text, actor_email, action, job_count, reason, filter from document_jobs_audit"
        " where bulk_action_id = %s",
        (bulk_action_id,),
    ).fetchall()


def test_a_dry_run_counts_changes_nothing_and_prints_the_confirmation(cli, db, operator) -> None:
    counted = {failed_email(db, f"bulk {i}", "resend_unauthorized")[0] for i in range(3)}
    other, _ = failed_email(db, "another code", "resend_not_found")

    status, out, err = cli("retry", "--error-code", "resend_unauthorized", "--as", operator, "--dry-run")

    assert (status, err) == (0, "")
    first, second, third = out.splitlines()
    assert first == "3 failed jobs would be retried (error code resend_unauthorized); dry run: nothing changed."
    assert second.startswith("To retry exactly these 3, within 15 minutes (until ")
    words = shlex.split(third)
    assert words[:2] == [PROGRAM, "confirm"] and words[3:] == ["--as", operator, "--reason", "WHY"]
    assert set(statuses(db, [*counted, other]).values()) == {("failed", 5, "resend_unauthorized"),
                                                             ("failed", 5, "resend_not_found")}  # fmt: skip


def test_confirm_applies_exactly_what_was_counted_and_the_audit_names_the_admin(
    cli, db, admin, stack_env, operator
) -> None:
    counted = {failed_email(db, f"bulk {i}", "resend_unauthorized")[0] for i in range(3)}
    status, out, _ = cli("--json", "retry", "--error-code", "resend_unauthorized", "--as", operator, "--dry-run",
                         "--reason", "key rotated")  # fmt: skip
    prepared = json.loads(out)
    assert (status, prepared["job_count"], prepared["dry_run"]) == (0, 3, True)
    later, _ = failed_email(db, "failed after the count", "resend_unauthorized")

    status, out, err = cli(*shlex.split(prepared["confirm"])[1:])

    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"retried 3 of 3 jobs (error code resend_unauthorized) as {operator}; ")
    assert lines[-1] == f"recorded in the audit: bulk action {prepared['bulk_action_id']}, reason 'key rotated'"
    assert {status[:2] for status in statuses(db, counted).values()} == {("queued", 0)}
    assert statuses(db, [later])[later][0] == "failed", "a job that failed after the count is not in the snapshot"
    [row] = audit(admin, prepared["bulk_action_id"])
    user = sign_in(stack_env, operator, stack_env["DEVSTACK_OPERATOR_PASSWORD"])["user"]
    assert (row["actor_id"], row["actor_email"], row["action"], row["job_count"], row["reason"]) == (
        user["id"], operator, "bulk_retry", 3, "key rotated")  # fmt: skip
    assert row["filter"] == {"error_code": "resend_unauthorized"}


def test_yes_cancels_at_once_with_the_reason_on_each_job(cli, db, admin, operator) -> None:
    jobs = db.execute(
        "select (record_inbound_email('em_c' || g, 'w', '{}'::jsonb)).job_id::text as id from generate_series(1, 3) g"
    ).fetchall()
    ids = [row["id"] for row in jobs]
    since = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()

    status, out, err = cli("cancel", "--state", "queued", "--received-from", since, "--as", operator,
                           "--reason", "duplicate batch", "--yes", "--json")  # fmt: skip

    assert (status, err) == (0, "")
    progress = json.loads(out)
    assert (progress["action"], progress["changed"], progress["skipped"], progress["done"]) == ("cancel", 3, 0, True)
    assert progress["actor"]["email"] == operator
    assert set(statuses(db, ids).values()) == {("failed", 0, "cancelled")}
    messages = {r["last_error_message"] for r in db.execute("select last_error_message from document_jobs").fetchall()}
    assert messages == {"duplicate batch"}
    [row] = audit(admin, progress["bulk_action_id"])
    assert (row["action"], row["job_count"], row["reason"]) == ("bulk_cancel", 3, "duplicate batch")
    assert row["filter"]["states"] == ["queued"] and "received_from" in row["filter"]


def test_what_could_not_be_retried_is_listed_with_why(cli, db, operator) -> None:
    blocked, email = failed_email(db, "has a live job", "resend_unauthorized")
    retried, _ = failed_email(db, "alone", "resend_unauthorized")
    db.execute("insert into document_jobs (kind, fax_received_email_id) values ('fetch_email', %s)", (email,))

    status, out, _ = cli("retry", "--error-code", "resend_unauthorized", "--as", operator, "--reason", "x", "--yes")

    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"retried 1 of 2 jobs (error code resend_unauthorized) as {operator}")
    assert lines[1:3] == ["not retried: 1 (another_live_job: 1)", f"  {blocked}  another_live_job"]
    assert statuses(db, [retried])[retried][0] == "queued" and statuses(db, [blocked])[blocked][0] == "failed"


def test_nothing_matching_says_so(cli, db, operator) -> None:
    status, out, _ = cli("retry", "--error-code", "storage_invalid_key", "--as", operator, "--dry-run")
    assert (status, out.strip()) == (0, "no failed job matches (error code storage_invalid_key): nothing to retry")


REFUSALS = [
    (("retry", "--error-code", "resend_unauthorized", "--dry-run"), 2, "actor_required", "--as EMAIL"),
    (("retry", "--error-code", "resend_unauthorized", "--as", "{operator}"), 2, "confirmation_required", "--dry-run"),
    (("retry", "--error-code", "resend_unauthorized", "--as", "{operator}", "--yes"), 2, "reason_required", "--reason"),
    (("retry", "--as", "{operator}", "--dry-run"), 2, "filter_required", "--error-code"),
    (("retry", "--error-code", "resend_unauthorised", "--as", "{operator}", "--dry-run"), 2, "unknown_error_code", ""),
    (("retry", "--error-code", "resend_unauthorized", "--as", "{viewer}", "--dry-run"), 1, "not_an_admin", "viewer"),
    (
        ("retry", "--error-code", "resend_unauthorized", "--as", "nobody@example.com", "--dry-run"),
        1,
        "not_an_operator",
        "nobody@example.com",
    ),
    (("retry", "00000000-0000-0000-0000-000000000000", "--error-code", "resend_unauthorized"), 2, "usage", "not both"),
    (
        ("cancel", "--received-from", "1h", "--received-to", "2h", "--as", "{operator}", "--dry-run"),
        2,
        "invalid_argument",
        "--received-from must be before --received-to",
    ),
    (
        ("confirm", "00000000-0000-0000-0000-000000000000", "--as", "{operator}", "--reason", "x"),
        1,
        "bulk_action_not_found",
        "count again",
    ),
]


@pytest.mark.parametrize(("argv", "status", "code", "says"), REFUSALS, ids=[r[2] for r in REFUSALS])
def test_refusals_have_a_code_an_exit_status_and_say_what_to_do(cli, db, stack_env, argv, status, code, says) -> None:
    failed_email(db, "one", "resend_unauthorized")
    names = {"operator": stack_env["DEVSTACK_OPERATOR_EMAIL"], "viewer": stack_env["DEVSTACK_VIEWER_EMAIL"]}
    argv = tuple(word.format(**names) for word in argv)
    got, out, err = cli("--json", *argv)
    assert (got, out) == (status, "")
    error = json.loads(err)
    assert error["error"] == code and says in error["message"], error
    got, _, err = cli(*argv)
    [line] = err.splitlines()
    assert got == status and line.startswith("error: ") and says in line


def test_only_the_admin_who_counted_may_confirm(cli, db, stack_env, operator) -> None:
    failed_email(db, "one", "resend_unauthorized")
    other, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    _, out, _ = cli("--json", "retry", "--error-code", "resend_unauthorized", "--as", operator, "--dry-run")
    bulk_action_id = json.loads(out)["bulk_action_id"]

    status, _, err = cli("--json", "confirm", bulk_action_id, "--as", other["email"], "--reason", "x")

    assert status == 1 and json.loads(err)["error"] == "not_the_counting_operator"
    status, out, _ = cli("confirm", bulk_action_id, "--as", operator, "--reason", "x")
    assert status == 0 and out.startswith("retried 1 of 1 jobs")


def test_a_bulk_retry_leaves_cancelled_jobs_out_unless_the_filter_names_that_code(cli, db, operator) -> None:
    failed, _ = failed_email(db, "failed on its own", "resend_not_found")
    cancelled, _ = failed_email(db, "cancelled by an admin", "cancelled")

    status, out, _ = cli("retry", "--received-from", "1d", "--as", operator, "--dry-run")
    assert status == 0 and out.startswith("1 failed job would be retried")
    assert "jobs an admin cancelled (error code cancelled) are left out" in out
    status, out, _ = cli("--json", "retry", "--received-from", "1d", "--as", operator, "--yes",
                         "--reason", "all failed")  # fmt: skip
    assert status == 0 and json.loads(out)["changed"] == 1
    assert statuses(db, [failed, cancelled]) == {failed: ("queued", 0, "resend_not_found"),
                                                 cancelled: ("failed", 5, "cancelled")}  # fmt: skip

    status, out, _ = cli(
        "--json", "retry", "--error-code", "cancelled", "--as", operator, "--yes", "--reason", "on purpose"
    )
    assert status == 0 and json.loads(out)["changed"] == 1 and statuses(db, [cancelled])[cancelled][0] == "queued"


def test_a_repeated_confirm_says_it_changed_nothing_and_which_reason_the_audit_kept(cli, db, admin, operator) -> None:
    for i in range(2):
        failed_email(db, f"twice {i}", "resend_unauthorized")
    status, out, _ = cli("--json", "retry", "--error-code", "resend_unauthorized", "--as", operator, "--dry-run")
    bulk_action_id = json.loads(out)["bulk_action_id"]
    status, out, err = cli("confirm", bulk_action_id, "--as", operator, "--reason", "first")
    assert (status, err) == (0, "") and out.startswith("retried 2 of 2 jobs")

    status, out, err = cli("confirm", bulk_action_id, "--as", operator, "--reason", "again")

    assert (status, err) == (0, "")
    first, last = out.splitlines()
    assert first.startswith(f"bulk action {bulk_action_id} was already confirmed at ")
    assert first.endswith(f"by {operator}: this confirm changed nothing; in all, retried 2 of 2 jobs "
                          "(error code resend_unauthorized)")  # fmt: skip
    assert last == "the audit keeps the first confirm's reason 'first', not 'again'"
    [row] = audit(admin, bulk_action_id)
    assert row["reason"] == "first"

    status, out, _ = cli("--json", "confirm", bulk_action_id, "--as", operator, "--reason", "again")
    answer = json.loads(out)
    assert (status, answer["already_confirmed"], answer["changed_now"], answer["audit_reason"]) == (0, True, 0, "first")


def test_a_bulk_retry_by_sender_counts_only_that_senders_jobs_and_applies_it(cli, db, admin, operator) -> None:
    """`retry --sender` (the issue's "argument job_id: 'fax-gateway' is not a job id"): the same flags as `list`,
    and a filter by the sender alone: a job whose subject names the sender is not retried."""
    gateway = {failed_email(db, f"gateway {i}", sender="Fax Gateway <FAX-gateway@example.jp>")[0] for i in range(2)}
    other, _ = failed_email(db, "another sender")
    subject, _ = failed_email(db, "forwarded by fax-gateway")

    status, out, err = cli("--json", "retry", "--sender", "fax-gateway", "--as", operator, "--dry-run")

    assert (status, err) == (0, "")
    prepared = json.loads(out)
    assert (prepared["job_count"], prepared["filter"]) == (2, {"sender": "fax-gateway"})
    status, out, _ = cli("retry", "--sender", "fax-gateway", "--as", operator, "--dry-run")
    assert out.startswith("2 failed jobs would be retried (from a sender with 'fax-gateway'); dry run")
    listed = json.loads(cli("list", "--json", "--sender", "fax-gateway", "--state", "failed")[1])["jobs"]
    assert {job["id"] for job in listed} == gateway, "list and the bulk retry take the one filter"
    status, out, err = cli(*shlex.split(prepared["confirm"])[1:-1], "by sender")
    assert (status, err) == (0, "")
    assert {status[:2] for status in statuses(db, gateway).values()} == {("queued", 0)}
    assert {statuses(db, [job])[job][0] for job in (other, subject)} == {"failed"}


def test_the_printed_confirmation_pasted_as_it_is_refuses_its_placeholder_reason(cli, db, admin, operator) -> None:
    """The dry run prints `confirm ... --reason WHY`: pasted unchanged, it must not record "WHY" as the
    operator's reason in the audit."""
    counted = {failed_email(db, f"placeholder {i}", "resend_unauthorized")[0] for i in range(2)}
    _, out, _ = cli("--json", "retry", "--error-code", "resend_unauthorized", "--as", operator, "--dry-run")
    prepared = json.loads(out)
    pasted = shlex.split(prepared["confirm"])[1:]
    assert pasted[-2:] == ["--reason", "WHY"]

    status, out, err = cli("--json", *pasted)

    assert (status, out) == (2, "")
    refusal = json.loads(err)
    assert refusal["error"] == "reason_placeholder" and "in your own words" in refusal["message"], refusal
    assert audit(admin, prepared["bulk_action_id"]) == []
    assert {row[0] for row in statuses(db, counted).values()} == {"failed"}, "nothing applied"
    for placeholder in ("why", " <WHY> ", "'WHY'"):
        assert cli("--json", *pasted[:-1], placeholder)[0] == 2, placeholder

    status, out, err = cli(*pasted[:-1], "key rotated")
    assert (status, err) == (0, "") and out.startswith("retried 2 of 2 jobs")
    assert [row["reason"] for row in audit(admin, prepared["bulk_action_id"])] == ["key rotated"]


@pytest.mark.parametrize(
    ("argv", "state"),
    [
        (("cancel", "{job}", "--reason", "WHY"), "queued"),
        (("retry", "{job}", "--reason", "WHY"), "failed"),
        (("cancel", "--state", "queued", "--reason", "WHY", "--yes"), "queued"),
        (("retry", "--error-code", "resend_unauthorized", "--reason", "WHY", "--dry-run"), "failed"),
    ],
    ids=["cancel", "retry", "bulk cancel", "bulk dry run"],
)
def test_every_reason_refuses_the_placeholder_of_the_printed_commands(cli, db, admin, operator, argv, state) -> None:
    """A refusal prints `cancel <job> --reason WHY` too; no command takes the placeholder as a reason."""
    job, _ = failed_email(db, "placeholder", "resend_unauthorized")
    if state == "queued":
        db.execute("update document_jobs set status = 'queued', finished_at = null where id = %s", (job,))
    status, out, err = cli("--json", *(word.format(job=job) for word in argv), "--as", operator)
    assert (status, out, json.loads(err)["error"]) == (2, "", "reason_placeholder")
    assert statuses(db, [job])[job][0] == state
    assert admin.execute("select count(*) as n from document_jobs_audit").fetchone()["n"] == 0
    assert admin.execute("select count(*) as n from document_jobs_internal.bulk_actions").fetchone()["n"] == 0
