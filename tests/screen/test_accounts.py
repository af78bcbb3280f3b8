"""Accounts the office runs itself, in Chromium against the local stack: a forgotten password
recovered from the sign-in page through Auth's own e-mail (the stand-in captures it), an admin's
invitation and reset e-mail from the accounts view, a viewer refused both, and axe-core on the new
forms."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.screen.test_browser_layout import axe_violations
from tests.support import operators
from tests.support.admin_page import EXPECT_MS, Watched, sign_in

pytestmark = pytest.mark.slow  # a browser through the whole stack

PHONE = {"width": 390, "height": 844}


def test_a_forgotten_password_is_recovered_from_the_sign_in_page_by_auths_email(chromium, stack_env) -> None:
    account, old_password = operators.new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    context = chromium.new_context(locale="ja-JP")
    page = context.new_page()
    page.set_default_timeout(EXPECT_MS)
    watched = Watched(page)  # under the page's own policy: no violation on the way
    page.goto(stack_env["ADMIN_URL"])
    page.get_by_role("button", name="パスワードをお忘れですか").click()
    expect(page.get_by_role("heading", name="パスワードの再設定")).to_be_visible()
    page.fill("input[name=email]", account["email"])
    page.click("form.recovery button[type=submit]")
    expect(page.locator(".sign-in-status")).to_contain_text(f"{account['email']} のアカウントがあれば")
    [mail] = operators.mails(stack_env, account["email"])
    assert mail["type"] == "recovery"
    assert parse_qs(urlsplit(mail["link"]).query)["redirect_to"] == [stack_env["ADMIN_URL"]], "the page's own URL"

    page.goto(mail["link"])  # as the e-mail's link is opened: Auth's /verify, then back to the screen
    expect(page.get_by_role("heading", name="新しいパスワードの設定")).to_be_visible()
    assert "access_token" not in page.url, "the tokens leave the address at once"
    page.fill("input[name=new-password]", "my new password")
    page.fill("input[name=new-password-again]", "not the same")
    page.click("form.new-password button[type=submit]")
    expect(page.locator(".sign-in-status")).to_contain_text("2つのパスワードが一致しません。")
    page.fill("input[name=new-password-again]", "my new password")
    page.click("form.new-password button[type=submit]")
    expect(page.locator("main .notice.success")).to_contain_text("パスワードを設定しました")
    expect(page.locator("header .who")).to_contain_text(account["email"])
    page.click("button.sign-out")

    # Signed in with the new password; the old one is refused, and the link does not work twice.
    page.fill("input[name=email]", account["email"])
    page.fill("input[name=password]", "my new password")
    page.click("form.sign-in button[type=submit]")
    expect(page.locator("header .who")).to_contain_text(account["email"])
    with pytest.raises(httpx.HTTPStatusError):
        operators.sign_in(stack_env, account["email"], old_password)
    page.click("button.sign-out")
    page.goto(mail["link"])
    expect(page.locator(".sign-in-status")).to_contain_text("このリンクはもう使えません")
    assert "error" not in page.url
    assert watched.problems == []
    context.close()


def test_an_admin_invites_and_sends_a_reset_from_the_accounts_view_and_a_viewer_cannot(chromium, stack_env) -> None:
    invited = f"invited-{uuid.uuid4().hex[:8]}@example.com"
    existing, _ = operators.new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    context = chromium.new_context(locale="en-US")
    page = context.new_page()
    page.set_default_timeout(EXPECT_MS)
    watched = Watched(page)
    sign_in(page, stack_env, "OPERATOR")
    page.get_by_role("link", name="Accounts").click()
    expect(page.get_by_role("heading", name="Accounts", exact=True)).to_be_visible()
    invite = page.locator("form.account-form").nth(0)
    invite.locator("input[name=email]").fill(invited)
    invite.locator("select[name=role]").select_option("viewer")
    assert invite.locator("select[name=role] option").all_inner_texts()[0].startswith("clerk")
    invite.locator("button[type=submit]").click()
    expect(invite.locator(".notice.success")).to_contain_text(f"An invitation went to {invited} (viewer")
    [mail] = operators.mails(stack_env, invited)
    assert mail["type"] == "invite" and parse_qs(urlsplit(mail["link"]).query)["redirect_to"] == [
        stack_env["ADMIN_URL"]
    ]
    reset = page.locator("form.account-form").nth(1)
    reset.locator("input[name=email]").fill(existing["email"])
    reset.locator("button[type=submit]").click()
    expect(reset.locator(".notice.success")).to_contain_text(f"A password reset e-mail went to {existing['email']}")
    assert [m["type"] for m in operators.mails(stack_env, existing["email"])] == ["recovery"]
    assert watched.problems == []

    # The invitation's link: the new operator chooses a password and is signed in with their role.
    newcomer = chromium.new_context(locale="en-US")
    theirs = newcomer.new_page()
    theirs.set_default_timeout(EXPECT_MS)
    theirs.goto(mail["link"])
    expect(theirs.get_by_role("heading", name="Welcome: choose your password")).to_be_visible()
    theirs.fill("input[name=new-password]", "chosen by them")
    theirs.fill("input[name=new-password-again]", "chosen by them")
    theirs.click("form.new-password button[type=submit]")
    expect(theirs.locator("header .who")).to_contain_text(invited)
    expect(theirs.locator("header .badge")).to_contain_text("viewer")
    expect(theirs.get_by_role("link", name="Accounts")).to_have_count(0)  # an admin's view only
    newcomer.close()
    # Their account is in use now: not invited again, and the view says what to do instead.
    invite.locator("input[name=email]").fill(invited)
    invite.locator("button[type=submit]").click()
    expect(invite.locator(".notice.error")).to_contain_text("already has an account")

    # The API refuses a viewer, whatever the page shows.
    viewer = operators.sign_in(stack_env, stack_env["DEVSTACK_VIEWER_EMAIL"], stack_env["DEVSTACK_VIEWER_PASSWORD"])
    for path, body in (("invite", {"email": "x@example.com", "role": "clerk"}), ("reset-password", {"email": invited})):
        answer = httpx.post(f"{stack_env['FUNCTIONS_URL']}/api/admin/operators/{path}", json=body, timeout=30,
                            headers={"Authorization": f"Bearer {viewer['access_token']}"})  # fmt: skip
        assert (answer.status_code, answer.json()["error"]) == (403, "not_admin")
    context.close()


def test_axe_finds_nothing_on_the_recovery_the_new_password_and_the_accounts_forms(chromium, stack_env) -> None:
    # Outside the page's policy only so that axe-core's script can be added.
    context = chromium.new_context(locale="ja-JP", viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(EXPECT_MS)
    found: dict[str, Any] = {}
    page.goto(stack_env["ADMIN_URL"])
    page.get_by_role("button", name="パスワードをお忘れですか").click()
    expect(page.locator("form.recovery")).to_be_visible()
    found["recovery"] = axe_violations(page)
    account, _ = operators.new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    page.fill("input[name=email]", account["email"])
    page.click("form.recovery button[type=submit]")
    expect(page.locator(".sign-in-status .notice.success")).to_be_visible()
    found["sent"] = axe_violations(page)
    page.goto(operators.mails(stack_env, account["email"])[-1]["link"])
    expect(page.locator("form.new-password")).to_be_visible()
    found["new password"] = axe_violations(page)
    page.evaluate("localStorage.clear()")
    sign_in(page, stack_env, "OPERATOR")
    expect(page.locator("header .who")).to_be_visible()
    page.goto(stack_env["ADMIN_URL"] + "#/accounts")
    expect(page.locator("form.account-form").first).to_be_visible()
    found["accounts"] = axe_violations(page)
    assert found == {name: [] for name in found}
    context.close()
