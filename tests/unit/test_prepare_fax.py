"""The prepare_fax job (lib/worker/prepare_fax.py) against supabase-py and Storage answered by respx:
each original read back and checked, what it derives uploaded under fax_views/ and recorded, a
file that cannot be prepared recorded and the job failed for good after the others, the stored
original's own trouble and Storage's following the failure table; and the rendering libraries
imported on this job's path only."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from lib.failures import FailureCode
from lib.supabase.storage import Storage
from lib.worker import prepare_fax
from lib.worker.loop import run_invocation
from tests.support import prepare_files
from tests.unit.fake_supabase import KEY, URL, job_row

ROOT = Path(__file__).parents[2]
EMAIL_ROW = "0f3c2a44-5b1e-4c1d-8e3a-2d9b7c6a5e41"
BUCKET = "fax-attachments"


@pytest.fixture
def context(http, queue) -> prepare_fax.PrepareContext:
    return prepare_fax.PrepareContext(queue=queue, storage=lambda bucket: Storage(http, URL, KEY, bucket),
                                      max_bytes=10_000_000)  # fmt: skip


@pytest.fixture
def job(fake) -> dict[str, Any]:
    row = job_row(kind=prepare_fax.KIND, fax_received_email_id=EMAIL_ROW)
    fake.jobs = [row]
    return row


def original(fake, content: bytes, content_type: str, *, prepared: bool = False, sha256: str | None = None) -> str:
    """A stored attachment of the job's e-mail, its object served back by Storage: its row id."""
    row_id = str(uuid4())
    key = f"fax_received_emails/{EMAIL_ROW}/{row_id[:8]}.bin"
    fake.objects[key] = content
    fake.originals.append({"id": row_id, "content_type": content_type, "bucket": BUCKET, "storage_path": key,
                           "size_bytes": len(content), "sha256": sha256 or hashlib.sha256(content).hexdigest(),
                           "prepared": prepared})  # fmt: skip
    return row_id


def run(queue, context, clock):
    return run_invocation(queue, prepare_fax.KIND, lambda j, checkpoint: prepare_fax.run(j, context, checkpoint), clock)


def last_write(fake) -> tuple[str, dict[str, Any]]:
    return [(n, b) for n, b in fake.calls if n.startswith(("complete_", "fail_", "release_"))][-1]


def test_each_attachment_is_prepared_under_its_views_prefix_and_recorded(queue, fake, context, clock, job) -> None:
    tiff = original(fake, prepare_files.fax_tiff(pages=3), "image/tiff")
    pdf = original(fake, prepare_files.invoice_pdf(), "application/pdf")
    other = original(fake, b"GIF89a...", "application/octet-stream")

    summary = run(queue, context, clock)

    assert summary.completed == 1
    prefix = f"fax_views/{EMAIL_ROW}"
    assert {(v["attachment_id"], v["page_count"], v["view_path"], v["thumbnail_path"], v["error_code"])
            for v in fake.views} == {
        (tiff, 3, f"{prefix}/{tiff}/view.pdf", f"{prefix}/{tiff}/thumbnail.webp", None),
        (pdf, 1, None, f"{prefix}/{pdf}/thumbnail.webp", None),
        (other, None, None, None, None),
    }  # fmt: skip
    assert {v["source_sha256"] for v in fake.views} == {o["sha256"] for o in fake.originals}
    uploads = {body["key"]: body for name, body in fake.calls if name == "upload"}
    assert set(uploads) == {f"{prefix}/{tiff}/view.pdf", f"{prefix}/{tiff}/thumbnail.webp",
                            f"{prefix}/{pdf}/thumbnail.webp"}  # fmt: skip
    assert {uploads[key]["content_type"] for key in uploads} == {"application/pdf", "image/webp"}
    assert not set(uploads) & set(fake.objects), "nothing is ever written at an original's key"
    assert fake.uploads[f"{prefix}/{tiff}/view.pdf"].startswith(b"%PDF-")


def test_the_sender_is_read_and_recorded_first_for_the_announcement(queue, fake, context, clock, job) -> None:
    fake.email_headers = {"subject": "eFax from YAMADA SHOJI – 1 page(s), caller ID: 非通知",
                          "from": "eFax <message@efax.example.jp>"}  # fmt: skip
    original(fake, b"not a pdf", "application/pdf")

    run(queue, context, clock)

    assert fake.senders == [{"format": "efax", "name": "YAMADA SHOJI", "number": None, "number_display": None,
                             "number_source": None, "withheld_ja": "非通知", "withheld_en": "Withheld"}]  # fmt: skip
    writes = [n for n, _ in fake.calls if n.startswith("record_")]
    assert writes[0] == "record_fax_sender_v1", "recorded before any file, so a file that fails changes nothing"


