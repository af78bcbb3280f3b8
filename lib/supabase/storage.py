"""Attachments in Supabase Storage: keys fixed in advance from ASCII ids only, and the upload.

Supabase Storage rejects keys outside `^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$` (a Japanese file name
gives 400 InvalidKey), so the original name lives only in the database. A key that depends only
on the e-mail row and the provider's attachment id makes a repeated upload overwrite, never
duplicate. The content type is the sender's choice: it is held to an allow-list of document
types before it is stored or served, and the key's extension follows it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from urllib.parse import quote
from uuid import UUID

import httpx

from lib.budget import Deadline, DeadlinePassed
from lib.failures import FAILURES, FailureCode, JobFailure, from_storage_error
from lib.supabase.client import TIMEOUT, api_headers

UPLOAD_CHUNK_BYTES = 64 * 1024

# Always used with fullmatch: with match, "$" also matches before a trailing newline, so
# "att_1\n" passed as safe and gave a key Storage refuses (InvalidKey, a permanent failure).
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")

# What a fax arrives as. Anything else is stored as application/octet-stream: Storage serves an
# object with the type it was given, and a sender-chosen text/html or image/svg+xml would be
# served as a page that runs its scripts.
DOCUMENT_TYPES = {
    "application/pdf": "pdf",
    "image/tiff": "tif",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
}
GENERIC_TYPE = "application/octet-stream"
GENERIC_EXTENSION = "bin"
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


def attachment_key(email_row_id: UUID, attachment_id: str, content_type: str) -> str:
    """The object's key; its extension follows `content_type` (a stored_content_type)."""
    # The provider's id is input: use it only when it is a plain token, else a digest of it.
    if _SAFE_ID.fullmatch(attachment_id):
        safe_id = attachment_id
    else:
        # surrogatepass: an id with a lone surrogate (JSON allows "\ud800") still has a digest.
        safe_id = hashlib.sha256(attachment_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"fax_received_emails/{email_row_id}/{safe_id}.{DOCUMENT_TYPES.get(content_type, GENERIC_EXTENSION)}"


class AttachmentStorage:
    """Uploads to the private attachments bucket with upsert: a repeated upload overwrites.

    The object goes as a raw body (Storage's POST /object/{bucket}/{key} takes one, as
    supabase-js sends it), not as storage3's form: the body is streamed in chunks under the
    invocation's deadline, and there is no part header that a sender's text could reach.
    """

    def __init__(self, http: httpx.Client, supabase_url: str, server_key: str, bucket: str) -> None:
        self._http = http
        self._objects = f"{supabase_url.rstrip('/')}/storage/v1/object/{quote(bucket, safe='')}"
        self._headers = api_headers(server_key)
        self.bucket = bucket

    def upload(self, key: str, data: bytes, content_type: str, deadline: Deadline | None = None) -> None:
        deadline = deadline or Deadline(float("inf"))  # the configured timeouts alone
        deadline.check("upload")
        headers = {
            **self._headers,
            "Content-Type": content_type,
            "Content-Length": str(len(data)),  # stated, so that the body is not sent chunked
            "Cache-Control": "max-age=3600",
            "x-upsert": "true",
        }
        try:
            response = self._http.post(
                f"{self._objects}/{quote(key, safe='/')}",
                content=_chunks(data, deadline),
                headers=headers,
                timeout=deadline.timeout(TIMEOUT.read or 20.0, connect=TIMEOUT.connect or 5.0),
            )
        except httpx.TimeoutException as error:
            if deadline.remaining() <= 0:
                raise DeadlinePassed("upload: the invocation's time budget ran out") from error
            raise JobFailure(FailureCode.STORAGE_UNAVAILABLE, f"Storage timed out: {type(error).__name__}") from error
        except httpx.HTTPError as error:
            raise JobFailure(FailureCode.STORAGE_UNAVAILABLE, f"Storage unreachable: {type(error).__name__}") from error
        if not response.is_success:
            status, code, name = _storage_error(response)
            failure = from_storage_error(status, code, name)
            check = FAILURES[failure].check
            named = " ".join(part for part in (code, name) if part)
            raise JobFailure(failure, f"Storage {status} {named}" + (f" (check {check})" if check else ""))


def _chunks(data: bytes, deadline: Deadline) -> Iterator[bytes]:
    # A slow reader on the other end blocks each send for at most one (capped) write timeout;
    # between sends, the deadline is checked.
    for start in range(0, len(data), UPLOAD_CHUNK_BYTES):
        deadline.check("upload")
        yield data[start : start + UPLOAD_CHUNK_BYTES]


def _storage_error(response: httpx.Response) -> tuple[int, str | None, str | None]:
    """The real status, the error code and the error's name: Storage answers most errors with HTTP
    400 and puts the status in the body ({"statusCode": "409", "code": "KeyAlreadyExists", "error":
    "Duplicate", ...}), as storage3 reads it; the API gateway in front answers {"message": ...}."""
    try:
        body = response.json()
    except ValueError:
        return response.status_code, None, None
    if not isinstance(body, dict):
        return response.status_code, None, None
    status = str(body.get("statusCode", ""))

    def text(field: str) -> str | None:  # the server's text, as one short printable line
        value = body.get(field)
        if not isinstance(value, str):
            return None
        return "".join(c for c in value if c.isprintable())[:100] or None

    return (
        int(status) if status.isascii() and status.isdigit() else response.status_code,
        text("code"),
        text("error") or text("message"),
    )
