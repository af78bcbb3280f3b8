"""The inbox (受信FAX) in Debian's chromium, headless, on the whole stack: two real faxes (a 3-page
CCITT G4 TIFF as an eFax-style service sends it, its number only in the subject, and a PDF invoice
from 株式会社山田商事) delivered by signed webhooks, fetched and prepared by the worker, are listed
with their page-1 thumbnails (signed Storage URLs, loaded under the page's policy), the line that
received them and their page counts, in Japanese and in English, at 1280 and 390 px, and axe-core
finds nothing there nor on a fax's page. Filters live in the URL and survive a reload (a sender's
number typed in full-width characters among them); opening a fax draws its pages (the canvas is
not blank). A fax whose jobs were purged is still listed, opened and drawn; an admin's rotation is
remembered and audited.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from devstack.standins.sample_faxes import EFAX_NUMBER, INVOICE_SENDER
from devstack.tools import inbound
from tests.support.admin_page import Watched, sign_in
from tests.support.webhooks import deliver

pytestmark = pytest.mark.slow  # a browser, and the worker through the whole stack

AXE = Path(__file__).resolve().parents[2] / "devstack" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WAIT_S = 120  # a fetch and a preparation each, on a loaded machine
LINE_NAME = "本社"

# The share of a canvas's pixels that are not paper (tests/screen/test_viewer.py reads it the same way).
INK = """(number) => {
  const canvas = document.querySelector(`.viewer-page[data-page="${number}"] canvas`);
  if (!canvas || !canvas.width) return null;
  const copy = document.createElement("canvas");
  const scale = Math.min(1, 400 / canvas.width);
  copy.width = Math.max(1, Math.round(canvas.width * scale));
  copy.height = Math.max(1, Math.round(canvas.height * scale));
  const context = copy.getContext("2d");
  context.drawImage(canvas, 0, 0, copy.width, copy.height);
  const { data } = context.getImageData(0, 0, copy.width, copy.height);
  let dark = 0;
  for (let i = 0; i < data.length; i += 4) dark += data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200;
  return dark / (data.length / 4);
}"""


def settled(db, email_ids: list[str]) -> bool:
    rows = db.execute(
        """select e.provider_email_id, j.kind, j.status from document_jobs j
             join fax_received_emails e on e.id = j.fax_received_email_id where e.provider_email_id = any(%s)""",
        (email_ids,),
    ).fetchall()
    done = {(row["provider_email_id"], row["kind"]) for row in rows if row["status"] == "completed"}
    return all((email_id, kind) in done for email_id in email_ids for kind in ("fetch_email", "prepare_fax"))


@pytest.fixture
def faxes(db, env) -> dict[str, Any]:
    """The eFax TIFF and the PDF invoice, fetched and prepared, and the line their To address is."""
    efax = inbound.add_email(env["RESEND_API_URL"], sample="efax")
    invoice = inbound.add_email(env["RESEND_API_URL"], sample="invoice")
    for data in (efax, invoice):
        assert deliver(env, data).status_code == 200
    deadline = time.monotonic() + WAIT_S
    while not settled(db, [efax["email_id"], invoice["email_id"]]):
        assert time.monotonic() < deadline, "the two faxes were not fetched and prepared in time"
        time.sleep(0.5)
    db.execute("select set_fax_line(%s, %s, %s)", (efax["to"][0], LINE_NAME, "0399990000"))
    ids = {
        row["provider_email_id"]: str(row["id"])
        for row in db.execute(
            "select id, provider_email_id from fax_received_emails where provider_email_id = any(%s)",
            ([efax["email_id"], invoice["email_id"]],),
        ).fetchall()
    }
    return {"efax": ids[efax["email_id"]], "invoice": ids[invoice["email_id"]]}


def thumbnails_loaded(page: Page) -> None:
    page.wait_for_function(
        """() => { const images = [...document.querySelectorAll("table.faxes td.thumbnail img")];
                   return images.length === 2 && images.every((i) => i.complete && i.naturalWidth > 0); }"""
    )


def page_width(page: Page) -> tuple[int, int]:
    return tuple(page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))  # type: ignore[return-value]


def axe_violations(page: Page) -> list[dict[str, Any]]:
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    run = page.evaluate("""async () => { const r = await axe.run(document); return { passed: r.passes.length,
        violations: r.violations.map(v => ({ id: v.id,
                                             nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })) }; }""")
    assert run["passed"] > 10, f"axe-core checked only {run['passed']} rules"
    return list(run["violations"])


def drawn_ink(page: Page, number: int) -> float:
    page.wait_for_function(
        f"() => document.querySelector('.viewer-page[data-page=\"{number}\"] canvas')", timeout=60_000
    )
    ink = page.evaluate(INK, number)
    assert ink is not None, f"page {number} has no canvas"
    return float(ink)


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_the_inbox_lists_both_faxes_with_thumbnails_and_opening_one_draws_its_pages(
    chromium, stack_env, faxes, locale
) -> None:
    ja = locale == "ja-JP"
    context = chromium.new_context(locale=locale, viewport=DESKTOP, timezone_id="Asia/Tokyo")
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "VIEWER")
    # The first view, whatever the role: the inbox, newest first (the invoice came second).
    rows = page.locator("table.faxes tbody tr")
    expect(rows).to_have_count(2)
    assert [rows.nth(i).get_attribute("data-fax-id") for i in range(2)] == [faxes["invoice"], faxes["efax"]]
    thumbnails_loaded(page)  # signed Storage URLs, allowed by the page's img-src
    efax, invoice = rows.nth(1), rows.nth(0)
    expect(efax.locator("td.pages")).to_have_text("3 ページ" if ja else "3 p.")
    expect(efax.locator("td.line")).to_have_text(LINE_NAME)
    expect(efax.locator("td.state .storing .badge")).to_have_text("保存済み" if ja else "Stored")
    expect(invoice.locator(".sender-name")).to_have_text("株式会社山田商事")
    expect(page.locator("header nav.views a").first).to_have_text("受信FAX" if ja else "Faxes")

    # A phone: cards, nothing wider than the window.
    page.set_viewport_size(PHONE)
    expect(efax.locator("td.thumbnail img")).to_be_visible()
    width, window = page_width(page)
    assert width <= window, (width, window)
    page.set_viewport_size(DESKTOP)

    # Filters in the URL: a number typed in full-width characters finds the eFax by its subject,
    # and a reload keeps the filter, its field and its answer.
    page.fill("input[name=sender]", "０６－１１１１")
    page.click("form.filters button[type=submit]")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-fax-id", faxes["efax"])
    page.click("nav.tabs >> text=" + ("今日" if ja else "Today"))
    expect(page).to_have_url(re.compile(r"#/faxes\?sender=[^&]+&period=today$"))
    page.reload()
    expect(rows).to_have_count(1)
    expect(page.locator("input[name=sender]")).to_have_value("０６－１１１１")
    expect(page.locator('nav.tabs a[aria-current="page"]')).to_have_text("今日" if ja else "Today")
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes?period=yesterday")
    expect(page.locator(".inbox-view .results .notice")).to_be_visible()
    expect(rows).to_have_count(0)

    # Opening a fax draws its pages: the TIFF's three, through its viewing PDF; the invoice's one.
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes")
    rows.nth(1).locator("td.sender").click()
    expect(page).to_have_url(f"{stack_env['ADMIN_URL']}#/faxes/{faxes['efax']}")
    expect(page.locator(".viewer-page-count")).to_contain_text("3")
    assert drawn_ink(page, 1) > 0.01, "the TIFF's first page is blank"
    expect(page.locator(".fax-view")).to_contain_text(EFAX_NUMBER)
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{faxes['invoice']}")
    assert drawn_ink(page, 1) > 0.005, "the invoice's page is blank"
    expect(page.locator(".fax-view")).to_contain_text(INVOICE_SENDER.split(" <")[0])
    page.set_viewport_size(PHONE)
    assert drawn_ink(page, 1) > 0.005
    width, window = page_width(page)
    assert width <= window, (width, window)
    assert watched.problems == []
    context.close()

    # axe-core on the inbox and a fax's page, at both widths (outside the page's policy only so that
    # its script can be added; the policy held above).
    context = chromium.new_context(locale=locale, viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    found: dict[str, Any] = {}
    for name, fragment, ready in (("inbox", "#/faxes", "table.faxes tbody tr"),
                                  ("fax", f"#/faxes/{faxes['efax']}", ".viewer-page canvas")):  # fmt: skip
        page.goto(f"{stack_env['ADMIN_URL']}{fragment}")
        expect(page.locator(ready).first).to_be_visible()
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            found[f"{name} {viewport['width']}"] = axe_violations(page)
    assert {view: v for view, v in found.items() if v} == {}
    context.close()


def test_a_fax_whose_jobs_were_purged_is_listed_opened_and_its_rotation_remembered(
    chromium, stack_env, faxes, db, admin
) -> None:
    admin.execute("update document_jobs set finished_at = now() - interval '40 days' where status = 'completed'")
    purged = db.execute("select purge_document_jobs(interval '30 days') as n").fetchone()["n"]
    assert purged == 4  # each fax's fetch and preparation
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "OPERATOR")
    rows = page.locator("table.faxes tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.locator("td.state .storing .badge")).to_have_text(["Stored", "Stored"])
    thumbnails_loaded(page)
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{faxes['efax']}")
    assert drawn_ink(page, 1) > 0.01
    # Its keep-until date, a day in the office's zone (document_jobs_internal.keep_until: received today, March
    # year end, 2 months to file, 7 years), whatever the browser's zone.
    keep_until = admin.execute(
        "select document_jobs_internal.keep_until(coalesce(received_at, created_at)) as d from fax_received_emails"
        " where id = %s", (faxes["efax"],),
    ).fetchone()["d"]  # fmt: skip
    assert keep_until.month == 5 and keep_until.day == 31
    expect(page.locator(".keep-until")).to_have_text(f"{keep_until.isoformat()}, to the end of that day (Asia/Tokyo)")
    # An admin's turn is remembered for the fax, and audited.
    page.click("button.viewer-rotate")
    deadline = time.monotonic() + 10
    while db.execute("select count(*) as n from fax_view_rotations").fetchone()["n"] == 0:
        assert time.monotonic() < deadline, "the rotation was not remembered"
        time.sleep(0.2)
    assert db.execute("select rotation from fax_view_rotations").fetchone()["rotation"] == 90
    audited = db.execute("select action, filter from document_jobs_audit where action = 'rotate'").fetchall()
    assert [(row["action"], row["filter"]["to"]) for row in audited] == [("rotate", 90)]
    page.reload()
    page.wait_for_function("() => document.querySelector('.viewer-page[data-page=\"1\"] canvas')")
    shape = page.evaluate("(() => { const c = document.querySelector('.viewer-page[data-page=\"1\"] canvas');"
                          " return c.width > c.height; })()")  # fmt: skip
    assert shape, "a portrait page turned 90° is wider than tall"
    assert watched.problems == []
    context.close()
