"""What api/internal/document_jobs.py does with a request: authenticate, wire, run one invocation."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx

from lib import log
from lib.budget import Clock
from lib.failures import FailureCode
from lib.settings import ConfigError, InternalCallSettings, WorkerSettings
from lib.supabase.client import TIMEOUT, service_client
from lib.supabase.storage import Storage
from lib.worker import export_faxes, fetch_email, prepare_fax, reconcile, verify_originals
from lib.worker.auth import is_authorized
from lib.worker.kinds import KINDS, Contexts, runner
from lib.worker.loop import STEP_RESERVE, RunJob, run_invocation
from lib.worker.queue import Queue
from lib.worker.rate_limit import ResendLimiter
from lib.worker.resend import ResendClient


def handle(
    authorization: str | None, clock: Clock = time.monotonic, request_id: str | None = None
) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body for one POST to the worker. request_id: Vercel's x-vercel-id
    header, which names the invocation in Vercel's logs; the attempt history records it."""
    started = clock()  # the time budget counts from the request, imports included
    if not is_authorized(authorization, InternalCallSettings.load()):
        return 401, {"error": "unauthorized"}
    try:
        settings = WorkerSettings.load()
    except ConfigError as error:
        log.event("worker_misconfigured", logging.ERROR, error=str(error))
        return 500, {"error": "misconfigured"}
    invocation_id = invocation_name(request_id)
    with connected(settings, invocation_id) as (queue, run_job):
        summary = run_invocation(queue, KINDS, run_job, clock, started)
    log.event("invocation_finished", invocation_id=invocation_id, **summary.model_dump())
    # pg_net records the status of every call in net._http_response; a 200 there would say all
    # is well while no job can be claimed. 503: the database could not be reached, or refused
    # (stopped_because database_unauthorized: it refused the server key; the log names the setting).
    status = 503 if summary.stopped_because in (FailureCode.DATABASE_ERROR, FailureCode.DATABASE_UNAUTHORIZED) else 200
    return status, summary.model_dump()


def invocation_name(request_id: str | None) -> str:
    """Vercel's request id when it is a plain printable header value, else a new id (the same one
    is in this invocation's log line, so the attempt history and the logs still meet)."""
    if request_id and len(request_id) <= 200 and request_id.isascii() and request_id.isprintable():
        return request_id
    return "local-" + uuid.uuid4().hex


@contextmanager
def connected(settings: WorkerSettings, invocation_id: str | None = None) -> Iterator[tuple[Queue, RunJob]]:
    """The queue and the job runner (each kind of lib/worker/kinds.py by the job's kind), over one
    HTTP client for Supabase and Resend."""
    with httpx.Client(timeout=TIMEOUT) as http:
        client = service_client(settings, http, invocation_id)
        queue = Queue(client, timedelta(seconds=settings.job_lease_seconds))
        # A slot is taken only with time left after the wait for one more step of the job.
        limiter = ResendLimiter(client, STEP_RESERVE)
        context = fetch_email.FetchContext(
            queue=queue,
            limiter=limiter,
            resend=ResendClient(
                http,
                settings.resend_api_url,
                settings.resend_api_key.get_secret_value(),
                settings.resend_timeout_seconds,
                pacing=limiter,
            ),
            storage=Storage(
                http,
                settings.supabase_url,
                settings.server_key,
                settings.attachments_bucket,
            ),
            max_bytes=settings.attachment_max_bytes,
        )
        reconciling = reconcile.ReconcileContext(queue=queue, resend=context.resend)

        def storage(bucket: str) -> Storage:
            return Storage(http, settings.supabase_url, settings.server_key, bucket)

        preparing = prepare_fax.PrepareContext(queue=queue, storage=storage, max_bytes=settings.attachment_max_bytes)
        verifying = verify_originals.VerifyContext(queue=queue, storage=storage)
        exporting = export_faxes.ExportContext(queue=queue, storage=storage, bucket=settings.attachments_bucket)
        run_job = runner(
            Contexts(reconcile=reconciling, fetch=context, prepare=preparing, verify=verifying, export=exporting)
        )
        yield queue, run_job
