"""The queue as it was before the per-call work, for the "before" arm: the project's migrations at
BEFORE_COMMIT, applied by the Supabase CLI (`supabase db push`, as devstack applies today's) to a
cluster of its own, with devstack's settings, on the same machine. At that commit every argument
of claim_document_jobs and complete_document_job was checked through a document_jobs_internal
helper (a PL/pgSQL call with its own SET search_path each), the claim read the kind from
document_job_kinds every time, and a BEFORE trigger noted each claim's attempt (migrations
20261130003100 and 20261130004000 changed that)."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import ROOT, connect
from devstack import cluster

BEFORE_COMMIT = "6c0ac7c4916248ae09759aa6fd577ac39677bebc"  # main just before the per-call work was merged


@contextmanager
def before_cluster() -> Iterator[str]:
    """The cluster's superuser conninfo, while it runs; it is stopped and deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="bench-before-") as project:
        archive = subprocess.run(
            ["git", "archive", BEFORE_COMMIT, "supabase/config.toml", "supabase/migrations"],
            cwd=ROOT, check=True, capture_output=True,
        ).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(project, filter="data")
        before = cluster.start(project=Path(project))
    try:
        conninfo = before.conninfo(cluster.SUPERUSER)
        with connect(conninfo) as conn:
            conn.execute("select cron.unschedule(jobid) from cron.job")  # only the bench touches this queue
        yield conninfo
    finally:
        before.stop()
