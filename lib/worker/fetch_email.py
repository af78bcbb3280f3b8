"""The fetch_email job: a received e-mail's attachments, from Resend into Storage.

Safe to run any number of times for the same e-mail: the storage key is fixed before the upload,
the upload and the row are upserts, and what is already recorded is skipped. A worker that dies
after an upload but before recording it only makes the next run upload the same bytes again.

Each attachment streams from its download to Storage, hashed on the way: a job holds a chunk of it
at a time, never the whole (lib/worker/resend.py DOWNLOAD_CHUNK_BYTES). The upload states the
listed size as its length, so a body that ends short or runs long fails as a request and Storage
keeps nothing of it; should the body be found wrong once Storage may already hold all the listed
bytes (it went on past them, or failed right after), the object is deleted before the job goes on,
and no row is recorded.

Every listed attachment gets an id of its own in the table: two items of one listing that would
share one (the same id twice, or ids that differ only in text Postgres cannot store, "att\u0000x"
and "att\ufffdx") are both kept, the later one's id followed by U+FFFD until it is unique, as the
webhook does with member names (lib/storable.py), and the log says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from uuid import UUID

from lib import log
from lib.budget import Checkpoint, Deadline
from lib.failures import FAILURES, FailureCode, JobFailure, from_resend_error, from_storage_error
from lib.storable import REPLACEMENT, storable_text
from lib.supabase.storage import Storage, StorageError
from lib.worker.queue import Job, Queue
from lib.worker.rate_limit import ResendLimiter
from lib.worker.records import StoredAttachment, attachment_key, stored_content_type
from lib.worker.resend import (
    Attachment,
    Download,
    DownloadError,
    InvalidEmailId,
    Listing,
    MalformedResponse,
    ResendClient,
    ResendError,
    ResendTimeout,
    TooLarge,
)

# The kind record_inbound_email enqueues (supabase/migrations; tests/database/test_limits_mirror.py).
KIND = "fetch_email"


@dataclass(frozen=True)
class FetchContext:
    queue: Queue
    limiter: ResendLimiter  # the same that paces `resend`'s API requests
    resend: ResendClient
    storage: Storage
    max_bytes: int


@dataclass(frozen=True)
class Listed:
    """A listed attachment and the ids it is kept under."""

    attachment: Attachment
    stored_id: str  # the row's provider_attachment_id: storable, and unique within the listing
    key_id: str  # what the object's key derives from: the provider's id, unless it had to be made unique


def _list(ctx: FetchContext, job: Job, provider_email_id: str, deadline: Deadline) -> tuple[Listing, dict[str, Listed]]:
    try:
        listing = ctx.resend.list_attachments(provider_email_id, deadline)
    except InvalidEmailId as error:
        raise JobFailure(FailureCode.RESEND_REJECTED, str(error)) from error
    except ResendTimeout as error:
        raise JobFailure(FailureCode.RESEND_TIMEOUT, str(error)) from error
    except ResendError as error:
        code = from_resend_error(error.status, error.name, error.message)
        raise JobFailure(code, str(error), error.retry_after) from error
    except MalformedResponse as error:
        raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, str(error)) from error
    return listing, _identify(job, listing.attachments)


def _identify(job: Job, attachments: list[Attachment]) -> dict[str, Listed]:
    """The listed attachments by the id each is stored under, in the listing's order."""
    listed: dict[str, Listed] = {}
    for position, attachment in enumerate(attachments, start=1):
        stored_id = storable_text(attachment.id)
        if stored_id not in listed:
            listed[stored_id] = Listed(attachment, stored_id, attachment.id)
            continue
        while stored_id in listed:
            stored_id += REPLACEMENT
        listed[stored_id] = Listed(attachment, stored_id, stored_id)
        log.event(
            "attachment_id_disambiguated",
            logging.WARNING,
            job_id=job.id,
            email_row_id=job.fax_received_email_id,
            position=position,
            attachment_id=storable_text(attachment.id),
            stored_as=stored_id,
        )
    return listed


def _store(ctx: FetchContext, job: Job, email_id: UUID, item: Listed, deadline: Deadline) -> StoredAttachment:
    """Streams the attachment from its download to Storage; its row, once the object is stored whole."""
    attachment = item.attachment
    content_type = stored_content_type(attachment.content_type, attachment.filename)
    key = attachment_key(email_id, item.key_id, content_type)
    try:
        with ctx.resend.open_download(attachment.download_url, ctx.max_bytes, deadline, attachment.size) as body:
            uploaded = False
            try:
                ctx.storage.upload(key, body, content_type, deadline, length=attachment.size)
                uploaded = True
                body.finish()  # what the upload left unread is checked too
            except StorageError as error:
                raise storage_failure(error) from error
            except BaseException:
                if uploaded or body.all_listed_sent:  # Storage may hold an object of the wrong bytes
                    _discard(ctx, job, key, body)
                raise
    except TooLarge as error:
        raise JobFailure(FailureCode.ATTACHMENT_TOO_LARGE, f"attachment {attachment.id}: {error}") from error
    except DownloadError as error:
        code = FailureCode.DOWNLOAD_EXPIRED if error.status == 403 else FailureCode.DOWNLOAD_FAILED
        raise JobFailure(code, f"attachment {attachment.id}: {error}") from error
    return _row(job, item, content_type, body, ctx.storage.bucket, key)


