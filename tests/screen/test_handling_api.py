"""Who is dealing with a fax, through the admin function on the local function host (as
tests/screen/test_api.py): a clerk reads what a viewer reads and marks a fax (taken, then done with
a note), one tap at a time, audited; a viewer reads the handling and is refused a mark (403
read_only), a clerk a job's actions (403 not_admin); a tap on a state that moved on since is 409
with the fax's handling now; opening a fax marks nothing; a bulk mark done counts the faxes first
and marks exactly those; a banned clerk is refused; and the overview counts a failed job as a
problem until its fax is done."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.emails import failed_email
from tests.support.operators import ban, new_account, sign_in

TIMEOUT = 60


@pytest.fixture(scope="module")
def clerk_session(stack_env) -> dict[str, Any]:
    return sign_in(stack_env, stack_env["DEVSTACK_CLERK_EMAIL"], stack_env["DEVSTACK_CLERK_PASSWORD"])


@pytest.fixture(scope="module")
def viewer_session(stack_env) -> dict[str, Any]:
    return sign_in(stack_env, stack_env["DEVSTACK_VIEWER_EMAIL"], stack_env["DEVSTACK_VIEWER_PASSWORD"])


@pytest.fixture(scope="module")
def operator_session(stack_env) -> dict[str, Any]:
    return sign_in(stack_env, stack_env["DEVSTACK_OPERATOR_EMAIL"], stack_env["DEVSTACK_OPERATOR_PASSWORD"])


def call(env: dict[str, str], path: str, token: str, body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    url = f"{env['FUNCTIONS_URL']}/api/admin/{path}"
    if body is None:
        return httpx.get(url, headers=headers, timeout=TIMEOUT)
    return httpx.post(url, headers=headers, json=body, timeout=TIMEOUT)


def handling_rows(db) -> list[tuple[str, str | None, str | None]]:
    rows = db.execute("select state, assignee_email, note from fax_handling order by updated_at").fetchall()
    return [(row["state"], row["assignee_email"], row["note"]) for row in rows]


def test_a_clerk_takes_a_fax_then_marks_it_done_with_a_note_and_the_audit_says_so(stack_env, clerk_session, db) -> None:
    token, clerk = clerk_session["access_token"], stack_env["DEVSTACK_CLERK_EMAIL"]
    job_id, fax = failed_email(db, "a lost fax")
    assert call(stack_env, "me", token).json()["role"] == "clerk"
    assert call(stack_env, "overview", token).status_code == 200
    assert call(stack_env, f"jobs/{job_id}", token).json()["job"]["id"] == job_id
    # Opening the fax (its job's page, its handling) marks nothing.
    shown = call(stack_env, f"faxes/{fax}/handling", token).json()
    assert (shown["state"], shown["history"]) == ("new", [])
    assert handling_rows(db) == []

    taken = call(stack_env, f"faxes/{fax}/handling", token, {"state": "in_progress", "from": "new"})
    assert taken.status_code == 200 and taken.json()["changed"] is True
    assert (taken.json()["handling"]["state"], taken.json()["handling"]["assignee_email"]) == ("in_progress", clerk)
    done = call(stack_env, f"faxes/{fax}/handling", token,
                {"state": "done", "from": "in_progress", "note": "送信元に再送を依頼済み"})  # fmt: skip
    assert done.json()["handling"]["state"] == "done"
    assert handling_rows(db) == [("done", clerk, "送信元に再送を依頼済み")]

    marks = call(stack_env, f"faxes/{fax}/handling", token).json()["history"]
    assert [(m["from"], m["to"], m["actor_email"], m["note"]) for m in marks] == [
        ("in_progress", "done", clerk, "送信元に再送を依頼済み"),
        ("new", "in_progress", clerk, None),
    ]
    entries = call(stack_env, "audit", token).json()["entries"]
    assert [(e["action"], e["actor_email"], e["reason"], e["handling"]["from"], e["handling"]["to"],
             e["handling"]["fax_received_email_id"]) for e in entries[:2]] == [
        ("handle", clerk, "送信元に再送を依頼済み", "in_progress", "done", fax),
        ("handle", clerk, None, "new", "in_progress", fax),
    ]  # fmt: skip

    # A clerk is no admin: a job's actions stay an admin's.
    for path, body in ((f"jobs/{job_id}/retry", {}), (f"jobs/{job_id}/cancel", {"reason": "x"}),
                       ("bulk", {"action": "retry", "query": "state=failed"})):  # fmt: skip
        answer = call(stack_env, path, token, body)
        assert (answer.status_code, answer.json()["error"]) == (403, "not_admin"), path
    assert db.execute("select status from document_jobs where id = %s", (job_id,)).fetchone()["status"] == "failed"


def test_a_viewer_reads_the_handling_and_is_refused_a_mark(stack_env, viewer_session, clerk_session, db) -> None:
    _, fax = failed_email(db, "viewer's fax")
    token = viewer_session["access_token"]
    call(stack_env, f"faxes/{fax}/handling", clerk_session["access_token"], {"state": "in_progress"})
    read = call(stack_env, f"faxes/{fax}/handling", token).json()
    assert (read["state"], read["assignee_email"]) == ("in_progress", stack_env["DEVSTACK_CLERK_EMAIL"])
    for path, body in ((f"faxes/{fax}/handling", {"state": "done", "from": "in_progress"}),
                       ("handling/bulk", {"query": "state=failed"})):  # fmt: skip
        answer = call(stack_env, path, token, body)
        assert (answer.status_code, answer.json()["error"]) == (403, "read_only"), path
    assert handling_rows(db) == [("in_progress", stack_env["DEVSTACK_CLERK_EMAIL"], None)]


def test_a_tap_on_a_state_that_moved_on_is_a_conflict_with_the_faxs_handling_now(
    stack_env, clerk_session, operator_session, db
) -> None:
    _, fax = failed_email(db, "two clerks")
    first = call(stack_env, f"faxes/{fax}/handling", operator_session["access_token"],
                 {"state": "in_progress", "from": "new"})  # fmt: skip
    assert first.json()["changed"] is True
    second = call(stack_env, f"faxes/{fax}/handling", clerk_session["access_token"],
                  {"state": "in_progress", "from": "new"})  # fmt: skip
    assert (second.status_code, second.json()["error"]) == (409, "handling_changed")
    assert second.json()["handling"]["assignee_email"] == stack_env["DEVSTACK_OPERATOR_EMAIL"]
    again = call(stack_env, f"faxes/{fax}/handling", operator_session["access_token"], {"state": "in_progress"})
    assert (again.status_code, again.json()["changed"], again.json()["reason"]) == (200, False, "unchanged")
    assert len(db.execute("select * from fax_handling_history").fetchall()) == 1


def test_bad_marks_are_refused_with_a_stable_code(stack_env, clerk_session, db) -> None:
    token = clerk_session["access_token"]
    _, fax = failed_email(db, "bad marks")
    for body, status, code in (
        ({"state": "archived"}, 400, "bad_request"),
        ({"state": "done", "from": "lost"}, 400, "bad_request"),
        ({"state": "done", "note": 5}, 400, "bad_request"),
        ({"state": "done", "note": "x" * 501}, 400, "bad_request"),
        ({"state": "done", "note": "bell \u0007"}, 400, "bad_request"),
        ({"state": "done", "note": "nul \u0000"}, 400, "bad_text"),
    ):
        answer = call(stack_env, f"faxes/{fax}/handling", token, body)
        assert (answer.status_code, answer.json()["error"]) == (status, code), body
    missing = "00000000-0000-4000-8000-000000000000"
    for answer in (call(stack_env, f"faxes/{missing}/handling", token),
                   call(stack_env, f"faxes/{missing}/handling", token, {"state": "done"})):  # fmt: skip
        assert (answer.status_code, answer.json()["error"]) == (404, "not_found")
    assert handling_rows(db) == []


def test_a_bulk_mark_done_counts_the_faxes_first_and_marks_exactly_those(stack_env, clerk_session, db) -> None:
    token, clerk = clerk_session["access_token"], stack_env["DEVSTACK_CLERK_EMAIL"]
    lost = [failed_email(db, f"lost {i}", "resend_not_found")[1] for i in range(3)]
    _, other = failed_email(db, "another failure", "storage_too_large")
    before = call(stack_env, "overview", token).json()["states"]
    assert (before["failed"], before["failed_closed"]) == (4, 0)

    prepared = call(stack_env, "handling/bulk", token, {"query": "state=failed&code=resend_not_found"}).json()
    assert prepared["fax_count"] == 3 and prepared["filter"] == {"states": ["failed"], "error_code": "resend_not_found"}
    assert handling_rows(db) == [], "counting marks nothing"
    no_note = call(stack_env, f"handling/bulk/{prepared['bulk_action_id']}/apply", token, {})
    assert (no_note.status_code, no_note.json()["error"]) == (400, "bad_request"), "the first call needs a note"
    failed_email(db, "lost after the count", "resend_not_found")
    progress = call(stack_env, f"handling/bulk/{prepared['bulk_action_id']}/apply", token,
                    {"note": "送信元に再送を依頼済み"}).json()  # fmt: skip
    assert (progress["done"], progress["changed"], progress["skipped"]) == (True, 3, 0)

    rows = db.execute("select e.id::text as id, coalesce(h.state, 'new') as state from fax_received_emails e"
                      " left join fax_handling h on h.fax_received_email_id = e.id").fetchall()  # fmt: skip
    states = {row["id"]: row["state"] for row in rows}
    assert [states[fax] for fax in lost] == ["done"] * 3 and states[other] == "new"
    assert sorted(states.values()) == ["done", "done", "done", "new", "new"], "the fax failed after the count: new"
    [entry] = [e for e in call(stack_env, "audit", token).json()["entries"] if e["action"] == "bulk_handle"]
    assert (entry["actor_email"], entry["job_count"], entry["reason"], entry["bulk"]["changed"]) == (
        clerk, 3, "送信元に再送を依頼済み", 3)  # fmt: skip

    # The overview counts open problems: the fax failed after the count and the other failure.
    after = call(stack_env, "overview", token).json()
    assert (after["states"]["failed"], after["states"]["failed_closed"]) == (2, 3)
    assert sorted((f["error_code"], f["count"]) for f in after["failed_by_error_code"]) == [
        ("resend_not_found", 1), ("storage_too_large", 1)]  # fmt: skip


def test_a_banned_clerk_may_not_mark(stack_env, db) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "clerk"})
    token = sign_in(stack_env, account["email"], password)["access_token"]
    _, fax = failed_email(db, "banned clerk")
    ban(stack_env, account["id"], "24h")
    answer = call(stack_env, f"faxes/{fax}/handling", token, {"state": "in_progress"})
    assert (answer.status_code, answer.json()["error"]) == (401, "session_ended")
    assert handling_rows(db) == []


def test_the_inbox_shows_and_filters_who_is_dealing_with_each_fax_and_marks_what_it_lists(
    stack_env, clerk_session, operator_session, db
) -> None:
    token, clerk = clerk_session["access_token"], stack_env["DEVSTACK_CLERK_EMAIL"]
    _, mine = failed_email(db, "taken by the clerk")
    _, theirs = failed_email(db, "taken by the admin")
    _, untouched = failed_email(db, "nobody's")
    call(stack_env, f"faxes/{mine}/handling", token, {"state": "in_progress"})
    call(stack_env, f"faxes/{theirs}/handling", operator_session["access_token"], {"state": "in_progress"})

    def listed(query: str) -> dict[str, tuple[str, str | None]]:
        page = call(stack_env, f"faxes?{query}", token).json()
        return {f["id"]: (f["handling"]["state"], f["handling"]["assignee_email"]) for f in page["faxes"]}

    assert listed("") == {mine: ("in_progress", clerk), theirs: ("in_progress", stack_env["DEVSTACK_OPERATOR_EMAIL"]),
                          untouched: ("new", None)}  # fmt: skip
    assert set(listed("handling=new")) == {untouched}
    assert set(listed("handling=open")) == {mine, theirs, untouched}
    assert set(listed("assignee=me")) == {mine}, "me: the operator asking"
    assert set(listed("handling=in_progress&assignee=me")) == {mine}
    bad = call(stack_env, "faxes?handling=archived", token)
    assert (bad.status_code, bad.json()["error"]) == (400, "bad_request")

    # Everything the inbox lists as mine, marked done at once: the count first.
    prepared = call(stack_env, "handling/bulk", token, {"scope": "faxes", "query": "assignee=me"}).json()
    assert prepared["fax_count"] == 1 and prepared["filter"] == {"assignee": clerk}
    done = call(stack_env, f"handling/bulk/{prepared['bulk_action_id']}/apply", token, {"note": "called back"}).json()
    assert (done["done"], done["changed"]) == (True, 1)
    assert listed("handling=done") == {mine: ("done", clerk)}
    # The fax's page carries its handling too.
    assert call(stack_env, f"faxes/{mine}", token).json()["fax"]["handling"]["note"] == "called back"
