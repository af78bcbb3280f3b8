"""The verify_originals job: a sample of the stored originals read back each week.

The cron job document-jobs-verify enqueues it (at most one live). Its first start draws the run's
sample in the database (start_verify_originals_v2: half among the originals stored in the last
week, the rest among all, at random); each original is streamed from Storage with the server key
and hashed (lib/originals.py read_back, never kept, never changed), and what was read is sent in
batches to record_original_checks_v2, fenced like every write of a job, which judges it against
the row, records it in original_verifications and opens the outage original_mismatch once for a
mismatch not known before. A job run again (a time-budget release, a retry) reads only what its
run has not read yet.

A mismatch is a finding, not the job's failure: the job completes, and the outage tells. Storage
failing follows the failure table like the other kinds' (retried, or released when a key or a
setting is wrong).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lib.budget import Checkpoint
from lib.originals import Read, read_back
from lib.supabase.storage import Storage, StorageError
from lib.worker.fetch_email import storage_failure
from lib.worker.queue import Job, Queue

# The kind enqueue_original_verification enqueues (supabase/migrations; lib/worker/kinds.py).
KIND = "verify_originals"
# Reads sent per call (record_original_checks refuses more than 100).
RECORD_BATCH = 20


@dataclass(frozen=True)
class VerifyContext:
    queue: Queue
    storage: Callable[[str], Storage]  # the Storage of a bucket (an attachment's row names its bucket)


def run(job: Job, ctx: VerifyContext, checkpoint: Checkpoint) -> int:
    """Reads back every original of the job's run not read yet; returns how many differed."""
    start = ctx.queue.start_verify_originals(job)
    mismatched = 0
    reads: list[Read] = []
    for recorded in start.items:
        checkpoint()
        try:
            reads.append(read_back(ctx.storage(recorded.bucket), recorded, checkpoint.deadline))
        except StorageError as error:
            if reads:  # what was read stays read: a run again goes on after it
                ctx.queue.record_original_checks(job, start.run_id, reads)
            raise storage_failure(error) from error
        if len(reads) >= RECORD_BATCH:
            mismatched += int(ctx.queue.record_original_checks(job, start.run_id, reads).get("mismatched", 0))
            reads = []
    if reads:
        mismatched += int(ctx.queue.record_original_checks(job, start.run_id, reads).get("mismatched", 0))
    return mismatched
