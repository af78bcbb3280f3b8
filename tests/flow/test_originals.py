"""Originals that are never replaced, on the local stack (PostgreSQL, PostgREST and Storage stand-ins
over loopback HTTP, the Resend sample provider in process): a stale worker whose lease passed while
it was frozen just before its upload, its download cut short, replaces nothing and records nothing;
an object already at the key with the download's SHA-256 counts as stored; one with other bytes is
kept, the download stored beside it, both recorded as versions and the alert original_differs sent
once; an object the worker found wrong right after uploading it is deleted only as the database
allows, never one a row records, and its key is never recorded afterwards; and the e-mail itself is
kept beside its attachments, or why it is not is noted."""

from __future__ import annotations

import email
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from email.header import decode_header, make_header
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from chaos.layer.resend import Fault, ListingEdit
from devstack.standins.resend import SampleEmail, sample_email
from lib.failures import JobFailure
from lib.settings import WorkerSettings
from lib.supabase.client import TIMEOUT, service_client
from lib.supabase.storage import Storage
from lib.worker import fetch_email
from lib.worker.endpoint import connected
from lib.worker.loop import STEP_RESERVE
from lib.worker.queue import Job, LeaseLost, Queue
from lib.worker.rate_limit import ResendLimiter
from lib.worker.records import attachment_key, raw_message_key
from lib.worker.resend import ResendClient
from tests.flow import test_worker_over_http as over_http
from tests.flow.test_worker_over_http import checkpoint, receive, stored_objects
from tests.support.alerts import alerts_until_marker

# The in-process Resend provider, its faults, and the worker's settings pointing at it.
faults, provider, worker_env = over_http.faults, over_http.provider, over_http.worker_env

BUCKET = "fax-attachments"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def folder(stack_env: dict[str, str], email_row_id: str) -> Path:
    return Path(stack_env["DEVSTACK_STORAGE_DIR"]) / BUCKET / "fax_received_emails" / email_row_id


def objects(stack_env: dict[str, str], email_row_id: str) -> dict[str, bytes]:
    """Every object of the e-mail in the Storage stand-in, by its key under the e-mail's folder."""
    root = folder(stack_env, email_row_id)
    files = root.rglob("*") if root.exists() else []
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files
            if p.is_file() and not p.name.endswith("#meta.json")}  # fmt: skip


def recorded(db) -> list[dict[str, Any]]:
    return db.execute(
        """select provider_attachment_id, version, size_bytes, sha256, split_part(storage_path, '/', 3) as name
             from fax_received_email_attachments order by provider_attachment_id, version"""
    ).fetchall()


def discarded(admin) -> list[dict[str, Any]]:
    return admin.execute("select * from document_jobs_internal.discarded_objects order by storage_path").fetchall()


def place(stack_env: dict[str, str], key: str, data: bytes) -> None:
    """An object put at `key` through Storage's own API with the secret key (what a worker that died
    between its upload and its record left there)."""
    with httpx.Client(timeout=TIMEOUT) as http:
        Storage(http, stack_env["SUPABASE_URL"], stack_env["SUPABASE_SECRET_KEY"], BUCKET).upload(
            key, data, "application/pdf"
        )


def run_one(settings: WorkerSettings) -> Job:
    """A worker claims the fetch_email job, runs it and completes it."""
    with connected(settings) as (queue, run_job):
        job = queue.claim("fetch_email")
        assert job is not None
        run_job(job, checkpoint(lambda: queue.extend(job)))
        queue.complete(job)
    return job


class FrozenBeforeUpload(Storage):
    """Storage as a worker sees it that freezes just before its upload (its download already open)
    until `thaw` is set; `reached` says it got there."""

    def __init__(self, *args: Any, reached: threading.Event, thaw: threading.Event) -> None:
        super().__init__(*args)
        self.reached, self.thaw = reached, thaw

    def upload(self, *args: Any, **kwargs: Any) -> None:
        self.reached.set()
        assert self.thaw.wait(60), "never thawed"
        super().upload(*args, **kwargs)


