"""Who is dealing with a fax, in a real browser (Debian's chromium, headless, through the local stack
as tests/screen/test_browser.py): a clerk opens a fax the provider has lost (resend_not_found), finds
no 再実行 (the advice says a retry cannot help) and closes it with one tap, with a note; the
overview then counts no open problem (「失敗はありません。」) and says how many failures are closed;
a viewer sees the fax done, its note, and no control, in both languages; axe-core finds nothing at
a phone's width and a desktop's. Under the page's own policy, with no violation: a clerk takes a fax
with one tap, and marks every fax of a filter done, the count first; a viewer's bulk mark is refused.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.screen.test_browser_layout import DESKTOP, PHONE, axe_violations
from tests.support.admin_page import Watched, sign_in
from tests.support.emails import failed_email

pytestmark = pytest.mark.slow  # a browser on the whole stack

NOTE = "送信元に再送を依頼済み"


def handling(db, fax: str) -> tuple[str, str | None, str | None] | None:
    row = db.execute("select state, assignee_email, note from fax_handling where fax_received_email_id = %s",
                     (fax,)).fetchone()  # fmt: skip
    return (row["state"], row["assignee_email"], row["note"]) if row else None


def test_a_clerk_closes_a_lost_fax_in_one_tap_and_a_viewer_sees_no_control(chromium, stack_env, db) -> None:
    job_id, fax = failed_email(db, "請求書（１１月分）", "resend_not_found")
    # Outside the page's policy only so that axe-core's script can be added; the next test watches the
    # control under the policy.
    context = chromium.new_context(locale="ja-JP", viewport=PHONE, bypass_csp=True)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "CLERK")
    expect(page.locator(".who")).to_contain_text("事務担当者")

    # The overview counts the failure as an open problem.
    page.goto(f"{stack_env['ADMIN_URL']}#/overview")
    failed_now = page.locator("section", has=page.locator("h2", has_text="現在失敗しているジョブ"))
    expect(page.locator(".card.state-failed .count")).to_have_text("1")
    expect(failed_now.locator("table")).to_contain_text("resend_not_found")

    # The fax's page: no 再実行, the advice, and the control. Opening it marked nothing.
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{job_id}")
    control = page.locator(".handling")
    expect(control.locator(".badge.handling-new")).to_have_text("未対応")
    expect(page.locator("button.job-retry")).to_have_count(0)
    expect(page.locator(".retry-cannot-help")).to_contain_text("再実行しても解決しない")
    assert handling(db, fax) is None
    assert axe_violations(page) == []
    page.set_viewport_size(DESKTOP)
    assert axe_violations(page) == []
    page.set_viewport_size(PHONE)

    # One tap closes it, with the note typed.
    control.locator("textarea").fill(NOTE)
    control.locator("button.handling-to-done").click()
    expect(control.locator(".badge.handling-done")).to_have_text("対応済み")
    expect(control.locator(".handling-report")).to_contain_text("「対応済み」にしました。")
    expect(control.locator(".handling-assignee")).to_contain_text(stack_env["DEVSTACK_CLERK_EMAIL"])
    assert handling(db, fax) == ("done", stack_env["DEVSTACK_CLERK_EMAIL"], NOTE)
    control.locator(".handling-history summary").click()
    expect(control.locator(".handling-history li")).to_have_count(1)
    expect(control.locator(".handling-history li")).to_contain_text(f"未対応 → 対応済み — {NOTE}")
    assert axe_violations(page) == []

    # The overview counts open problems, not history: the morning check's words are back.
    page.goto(f"{stack_env['ADMIN_URL']}#/overview")
    expect(page.locator(".card.state-failed .count")).to_have_text("0")
    expect(failed_now).to_contain_text("失敗はありません。")
    expect(page.locator(".failed-closed")).to_have_text("対応済みの FAX の失敗ジョブ 1 件は含みません。")

    # The audit names the mark.
    page.goto(f"{stack_env['ADMIN_URL']}#/audit")
    row = page.locator("table.audit tbody tr").first
    expect(row).to_contain_text("対応状況の記録")
    expect(row).to_contain_text(f"未対応 → 対応済み ({stack_env['DEVSTACK_CLERK_EMAIL']})")
    expect(row).to_contain_text(NOTE)

    # A viewer: the state and the note, and no control; in English too.
    page.click("button.sign-out")
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("閲覧者")
    for language, done in (("ja", "対応済み"), ("en", "Done")):
        page.select_option("select.language", language)
        page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{job_id}")
        viewer = page.locator(".handling")
        expect(viewer.locator(".badge.handling-done")).to_have_text(done)
        expect(viewer.locator(".handling-note-text")).to_contain_text(NOTE)
        expect(viewer.locator("button")).to_have_count(0)
        expect(viewer.locator("textarea")).to_have_count(0)
        expect(page.locator("button.job-retry")).to_have_count(0)
        assert axe_violations(page) == []
    assert watched.problems == []
    context.close()


def test_a_clerk_marks_every_fax_of_a_filter_done_the_count_first(chromium, stack_env, db) -> None:
    lost = [failed_email(db, f"lost {i}", "resend_not_found")[1] for i in range(3)]
    other_job, other = failed_email(db, "too large", "storage_too_large")
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "CLERK")
    expect(page.locator(".who")).to_contain_text("clerk")
    clerk = stack_env["DEVSTACK_CLERK_EMAIL"]

    # One tap takes a fax (under the page's own policy: the next assertions watch it).
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{other_job}")
    expect(page.locator(".handling .badge.handling-new")).to_be_visible()  # the page is drawn, its control last
    expect(page.locator("button.job-retry")).to_be_disabled()  # a retry helps here, but a clerk does not retry jobs
    page.locator(".handling button.handling-tap").click()
    expect(page.locator(".handling .badge.handling-in_progress")).to_have_text("In progress")
    expect(page.locator(".handling .handling-assignee")).to_have_text(f"by {clerk}")
    expect(page.locator(".handling button.handling-tap")).to_have_text("Mark done")
    assert handling(db, other) == ("in_progress", clerk, None)

    page.goto(f"{stack_env['ADMIN_URL']}#/jobs?code=resend_not_found")
    expect(page.locator("table.jobs tbody tr")).to_have_count(3)
    # No bulk retry for a failure a retry cannot help; a clerk's bulk mark instead.
    expect(page.locator("button.bulk-retry")).to_have_count(0)
    page.click("button.bulk-done")
    dialog = page.locator("dialog.ask")
    expect(dialog.locator("h2")).to_have_text("Mark exactly 3 faxes done?")
    expect(dialog.locator(".bulk-filter")).to_contain_text("Error code: resend_not_found")
    assert [handling(db, fax) for fax in lost] == [None] * 3, "counting marked nothing"
    dialog.locator("textarea").fill("asked the senders to send them again")
    dialog.locator("button[value=confirm]").click()
    expect(page.locator(".bulk-report")).to_contain_text("Done: 3 of 3 faxes marked done, 0 not.")
    assert [handling(db, fax) for fax in lost] == [("done", clerk, "asked the senders to send them again")] * 3
    assert handling(db, other) == ("in_progress", clerk, None)
    page.goto(f"{stack_env['ADMIN_URL']}#/audit")
    expect(page.locator("table.audit tbody tr").first).to_contain_text(re.compile(r"faxes marked done.*3"))
    assert watched.problems == []

    # A viewer's bulk mark is off, and forced on, the server refuses it.
    page.click("button.sign-out")
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("viewer")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs?state=failed")
    button = page.locator("button.bulk-done")
    expect(button).to_be_disabled()
    button.evaluate("element => { element.disabled = false; }")
    button.click()
    expect(page.locator(".bulk-report")).to_contain_text("This account may only read")
    assert handling(db, other) == ("in_progress", clerk, None)
    assert watched.problems == []
    context.close()


def test_the_inbox_shows_each_faxs_handling_and_a_clerk_takes_one_from_its_row(chromium, stack_env, db) -> None:
    _, fax = failed_email(db, "注文書", "resend_not_found")
    _, other = failed_email(db, "見積書", "storage_too_large")
    context = chromium.new_context(locale="ja-JP", viewport=PHONE)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "CLERK")
    expect(page.locator(".who")).to_contain_text("事務担当者")
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes")
    row = page.locator(f'tr[data-fax-id="{fax}"]')
    expect(row.locator(".badge.handling-new")).to_have_text("未対応")
    # One tap on the row takes the fax, and the row says whose it is; the fax is not opened.
    row.locator("button.handling-tap").click()
    expect(row.locator(".badge.handling-in_progress")).to_have_text("対応中")
    expect(row.locator(".handling-assignee")).to_have_text(f"担当: {stack_env['DEVSTACK_CLERK_EMAIL']}")
    expect(page).to_have_url(f"{stack_env['ADMIN_URL']}#/faxes")
    assert handling(db, fax) == ("in_progress", stack_env["DEVSTACK_CLERK_EMAIL"], None)

    # The filters: mine, and the faxes not done yet.
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes?assignee=me")
    expect(page.locator("table.faxes tbody tr")).to_have_count(1)
    expect(page.locator(f'tr[data-fax-id="{fax}"]')).to_be_visible()
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes?handling=new")
    expect(page.locator("table.faxes tbody tr")).to_have_count(1)
    expect(page.locator(f'tr[data-fax-id="{other}"]')).to_be_visible()

    # The fax's own page: the whole control, with its marks.
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{fax}")
    control = page.locator(".handling")
    expect(control.locator(".badge.handling-in_progress")).to_be_visible()
    control.locator("textarea").fill("送信元に再送を依頼済み")
    control.locator("button.handling-tap").click()
    expect(control.locator(".badge.handling-done")).to_have_text("対応済み")
    expect(control.locator(".handling-history li")).to_have_count(2)
    assert handling(db, fax) == ("done", stack_env["DEVSTACK_CLERK_EMAIL"], "送信元に再送を依頼済み")
    assert watched.problems == []

    # A viewer sees the state in the list, and no control.
    page.click("button.sign-out")
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("閲覧者")
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes")
    expect(page.locator(f'tr[data-fax-id="{fax}"] .badge.handling-done')).to_have_text("対応済み")
    expect(page.locator("table.faxes .handling button")).to_have_count(0)
    expect(page.locator("button.bulk-done")).to_have_count(0)
    context.close()
