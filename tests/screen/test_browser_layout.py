"""The admin screen on a phone, by keyboard, and under axe-core, in Japanese and in English.

Every view (sign-in, the inbox, overview, jobs, a job, audit) fits a phone's 390 x 844 without the page
scrolling sideways, and axe-core (pinned in devstack/package.json, used by this test only) finds no
violation on any of them, at that width and at a desktop's. On a phone the jobs list is cards that
open their job wherever they are touched, and the filters fold behind one control. By keyboard the
first job is two Tab presses from the top of the page (the skip link, Enter, then the job), a row is
one tab stop that Enter opens and that keeps the focus when the list refreshes itself, opening a
view puts the focus on its heading, and a date filter is one stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.admin_page import sign_in
from tests.support.emails import add_attachment, receive_email

pytestmark = pytest.mark.slow  # a browser on the whole stack

AXE = Path(__file__).resolve().parents[2] / "devstack" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# A sender and a subject as a Japanese office's faxes have them: long, and without spaces to wrap at.
SENDER = "株式会社サンプル商事 経理部 請求書発行担当 <keiri-seikyusho@sample-shoji.example.co.jp>"
SUBJECT = "【至急】請求書（２０２６年１１月分）の送付について／株式会社サンプル商事経理部より御社御中"


@pytest.fixture
def shown(db, admin, health_check_paused) -> dict[str, str]:
    """Something in every part of every view: jobs in each state, a failed one with an attachment and
    three attempts, an open outage, and an audit entry. No Vault secrets: no worker runs, so the
    states stay as written; and the health check is off, which would close the outage."""
    jobs: dict[str, str] = {}
    for state in ("queued", "failed", "completed", "failed-2"):
        row = receive_email(db, f"em_layout_{state}", {"from": SENDER, "subject": f"{SUBJECT} {state}"})
        jobs[state] = str(row["job_id"])
        if state == "failed":
            add_attachment(db, row["fax_received_email_id"], "att_layout", f"{SUBJECT}.pdf", size_bytes=48_213)
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now(),"
               " last_error_code = 'resend_not_found', last_error_message = 'Resend 404 not_found: Email not found'"
               " where id = any(%s)", ([jobs["failed"], jobs["failed-2"]],))  # fmt: skip
    db.execute("update document_jobs set status = 'completed', attempts = 1, finished_at = now() where id = %s",
               (jobs["completed"],))  # fmt: skip
    db.execute("update document_jobs set generation = 3 where id = %s", (jobs["failed"],))
    for attempt, outcome in ((1, "retried"), (2, "retried"), (3, "failed")):
        admin.execute("insert into document_job_attempts (job_id, generation, attempt, started_at, finished_at,"
                      " outcome, error_code, error_message) values (%s, %s, %s, now() - interval '1 hour',"
                      " now() - interval '59 minutes', %s, 'resend_not_found',"
                      " 'Resend 404 not_found: Email not found')",
                      (jobs["failed"], attempt, attempt, outcome))  # fmt: skip
    admin.execute("update document_jobs_internal.outages set active = true, since = now() - interval '5 minutes'"
                  " where cause = 'resend_unauthorized'")  # fmt: skip
    admin.execute("insert into document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)"
                  " values (gen_random_uuid(), 'operator-on-call@example.co.jp', 'retry', %s, 1, %s)",
                  (jobs["failed-2"], "送信元に確認済み。再送されたので再実行します"))  # fmt: skip
    return jobs


def views(jobs: dict[str, str]) -> list[tuple[str, str, str]]:
    """(name, fragment, what is on the page once the view has loaded)."""
    return [("faxes", "#/faxes", "table.faxes tbody tr"), ("overview", "#/overview", "li.outage"),
            ("jobs", "#/jobs", "table.jobs tbody tr"),
            ("job", f"#/jobs/{jobs['failed']}", "ol.timeline li"),
            ("audit", "#/audit", "table.audit tbody tr")]  # fmt: skip


def page_width(page: Page) -> tuple[int, int, list[str]]:
    """The page's width, the window's, and the innermost elements that reach beyond the window."""
    return tuple(
        page.evaluate("""[document.documentElement.scrollWidth, window.innerWidth,
        [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5
            && ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth + 0.5))
        .slice(0, 6).map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)]""")
    )  # type: ignore[return-value]


def outside(page: Page) -> list[str]:
    """Elements of the header that end beyond the window's right edge (clipped, if not scrolled to)."""
    return list(
        page.evaluate("""[...document.querySelectorAll("header *")]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map(e => e.tagName + "." + e.className)""")
    )


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it is: every rule axe runs by default (WCAG 2 A and AA,
    and its best practices, such as empty-table-header)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    run = page.evaluate("""async () => { const r = await axe.run(document); return { passed: r.passes.length,
        violations: r.violations.map(v => ({ id: v.id, impact: v.impact,
                                             nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })) }; }""")
    assert run["passed"] > 10, f"axe-core checked only {run['passed']} rules"  # it ran, on a drawn page
    return list(run["violations"])


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_every_view_fits_a_phone_and_axe_finds_nothing_at_either_width(chromium, stack_env, shown, locale) -> None:
    # Outside the page's policy only so that axe-core's script can be added; the policy itself is
    # tested in test_browser.py.
    context = chromium.new_context(locale=locale, viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    page.goto(stack_env["ADMIN_URL"])
    expect(page.locator("form.sign-in")).to_be_visible()
    found: dict[str, Any] = {}
    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        found[f"sign-in {viewport['width']}"] = (page_width(page), outside(page), axe_violations(page))
    page.set_viewport_size(PHONE)
    sign_in(page, stack_env, "OPERATOR")
    expect(page.locator(".who")).to_be_visible()
    for name, fragment, ready in views(shown):
        page.goto(f"{stack_env['ADMIN_URL']}{fragment}")
        expect(page.locator(ready).first).to_be_visible()
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            found[f"{name} {viewport['width']}"] = (page_width(page), outside(page), axe_violations(page))
        page.set_viewport_size(PHONE)
    too_wide = {view: width for view, (width, _, _) in found.items() if width[0] > width[1]}
    clipped = {view: elements for view, (_, elements, _) in found.items() if elements}
    violations = {view: axe for view, (_, _, axe) in found.items() if axe}
    assert (too_wide, clipped, violations) == ({}, {}, {})
    context.close()


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_on_a_phone_a_card_opens_its_job_and_the_filters_fold_behind_one_control(
    chromium, stack_env, shown, locale
) -> None:
    context = chromium.new_context(locale=locale, viewport=PHONE, has_touch=True)
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_be_visible()
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs")
    card = page.locator(f'tr[data-job-id="{shown["failed"]}"]')
    expect(card).to_be_visible()
    # A card, as wide as the page at most, with what the night's question needs on it.
    box = card.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    for part in ("td.sender", "td.subject", ".badge", ".explanation, .code-meaning, td.error"):
        expect(card.locator(part).first).to_be_visible()
    # The filters: folded, one control opens them.
    fold = page.locator("details.filter-fold")
    expect(fold).not_to_have_attribute("open", "")
    expect(page.locator("input[name=q]")).to_be_hidden()
    fold.locator("summary").tap()
    expect(page.locator("input[name=q]")).to_be_visible()
    # Touching the card where there is no link (its subject) opens the job.
    card.locator("td.subject").tap()
    expect(page).to_have_url(f"{stack_env['ADMIN_URL']}#/jobs/{shown['failed']}")
    expect(page.locator(".job-view")).to_be_visible()
    context.close()


def focused(page: Page) -> dict[str, Any]:
    return dict(
        page.evaluate("""(() => { const e = document.activeElement;
        return { tag: e.tagName, text: (e.textContent || "").trim(), name: e.getAttribute("name"),
                 cls: e.className, job: e.closest("tr[data-job-id]")?.dataset.jobId ?? null,
                 heading: /^H[1-6]$/.test(e.tagName) }; })()""")
    )


def test_the_keyboard_reaches_the_first_job_in_two_tabs_and_a_row_is_one_stop(chromium, stack_env, shown) -> None:
    context = chromium.new_context(locale="en-US", viewport=DESKTOP, timezone_id="Asia/Tokyo")
    context.clock.install()  # the real time, flowing, but the list's auto-refresh can be brought forward
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_be_visible()
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs")
    rows = page.locator("table.jobs tbody tr")
    expect(rows).to_have_count(4)
    # Opening the view put the focus on its heading (the results').
    assert focused(page)["heading"], focused(page)

    # From the top of the page: the skip link first, then the first job.
    page.mouse.click(1, 1)  # the top of the page: where the next Tab starts from
    presses = 0
    page.keyboard.press("Tab")
    presses += 1
    skip = focused(page)
    assert "skip-link" in skip["cls"], skip
    assert page.locator(".skip-link").evaluate("e => e.getBoundingClientRect().width > 1"), "visible when focused"
    page.keyboard.press("Enter")
    assert focused(page)["heading"], focused(page)
    page.keyboard.press("Tab")
    presses += 1
    first = focused(page)
    assert first["job"] == rows.first.get_attribute("data-job-id"), first
    assert presses <= 5

    # A row is one tab stop: the next Tab is the next row.
    page.keyboard.press("Tab")
    assert focused(page)["job"] == rows.nth(1).get_attribute("data-job-id"), focused(page)
    # The auto-refresh redraws the rows, and the focus stays on the same job's row.
    page.evaluate("window.focusedBeforeRefresh = document.activeElement")
    page.clock.run_for(11_000)
    page.wait_for_function("() => !window.focusedBeforeRefresh.isConnected")
    assert focused(page)["job"] == rows.nth(1).get_attribute("data-job-id"), focused(page)
    # Enter opens the job, and the focus is on its heading.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{stack_env['ADMIN_URL']}#/jobs/{first['job']}")
    expect(page.locator(".job-view h2")).to_be_focused()

    # A date filter is one stop, and takes the time as it is written in the viewer's zone.
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs")
    expect(rows).to_have_count(4)
    fold = page.locator("details.filter-fold")
    if fold.get_attribute("open") is None:
        fold.locator("summary").click()
    page.focus("input[name=from]")
    page.keyboard.type("2026-12-01 09:00")
    page.keyboard.press("Tab")
    assert focused(page)["name"] == "to", focused(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{stack_env['ADMIN_URL']}#/jobs?from=2026-12-01T00%3A00%3A00.000Z")
    expect(page.locator("input[name=from]")).to_have_value("2026-12-01 09:00")
    context.close()
