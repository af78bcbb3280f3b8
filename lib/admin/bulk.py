"""Bulk retry and cancel from the command line, with the admin screen's own server-side action:
prepare_document_jobs_bulk_action counts the jobs a filter matches and keeps their ids (a
snapshot), apply_document_jobs_bulk_action changes exactly those, in batches, until it answers
done, and records the action in document_jobs_audit once (see migration 20261201004300).

document-jobs-admin retry --error-code X [--received-from ...] --as EMAIL --dry-run    the count
document-jobs-admin confirm BULK_ACTION_ID --as EMAIL --reason TEXT          apply exactly what was counted
document-jobs-admin retry --error-code X ... --as EMAIL --reason TEXT --yes   count and apply at once

One job is retried or cancelled as on the screen too (admin_retry_document_job,
admin_cancel_document_job: audited; a retry starts a worker for the job):

document-jobs-admin retry JOB_ID --as EMAIL [--reason TEXT]
document-jobs-admin cancel JOB_ID --as EMAIL --reason TEXT

The actor is an admin of the admin screen, named with --as (or DOCUMENT_JOBS_OPERATOR) and
looked up through Supabase Auth's admin API (lib/admin/operators.py), never a fixed "CLI"
identity: the audit's actor_id is a Supabase Auth user id (as for an action on the screen), so
the audit says which person acted whichever door they used, a viewer cannot act from the command
line either, and only the operator who counted may confirm (the function checks that). What the
screen checks before an action, the CLI checks too: the lookup refuses an operator whom Auth has
banned or deleted, or whose role is not admin, before anything is asked of the queue; and every
action's own database call checks the same in Auth's row of the user (require_actor,
document_jobs_internal.acting_operator: 20261204110000), so that an operator banned after the
lookup, or between a dry run and its confirm, is refused too, and the audit never names them.

A printed command that needs the operator's own words has the placeholder WHY for them (the dry
run's confirm, a refusal's cancel); a --reason that is only that placeholder is refused
(reason_placeholder, exit status 2) rather than recorded in the audit.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from lib.admin import PROGRAM, command_line, commands, display
from lib.admin.commands import FILTER_FLAGS, FILTER_OPTIONS, Context, check_filters, not_postgrest, refused
from lib.admin.operators import AuthAdmin, role_of, standing
from lib.errors import DatabaseError, Refusal
from lib.screen import calls
from lib.screen.auth import ADMIN_ONLY, Role
from lib.supabase.rpc import execute

BATCH_SIZE = 500
# Who acts, when --as is not given: an operator's shell profile names them once.
OPERATOR_VARIABLE = "DOCUMENT_JOBS_OPERATOR"
# The operator's words in a printed command: refused as a --reason (given_reason).
REASON_PLACEHOLDER = "WHY"
VERBS = {"retry": ("retry", "retried"), "cancel": ("cancel", "cancelled")}
STATES = {"retry": "failed", "cancel": "queued or running"}
# A cancel is stored as failed with code cancelled: a bulk retry leaves those jobs out (the database
# does) unless the filter names that code.
CANCELLED_LEFT_OUT = "jobs an admin cancelled (error code cancelled) are left out: --error-code cancelled retries them"


@dataclass(frozen=True)
class Actor:
    id: str
    email: str


def is_bulk(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) for name in (*FILTER_OPTIONS, "dry_run", "yes"))


def operator_email(email: str | None, what: str) -> str:
    """--as, or else DOCUMENT_JOBS_OPERATOR: the e-mail of the operator who acts."""
    email = (email or os.environ.get(OPERATOR_VARIABLE, "")).strip()
    if not email:
        raise Refusal(
            "actor_required",
            f"{what} needs the admin it is recorded for: --as EMAIL, or {OPERATOR_VARIABLE}=EMAIL in the environment",
        )
    return email


def given_reason(reason: str | None) -> str | None:
    """--reason as given, unless it is the placeholder of a printed command: the audit would
    record "WHY" as the operator's reason."""
    if reason is not None and reason.strip().strip("'\"<>[]").strip().casefold() == REASON_PLACEHOLDER.casefold():
        raise Refusal(
            "reason_placeholder",
            f"--reason {reason.strip()} is the printed command's placeholder: say why, in your own words "
            "(e.g. --reason 'key rotated'); it is recorded in the audit",
        )
    return reason