def _discard(ctx: FetchContext, job: Job, key: str, body: Download) -> None:
    """Deletes an object whose body was found wrong after Storage may have stored it whole."""
    fields = {"job_id": job.id, "email_row_id": job.fax_received_email_id, "storage_path": key, "sent": body.size}
    try:
        ctx.storage.delete(key)
    except StorageError as error:
        # No row names it, so nothing serves it; the job's retry uploads the key again (an upsert).
        log.event("attachment_object_left", logging.ERROR, **fields, error=str(error))
        return
    log.event("attachment_object_deleted", logging.WARNING, **fields)


def run(job: Job, ctx: FetchContext, checkpoint: Checkpoint) -> int:
    """Stores every attachment not yet stored; returns how many it stored.

    `checkpoint` is called before each attachment: it extends the lease unless the claim or the
    previous attachment's record renewed it a moment ago (LeaseLost once the job is no longer
    ours) and raises JobFailure(FailureCode.TIME_BUDGET) when no time is left for another.
    Recording an attachment renews the lease too, and refuses (LeaseLost) once the job is no
    longer ours.
    Its deadline bounds every listing, download and upload (DeadlinePassed when it passes).
    Each Resend API request waits for its slot of the limiter all workers share (lib/worker/rate_limit.py):
    JobFailure(resend_rate_limit_wait) when the slot is further away than the deadline allows.
    """
    deadline = checkpoint.deadline
    if job.fax_received_email_id is None:
        raise JobFailure(FailureCode.EMAIL_NOT_FOUND, f"job {job.id} names no e-mail")
    # The e-mail, what is stored already, and the listing's slot of the shared Resend limiter.
    start = ctx.queue.start_fetch_email(job, ctx.limiter.max_wait_ms(deadline))
    email = start.email
    if email is None or start.resend is None:
        raise JobFailure(FailureCode.EMAIL_NOT_FOUND, f"fax_received_emails {job.fax_received_email_id} does not exist")
    ctx.limiter.granted(start.resend)
    stored = start.stored_attachment_ids
    # Listed afresh on every attempt: a download_url is valid for one hour only.
    listing, listed = _list(ctx, job, email.provider_email_id, deadline)
    if listing.unknown_sizes:
        log.event("attachment_size_unknown", logging.WARNING, job_id=job.id, email_row_id=email.id,
                  attachment_ids=[storable_text(i) for i in listing.unknown_sizes])  # fmt: skip
    listed_again = False
    count = 0
    for stored_id in list(listed):
        checkpoint()
        if stored_id in stored:  # stored ids are in the form the database could take
            continue
        item = listed[stored_id]
        size = item.attachment.size
        if size is not None and size > ctx.max_bytes:
            raise JobFailure(FailureCode.ATTACHMENT_TOO_LARGE, f"attachment {item.attachment.id}: {size} bytes")
        try:
            row = _store(ctx, job, email.id, item, deadline)
        except JobFailure as failure:
            if failure.code is not FailureCode.DOWNLOAD_EXPIRED or listed_again:
                raise
            # The URL expired (a long backlog, a slow retry): list once more, for fresh URLs for the rest too.
            listed_again = True
            listing, listed = _list(ctx, job, email.provider_email_id, deadline)
            if stored_id not in listed:
                vanished = f"attachment {item.attachment.id} vanished"
                raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, vanished) from None
            row = _store(ctx, job, email.id, listed[stored_id], deadline)
        ctx.queue.record_attachment(job, row)
        count += 1
    if listing.unusable:
        # The others are stored: fail for what cannot be fetched, naming it, so that nothing is lost silently.
        problems = "; ".join(listing.unusable[:5]) + ("; ..." if len(listing.unusable) > 5 else "")
        message = f"attachment list: {len(listing.unusable)} items cannot be fetched ({problems}); {count} stored"
        raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, message)
    return count


def _row(job: Job, item: Listed, content_type: str, body: Download, bucket: str, key: str) -> StoredAttachment:
    """The attachment's row, with text Postgres cannot store replaced as the webhook does
    (lib/storable.py); the fact goes to the log, since the row has no place for it."""
    attachment = item.attachment
    row = StoredAttachment(
        provider_attachment_id=item.stored_id,
        filename=None if attachment.filename is None else storable_text(attachment.filename),
        content_type=content_type,
        size_bytes=body.size,
        sha256=body.sha256,
        bucket=bucket,
        storage_path=key,
    )
    # (An id made unique is logged as attachment_id_disambiguated: here only what Postgres could not store.)
    compared = {"id": (attachment.id, storable_text(attachment.id)), "filename": (attachment.filename, row.filename)}
    replaced = [field for field, (given, kept) in compared.items() if given != kept]
    if replaced:
        log.event(
            "attachment_text_replaced",
            logging.WARNING,
            job_id=job.id,
            email_row_id=job.fax_received_email_id,
            attachment_id=row.provider_attachment_id,
            replaced=replaced,
        )
    return row


def storage_failure(error: StorageError) -> JobFailure:
    """A refused or failed Storage call (an upload, a download) as the job's failure, naming what an
    operator checks."""
    if error.status is None:
        said = "timed out" if error.timed_out else "unreachable"
        return JobFailure(FailureCode.STORAGE_UNAVAILABLE, f"Storage {said}: {error.network}")
    failure = from_storage_error(error.status, error.code, error.name)
    check = FAILURES[failure].check
    named = " ".join(part for part in (error.code, error.name) if part)
    return JobFailure(failure, f"Storage {error.status} {named}" + (f" (check {check})" if check else ""))
