"""The e-mail and attachment rows, read through PostgREST's table routes with the service-role client.
(Writes go through the fenced RPC in lib/queue.py.) A failed read raises DatabaseError (lib/database.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from lib.database import execute
from lib.failures import FailureCode, JobFailure

if TYPE_CHECKING:
    from supabase import Client


class ReceivedEmail(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    provider_email_id: str


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


class FaxRecords:
    def __init__(self, client: Client) -> None:
        self._client = client

    def email(self, email_row_id: UUID) -> ReceivedEmail:
        rows = execute(
            "read e-mail",
            self._client.table("fax_received_emails").select("id,provider_email_id").eq("id", str(email_row_id)),
        )
        if not rows:
            raise JobFailure(FailureCode.EMAIL_NOT_FOUND, f"fax_received_emails {email_row_id} does not exist")
        return ReceivedEmail.model_validate(rows[0])

    def stored_attachment_ids(self, email_row_id: UUID) -> set[str]:
        rows = execute(
            "read attachments",
            self._client.table("fax_received_email_attachments")
            .select("provider_attachment_id")
            .eq("fax_received_email_id", str(email_row_id)),
        )
        return {row["provider_attachment_id"] for row in rows}