def actor(
    context: Context, email: str | None, what: str = "an action", allowed: tuple[Role, ...] = ADMIN_ONLY
) -> Actor:
    """The operator named by --as (or DOCUMENT_JOBS_OPERATOR), as Supabase Auth knows them now: with
    an allowed role (an admin's, unless a mark's: a clerk's too), neither banned nor deleted (what
    the screen confirms before an action)."""
    email = operator_email(email, what)
    user = AuthAdmin(context.http, context.settings).find(email)
    role = role_of(user) if user else None
    if user is None or role is None:
        raise Refusal(
            "not_an_operator",
            f"{email} is not an operator of the admin screen ({command_line('operators', 'list')})",
        )
    state = standing(user, context.now)
    if state == "banned":
        until = display.local_time(user["banned_until"], context.now)
        raise Refusal("operator_banned", f"{email} is banned in Supabase Auth until {until}: a banned admin may not "
                      "act (the admin screen refuses them too); act as another admin")  # fmt: skip
    if state == "deleted":
        raise Refusal("operator_deleted", f"{email} was deleted from Supabase Auth: a deleted admin may not act")
    if role not in allowed:
        if allowed == ADMIN_ONLY:
            raise Refusal("not_an_admin", f"{email} is a {role}: only an admin may retry or cancel jobs")
        raise Refusal("read_only", f"{email} is a {role}: only a clerk or an admin may mark faxes")
    return Actor(user["id"], user.get("email") or email)


