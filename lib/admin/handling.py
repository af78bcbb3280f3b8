"""Who is dealing with a fax, from the command line, as on the screen (mark_fax_handling, and the
bulk mark done: prepare_fax_handling_bulk, then apply_fax_handling_bulk; migrations 20261207140000
and 20261207140100):

document-jobs-admin handle FAX                                            its handling and its marks
document-jobs-admin handle FAX --mark in_progress|done|new [--note TEXT] --as EMAIL
document-jobs-admin handle --mark done --error-code X [...] --as EMAIL --dry-run   the count of faxes
document-jobs-admin handle --confirm BULK_ID --note TEXT --as EMAIL                 mark exactly those done
document-jobs-admin handle --mark done --error-code X [...] --note TEXT --as EMAIL --yes   count and mark

FAX names the fax as `show` names a job (a job id or prefix, the e-mail's id, Resend's e-mail id), or
by its e-mail's whole id when no job of it is left. The operator of --as (or DOCUMENT_JOBS_OPERATOR)
is a clerk or an admin of the admin screen, looked up in Supabase Auth as every action's actor is
(lib/admin/bulk.py actor), and checked again in the mark's own database call. Every mark is audited.
"""

from __future__ import annotations

import argparse
from typing import Any
from uuid import UUID

from lib.admin import PROGRAM, command_line, commands, display
from lib.admin.bulk import REASON_PLACEHOLDER, actor, given_reason, is_bulk, operator_email
from lib.admin.commands import FILTER_FLAGS, Context, check_filters
from lib.errors import Refusal
from lib.screen import calls
from lib.screen.auth import MARKERS

BATCH_SIZE = 500
# The states as a person reads them, in both languages (the screen's labels).
STATE_WORDS = {"new": "new (未対応)", "in_progress": "in progress (対応中)", "done": "done (対応済み)"}


def add_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("fax", nargs="?", help="a job id or prefix, the e-mail's id, or Resend's e-mail id")
    sub.add_argument("--mark", choices=calls.HANDLING_STATES, help="mark it so (in_progress: you take it); with a "
                     "filter, done: every fax the filter matches")  # fmt: skip
    sub.add_argument("--note", help="the note kept with the fax (and in the audit); an empty one clears it")
    sub.add_argument("--confirm", metavar="BULK_ID", type=commands.uuid_id, help="mark done what a --dry-run counted")
    commands.add_filter_options(sub, "bulk mark done: ")
    sub.add_argument("--as", dest="actor", metavar="EMAIL", help="the clerk or admin who marks (else "
                     "$DOCUMENT_JOBS_OPERATOR)")  # fmt: skip
    sub.add_argument("--dry-run", action="store_true", help="bulk: count the faxes, mark nothing")
    sub.add_argument("--yes", action="store_true", help="bulk: count and mark at once, without a dry run")


