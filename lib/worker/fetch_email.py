"""The fetch_email job: a received e-mail's attachments, and the e-mail itself, from Resend into
Storage.

An original is never replaced. Each is uploaded without upsert to a key fixed before the upload
(lib/worker/records.py), so Storage refuses a key that holds an object (409 Duplicate). The object
found there is read back and hashed: with the download's SHA-256 and size it counts as stored (a
worker that died between its upload and its record), and is recorded as it is; with others it is
kept, the download goes beside it under the next version's key, and both are recorded as versions
of the attachment, in one call, which alerts original_differs. Before storing beside, the job
renews its lease (fenced): a worker that lost its job stores nothing beside and records nothing,
so a stale worker, whatever its download, replaces nothing. What is recorded is skipped on the
next run; a recorded row never changes.

Each original streams from its download to Storage, hashed on the way: a job holds a chunk of it
at a time, never the whole (lib/worker/resend.py DOWNLOAD_CHUNK_BYTES). The upload states the
listed size as its length, so a body that ends short or runs long fails as a request and Storage
keeps nothing of it. Should the body be found wrong once Storage may already hold all the listed
bytes (it went on past them, or failed right after), the job asks the database whether it may
delete that object (discard_unrecorded_object_v2): only while the job is ours and no row records
the object, and from then on nobody may record that key. So a delete this product sends only
ever removes an object no row records, however late it reaches Storage; the next run stores
beside the key given up.

The e-mail itself: Resend's retrieve-received-email answer has `raw`, a signed URL of the original
message. After the attachments, the same job stores it at fax_received_emails/{e-mail}/raw/
message.eml (versioned the same way) with its own SHA-256, the evidence of when and from whom the
fax came. It costs one more request of the shared Resend rate limit per fax (through the same
limiter) and about a third more storage. When `raw` is null, or Resend or Storage refuses it for
good (too large, say), the fax is stored all the same and the database notes why there is no raw
message; a passing failure retries the job, which then skips what it stored.

Every listed attachment gets an id of its own in the table: two items of one listing that would
share one (the same id twice, or ids that differ only in text Postgres cannot store, "att\u0000x"
and "att\ufffdx") are both kept, the later one's id followed by U+FFFD until it is unique, as the
webhook does with member names (lib/storable.py), and the log says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from uuid import UUID

from lib import log
from lib.budget import Checkpoint, Deadline
from lib.failures import FAILURES, Action, FailureCode, JobFailure, from_resend_error, from_storage_error
from lib.storable import REPLACEMENT, storable_text
from lib.supabase.storage import Digest, Storage, StorageError
from lib.worker.queue import Job, Queue
from lib.worker.rate_limit import ResendLimiter
from lib.worker.records import (
    RAW_MESSAGE_TYPE,
    StoredAttachment,
    StoredVersion,
    attachment_key,
    raw_message_key,
    stored_content_type,
)
from lib.worker.resend import (
    Attachment,
    Download,
    DownloadError,
    InvalidEmailId,
    Listing,
    MalformedResponse,
    RawMessage,
    ResendClient,
    ResendError,
    ResendTimeout,
    TooLarge,
)

# The kind record_inbound_email enqueues (supabase/migrations; tests/database/test_limits_mirror.py).
KIND = "fetch_email"
# Keys of one original tried before the job gives up: each held another object (a version), or
# was given up as wrong. Two are already a finding; ten would be a fault to look into, not a fax.
MAX_VERSIONS = 10
# What `unavailable` says when Resend's answer offers no raw message.
RAW_NULL = "raw_null"


def raw_message_cap(max_bytes: int) -> int:
    """The largest raw message kept: the largest attachment as the message carries it (base64, 4
    bytes for every 3), and a MiB for its headers and text."""
    return max_bytes * 4 // 3 + 1024 * 1024


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


def _asked[T](call: Callable[[], T]) -> T:
    """A Resend API call's answer; its failure as the job's (lib/failures.py)."""
    try:
        return call()
    except InvalidEmailId as error:
        raise JobFailure(FailureCode.RESEND_REJECTED, str(error)) from error
    except ResendTimeout as error:
        raise JobFailure(FailureCode.RESEND_TIMEOUT, str(error)) from error
    except ResendError as error:
        code = from_resend_error(error.status, error.name, error.message)
        raise JobFailure(code, str(error), error.retry_after) from error
    except MalformedResponse as error:
        raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, str(error)) from error


def _list(ctx: FetchContext, job: Job, provider_email_id: str, deadline: Deadline) -> tuple[Listing, dict[str, Listed]]:
    listing = _asked(lambda: ctx.resend.list_attachments(provider_email_id, deadline))
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


@dataclass(frozen=True)
class Original:
    """One original to keep: what it is (for messages), the key of each of its versions, what it is
    stored as, how to open its download (again, for a version beside another), the listed size
    (None: unknown) and the largest it may be."""

    what: str
    key: Callable[[int], str]
    content_type: str
    open: Callable[[], AbstractContextManager[Download]]
    size: int | None
    max_bytes: int


def _fetched(ctx: FetchContext, job: Job, original: Original, discarded: frozenset[str],
             deadline: Deadline) -> tuple[StoredVersion, ...]:  # fmt: skip
    """_keep, its download's failures as the job's."""
    try:
        return _keep(ctx, job, original, discarded, deadline)
    except TooLarge as error:
        raise JobFailure(FailureCode.ATTACHMENT_TOO_LARGE, f"{original.what}: {error}") from error
    except DownloadError as error:
        code = FailureCode.DOWNLOAD_EXPIRED if error.status == 403 else FailureCode.DOWNLOAD_FAILED
        raise JobFailure(code, f"{original.what}: {error}") from error


def _keep(ctx: FetchContext, job: Job, original: Original, discarded: frozenset[str],
          deadline: Deadline) -> tuple[StoredVersion, ...]:  # fmt: skip
    """Stores the original's download at the first of its keys that takes it, replacing nothing;
    answers the versions to record: the object found at each key before with other bytes, then the
    download's (uploaded now, or found there already with the same bytes)."""
    found: list[StoredVersion] = []
    for version in range(1, MAX_VERSIONS + 1):
        key = original.key(version)
        if key in discarded:  # given up as wrong: never stored at again
            continue
        with original.open() as body:
            taken = _upload(ctx, job, original, key, body, deadline)
        download = StoredVersion(version=version, size_bytes=body.size, sha256=body.sha256,
                                 bucket=ctx.storage.bucket, storage_path=key)  # fmt: skip
        if not taken:
            return (*found, download)
        there = _read_back(ctx, original, version, key, deadline)
        fields = {"job_id": job.id, "email_row_id": job.fax_received_email_id, "storage_path": key,
                  "original": original.what}  # fmt: skip
        if (there.size_bytes, there.sha256) == (download.size_bytes, download.sha256):
            # Uploaded before by a worker that stopped before recording it: stored, as it is.
            log.event("original_found_stored", logging.INFO, **fields, size=there.size_bytes)
            return (*found, download)
        log.event("original_differs", logging.WARNING, **fields, found_size=there.size_bytes, found_sha256=there.sha256,
                  downloaded_size=download.size_bytes, downloaded_sha256=download.sha256)  # fmt: skip
        found.append(there)
        # Fenced: a worker that lost its job (LeaseLost) stores nothing beside what another may have recorded.
        ctx.queue.extend(job)
    raise JobFailure(FailureCode.STORAGE_REJECTED, f"{original.what}: {MAX_VERSIONS} keys hold other objects")


