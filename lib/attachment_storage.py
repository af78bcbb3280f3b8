"""Attachments in Supabase Storage: keys fixed in advance from ASCII ids only, and the upload.

Supabase Storage rejects keys outside `^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$` (a Japanese file name
gives 400 InvalidKey), so the original name lives only in the database. A key that depends only
on the e-mail row and the provider's attachment id makes a repeated upload overwrite, never
duplicate.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING
from uuid import UUID

import httpx

from lib.failures import JobFailure, from_storage_status

if TYPE_CHECKING:
    from supabase import Client

# Always used with fullmatch: with match, "$" also matches before a trailing newline, so
# "att_1\n" passed as safe and gave a key Storage refuses (InvalidKey, a permanent failure).
ALLOWED_KEY = re.compile(r"[A-Za-z0-9_/!.*'() &$=@;:+,?-]*")
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_SAFE_EXTENSION = re.compile(r"[a-z0-9]{1,8}")
_EXTENSIONS = {
    "application/pdf": "pdf",
    "image/tiff": "tif",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "text/plain": "txt",
}


def extension(filename: str | None, content_type: str | None) -> str:
    """From the content type when known, else from the file name's suffix when it is plain ASCII, else "bin"."""
    known = _EXTENSIONS.get((content_type or "").split(";")[0].strip().lower())
    if known:
        return known
    suffix = (filename or "").rsplit(".", 1)[-1].lower() if "." in (filename or "") else ""
    return suffix if _SAFE_EXTENSION.fullmatch(suffix) else "bin"


def attachment_key(email_row_id: UUID, attachment_id: str, filename: str | None, content_type: str | None) -> str:
    # The provider's id is input: use it only when it is a plain token, else a digest of it.
    if _SAFE_ID.fullmatch(attachment_id):
        safe_id = attachment_id
    else:
        # surrogatepass: an id with a lone surrogate (JSON allows "\ud800") still has a digest.
        safe_id = hashlib.sha256(attachment_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"fax_received_emails/{email_row_id}/{safe_id}.{extension(filename, content_type)}"


class AttachmentStorage:
    """Uploads to the private attachments bucket, with upsert: a repeated upload overwrites."""

    def __init__(self, client: Client, bucket: str) -> None:
        self._client = client
        self.bucket = bucket

    def upload(self, key: str, data: bytes, content_type: str) -> None:
        from storage3.exceptions import StorageApiError

        try:
            self._client.storage.from_(self.bucket).upload(
                key, data, {"content-type": content_type, "upsert": "true", "cache-control": "3600"}
            )
        except StorageApiError as error:
            # Storage puts the real status in the body ("statusCode"); storage3 passes it on as .status.
            status = int(error.status) if str(error.status).isdigit() else 500
            raise JobFailure(from_storage_status(status, str(error.code)), f"Storage {status} {error.code}") from error
        except httpx.HTTPError as error:
            raise JobFailure("storage_unavailable", f"Storage unreachable: {type(error).__name__}") from error
