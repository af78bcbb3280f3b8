"""A stored original read back and compared with what was recorded when it was stored: the
verification of document-jobs-admin verify and of the weekly verify_originals job.

Storage has no object lock: an object can be replaced or deleted behind the product's back (a
stale upsert, the dashboard, the API with the secret key). Reading it back is how that is found.
The bytes are streamed and hashed, never kept, and the read stops one chunk past the recorded
size: a replaced object that grew is a size mismatch without being read whole. The database
judges again by what was read (document_jobs_internal.record_original_checks); `compare` is the
same rule, for what the CLI prints.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from lib.budget import Deadline
from lib.supabase.storage import UPLOAD_CHUNK_BYTES, Storage, StorageError


class Outcome(StrEnum):
    MATCHES = "matches"
    MISSING = "missing"
    SIZE_DIFFERS = "size_differs"
    SHA256_DIFFERS = "sha256_differs"


class Recorded(BaseModel):
    """An original as its row records it (start_verify_originals_v2's and
    original_verification_items' items)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    fax_received_email_id: UUID
    filename: str | None = None  # the sender's: printed only as inert text
    bucket: str
    storage_path: str
    size_bytes: int = Field(ge=0)
    sha256: str

    @property
    def fax(self) -> str:
        """The fax's short id: the first 8 characters of its e-mail row's id, as the screen and
        the CLI's commands take it."""
        return str(self.fax_received_email_id)[:8]


class Read(BaseModel):
    """What reading an original back found: not found (404), or its size and SHA-256 (size None
    and no digest when it ran past the recorded size)."""

    model_config = ConfigDict(frozen=True)

    attachment_id: UUID
    found: bool
    size_bytes: int | None = None
    sha256: str | None = None


def compare(recorded: Recorded, read: Read) -> Outcome:
    if not read.found:
        return Outcome.MISSING
    if read.size_bytes != recorded.size_bytes:
        return Outcome.SIZE_DIFFERS
    if read.sha256 != recorded.sha256:
        return Outcome.SHA256_DIFFERS
    return Outcome.MATCHES


class _Digest:
    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def write(self, chunk: bytes) -> int:
        self.hash.update(chunk)
        return len(chunk)


def read_back(storage: Storage, recorded: Recorded, deadline: Deadline) -> Read:
    """The original streamed from Storage and hashed. StorageError for anything but a 404 (Storage
    down, a key refused): that is no finding about the object."""
    digest = _Digest()
    try:
        size = storage.download_to(recorded.storage_path, digest, deadline, recorded.size_bytes + UPLOAD_CHUNK_BYTES)
    except StorageError as error:
        if error.status == 404:
            return Read(attachment_id=recorded.id, found=False)
        if error.status == 413:  # past the recorded size: replaced by something larger
            return Read(attachment_id=recorded.id, found=True)
        raise
    return Read(attachment_id=recorded.id, found=True, size_bytes=size, sha256=digest.hash.hexdigest())