def _upload(ctx: FetchContext, job: Job, original: Original, key: str, body: Download, deadline: Deadline) -> bool:
    """Uploads the body to `key`, never replacing an object: True when the key holds one already
    (the body then read to its end, with its checks, for the digest it is compared by)."""
    uploaded = False
    try:
        ctx.storage.upload(key, body, original.content_type, deadline, length=original.size)
        uploaded = True
        body.finish()  # what the upload left unread is checked too
        return False
    except StorageError as error:
        if error.duplicate:  # nothing of this body was stored: nothing to discard
            body.finish()
            return True
        raise storage_failure(error) from error
    except BaseException as error:
        if uploaded or body.all_listed_sent:  # Storage may hold an object of the wrong bytes
            _discard(ctx, job, key, body, f"{type(error).__name__}: {error}")
        raise


def _read_back(ctx: FetchContext, original: Original, version: int, key: str, deadline: Deadline) -> StoredVersion:
    """The object at `key`, hashed as it streams from Storage (never held whole)."""
    digest = Digest()
    try:
        ctx.storage.download_to(key, digest, deadline, original.max_bytes)
    except StorageError as error:
        if error.status == 404:  # gone since it refused the upload: deleted as wrong, a moment ago
            raise JobFailure(FailureCode.STORAGE_UNAVAILABLE, f"{original.what}: {key} vanished after a 409") from error
        raise storage_failure(error) from error
    return StoredVersion(version=version, size_bytes=digest.size, sha256=digest.sha256, bucket=ctx.storage.bucket,
                         storage_path=key)  # fmt: skip


