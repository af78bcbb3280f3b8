"""Bulk retry and cancel from the command line, with the admin screen's own server-side action:
prepare_document_jobs_bulk_action counts the jobs a filter matches and keeps their ids (a
snapshot), apply_document_jobs_bulk_action changes exactly those, in batches, until it answers
done, and records the action in document_jobs_audit once (see migration 20261201004300).

python -m lib.admin retry --error-code X [--since ...] --as EMAIL --dry-run    the count; the confirmation
python -m lib.admin confirm BULK_ACTION_ID --as EMAIL --reason TEXT          apply exactly what was counted
python -m lib.admin retry --error-code X ... --as EMAIL --reason TEXT --yes   count and apply at once

The actor is an admin of the admin screen, named with --as and looked up through Supabase Auth's
admin API (lib/admin/operators.py), never a fixed "CLI" identity: the audit's actor_id is a Supabase
Auth user id (as for an action on the screen), so the audit says which person acted whichever
door they used, a viewer cannot act from the command line either, and only the operator who
counted may confirm (the function checks that). The server key could write any actor id; the
lookup is what keeps the audit honest, not a security boundary.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from typing import Any

from lib.admin import commands, display
from lib.admin.commands import Context, check_filters, not_postgrest, refused
from lib.admin.operators import AuthAdmin, role_of
from lib.errors import DatabaseError, Refusal
from lib.supabase.rpc import execute

BATCH_SIZE = 500
# The filter's keys as the operator wrote them (the database's messages name the keys).
FLAGS = {
    "p_filter.received_from": "--since",
    "received_to": "--until",
    "p_filter.error_code": "--error-code",
    "p_filter.kind": "--kind",
    "p_filter.q": "--search",
    "p_reason": "--reason",
}
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
    return any(
        getattr(args, name, None)
        for name in ("error_code", "kind", "since", "until", "search", "status", "actor", "dry_run", "yes")
    )


def actor(context: Context, email: str | None) -> Actor:
    """The admin named by --as, as Supabase Auth knows them."""
    if not email:
        raise Refusal("actor_required", "a bulk action needs --as EMAIL: the admin it is recorded for")
    user = AuthAdmin(context.http, context.settings).find(email)
    role = role_of(user) if user else None
    if user is None or role is None:
        raise Refusal(
            "not_an_operator",
            f"{email} is not an operator of the admin screen (python -m lib.admin operators list)",
        )
    if role != "admin":
        raise Refusal("not_an_admin", f"{email} is a {role}: only an admin may retry or cancel jobs")
    return Actor(user["id"], user.get("email") or email)


def job_filter(args: argparse.Namespace) -> dict[str, Any]:
    """The admin screen's filter (document_jobs_internal.job_filter) from the command's flags."""
    found: dict[str, Any] = {
        "states": [args.status] if getattr(args, "status", None) else None,
        "kind": args.kind,
        "error_code": args.error_code,
        "received_from": args.since.isoformat() if args.since else None,
        "received_to": args.until.isoformat() if args.until else None,
        "q": args.search,
    }
    return {key: value for key, value in found.items() if value is not None}


def described(context: Context, found: dict[str, Any]) -> str:
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
    if "q" in found:
        words.append(f"matching {found['q']!r}")
    return display.text(", ".join(words))


def retry(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    return _one_or_many(context, args, "retry", commands.retry)


def cancel(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    return _one_or_many(context, args, "cancel", commands.cancel)


def _one_or_many(context: Context, args: argparse.Namespace, action: str, one: commands.Command) -> tuple[Any, str]:
    if args.job_id and is_bulk(args):
        raise Refusal("usage", f"{action} takes a job id or a filter, not both (see {action} --help)")
    if args.job_id and action == "retry" and args.reason:
        raise Refusal("usage", "retry JOB_ID records no reason: --reason goes with a filter (a bulk retry)")
    if args.job_id:
        args.job_id = commands.resolve_job(context, args.job_id)  # as people see it: a prefix, an e-mail's id
        return one(context, args)
    return bulk(context, args, action)


def bulk(context: Context, args: argparse.Namespace, action: str) -> tuple[Any, str]:
    """retry/cancel with a filter: a dry run, or a count applied at once (--yes)."""
    found = job_filter(args)
    if not found:
        raise Refusal(
            "filter_required",
            f"a bulk {action} needs a filter: --error-code, --kind, --since, --until, --search"
            + (", --status" if action == "cancel" else ""),
        )
    if not (args.dry_run or args.yes):
        raise Refusal(
            "confirmation_required",
            f"a bulk {action} changes every job the filter matches: run it with --dry-run first (it prints "
            "the count and the command that confirms exactly those jobs), or give --yes to count and apply at once",
        )
    if args.yes and not (args.reason or "").strip():
        raise Refusal("reason_required", "--reason is required: it is recorded in the audit")
    check_filters(context, args)
    who = actor(context, args.actor)
    params = {"p_action": action, "p_filter": found, "p_actor_id": who.id, "p_actor_email": who.email}
    prepared = _call(context, "prepare_document_jobs_bulk_action", params)
    count, scope = prepared["job_count"], described(context, prepared["filter"])
    if args.yes:
        return apply(context, prepared["bulk_action_id"], who, args.reason)
    if count == 0:
        text = f"no {STATES[action]} job matches ({scope}): nothing to {action}"
        return prepared | {"dry_run": True}, text
    command = ["python", "-m", "lib.admin", "confirm", prepared["bulk_action_id"], "--as", who.email]
    confirm = shlex.join([*command, "--reason", args.reason or "WHY"])
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
    who = actor(context, args.actor)
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
    params = {"p_bulk_action_id": bulk_action_id, "p_actor_id": who.id, "p_reason": reason, "p_batch_size": BATCH_SIZE}
    progress = _call(context, "apply_document_jobs_bulk_action", params)
    workers = progress["workers_started"]
    while not progress["done"]:
        processed = progress["processed"]
        progress = _call(context, "apply_document_jobs_bulk_action", params)
        workers += progress["workers_started"]
        if progress["processed"] == processed and not progress["done"]:
            raise Refusal("bulk_action_stuck", f"bulk action {bulk_action_id} made no progress: run confirm again")
    action = progress["action"]
    scope = described(context, progress["filter"])
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


def _call(context: Context, function: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        answer = execute(function, context.client.rpc(function, params))
    except DatabaseError as error:
        raise _bulk_refusal(context, error) from error
    if not isinstance(answer, dict):
        raise not_postgrest(context, function)
    return answer


def _bulk_refusal(context: Context, error: DatabaseError) -> Refusal:
    if error.code == "P0002":
        return Refusal("bulk_action_not_found", f"{error.message}: count again (--dry-run)")
    if error.code == "42501" and "who counted" in error.message:
        return Refusal("not_the_counting_operator", error.message + " (--as the e-mail the dry run was run with)")
    if error.code == "22023" and "counted more than" in error.message:
        return Refusal("count_expired", error.message + " (--dry-run)")
    return refused(context, error, FLAGS)
