"""The one Python mirror of the database's bounds (document_jobs_internal.limits(), and the claim's
default lease): a worker set beyond them would be refused on every call. Python cannot ask the
database at import time, so each is written here once; tests/database/test_limits_mirror.py pins every one to
the SQL."""

from __future__ import annotations

from datetime import timedelta

# claim_document_jobs' default p_lease.
DEFAULT_LEASE = timedelta(minutes=5)
# limits().lease_max: a worker set above it could claim nothing at all.
MAX_LEASE = timedelta(hours=1)
# limits().retry_after_max: a provider that asks for more (a quota) is asked again after this.
MAX_RETRY_AFTER = timedelta(days=1)
# limits().free_budget_releases: time-budget releases in a row (no attachment stored in between)
# that give their attempt back; from the next one on each counts, so a download that trickles
# forever ends in `failed` with its history.
TIME_BUDGET_FREE_RELEASES = 3
# limits().jobs_per_invocation: invoke_document_jobs fans out one call per this many claimable
# jobs, so a worker that took more would leave the others idle, and fewer would leave work waiting.
MAX_JOBS_PER_INVOCATION = 3
# limits().invocation_header: the header the worker names its invocation in on every call to the
# database; claim_document_jobs records it in the attempt history (PostgREST hands request headers
# to SQL as request.headers).
INVOCATION_HEADER = "x-document-jobs-invocation"