@contextmanager
def frozen_worker(settings: WorkerSettings) -> Iterator[tuple[Queue, fetch_email.FetchContext, threading.Event,
                                                           threading.Event]]:  # fmt: skip
    """A worker as lib/worker/endpoint.py wires one, its Storage frozen before each upload."""
    reached, thaw = threading.Event(), threading.Event()
    with httpx.Client(timeout=TIMEOUT) as http:
        client = service_client(settings, http)
        queue = Queue(client, timedelta(seconds=settings.job_lease_seconds))
        limiter = ResendLimiter(client, STEP_RESERVE)
        resend = ResendClient(http, settings.resend_api_url, settings.resend_api_key.get_secret_value(),
                              settings.resend_timeout_seconds, pacing=limiter)  # fmt: skip
        storage = FrozenBeforeUpload(http, settings.supabase_url, settings.server_key, settings.attachments_bucket,
                                     reached=reached, thaw=thaw)  # fmt: skip
        try:
            yield (
                queue,
                fetch_email.FetchContext(queue, limiter, resend, storage, settings.attachment_max_bytes),
                reached,
                thaw,
            )
        finally:
            thaw.set()  # a stale worker still waiting goes on, and ends


@pytest.mark.parametrize("listed", ["its size listed", "its size unknown"])
def test_a_stale_worker_frozen_before_its_upload_with_a_short_download_replaces_nothing(
    db, admin, provider, faults, worker_env, stack_env, hook, listed
) -> None:
    """The case measured before: the healthy worker stored and recorded the original; the stale one,
    its lease lost while it was frozen just before its upload and its download cut short to 300
    bytes, once replaced them by an upsert. Now its upload meets the recorded object: with a listed
    size the short body fails as a request, and without one the object found is not its download,
    and the fenced call before storing beside finds the job lost. Nothing replaced, nothing beside,
    nothing recorded, no alert."""
    fax = sample_email("em_frozen", attachment_count=1)
    [original] = fax.attachments
    row_id = receive(db, provider, fax)
    settings = WorkerSettings.load()
    # The stale worker's listing and download, the first of each: cut short, its size known or not.
    if listed == "its size unknown":
        faults.add(Fault(kind="edit_listing", target="list", email_id=fax.email_id, count=1,
                         edits=[ListingEdit(index=0, unset=["size"])]))  # fmt: skip
    faults.add(Fault(kind="short_body", target="download", email_id=fax.email_id, length=300, count=1))

    with frozen_worker(settings) as (stale_queue, stale_context, reached, thaw):
        stale_job = stale_queue.claim("fetch_email")
        assert stale_job is not None
        outcome: list[BaseException] = []

        def stale() -> None:
            try:
                fetch_email.run(stale_job, stale_context, checkpoint(lambda: stale_queue.extend(stale_job)))
            except BaseException as error:  # the test reads it
                outcome.append(error)

        thread = threading.Thread(target=stale)
        thread.start()
        assert reached.wait(60), "the stale worker reached its upload"
        admin.execute("update document_jobs set lease_until = now() - interval '1 second'")  # frozen past its lease
        healthy = run_one(settings)
        assert healthy.generation == stale_job.generation + 1
        before = (recorded(db), objects(stack_env, row_id))
        thaw.set()
        thread.join(60)

        [error] = outcome
        if listed == "its size listed":
            assert isinstance(error, JobFailure) and error.code == "download_failed", (
                "the short body failed as a request"
            )
        else:
            assert isinstance(error, LeaseLost), "the object found was not its download, and the job was not its own"
        with pytest.raises(LeaseLost):
            stale_queue.fail(stale_job, "download_failed", "x", retryable=True)

    key = attachment_key(UUID(row_id), original.id, "application/pdf").rsplit("/", 1)[1]
    assert (recorded(db), objects(stack_env, row_id)) == before, "the stale worker changed nothing"
    assert [(r["version"], r["name"], r["size_bytes"], r["sha256"]) for r in recorded(db)] == [
        (1, key, len(original.content), sha(original.content))]  # fmt: skip
    assert objects(stack_env, row_id)[key] == original.content, "the recorded original's bytes, as recorded"
    assert [p.name for p in stored_objects(stack_env, row_id)] == [key], "nothing stored beside it"
    assert discarded(admin) == []
    assert alerts_until_marker(db, hook, "original_differs") == []


