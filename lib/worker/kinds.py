"""The kinds of job the worker runs, each with its runner, in the order it claims them: the one
registry. The database holds the same order (document_job_kinds.claim_order, which
claim_document_job_of_kinds and a completion's next claim follow, and by which the fan-out counts
only the kinds a worker claims); tests/database/test_limits_mirror.py fails when the two differ.

A reconciliation first: at most one is ever live, so it delays no fetch by more than that one and
no backlog of fetches starves it. Fetching before preparing: a fax not yet stored can be lost, one
not yet prepared is only not yet drawn (its original downloads all the same). Verifying last: the
weekly read-back of originals waits for nothing and nothing waits for it. An admin's export after
all of them: hours of reading at most once in a while, and nothing waits on it but the admin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from lib.budget import Checkpoint
from lib.worker import export_faxes, fetch_email, prepare_fax, reconcile, verify_originals
from lib.worker.queue import Job


@dataclass(frozen=True)
class Contexts:
    """What each kind's runner needs, made once per invocation (lib/worker/endpoint.py)."""

    reconcile: reconcile.ReconcileContext
    fetch: fetch_email.FetchContext
    prepare: prepare_fax.PrepareContext
    verify: verify_originals.VerifyContext
    export: export_faxes.ExportContext


Runner = Callable[[Job, Contexts, Checkpoint], object]

RUNNERS: Mapping[str, Runner] = MappingProxyType(
    {
        reconcile.KIND: lambda job, contexts, checkpoint: reconcile.run(job, contexts.reconcile, checkpoint),
        fetch_email.KIND: lambda job, contexts, checkpoint: fetch_email.run(job, contexts.fetch, checkpoint),
        prepare_fax.KIND: lambda job, contexts, checkpoint: prepare_fax.run(job, contexts.prepare, checkpoint),
        verify_originals.KIND: lambda job, contexts, checkpoint: verify_originals.run(job, contexts.verify, checkpoint),
        export_faxes.KIND: lambda job, contexts, checkpoint: export_faxes.run(job, contexts.export, checkpoint),
    }
)
# The kinds an invocation claims, in claim order.
KINDS = tuple(RUNNERS)


def runner(contexts: Contexts) -> Callable[[Job, Checkpoint], object]:
    """The job runner of one invocation: each job run by its kind's runner."""

    def run_job(job: Job, checkpoint: Checkpoint) -> object:
        # Only KINDS are ever claimed: a job of another kind here is a bug (retried, and logged).
        return RUNNERS[job.kind](job, contexts, checkpoint)

    return run_job
