"""The rows and answers of the database as the worker sees them: what start_fetch_email answers
before a job calls Resend (with the Resend limiter's slot), and the row of a stored attachment
(written through the fenced RPCs in lib/worker/queue.py), with its object's key and stored type.

Supabase Storage rejects keys outside `^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$` (a Japanese file name
gives 400 InvalidKey), so the original name lives only in the database. A key depends only on the
e-mail row, the provider's attachment id and the version: a repeated upload meets the object it
uploaded before (Storage refuses an existing key without upsert), and a version beside another
has a key of its own, never the other's. The e-mail's raw message has its own keys in its own
folder. The content type is the sender's choice: it is held to an allow-list of document types
before it is stored or served, and the key's extension follows it.
"""

from __future__ import annotations

import re
from datetime import datetime
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from lib.attachment_names import DOCUMENT_TYPES, GENERIC_EXTENSION, GENERIC_TYPE
from lib.originals import Recorded
from lib.storable import digest


class Slot(BaseModel):
    """A reservation's answer: the wait before the request may go (when `reserved`), or how long
    it would have been (when not), and the team's limit as the database knows it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    reserved: bool
    wait_ms: int = Field(ge=0)
    limit: int = Field(ge=1)


class ReceivedEmail(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    provider_email_id: str


class ObjectKey(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    bucket: str
    storage_path: str


class FetchStart(BaseModel):
    """start_fetch_email's answer: the job's e-mail (None when its row is gone), the provider ids
    of the attachments already stored (any version), whether its raw message is recorded, the keys
    given up as wrong (never to be stored at again), and the slot of the listing request (None
    without an e-mail)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    email: ReceivedEmail | None
    stored_attachment_ids: frozenset[str] = frozenset()
    raw_message_recorded: bool = False
    discarded_paths: frozenset[ObjectKey] = frozenset()
    resend: Slot | None = None


