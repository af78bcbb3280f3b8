"""document-jobs-admin reconcile --since 20h [--after ID] [--dry-run] --as EMAIL: reconciliation by
hand, for an outage longer than the schedule's reach (the cron job lists back to its watermark less
an hour).

It walks Resend's list of received e-mails (lib/worker/reconcile.py, the job's own walk) back to
--since, at most the setting retention of document_jobs_reconciliation (how long Resend keeps a
received e-mail on the office's plan: 1 day unless set, the shortest reported, since Resend's own
pages do not say), and records what the database lacks through the audited
admin_record_reconciled_emails (the operator's identity, as the bulk actions record it), in
batches the database takes, or with --dry-run only counts and lists it. An item it cannot read is
listed and noted once (the outage reconciliation_unreadable); a page that comes again, a cursor
that does not advance or has_more with an empty page ends the walk with a finding. A walk that
stops at its page bound prints how to go on: --after the last id it listed (a later --since could
not reach the older rest: every walk starts from the newest page). Every page takes a slot of the
workers' shared Resend limiter, and a page refused by Resend's rate limit is asked again after its
retry-after, a few times. It needs RESEND_API_KEY (and
RESEND_API_URL off Resend's own API) besides the Supabase settings.
"""

from __future__ import annotations

import argparse
import shlex
from datetime import datetime, timedelta
from typing import Any

from lib.admin import PROGRAM, bulk, commands, display
from lib.admin.reconciliation_status import unreadable_line
from lib.errors import Refusal
from lib.failures import JobFailure
from lib.settings import ConfigError, ResendListingSettings
from lib.worker import reconcile
from lib.worker.rate_limit import ResendLimiter
from lib.worker.resend import ResendClient

# Pages of 100 one run by hand lists at most: 50,000 e-mails.
MAX_PAGES = 500
# How many times a run by hand asks again for a page Resend's rate limit refused (each after the
# 429's retry-after, which the shared limiter keeps every worker to as well) before it gives up.
RATE_LIMITED_RETRIES = 5


def run(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    who = bulk.actor(context, args.actor)
    status = commands.rpc(context, "document_jobs_reconciliation_status", {}, dict)
    retention = interval_seconds(status["retention"])
    if (context.now - args.since).total_seconds() > retention + 60:
        raise Refusal(
            "since_too_far",
            f"--since goes back further than retention ({display.interval(status['retention'])}): how long Resend"
            " keeps a received e-mail on the office's plan, the setting of document_jobs_reconciliation"
            " (set_document_jobs_reconciliation(p_retention => ...) changes it)",
        )
    try:
        settings = ResendListingSettings.load()
    except ConfigError as error:
        raise Refusal("misconfigured", str(error)) from error
    # Resend's rate limit is the team's, shared with the workers: every page takes a slot of the
    # workers' limiter in the database, as the job's walk does. Unpaced, a walk of many pages
    # outruns five requests a second and is refused with a 429, and during a burst takes the
    # workers' slots. No time budget by hand: the limiter waits for a slot up to its longest wait.
    limiter = ResendLimiter(context.client, timedelta(0))
    resend = ResendClient(
        context.http,
        str(settings.resend_api_url),
        settings.resend_api_key.get_secret_value(),
        settings.resend_timeout_seconds,
        pacing=limiter,
    )
    would: list[str] = []

    def record(items: list[dict[str, Any]], unreadable: list[dict[str, Any]]) -> dict[str, Any]:
        if args.dry_run:
            ids = [str(i["id"]) for i in items]
            missing = commands.rpc(context, "unrecorded_provider_emails", {"p_provider_email_ids": ids}, list)
            would.extend(missing)
            return {"recorded": 0, "late": 0, "recorded_ids": []}
        params = {"p_actor_id": who.id, "p_actor_email": who.email, "p_emails": items, "p_unreadable": unreadable,
                  "p_since": args.since.isoformat(), "p_listed": len(items) + len(unreadable)}  # fmt: skip
        answer: dict[str, Any] = commands.rpc(context, "admin_record_reconciled_emails", params, dict)
        return answer

    # The database's clock, as the job's: an item created more than a day after it cannot be read.
    not_after = datetime.fromisoformat(status["now"]) + reconcile.CLOCK_SLACK
    try:
        seen = reconcile.walk(
            resend, record, args.since, args.after, MAX_PAGES, not_after, rate_limited_retries=RATE_LIMITED_RETRIES
        )
    except JobFailure as failure:
        raise Refusal(failure.code.value, f"Resend's list of received e-mails: {failure}") from failure
    data = {
        "listed": seen.listed,
        "recorded": seen.recorded,
        "late": seen.late,
        "pages": seen.pages,
        "dry_run": bool(args.dry_run),
        "since": args.since.isoformat(),
        "after": args.after,
        "would_record": would if args.dry_run else None,
        "recorded_ids": seen.recorded_ids,
        "unreadable": [{"reason": u.reason, "item": u.shown} for u in seen.unreadable],
        "finding": seen.finding,
        "stopped_at_page_bound": seen.continue_after is not None,
        "continue_after": seen.continue_after,
        "actor": {"id": who.id, "email": who.email},
    }
    if args.dry_run:
        lines = [f"listed {seen.listed} e-mails in {seen.pages} pages; {len(would)} not recorded (dry run):"]
        lines += [f"  {display.text(email_id)}" for email_id in would]
    else:
        lines = [
            f"listed {seen.listed} e-mails in {seen.pages} pages; recorded {seen.recorded}"
            f" ({seen.late} of them late), audited as {who.email}"
        ]
    if seen.unreadable:
        lines.append(f"{len(seen.unreadable)} could not be read and are not recorded (they may be faxes):")
        lines += [f"  {unreadable_line(u.reason, u.shown)}" for u in seen.unreadable]
    if seen.finding is not None:
        lines.append(f"stopped early: {display.text(seen.finding)}")
    if seen.continue_after is not None:
        rest = f"{PROGRAM} reconcile --since {args.since.isoformat()} --after {shlex.quote(seen.continue_after)}"
        lines.append(f"stopped after {MAX_PAGES} pages; for the older rest run: {display.text(rest)}")
    return data, "\n".join(lines)


def interval_seconds(value: str) -> float:
    """PostgREST's text of an interval ('30 days', '01:00:00', '1 day 02:00:00') in seconds."""
    days, _, clock = value.partition(" day")
    if not clock and ":" in days:
        days, clock = "0", days
    clock = clock.lstrip("s ").strip() or "00:00:00"
    hours, minutes, seconds = (float(part) for part in clock.split(":"))
    return timedelta(days=float(days or 0), hours=hours, minutes=minutes, seconds=seconds).total_seconds()
