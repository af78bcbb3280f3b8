"""make screenshots: the pictures of the admin screen that the docs show, from the real page.

Starts the local stack and lets it receive real faxes as an office does: signed webhooks for
e-mails whose files the Resend stand-in serves (CCITT G4 TIFFs at fax resolution as an MFP or a
fax service forwards them, Japanese PDFs), fetched and prepared (page counts, viewing PDFs,
page-1 thumbnails) by the worker. Then, with the worker's Vault secrets removed so that nothing
runs behind the pictures' backs, it records through the queue's own functions a fax that cannot
be fetched (failed for good after a retry) and one whose releases for an invalid Resend key opened
an outage; names the office's lines; marks who is dealing with some faxes and enters one fax's
index fields with a correction, as a clerk. It signs in as the clerk in Debian's chromium
(headless), writes each view, in Japanese and in English, to docs/images/, and stops the stack.

.venv/bin/python -m devstack.tools.screenshots
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
from psycopg.rows import dict_row

from devstack import cluster, lifecycle, stack
from devstack.standins import sample_faxes
from devstack.tools import inbound

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
    "inbox": DESKTOP,
    "inbox-today": DESKTOP,
    "fax": DESKTOP,
    "fax-index": DESKTOP,
    "fax-failed": DESKTOP,
    "job-failed": DESKTOP,
    "overview-outage": DESKTOP,
    "phone-inbox": PHONE,
    "phone-fax": PHONE,
}
# A page waits for its API, and every call may start a cold instance of Vercel's runtime on the
# function host (seconds on a busy machine): a bound on waiting, not a timing.
WAIT_MS = 60_000
# A fetch and a preparation per fax, on a loaded machine.
PREPARED_WITHIN_S = 300.0
# The office's lines: the address a fax service or an MFP forwards to, its name, its number.
MAIN_LINE = ("fax-honsha@office.example.jp", "本社", "0312345678")
SALES_LINE = ("fax-eigyo@office.example.jp", "営業部", "0669876543")


@dataclass(frozen=True)
class Sample:
    key: str
    sender: str
    subject: str
    to: str
    files: list[tuple[str, str, bytes]]  # (file name, content type, bytes)
    age_minutes: int  # received that long before the run: a morning's faxes, not one burst


def order_pdf() -> bytes:
    lines = [
        (72, 770, 20, "注文書"),
        (72, 730, 11, "株式会社サンプル 御中"),
        (360, 730, 11, "東京商事株式会社"),
        (360, 714, 9, "東京都千代田区丸の内1-1-1"),
        (360, 700, 9, "TEL 03-5555-0101 FAX 03-5555-0102"),
        (72, 660, 11, "注文番号 PO-4471　注文日 2026年12月7日"),
        (80, 560, 10, "品名"),
        (340, 560, 10, "数量"),
        (440, 560, 10, "納期"),
        (80, 536, 10, "トナー カートリッジ（黒）"),
        (340, 536, 10, "12"),
        (440, 536, 10, "12月10日"),
        (80, 512, 10, "コピー用紙 A4 500枚"),
        (340, 512, 10, "30"),
        (440, 512, 10, "12月10日"),
        (72, 440, 9, "ご確認のうえ、納期のご回答をお願いいたします。"),
    ]
    table = (b"0.8 w 72 576 m 523 576 l S 72 550 m 523 550 l S 72 526 m 523 526 l S 72 502 m 523 502 l S "
             b"72 502 m 72 576 l S 330 502 m 330 576 l S 430 502 m 430 576 l S 523 502 m 523 576 l S\n")  # fmt: skip
    return sample_faxes.japanese_pdf(lines, table)


def samples() -> list[Sample]:
    """The faxes of the pictures, oldest first: what the inbox lists, newest first."""
    tiff = "image/tiff"
    pdf = "application/pdf"
    return [
        Sample("split1", "RICOH IM C3000 <mfp-honsha@office.example.jp>",
               "[1/2] From 0311112222 (Fax Message No.0413)", MAIN_LINE[0],
               [("FAX_0413_1.tif", tiff, sample_faxes.fax_tiff(pages=2, number="03-1111-2222"))], 95),
        Sample("split2", "RICOH IM C3000 <mfp-honsha@office.example.jp>",
               "[2/2] From 0311112222 (Fax Message No.0413)", MAIN_LINE[0],
               [("FAX_0413_2.tif", tiff, sample_faxes.fax_tiff(pages=1, number="03-1111-2222"))], 94),
        Sample("invoice", sample_faxes.INVOICE_SENDER, sample_faxes.INVOICE_SUBJECT, MAIN_LINE[0],
               [(sample_faxes.INVOICE_FILENAME, pdf, sample_faxes.invoice_pdf())], 62),
        Sample("withheld", "eFax <message@efax.example.jp>", "eFax from - 1 page(s), caller ID: 非通知",
               SALES_LINE[0], [("FAX_20261207_unknown.tif", tiff, sample_faxes.fax_tiff(pages=1, number="----"))], 41),
        Sample("order", "東京商事 <fax@tokyo-shoji.example.jp>", "注文書 PO-4471", SALES_LINE[0],
               [("注文書_PO-4471.pdf", pdf, order_pdf())], 23),
        Sample("efax", "eFax <message@efax.example.jp>", "eFax from 大阪物産 - 3 page(s), caller ID: 06-6123-4567",
               SALES_LINE[0], [("FAX_20261207_0661234567.tif", tiff, sample_faxes.fax_tiff(number="06-6123-4567"))], 9),
    ]  # fmt: skip


# Recorded directly (no worker runs for them), received between the real faxes: minutes before the run.
FAILED = ("神戸精機 <fax@kobe-seiki.example.jp>", "発注確認書", 50)
OUTAGE = ("横浜電機 <fax@yokohama-denki.example.jp>", "契約書 写し", 70)
NOT_FOUND = "Resend 404 not_found: Email not found"
UNAVAILABLE = "Resend 503 service_unavailable: Service temporarily unavailable"
UNAUTHORIZED = "Resend 400 validation_error: API key is invalid"


def file_names() -> list[str]:
    """Every picture this tool writes, the one list of them."""
    return [f"{view}-{language}.png" for view in VIEWS for language in LANGUAGES]


@dataclass(frozen=True)
class Seeded:
    failed_job: str
    failed_fax: str
    faxes: dict[str, str]  # a sample's key -> its fax's id


def claim(conn: psycopg.Connection[dict]) -> dict:
    [job] = conn.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    return job


def receive(conn: psycopg.Connection[dict], number: int, sender: str, subject: str, age_minutes: int) -> dict:
    received = datetime.now(UTC) - timedelta(minutes=age_minutes)
    data = {"email_id": f"em_sample_{number}", "from": sender, "to": [MAIN_LINE[0]], "subject": subject,
            "created_at": received.isoformat()}  # fmt: skip
    return conn.execute(
        "select * from record_inbound_email(%s, %s, %s)", (data["email_id"], f"msg_sample_{number}", json.dumps(data))
    ).fetchone()


def deliver(env: dict[str, str], sample: Sample) -> str:
    """The e-mail received by the Resend stand-in, then its signed webhook delivered; its e-mail id."""
    import base64

    request: dict[str, Any] = {"from": sample.sender, "to": [sample.to], "subject": sample.subject,
                               "age_seconds": 60 * sample.age_minutes,
                               "attachments": [{"filename": name, "content_type": kind,
                                                "content_base64": base64.b64encode(content).decode()}
                                               for name, kind, content in sample.files]}  # fmt: skip
    response = httpx.post(f"{env['RESEND_API_URL']}/_control/emails", json=request, timeout=60)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    status = inbound.deliver_until_accepted(env["FUNCTIONS_URL"], env["RESEND_WEBHOOK_SECRET"], data)
    if status != 200:
        raise SystemExit(f"screenshots: the webhook answered {status} for {sample.key}")
    return str(data["email_id"])


def prepared(conn: psycopg.Connection[dict], email_ids: list[str]) -> bool:
    """Whether every e-mail's fetch and preparation completed; a job that failed ends the run."""
    rows = conn.execute(
        """select e.provider_email_id, j.kind, j.status, j.last_error_code from document_jobs j
             join fax_received_emails e on e.id = j.fax_received_email_id where e.provider_email_id = any(%s)""",
        (email_ids,),
    ).fetchall()
    failed = [row for row in rows if row["status"] == "failed"]
    if failed:
        raise SystemExit(f"screenshots: a sample fax's job failed: {failed}")
    done = {(row["provider_email_id"], row["kind"]) for row in rows if row["status"] == "completed"}
    return all((email_id, kind) in done for email_id in email_ids for kind in ("fetch_email", "prepare_fax"))