class ReconcileStart(BaseModel):
    """start_reconciliation_v2's answer: where the listing may stop (the watermark less the
    overlap), the cursor a previous job of the run stopped at, the bound of pages per job, and the
    database's clock (an item created more than a day after it cannot be read)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    stop_before: datetime
    cursor: str | None = None
    max_pages: int = Field(ge=1, le=100)
    now: datetime


class StoredVersion(BaseModel):
    """One stored object of an original (an attachment, or the raw message): a version of it."""

    model_config = ConfigDict(frozen=True)

    version: int = Field(ge=1)
    size_bytes: int = Field(ge=0)
    sha256: str
    bucket: str
    storage_path: str


class StoredAttachment(BaseModel):
    """The rows of fax_received_email_attachments of one attachment (the e-mail is the job's): one
    per version, most often one."""

    model_config = ConfigDict(frozen=True)

    provider_attachment_id: str
    filename: str | None
    content_type: str | None
    versions: tuple[StoredVersion, ...] = Field(min_length=1)


# Always used with fullmatch: with match, "$" also matches before a trailing newline, so
# "att_1\n" passed as safe and gave a key Storage refuses (InvalidKey, a permanent failure).
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")

# What a fax arrives as (lib/attachment_names.py, which the screen and the CLI name downloads by).
# Anything else is stored as application/octet-stream: Storage serves an object with the type it
# was given, and a sender-chosen text/html or image/svg+xml would be served as a page that runs
# its scripts.
_ALIASES = {
    "application/x-pdf": "application/pdf",
    "image/x-tiff": "image/tiff",
    "image/tif": "image/tiff",
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "image/x-png": "image/png",
}
# Many mail clients send faxes as application/octet-stream; then the name's suffix may tell.
_SUFFIXES = {
    "pdf": "application/pdf",
    "tif": "image/tiff",
    "tiff": "image/tiff",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
}


def stored_content_type(declared: str | None, filename: str | None) -> str:
    """The content type an attachment is stored and served with: one of DOCUMENT_TYPES, else
    application/octet-stream. Parameters are dropped and nothing of the declared text is passed
    on, so no control character (a CR/LF in a header) can reach the upload."""
    base = (declared or "").split(";", 1)[0].strip().lower()
    base = _ALIASES.get(base, base)
    if base in DOCUMENT_TYPES:
        return base
    if base in ("", GENERIC_TYPE) and filename and "." in filename:
        return _SUFFIXES.get(filename.rsplit(".", 1)[1].lower(), GENERIC_TYPE)
    return GENERIC_TYPE


# Where every original of an e-mail lives: its attachments, and its raw message in RAW_FOLDER.
ORIGINALS_PREFIX = "fax_received_emails"
RAW_FOLDER = "raw"
RAW_MESSAGE_TYPE = "message/rfc822"


def _versioned(stem: str, extension: str, version: int) -> str:
    # Version 1 is the plain name; another sits beside it. A stem never holds a dot (a safe id, or
    # "message"), so no version's key is another original's.
    return f"{stem}.{extension}" if version == 1 else f"{stem}.v{version}.{extension}"


def attachment_key(email_row_id: UUID, attachment_id: str, content_type: str, version: int = 1) -> str:
    """The key of an attachment's version; its extension follows `content_type` (a stored_content_type)."""
    # The provider's id is input: use it only when it is a plain token, else a digest of it (one
    # for an id with a lone surrogate too: lib/storable.py).
    safe_id = attachment_id if _SAFE_ID.fullmatch(attachment_id) else digest(attachment_id)
    name = _versioned(safe_id, DOCUMENT_TYPES.get(content_type, GENERIC_EXTENSION), version)
    return f"{ORIGINALS_PREFIX}/{email_row_id}/{name}"


def raw_message_key(email_row_id: UUID, version: int = 1) -> str:
    """The key of a version of the e-mail's raw message (the .eml Resend received)."""
    return f"{ORIGINALS_PREFIX}/{email_row_id}/{RAW_FOLDER}/{_versioned('message', 'eml', version)}"


class StoredOriginal(BaseModel):
    """A stored attachment as start_prepare_fax_v3 answers it: where its original is, what it is,
    and whether a view of these very bytes was already recorded without an error."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: UUID
    content_type: str | None
    bucket: str
    storage_path: str
    size_bytes: int = Field(ge=0)
    sha256: str
    prepared: bool = False


class PreparedEmail(BaseModel):
    """The prepare_fax job's e-mail: its row, and what the sender's parser reads (as recorded)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    id: UUID
    subject: str | None = None
    from_: str | None = Field(default=None, alias="from")


class PrepareStart(BaseModel):
    """start_prepare_fax_v3's answer: the job's e-mail (None when its row is gone) and its stored
    attachments, in the order they were stored."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    email: PreparedEmail | None
    attachments: list[StoredOriginal] = Field(default_factory=list)


class FaxView(BaseModel):
    """A row of fax_attachment_views: what the prepare_fax job derived from one attachment, or
    why it could not (error_code, with nothing derived)."""

    model_config = ConfigDict(frozen=True)

    attachment_id: UUID
    source_sha256: str
    page_count: int | None = None
    view_path: str | None = None
    thumbnail_path: str | None = None
    error_code: str | None = None
    error_message: str | None = None


# Derived files (lib/worker/prepare_fax.py) live under a prefix of their own, beside the originals'
# fax_received_emails/: never at an original's key (record_fax_attachment_view_v2 refuses any other).
VIEWS_PREFIX = "fax_views"


def view_key(email_row_id: UUID, attachment_row_id: UUID, name: str) -> str:
    """The key of a file derived from an attachment: `name` is one of lib/worker/fax_pages.py's."""
    return f"{VIEWS_PREFIX}/{email_row_id}/{attachment_row_id}/{name}"


class VerifyStart(BaseModel):
    """start_verify_originals_v2's answer: the job's run and the originals of it not read yet."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    run_id: int
    total: int
    items: list[Recorded]
