"""The admin CLI's commands: each reads or changes the queue through PostgREST (supabase-py, the
server key) and answers (data for --json, text for a person), or raises a Refusal that says
what happened."""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

import httpx

from lib.admin import display, reconciliation_status
from lib.attachment_names import download_name
from lib.errors import DatabaseError, Refusal
from lib.explanations import job_codes, outage_explanation
from lib.failures import FailureCode
from lib.screen import calls
from lib.settings import SupabaseSettings
from lib.supabase.rpc import Executable, execute
from lib.supabase.storage import Storage, StorageError

if TYPE_CHECKING:
    from supabase import Client

# What download reads of an attachment: where it is stored, and what it must be.
ATTACHMENT_COLUMNS = "id,provider_attachment_id,filename,content_type,size_bytes,sha256,bucket,storage_path"
STATUSES = ("queued", "running", "completed", "failed")
# What `show` prints of document_jobs_admin_job's job (its e-mail, null there, is printed apart) and e-mail.
JOB_FIELDS = (
    "id", "kind", "status", "attempts", "max_attempts", "generation", "created_at", "run_after", "started_at",
    "lease_until", "finished_at", "last_error_code", "last_error_message", "fax_received_email_id",
)  # fmt: skip
EMAIL_FIELDS = (
    "id", "provider", "provider_email_id", "from", "to", "cc", "subject", "message_id", "received_at", "created_at",
    "found_by",
)  # fmt: skip
TIMES = ("created_at", "run_after", "lease_until", "finished_at", "received_at", "started_at", "stored_at")
# The codes only the database writes (the worker's are FailureCode).
DATABASE_ERROR_CODES = ("lease_expired", "cancelled")
# One page of the screen's list (document_jobs_admin_jobs takes 1 to 200).
MAX_PAGE = 200
# Columns of `list`, in display columns: a sender's 52-character Japanese name must not widen it.
LIST_LIMITS = {"sender": 28, "subject": 32, "error": 26}
# The database's refusals of an action's operator (SQLSTATE, hint), as the CLI's own lookup names them
# (lib/admin/bulk.py actor), and of a deletion, by the codes the CLI reports.
ACTOR_REFUSALS: dict[tuple[str | None, str | None], str] = {
    ("28000", "operator_banned"): "operator_banned",
    ("28000", "operator_deleted"): "operator_deleted",
    ("42501", "role_not_allowed"): "not_an_admin",
    ("42501", "no_role"): "not_an_operator",
    # admin_delete_fax's (lib/admin/retention.py): the fax's keep-until date is not past, a job of it is live.
    ("55000", "retention_not_over"): "retention_not_over",
    ("55000", "jobs_live"): "jobs_live",
}
# postgrest-py's message for an answer that is not JSON (an HTML page, a proxy's error).
NOT_JSON = "JSON could not be generated"
Row = dict[str, Any]
SHORT_ID = 8  # characters of a job id that `list` shows, as the screen does


@dataclass
class Context:
    client: Client
    http: httpx.Client
    settings: SupabaseSettings
    now: datetime
    flags: Mapping[str, str] = field(default_factory=dict)


Command = Callable[[Context, argparse.Namespace], tuple[Any, str]]


# --- argument types (argparse turns their ValueError into a usage refusal) ---------------------


_ID_PREFIX = re.compile(r"[0-9a-f]{6,32}")


def id_prefix(value: str) -> str | None:
    """An id as people copy it: lower case, no hyphens, when 6 to 32 hex characters remain."""
    text = value.strip().replace("-", "").lower()
    return text if _ID_PREFIX.fullmatch(text) else None


def job_id(value: str) -> str:
    """A job id, whole or as people see it (the list's 8 characters, any prefix of at least 6 hex
    characters of a job id, an e-mail row id or Resend's e-mail id): resolve_job() finds its job."""
    if id_prefix(value) is None:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a job id (a UUID, or at least 6 of its hex characters, or of its e-mail's id)"
        )
    return value.strip()


