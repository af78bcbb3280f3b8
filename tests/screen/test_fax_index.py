"""A fax's index fields (取引年月日, 取引金額, 取引先, 書類の種類) through the admin API and on the fax's
page in Debian's chromium: an admin enters them, a correction of the amount without a reason is
refused and with one is kept in the history (before and after, who, why), a write from a stale
page is a 409, a viewer may not write; the inbox's search by the index fields in its query string
and in the page's URL (kept on reload) with the count; the history printed with the page's print
rules (no navigation, no form); axe-core finds nothing at 1280 and 390 px in either language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.admin_page import Watched, sign_in
from tests.support.operators import sign_in as api_sign_in

TIMEOUT = 60
AXE = Path(__file__).resolve().parents[2] / "devstack" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def call(env: dict[str, str], path: str, token: str, body: dict[str, Any] | None = None) -> httpx.Response:
    url = f"{env['FUNCTIONS_URL']}/api/admin/{path}"
    headers = {"Authorization": f"Bearer {token}"}
    if body is None:
        return httpx.get(url, headers=headers, timeout=TIMEOUT)
    return httpx.post(url, headers=headers, json=body, timeout=TIMEOUT)


def received(db, provider_id: str, subject: str, minute: int) -> str:
    db.execute(
        "insert into fax_received_emails (provider_email_id, data, from_address, subject, to_addresses, received_at)"
        " values (%s, '{}', 'eFax <message@inbound.efax.com>', %s, array['fax@office.example.jp'],"
        " timestamptz '2026-12-01 09:00+09' + %s * interval '1 minute')",
        (provider_id, subject, minute),
    )
    return str(db.execute("select id from fax_received_emails where provider_email_id = %s", (provider_id,))
               .fetchone()["id"])  # fmt: skip


@pytest.fixture
def two_faxes(db) -> dict[str, str]:
    # eFax's subject (lib/fax/senders.py): the station's name and the caller's number.
    return {"yamada": received(db, "em_idx_1", "eFax from ヤマダ商事 - 1 page(s), caller ID: 06-1111-2222", 1),
            "other": received(db, "em_idx_2", "eFax from - 2 page(s), caller ID: 03-3333-4444", 2)}  # fmt: skip


@pytest.fixture(scope="module")
def tokens(stack_env) -> dict[str, str]:
    return {who: api_sign_in(stack_env, stack_env[f"DEVSTACK_{who}_EMAIL"], stack_env[f"DEVSTACK_{who}_PASSWORD"])
            ["access_token"] for who in ("OPERATOR", "VIEWER")}  # fmt: skip


def test_the_index_is_entered_corrected_with_a_reason_and_searched_through_the_api(stack_env, db, two_faxes,
                                                                                    tokens) -> None:  # fmt: skip
    admin, viewer = tokens["OPERATOR"], tokens["VIEWER"]
    fax = two_faxes["yamada"]
    first = {"transaction_date": "2026-11-30", "amount": 54000, "counterparty": "ヤマダ商事", "doc_type": "請求書"}
    refused = call(stack_env, f"faxes/{fax}/index", viewer, {"values": first, "version": 0})
    assert refused.status_code == 403 and refused.json()["error"] == "read_only"
    entered = call(stack_env, f"faxes/{fax}/index", admin, {"values": first, "version": 0})
    assert entered.status_code == 200 and entered.json()["version"] == 1, entered.text
    corrected = {**first, "amount": 45000}
    no_reason = call(stack_env, f"faxes/{fax}/index", admin, {"values": corrected, "version": 1})
    assert no_reason.status_code == 400 and no_reason.json()["error"] == "reason_required", no_reason.text
    stale = call(stack_env, f"faxes/{fax}/index", admin, {"values": corrected, "reason": "x", "version": 0})
    assert stale.status_code == 409 and stale.json()["error"] == "index_changed"
    ok = call(stack_env, f"faxes/{fax}/index", admin, {"values": corrected, "reason": "金額の読み違い", "version": 1})
    assert ok.status_code == 200 and ok.json()["changed"] is True

    page = call(stack_env, f"faxes/{fax}", viewer).json()
    assert page["index"] == corrected and page["index_version"] == 2
    history = page["index_history"]
    assert [(h["before"] or {}).get("amount") for h in history] == [None, 54000]
    assert [h["after"]["amount"] for h in history] == [54000, 45000]
    assert [h["reason"] for h in history] == [None, "金額の読み違い"]
    assert history[1]["actor_email"] == stack_env["DEVSTACK_OPERATOR_EMAIL"]
    assert page["counterparty_suggestions"] == ["ヤマダ商事"]  # entered for this number, and its station's name
    # The next fax from the same number is offered the counterparty entered for the last one, then its own name.
    again = received(db, "em_idx_3", "eFax from YAMADA - 2 page(s), caller ID: 06-1111-2222", 3)
    assert call(stack_env, f"faxes/{again}", viewer).json()["counterparty_suggestions"] == ["ヤマダ商事", "YAMADA"]
    assert call(stack_env, f"faxes/{two_faxes['other']}", viewer).json()["counterparty_suggestions"] == []

    found = call(stack_env, "faxes?counterparty=やまだ&type=請求書&amount_min=40000&date_to=2026-11-30", viewer).json()
    assert [f["id"] for f in found["faxes"]] == [fax] and found["count"] == 1  # not the fax never indexed
    assert found["faxes"][0]["index"]["amount"] == 45000
    none = call(stack_env, "faxes?counterparty=やまだ&amount_max=44999", viewer).json()
    assert none["faxes"] == [] and none["count"] == 0
    bad = call(stack_env, "faxes?type=請求", viewer)
    assert bad.status_code == 400


def axe_violations(page: Page) -> list[dict[str, Any]]:
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    run = page.evaluate("""async () => { const r = await axe.run(document); return { passed: r.passes.length,
        violations: r.violations.map(v => ({ id: v.id,
                                             nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })) }; }""")
    assert run["passed"] > 10, f"axe-core checked only {run['passed']} rules"
    return list(run["violations"])


def test_a_clerk_enters_and_corrects_the_index_on_the_fax_page_and_its_history_prints(chromium, stack_env, db,
                                                                                      two_faxes) -> None:  # fmt: skip
    # bypass_csp: axe-core is added as a script of its own (tests/screen/test_browser_layout.py does the same).
    context = chromium.new_context(locale="ja-JP", viewport=DESKTOP, timezone_id="Asia/Tokyo", bypass_csp=True)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "OPERATOR")
    expect(page.locator("table.faxes tbody tr")).to_have_count(2)
    page.goto(f"{stack_env['ADMIN_URL']}#/faxes/{two_faxes['yamada']}")
    section = page.locator("section.fax-index")
    expect(section.locator(".index-no-history")).to_be_visible()
    form = section.locator("form.index-form")
    form.locator("input[name=transaction_date]").fill("2026-11-30")
    form.locator("input[name=amount]").fill("５４，０００")  # as a clerk may type it
    form.locator("input[name=counterparty]").fill("ヤマダ商事")
    form.locator("select[name=doc_type]").select_option("納品書")
    form.locator("button[type=submit]").click()
    rows = page.locator("table.index-history tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("初回入力")
    expect(page.locator(".index-now")).to_contain_text("54,000 円")

    # A correction without a reason is stopped on the page; with one, it is kept.
    page.locator("details.index-edit summary").click()
    form = page.locator("form.index-form")
    form.locator("input[name=amount]").fill("45000")
    form.locator("button[type=submit]").click()
    assert form.locator("textarea[name=reason]").evaluate("(e) => e.validationMessage") != ""
    assert db.execute("select count(*) as n from fax_index_history").fetchone()["n"] == 1
    form.locator("textarea[name=reason]").fill("金額の読み違い")
    form.locator("button[type=submit]").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_contain_text("54,000 円 → 45,000 円")
    expect(rows.nth(1)).to_contain_text("金額の読み違い")
    expect(rows.nth(1)).to_contain_text(stack_env["DEVSTACK_OPERATOR_EMAIL"])
    history = db.execute("select before, after, reason from fax_index_history order by id").fetchall()
    assert [(h["before"] or {}).get("amount") for h in history] == [None, 54000]
    assert history[1]["after"]["amount"] == 45000 and history[1]["reason"] == "金額の読み違い"
    assert axe_violations(page) == []

    # Printed: the history and the facts, no navigation and no form.
    page.emulate_media(media="print")
    expect(page.locator("header nav.views")).to_be_hidden()
    expect(page.locator("details.index-edit")).to_be_hidden()
    expect(page.locator("button.index-print")).to_be_hidden()
    expect(page.locator("table.index-history")).to_be_visible()
    expect(page.locator("table.index-history")).to_contain_text("金額の読み違い")
    page.emulate_media(media="screen")
    expect(page.locator("header nav.views")).to_be_visible()

    # On a phone, in English, the same page passes axe too.
    page.set_viewport_size(PHONE)
    page.evaluate("localStorage.setItem('document-jobs-admin-language', 'en')")
    page.reload()
    expect(page.locator("table.index-history tbody tr")).to_have_count(2)
    expect(page.locator("section.fax-index h3")).to_have_text("Index for the books (Electronic Bookkeeping Act)")
    assert axe_violations(page) == []
    assert watched.problems == []
    context.close()


@pytest.mark.parametrize(("locale", "viewport"), [("ja-JP", DESKTOP), ("en-US", PHONE)])
def test_the_inbox_searches_by_the_index_and_its_link_keeps_the_filter(chromium, stack_env, db, two_faxes, tokens,
                                                                       locale, viewport) -> None:  # fmt: skip
    values = {"transaction_date": "2026-11-15", "amount": 120000, "counterparty": "ｶﾜｸﾞﾁ工業", "doc_type": "注文書"}
    assert call(stack_env, f"faxes/{two_faxes['other']}/index", tokens["OPERATOR"],
                {"values": values, "version": 0}).status_code == 200  # fmt: skip
    context = chromium.new_context(locale=locale, viewport=viewport, timezone_id="Asia/Tokyo", bypass_csp=True)
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator("table.faxes tbody tr")).to_have_count(2)
    page.locator("details.filter-fold summary").evaluate("(s) => { s.parentElement.open = true; }")
    form = page.locator("form.filters")
    form.locator("input[name=counterparty]").fill("かわぐち")
    form.locator("input[name=amount_min]").fill("100000")
    form.locator("select[name=type]").select_option("注文書")
    form.locator("button[type=submit]").click()
    rows = page.locator("table.faxes tbody tr")
    expect(rows).to_have_count(1)
    assert rows.nth(0).get_attribute("data-fax-id") == two_faxes["other"]
    expect(page.locator(".count-line")).to_have_text("1 件" if locale == "ja-JP" else "1 fax")
    assert "counterparty=" in page.url and "amount_min=100000" in page.url
    page.reload()  # the link keeps the filter
    expect(page.locator("table.faxes tbody tr")).to_have_count(1)
    expect(page.locator("form.filters input[name=counterparty]")).to_have_value("かわぐち")
    assert axe_violations(page) == []
    assert watched.problems == []
    context.close()