def test_an_original_already_at_its_key_with_the_same_bytes_counts_as_stored(
    db, provider, worker_env, stack_env, hook
) -> None:
    fax = sample_email("em_same", attachment_count=1)
    [original] = fax.attachments
    row_id = receive(db, provider, fax)
    key = attachment_key(UUID(row_id), original.id, "application/pdf")
    place(stack_env, key, original.content)  # uploaded by a worker that died before recording it

    run_one(WorkerSettings.load())

    name = key.rsplit("/", 1)[1]
    assert [(r["version"], r["name"], r["sha256"]) for r in recorded(db)] == [(1, name, sha(original.content))]
    assert [p.name for p in stored_objects(stack_env, row_id)] == [name], "nothing beside it"
    assert alerts_until_marker(db, hook, "original_differs") == []


def test_an_object_at_the_key_with_other_bytes_is_kept_the_download_stored_beside_it_and_both_recorded(
    db, provider, worker_env, stack_env, hook
) -> None:
    fax = sample_email("em_other", attachment_count=1)
    [original] = fax.attachments
    row_id = receive(db, provider, fax)
    key = attachment_key(UUID(row_id), original.id, "application/pdf")
    other = b"%PDF-1.4 not what Resend serves\n" * 5
    place(stack_env, key, other)

    run_one(WorkerSettings.load())

    name, beside = key.rsplit("/", 1)[1], attachment_key(UUID(row_id), original.id, "application/pdf", 2)
    beside_name = beside.rsplit("/", 1)[1]
    assert [(r["version"], r["name"], r["size_bytes"], r["sha256"]) for r in recorded(db)] == [
        (1, name, len(other), sha(other)), (2, beside_name, len(original.content), sha(original.content))]  # fmt: skip
    stored = objects(stack_env, row_id)
    assert (stored[name], stored[beside_name]) == (other, original.content), "the object found is kept as it was"
    [alert] = alerts_until_marker(db, hook, "original_differs")
    assert [(v["version"], v["sha256"]) for v in alert["versions"]] == [(1, sha(other)), (2, sha(original.content))]
    assert alert["job"]["fax_received_email_id"] == row_id
    assert "事務処理規程" in alert["advice_ja"] and "Nothing was overwritten" in alert["advice"]

    # Run again (a second job for the same e-mail): nothing is stored or recorded twice, nor alerted.
    db.execute("select enqueue_document_job('fetch_email', %s)", (row_id,))
    run_one(WorkerSettings.load())
    assert len(recorded(db)) == 2
    assert alerts_until_marker(db, hook, "original_differs") == [], "the alert is sent once"


