"""The reconcile_emails job: Resend's list of received e-mails against the database.

A webhook that never comes (a wrong RESEND_WEBHOOK_SECRET, Vercel's Deployment Protection) would
lose its fax: Resend keeps the e-mail and lists it (GET /emails/receiving,
resend.com/docs/api-reference/emails/list-received-emails). The job lists pages back to the
watermark the database keeps (less an overlap that covers late webhooks, clock skew and an order
the API does not promise), and records every listed e-mail the database does not have through
the webhook's own path (record_inbound_email: one row, one fetch_email job, the kick), in batches
of at most RECORD_BATCH. It stops at a page whose every e-mail is older than that, at the last
page, or at the bound of pages per job, where its cursor is kept and a follow-up job continues
after it.

A run always moves or says why. An item it cannot read (lib/worker/resend.py UnreadableEmail) is
noted once with what can be read of it and the page goes on; a page it has seen before in the job
(the same first and last ids, or a cursor that does not advance) or has_more with an empty page
ends the run cleanly with a finding (Walk.finding): the database keeps the watermark where it was,
and the next run starts again from the newest page. The health check watches the rest
(reconciliation_stalled, retention_window_closing, reconciliation_unreadable).

Every page takes one slot of the shared Resend limiter (the client's pacing); an error answer
follows the failure table like a fetch_email job's: a 429 or a refused key releases the job, a
5xx retries it. With nothing missed a run costs one listing request.

The same walk serves the operator's run by hand (document-jobs-admin reconcile), which records
through an audited call instead of the job's fenced one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from lib import log
from lib.budget import Checkpoint, Deadline
from lib.failures import FailureCode, JobFailure, from_resend_error
from lib.storable import REPLACED_KEY, storable_id, storable_json
from lib.worker.queue import Job, Queue
from lib.worker.resend import (
    MalformedResponse,
    ReceivedEmail,
    ReceivedPage,
    ResendClient,
    ResendError,
    ResendTimeout,
    UnreadableEmail,
)

# The kind enqueue_document_jobs_reconciliation enqueues (supabase/migrations).
KIND = "reconcile_emails"
# The database records at most this many e-mails, and notes as many unreadable items, per call
# (record_reconciled and note_unreadable refuse more): a page of any size is sent in batches.
RECORD_BATCH = 100
# An item created more than this after the database's clock is unreadable: young until then, it
# would be left for its webhook on every run and never recorded.
CLOCK_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class ReconcileContext:
    queue: Queue
    resend: ResendClient  # paced by the shared limiter: one slot per page


@dataclass
class Walk:
    """What a walk over the list saw: items listed, pages, the newest created_at, the cursor to
    continue after when it stopped at its page bound (None: it ended), the finding that cut it short
    (None: it reached the watermark or the end), and the items it could not read."""

    listed: int = 0
    pages: int = 0
    recorded: int = 0
    late: int = 0
    newest: datetime | None = None
    continue_after: str | None = None
    finding: str | None = None
    recorded_ids: list[str] = field(default_factory=list)
    unreadable: list[UnreadableEmail] = field(default_factory=list)
    unreadable_new: int = 0


# A batch of a page's e-mails (as the database stores them) and of its unreadable items (as
# note_unreadable takes them) -> the database's answer {"recorded", "late", "recorded_ids", ...}.
Record = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]


def storable_items(emails: list[ReceivedEmail]) -> list[dict[str, Any]]:
    """The listed items as the database can store them, as the webhook stores its data: text
    Postgres cannot hold replaced (storable_json, the places listed under REPLACED_KEY), and the id
    made storable one to one (storable_id: `a\\u0000b` stays another e-mail than `a\\ufffdb`, and
    the same e-mail as its webhook's). One per distinct id."""
    items: dict[str, dict[str, Any]] = {}
    for email in emails:
        item, replaced = storable_json(dict(email.item))
        item["id"] = storable_id(email.id)
        if replaced:
            item[REPLACED_KEY] = replaced
        items.setdefault(item["id"], item)
    return list(items.values())


def storable_unreadable(items: list[UnreadableEmail]) -> list[dict[str, Any]]:
    """The unreadable items as note_unreadable takes them."""
    return [
        {
            "fingerprint": item.fingerprint,
            "provider_email_id": storable_id(item.id) if item.id else None,
            "reason": item.reason,
            "item": storable_json(dict(item.shown))[0],
        }
        for item in items
    ]


def walk(
    resend: ResendClient,
    record: Record,
    stop_before: datetime,
    after: str | None,
    max_pages: int,
    not_after: datetime | None,
    deadline: Deadline | None = None,
    before_page: Callable[[], None] = lambda: None,
    rate_limited_retries: int = 0,
) -> Walk:
    """Lists pages from `after` (None: the newest), recording each, until a page whose every
    readable e-mail was created before `stop_before`, the last page, `max_pages`, or a finding.
    An item created after `not_after` is unreadable. A page refused by Resend's rate limit (429)
    is asked again up to `rate_limited_retries` times in all, for a client paced by the shared
    limiter only: its next slot comes after the pause the 429 noted (the job asks none again: it
    is released, and its next run waits out the pause)."""
    retries = Retries(rate_limited_retries)
    seen = Walk()
    pages: set[tuple[str, str]] = set()
    cursors = {after} if after is not None else set()
    while True:
        before_page()
        page = _page(resend, after, deadline, not_after, retries)
        seen.pages += 1
        seen.listed += page.size
        if page.signature is not None and page.signature in pages:
            # Recorded already, the first time: a loop would list it until the page bound, and its
            # follow-up would again.
            first, last = page.signature
            seen.finding = f"Resend answered the same page again (after {after!r:.80}: ids {first:.80} to {last:.80})"
            return seen
        if page.signature is not None:
            pages.add(page.signature)
        _record(record, page, seen)
        if not page.has_more:
            return seen
        if page.size == 0:
            seen.finding = f"Resend answered has_more with an empty page (after {after!r:.80})"
            return seen
        # The order is not promised: only a page that is older throughout ends the walk (an item
        # whose time is unreadable says nothing of its page's age).
        if page.emails and all(e.created_at < stop_before for e in page.emails):
            return seen
        if page.cursor is None:
            seen.finding = "Resend answered has_more with no item whose id the next page could start after"
            return seen
        if page.cursor in cursors:
            seen.finding = f"Resend's cursor does not advance (after {page.cursor!r:.80} again)"
            return seen
        cursors.add(page.cursor)
        after = page.cursor
        if seen.pages >= max_pages:
            seen.continue_after = after
            return seen


def _record(record: Record, page: ReceivedPage, seen: Walk) -> None:
    """Records the page's e-mails and notes its unreadable items, a batch at a time."""
    if page.emails:
        newest = max(e.created_at for e in page.emails)
        seen.newest = newest if seen.newest is None else max(seen.newest, newest)
    items, unreadable = storable_items(page.emails), storable_unreadable(page.unreadable)
    seen.unreadable += page.unreadable
    for start in range(0, max(len(items), len(unreadable)), RECORD_BATCH):
        answer = record(items[start : start + RECORD_BATCH], unreadable[start : start + RECORD_BATCH])
        seen.recorded += int(answer.get("recorded", 0))
        seen.late += int(answer.get("late", 0))
        seen.unreadable_new += int(answer.get("unreadable_new", 0))
        seen.recorded_ids += [str(i) for i in answer.get("recorded_ids", [])]


@dataclass
class Retries:
    """How many more times a walk may ask again for a page Resend's rate limit refused."""

    left: int = 0


def _page(
    resend: ResendClient, after: str | None, deadline: Deadline | None, not_after: datetime | None, retries: Retries
) -> ReceivedPage:
    while True:
        try:
            return resend.list_received(after, deadline, not_after)
        except ResendTimeout as error:
            raise JobFailure(FailureCode.RESEND_TIMEOUT, str(error)) from error
        except ResendError as error:
            code = from_resend_error(error.status, error.name, error.message)
            if code is FailureCode.RESEND_RATE_LIMITED and retries.left > 0:
                retries.left -= 1
                log.event("reconcile_page_rate_limited", retries_left=retries.left)
                continue
            raise JobFailure(code, f"listing received e-mails: {error}", error.retry_after) from error
        except MalformedResponse as error:
            raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, str(error)) from error


def run(job: Job, ctx: ReconcileContext, checkpoint: Checkpoint) -> Walk:
    """One reconcile_emails job: list, record, then tell the database how far it got."""
    start = ctx.queue.start_reconciliation(job)
    seen = walk(
        ctx.resend,
        lambda items, unreadable: ctx.queue.record_reconciled(job, items, unreadable),
        start.stop_before,
        start.cursor,
        start.max_pages,
        start.now + CLOCK_SLACK,
        checkpoint.deadline,
        checkpoint,
    )
    continues = ctx.queue.finish_reconciliation(
        job, seen.listed, seen.newest, seen.continue_after, seen.finding, len(seen.unreadable)
    )
    log.event("reconciled", job_id=job.id, listed=seen.listed, pages=seen.pages, recorded=seen.recorded,
              late=seen.late, unreadable=len(seen.unreadable), unreadable_new=seen.unreadable_new,
              finding=seen.finding, continues=continues)  # fmt: skip
    return seen
