"""The reconcile_emails job: Resend's list of received e-mails against the database.

A webhook that never comes (a wrong RESEND_WEBHOOK_SECRET, Vercel's Deployment Protection) would
lose its fax: Resend keeps the e-mail and lists it (GET /emails/receiving,
resend.com/docs/api-reference/emails/list-received-emails). The job lists pages back to the
watermark the database keeps (less an overlap that covers late webhooks, clock skew and an order
the API does not promise), and records every listed e-mail the database does not have through
the webhook's own path (record_inbound_email: one row, one fetch_email job, the kick), one batch
per page. It stops at a page whose every e-mail is older than that, at the last page, or at the
bound of pages per job, where its cursor is kept and a follow-up job continues after it.

Every page takes one slot of the shared Resend limiter (the client's pacing); an error answer
follows the failure table like a fetch_email job's: a 429 or a refused key releases the job, a
5xx retries it. With nothing missed a run costs one listing request.

The same walk serves the operator's run by hand (document-jobs-admin reconcile), which records
through an audited call instead of the job's fenced one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lib import log
from lib.budget import Checkpoint, Deadline
from lib.failures import FailureCode, JobFailure, from_resend_error
from lib.storable import storable_json
from lib.worker.queue import Job, Queue
from lib.worker.resend import MalformedResponse, ReceivedEmail, ResendClient, ResendError, ResendTimeout

# The kind enqueue_document_jobs_reconciliation enqueues (supabase/migrations).
KIND = "reconcile_emails"


@dataclass(frozen=True)
class ReconcileContext:
    queue: Queue
    resend: ResendClient  # paced by the shared limiter: one slot per page


@dataclass
class Walk:
    """What a walk over the list saw: e-mails listed, pages, the newest created_at, and the cursor
    to continue after when it stopped at its page bound (None: it reached the end)."""

    listed: int = 0
    pages: int = 0
    recorded: int = 0
    late: int = 0
    newest: datetime | None = None
    continue_after: str | None = None
    recorded_ids: list[str] = field(default_factory=list)


# A page's e-mails (as the database stores them) -> the database's answer {"recorded", "late", "recorded_ids"}.
Record = Callable[[list[dict[str, Any]]], dict[str, Any]]


def storable_items(emails: list[ReceivedEmail]) -> list[dict[str, Any]]:
    """The listed items as the database can store them (text Postgres cannot hold replaced, as
    the webhook does), one per distinct id."""
    items: dict[str, dict[str, Any]] = {}
    for email in emails:
        item, _ = storable_json(dict(email.item))
        items.setdefault(str(item["id"]), item)
    return list(items.values())


def walk(
    resend: ResendClient,
    record: Record,
    stop_before: datetime,
    after: str | None,
    max_pages: int,
    deadline: Deadline | None = None,
    before_page: Callable[[], None] = lambda: None,
) -> Walk:
    """Lists pages from `after` (None: the newest), recording each, until a page whose every
    e-mail was created before `stop_before`, the last page, or `max_pages`."""
    seen = Walk()
    while True:
        before_page()
        page = _page(resend, after, deadline)
        seen.pages += 1
        seen.listed += len(page.emails)
        if page.emails:
            newest = max(e.created_at for e in page.emails)
            seen.newest = newest if seen.newest is None else max(seen.newest, newest)
            answer = record(storable_items(page.emails))
            seen.recorded += int(answer.get("recorded", 0))
            seen.late += int(answer.get("late", 0))
            seen.recorded_ids += [str(i) for i in answer.get("recorded_ids", [])]
        # The order is not promised: only a page that is older throughout ends the walk.
        if not page.has_more or not page.emails or all(e.created_at < stop_before for e in page.emails):
            return seen
        after = page.last_id
        if seen.pages >= max_pages:
            seen.continue_after = after
            return seen


def _page(resend: ResendClient, after: str | None, deadline: Deadline | None) -> Any:
    try:
        return resend.list_received(after, deadline)
    except ResendTimeout as error:
        raise JobFailure(FailureCode.RESEND_TIMEOUT, str(error)) from error
    except ResendError as error:
        code = from_resend_error(error.status, error.name, error.message)
        raise JobFailure(code, f"listing received e-mails: {error}", error.retry_after) from error
    except MalformedResponse as error:
        raise JobFailure(FailureCode.RESEND_MALFORMED_RESPONSE, str(error)) from error


def run(job: Job, ctx: ReconcileContext, checkpoint: Checkpoint) -> Walk:
    """One reconcile_emails job: list, record, then tell the database how far it got."""
    start = ctx.queue.start_reconciliation(job)
    seen = walk(
        ctx.resend,
        lambda items: ctx.queue.record_reconciled(job, items),
        start.stop_before,
        start.cursor,
        start.max_pages,
        checkpoint.deadline,
        checkpoint,
    )
    continues = ctx.queue.finish_reconciliation(job, seen.listed, seen.newest, seen.continue_after)
    log.event("reconciled", job_id=job.id, listed=seen.listed, pages=seen.pages, recorded=seen.recorded,
              late=seen.late, continues=continues)  # fmt: skip
    return seen
