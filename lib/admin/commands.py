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

from lib.admin import display
from lib.attachment_names import download_name
from lib.errors import DatabaseError, Refusal
from lib.failures import FailureCode, outage_explanation
from lib.settings import SupabaseSettings
from lib.supabase.rpc import Executable, execute
from lib.supabase.storage import Storage, StorageError

if TYPE_CHECKING:
    from supabase import Client

JOB_COLUMNS = (
    "id,kind,status,attempts,max_attempts,generation,created_at,run_after,lease_until,finished_at,"
    "last_error_code,last_error_message,fax_received_email_id"
)
# found_by: webhook, or reconciliation (then webhook_id is null: no webhook delivered it).
EMAIL_COLUMNS = "id,provider_email_id,from_address,to_addresses,subject,received_at,created_at,found_by,reconciled_at"
ATTACHMENT_COLUMNS = "id,provider_attachment_id,filename,content_type,size_bytes,sha256,bucket,storage_path"
ATTEMPT_COLUMNS = "attempt,generation,started_at,finished_at,outcome,error_code,error_message,invocation_id"
STATUSES = ("queued", "running", "completed", "failed")
TIMES = ("created_at", "run_after", "lease_until", "finished_at", "received_at", "started_at", "reconciled_at")
# The codes only the database writes (the worker's are FailureCode).
DATABASE_ERROR_CODES = ("lease_expired", "cancelled")
# An e-mail filter (sender, e-mail id) becomes a list of e-mail ids in the job query's URL.
MAX_FILTER_EMAILS = 500
# Columns of `list`, in display columns: a sender's 52-character Japanese name must not widen it.
LIST_LIMITS = {"sender": 28, "subject": 32, "error": 26}
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


def rpc(
    context: Context, function: str, params: dict[str, Any], kind: type, flags: Mapping[str, str] | None = None
) -> Any:
    """A function's answer, of the type it is declared to return (else: not PostgREST's)."""
    value = call(context, function, context.client.rpc(function, params), flags)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise not_postgrest(context, function)
    return value


class _Counted:
    """A request whose answer's exact count (Prefer: count=exact) is kept beside its rows."""

    def __init__(self, request: Executable) -> None:
        self.request = request
        self.count: int | None = None

    def execute(self) -> Any:
        response = self.request.execute()
        self.count = response.count
        return response


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
    if whole is not None and _job(context, whole) is not None:
        return whole
    found = find_jobs(context, value)
    jobs = found["jobs"]
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
    rows = _rows(context, "read job", context.client.table("document_jobs").select(JOB_COLUMNS).eq("id", job))
    return rows[0] if rows else None


def _times(row: Row, now: datetime) -> Row:
    return {key: display.local_time(value, now) if key in TIMES else value for key, value in row.items()}


# --- list -------------------------------------------------------------------------------------


def _known_error_codes() -> set[str]:
    return {code.value for code in FailureCode} | set(DATABASE_ERROR_CODES)


def _check_kind(context: Context, kind: str) -> None:
    kinds = [
        row["kind"] for row in _rows(context, "read kinds", context.client.table("document_job_kinds").select("kind"))
    ]
    if kind not in kinds:
        raise Refusal("unknown_kind", f"--kind {kind!r} is not a kind of job (known: {', '.join(sorted(kinds))})")


def _email_ids(context: Context, args: argparse.Namespace) -> list[str] | None:
    """The e-mails the sender and e-mail id filters leave (None: no such filter)."""
    if not (args.email_id or args.sender):
        return None
    query = context.client.table("fax_received_emails").select("id").limit(MAX_FILTER_EMAILS + 1)
    if args.email_id:
        query = query.eq("provider_email_id", args.email_id)
    if args.sender:
        # PostgREST's like wildcard is *; the sender's own % and _ stay literal.
        pattern = re.sub(r"([%_\\])", r"\\\1", args.sender)
        query = query.ilike("from_address", f"*{pattern}*")
    ids = [row["id"] for row in _rows(context, "read e-mails", query)]
    if len(ids) > MAX_FILTER_EMAILS:
        raise Refusal(
            "filter_too_wide",
            f"--sender {args.sender!r} matches more than {MAX_FILTER_EMAILS} e-mails: "
            "narrow it (a longer part of the address, --since/--until)",
        )
    return ids


