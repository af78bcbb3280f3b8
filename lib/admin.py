"""The admin CLI: see and steer the queue without writing SQL (over the service-role client).

python -m lib.admin list [--status S] [--kind K] [--limit N] [--json]
python -m lib.admin show JOB_ID [--json]
python -m lib.admin retry JOB_ID
python -m lib.admin cancel JOB_ID [--reason TEXT]
python -m lib.admin stats [--json]
python -m lib.admin retention [--set INTERVAL]
python -m lib.admin purge [--older-than INTERVAL]
python -m lib.admin operators add EMAIL --role admin|viewer | list | remove EMAIL   (lib/operators.py)

Reads SUPABASE_URL and SUPABASE_SECRET_KEY (or, on a project with legacy keys,
SUPABASE_SERVICE_ROLE_KEY) from the environment. Every refusal, whether of the arguments, by the
database or of the network, or an answer that is not PostgREST's (a SUPABASE_URL pointing
elsewhere), is one line on standard error and a non-zero exit: 2 for arguments, 1 for what the
queue or the database refused, 3 for settings. Every text printed from the data (a sender, a
subject, a file name, an error message) goes through lib/terminal.py: no control sequence of a
sender's reaches the terminal, and a terminal that is not UTF-8 gets escapes instead of a
traceback.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn
from uuid import UUID

import httpx

from lib.database import DatabaseError, execute
from lib.settings import ConfigError, SupabaseSettings
from lib.supabase_client import TIMEOUT, service_client
from lib.terminal import encoding_of, terminal_json, terminal_text

if TYPE_CHECKING:
    from supabase import Client

JOB_COLUMNS = "id,kind,status,attempts,max_attempts,generation,created_at,run_after,lease_until,finished_at," \
              "last_error_code,last_error_message,fax_received_email_id"  # fmt: skip
ATTEMPT_COLUMNS = "attempt,generation,started_at,finished_at,outcome,error_code,error_message,invocation_id"
STATUSES = ("queued", "running", "completed", "failed")
Row = dict[str, Any]


class AdminError(Exception):
    """A refusal to show the operator (exit status 1)."""


class NotPostgrest(AdminError):
    """An answer of the wrong shape: SUPABASE_URL is not a Supabase project's (or not its root)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: the answer is not PostgREST's; check SUPABASE_URL (the project's URL, no path)")


def shown(value: Any) -> str:
    """A value as the operator's terminal shows it: one line, no control sequence, in its encoding."""
    return terminal_text("" if value is None else str(value), encoding_of())


def _rows(value: Any, what: str) -> list[Row]:
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise NotPostgrest(what)
    return value


def _answer(value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise NotPostgrest(what)
    return value


def display_width(text: str) -> int:
    """Columns in a terminal: Japanese characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def table(rows: Sequence[Row], columns: Sequence[str]) -> str:
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [
        max([display_width(column)] + [display_width(line[i]) for line in cells]) for i, column in enumerate(columns)
    ]
    lines = [columns, ["-" * w for w in widths], *cells]
    return "\n".join(
        "  ".join(
            value + " " * (width - display_width(value)) for value, width in zip(line, widths, strict=True)
        ).rstrip()
        for line in lines
    )


def _cell(value: Any) -> str:
    text = shown(value)
    return text if len(text) <= 60 else text[:57] + "..."


def age(timestamp: str | None, now: datetime) -> str:
    if not timestamp:
        return ""
    seconds = int((now - datetime.fromisoformat(timestamp)).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if abs(seconds) >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def took(started: str | None, finished: str | None) -> str:
    """How long an attempt took, e.g. 1.234 s (for a lost attempt: until its lease passed)."""
    if not started or not finished:
        return ""
    return f"{(datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds():.3f} s"


def _rpc(client: Client, function: str, params: dict[str, Any], kind: type) -> Any:
    return _answer(execute(function, client.rpc(function, params)), kind, function)


def job_id(text: str) -> str:
    """An argparse type: a job id is a UUID, refused here rather than by the database."""
    try:
        return str(UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a job id (a UUID)") from None


def positive(text: str) -> int:
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return int(text)


def list_jobs(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    query = client.table("document_jobs").select(JOB_COLUMNS).order("created_at", desc=True).limit(args.limit)
    if args.status:
        query = query.eq("status", args.status)
    if args.kind:
        query = query.eq("kind", args.kind)
    rows = _rows(execute("list jobs", query), "list jobs")
    now = datetime.now(UTC)
    listed = [row | {"age": age(row["created_at"], now), "attempt": f"{row['attempts']}/{row['max_attempts']}",
                     "error": row["last_error_code"] or ""} for row in rows]  # fmt: skip
    return rows, table(listed, ["id", "kind", "status", "age", "attempt", "error"]) if rows else "no jobs"


def show_job(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    query = client.table("document_jobs").select(JOB_COLUMNS).eq("id", args.job_id)
    jobs = _rows(execute("read job", query), "read job")
    if not jobs:
        raise AdminError(f"no job {args.job_id}")
    job = jobs[0]
    email: Row | None = None
    attachments: list[Row] = []
    if job["fax_received_email_id"]:
        emails = _rows(execute(
            "read e-mail",
            client.table("fax_received_emails")
            .select("id,provider_email_id,from_address,to_addresses,subject,received_at,created_at")
            .eq("id", job["fax_received_email_id"]),
        ), "read e-mail")  # fmt: skip
        email = emails[0] if emails else None
        attachments = _rows(execute(
            "read attachments",
            client.table("fax_received_email_attachments")
            .select("provider_attachment_id,filename,content_type,size_bytes,sha256,bucket,storage_path")
            .eq("fax_received_email_id", job["fax_received_email_id"])
            .order("filename"),
        ), "read attachments")  # fmt: skip
    attempts = _rows(execute(
        "read attempts",
        client.table("document_job_attempts").select(ATTEMPT_COLUMNS).eq("job_id", args.job_id).order("generation"),
    ), "read attempts")  # fmt: skip
    text = "\n".join(f"{key:>20}: {shown(value)}" for key, value in job.items())
    if email:
        text += "\n\ne-mail\n" + "\n".join(f"{key:>20}: {shown(value)}" for key, value in email.items())
    text += f"\n\nattempts ({len(attempts)})"
    if attempts:
        history = [row | {"started": row["started_at"], "took": took(row["started_at"], row["finished_at"]),
                          "error": row["error_code"] or "", "invocation": row["invocation_id"] or ""}
                   for row in attempts]  # fmt: skip
        text += "\n" + table(history, ["attempt", "generation", "started", "took", "outcome", "error", "invocation"])
        text += "".join(
            f"\n  generation {row['generation']}: {shown(row['error_message'])}"
            for row in attempts
            if row["error_message"]
        )
    text += f"\n\nstored attachments ({len(attachments)})"
    if attachments:
        text += "\n" + table(attachments, ["filename", "content_type", "size_bytes", "storage_path"])
    return {"job": job, "email": email, "attempts": attempts, "attachments": attachments}, text


def retry_job(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    if not _rpc(client, "retry_document_job", {"p_job_id": args.job_id}, bool):
        raise AdminError(f"job {args.job_id} was not retried: only a failed job can be")
    return {"retried": args.job_id}, f"job {args.job_id} is queued again (attempts reset to 0)"


def cancel_job(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    if not _rpc(client, "cancel_document_job", {"p_job_id": args.job_id, "p_reason": args.reason}, bool):
        raise AdminError(f"job {args.job_id} was not cancelled: only a queued or running job can be")
    return {"cancelled": args.job_id}, f"job {args.job_id} is cancelled (failed, last_error_code = cancelled)"


def stats(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    data = _rpc(client, "document_jobs_stats", {}, dict)
    counts = {(row["kind"], row["status"]): row["count"] for row in data["by_kind_and_status"]}
    kinds = sorted({kind for kind, _ in counts})
    grid = [{"kind": kind, **{status: counts.get((kind, status), 0) for status in STATUSES}} for kind in kinds]
    lag = data["oldest_claimable_age_seconds"]
    lines = [
        table(grid, ["kind", *STATUSES]) if grid else "no jobs",
        "",
        f"claimable now:        {data['claimable']}" + (f" (oldest waiting {lag:.0f} s)" if lag is not None else ""),
        f"running:              {data['running']}",
        f"waiting in backoff:   {data['in_backoff']}",
        f"failed, last hour:    {data['failed_last_hour']}",
        f"last completion:      {shown(data['last_completed_at'] or 'never')}",
        f"completed jobs kept:  {shown(data['retention'])}",
    ]
    return data, "\n".join(lines)


def retention(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    if args.set:
        value = _rpc(client, "set_document_jobs_retention", {"p_completed_job_retention": args.set}, str)
    else:
        value = _rpc(client, "document_jobs_stats", {}, dict)["retention"]
    return {"completed_job_retention": value}, f"completed jobs are kept for {shown(value)}"


def purge(client: Client, args: argparse.Namespace) -> tuple[Any, str]:
    deleted = _rpc(client, "purge_document_jobs", {"p_older_than": args.older_than}, int)
    return {"deleted": deleted}, f"deleted {deleted} completed jobs"


Command = Callable[["Client", argparse.Namespace], tuple[Any, str]]


class _Parser(argparse.ArgumentParser):
    """argparse, but a refusal is one line (its default adds the usage; --help still shows it)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="python -m lib.admin", description="See and steer the document jobs queue.")
    commands = root.add_subparsers(dest="command", required=True)

    def command(name: str, run: Command, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument("--json", action="store_true", help="print JSON instead of a table")
        sub.set_defaults(run=run)
        return sub

    listing = command("list", list_jobs, "list jobs, newest first, with age, attempts and last error")
    listing.add_argument("--status", choices=STATUSES)
    listing.add_argument("--kind")
    listing.add_argument("--limit", type=positive, default=50)
    command("show", show_job, "show one job: its attempts, e-mail and stored attachments").add_argument(
        "job_id", type=job_id
    )
    command("retry", retry_job, "queue a failed job again (attempts reset to 0)").add_argument("job_id", type=job_id)
    cancel = command(
        "cancel", cancel_job, "cancel a queued or running job; its worker stops at its next lease extension"
    )
    cancel.add_argument("job_id", type=job_id)
    cancel.add_argument("--reason", help="recorded as the job's last_error_message")
    command("stats", stats, "queue health: counts, queue lag, backoff, recent failures, last completion")
    command("retention", retention, "show or set how long completed jobs are kept").add_argument(
        "--set", metavar="INTERVAL", help="a Postgres interval, e.g. '90 days' (1 hour to 10 years)"
    )
    command("purge", purge, "delete completed jobs now (the daily cron job does this)").add_argument(
        "--older-than", metavar="INTERVAL", help="1 hour to 10 years; default: the retention setting"
    )
    commands.add_parser("operators", help="who may use the admin screen: add, list, remove (see operators --help)")
    return root


def _refuse(error: Exception) -> None:
    print(f"error: {terminal_text(str(error), encoding_of(sys.stderr))}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["operators"]:  # who may use the admin screen: Supabase Auth, not the queue
        from lib import operators

        return operators.main(argv[1:])
    args = parser().parse_args(argv)
    try:
        settings = SupabaseSettings.load()
    except ConfigError as error:
        _refuse(error)
        return 3
    with httpx.Client(timeout=TIMEOUT) as http:
        try:
            data, text = args.run(service_client(settings, http), args)
        except (AdminError, DatabaseError) as error:
            _refuse(error)
            return 1
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            # A field missing from an answer that otherwise looked like PostgREST's.
            _refuse(NotPostgrest(f"{args.command} ({type(error).__name__})"))
            return 1
    print(terminal_json(data, encoding_of()) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