@contextmanager
def longer_than_listed(content: bytes) -> Iterator[str]:
    """A download host that sends the listed bytes, then, a moment later, more: the upload states the
    listed length, so Storage may hold a whole object before the body is found wrong."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # no Content-Length: the body ends when the connection does

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.end_headers()
            self.wfile.write(content)
            self.wfile.flush()
            time.sleep(0.5)
            self.wfile.write(b"and more")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/longer.pdf"
    finally:
        server.shutdown()
        server.server_close()


def test_an_object_found_wrong_after_its_upload_is_deleted_only_unrecorded_and_its_key_given_up(
    db, admin, provider, faults, worker_env, stack_env
) -> None:
    """The only delete this product sends: an object it uploaded and then found wrong (a body that
    went on past its listed size once Storage had the listed bytes). The database allows it, under
    the job's fence, only for an object no row records, and lists it; the key is then never recorded,
    and the next attempt stores the fax beside it."""
    fax = sample_email("em_longer", attachment_count=1)
    [original] = fax.attachments
    row_id = receive(db, provider, fax)
    key = attachment_key(UUID(row_id), original.id, "application/pdf")
    settings = WorkerSettings.load()
    with longer_than_listed(original.content) as url:
        faults.add(Fault(kind="edit_listing", target="list", email_id=fax.email_id, count=1,
                         edits=[ListingEdit(index=0, set={"download_url": url})]))  # fmt: skip
        with connected(settings) as (queue, run_job):
            job = queue.claim("fetch_email")
            assert job is not None
            with pytest.raises(JobFailure) as failed:
                run_job(job, checkpoint(lambda: queue.extend(job)))
            assert failed.value.code == "download_failed"
            queue.fail(job, failed.value.code, failed.value.message, retryable=True)

    [given_up] = discarded(admin)
    assert (given_up["storage_path"], given_up["job_id"], given_up["generation"]) == (key, job.id, job.generation)
    assert (given_up["size_bytes"], given_up["sha256"]) == (len(original.content), sha(original.content))
    assert recorded(db) == [], "no row recorded it"
    assert key.rsplit("/", 1)[1] not in objects(stack_env, row_id), "deleted (or never stored whole)"

    db.execute("update document_jobs set run_after = now() where kind = 'fetch_email'")
    run_one(settings)

    beside = attachment_key(UUID(row_id), original.id, "application/pdf", 2).rsplit("/", 1)[1]
    assert [(r["version"], r["name"], r["sha256"]) for r in recorded(db)] == [(2, beside, sha(original.content))]
    assert key.rsplit("/", 1)[1] not in objects(stack_env, row_id), "the key given up stays empty"


def raw_row(db) -> dict[str, Any]:
    [row] = db.execute("select * from fax_received_email_raw_messages").fetchall()
    return row


def test_the_raw_message_is_stored_beside_the_attachments_with_its_own_digest(
    db, provider, worker_env, stack_env
) -> None:
    fax = sample_email("em_raw", attachment_count=2)
    row_id = receive(db, provider, fax)

    run_one(WorkerSettings.load())

    raw = fax.raw_message()
    row = raw_row(db)
    assert (row["version"], row["storage_path"], row["size_bytes"], row["sha256"], row["unavailable"]) == (
        1, raw_message_key(UUID(row_id)), len(raw), sha(raw), None)  # fmt: skip
    assert objects(stack_env, row_id)["raw/message.eml"] == raw, "the bytes Resend served, as they were"
    meta = json.loads((folder(stack_env, row_id) / "raw" / "message.eml#meta.json").read_text())
    assert meta["content_type"] == "message/rfc822"
    message = email.message_from_bytes(raw)
    assert (message["From"], str(make_header(decode_header(message["Subject"])))) == (fax.sender, fax.subject)
    parts = [part.get_payload(decode=True) for part in message.walk() if part.get_filename()]
    assert parts == [a.content for a in fax.attachments], "the evidence holds the attachments as received"
    assert len(recorded(db)) == 2


def test_without_a_raw_message_the_fax_is_stored_and_why_is_noted(db, provider, worker_env, stack_env) -> None:
    fax: SampleEmail = replace(sample_email("em_no_raw", attachment_count=1), raw=False)
    row_id = receive(db, provider, fax)

    run_one(WorkerSettings.load())

    assert [r["sha256"] for r in recorded(db)] == [sha(fax.attachments[0].content)]
    row = raw_row(db)
    assert (row["unavailable"], row["storage_path"], row["sha256"]) == ("raw_null", None, None)
    assert not any(name.startswith("raw/") for name in objects(stack_env, row_id))
    assert db.execute("select status from document_jobs where kind = 'fetch_email'").fetchone()["status"] == "completed"