def check_filters(context: Context, args: argparse.Namespace) -> None:
    """An unknown error code or kind is the operator's typo, not a filter that matches nothing."""
    if args.error_code and args.error_code not in _known_error_codes():
        raise Refusal(
            "unknown_error_code",
            f"--error-code {args.error_code!r} is not an error code (known: {', '.join(sorted(_known_error_codes()))})",
        )
    if args.kind:
        _check_kind(context, args.kind)


def list_jobs(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    check_filters(context, args)
    query = (
        context.client.table("document_jobs")
        .select(JOB_COLUMNS, count="exact")  # type: ignore[arg-type]
        .order("created_at", desc=True)
        .limit(args.limit)
    )
    for column, value in (("status", args.status), ("kind", args.kind), ("last_error_code", args.error_code)):
        if value:
            query = query.eq(column, value)
    if args.since:
        query = query.gte("created_at", args.since.isoformat())
    if args.until:
        query = query.lt("created_at", args.until.isoformat())
    email_ids = _email_ids(context, args)
    if email_ids is not None:
        query = query.in_("fax_received_email_id", email_ids)
    counted = _Counted(query)
    rows = [] if email_ids == [] else _rows(context, "list jobs", counted)
    total = counted.count if counted.count is not None else len(rows)
    ids = sorted({row["fax_received_email_id"] for row in rows if row["fax_received_email_id"]})
    emails = (
        {
            row["id"]: row
            for row in _rows(
                context,
                "read e-mails",
                context.client.table("fax_received_emails").select(EMAIL_COLUMNS).in_("id", ids),
            )
        }
        if ids
        else {}
    )
    listed = []
    for row in rows:
        email = emails.get(row["fax_received_email_id"], {})
        waits = row["status"] == "queued" and datetime.fromisoformat(row["run_after"]) > context.now
        listed.append(
            row
            | {
                # The screen's short id: it names the job in every command (resolve_job).
                "id": row["id"][:SHORT_ID],
                "received": display.local_time(row["created_at"], context.now),
                "attempt": f"{row['attempts']}/{row['max_attempts']}",
                "next run": display.local_time(row["run_after"], context.now) if waits else "",
                "sender": email.get("from_address"),
                "subject": email.get("subject"),
                "error": row["last_error_code"] or "",
            }
        )
    data = {"jobs": [row | {"email": emails.get(row["fax_received_email_id"])} for row in rows], "total": total}
    if not rows:
        return data, "no jobs match" if total == 0 else f"no jobs shown of {display.count(total)}"
    columns = ["id", "status", "received", "attempt", "next run", "sender", "subject", "error"]
    shown = display.table(listed, columns, LIST_LIMITS)
    footer = f"showing {display.count(len(rows))} of {display.count(total)}, newest first"
    if len(rows) < total:
        footer += " (--limit for more, or narrow with --status, --error-code, --since, --sender)"
    return data, f"{shown}\n\n{footer}"


# --- show -------------------------------------------------------------------------------------


def show_job(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    args.job_id = resolve_job(context, args.job_id)
    job = _job(context, args.job_id)
    if job is None:
        raise Refusal("job_not_found", f"there is no job {args.job_id}")
    email: Row | None = None
    attachments: list[Row] = []
    if job["fax_received_email_id"]:
        emails = _rows(
            context,
            "read e-mail",
            context.client.table("fax_received_emails").select(EMAIL_COLUMNS).eq("id", job["fax_received_email_id"]),
        )
        email = emails[0] if emails else None
        attachments = _rows(
            context,
            "read attachments",
            context.client.table("fax_received_email_attachments")
            .select(ATTACHMENT_COLUMNS)
            .eq("fax_received_email_id", job["fax_received_email_id"])
            .order("filename"),
        )
    attempts = _rows(
        context,
        "read attempts",
        context.client.table("document_job_attempts")
        .select(ATTEMPT_COLUMNS)
        .eq("job_id", args.job_id)
        .order("generation"),
    )
    parts = [display.fields(_times(job, context.now))]
    if email:
        parts.append("e-mail\n" + display.fields(_times(email, context.now)))
    history = f"attempts ({len(attempts)})"
    if attempts:
        rows = [
            row
            | {
                "started": display.local_time(row["started_at"], context.now),
                "took": _took(row["started_at"], row["finished_at"]),
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
                "provider_attachment_id": row["provider_attachment_id"],
                "content_type": row["content_type"],
                "size_bytes": row["size_bytes"],
                "sha256": row["sha256"],
                "storage": f"{row['bucket']}/{row['storage_path']}",
            }
        )
    parts.append(stored)
    return {"job": job, "email": email, "attempts": attempts, "attachments": attachments}, "\n\n".join(parts)


def _took(started: str | None, finished: str | None) -> str:
    """How long an attempt took, e.g. 1.234 s (for a lost attempt: until its lease passed)."""
    if not started or not finished:
        return ""
    return f"{(datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds():.3f} s"


# --- retry, cancel ----------------------------------------------------------------------------


def _not_changed(context: Context, job: str, code: str, action: str, wanted: str) -> Refusal:
    found = _job(context, job)
    if found is None:
        return Refusal("job_not_found", f"there is no job {job}")
    return Refusal(
        code,
        f"job {job} was not {action}: it is {found['status']}, and only {wanted} job can be",
        job_status=found["status"],
    )


def retry(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    try:
        retried = execute("retry_document_job", context.client.rpc("retry_document_job", {"p_job_id": args.job_id}))
    except DatabaseError as error:
        if error.code == "23505":
            raise _live_job(context, args.job_id) from error
        raise refused(context, error, {}) from error
    if not isinstance(retried, bool):
        raise not_postgrest(context, "retry_document_job")
    if not retried:
        raise _not_changed(context, args.job_id, "job_not_failed", "retried", "a failed")
    return {"retried": args.job_id}, f"job {args.job_id} is queued again (attempts reset to 0)"


def _live_job(context: Context, job: str) -> Refusal:
    """A retry refused because another job for the same e-mail is queued or running: name it."""
    failed = _job(context, job) or {}
    live = _rows(
        context,
        "read live job",
        context.client.table("document_jobs")
        .select("id,status")
        .eq("fax_received_email_id", failed.get("fax_received_email_id") or "")
        .eq("kind", failed.get("kind") or "")
        .in_("status", ["queued", "running"]),
    )
    if not live:  # gone meanwhile: the retry may simply be tried again
        return Refusal("live_job_exists", f"job {job} was not retried: another job for its e-mail was live; try again")
    other = live[0]
    return Refusal(
        "live_job_exists",
        f"job {job} was not retried: job {other['id']} for the same e-mail is "
        f"{other['status']}; let it finish, or cancel it (python -m lib.admin cancel {other['id']})",
        live_job_id=other["id"],
        live_job_status=other["status"],
    )


def cancel(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    params = {"p_job_id": args.job_id, "p_reason": args.reason}
    if not rpc(context, "cancel_document_job", params, bool, {"p_reason": "--reason"}):
        raise _not_changed(context, args.job_id, "job_not_live", "cancelled", "a queued or running")
    return {"cancelled": args.job_id}, f"job {args.job_id} is cancelled (failed, last_error_code = cancelled)"


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
# Optional: without it the flow works and no failure alert is sent (README, "Failure alerts").
ALERT_URL_SECRET = "document_jobs_alert_url"


def health(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    data = rpc(context, "document_jobs_health", {}, dict)
    data["reconciliation"] = rpc(context, "document_jobs_reconciliation_status", {}, dict)
    outages = data["outages"]
    missing = [name for name in REQUIRED_SECRETS if not data["vault_secrets"].get(name)]
    data["healthy"] = not outages and not missing
    data["alerts"] = "on" if data["vault_secrets"].get(ALERT_URL_SECRET) else "off"
    lines = [f"open outages: {len(outages) or 'none'}"]
    language = display.language()
    for outage in outages:
        # The database holds only the cause; what it means and what to do is lib/failures.py's,
        # the text the admin screen shows too. --json carries both languages.
        said = outage_explanation(outage["cause"])
        outage.pop("advice", None)  # the database's own English, until its function is retired
        if said is not None:
            outage.update(meaning=said.meaning_en, advice=said.advice_en, meaning_ja=said.meaning_ja,
                          advice_ja=said.advice_ja)  # fmt: skip
        lines.append(f"  {outage['cause']} since {display.local_time(outage['since'], context.now)}")
        if said is not None:
            lines.append(f"    {display.text(said.meaning(language))}")
            lines.append(f"    {display.text(said.advice(language))}")
    answers = ", ".join(
        f"{row['status_code'] or 'no answer'}: {row['count']}" for row in data["worker_answers_last_hour"]
    )
    lines.append(f"worker answers, last hour: {answers or 'none (no worker call)'}")
    lines.append(_reconciliation_line(data["reconciliation"], context.now))
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
    return data, "\n".join(lines)


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
    """0, or 5 for a health answer that is not healthy."""
    return 5 if isinstance(data, dict) and data.get("healthy") is False else 0


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
