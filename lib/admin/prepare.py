"""document-jobs-admin prepare --as EMAIL [--dry-run] [--batch N]: the faxes stored before the
prepare_fax job existed, prepared now (a backfill).

A fax stored since is prepared when its fetch completes; one stored before has no view, so the
screen has no pages, page count or thumbnail for it. This counts them (count_unprepared_faxes),
then walks every e-mail in batches (admin_enqueue_prepare_fax_jobs: by id, a cursor from one batch
to the next) and enqueues a prepare_fax job for each with an attachment no job has looked at,
audited as the operator of --as, and the database starts workers for them within its cap. Each
batch prints how far it got on standard error. Run again, it enqueues nothing twice: an e-mail
with a live job, or whose every attachment a job looked at (prepared, or found unpreparable), is
left alone. --dry-run only counts.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lib.admin import PROGRAM, bulk, commands
from lib.errors import Refusal
from lib.fax.terminal import encoding_of, terminal_text

BATCH = 500
MAX_BATCH = 1000  # admin_enqueue_prepare_fax_jobs' bound


def run(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    if not 1 <= args.batch <= MAX_BATCH:
        raise Refusal("invalid_argument", f"--batch must be between 1 and {MAX_BATCH}")
    counts = commands.rpc(context, "count_unprepared_faxes", {}, dict)
    faxes, unprepared, live = int(counts["faxes"]), int(counts["unprepared"]), int(counts["live_jobs"])
    counted = f"{unprepared:,} of {faxes:,} faxes have an attachment not yet prepared ({live:,} prepare jobs live)"
    if args.dry_run:
        return {"faxes": faxes, "unprepared": unprepared, "live_jobs": live, "dry_run": True}, (
            f"{counted}; nothing enqueued (dry run)"
        )
    who = bulk.actor(context, args.actor, "prepare")
    scanned = enqueued = started = 0
    after: str | None = None
    while True:
        params = {"p_actor_id": who.id, "p_actor_email": who.email, "p_after": after, "p_limit": args.batch}
        answer = commands.rpc(context, "admin_enqueue_prepare_fax_jobs", params, dict)
        scanned += int(answer["scanned"])
        enqueued += int(answer["enqueued"])
        started += int(answer["follow_ups"])
        if answer["scanned"] and not args.json:
            _progress(f"prepare: {scanned:,} of {faxes:,} faxes looked at, {enqueued:,} jobs enqueued")
        if answer["last_id"] is None or int(answer["scanned"]) < args.batch:
            break
        after = str(answer["last_id"])
    data = {"faxes": faxes, "unprepared": unprepared, "scanned": scanned, "enqueued": enqueued,
            "workers_started": started, "dry_run": False, "actor": {"id": who.id, "email": who.email}}  # fmt: skip
    return data, (
        f"{counted}; enqueued {enqueued:,} prepare jobs (workers started: {started}), audited as {who.email}; "
        f"{PROGRAM} list --kind prepare_fax shows them"
    )


def _progress(line: str) -> None:
    print(terminal_text(line, encoding_of(sys.stderr)), file=sys.stderr, flush=True)
