"""The admin CLI, document-jobs-admin: see and steer the queue without writing SQL (with the
project's server key), through the admin screen's own SQL functions (lib/screen/calls.py).

Reads SUPABASE_URL and SUPABASE_SECRET_KEY (or, on a project with legacy keys,
SUPABASE_SERVICE_ROLE_KEY) from the environment. Every refusal is one line on standard error
naming what happened, with a stable code (a JSON object {"error": code, "message": ...} under
--json) and the exit status below; commands.py holds the commands, display.py how they print.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NoReturn

import httpx

from lib.admin import PROGRAM, bulk, commands, export, handling, prepare, reconcile, retention, verify
from lib.admin.commands import Context, add_filter_options, job_id, positive, since_or_until, uuid_id
from lib.admin.faxes import add_options, search
from lib.admin.terminal import encoding_of, terminal_json, terminal_text
from lib.errors import Refusal
from lib.settings import PUBLISHABLE_KEY_PREFIX, SERVER_KEY_VARIABLES, ConfigError, SupabaseSettings
from lib.supabase.client import TIMEOUT, service_client
from lib.supabase.keys import is_jwt

EXIT_STATUSES = """exit status:
  0  done (a dry run included)
  1  refused by the queue or the database, or not found (a job, an attachment, a stored object);
     or the operator of --as may not act now (not an admin, or banned or deleted in Supabase Auth)
  2  the arguments (an unknown command, flag, status, kind or error code, a value out of bounds,
     a --reason that is a printed command's placeholder WHY)
  3  the settings (SUPABASE_URL: missing, or not a project's API; the key: missing, invalid, or
     not a server key)
  4  the database or Storage, or Auth, could not be reached
  5  health: an outage is open, a guard of the record of received faxes is not in place,
     or a required Vault secret (document_jobs_url, internal_function_secret) is missing;
     without the optional document_jobs_alert_url alerts are off, which is not an error (0)
  6  verify, export: a stored original is missing from Storage, or its size or SHA-256 is not the
     recorded one
  141  standard output was closed before all was written (a pipe into head): as a command
       stopped by SIGPIPE, with nothing on standard error

errors: one line on standard error, "error: <message>"; with --json, one JSON object
{"error": "<code>", "message": "...", ...} on standard error. The codes are stable."""

# The exit status of each refusal's code, as EXIT_STATUSES tells them; any other code is 1 (refused,
# or not found). The one place a code becomes an exit status: the commands only name the code.
EXIT_STATUS = {
    **dict.fromkeys(
        ("usage", "invalid_argument", "unknown_kind", "unknown_error_code", "filter_too_wide", "not_a_folder",
         "actor_required", "filter_required", "confirmation_required", "reason_required", "reason_placeholder",
         "folder_not_empty", "export_mark_invalid"),
        2,
    ),
    "export_mismatch": 6,
    **dict.fromkeys(("settings", "wrong_key", "not_postgrest"), 3),
    **dict.fromkeys(("database_unreachable", "storage_unreachable", "auth_unavailable"), 4),
}  # fmt: skip


def refusal_exit_status(refusal: Refusal) -> int:
    return EXIT_STATUS.get(refusal.code, 1)


class _Parser(argparse.ArgumentParser):
    """argparse, but a refusal is a Refusal (one line, or JSON), not the usage and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise Refusal("usage", f"{message} (see {self.prog} --help)")


def parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog=PROGRAM,
        description="See and steer the document jobs queue.",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--json", action="store_true", help="print JSON (also after the command)")
    subcommands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: commands.Command, summary: str) -> argparse.ArgumentParser:
        sub = subcommands.add_parser(
            name,
            help=summary,
            description=summary,
            epilog=EXIT_STATUSES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        # SUPPRESS: `--json list` and `list --json` both set it; the subcommand's default must
        # not reset what the root parsed.
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text")
        sub.set_defaults(run=run)
        return sub

    listing = command("list", commands.list_jobs, "list jobs, newest first, as the admin screen's list filters them")
    add_filter_options(listing)
    listing.add_argument("--limit", type=positive, default=50, help="at most this many rows (default 50)")

    command("show", commands.show_job, "show one job as the admin screen does: its attempts, e-mail and attachments")
    subcommands.choices["show"].add_argument(
        "job_id", type=job_id, help="a job id, or 6 or more of its first hex characters (or of its e-mail's id)"
    )

    retry = command(
        "retry",
        bulk.retry,
        "queue a failed job again (attempts reset to 0; a worker is started for it), or every failed job a filter "
        "matches (--dry-run); audited, as the operator of --as",
    )
    retry.add_argument("job_id", type=job_id, nargs="?", help="one job; or give a filter instead (a bulk retry)")
    _action_options(retry, "retry")
    cancel = command(
        "cancel",
        bulk.cancel,
        "cancel a queued or running job (its worker stops at its next fenced write), or every one a filter matches; "
        "audited, as the operator of --as",
    )
    cancel.add_argument("job_id", type=job_id, nargs="?", help="one job; or give a filter instead (a bulk cancel)")
    _action_options(cancel, "cancel")
    handling.add_arguments(
        command(
            "handle",
            handling.run,
            "who is dealing with a fax: show it, or mark it new, in_progress (taken by you) or done with a note; or "
            "mark done every fax a filter matches (--dry-run, then --confirm); audited, as the clerk or admin of --as",
        )
    )
    confirm = command("confirm", bulk.confirm, "apply a bulk retry or cancel that a --dry-run counted")
    confirm.add_argument("bulk_action_id", type=uuid_id, metavar="BULK_ACTION_ID", help="from the dry run")
    _as_option(confirm, "the admin who ran the dry run")
    confirm.add_argument("--reason", required=True, help="why: recorded in the audit (and on cancelled jobs)")

    reconciling = command(
        "reconcile",
        reconcile.run,
        "record now every e-mail Resend received since a time that no webhook delivered (--as, --dry-run)",
    )
    reconciling.add_argument(
        "--since", type=since_or_until, required=True, help="back to: ISO 8601, or an age (20h); at most retention"
    )
    reconciling.add_argument(
        "--after", metavar="ID", help="start after this e-mail id (what a run stopped at its page bound prints)"
    )
    _as_option(reconciling, "the admin it is recorded for")
    reconciling.add_argument("--dry-run", action="store_true", help="count and list what would be recorded")

    preparing = command(
        "prepare",
        prepare.run,
        "prepare for the screen the faxes stored before the prepare_fax job existed: count them (--dry-run), or "
        "enqueue their jobs in batches, with progress, audited as the admin of --as; run again, it adds nothing twice",
    )
    _as_option(preparing, "the admin it is recorded for")
    preparing.add_argument("--dry-run", action="store_true", help="count the faxes not yet prepared; enqueue nothing")
    preparing.add_argument("--batch", type=positive, default=prepare.BATCH,
                           help=f"e-mails a batch looks at, 1 to 1000 (default {prepare.BATCH})")  # fmt: skip
    verifying = command(
        "verify",
        verify.run,
        "read the stored originals back from Storage and compare each with its recorded size and SHA-256: every "
        "one, those stored --since, or a random --sample; each mismatch printed with its fax's short id (exit 6)",
    )
    verifying.add_argument("--since", type=since_or_until, help="only those stored since: ISO 8601, or an age (7d)")
    verifying.add_argument(
        "--sample",
        type=positive,
        metavar="N",
        help=f"a random N of them, half among recent ones (1 to {verify.MAX_SAMPLE:,})",
    )
    export.add_arguments(command(
        "export",
        export.run,
        "write the stored originals to a folder, named YYYYMMDD_取引先_金額_<short id>, with an index CSV (for "
        "Excel) and SHA256SUMS: those filed --from/--to (a tax officer's download request), or --since-last, "
        "what was recorded since the last run (the office's own copy); each checked against its SHA-256 (exit 6)",
    ))  # fmt: skip
    retention.add_arguments(command)
    add_options(command(
        "faxes",
        search,
        "list received faxes newest first with the count, searched as the law asks: transaction date and amount "
        "ranges, counterparty (part of it, kana and width alike), document type, combined freely",
    ))  # fmt: skip
    command("stats", commands.stats, "queue health: counts, queue lag, backoff, recent failures, last completion")
    command(
        "health",
        commands.health,
        "the flow's health: open outages, the worker's answers, the Vault secrets, whether alerts are on",
    )
    command("retention", commands.retention, "show or set how long completed jobs are kept").add_argument(
        "--set", metavar="INTERVAL", help="e.g. '90 days', '1 month' (1 hour to 10 years)"
    )
    purge = command("purge", commands.purge, "delete completed jobs now (the daily cron job does this)")
    purge.add_argument("--older-than", metavar="INTERVAL", help="1 hour to 10 years; default: the retention setting")
    purge.add_argument("--dry-run", action="store_true", help="count what would be deleted; delete nothing")
    download = command("download", commands.download, "write a stored fax (a job's attachments, or one) to files")
    download.add_argument("target", help="a job id, an attachment's id, or Resend's attachment id")
    download.add_argument("-o", "--output", default=".", help="a folder (default: here), or a file for one attachment")
    # Dispatched to lib/admin/operators.py before parsing (main); listed here for --help.
    subcommands.add_parser(
        "operators",
        help="who may use the admin screen (admin, clerk, viewer): add, invite, reset-password, list, remove "
        "(operators --help)",
    )
    return root


def _as_option(sub: argparse.ArgumentParser, who: str) -> None:
    sub.add_argument("--as", dest="actor", metavar="EMAIL", help=f"{who} (else ${bulk.OPERATOR_VARIABLE})")


def _action_options(sub: argparse.ArgumentParser, action: str) -> None:
    """The filter of a bulk action (the admin screen's), who acts, and how it is confirmed."""
    add_filter_options(sub, "bulk: ")
    _as_option(sub, "the admin (of the admin screen) who acts")
    sub.add_argument("--dry-run", action="store_true", help="bulk: count, change nothing, print the confirmation")
    sub.add_argument("--yes", action="store_true", help="bulk: count and apply at once, without a dry run")
    sub.add_argument(
        "--reason",
        help="why: recorded in the audit" + (" and as the jobs' last_error_message (required)" if action == "cancel"
                                             else ""),
    )  # fmt: skip


def _wants_json(argv: Sequence[str]) -> bool:
    options = argv[: list(argv).index("--")] if "--" in argv else argv
    return "--json" in options


def _check_key(settings: SupabaseSettings) -> None:
    """The key must be the service role's: a publishable or anon key passes every setting check
    and then fails each call as a missing privilege, far from its cause."""
    name = SERVER_KEY_VARIABLES[0] if settings.supabase_secret_key is not None else SERVER_KEY_VARIABLES[1]
    key = settings.server_key
    if is_jwt(key):
        import jwt

        try:
            role = jwt.decode(key, options={"verify_signature": False}).get("role")
        except jwt.InvalidTokenError:
            role = None
        if role != "service_role":
            raise Refusal(
                "wrong_key",
                f"{name} is a JWT for the role {role!r} (the anon key?): the admin CLI needs "
                "the project's secret key (sb_secret_...) or its legacy service_role key",
                status=500,
            )


def _settings() -> SupabaseSettings:
    for name in SERVER_KEY_VARIABLES:
        if os.environ.get(name, "").startswith(PUBLISHABLE_KEY_PREFIX):
            raise Refusal(
                "wrong_key",
                f"{name} is a publishable key (sb_publishable_...): the admin CLI needs the "
                "project's secret key (sb_secret_..., Project Settings > API Keys)",
                status=500,
            )
    try:
        settings = SupabaseSettings.load()
    except ConfigError as error:
        raise Refusal("settings", str(error), status=500) from None
    _check_key(settings)
    return settings


def _report(refusal: Refusal, as_json: bool) -> None:
    # ASCII JSON: every control character and every non-ASCII one is a \u escape, so the line is
    # safe on any terminal and still the same JSON.
    shown = terminal_text(refusal.message, encoding_of(sys.stderr))
    print(json.dumps(refusal.body(), default=str) if as_json else f"error: {shown}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    try:
        if argv[:1] == ["operators"]:  # who may use the admin screen: Supabase Auth, not the queue
            from lib.admin import operators

            return operators.main(argv[1:])
        args = parser().parse_args(argv)
        settings = _settings()
        with httpx.Client(timeout=TIMEOUT) as http:
            context = Context(service_client(settings, http), http, settings, datetime.now(UTC))
            try:
                data, shown = args.run(context, args)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
                # A field missing from an answer that otherwise looked like PostgREST's.
                raise commands.not_postgrest(context, f"{args.command} ({type(error).__name__})") from error
    except Refusal as refusal:
        _report(refusal, as_json)
        return refusal_exit_status(refusal)
    print(terminal_json(data, encoding_of()) if args.json else shown)
    return commands.exit_status(data)
