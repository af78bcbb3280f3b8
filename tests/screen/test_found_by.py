"""The job page says how its e-mail was found: one that reconciliation recorded (Resend listed it and no
webhook had delivered it) says so, with when, in the browser's zone, in Japanese and English; one
its webhook delivered says that. Headless chromium against the local stack, as the other browser tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from lib.admin.display import absolute_time
from tests.support import operators
from tests.support.admin_page import sign_in
from tests.support.emails import receive_email

pytestmark = pytest.mark.slow  # a browser

ZONE = "Asia/Tokyo"


def job_of(db, provider_email_id: str) -> str:
    row = db.execute("select j.id from document_jobs j join fax_received_emails e on e.id = j.fax_received_email_id"
                     " where e.provider_email_id = %s", (provider_email_id,)).fetchone()  # fmt: skip
    return str(row["id"])


def test_the_job_page_says_an_email_was_found_by_reconciliation_and_when(chromium, stack_env, db) -> None:
    # Recorded as the CLI's reconcile records it: Resend's listing, an hour after Resend received it.
    operator = operators.sign_in(stack_env, stack_env["DEVSTACK_OPERATOR_EMAIL"],
                                 stack_env["DEVSTACK_OPERATOR_PASSWORD"])["user"]  # fmt: skip
    received = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    item = {"id": "em_found_late", "created_at": received, "from": "fax@example.jp", "to": ["faxes@example.com"],
            "subject": "照合で見つかった FAX", "attachments": []}  # fmt: skip
    db.execute("select admin_record_reconciled_emails(%s, %s, %s::jsonb, now() - interval '1 day', 1)",
               (operator["id"], operator["email"], json.dumps([item])))  # fmt: skip
    reconciled = db.execute("select reconciled_at from fax_received_emails where provider_email_id = 'em_found_late'"
                            ).fetchone()["reconciled_at"]  # fmt: skip
    when = absolute_time(reconciled.isoformat(), ZoneInfo(ZONE))  # as the CLI prints it in that zone
    by_webhook = str(receive_email(db, "em_by_webhook", {"from": "fax@example.jp", "subject": "届いた FAX"})["job_id"])

    context = chromium.new_context(locale="ja-JP", timezone_id=ZONE)
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_be_visible()
    page.select_option("select.language", "ja")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{job_of(db, 'em_found_late')}")
    found = page.locator(".found-by-reconciliation")
    expect(found).to_contain_text(f"{when} (")
    expect(found).to_contain_text(
        "に照合で見つかりました。Webhook が届かなかったため、Resend の受信一覧から取り込みました。"
    )
    expect(page.locator("dl.facts dt", has_text="取り込み経路")).to_be_visible()

    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{by_webhook}")
    expect(page.locator("dl.facts dd", has_text="通常どおり Webhook で受信")).to_be_visible()
    expect(page.locator(".found-by-reconciliation")).to_have_count(0)

    page.select_option("select.language", "en")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{job_of(db, 'em_found_late')}")
    found = page.locator(".found-by-reconciliation")
    expect(found).to_contain_text(f"Found by reconciliation at {when} (")
    expect(found).to_contain_text("no webhook delivered it, so it was taken from Resend's list of received e-mails")
    expect(page.locator("dl.facts dt", has_text="How it came in")).to_be_visible()
    context.close()