def receive_real_faxes(conn: psycopg.Connection[dict], env: dict[str, str]) -> dict[str, str]:
    """The sample faxes through the whole flow (webhook, kick, worker, Storage, prepare_fax), with the
    worker's Vault secrets stored for that time only. `conn` is postgres. Their faxes' ids by key."""
    stack.store_vault_secrets(conn, env)
    try:
        email_ids = {}
        for sample in samples():
            email_ids[sample.key] = deliver(env, sample)
        deadline = time.monotonic() + PREPARED_WITHIN_S
        while not prepared(conn, list(email_ids.values())):
            if time.monotonic() > deadline:
                raise SystemExit("screenshots: the sample faxes were not fetched and prepared in time")
            time.sleep(1)
    finally:
        conn.execute("delete from vault.secrets where name = any(%s)",
                     ([stack.WORKER_URL_SECRET, stack.WORKER_SECRET_SECRET],))  # fmt: skip
    rows = conn.execute("select id, provider_email_id from fax_received_emails where provider_email_id = any(%s)",
                        (list(email_ids.values()),)).fetchall()  # fmt: skip
    by_email = {row["provider_email_id"]: str(row["id"]) for row in rows}
    return {key: by_email[email_id] for key, email_id in email_ids.items()}


def mark_as_clerk(conn: psycopg.Connection[dict], env: dict[str, str], faxes: dict[str, str]) -> None:
    """What a clerk did this morning: took one fax, closed another with a note, and entered the
    invoice's index fields, then corrected its amount with a reason. `conn` is postgres."""
    email = env["DEVSTACK_CLERK_EMAIL"]
    clerk = str(conn.execute("select id from auth.users where email = %s", (email,)).fetchone()["id"])
    conn.execute("set role service_role")
    conn.execute("select mark_fax_handling(%s, %s, 'in_progress', null, 'new')", (faxes["efax"], clerk))
    conn.execute("select mark_fax_handling(%s, %s, 'done', %s, 'new')",
                 (faxes["invoice"], clerk, "経理に回付済み（12/7）"))  # fmt: skip
    values = {
        "transaction_date": "2026-11-30",
        "amount": 120000,
        "counterparty": "株式会社山田商事",
        "doc_type": "請求書",
    }
    conn.execute("select set_fax_index(%s, %s, %s, %s)", (clerk, email, faxes["invoice"], json.dumps(values)))
    corrected = values | {"amount": 132000}
    conn.execute("select set_fax_index(%s, %s, %s, %s, %s)",
                 (clerk, email, faxes["invoice"], json.dumps(corrected), "税込の請求金額に訂正"))  # fmt: skip
    conn.execute("reset role")


