"""document-jobs-admin verify [--since TIME] [--sample N]: the stored originals read back from
Storage and compared with their recorded size and SHA-256 (lib/originals.py).

Every original stored (or those stored since --since, or a random --sample of them, half among
the recent ones as the weekly job draws) is streamed with the server key and hashed, never
written anywhere. What was read is recorded as a run in the database (start_original_verification,
record_verified_originals), which judges it again and keeps the known mismatches: a mismatch found
here opens the outage original_mismatch as the weekly job's does, and a run that reads a known
mismatch as recorded again (an original put back from the office's copy) closes it. Each mismatch
is printed with the fax's short id; the exit status is 6 when there is one. On a terminal,
standard error shows how far it got.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from lib.admin import PROGRAM, commands, display
from lib.budget import Deadline
from lib.errors import Refusal
from lib.fax.terminal import encoding_of, terminal_text
from lib.originals import Outcome, Read, Recorded, compare, read_back
from lib.supabase.storage import Storage, StorageError

PAGE = 100  # originals asked for at once, and recorded at once (record_verified_originals takes 100)
MAX_SAMPLE = 100_000  # start_original_verification's bound
READ_SECONDS = 300.0  # one original's read: the CLI has no invocation budget, only this bound
SAID = {
    Outcome.MISSING: "missing from Storage",
    Outcome.SIZE_DIFFERS: "another size",
    Outcome.SHA256_DIFFERS: "another SHA-256",
}


def run(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    if args.sample is not None and not 1 <= args.sample <= MAX_SAMPLE:
        raise Refusal("invalid_argument", f"--sample must be between 1 and {MAX_SAMPLE:,}")
    since = args.since.isoformat() if args.since else None
    started = commands.rpc(
        context, "start_original_verification", {"p_since": since, "p_sample": args.sample}, dict,
        {"p_since": "--since", "p_sample": "--sample"},
    )  # fmt: skip
    run_id, total = int(started["run_id"]), int(started["total"])
    progress = _Progress(total, enabled=not args.json and sys.stderr.isatty())
    mismatches: list[dict[str, Any]] = []
    checked = 0
    after: str | None = None
    while True:
        page = commands.rpc(
            context, "original_verification_items", {"p_run_id": run_id, "p_after": after, "p_limit": PAGE}, list
        )
        if not page:
            break
        recorded = [Recorded.model_validate(item) for item in page]
        reads: list[Read] = []
        try:
            for item in recorded:
                reads.append(_read(context, item))
                found = compare(item, reads[-1])
                if found is not Outcome.MATCHES:
                    mismatches.append(_mismatch(item, reads[-1], found))
                progress.show(checked + len(reads), len(mismatches))
        finally:
            if reads:  # what was read is recorded, even when a later read failed
                checks = [read.model_dump(mode="json") for read in reads]
                commands.rpc(context, "record_verified_originals", {"p_run_id": run_id, "p_checks": checks}, dict)
        checked += len(reads)
        after = str(recorded[-1].id)
    progress.done()
    data = {"run_id": run_id, "total": total, "checked": checked, "mismatched": len(mismatches),
            "mismatches": mismatches}  # fmt: skip
    return data, _shown(data)


def _read(context: commands.Context, item: Recorded) -> Read:
    settings = context.settings
    storage = Storage(context.http, settings.supabase_url, settings.server_key, item.bucket)
    try:
        return read_back(storage, item, Deadline(time.monotonic() + READ_SECONDS))
    except StorageError as error:
        if error.status is None:
            raise Refusal(
                "storage_unreachable",
                f"cannot reach Storage at {settings.supabase_url} (SUPABASE_URL): {error.network}",
                status=503,
            ) from error
        raise Refusal(
            "storage_error",
            f"Storage refused {item.bucket}/{item.storage_path}: {error.status} {error.message or ''}".rstrip(),
        ) from error


def _mismatch(item: Recorded, read: Read, outcome: Outcome) -> dict[str, Any]:
    return {
        "fax": item.fax,
        "attachment_id": str(item.id),
        "filename": item.filename,
        "object": f"{item.bucket}/{item.storage_path}",
        "outcome": outcome.value,
        "recorded_size": item.size_bytes,
        "read_size": read.size_bytes,
        "recorded_sha256": item.sha256,
        "read_sha256": read.sha256,
    }


def _shown(data: dict[str, Any]) -> str:
    lines = []
    for found in data["mismatches"]:
        what = SAID[Outcome(found["outcome"])]
        if found["outcome"] == Outcome.SIZE_DIFFERS:
            read = "more" if found["read_size"] is None else display.count(found["read_size"])
            what += f" ({read} bytes, {display.count(found['recorded_size'])} recorded)"
        lines.append(
            f"MISMATCH  fax {found['fax']}  {display.text(found['object'])}  {what}  "
            f"(attachment {found['attachment_id']}, {display.text(found['filename']) or 'no file name'})"
        )
    read = f"read back {display.count(data['checked'])} of {display.count(data['total'])} stored originals"
    if data["mismatched"]:
        lines.append(
            f"{read}: {display.count(data['mismatched'])} not as recorded (the outage original_mismatch is open; "
            f"{PROGRAM} health shows it, and its advice)"
        )
    else:
        lines.append(f"{read}: every one as recorded (size and SHA-256)")
    return "\n".join(lines)


class _Progress:
    """How far the run got, on standard error, rewritten in place: only on a terminal."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._total, self._enabled, self._shown_at = total, enabled, 0.0

    def show(self, checked: int, mismatched: int) -> None:
        now = time.monotonic()
        if not self._enabled or (now - self._shown_at < 0.2 and checked < self._total):
            return
        self._shown_at = now
        line = f"verify: {checked:,} of {self._total:,} originals read, {mismatched:,} not as recorded"
        print("\r" + terminal_text(line, encoding_of(sys.stderr)), end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self._enabled and self._shown_at:
            print(file=sys.stderr, flush=True)
