"""An e-mail and its job, as the webhook records them, and what the worker adds to them."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import httpx
import psycopg

from tests.support.operators import admin_api


def receive_email(
    db: psycopg.Connection, provider_email_id: str | None = None, data: dict[str, Any] | None = None,
    webhook_id: str = "msg_1",
) -> dict:  # fmt: skip
    """What the webhook does: record_inbound_email, which stores the e-mail and enqueues its
    fetch_email job. Its answer: fax_received_email_id, job_id, duplicate."""
    provider_email_id = provider_email_id or f"em_{uuid.uuid4().hex[:8]}"
    return db.execute(
        "select * from record_inbound_email(%s, %s, %s)", (provider_email_id, webhook_id, json.dumps(data or {}))
    ).fetchone()


def claim(db: psycopg.Connection) -> dict:
    """The one claimable job, claimed: what a worker holds."""
    [job] = db.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    return job


def claimed_job(
    db: psycopg.Connection, provider_email_id: str | None = None, data: dict[str, Any] | None = None
) -> dict:
    """A new e-mail's job, claimed."""
    receive_email(db, provider_email_id, data)
    return claim(db)


def add_attachment(db: psycopg.Connection, email_row_id: str, attachment_id: str = "att_1",
                   filename: str = "請求書.pdf", size_bytes: int = 618, sha256: str = "a" * 64) -> str:  # fmt: skip
    """An attachment row, as the worker records it once the object is stored: its id."""
    row = db.execute(
        """insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
                  content_type, size_bytes, sha256, bucket, storage_path)
           values (%s, %s, %s, 'application/pdf', %s, %s, 'fax-attachments', %s) returning id""",
        (email_row_id, attachment_id, filename, size_bytes, sha256, storage_path(email_row_id, attachment_id)),
    ).fetchone()
    assert row is not None
    return str(row["id"])


def storage_path(email_row_id: str, attachment_id: str) -> str:
    return f"fax_received_emails/{email_row_id}/{attachment_id}.pdf"


def stored_attachment(db: psycopg.Connection, env: dict[str, str], email_row_id: str, attachment_id: str = "att_1",
                      filename: str = "請求書.pdf", content: bytes = b"%PDF-1.4 a fax") -> str:  # fmt: skip
    """An attachment stored in the stack's Storage (a PDF) and recorded as the worker records it: its id."""
    path = storage_path(email_row_id, attachment_id)
    headers = {**admin_api(env), "Content-Type": "application/pdf", "x-upsert": "true"}
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", content=content,
                        headers=headers, timeout=10)  # fmt: skip
    assert answer.status_code == 200, answer.text
    return add_attachment(db, email_row_id, attachment_id, filename, len(content), hashlib.sha256(content).hexdigest())


def email_with_job(db: psycopg.Connection, filename: str = "請求書.pdf") -> tuple[str, str]:
    """An e-mail with one stored attachment and its job: (job id, e-mail id)."""
    email = receive_email(db, "em_admin", {"from": "fax@example.jp", "subject": "請求書"})
    add_attachment(db, email["fax_received_email_id"], filename=filename)
    return str(email["job_id"]), str(email["fax_received_email_id"])


def failed_email(db: psycopg.Connection, subject: str, code: str = "resend_not_found",
                 sender: str = "fax@example.jp") -> tuple[str, str]:  # fmt: skip
    """A failed fetch_email job of a new e-mail from `sender`: (job id, e-mail id)."""
    row = receive_email(db, data={"from": sender, "subject": subject})
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now(), last_error_code = %s"
               " where id = %s", (code, row["job_id"]))  # fmt: skip
    return str(row["job_id"]), str(row["fax_received_email_id"])


def stored_job(db: psycopg.Connection, env: dict[str, str], content: bytes, filename: str = "請求書.pdf",
               provider_email_id: str = "em_admin") -> tuple[str, str]:  # fmt: skip
    """A job whose e-mail has one attachment stored in the stack's Storage: (job id, storage path)."""
    email = receive_email(db, provider_email_id, {"from": "fax@example.jp", "subject": "請求書"})
    email_id = str(email["fax_received_email_id"])
    stored_attachment(db, env, email_id, filename=filename, content=content)
    return str(email["job_id"]), storage_path(email_id, "att_1")