def seed(conn: psycopg.Connection[dict], env: dict[str, str]) -> Seeded:
    """What the webhook and a worker record, through the same functions; `conn` is postgres."""
    faxes = receive_real_faxes(conn, env)
    conn.execute("set role service_role")
    for address, name, number in (MAIN_LINE, SALES_LINE):
        conn.execute("select set_fax_line(%s, %s, %s)", (address, name, number))

    # Resend is unavailable once (a retry later), then no longer knows the e-mail (failed for good).
    failed = receive(conn, 1, *FAILED)
    job = claim(conn)
    conn.execute("select fail_document_job_v2(%s, %s, 'resend_unavailable', %s, true, '1 second')",
                 (job["id"], job["generation"], UNAVAILABLE))  # fmt: skip
    conn.execute("update document_jobs set run_after = now() where id = %s", (failed["job_id"],))
    job = claim(conn)
    conn.execute("select fail_document_job_v2(%s, %s, 'resend_not_found', %s, false)",
                 (job["id"], job["generation"], NOT_FOUND))  # fmt: skip

    # Releases for an invalid key that keep happening: the health check opens an outage, as the
    # every-minute cron job would (tests/flow/test_alerts.py opens it the same way).
    outage = receive(conn, 2, *OUTAGE)
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
    mark_as_clerk(conn, env, faxes)
    return Seeded(failed_job=str(failed["job_id"]), failed_fax=str(failed["fax_received_email_id"]), faxes=faxes)