def uuid_id(value: str) -> str:
    try:
        return str(UUID(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an id (a UUID)") from None


def positive(value: str) -> int:
    if not (value.isascii() and value.isdigit() and int(value) > 0):
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number above 0")
    return int(value)


_AGE = re.compile(r"(\d+)\s*(m|min|h|d)", re.ASCII)
_AGE_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400}


def since_or_until(value: str) -> datetime:
    """An ISO 8601 time (the operator's time zone when it names none), or an age: 30m, 2h, 7d."""
    age = _AGE.fullmatch(value.strip())
    if age:
        return datetime.now(UTC) - timedelta(seconds=int(age.group(1)) * _AGE_UNITS[age.group(2)])
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is neither an ISO 8601 time nor an age (30m, 2h, 7d)") from None
    return at if at.tzinfo else at.astimezone()


# --- calls ------------------------------------------------------------------------------------


def refused(context: Context, error: DatabaseError, flags: Mapping[str, str]) -> Refusal:
    """What a database error means to the operator, in the CLI's words."""
    url = context.settings.supabase_url
    if error.code is None and error.message.startswith("unreachable"):
        return Refusal(
            "database_unreachable",
            f"cannot reach the database at {url} (SUPABASE_URL): "
            + error.message.removeprefix("unreachable (").removesuffix(")"),
            status=503,
            url=url,
        )
    # No PostgREST error body: only the HTTP status (or a body that is not JSON at all).
    status = error.code if error.code is not None and len(error.code) == 3 and error.code.isdigit() else None
    bare = error.message == NOT_JSON or (status is not None and status != "401")
    if bare and (error.code or "").startswith("5"):
        return Refusal(
            "database_unreachable",
            f"{url} (SUPABASE_URL) answered {error.code} without PostgREST's error: the project may be "
            "paused or restarting, or a proxy stands in the way",
            status=503,
            url=url,
        )
    if bare:
        return not_postgrest(context, error.what)
    # The action's own check of the operator of --as in Auth's row (document_jobs_internal.acting_operator):
    # banned or deleted after the CLI looked them up, or their role changed.
    actor_refusal = ACTOR_REFUSALS.get((error.code, error.hint))
    if actor_refusal is not None:
        return Refusal(actor_refusal, error.message)
    if error.code in ("401", "42501") or error.message.lower() in ("invalid api key", "unauthorized"):
        return Refusal(
            "wrong_key",
            f"{url} refused the key ({error}): the admin CLI needs a secret key of this "
            "project (sb_secret_...) in SUPABASE_SECRET_KEY, or its legacy service_role key",
            status=500,
        )
    if error.code in ("22023", "22007", "22008", "22P02", "22015"):
        message = error.message
        for parameter, flag in flags.items():
            message = message.replace(parameter, flag)
        if message == error.message and len(flags) == 1:
            message = f"{next(iter(flags.values()))}: {message}"
        return Refusal("invalid_argument", message)
    return Refusal("database_error", str(error), sqlstate=error.code)


def not_postgrest(context: Context, what: str) -> Refusal:
    """An answer of the wrong shape: SUPABASE_URL points at something that is not a project's API."""
    return Refusal(
        "not_postgrest",
        f"{what}: the answer at {context.settings.supabase_url} is not PostgREST's; "
        "check SUPABASE_URL (the project's URL, no path)",
        status=500,
        url=context.settings.supabase_url,
    )


def call(context: Context, what: str, request: Executable, flags: Mapping[str, str] | None = None) -> Any:
    try:
        return execute(what, request)
    except DatabaseError as error:
        raise refused(context, error, flags or {}) from error


def rpc_of(context: Context, flags: Mapping[str, str] | None = None) -> calls.Rpc:
    """A way of calling a function for lib/screen/calls.py: the CLI's refusals, flags named."""
    return lambda function, params: call(context, function, context.client.rpc(function, params), flags)


def rpc(
    context: Context, function: str, params: dict[str, Any], kind: type, flags: Mapping[str, str] | None = None
) -> Any:
    """A function's answer, of the type it is declared to return (else: not PostgREST's)."""
    value = call(context, function, context.client.rpc(function, params), flags)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise not_postgrest(context, function)
    return value


def _rows(context: Context, what: str, request: Executable) -> list[Row]:
    rows = call(context, what, request)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise not_postgrest(context, what)
    return rows


def find_jobs(context: Context, value: str) -> Row:
    """document_jobs_find_by_id's answer: the jobs an id or a prefix names."""
    found = rpc(context, "document_jobs_find_by_id", {"p_id": value}, dict, {"p_id": "the id"})
    return found  # type: ignore[no-any-return]


def resolve_job(context: Context, value: str) -> str:
    """The one job an id names (whole, or a prefix of a job's, an e-mail's or Resend's e-mail id);
    a refusal that lists them when it names several, or says so when it names none."""
    try:
        whole = str(UUID(value))
    except ValueError:
        whole = None
    found = find_jobs(context, value)
    jobs = found["jobs"]
    named = [job for job in jobs if "job_id" in job["matched"]] if whole else []
    if len(named) == 1:  # a whole job id names its job, whatever e-mail id it also is
        return str(named[0]["id"])
    if len(jobs) == 1:
        return str(jobs[0]["id"])
    if not jobs:
        why = "" if whole else " (no job, e-mail or Resend e-mail id starts with it)"
        raise Refusal("job_not_found", f"there is no job {value}{why}")
    listed = "\n".join(
        f"  {job['id']}  {job['status']:<9}  {display.local_time(job['created_at'], context.now)}  "
        f"(its {', '.join(str(m).replace('_', ' ') for m in job['matched'])})"
        for job in jobs
    )
    more = " or more" if found["more"] else ""
    raise Refusal(
        "ambiguous_id",
        f"{value} names {len(jobs)}{more} jobs: give more of the id\n{listed}",
        jobs=[job["id"] for job in jobs],
    )


def _job(context: Context, job: str) -> Row | None:
    rows = _rows(context, "read job", context.client.table("document_jobs").select("id,fax_received_email_id")
                 .eq("id", job))  # fmt: skip
    return rows[0] if rows else None


def _ordered(row: Row, keys: tuple[str, ...]) -> Row:
    """A row's fields in the order a person reads them (jsonb keeps its keys by length), then any
    others the function answers."""
    return {key: row[key] for key in keys if key in row} | {key: v for key, v in row.items() if key not in keys}


def _times(row: Row, now: datetime) -> Row:
    return {key: display.local_time(value, now) if key in TIMES else value for key, value in row.items()}


# --- the filter (the admin screen's: document_jobs_internal.job_filter) ------------------------

# The flags of the filter, as `list` and the bulk retry and cancel take them, and the names the
# database's messages give them.
FILTER_FLAGS = {
    "p_filter.states": "--state",
    "p_filter.kind": "--kind",
    "p_filter.error_code": "--error-code",
    "p_filter.received_from": "--received-from",
    "received_to": "--received-to",
    "p_filter.sender": "--sender",
    "p_filter.q": "--search",
    "p_limit": "--limit",
    "p_reason": "--reason",
}
FILTER_OPTIONS = ("state", "kind", "error_code", "received_from", "received_to", "sender", "search")


def add_filter_options(sub: argparse.ArgumentParser, prefix: str = "") -> None:
    """The admin screen's filter as flags (its list's filters and search box)."""
    sub.add_argument("--state", action="append", choices=STATUSES, help=f"{prefix}in this state (again for several)")
    sub.add_argument("--kind", help=f"{prefix}a kind of document_job_kinds (fetch_email)")
    sub.add_argument("--error-code", help=f"{prefix}the job's last_error_code, e.g. resend_unauthorized")
    sub.add_argument("--received-from", type=since_or_until, metavar="TIME",
                     help=f"{prefix}received at or after: ISO 8601, or an age (30m, 2h, 7d)")  # fmt: skip
    sub.add_argument("--received-to", type=since_or_until, metavar="TIME",
                     help=f"{prefix}received before: ISO 8601, or an age (30m, 2h, 7d)")  # fmt: skip
    sub.add_argument("--sender", help=f"{prefix}part of the sender's address or name (any case): only the sender's "
                     "text, not the subject's")  # fmt: skip
    sub.add_argument("--search", help=f"{prefix}the screen's search: a job or e-mail id or 6+ of its first hex "
                     "characters, Resend's e-mail id, or text of the sender or subject")  # fmt: skip


def job_filter(args: argparse.Namespace) -> dict[str, Any]:
    """The admin screen's filter of the flags."""
    return calls.job_filter({
        "states": args.state,
        "kind": args.kind,
        "error_code": args.error_code,
        "received_from": args.received_from.isoformat() if args.received_from else None,
        "received_to": args.received_to.isoformat() if args.received_to else None,
        "sender": args.sender,
        "q": args.search,
    })  # fmt: skip


def described(context: Context, found: Mapping[str, Any]) -> str:
    """A filter in words (as the database normalized it)."""
    words = []
    if "states" in found:
        words.append(" or ".join(found["states"]))
    if "error_code" in found:
        words.append(f"error code {found['error_code']}")
    if "kind" in found:
        words.append(f"kind {found['kind']}")
    if "received_from" in found:
        words.append(f"received since {display.local_time(found['received_from'], context.now)}")
    if "received_to" in found:
        words.append(f"received before {display.local_time(found['received_to'], context.now)}")
    if "sender" in found:
        words.append(f"from a sender with {found['sender']!r}")
    if "q" in found:
        words.append(f"matching {found['q']!r}")
    return display.text(", ".join(words))


def _known_error_codes() -> set[str]:
    return {code.value for code in FailureCode} | set(DATABASE_ERROR_CODES)


def _check_kind(context: Context, kind: str) -> None:
    kinds = [
        row["kind"] for row in _rows(context, "read kinds", context.client.table("document_job_kinds").select("kind"))
    ]
    if kind not in kinds:
        raise Refusal("unknown_kind", f"--kind {kind!r} is not a kind of job (known: {', '.join(sorted(kinds))})")


def check_filters(context: Context, args: argparse.Namespace) -> None:
    """An unknown error code or kind is the operator's typo, not a filter that matches nothing."""
    if args.error_code and args.error_code not in _known_error_codes():
        raise Refusal(
            "unknown_error_code",
            f"--error-code {args.error_code!r} is not an error code (known: {', '.join(sorted(_known_error_codes()))})",
        )
    if args.kind:
        _check_kind(context, args.kind)


# --- list -------------------------------------------------------------------------------------


def list_jobs(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    """The screen's list (document_jobs_admin_jobs), page after page up to --limit."""
    check_filters(context, args)
    found = job_filter(args)
    rpc = rpc_of(context, FILTER_FLAGS)
    rows: list[Row] = []
    first: Row | None = None
    after: Row | None = None
    while True:
        after_time, after_id = (str(after["created_at"]), str(after["id"])) if after else (None, None)
        page = calls.jobs(rpc, found, after_time, after_id, min(MAX_PAGE, args.limit - len(rows)))
        first = first or page
        rows += page["jobs"]
        after = page["next"]
        if after is None or len(rows) >= args.limit:
            break
    total = first["count"]  # exact up to 10,000, without a search term
    more = after is not None
    listed = []
    for row in rows:
        email = row["email"] or {}
        waits = row["status"] == "queued" and datetime.fromisoformat(row["run_after"]) > context.now
        listed.append(
            row
            | {
                # The screen's short id: it names the job in every command (resolve_job).
                "id": row["id"][:SHORT_ID],
                "received": display.local_time(row["created_at"], context.now),
                "attempt": f"{row['attempts']}/{row['max_attempts']}",
                "next run": display.local_time(row["run_after"], context.now) if waits else "",
                "sender": email.get("from"),
                "subject": email.get("subject"),
                "error": row["last_error_code"] or "",
            }
        )
    data = {"jobs": rows, "total": total, "more": more, "filter": first["filter"]}
    if not rows:
        return data, "no jobs match" if not more else "no jobs shown (--limit for more)"
    columns = ["id", "status", "received", "attempt", "next run", "sender", "subject", "error"]
    shown = display.table(listed, columns, LIST_LIMITS)
    if total is None and not more:  # a search: no count, but this is all of it
        total = len(rows)
    of = f" of {display.count(total)}" if total is not None else ""
    footer = f"showing {display.count(len(rows))}{of}, newest first"
    if more:
        footer += " (--limit for more, or narrow with --state, --error-code, --received-from, --sender, --search)"
    return data, f"{shown}\n\n{footer}"


# --- show -------------------------------------------------------------------------------------


def show_job(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    """The screen's job page (document_jobs_admin_job)."""
    args.job_id = resolve_job(context, args.job_id)
    found = calls.job(rpc_of(context), args.job_id)
    if found is None:
        raise Refusal("job_not_found", f"there is no job {args.job_id}")
    job, email, attempts, attachments = found["job"], found["email"], found["attempts"], found["attachments"]
    parts = [display.fields(_times(_ordered({k: v for k, v in job.items() if k != "email"}, JOB_FIELDS), context.now))]
    said = explained(job["last_error_code"])
    if said is not None:
        found["explanation"] = said
        language = display.language()
        lines = [said[f"meaning_{language}"], said[f"clerk_{language}"], said[f"operator_{language}"]]
        # The screen shows the operator's advice to admins only when it says more than the clerk's.
        advice = "\n  ".join(display.text(line) for line in dict.fromkeys(lines))
        parts.append(f"what to do ({job['last_error_code']})\n  {advice}")
    if email:
        shown = {k: v for k, v in email.items() if k != "reconciled_at"} | {"found_by": found_by(email, context.now)}
        parts.append("e-mail\n" + display.fields(_times(_ordered(shown, EMAIL_FIELDS), context.now)))
    history = f"attempts ({len(attempts)})"
    if attempts:
        rows = [
            row
            | {
                "started": display.local_time(row["started_at"], context.now),
                "took": f"{row['duration_ms'] / 1000:.3f} s" if row["duration_ms"] is not None else "",
                "error": row["error_code"] or "",
                "invocation": row["invocation_id"] or "",
            }
            for row in attempts
        ]
        history += "\n" + display.table(
            rows, ["attempt", "generation", "started", "took", "outcome", "error", "invocation"]
        )
        history += "".join(
            f"\n  generation {row['generation']}: {display.text(row['error_message'])}"
            for row in attempts
            if row["error_message"]
        )
    parts.append(history)
    stored = f"stored attachments ({len(attachments)})"
    for row in attachments:
        stored += f"\n\n  {display.text(row['filename'])}\n" + display.fields(
            {
                "id": row["id"],
                "downloads as": row["download_name"],
                "content_type": row["content_type"],
                "size_bytes": row["size_bytes"],
                "sha256": row["sha256"],
                "stored_at": display.local_time(row["stored_at"], context.now),
            }
        )
    parts.append(stored)
    return found, "\n\n".join(parts)


def explained(code: str | None) -> dict[str, str] | None:
    """What a job's error code means and what to do (the clerk's advice and the operator's), in
    both languages: the admin screen's own words for it (lib/explanations.py, its table of the
    job's codes); None without a code, or for one the table does not know."""
    said = job_codes().get(code) if code else None
    if said is None:
        return None
    return {f"{part}_{language}": getattr(said, part)(language)
            for language in ("en", "ja") for part in ("meaning", "clerk", "operator")}  # fmt: skip


def found_by(email: Row, now: datetime) -> str:
    """How the e-mail was recorded: by its webhook, or by reconciliation and when (the screen's
    job page says the same)."""
    if email.get("found_by") == "reconciliation":
        return (f"reconciliation, {display.local_time(email.get('reconciled_at'), now)}: Resend listed it and no "
                "webhook had delivered it")  # fmt: skip
    return "its webhook"


# --- stats, health ----------------------------------------------------------------------------


def stats(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    data = rpc(context, "document_jobs_stats", {}, dict)
    counts = {(row["kind"], row["status"]): row["count"] for row in data["by_kind_and_status"]}
    kinds = sorted({kind for kind, _ in counts})
    grid = [{"kind": kind, **{status: counts.get((kind, status), 0) for status in STATUSES}} for kind in kinds]
    lag = data["oldest_claimable_age_seconds"]
    lines = [
        display.table(grid, ["kind", *STATUSES]) if grid else "no jobs",
        "",
        f"claimable now:        {data['claimable']}" + (f" (oldest waiting {lag:.0f} s)" if lag is not None else ""),
        f"running:              {data['running']}",
        f"waiting in backoff:   {data['in_backoff']}",
        f"failed, last hour:    {data['failed_last_hour']}",
        f"last completion:      {display.local_time(data['last_completed_at'], context.now) or 'never'}",
        f"completed jobs kept:  {display.interval(data['retention'])}",
    ]
    return data, "\n".join(lines)


REQUIRED_SECRETS = ("document_jobs_url", "internal_function_secret")
# Optional: without it the flow works and no failure alert is sent (docs/OPERATIONS.md, "Alerts").
ALERT_URL_SECRET = "document_jobs_alert_url"


def health(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    data = rpc(context, "document_jobs_health", {}, dict)
    data["reconciliation"] = rpc(context, "document_jobs_reconciliation_status", {}, dict)
    outages = data["outages"]
    missing = [name for name in REQUIRED_SECRETS if not data["vault_secrets"].get(name)]
    guards = data.get("record_guards") or {"guards": 0, "problems": []}
    data["healthy"] = not outages and not missing and not guards["problems"]
    data["alerts"] = "on" if data["vault_secrets"].get(ALERT_URL_SECRET) else "off"
    lines = [f"open outages: {len(outages) or 'none'}"]
    language = display.language()
    for outage in outages:
        # The database holds only the cause; what it means and what to do is lib/failures.py's:
        # the operator's advice, which the admin screen shows admins and the alert carries too.
        # --json carries both languages.
        said = outage_explanation(outage["cause"])
        outage.pop("advice", None)  # the database's own English, until its function is retired
        if said is not None:
            outage.update(meaning=said.meaning_en, advice=said.operator_en, meaning_ja=said.meaning_ja,
                          advice_ja=said.operator_ja)  # fmt: skip
        lines.append(f"  {outage['cause']} since {display.local_time(outage['since'], context.now)}")
        if said is not None:
            lines.append(f"    {display.text(said.meaning(language))}")
            lines.append(f"    {display.text(said.operator(language))}")
    answers = ", ".join(
        f"{row['status_code'] or 'no answer'}: {row['count']}" for row in data["worker_answers_last_hour"]
    )
    lines.append(f"worker answers, last hour: {answers or 'none (no worker call)'}")
    lines.append(_reconciliation_line(data["reconciliation"], context.now))
    lines += reconciliation_status.lines(data["reconciliation"], context.now)
    secrets = ", ".join(
        f"{name} {'stored' if there else 'not stored (optional)' if name == ALERT_URL_SECRET else 'MISSING'}"
        for name, there in data["vault_secrets"].items()
    )
    lines.append(f"Vault secrets: {secrets}")
    if missing:
        lines.append(
            f"  until {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} stored, no worker is called"
        )
    if data["alerts"] == "off":
        lines.append(f"alerts: off (no {ALERT_URL_SECRET} in Vault): no failure alert is sent; not an error")
    lines += _record_guard_lines(guards)
    return data, "\n".join(lines)


def _record_guard_lines(guards: Row) -> list[str]:
    """Whether the record of received faxes is guarded: its tables' owner can still disable, drop or
    alter a guard or grant a privilege back (docs/OPERATIONS.md, "The record of received faxes")."""
    problems = guards["problems"]
    if not problems:
        return [f"record guards: all {guards['guards']} in place (the received faxes' rows cannot be changed)"]
    lines = [f"record guards: {len(problems)} NOT in place: the received faxes' rows can be changed or deleted"]
    for problem in problems:
        granted = f" ({problem['privilege']} to {problem['grantee']})" if problem["problem"] == "granted" else ""
        lines.append(display.text(f"  {problem['table']} {problem['guard']}: {problem['problem']}{granted}"))
    lines.append("  as postgres, select document_jobs_internal.guard_record_tables(); puts them back")
    return lines


def _reconciliation_line(status: Row, now: datetime) -> str:
    """When reconciliation last ran and what it found."""
    if status["last_run_at"] is None:
        last = "never ran"
    else:
        last = (f"last ran {display.local_time(status['last_run_at'], now)}: listed {status['last_listed']},"
                f" recorded {status['last_recorded']} that no webhook delivered"
                f" ({status['last_late']} of them late)")  # fmt: skip
    running = f"; a run is under way since {display.local_time(status['running_since'], now)}" if status[
        "running_since"] else ""  # fmt: skip
    return (f"reconciliation (every {status['every_minutes']} min): {last}{running};"
            f" {status['found_by_reconciliation']} e-mails found by reconciliation in all")  # fmt: skip


def exit_status(data: Any) -> int:
    """0, or 5 for a health answer that is not healthy, or 6 for a verification that found a mismatch."""
    if isinstance(data, dict) and data.get("healthy") is False:
        return 5
    return 6 if isinstance(data, dict) and isinstance(data.get("mismatched"), int) and data["mismatched"] > 0 else 0


# --- retention, purge -------------------------------------------------------------------------


def retention(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    if args.set:
        value = rpc(
            context,
            "set_document_jobs_retention",
            {"p_completed_job_retention": args.set},
            str,
            {"p_completed_job_retention": "--set"},
        )
    else:
        value = rpc(context, "document_jobs_stats", {}, dict)["retention"]
    return {"completed_job_retention": value}, f"completed jobs are kept for {display.interval(value)}"


def purge(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    flags = {"p_older_than": "--older-than"}
    age = display.interval(args.older_than) if args.older_than else None
    if age is None:
        age = display.interval(rpc(context, "document_jobs_stats", {}, dict)["retention"]) + " (the retention setting)"
    if args.dry_run:
        count = rpc(context, "count_purgeable_document_jobs", {"p_older_than": args.older_than}, int, flags)
        return {"would_delete": count, "dry_run": True}, (
            f"would delete {display.count(count)} completed jobs finished more than {age} ago (dry run: none deleted)"
        )
    deleted = rpc(context, "purge_document_jobs", {"p_older_than": args.older_than}, int, flags)
    return {"deleted": deleted}, f"deleted {display.count(deleted)} completed jobs finished more than {age} ago"


# --- download ---------------------------------------------------------------------------------


def _attachments_of(context: Context, target: str) -> list[Row]:
    """The stored attachments a target names: a job (its e-mail's), an attachment's row id,
    Resend's attachment id, or a job as people see it (resolve_job)."""
    table = context.client.table("fax_received_email_attachments")
    try:
        UUID(target)
        is_uuid = True
    except ValueError:
        is_uuid = False
    if is_uuid:
        job = _job(context, target)
        if job is not None:
            if not job["fax_received_email_id"]:
                return []
            return _rows(
                context,
                "read attachments",
                table.select(ATTACHMENT_COLUMNS)
                .eq("fax_received_email_id", job["fax_received_email_id"])
                .order("filename"),
            )
        found = _rows(context, "read attachment", table.select(ATTACHMENT_COLUMNS).eq("id", target))
        if found:
            return found
    found = _rows(
        context,
        "read attachment",
        context.client.table("fax_received_email_attachments")
        .select(ATTACHMENT_COLUMNS)
        .eq("provider_attachment_id", target),
    )
    if not found and id_prefix(target) is not None:
        # A job as people see it (a prefix of its id, its e-mail's or Resend's e-mail id).
        return _attachments_of(context, resolve_job(context, target))
    if not found:
        raise Refusal("not_found", f"{target!r} is neither a job nor a stored attachment")
    return found


def _fetch(context: Context, row: Row) -> bytes:
    settings = context.settings
    try:
        data = Storage(context.http, settings.supabase_url, settings.server_key, row["bucket"]).download(
            row["storage_path"]
        )
    except StorageError as error:
        if error.status is None:
            raise Refusal(
                "storage_unreachable",
                f"cannot reach Storage at {settings.supabase_url} (SUPABASE_URL): {error.network}",
                status=503,
            ) from error
        raise Refusal(
            "object_not_found" if error.status == 404 else "storage_error",
            f"Storage refused {row['bucket']}/{row['storage_path']}: {error.status} {error.message or ''}".rstrip(),
        ) from error
    if len(data) != row["size_bytes"] or hashlib.sha256(data).hexdigest() != row["sha256"]:
        raise Refusal(
            "checksum_mismatch",
            f"{row['bucket']}/{row['storage_path']} is not what was recorded "
            f"({len(data)} bytes, {row['size_bytes']} recorded, or another SHA-256): nothing written",
        )
    return data


def _download_names(attachments: list[Row]) -> list[str]:
    """Each attachment's download name; a name taken already gets " (2)", " (3)" before its extension."""
    names: list[str] = []
    for row in attachments:
        name = download_name(row["filename"], row["content_type"])
        stem, dot, suffix = name.rpartition(".")
        number = 1
        while name.casefold() in {taken.casefold() for taken in names}:
            number += 1
            name = f"{stem} ({number}){dot}{suffix}"
        names.append(name)
    return names


def download(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    attachments = _attachments_of(context, args.target)
    if not attachments:
        raise Refusal("not_found", f"job {args.target} has no stored attachment")
    output = Path(args.output)
    if not output.is_dir() and len(attachments) > 1:
        raise Refusal("not_a_folder", f"{args.output} is not a folder, and {len(attachments)} attachments are stored")
    written = []
    names = _download_names(attachments)
    for row, name in zip(attachments, names, strict=True):
        # The name the screen downloads it as too (lib/attachment_names.py): the sender's, made
        # safe, with the stored type's extension; never a path of its own.
        path = output / name if output.is_dir() else output
        if path.exists():
            raise Refusal("file_exists", f"{path} exists: nothing overwritten (choose another --output)")
        data = _fetch(context, row)
        path.write_bytes(data)
        written.append({"path": str(path), "filename": row["filename"], "bytes": len(data), "sha256": row["sha256"]})
    lines = [
        f"wrote {item['path']}  ({display.text(item['filename'])}, {display.count(item['bytes'])} bytes, "
        "SHA-256 as recorded)"
        for item in written
    ]
    return {"written": written}, "\n".join(lines)
