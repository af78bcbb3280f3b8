"""document-jobs-admin reconcile --since 7d [--dry-run] --as EMAIL: reconciliation by hand, for an
outage longer than the schedule's reach (the cron job lists back to its watermark less an hour).

It walks Resend's list of received e-mails (lib/worker/reconcile.py, the job's own walk) back to
--since, at most the setting max_since of document_jobs_reconciliation (30 days unless changed:
how long Resend keeps received e-mails is not documented on any page we found), and records what
the database lacks through the audited admin_record_reconciled_emails (the operator's identity,
as the bulk actions record it), one batch per page, or with --dry-run only counts and lists it.
It needs RESEND_API_KEY (and RESEND_API_URL off Resend's own API) besides the Supabase settings.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from lib.admin import bulk, commands, display
from lib.errors import Refusal
from lib.failures import JobFailure
from lib.settings import ConfigError, ResendListingSettings
from lib.worker import reconcile
from lib.worker.resend import ResendClient

# Pages of 100 one run by hand lists at most: 50,000 e-mails.
MAX_PAGES = 500


def run(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    who = bulk.actor(context, args.actor)
    status = commands.rpc(context, "document_jobs_reconciliation_status", {}, dict)
    max_since = _interval_seconds(status["max_since"])
    if (context.now - args.since).total_seconds() > max_since + 60:
        raise Refusal(
            "since_too_far",
            f"--since goes back further than max_since ({display.interval(status['max_since'])});"
            " set_document_jobs_reconciliation does not change it: it is the table's setting",
        )
    try:
        settings = ResendListingSettings.load()
    except ConfigError as error:
        raise Refusal("misconfigured", str(error)) from error
    resend = ResendClient(
        context.http,
        str(settings.resend_api_url),
        settings.resend_api_key.get_secret_value(),
        settings.resend_timeout_seconds,
    )
    would: list[str] = []

    def record(items: list[dict[str, Any]]) -> dict[str, Any]:
        if args.dry_run:
            ids = [str(i["id"]) for i in items]
            missing = commands.rpc(context, "unrecorded_provider_emails", {"p_provider_email_ids": ids}, list)
            would.extend(missing)
            return {"recorded": 0, "late": 0, "recorded_ids": []}
        params = {"p_actor_id": who.id, "p_actor_email": who.email, "p_emails": items,
                  "p_since": args.since.isoformat(), "p_listed": len(items)}  # fmt: skip
        answer: dict[str, Any] = commands.rpc(context, "admin_record_reconciled_emails", params, dict)
        return answer

    try:
        seen = reconcile.walk(resend, record, args.since, None, MAX_PAGES)
    except JobFailure as failure:
        raise Refusal(failure.code.value, f"Resend's list of received e-mails: {failure}") from failure
    data = {
        "listed": seen.listed,
        "recorded": seen.recorded,
        "late": seen.late,
        "pages": seen.pages,
        "dry_run": bool(args.dry_run),
        "since": args.since.isoformat(),
        "would_record": would if args.dry_run else None,
        "recorded_ids": seen.recorded_ids,
        "stopped_at_page_bound": seen.continue_after is not None,
        "actor": {"id": who.id, "email": who.email},
    }
    if args.dry_run:
        lines = [f"listed {seen.listed} e-mails in {seen.pages} pages; {len(would)} not recorded (dry run):"]
        lines += [f"  {email_id}" for email_id in would]
    else:
        lines = [
            f"listed {seen.listed} e-mails in {seen.pages} pages; recorded {seen.recorded}"
            f" ({seen.late} of them late), audited as {who.email}"
        ]
    if seen.continue_after is not None:
        lines.append(f"stopped after {MAX_PAGES} pages: run again with a later --since for the rest")
    return data, "\n".join(lines)


def _interval_seconds(value: str) -> float:
    """PostgREST's text of an interval ('30 days', '01:00:00', '1 day 02:00:00') in seconds."""
    days, _, clock = value.partition(" day")
    if not clock and ":" in days:
        days, clock = "0", days
    clock = clock.lstrip("s ").strip() or "00:00:00"
    hours, minutes, seconds = (float(part) for part in clock.split(":"))
    return timedelta(days=float(days or 0), hours=hours, minutes=minutes, seconds=seconds).total_seconds()