def retry(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    return _one_or_many(context, args, "retry")


def cancel(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    return _one_or_many(context, args, "cancel")


def _one_or_many(context: Context, args: argparse.Namespace, action: str) -> tuple[Any, str]:
    if args.job_id and is_bulk(args):
        raise Refusal("usage", f"{action} takes a job id or a filter, not both (see {PROGRAM} {action} --help)")
    if not args.job_id:
        return bulk(context, args, action)
    # Refused before any call: the operator, and a cancel's reason (the audit needs both).
    email = operator_email(args.actor, f"{action} JOB_ID")
    if action == "cancel" and not (args.reason or "").strip():
        raise Refusal("reason_required", "--reason is required: it is recorded in the audit and on the job")
    given_reason(args.reason)
    job = commands.resolve_job(context, args.job_id)  # as people see it: a prefix, an e-mail's id
    who = actor(context, email, f"{action} JOB_ID")
    rpc = commands.rpc_of(context, FILTER_FLAGS)
    if action == "retry":
        result = calls.retry(rpc, job, who.id, who.email, args.reason)
    else:
        result = calls.cancel(rpc, job, who.id, who.email, args.reason)
    if not result["changed"]:
        raise _unchanged(context, job, action, str(result["reason"]))
    done = {"job_id": job, "action": action, "actor": {"id": who.id, "email": who.email}}
    by = f"recorded in the audit as {display.text(who.email)}"
    if action == "retry":
        # admin_retry_document_job starts a worker for it, as the screen's Retry does.
        return done | {"worker_started": True}, (
            f"job {job} is queued again (attempts reset to 0); a worker was started for it; {by}"
        )
    return done, f"job {job} is cancelled (failed, last_error_code = cancelled); {by}"


def _unchanged(context: Context, job: str, action: str, reason: str) -> Refusal:
    """Why one job was not retried or cancelled, as the audited function answered it."""
    rpc = commands.rpc_of(context)
    found = calls.job(rpc, job) if reason != "job_deleted" else None
    if found is None:
        return Refusal("job_not_found", f"there is no job {job}")
    status = found["job"]["status"]
    if reason == "another_live_job":
        email_id = found["job"]["fax_received_email_id"]
        live = [row for row in commands.find_jobs(context, email_id)["jobs"] if row["status"] in ("queued", "running")
                and row["id"] != job] if email_id else []  # fmt: skip
        if not live:  # gone meanwhile: the retry may simply be tried again
            return Refusal("live_job_exists",
                           f"job {job} was not retried: another job for its e-mail was live; try again")  # fmt: skip
        other = live[0]
        return Refusal(
            "live_job_exists",
            f"job {job} was not retried: job {other['id']} for the same e-mail is {other['status']}; let it finish, "
            f"or cancel it ({command_line('cancel', other['id'], '--reason', REASON_PLACEHOLDER)})",
            live_job_id=other["id"],
            live_job_status=other["status"],
        )
    wanted = "a failed" if action == "retry" else "a queued or running"
    return Refusal(
        "job_not_failed" if action == "retry" else "job_not_live",
        f"job {job} was not {VERBS[action][1]}: it is {status}, and only {wanted} job can be",
        job_status=status,
    )


def bulk(context: Context, args: argparse.Namespace, action: str) -> tuple[Any, str]:
    """retry/cancel with a filter: a dry run, or a count applied at once (--yes)."""
    found = commands.job_filter(args)
    if not found:
        raise Refusal(
            "filter_required",
            f"a bulk {action} needs a filter: --state, --kind, --error-code, --received-from, --received-to, "
            "--sender, --search",
        )
    if not (args.dry_run or args.yes):
        raise Refusal(
            "confirmation_required",
            f"a bulk {action} changes every job the filter matches: run it with --dry-run first (it prints "
            "the count and the command that confirms exactly those jobs), or give --yes to count and apply at once",
        )
    if args.yes and not (args.reason or "").strip():
        raise Refusal("reason_required", "--reason is required: it is recorded in the audit")
    given_reason(args.reason)
    check_filters(context, args)
    who = actor(context, args.actor, f"a bulk {action}")
    prepared = calls.prepare_bulk(_rpc(context), action, found, who.id, who.email)
    count, scope = prepared["job_count"], commands.described(context, prepared["filter"])
    if args.yes:
        return apply(context, prepared["bulk_action_id"], who, args.reason)
    if count == 0:
        text = f"no {STATES[action]} job matches ({scope}): nothing to {action}"
        return prepared | {"dry_run": True}, text
    confirm = command_line(
        "confirm", prepared["bulk_action_id"], "--as", who.email, "--reason", args.reason or REASON_PLACEHOLDER
    )
    left_out = f"{CANCELLED_LEFT_OUT}\n" if prepared.get("cancelled_left_out") else ""
    text = (
        f"{display.count(count)} {STATES[action]} {'job' if count == 1 else 'jobs'} would be {VERBS[action][1]} "
        f"({scope}); dry run: nothing changed.\n{left_out}"
        f"To {action} exactly these {display.count(count)}, within 15 minutes "
        f"(until {display.local_time(prepared['expires_at'], context.now)}):\n  {display.text(confirm)}"
    )
    return prepared | {"dry_run": True, "confirm": confirm}, text


def confirm(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    """Apply a counted bulk action (its id from a dry run)."""
    if not (args.reason or "").strip():
        raise Refusal("reason_required", "--reason is required: it is recorded in the audit")
    given_reason(args.reason)
    who = actor(context, args.actor, "confirm")
    before = _audited(context, args.bulk_action_id)
    return apply(context, args.bulk_action_id, who, args.reason, before)


def _audited(context: Context, bulk_action_id: str) -> dict[str, Any] | None:
    """The audit's entry of a bulk action once it was first confirmed (its time, reason, and how
    many jobs it had changed then), as the admin screen's audit page shows it; None before."""
    rows = commands._rows(
        context,
        "read the audit",
        context.client.table("document_jobs_audit").select("id").eq("bulk_action_id", bulk_action_id),
    )
    if not rows:
        return None
    page = commands.rpc(context, "document_jobs_admin_audit", {"p_before": rows[0]["id"] + 1, "p_limit": 1}, dict)
    [entry] = page["entries"]
    return dict(entry)


def apply(
    context: Context, bulk_action_id: str, who: Actor, reason: str, before: dict[str, Any] | None = None
) -> tuple[Any, str]:
    """Batches until done; what changed, what did not and why. `before`: the audit's entry if an
    earlier confirm started it (then the audit keeps that confirm's reason, not this one's)."""
    rpc = _rpc(context)
    progress = calls.apply_bulk(rpc, bulk_action_id, who.id, reason, BATCH_SIZE)
    workers = progress["workers_started"]
    while not progress["done"]:
        processed = progress["processed"]
        progress = calls.apply_bulk(rpc, bulk_action_id, who.id, reason, BATCH_SIZE)
        workers += progress["workers_started"]
        if progress["processed"] == processed and not progress["done"]:
            raise Refusal("bulk_action_stuck", f"bulk action {bulk_action_id} made no progress: run confirm again")
    action = progress["action"]
    scope = commands.described(context, progress["filter"])
    started = f"; {workers} workers started" if action == "retry" else ""
    if before is None:
        lines = [
            f"{VERBS[action][1]} {display.count(progress['changed'])} of {display.count(progress['job_count'])} "
            f"jobs ({scope}) as {display.text(who.email)}{started}"
        ]
        kept = reason.strip()
        progress = progress | {"already_confirmed": False, "changed_now": progress["changed"]}
    else:
        # A repeated confirm: the counts are the action's since its first confirm; say what this
        # one did, and which reason the audit kept.
        now = progress["changed"] - before["bulk"]["changed"]
        first = (
            f"bulk action {bulk_action_id} was already confirmed at "
            f"{display.local_time(before['at'], context.now)} by {display.text(before['actor_email'] or who.email)}"
        )
        done = (
            f"in all, {VERBS[action][1]} {display.count(progress['changed'])} of "
            f"{display.count(progress['job_count'])} jobs ({scope})"
        )
        if now == 0:
            lines = [f"{first}: this confirm changed nothing; {done}"]
        else:
            lines = [f"{first}; this confirm {VERBS[action][1]} {display.count(now)} more; {done}{started}"]
        kept = before["reason"] or ""
        progress = progress | {"already_confirmed": True, "changed_now": now}
    if progress["skipped"]:
        reasons = ", ".join(f"{why}: {n}" for why, n in sorted(progress["skipped_by_reason"].items()))
        lines.append(f"not {VERBS[action][1]}: {display.count(progress['skipped'])} ({reasons})")
        lines += [f"  {row['job_id']}  {row['reason']}" for row in progress["not_changed"]]
    if before is None:
        lines.append(f"recorded in the audit: bulk action {bulk_action_id}, reason {display.text(kept)!r}")
    else:
        lines.append(
            f"the audit keeps the first confirm's reason {display.text(kept)!r}"
            + (f", not {display.text(reason.strip())!r}" if reason.strip() != kept else "")
        )
    progress = progress | {"audit_reason": kept}
    return progress | {"workers_started": workers, "actor": {"id": who.id, "email": who.email}}, "\n".join(lines)


def _rpc(context: Context) -> calls.Rpc:
    """Calls for calls.prepare_bulk and apply_bulk, with the bulk actions' refusals."""

    def rpc(function: str, params: dict[str, Any]) -> Any:
        try:
            answer = execute(function, context.client.rpc(function, params))
        except DatabaseError as error:
            raise _bulk_refusal(context, error) from error
        if not isinstance(answer, dict):
            raise not_postgrest(context, function)
        return answer

    return rpc


def _bulk_refusal(context: Context, error: DatabaseError) -> Refusal:
    if error.code == "P0002":
        return Refusal("bulk_action_not_found", f"{error.message}: count again (--dry-run)")
    if error.code == "42501" and "who counted" in error.message:
        return Refusal("not_the_counting_operator", error.message + " (--as the e-mail the dry run was run with)")
    if error.code == "22023" and "counted more than" in error.message:
        return Refusal("count_expired", error.message + " (--dry-run)")
    return refused(context, error, FILTER_FLAGS)