def _discard(ctx: FetchContext, job: Job, key: str, body: Download, reason: str) -> None:
    """Deletes an object whose body was found wrong after Storage may have stored it whole, if the
    database allows it (discard_unrecorded_object_v2: the job is ours, and no row records the
    object). Never raises: it runs while the job's own failure is on its way."""
    fields = {"job_id": job.id, "email_row_id": job.fax_received_email_id, "storage_path": key, "sent": body.size}
    try:
        allowed = ctx.queue.may_discard(job, ctx.storage.bucket, key, body.size, body.sha256, reason)
    except Exception as error:  # LeaseLost, a database error: not decided, so not deleted
        log.event("attachment_object_left", logging.ERROR, **fields, error=f"{type(error).__name__}: {error}")
        return
    if not allowed:
        # A row records the object (another worker's, with these very bytes): it stays.
        log.event("attachment_object_kept", logging.WARNING, **fields)
        return
    try:
        ctx.storage.delete(key)
    except StorageError as error:
        # No row names it, and none ever will (the database gave the key up): nothing serves it.
        log.event("attachment_object_left", logging.ERROR, **fields, error=str(error))
        return
    log.event("attachment_object_deleted", logging.WARNING, **fields)


def _attachment(ctx: FetchContext, job: Job, email_id: UUID, item: Listed, discarded: frozenset[str],
                deadline: Deadline) -> StoredAttachment:  # fmt: skip
    """Streams the attachment from its download to Storage; its rows, once its objects are stored whole."""
    attachment = item.attachment
    content_type = stored_content_type(attachment.content_type, attachment.filename)

    def key(version: int) -> str:
        return attachment_key(email_id, item.key_id, content_type, version)

    def download() -> AbstractContextManager[Download]:
        return ctx.resend.open_download(attachment.download_url, ctx.max_bytes, deadline, attachment.size)

    original = Original(f"attachment {attachment.id}", key, content_type, download, attachment.size, ctx.max_bytes)
    return _row(job, item, content_type, _fetched(ctx, job, original, discarded, deadline))


