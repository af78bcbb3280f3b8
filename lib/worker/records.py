"""The e-mail and attachment rows as the worker sees them: what start_fetch_email answers before a
job calls Resend, and the row of a stored attachment (written through the fenced RPCs in
lib/worker/queue.py)."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel, ConfigDict

from lib.worker.rate_limit import Slot


class ReceivedEmail(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    provider_email_id: str


class FetchStart(BaseModel):
    """start_fetch_email's answer: the job's e-mail (None when its row is gone), the provider ids
    of the attachments already stored, and the slot of the listing request (None without an e-mail)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    email: ReceivedEmail | None
    stored_attachment_ids: frozenset[str] = frozenset()
    resend: Slot | None = None


class StoredAttachment(BaseModel):
    """A row of fax_received_email_attachments (the e-mail is the job's)."""

    model_config = ConfigDict(frozen=True)

    provider_attachment_id: str
    filename: str | None
    content_type: str | None
    size_bytes: int
    sha256: str
    bucket: str
    storage_path: str
