"""A fax's keep-until date and its deletion through the admin API over HTTP (the function host,
Auth's tokens, PostgREST): the fax's read carries its retention in the office's zone; a viewer may
not delete; an admin's deletion before the date is a 409 retention_not_over that changes nothing;
after it, the deletion is recorded in fax_deletions and the fax is gone from the API. On the fax's
page in Debian's chromium, a viewer reads the date, an admin sees no deletion before it, and after
it deletes the fax with a reason."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.support import admin_page
from tests.support.emails import receive_email, stored_attachment
from tests.support.operators import sign_in

TIMEOUT = 60


def call(env: dict[str, str], path: str, session: dict[str, Any], body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {session['access_token']}"}
    url = f"{env['FUNCTIONS_URL']}/api/admin/{path}"
    if body is None:
        return httpx.get(url, headers=headers, timeout=TIMEOUT)
    return httpx.post(url, headers=headers, json=body, timeout=TIMEOUT)


def a_fax(db, env, provider_id: str, received: str) -> str:
    email_id = str(receive_email(db, provider_id, {"from": "fax@example.jp", "created_at": received})
                   ["fax_received_email_id"])  # fmt: skip
    stored_attachment(db, env, email_id)
    db.execute("delete from document_jobs where fax_received_email_id = %s", (email_id,))  # its fetch ended long ago
    return email_id


def test_the_keep_until_date_is_read_and_a_deletion_is_refused_before_it_and_recorded_after_it(db, stack_env) -> None:
    admin = sign_in(stack_env, stack_env["DEVSTACK_OPERATOR_EMAIL"], stack_env["DEVSTACK_OPERATOR_PASSWORD"])
    viewer = sign_in(stack_env, stack_env["DEVSTACK_VIEWER_EMAIL"], stack_env["DEVSTACK_VIEWER_PASSWORD"])
    old = a_fax(db, stack_env, "em_http_old", "2016-03-31T14:30:00Z")  # 23:30 in Tokyo: the year ending that day
    new = a_fax(db, stack_env, "em_http_new", "2026-12-07T01:00:00Z")

    read = call(stack_env, f"faxes/{old}", viewer)
    assert read.status_code == 200, read.text
    assert read.json()["retention"] == {
        "keep_until": "2023-05-31", "time_zone": "Asia/Tokyo", "deletable": True, "fiscal_year_end_month": 3,
        "filing_deadline_months": 2, "retention_years": 7,
    }  # fmt: skip
    assert call(stack_env, f"faxes/{new}", viewer).json()["retention"]["keep_until"] == "2034-05-31"

    refused = call(stack_env, f"faxes/{old}/deletion", viewer, {"reason": "kept long enough"})
    assert refused.status_code == 403, refused.text
    no_reason = call(stack_env, f"faxes/{old}/deletion", admin, {})
    assert no_reason.status_code == 400, no_reason.text
    early = call(stack_env, f"faxes/{new}/deletion", admin, {"reason": "too early"})
    assert early.status_code == 409, early.text
    assert (
        early.json()["error"] == "retention_not_over"
        and "must be kept until 2034-05-31 (Asia/Tokyo)" in early.json()["message"]
    )
    assert db.execute("select count(*) as n from fax_deletions").fetchone()["n"] == 0

    deleted = call(stack_env, f"faxes/{old}/deletion", admin, {"reason": "保存期間満了"})
    assert deleted.status_code == 200, deleted.text
    answer = deleted.json()
    assert answer["keep_until"] == "2023-05-31" and [o["kind"] for o in answer["objects"]] == ["original"]
    row = db.execute("select * from fax_deletions").fetchone()
    assert (row["id"], str(row["fax_received_email_id"]), row["reason"], row["actor_email"]) == (
        answer["deletion_id"], old, "保存期間満了", stack_env["DEVSTACK_OPERATOR_EMAIL"],
    )  # fmt: skip
    assert call(stack_env, f"faxes/{old}", viewer).status_code == 404
    assert call(stack_env, f"faxes/{new}", viewer).status_code == 200


@pytest.mark.slow  # a browser
def test_an_admin_deletes_a_fax_past_its_keep_until_date_from_its_page_and_a_viewer_cannot(
    chromium, db, stack_env
) -> None:
    old = str(receive_email(db, "em_page_old", {"from": "fax@example.jp", "created_at": "2015-06-01T01:00:00Z"})
              ["fax_received_email_id"])  # fmt: skip
    new = str(receive_email(db, "em_page_new", {"from": "fax@example.jp"})["fax_received_email_id"])
    db.execute("delete from document_jobs")  # their fetches ended long ago

    viewer_context = chromium.new_context(locale="en-US")
    page = viewer_context.new_page()
    admin_page.sign_in(page, stack_env, "VIEWER")
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{old}")
    expect(page.locator(".keep-until")).to_have_text("2023-05-31, to the end of that day (Asia/Tokyo)")
    expect(page.locator("details.fax-delete")).to_have_count(0)  # a viewer reads the date, never deletes
    viewer_context.close()

    context = chromium.new_context(locale="ja-JP")
    page = context.new_page()
    admin_page.sign_in(page, stack_env, "OPERATOR")
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{new}")
    expect(page.locator(".keep-until")).to_have_text("2034-05-31 まで（Asia/Tokyo）")
    expect(page.locator("details.fax-delete")).to_have_count(0)  # not before its keep-until date
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{old}")
    expect(page.locator(".keep-until")).to_have_text("2023-05-31 まで（Asia/Tokyo）")
    page.click("details.fax-delete summary")
    page.fill("details.fax-delete textarea[name=reason]", "保存期間満了（申請書 No.3）")
    page.click("details.fax-delete button[type=submit]")
    expect(page.locator("p.notice")).to_have_text(
        "FAX を削除し、その記録を残しました。ファイルは次の document-jobs-admin purge-deleted で Storage から"
        "削除されます。"
    )
    row = db.execute("select * from fax_deletions").fetchone()
    assert (str(row["fax_received_email_id"]), row["reason"]) == (old, "保存期間満了（申請書 No.3）")
    assert row["actor_email"] == stack_env["DEVSTACK_OPERATOR_EMAIL"]
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 1
    context.close()