def run(job: Job, ctx: FetchContext, checkpoint: Checkpoint) -> int:
    """Stores every attachment not yet stored, then the raw message unless it is recorded; returns
    how many attachments it stored.

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
    discarded = frozenset(d.storage_path for d in start.discarded_paths if d.bucket == ctx.storage.bucket)
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
            row = _attachment(ctx, job, email.id, item, discarded, deadline)
        except JobFailure as failure:
            if failure.code is not FailureCode.DOWNLOAD_EXPIRED or listed_again:
                raise
            # The URL expired (a long backlog, a slow retry): list once more, for fresh URLs for the rest too.
            listed_again = True
            listing, listed = _list(ctx, job, email.provider_email_id, deadline)
            if stored_id not in listed:
                vanished = f"attachment {item.attachment.id} vanished"
                raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, vanished) from None
            row = _attachment(ctx, job, email.id, listed[stored_id], discarded, deadline)
        if ctx.queue.record_attachment(job, row) > 1:
            log.event("attachment_versions_recorded", logging.WARNING, job_id=job.id, email_row_id=email.id,
                      attachment_id=row.provider_attachment_id, versions=len(row.versions))  # fmt: skip
        count += 1
    if not start.raw_message_recorded:
        # Before the unusable items fail the job: the raw message holds them too.
        checkpoint()
        _raw_message(ctx, job, email.id, email.provider_email_id, discarded, deadline)
    if listing.unusable:
        # The others are stored: fail for what cannot be fetched, naming it, so that nothing is lost silently.
        problems = "; ".join(listing.unusable[:5]) + ("; ..." if len(listing.unusable) > 5 else "")
        message = f"attachment list: {len(listing.unusable)} items cannot be fetched ({problems}); {count} stored"
        raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, message)
    return count


def _raw_message(ctx: FetchContext, job: Job, email_id: UUID, provider_email_id: str, discarded: frozenset[str],
                 deadline: Deadline) -> None:  # fmt: skip
    """Stores the e-mail as Resend received it and records it, or records why there is none: raw
    null, or a failure that retrying cannot change. A passing failure is the job's (retried)."""
    fields = {"job_id": job.id, "email_row_id": email_id}
    cap = raw_message_cap(ctx.max_bytes)

    def key(version: int) -> str:
        return raw_message_key(email_id, version)

    versions: tuple[StoredVersion, ...] | None = None
    try:
        for last_try in (False, True):  # a URL that expired before its download: asked for once more
            raw: RawMessage | None = _asked(lambda: ctx.resend.raw_message(provider_email_id, deadline))
            if raw is None:
                log.event("raw_message_unavailable", logging.WARNING, **fields, reason=RAW_NULL)
                ctx.queue.record_raw_message(job, None, RAW_NULL)
                return
            url = raw.download_url

            def download(url: str = url) -> AbstractContextManager[Download]:
                return ctx.resend.open_download(url, cap, deadline)

            try:
                versions = _fetched(ctx, job, Original("the raw message", key, RAW_MESSAGE_TYPE, download, None, cap),
                                    discarded, deadline)  # fmt: skip
                break
            except JobFailure as failure:
                if failure.code is not FailureCode.DOWNLOAD_EXPIRED or last_try:
                    raise
    except JobFailure as failure:
        if failure.rule.action is not Action.FAIL:
            raise
        # Retrying changes nothing (too large for its cap or for Storage, refused): the fax is kept without it.
        log.event("raw_message_unavailable", logging.WARNING, **fields, reason=failure.code, error=failure.message)
        ctx.queue.record_raw_message(job, None, failure.code.value)
        return
    assert versions is not None
    ctx.queue.record_raw_message(job, versions)
    log.event("raw_message_stored", logging.INFO, **fields, versions=len(versions), size=versions[-1].size_bytes)


def _row(job: Job, item: Listed, content_type: str, versions: tuple[StoredVersion, ...]) -> StoredAttachment:
    """The attachment's rows, with text Postgres cannot store replaced as the webhook does
    (lib/storable.py); the fact goes to the log, since the row has no place for it."""
    attachment = item.attachment
    row = StoredAttachment(
        provider_attachment_id=item.stored_id,
        filename=None if attachment.filename is None else storable_text(attachment.filename),
        content_type=content_type,
        versions=versions,
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
