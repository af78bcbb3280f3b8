"""The export_faxes job: an admin's export from the screen, built in Storage in parts.

An admin asks for the originals filed in a date range (admin_request_fax_export: the CLI's
--from/--to); this job writes them under the export's own prefix exports/<export id>/ of the
attachments' bucket, named and listed as `document-jobs-admin export` names and lists them
(lib/fax/export_files.py): zip parts of at most PART_BYTES of originals each (one original larger
than that is a part of its own), then index.csv and SHA256SUMS for all of them, so that the parts
unzipped into one folder check with `sha256sum -c SHA256SUMS`.

A part is built in one invocation: its originals are streamed from Storage into a zip in a
temporary file (never whole in memory), each one's size and SHA-256 checked against its row as it
is read (a difference fails the job: export_original_mismatch, and the export stops there), the
zip is uploaded and then recorded with its files (record_fax_export_part_v1, fenced by the job's
generation). A job released for its time budget, or retried, starts after the last recorded part;
a part uploaded but not recorded is built again and stored over it (the key is the export's own,
never an original's). The screen signs each stored object's URL when an admin asks for it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from lib.budget import Checkpoint
from lib.failures import FailureCode, JobFailure
from lib.fax.export_files import (
    CSV_ENCODING,
    CSV_HEADER,
    INDEX_CSV,
    SHA256SUMS,
    Document,
    csv_row,
    export_name,
    numbered,
    sha256sums_line,
)
from lib.supabase.storage import UPLOAD_CHUNK_BYTES, Storage, StorageError
from lib.worker.fetch_email import storage_failure
from lib.worker.queue import Job, Queue

# The kind admin_request_fax_export enqueues (supabase/migrations; lib/worker/kinds.py).
KIND = "export_faxes"
# A part's originals, at most (one larger original is a part of its own): well under Storage's
# standard upload limit (50 MB on the Free plan) and a part's download and upload within one
# invocation.
PART_BYTES = 40 * 1024 * 1024
PART_FILES = 500  # originals a part holds at most: its record call's size
SCAN = 500  # rows of the record export_documents reads a call
FILES_PAGE = 1000  # fax_export_files_v1's rows a call, for index.csv and SHA256SUMS


def prefix(export_id: str) -> str:
    return f"exports/{export_id}"


def part_key(export_id: str, part: int) -> str:
    return f"{prefix(export_id)}/part-{part:04d}.zip"


@dataclass(frozen=True)
class ExportContext:
    queue: Queue
    storage: Callable[[str], Storage]  # the Storage of a bucket (a document's row names its bucket)
    bucket: str  # where a new export is stored (the attachments' bucket)


class _Tee:
    """A Storage download sink: each chunk into the zip entry and the digest, nothing kept."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file, self.digest, self.size = file, hashlib.sha256(), 0

    def write(self, chunk: bytes, /) -> int:
        self.file.write(chunk)
        self.digest.update(chunk)
        self.size += len(chunk)
        return len(chunk)


def run(job: Job, ctx: ExportContext, checkpoint: Checkpoint) -> int:
    """Stores the parts not recorded yet, then index.csv and SHA256SUMS; returns how many parts
    this run stored."""
    start = ctx.queue.start_export_faxes(job, ctx.bucket)
    if start["finished"]:
        return 0
    export_id = str(start["export_id"])
    window = {"p_from": start["date_from"], "p_to": start["date_to"], "p_stored_before": start["stored_before"]}
    after: dict[str, Any] | None = start["after"]
    target = ctx.storage(str(start["bucket"]))
    part, stored = int(start["parts"]), 0
    while True:
        # No bound of its own on the time a part takes: the checkpoint before each original and the
        # deadline of each call stop it as they stop the other kinds (released, and a follow-up
        # invocation started); a part cut short was never recorded, and is built again.
        checkpoint()
        documents = _next_part(ctx, window, after)
        if not documents:
            break
        part += 1
        _store_part(ctx, job, checkpoint, target, part_key(export_id, part), part, documents)
        after = {"at": documents[-1].stored_at, "id": documents[-1].id}
        stored += 1
    checkpoint()
    _store_index(ctx, job, target, export_id, checkpoint)
    return stored


def _next_part(ctx: ExportContext, window: dict[str, Any], after: dict[str, Any] | None) -> list[Document]:
    """The originals of the next part: from the one after `after`, in the record's order, while
    they add up to at most PART_BYTES (at least one) and PART_FILES."""
    documents: list[Document] = []
    size = 0
    while True:
        page = ctx.queue.export_documents(
            {
                **window,
                "p_after_at": after["at"] if after else None,
                "p_after_id": after["id"] if after else None,
                "p_scan": SCAN,
            }
        )
        for item in page["rows"]:
            document = Document.model_validate(item)
            if documents and (size + document.size_bytes > PART_BYTES or len(documents) >= PART_FILES):
                return documents
            documents.append(document)
            size += document.size_bytes
        if page["next"] is None:
            return documents
        after = page["next"]


def _names(ctx: ExportContext, job: Job, documents: list[Document]) -> list[str]:
    """Each original's name in the export (lib/fax/export_files.py export_name), with " (2)" for a
    name this part or an earlier one took already, as the file system sees names: without case."""
    bases = [export_name(document) for document in documents]
    taken: set[str] = set()
    while True:
        used: set[str] = set()
        names = []
        for base in bases:
            name, number = base, 1
            while name in taken or name.lower() in used:
                number += 1
                name = numbered(base, number)
            used.add(name.lower())
            names.append(name)
        found = set(ctx.queue.fax_export_names_taken(job, names))
        if not found:
            return names
        taken |= found