def run(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    if args.confirm:
        if args.fax or is_bulk(args):
            raise Refusal("usage", f"--confirm takes no fax and no filter (see {PROGRAM} handle --help)")
        return _apply(context, args.confirm, args.actor, args.note)
    if is_bulk(args):
        if args.fax:
            raise Refusal("usage", f"handle takes a fax or a filter, not both (see {PROGRAM} handle --help)")
        return _bulk(context, args)
    if not args.fax:
        raise Refusal("usage", f"handle needs a fax, a filter, or --confirm (see {PROGRAM} handle --help)")
    email_id = fax_of(context, args.fax)
    if args.mark is None:
        if args.note is not None:
            raise Refusal("usage", "--note goes with --mark (the state the fax is marked with)")
        return _shown(context, email_id)
    return _mark(context, email_id, args)


def fax_of(context: Context, value: str) -> str:
    """The e-mail id of the fax a value names: a whole e-mail id as it is (its jobs may be purged),
    else the e-mail of the one job it names (commands.resolve_job)."""
    try:
        whole = str(UUID(value))
    except ValueError:
        whole = None
    if whole is not None:
        rows = commands._rows(context, "read the fax",
                              context.client.table("fax_received_emails").select("id").eq("id", whole))  # fmt: skip
        if rows:
            return whole
    job = commands.resolve_job(context, value)
    found = calls.job(commands.rpc_of(context), job)
    email_id = found["job"]["fax_received_email_id"] if found else None
    if not email_id:
        raise Refusal("fax_not_found", f"job {job} has no fax (no e-mail)")
    return str(email_id)


def _rpc(context: Context) -> calls.Rpc:
    """The database's calls, a viewer's refusal said as a mark's (read_only)."""
    plain = commands.rpc_of(context, {"p_note": "--note", **FILTER_FLAGS})

    def rpc(function: str, params: dict[str, Any]) -> Any:
        try:
            return plain(function, params)
        except Refusal as refusal:
            if refusal.code == "not_an_admin":
                raise Refusal("read_only", refusal.message) from None
            if refusal.code == "database_error" and refusal.details.get("sqlstate") == "P0002":
                raise Refusal("not_found", refusal.message.split(": ", 1)[-1]) from None
            raise

    return rpc


def _marker(context: Context, email: str | None, what: str) -> Any:
    return actor(context, email, what, allowed=MARKERS)


def handling_lines(handling: dict[str, Any], context: Context) -> list[str]:
    """A fax's handling as a person reads it."""
    state = handling["state"]
    line = STATE_WORDS[state]
    if handling.get("assignee_email"):
        line += f", {'taken' if state == 'in_progress' else 'closed'} by {display.text(handling['assignee_email'])}"
    if handling.get("updated_at"):
        line += f" at {display.local_time(handling['updated_at'], context.now)}"
    lines = [f"handling: {line}"]
    if handling.get("note"):
        lines.append(f"note: {display.text(handling['note'])}")
    return lines


def _shown(context: Context, email_id: str) -> tuple[Any, str]:
    found = calls.fax_handling(_rpc(context), email_id)
    if found is None:
        raise Refusal("fax_not_found", f"there is no fax {email_id}")
    lines = [f"fax {email_id}", *handling_lines(found, context)]
    marks = found["history"]
    lines.append(f"marks ({len(marks)}, newest first)")
    for mark in marks:
        who = display.text(mark["actor_email"] or mark["actor_id"])
        note = f"  note: {display.text(mark['note'])}" if mark["note"] else ""
        lines.append(f"  {display.local_time(mark['at'], context.now)}  {who}: {mark['from']} -> {mark['to']}{note}")
    return found, "\n".join(lines)


def _mark(context: Context, email_id: str, args: argparse.Namespace) -> tuple[Any, str]:
    given_reason(args.note)
    who = _marker(context, args.actor, "handle FAX --mark")
    result = calls.mark(_rpc(context), email_id, who.id, args.mark, args.note, None)
    lines = handling_lines(result["handling"], context)
    if not result["changed"]:
        return result, f"fax {email_id} already stood so: nothing changed\n" + "\n".join(lines)
    return result, (f"fax {email_id} marked {STATE_WORDS[args.mark]}; recorded in the audit as "
                    f"{display.text(who.email)}\n" + "\n".join(lines))  # fmt: skip


def _bulk(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    found = commands.job_filter(args)
    if args.mark != "done":
        raise Refusal("usage", "a bulk mark is --mark done (the faxes a filter matches, marked done)")
    if not found:
        raise Refusal("filter_required", "a bulk mark done needs a filter: --state, --kind, --error-code, "
                      "--received-from, --received-to, --sender, --search")  # fmt: skip
    if not (args.dry_run or args.yes):
        raise Refusal(
            "confirmation_required",
            "a bulk mark done marks every fax the filter matches: run it with --dry-run first (it prints the count "
            "and the command that marks exactly those), or give --yes",
        )
    if args.yes and not (args.note or "").strip():
        raise Refusal("reason_required", "--note is required: it is kept with each fax and in the audit")
    given_reason(args.note)
    check_filters(context, args)
    who = _marker(context, args.actor, "a bulk mark done")
    prepared = calls.prepare_handling_bulk(_rpc(context), "jobs", found, who.id)
    if args.yes:
        return _apply(context, prepared["bulk_action_id"], who.email, args.note)
    count, scope = prepared["fax_count"], commands.described(context, prepared["filter"])
    if count == 0:
        return prepared | {"dry_run": True}, f"no fax that is not done yet matches ({scope}): nothing to mark"
    confirm = command_line("handle", "--confirm", prepared["bulk_action_id"], "--as", who.email, "--note",
                           args.note or REASON_PLACEHOLDER)  # fmt: skip
    text = (
        f"{display.count(count)} {'fax' if count == 1 else 'faxes'} would be marked done ({scope}; each fax "
        "once, those already done left out); dry run: nothing changed.\n"
        f"To mark exactly these {display.count(count)} done, within 15 minutes "
        f"(until {display.local_time(prepared['expires_at'], context.now)}):\n  {display.text(confirm)}"
    )
    return prepared | {"dry_run": True, "confirm": confirm}, text


def _apply(context: Context, bulk_action_id: str, email: str | None, note: str | None) -> tuple[Any, str]:
    if not (note or "").strip():
        raise Refusal("reason_required", "--note is required: it is kept with each fax and in the audit")
    given_reason(note)
    who = _marker(context, operator_email(email, "handle --confirm"), "handle --confirm")
    rpc = _rpc(context)
    progress = calls.apply_handling_bulk(rpc, bulk_action_id, who.id, note, BATCH_SIZE)
    while not progress["done"]:
        processed = progress["processed"]
        progress = calls.apply_handling_bulk(rpc, bulk_action_id, who.id, note, BATCH_SIZE)
        if progress["processed"] == processed and not progress["done"]:
            raise Refusal("bulk_action_stuck", f"bulk mark {bulk_action_id} made no progress: run it again")
    lines = [
        f"marked done {display.count(progress['changed'])} of {display.count(progress['fax_count'])} faxes "
        f"({commands.described(context, progress['filter'])}) as {display.text(who.email)}, note "
        f"{display.text(progress['note'] or '')!r}"
    ]
    if progress["skipped"]:
        lines.append(f"not marked: {display.count(progress['skipped'])} (already done since the count)")
        lines += [f"  {row['fax_received_email_id']}  {row['reason']}" for row in progress["not_changed"]]
    lines.append(f"recorded in the audit: bulk mark {bulk_action_id}")
    return progress | {"actor": {"id": who.id, "email": who.email}}, "\n".join(lines)
