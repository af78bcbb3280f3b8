"""The prepare_fax job: a stored fax made ready for the screen, one job per e-mail.

For each stored attachment of the e-mail (rows of fax_received_email_attachments), the original
is read back from Storage with the server key, streamed into a temporary file and hashed on the
way; lib/worker/fax_pages.py counts its pages, converts a TIFF (or an image whose resolutions differ)
into a viewing PDF and draws a thumbnail of page 1; the derived files are uploaded under
fax_views/{e-mail row}/{attachment row}/ (lib/worker/records.py view_key: never an original's
key; upserts, since a derived file may be derived again) and what was found is recorded in
fax_attachment_views through record_fax_attachment_view_v2, fenced like every write of the job,
which renews the lease. An attachment already prepared from the same bytes is skipped, so a job
run again (a time-budget release, a retry) goes on where it stopped.

A file that cannot be prepared (damaged, encrypted, without pages, a page over the pixel cap) is
recorded with its code and nothing derived, the others are prepared all the same, and then the
job fails for good with the first such code: retrying changes nothing, and the fax stays listed
with its original downloadable. An original that Storage no longer has, or whose bytes are not
the recorded ones, fails the job too (original_missing, original_altered): a received record
that changed is an operator's matter. Storage and the database failing follow the failure table
like fetch_email's (retried, or released when a key or a setting is wrong).

The rendering libraries are imported in `run`, on this job's path only: the webhook never loads
this module's libraries, and a worker instance pays for them only once it prepares a fax.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from uuid import UUID

from lib import log
from lib.budget import Checkpoint
from lib.failures import FailureCode, JobFailure
from lib.supabase.storage import UPLOAD_CHUNK_BYTES, Storage, StorageError
from lib.worker.fetch_email import storage_failure
from lib.worker.queue import Job, Queue
from lib.worker.records import FaxView, StoredOriginal, view_key

# The kind the fetch_email completion's trigger enqueues (supabase/migrations; lib/worker/kinds.py).
KIND = "prepare_fax"

# The codes of a file that cannot be prepared: recorded on its view, and the job's failure.
FILE_CODES = frozenset(
    {
        FailureCode.FAX_FILE_DAMAGED,
        FailureCode.FAX_FILE_ENCRYPTED,
        FailureCode.FAX_FILE_EMPTY,
        FailureCode.FAX_PAGE_TOO_LARGE,
    }
)


@dataclass(frozen=True)
class PrepareContext:
    queue: Queue
    storage: Callable[[str], Storage]  # the Storage of a bucket (an attachment's row names its bucket)
    max_bytes: int  # the largest original it reads back: the largest fetch_email stores


def run(job: Job, ctx: PrepareContext, checkpoint: Checkpoint) -> int:
    """Prepares every stored attachment of the job's e-mail not yet prepared from the same bytes;
    returns how many it prepared. `checkpoint` is called before each attachment and between
    pages (the time budget; the lease, LeaseLost once the job is no longer ours)."""
    if job.fax_received_email_id is None:
        raise JobFailure(FailureCode.EMAIL_NOT_FOUND, f"job {job.id} names no e-mail")
    start = ctx.queue.start_prepare_fax(job)
    if start.email is None:
        raise JobFailure(FailureCode.EMAIL_NOT_FOUND, f"fax_received_emails {job.fax_received_email_id} does not exist")
    email_id = start.email.id
    ctx.queue.record_fax_sender(job, sender_record(start.email.subject, start.email.from_))
    prepared = 0
    unprepared: list[JobFailure] = []
    for attachment in start.attachments:
        checkpoint()
        if attachment.prepared:
            continue
        with tempfile.TemporaryDirectory(prefix="prepare-fax-") as folder:
            view = _prepare(ctx, job, email_id, attachment, Path(folder), checkpoint)
        ctx.queue.record_fax_view(job, view)
        if view.error_code is None:
            prepared += 1
        else:
            said = f"attachment {attachment.id}: {view.error_message}"
            unprepared.append(JobFailure(FailureCode(view.error_code), said))
    if unprepared:
        first = unprepared[0]
        others = f"; {len(unprepared) - 1} more could not be prepared" if len(unprepared) > 1 else ""
        raise JobFailure(first.code, f"{first.message}{others}; {prepared} prepared")
    return prepared


def sender_record(subject: str | None, from_header: str | None) -> dict[str, str | None]:
    """Who sent the fax, as lib/fax/senders.py reads the subject and From (the inbox's reading):
    recorded for the announcement of the fax, which the database composes and cannot parse."""
    from lib.fax.senders import WITHHELD_LABELS, parse_sender

    sender = parse_sender(subject, from_header)
    withheld = WITHHELD_LABELS[sender.withheld] if sender.withheld else None
    return {
        "format": sender.format,
        "name": sender.name,
        "number": sender.number,
        "number_display": sender.number_display,
        "number_source": sender.number_source,
        "withheld_ja": withheld["ja"] if withheld else None,
        "withheld_en": withheld["en"] if withheld else None,
    }


def _prepare(
    ctx: PrepareContext,
    job: Job,
    email_id: UUID,
    attachment: StoredOriginal,
    folder: Path,
    checkpoint: Checkpoint,
) -> FaxView:
    """One attachment: its original read back, its view derived and uploaded; the row to record."""
    from lib.worker import fax_pages  # pypdfium2, Pillow, img2pdf: this job's path only

    storage = ctx.storage(attachment.bucket)
    original = folder / "original"
    _read_original(storage, attachment, original, checkpoint, ctx.max_bytes)
    derived = folder / "derived"
    derived.mkdir()
    try:
        result = fax_pages.prepare(original, attachment.content_type, derived, checkpoint)
    except JobFailure as failure:
        if failure.code not in FILE_CODES:
            raise
        log.event("fax_not_prepared", logging.WARNING, job_id=job.id, email_row_id=email_id,
                  attachment_row_id=attachment.id, error_code=failure.code, error=failure.message)  # fmt: skip
        return FaxView(
            attachment_id=attachment.id,
            source_sha256=attachment.sha256,
            error_code=failure.code.value,
            error_message=failure.message,
        )
    view_path = _upload(storage, email_id, attachment.id, result.view, checkpoint)
    thumbnail_path = _upload(storage, email_id, attachment.id, result.thumbnail, checkpoint)
    return FaxView(
        attachment_id=attachment.id,
        source_sha256=attachment.sha256,
        page_count=result.page_count,
        view_path=view_path,
        thumbnail_path=thumbnail_path,
    )


def _read_original(storage: Storage, attachment: StoredOriginal, path: Path, checkpoint: Checkpoint,
                   max_bytes: int) -> None:  # fmt: skip
    """The original, streamed from Storage into `path`, checked against its recorded digest."""
    digest = hashlib.sha256()
    with open(path, "wb") as file:
        try:
            storage.download_to(attachment.storage_path, _Hashing(file, digest), checkpoint.deadline, max_bytes)
        except StorageError as error:
            if error.status == 404:
                raise JobFailure(
                    FailureCode.ORIGINAL_MISSING,
                    f"attachment {attachment.id}: {attachment.bucket}/{attachment.storage_path} is not in Storage",
                ) from error
            raise storage_failure(error) from error
    if digest.hexdigest() != attachment.sha256:
        log.event("original_altered", logging.ERROR, attachment_row_id=attachment.id, bucket=attachment.bucket,
                  storage_path=attachment.storage_path, recorded=attachment.sha256,
                  read=digest.hexdigest())  # fmt: skip
        raise JobFailure(
            FailureCode.ORIGINAL_ALTERED,
            f"attachment {attachment.id}: the stored object's SHA-256 is not the one recorded when it was stored",
        )


class _Hashing:
    """A file that hashes what is written to it."""

    def __init__(self, file: BinaryIO, digest: hashlib._Hash) -> None:
        self._file, self._digest = file, digest

    def write(self, chunk: bytes) -> int:
        self._digest.update(chunk)
        return self._file.write(chunk)


def _upload(storage: Storage, email_id: UUID, attachment_id: UUID, file: Path | None,
            checkpoint: Checkpoint) -> str | None:  # fmt: skip
    """A derived file uploaded under the attachment's views prefix (an upsert); its key."""
    if file is None:
        return None
    from lib.worker import fax_pages

    checkpoint()
    key = view_key(email_id, attachment_id, file.name)
    content_type = fax_pages.VIEW_TYPE if file.name == fax_pages.VIEW_NAME else fax_pages.THUMBNAIL_TYPE
    try:
        # An upsert: a derived file may be derived again, and its key is never an original's (view_key).
        storage.upload(key, _chunks(file), content_type, checkpoint.deadline, length=file.stat().st_size, upsert=True)
    except StorageError as error:
        raise storage_failure(error) from error
    return key


def _chunks(file: Path) -> Iterator[bytes]:
    with open(file, "rb") as handle:
        while chunk := handle.read(UPLOAD_CHUNK_BYTES):
            yield chunk
