"""Faxes prepared for the screen on the whole stack, over HTTP: signed webhooks into the function
host, the kick, the worker fetching each fax and then preparing it (the prepare_fax job its
fetch's completion enqueued), Storage's authenticated read of the originals, and what the job
derived read back from Storage. A file that cannot be prepared fails its job with its own code,
sends no alert, and leaves the e-mail, its attachment rows and its originals as they were."""

from __future__ import annotations

import hashlib
import io
import time
from pathlib import Path

import httpx
import pikepdf
import pytest
from PIL import Image

from devstack.standins.sample_faxes import EFAX_SUBJECT, INVOICE_SUBJECT
from devstack.tools import inbound, send_faxes
from lib.supabase.storage import Storage
from tests.support import prepare_files
from tests.support.webhooks import deliver

WAIT_S = 120  # a fetch and a preparation each, on a loaded machine


def wait_until(condition, what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def jobs_of(db, email_id: str) -> dict[str, dict]:
    rows = db.execute(
        """select j.kind, j.status, j.attempts, j.last_error_code from document_jobs j
             join fax_received_emails e on e.id = j.fax_received_email_id where e.provider_email_id = %s""",
        (email_id,),
    ).fetchall()
    return {row["kind"]: row for row in rows}


def settled(db, email_ids: list[str]) -> bool:
    """Every e-mail fetched, and its preparation over (completed or failed)."""
    for email_id in email_ids:
        jobs = jobs_of(db, email_id)
        if jobs.get("fetch_email", {}).get("status") != "completed":
            return False
        if jobs.get("prepare_fax", {}).get("status") not in ("completed", "failed"):
            return False
    return True


def stored(db, email_id: str) -> list[dict]:
    """The e-mail's attachments as recorded, each with its view (None before one is recorded)."""
    return db.execute(
        """select a.id, a.provider_attachment_id, a.sha256, a.storage_path, a.updated_at, a.created_at,
                  v.page_count, v.view_path, v.thumbnail_path, v.error_code, v.source_sha256, e.id as email_row
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id
             left join fax_attachment_views v on v.attachment_id = a.id
            where e.provider_email_id = %s""",
        (email_id,),
    ).fetchall()


@pytest.fixture
def storage(env, http) -> Storage:
    return Storage(http, env["SUPABASE_URL"], env["SUPABASE_SECRET_KEY"], "fax-attachments")


def provider_digests(env) -> dict[str, str]:
    return httpx.get(f"{env['RESEND_API_URL']}/_control/attachments", timeout=10).json()


def test_a_g4_tiff_fax_and_a_pdf_invoice_are_fetched_and_prepared_over_http(db, env, hook, storage) -> None:
    efax = inbound.add_email(env["RESEND_API_URL"], sample="efax")
    invoice = inbound.add_email(env["RESEND_API_URL"], sample="invoice")
    for data in (efax, invoice):
        assert deliver(env, data).status_code == 200
    wait_until(lambda: settled(db, [efax["email_id"], invoice["email_id"]]), "both faxes fetched and prepared")

    for data in (efax, invoice):
        assert {kind: job["status"] for kind, job in jobs_of(db, data["email_id"]).items()} == {
            "fetch_email": "completed", "prepare_fax": "completed"}  # fmt: skip
    assert efax["subject"] == EFAX_SUBJECT and invoice["subject"] == INVOICE_SUBJECT

    [tiff] = stored(db, efax["email_id"])
    prefix = f"fax_views/{tiff['email_row']}/{tiff['id']}/"
    assert (tiff["page_count"], tiff["view_path"], tiff["thumbnail_path"], tiff["error_code"]) == (
        3, prefix + "view.pdf", prefix + "thumbnail.webp", None)  # fmt: skip
    with pikepdf.open(io.BytesIO(storage.download(tiff["view_path"]))) as view:
        shapes = [float(p.mediabox[3]) / float(p.mediabox[2]) for p in view.pages]
    # 1728 x 1145 dots at 204 x 98 dpi: A4 paper, 1.38 as tall as wide (0.66 if drawn at one resolution).
    assert shapes == [pytest.approx((1145 / 98) / (1728 / 204), rel=0.001)] * 3
    with Image.open(io.BytesIO(storage.download(tiff["thumbnail_path"]))) as thumbnail:
        assert thumbnail.format == "WEBP" and abs(thumbnail.height / thumbnail.width - shapes[0]) < 0.01
        assert thumbnail.convert("L").getextrema()[0] < 128, "not blank"

    [pdf] = stored(db, invoice["email_id"])
    assert (pdf["page_count"], pdf["view_path"], pdf["error_code"]) == (1, None, None), "a PDF is viewed as it is"
    with Image.open(io.BytesIO(storage.download(pdf["thumbnail_path"]))) as thumbnail:
        assert thumbnail.convert("L").getextrema()[0] < 128

    # The originals are the provider's bytes, untouched, at their own keys; nothing alerted.
    digests = provider_digests(env)
    for row in (tiff, pdf):
        original = storage.download(row["storage_path"])
        assert hashlib.sha256(original).hexdigest() == row["sha256"] == digests[row["provider_attachment_id"]]
        assert row["source_sha256"] == row["sha256"] and row["storage_path"].startswith("fax_received_emails/")
    assert hook.drain() == []


UNPREPARABLE = {
    "cut_short.pdf": (lambda: prepare_files.cut_short(prepare_files.invoice_pdf()), "fax_file_damaged"),
    "password.pdf": (lambda: prepare_files.encrypted_pdf("secret"), "fax_file_encrypted"),
    "no_pages.pdf": (prepare_files.empty_pdf, "fax_file_empty"),
    "huge_page.pdf": (prepare_files.oversized_page_pdf, "fax_page_too_large"),
    "image_bomb.pdf": (prepare_files.image_bomb_pdf, "fax_page_too_large"),
    "cut_short.tif": (lambda: prepare_files.cut_short(prepare_files.fax_tiff()), "fax_file_damaged"),
    "bomb.tif": (lambda: prepare_files.tiff_bomb(20_000, 20_000), "fax_page_too_large"),
}


def test_each_file_that_cannot_be_prepared_fails_its_job_with_its_code_no_alert_and_loses_nothing(
    db, env, hook, storage, tmp_path: Path
) -> None:
    sent: dict[str, tuple[dict, str]] = {}
    for name, (make, code) in UNPREPARABLE.items():
        path = tmp_path / name
        path.write_bytes(make())
        data = inbound.add_email(env["RESEND_API_URL"], attachments=[path], sender="fax@example.jp",
                                 subject=f"FAX {name}")  # fmt: skip
        sent[data["email_id"]] = (data, code)
    # One fax Resend has lost: its fetch fails, and that alert comes, so that silence above is no accident.
    lost = inbound.add_email(env["RESEND_API_URL"], attachments=1)
    fault = {"kind": "status", "status": 404, "name": "not_found", "target": "list", "email_id": lost["email_id"]}
    httpx.post(f"{env['RESEND_API_URL']}/_control/faults", json=fault, timeout=10).raise_for_status()
    for data, _ in [*sent.values(), (lost, None)]:
        assert deliver(env, data).status_code == 200
    wait_until(lambda: settled(db, list(sent)), "every fax fetched, and its preparation over")
    wait_until(lambda: jobs_of(db, lost["email_id"]).get("fetch_email", {}).get("status") == "failed", "the lost fax")

    digests = provider_digests(env)
    for email_id, (data, code) in sent.items():
        jobs = jobs_of(db, email_id)
        assert (jobs["fetch_email"]["status"], jobs["prepare_fax"]["status"]) == ("completed", "failed"), email_id
        assert (jobs["prepare_fax"]["last_error_code"], jobs["prepare_fax"]["attempts"]) == (code, 1), (
            data["attachments"][0]["filename"], "failed for good at once, with its own code")  # fmt: skip
        [row] = stored(db, email_id)
        assert (row["error_code"], row["page_count"], row["view_path"], row["thumbnail_path"]) == (
            code,
            None,
            None,
            None,
        )
        assert row["updated_at"] == row["created_at"], "the attachment's row is as the fetch wrote it"
        original = storage.download(row["storage_path"])
        assert hashlib.sha256(original).hexdigest() == row["sha256"] == digests[row["provider_attachment_id"]]
        listed = db.execute("select subject from fax_received_emails where provider_email_id = %s", (email_id,))
        assert listed.fetchone()["subject"] == data["subject"], "the fax stays listed as it came"

    first = hook.get(timeout=60)
    assert b"Fax not fetched" in first.body and lost["email_id"].encode() in first.body
    time.sleep(3)  # pg_net sends what the database queued within a second here
    assert hook.drain() == [], "no alert for a fax that could not be prepared"


def test_make_faxes_sends_a_real_tiff_from_a_sender_about_a_subject(db, env, tmp_path: Path) -> None:
    # make faxes FILE=fax.tif FROM='...' SUBJECT='...' (devstack/tools/send_faxes.py), on the stack.
    fax = tmp_path / "fax.tif"
    fax.write_bytes(prepare_files.fax_tiff(pages=2))
    sender = "eFax <message@efax.example.jp>"
    assert send_faxes.main(["--file", str(fax), "--from", sender, "--subject", EFAX_SUBJECT]) == 0
    [email] = db.execute("select provider_email_id, from_address, subject from fax_received_emails").fetchall()
    assert (email["from_address"], email["subject"]) == (sender, EFAX_SUBJECT)
    wait_until(lambda: settled(db, [email["provider_email_id"]]), "the fax fetched and prepared")
    [row] = stored(db, email["provider_email_id"])
    assert (row["page_count"], row["error_code"]) == (2, None) and row["view_path"].endswith("/view.pdf")