def test_an_attachment_already_prepared_from_the_same_bytes_is_skipped(queue, fake, context, clock, job) -> None:
    original(fake, prepare_files.invoice_pdf(), "application/pdf", prepared=True)
    summary = run(queue, context, clock)
    assert summary.completed == 1
    assert fake.views == [] and [n for n, _ in fake.calls if n in ("download", "upload")] == []


def test_a_file_that_cannot_be_prepared_fails_the_job_for_good_after_the_others(queue, fake, context, clock,
                                                                                 job) -> None:  # fmt: skip
    good = original(fake, prepare_files.invoice_pdf(), "application/pdf")
    bad = original(fake, prepare_files.encrypted_pdf("secret"), "application/pdf")

    summary = run(queue, context, clock)

    assert (summary.completed, summary.failed) == (0, 1)
    views = {v["attachment_id"]: v for v in fake.views}
    assert views[good]["thumbnail_path"] and views[good]["error_code"] is None, "the others are prepared"
    assert (views[bad]["error_code"], views[bad]["view_path"], views[bad]["thumbnail_path"]) == (
        "fax_file_encrypted", None, None)  # fmt: skip
    name, body = last_write(fake)
    assert name.startswith("fail_document_job")
    assert (body["p_error_code"], body["p_retryable"]) == ("fax_file_encrypted", False)
    assert "1 prepared" in body["p_error_message"]


@pytest.mark.parametrize(
    ("stored", "code"),
    [("missing", FailureCode.ORIGINAL_MISSING), ("altered", FailureCode.ORIGINAL_ALTERED)],
)
def test_an_original_gone_or_changed_in_storage_fails_the_job_and_records_nothing(
    queue, fake, context, clock, job, stored, code
) -> None:
    content = prepare_files.invoice_pdf()
    if stored == "missing":
        original(fake, content, "application/pdf")
        fake.objects.clear()
    else:
        original(fake, content, "application/pdf", sha256=hashlib.sha256(b"what was stored").hexdigest())

    summary = run(queue, context, clock)

    assert summary.failed == 1 and fake.views == []
    _, body = last_write(fake)
    assert (body["p_error_code"], body["p_retryable"]) == (code.value, False)


@pytest.mark.parametrize(
    ("status", "body", "write", "code"),
    [
        (503, {"statusCode": "503", "code": "SlowDown", "error": "SlowDown", "message": "slow down"},
         "fail_document_job", "storage_unavailable"),
        (400, {"statusCode": "403", "code": "AccessDenied", "error": "Unauthorized", "message": "no"},
         "release_document_job", "storage_unauthorized"),
    ],
)  # fmt: skip
def test_storage_trouble_follows_the_failure_table(queue, fake, context, clock, job, status, body, write,
                                                   code) -> None:  # fmt: skip
    original(fake, prepare_files.invoice_pdf(), "application/pdf")
    fake.download_error = (status, body)
    run(queue, context, clock)
    name, sent = last_write(fake)
    assert name.startswith(write) and sent["p_error_code"] == code
    assert fake.views == []


def test_a_lease_lost_stops_the_job_at_its_next_write(queue, fake, context, clock, job) -> None:
    original(fake, prepare_files.invoice_pdf(), "application/pdf")
    original(fake, prepare_files.fax_tiff(pages=1), "image/tiff")
    fake.guarded = False  # every fenced call finds the job taken (its start included)
    summary = run(queue, context, clock)
    assert summary.lost == 1
    assert [n for n, _ in fake.calls if n in ("download", "upload", "record_fax_attachment_view_v2")] == []


def test_the_webhook_and_fetch_email_never_import_the_rendering_libraries() -> None:
    # Every function installs the one requirements.txt, but only the prepare_fax job's path may
    # import what renders: the webhook's and fetch_email's cold start do not grow.
    script = (
        "import json, sys\n"
        "import api.webhooks.resend, api.internal.document_jobs, api.admin\n"
        "from lib.worker import endpoint, fetch_email, kinds, prepare_fax, reconcile\n"
        "print(json.dumps(sorted(m for m in ('pypdfium2', 'PIL', 'img2pdf', 'pikepdf', 'lib.worker.fax_pages',"
        " 'lib.fax.senders')"
        " if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []
    assert "from lib.worker import fax_pages" in (ROOT / "lib/worker/prepare_fax.py").read_text()
    assert "from lib.fax.senders import" in (ROOT / "lib/worker/prepare_fax.py").read_text()


def test_the_rendering_libraries_are_pinned_and_never_pymupdf() -> None:
    pins = {
        line.split("==")[0].lower(): line.split("==")[1]
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    assert {name: pins.get(name) for name in ("pypdfium2", "pillow", "img2pdf", "pikepdf")} == {
        "pypdfium2": "5.15.2", "pillow": "13.0.0", "img2pdf": "0.6.3", "pikepdf": "10.18.0"}  # fmt: skip
    assert not {"pymupdf", "fitz"} & set(pins), "PyMuPDF is AGPL: never in a deployed bundle"
