"""The Exports view (public/admin/exports.js) in Debian's chromium, headless: an admin asks for an
export of a date range, sees it queued, and once its job has run (here, as the worker runs it) sees
it completed and gets its links, which point at Storage and download the files; a clerk has no
Exports view. No policy violation and no script error on the way."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.screen.test_export_api import faxes_of_december, operator_id, run_until_done  # noqa: F401
from tests.support.admin_page import Watched, sign_in

pytestmark = pytest.mark.slow  # a browser


def test_an_admin_asks_for_an_export_and_gets_its_links_and_a_clerk_has_no_exports_view(
    chromium,
    stack_env,
    db,
    admin,
    operator_id,  # noqa: F811
) -> None:
    faxes_of_december(db, stack_env, operator_id)
    context = chromium.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "OPERATOR")
    page.click("header nav.views >> text=Exports")
    page.fill("input[name=from]", "2026-12-01")
    page.fill("input[name=to]", "2026-12-03")
    page.click("form.export-form button[type=submit]")
    expect(page.locator(".export-status")).to_contain_text("The export of 4 originals is being built.")
    expect(page.locator(".export-item")).to_have_count(1)
    expect(page.locator(".export-item")).to_contain_text("Queued")
    expect(page.locator("button.export-get-links")).to_have_count(0)

    run_until_done(db, stop_after_first_part=False)
    page.click("button.export-refresh")
    expect(page.locator(".export-item")).to_contain_text("Completed")
    expect(page.locator(".export-progress")).to_contain_text("4 of 4 originals")
    page.click("button.export-get-links")
    links = page.locator(".export-links a")
    expect(links.last).to_have_text("SHA256SUMS")
    names = links.all_inner_texts()
    assert names[-2:] == ["index.csv", "SHA256SUMS"] and names[0] == "part-0001.zip"
    hrefs = [links.nth(n).get_attribute("href") or "" for n in range(links.count())]
    assert all(href.startswith(stack_env["SUPABASE_URL"]) for href in hrefs)
    assert httpx.get(hrefs[-1], timeout=30).text.endswith("  index.csv\n")
    expect(page.locator(".export-links-place")).to_contain_text("Each link works for 60 minutes")
    assert watched.problems == []
    context.close()

    clerk = chromium.new_context(locale="ja-JP")
    page = Watched(clerk.new_page()).page
    sign_in(page, stack_env, "CLERK")
    expect(page.locator("header nav.views")).to_be_visible()
    expect(page.locator("header nav.views >> text=エクスポート")).to_have_count(0)
    clerk.close()