def _store_part(
    ctx: ExportContext,
    job: Job,
    checkpoint: Checkpoint,
    target: Storage,
    key: str,
    part: int,
    documents: list[Document],
) -> None:
    """One part: its originals streamed and checked into a zip in a temporary file, the zip
    uploaded at `key` (over a part stored before and never recorded), then recorded with its
    files, fenced."""
    names = _names(ctx, job, documents)
    files: list[dict[str, Any]] = []
    with tempfile.TemporaryFile() as archive:
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED, allowZip64=True) as zipped:
            for document, name in zip(documents, names, strict=True):
                checkpoint()
                files.append(_add(ctx, zipped, document, name, checkpoint))
        size = archive.tell()
        digest = _upload(target, key, archive, size, "application/zip", checkpoint)
    last = documents[-1]
    ctx.queue.record_fax_export_part(job, part, key, size, digest, last.stored_at, last.id, files)


def _add(
    ctx: ExportContext, zipped: zipfile.ZipFile, document: Document, name: str, checkpoint: Checkpoint
) -> dict[str, Any]:
    """One original streamed from Storage into the zip under `name`, its bytes checked against
    its row as they are read: export_original_mismatch when they are not the recorded ones."""
    stored = datetime.fromisoformat(document.stored_at)
    entry = zipfile.ZipInfo(name, date_time=stored.timetuple()[:6])
    entry.compress_type = zipfile.ZIP_STORED  # PDF and TIFF faxes are compressed already
    what = f"{document.kind} {document.id} (fax {document.fax}, {document.bucket}/{document.storage_path})"
    try:
        with zipped.open(entry, "w", force_zip64=document.size_bytes >= zipfile.ZIP64_LIMIT) as file:
            tee = _Tee(file)
            ctx.storage(document.bucket).download_to(
                document.storage_path, tee, checkpoint.deadline, document.size_bytes + UPLOAD_CHUNK_BYTES
            )
    except StorageError as error:
        if error.status == 404:
            raise JobFailure(FailureCode.EXPORT_ORIGINAL_MISMATCH, f"{what}: missing from Storage") from error
        if error.status == 413:
            raise JobFailure(FailureCode.EXPORT_ORIGINAL_MISMATCH, f"{what}: larger than recorded") from error
        raise storage_failure(error) from error
    found = tee.digest.hexdigest()
    if tee.size != document.size_bytes or found != document.sha256:
        raise JobFailure(
            FailureCode.EXPORT_ORIGINAL_MISMATCH,
            f"{what}: read {tee.size} bytes, SHA-256 {found}; recorded {document.size_bytes} bytes, "
            f"SHA-256 {document.sha256}",
        )
    return {
        "name": name,
        "document_id": document.id,
        "size_bytes": tee.size,
        "sha256": found,
        "csv_row": csv_row(document, name),
    }


def _upload(target: Storage, key: str, file: IO[bytes], size: int, content_type: str, checkpoint: Checkpoint) -> str:
    """`file` (its first `size` bytes) uploaded at `key`, replacing what an earlier run stored
    there; its SHA-256, computed as it is sent."""
    digest = hashlib.sha256()

    def chunks() -> Iterator[bytes]:
        file.seek(0)
        while chunk := file.read(UPLOAD_CHUNK_BYTES):
            digest.update(chunk)
            yield chunk

    try:
        target.upload(key, chunks(), content_type, checkpoint.deadline, size, upsert=True)
    except StorageError as error:
        raise storage_failure(error) from error
    return digest.hexdigest()


def _store_index(ctx: ExportContext, job: Job, target: Storage, export_id: str, checkpoint: Checkpoint) -> None:
    """index.csv and SHA256SUMS from the recorded files of every part, in the export's order:
    written as the CLI writes them (UTF-8 with BOM and CRLF; the index's own digest last)."""
    with tempfile.TemporaryFile() as index_file, tempfile.TemporaryFile() as sums_file:
        index = io.TextIOWrapper(index_file, encoding=CSV_ENCODING, newline="")
        sums = io.TextIOWrapper(sums_file, encoding="utf-8", newline="\n")
        rows = csv.writer(index, lineterminator="\r\n")
        rows.writerow(CSV_HEADER)
        after = 0
        while True:
            page = ctx.queue.fax_export_files(job, after, FILES_PAGE)
            for item in page:
                rows.writerow(item["csv_row"])
                sums.write(sha256sums_line(item["sha256"], item["name"]))
                after = int(item["seq"])
            if len(page) < FILES_PAGE:
                break
        index.flush()
        index_size = index_file.tell()
        checkpoint()
        index_key = f"{prefix(export_id)}/{INDEX_CSV}"
        index_sha256 = _upload(target, index_key, index_file, index_size, "text/csv; charset=utf-8", checkpoint)
        sums.write(sha256sums_line(index_sha256, INDEX_CSV))
        sums.flush()
        sums_size = sums_file.tell()
        sums_key = f"{prefix(export_id)}/{SHA256SUMS}"
        sums_sha256 = _upload(target, sums_key, sums_file, sums_size, "text/plain; charset=utf-8", checkpoint)
        index.detach()
        sums.detach()
    ctx.queue.finish_fax_export(
        job,
        {"path": index_key, "size_bytes": index_size, "sha256": index_sha256},
        {"path": sums_key, "size_bytes": sums_size, "sha256": sums_sha256},
    )
