"""make screenshots: the pictures of the admin screen that the docs show, from the real page.

Starts the local stack, records sample faxed e-mails through the queue's own functions (completed
jobs with stored attachments, one job that failed for good after a retry, one whose releases for an
invalid Resend key opened an outage), signs in as the operator in Debian's chromium (headless) and
writes each view, in Japanese and in English, to docs/images/; then stops the stack.

The Vault secrets are not stored, so no kick or cron call runs a worker: what the pictures show is
exactly what was recorded here, not whatever a worker got to before the shot.

.venv/bin/python -m devstack.tools.screenshots
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg.rows import dict_row

from devstack import cluster, lifecycle, stack

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

IMAGES = cluster.ROOT / "docs" / "images"
LANGUAGES = {"ja": "ja-JP", "en": "en-US"}
DESKTOP = (1280, 800)
PHONE = (390, 844)
# The views, each in every language: file name stem -> viewport. The docs reference these names,
# and tests/tooling/test_screenshots.py holds docs/images/ to exactly this list.
VIEWS = {
    "signin": DESKTOP,
    "jobs": DESKTOP,
    "job-failed": DESKTOP,
    "search": DESKTOP,
    "overview-outage": DESKTOP,
    "phone-jobs": PHONE,
}
# A page waits for its API, and every call may start a cold instance of Vercel's runtime on the
# function host (seconds on a busy machine): a bound on waiting, not a timing.
WAIT_MS = 60_000
SEARCHED_SENDER = "fax@tokyo-shoji.example.jp"
SAMPLES = [  # (from, subject, attachment file names)
    (f"東京商事 <{SEARCHED_SENDER}>", "請求書 12月分", ["請求書_2026-12.pdf"]),
    ("大阪物産 <fax@osaka-bussan.example.jp>", "注文書 No.4471", ["注文書_4471.pdf", "納品先一覧.pdf"]),
    (f"東京商事 <{SEARCHED_SENDER}>", "見積書のご送付", ["見積書_A-208.pdf"]),
    ("Nagoya Parts <orders@nagoya-parts.example.com>", "Purchase order 88-120", ["PO-88-120.pdf"]),
    ("札幌運輸 <fax@sapporo-unyu.example.jp>", "配送伝票", ["伝票_0931.pdf", "伝票_0932.pdf", "伝票_0933.pdf"]),
    (f"東京商事 <{SEARCHED_SENDER}>", "納品書 12/02", ["納品書_1202.pdf"]),
    ("福岡工業 <fax@fukuoka-kogyo.example.jp>", "検査成績書", ["検査成績書.pdf"]),
]
FAILED = ("神戸精機 <fax@kobe-seiki.example.jp>", "発注確認書")
OUTAGE = ("横浜電機 <fax@yokohama-denki.example.jp>", "契約書 写し")
NOT_FOUND = "Resend 404 not_found: Email not found"
UNAVAILABLE = "Resend 503 service_unavailable: Service temporarily unavailable"
UNAUTHORIZED = "Resend 400 validation_error: API key is invalid"


def file_names() -> list[str]:
    """Every picture this tool writes, the one list of them."""
    return [f"{view}-{language}.png" for view in VIEWS for language in LANGUAGES]


@dataclass(frozen=True)
class Seeded:
    failed_job: str


def claim(conn: psycopg.Connection[dict]) -> dict:
    [job] = conn.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    return job


def receive(conn: psycopg.Connection[dict], number: int, sender: str, subject: str) -> dict:
    data = {"email_id": f"em_sample_{number}", "from": sender, "to": ["fax@example.jp"], "subject": subject}
    return conn.execute(
        "select * from record_inbound_email(%s, %s, %s)", (data["email_id"], f"msg_sample_{number}", json.dumps(data))
    ).fetchone()


def seed(conn: psycopg.Connection[dict]) -> Seeded:
    """What the webhook and a worker record, through the same functions; `conn` is postgres."""
    conn.execute("set role service_role")
    for number, (sender, subject, names) in enumerate(SAMPLES):
        email = receive(conn, number, sender, subject)
        job = claim(conn)
        for index, name in enumerate(names):
            attachment = f"att_sample_{number}_{index}"
            conn.execute(
                """insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id,
                          filename, content_type, size_bytes, sha256, bucket, storage_path)
                   values (%s, %s, %s, 'application/pdf', %s, repeat('a', 64), 'fax-attachments', %s)""",
                (email["fax_received_email_id"], attachment, name, 48_000 + 7_919 * (number + index),
                 f"fax_received_emails/{email['fax_received_email_id']}/{attachment}.pdf"),
            )  # fmt: skip
        conn.execute("select complete_document_job_v2(%s, %s)", (job["id"], job["generation"]))

    # Resend is unavailable once (a retry later), then no longer knows the e-mail (failed for good).
    failed = receive(conn, len(SAMPLES), *FAILED)
    job = claim(conn)
    conn.execute("select fail_document_job_v2(%s, %s, 'resend_unavailable', %s, true, '1 second')",
                 (job["id"], job["generation"], UNAVAILABLE))  # fmt: skip
    conn.execute("update document_jobs set run_after = now() where id = %s", (failed["job_id"],))
    job = claim(conn)
    conn.execute("select fail_document_job_v2(%s, %s, 'resend_not_found', %s, false)",
                 (job["id"], job["generation"], NOT_FOUND))  # fmt: skip

    # Releases for an invalid key that keep happening: the health check opens an outage, as the
    # every-minute cron job would (tests/flow/test_alerts.py opens it the same way).
    outage = receive(conn, len(SAMPLES) + 1, *OUTAGE)
    for _ in range(2):
        conn.execute("update document_jobs set run_after = now() where id = %s", (outage["job_id"],))
        job = claim(conn)
        conn.execute("select release_document_job_v2(%s, %s, '10 minutes', 'resend_unauthorized', %s)",
                     (job["id"], job["generation"], UNAUTHORIZED))  # fmt: skip
        conn.execute("reset role")
        conn.execute("select document_jobs_internal.check_health()")
        conn.execute("set role service_role")
    conn.execute("reset role")
    opened = conn.execute("select count(*) as n from document_jobs_internal.outages where active").fetchone()["n"]
    if opened != 1:
        raise SystemExit(f"screenshots: expected one open outage, found {opened}")
    return Seeded(failed_job=str(failed["job_id"]))


def sign_in(page: Page, env: dict[str, str]) -> None:
    page.fill("input[name=email]", env["DEVSTACK_OPERATOR_EMAIL"])
    page.fill("input[name=password]", env["DEVSTACK_OPERATOR_PASSWORD"])
    page.click("form.sign-in button[type=submit]")
    page.wait_for_selector(".cards", timeout=WAIT_MS)


def shoot(chromium: Browser, env: dict[str, str], seeded: Seeded, language: str) -> list[Path]:
    from playwright.sync_api import expect

    admin = env["ADMIN_URL"]
    # Each view: how to reach it once signed in, and what shows it is drawn.
    steps: dict[str, tuple[str, str]] = {
        "jobs": ("#/jobs", "table.jobs tbody tr"),
        "job-failed": (f"#/jobs/{seeded.failed_job}", "ol.timeline .attempt-error"),
        "search": (f"#/jobs?sender={SEARCHED_SENDER}", "table.jobs tbody tr"),
        "overview-outage": ("#/overview", "li.outage"),
        "phone-jobs": ("#/jobs", "table.jobs tbody tr"),
    }
    written = []
    for (width, height), views in group_by_viewport().items():
        context = chromium.new_context(
            viewport={"width": width, "height": height}, device_scale_factor=1,
            locale=LANGUAGES[language], timezone_id="Asia/Tokyo",
        )  # fmt: skip
        page = context.new_page()
        page.goto(admin)
        page.wait_for_selector("form.sign-in", timeout=WAIT_MS)
        for view in views:
            path = IMAGES / f"{view}-{language}.png"
            if view == "signin":
                settle(page)
                page.screenshot(path=str(path))
                sign_in(page, env)
            else:
                if not page.locator(".cards").count() and not page.locator(".who").count():
                    sign_in(page, env)
                fragment, ready = steps[view]
                page.goto(f"{admin}{fragment}")
                page.wait_for_selector(ready, timeout=WAIT_MS)
                if view == "phone-jobs":  # the cards, not the header and the tabs above them
                    page.locator("table.jobs").evaluate("table => table.scrollIntoView({ block: 'start' })")
                if view == "search":
                    found = sum(1 for sender, _, _ in SAMPLES if SEARCHED_SENDER in sender)
                    expect(page.locator("table.jobs tbody tr")).to_have_count(found, timeout=WAIT_MS)
                settle(page)
                page.screenshot(path=str(path))
            written.append(path)
        context.close()
    return written


def group_by_viewport() -> dict[tuple[int, int], list[str]]:
    groups: dict[tuple[int, int], list[str]] = {}
    for view, viewport in VIEWS.items():
        groups.setdefault(viewport, []).append(view)
    return groups


def settle(page: Page) -> None:
    """No request in flight, and the fonts loaded: the picture is the page at rest."""
    page.wait_for_load_state("networkidle", timeout=WAIT_MS)
    page.evaluate("document.fonts.ready.then(() => true)")


def run() -> int:
    from playwright.sync_api import sync_playwright

    from devstack import browser

    started = time.monotonic()
    print("Starting the local stack and recording sample e-mails ...")
    running = stack.start()
    try:
        env = running.env
        with psycopg.connect(env["DATABASE_URL"], autocommit=True, row_factory=dict_row) as conn:
            seeded = seed(conn)
        IMAGES.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as playwright:
            chromium = browser.launch(playwright)
            try:
                written = [path for language in LANGUAGES for path in shoot(chromium, env, seeded, language)]
            finally:
                chromium.close()
    finally:
        stack.stop(running)
    for path in sorted(written):
        print(f"  {path.relative_to(cluster.ROOT)}")
    print(f"{len(written)} screenshots in {time.monotonic() - started:.0f} s")
    return 0 if sorted(p.name for p in written) == sorted(file_names()) else 1


def main() -> None:
    with lifecycle.guarded(stack.stop_record):
        code = run()
    sys.exit(code)


if __name__ == "__main__":
    main()
