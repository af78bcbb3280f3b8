"""Deleting a fax after its keep-until date, in two recorded steps (migration 20261207180000):

document-jobs-admin delete-fax FAX --reason WHY --as EMAIL   record what goes, then delete the rows
document-jobs-admin purge-deleted --as EMAIL [--dry-run]     remove the deleted faxes' objects from Storage

delete-fax calls admin_delete_fax, which refuses before the fax's keep-until date
(retention_not_over, with the date) or while a job of it is live (jobs_live), and otherwise records
in fax_deletions what goes (keys, SHA-256, index values, the histories, the objects) and deletes the
rows. SQL cannot delete an object in Storage, so the objects stay until purge-deleted removes them
through Storage's API ("Delete an object", DELETE /storage/v1/object/{bucket}/{key}, with the server
key), each removal recorded at once in fax_object_removals: a run stopped halfway goes on where it
stopped, and an object already gone counts as removed. A command run by an admin, not a job of the
queue: a deletion is rare (once a year, after a fiscal year's period ends) and the step that
destroys originals stays a person's, named in its record.

The operator of --as (or DOCUMENT_JOBS_OPERATOR) is an admin, looked up in Supabase Auth as every
action's actor is (lib/admin/bulk.py actor) and checked again in each database call.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from lib.admin import PROGRAM, bulk, commands, display
from lib.admin.bulk import Actor, given_reason
from lib.errors import Refusal
from lib.screen import calls
from lib.supabase.storage import Storage, StorageError

PAGE = 1000  # fax_objects_to_remove's answer at once (it takes up to 10,000)


def add_arguments(command: Callable[[str, commands.Command, str], argparse.ArgumentParser]) -> None:
    """delete-fax and purge-deleted, through the CLI's own `command` (lib/admin/cli.py parser)."""
    deleting = command(
        "delete-fax",
        delete_fax,
        "delete a fax after its keep-until date: records what goes (keys, SHA-256, index values, histories) in "
        "fax_deletions, then deletes its rows; its objects stay in Storage until purge-deleted; as the admin of --as",
    )
    deleting.add_argument("fax", help="a job id or prefix, the e-mail's id, or Resend's e-mail id")
    deleting.add_argument("--reason", required=True, help="why: recorded with the deletion")
    deleting.add_argument("--as", dest="actor", metavar="EMAIL", help="the admin who deletes (else "
                          f"${bulk.OPERATOR_VARIABLE})")  # fmt: skip
    purging = command(
        "purge-deleted",
        purge_deleted,
        "remove from Storage the objects of deleted faxes (originals, raw e-mails, derived views) through Storage's "
        "API, each removal recorded; as the admin of --as",
    )
    purging.add_argument("--as", dest="actor", metavar="EMAIL", help="the admin who removes them (else "
                         f"${bulk.OPERATOR_VARIABLE})")  # fmt: skip
    purging.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")


def _admin(context: commands.Context, email: str | None, what: str) -> Actor:
    try:
        return bulk.actor(context, email, what)
    except Refusal as refusal:
        if refusal.code == "not_an_admin":
            said = refusal.message.split(": only")[0] + ": only an admin may delete faxes"
            raise Refusal("not_an_admin", said) from None
        raise


def _refused(refusal: Refusal) -> Refusal:
    if refusal.code == "database_error" and refusal.details.get("sqlstate") == "P0002":
        return Refusal("fax_not_found", refusal.message.split(": ", 1)[-1])
    return refusal


def delete_fax(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    from lib.admin.handling import fax_of

    reason = given_reason(args.reason)
    if not (reason or "").strip():
        raise Refusal("reason_required", "--reason must say why the fax is deleted: it is recorded with the deletion")
    email_id = fax_of(context, args.fax)
    who = _admin(context, args.actor, "delete-fax")
    assert reason is not None  # required
    try:
        rpc = commands.rpc_of(context, {"p_reason": "--reason"})
        result = calls.delete_fax(rpc, email_id, who.id, who.email, reason)
    except Refusal as refusal:
        raise _refused(refusal) from None
    objects = result["objects"]
    return result, (
        f"fax {email_id[:8]} deleted (kept until {result['keep_until']}), recorded as deletion "
        f"{result['deletion_id']} by {display.text(who.email)}; its {len(objects)} objects stay in Storage until "
        f"{PROGRAM} purge-deleted removes them"
    )


def purge_deleted(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    pending = commands.rpc(context, "fax_objects_to_remove", {"p_limit": PAGE}, list)
    if args.dry_run:
        lines = [f"  deletion {o['deletion_id']}  {o['kind']:<11}  {display.text(o['key'])}" for o in pending]
        said = f"{len(pending)} objects of deleted faxes to remove (dry run: nothing removed)"
        return {"objects": pending, "dry_run": True}, "\n".join([said, *lines])
    who = _admin(context, args.actor, "purge-deleted")
    removed: list[dict[str, Any]] = []
    settings = context.settings
    while pending:
        for item in pending:
            storage = Storage(context.http, settings.supabase_url, settings.server_key, item["bucket"])
            try:
                storage.delete(item["key"])  # one already gone counts as removed
            except StorageError as error:
                if error.status is None:
                    raise Refusal("storage_unreachable", f"Storage could not be reached: {error}", status=503) from None
                raise Refusal("storage_refused", f"Storage refused to delete {item['key']}: {error}") from None
            commands.rpc(context, "record_fax_object_removal", {
                "p_actor_id": who.id, "p_actor_email": who.email, "p_deletion_id": item["deletion_id"],
                "p_bucket": item["bucket"], "p_key": item["key"],
            }, bool)  # fmt: skip
            removed.append(item)
        pending = commands.rpc(context, "fax_objects_to_remove", {"p_limit": PAGE}, list)
    deletions = len({item["deletion_id"] for item in removed})
    return {"removed": removed, "dry_run": False, "actor": {"id": who.id, "email": who.email}}, (
        f"removed {len(removed)} objects of {deletions} deleted faxes from Storage, each recorded in "
        f"fax_object_removals as removed by {display.text(who.email)}"
    )