def sign_in(page: Page, env: dict[str, str]) -> None:
    """As the clerk the guides are written for; the inbox is the first view."""
    page.fill("input[name=email]", env["DEVSTACK_CLERK_EMAIL"])
    page.fill("input[name=password]", env["DEVSTACK_CLERK_PASSWORD"])
    page.click("form.sign-in button[type=submit]")
    page.wait_for_selector("header nav.views", timeout=WAIT_MS)


# The inbox's rows whose page 1 is drawn: every thumbnail there is, loaded (signed Storage URLs).
THUMBNAILS_LOADED = """(count) => { const images = [...document.querySelectorAll("table.faxes td.thumbnail img")];
  return images.length === (count ?? Math.max(1, images.length))
    && images.every((i) => i.complete && i.naturalWidth > 0); }"""
# A page of the viewer drawn: its canvas swapped in, with ink on it.
PAGE_DRAWN = """() => { const canvas = document.querySelector('.viewer-page[data-page="1"] canvas');
  return !!canvas && canvas.width > 0; }"""


def shoot(chromium: Browser, env: dict[str, str], seeded: Seeded, language: str) -> list[Path]:
    admin = env["ADMIN_URL"]
    prepared = len(seeded.faxes)
    fax = f"#/faxes/{seeded.faxes['invoice']}"
    # Each view: how to reach it once signed in, what shows it is drawn, and what to bring to the
    # top of the picture (None: the page's top).
    steps: dict[str, tuple[str, str, str | None]] = {
        "inbox": ("#/faxes", "table.faxes tbody tr", None),
        "inbox-today": ("#/faxes?period=today&handling=open", "table.faxes tbody tr", None),
        "fax": (fax, ".viewer-page", ".fax-documents"),
        "fax-index": (fax, ".fax-index", ".fax-index"),
        "fax-failed": (f"#/faxes/{seeded.failed_fax}", ".storing-failed", None),
        "job-failed": (f"#/jobs/{seeded.failed_job}", "ol.timeline .attempt-error", None),
        "overview-outage": ("#/overview", "li.outage", None),
        "phone-inbox": ("#/faxes", "table.faxes tbody tr", "h2"),
        "phone-fax": (f"#/faxes/{seeded.faxes['efax']}", ".viewer-page", ".fax-documents"),
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
                if not page.locator("header nav.views").count():
                    sign_in(page, env)
                fragment, ready, top = steps[view]
                page.goto(f"{admin}{fragment}")
                page.wait_for_selector(ready, timeout=WAIT_MS)
                if view in ("inbox", "inbox-today", "phone-inbox"):  # lazy below the fold: loaded now
                    page.evaluate(
                        "document.querySelectorAll('td.thumbnail img').forEach((i) => { i.loading = 'eager'; })"
                    )
                if view in ("inbox", "phone-inbox"):
                    page.wait_for_function(THUMBNAILS_LOADED, arg=prepared, timeout=WAIT_MS)
                if view == "inbox-today":  # those received today (by the office's clock) and not done
                    page.wait_for_function(THUMBNAILS_LOADED, arg=None, timeout=WAIT_MS)
                if view in ("inbox", "inbox-today"):  # the list, under the folded filters
                    page.locator("details.filter-fold").evaluate("fold => { fold.open = false; }")
                if view in ("fax", "phone-fax"):
                    page.wait_for_function(PAGE_DRAWN, timeout=WAIT_MS)
                if top:
                    page.locator(top).first.evaluate("element => element.scrollIntoView({ block: 'start' })")
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
            seeded = seed(conn, env)
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
