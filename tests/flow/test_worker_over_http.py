"""The worker over real loopback HTTP, against the local PostgREST and Storage stand-ins and the
Resend sample provider: jobs end completed with their attachments stored once, under their
original Japanese names, even when a worker dies mid-job or comes back after losing its lease."""

from __future__ import annotations

import hashlib
import json
import random
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from api.internal.document_jobs import handler
from chaos.layer.resend import Fault, ResendFaults
from devstack.standins.resend import ResendProvider, SampleAttachment, SampleEmail, TeamRateLimit, sample_email
from lib.budget import Checkpoint, Deadline
from lib.settings import WorkerSettings
from lib.storable import storable_json
from lib.supabase.keys import api_headers
from lib.worker.endpoint import connected
from lib.worker.queue import LeaseLost, Queue
from lib.worker.records import StoredAttachment, StoredVersion
from tests.support.emails import receive_email
from tests.support.serve import serve

SECRET = "integration-internal-secret"
RESEND_KEY = "re_integration_key"


STORED = StoredAttachment(
    provider_attachment_id="att_x",
    filename="x.pdf",
    content_type="application/pdf",
    versions=(StoredVersion(version=1, size_bytes=1, sha256="0" * 64, bucket="fax-attachments",
                            storage_path="fax_received_emails/x/att_x.pdf"),),
)  # fmt: skip


def checkpoint(step) -> Checkpoint:
    """What the worker's loop hands a job: here only the lease extension, and all the time in the world."""
    return Checkpoint(Deadline(float("inf")), step)


class Crash(BaseException):
    """A worker process dying: nothing in the worker catches it."""


@pytest.fixture
def faults() -> ResendFaults:
    return ResendFaults()


@pytest.fixture
def provider(faults) -> Iterator[ResendProvider]:
    provider = ResendProvider(RESEND_KEY, seed=7)
    with provider.serve(faults.wrap):
        yield provider


@pytest.fixture
def worker_env(monkeypatch, stack_env, provider) -> None:
    for name, value in {"SUPABASE_URL": stack_env["SUPABASE_URL"],
                        "SUPABASE_SECRET_KEY": stack_env["SUPABASE_SECRET_KEY"],
                        "INTERNAL_FUNCTION_SECRET": SECRET, "RESEND_API_KEY": RESEND_KEY,
                        "RESEND_API_URL": provider.url}.items():  # fmt: skip
        monkeypatch.setenv(name, value)


@pytest.fixture
def worker_url(worker_env) -> Iterator[str]:
    with serve(handler) as url:
        yield url + "/api/internal/document_jobs"


def invoke_worker(url: str) -> dict:
    request = urllib.request.Request(url, data=b"{}", method="POST", headers={"Authorization": f"Bearer {SECRET}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def receive(db, provider: ResendProvider, email: SampleEmail) -> str:
    """What the webhook does: record the e-mail and enqueue its job (no Vault secrets here: no kick)."""
    provider.add_email(email)
    row = receive_email(db, email.email_id, storable_json(email.webhook_data())[0], f"msg_{email.email_id}")
    return str(row["fax_received_email_id"])


def stored_objects(stack_env, email_row_id: str) -> list[Path]:
    """The e-mail's attachments' objects in the Storage stand-in (its raw message, in raw/, aside)."""
    folder = Path(stack_env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments" / "fax_received_emails" / email_row_id
    return sorted(p for p in folder.glob("*") if p.is_file() and not p.name.endswith("#meta.json"))


def test_queued_jobs_end_completed_with_attachments_stored(db, provider, worker_url, stack_env) -> None:
    # A worker an earlier test started may still be finishing: its last write claims the next queued
    # job, which would be one of these (quiet_gateway_requests says how).
    quiet_gateway_requests(stack_env)
    rng = random.Random(1)
    emails = [sample_email(f"em_{n}", attachment_count=2 + n, rng=rng) for n in range(3)]
    rows = {email.email_id: receive(db, provider, email) for email in emails}

    summary = invoke_worker(worker_url)

    assert (summary["claimed"], summary["completed"]) == (3, 3)
    # Fetches are claimed before preparations (the claim order): the three faxes' prepare_fax jobs wait.
    jobs = db.execute("select kind, status from document_jobs order by kind").fetchall()
    assert [(r["kind"], r["status"]) for r in jobs] == [("fetch_email", "completed")] * 3 + [
        ("prepare_fax", "queued")
    ] * 3
    for email in emails:
        stored = db.execute(
            """select * from fax_received_email_attachments
                where fax_received_email_id = %s order by provider_attachment_id""",
            (rows[email.email_id],),
        ).fetchall()
        expected = sorted(email.attachments, key=lambda a: a.id)
        assert [(s["provider_attachment_id"], s["filename"], s["content_type"]) for s in stored] == [
            (a.id, a.filename, "application/pdf") for a in expected
        ]
        assert [s["sha256"] for s in stored] == [hashlib.sha256(a.content).hexdigest() for a in expected]
        objects = stored_objects(stack_env, rows[email.email_id])
        assert len(objects) == len(email.attachments)
        assert {p.read_bytes() for p in objects} == {a.content for a in email.attachments}
        assert all(p.name.isascii() for p in objects)


def gateway_requests(stack_env) -> dict[str, int]:
    return httpx.get(f"{stack_env['SUPABASE_URL']}/_control/requests", timeout=10).json()


def quiet_gateway_requests(stack_env, quiet_s: float = 3.0, at_most_s: float = 60.0) -> dict[str, int]:
    """The gateway's counts once it has served nothing for `quiet_s`: the counts are the whole
    stack's, and a worker an earlier test started (on the stack's function host, paced by its Resend
    limit) may still be finishing, and then claim the next job; its calls were once counted as this
    job's, and once it took the job itself. (The e-mail is recorded straight in the database, not
    through the gateway.)"""
    deadline = time.monotonic() + at_most_s
    counts = gateway_requests(stack_env)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        again = gateway_requests(stack_env)
        if again == counts:
            break
        counts = again
    return counts


@pytest.mark.parametrize("attachments", [1, 4])
def test_a_fax_costs_n_plus_5_calls_to_fetch_and_n_plus_3_to_prepare(db, provider, worker_url, stack_env,
                                                                     attachments) -> None:  # fmt: skip
    """Each call is an HTTP round trip when deployed: claim, start (the e-mail, what is stored and
    the listing's slot of the Resend limiter: once two table reads), one record per attachment
    (which renews the lease), the raw message's slot and record, and the completion, which claims
    the next job: here the prepare_fax job it enqueued, whose own start, the record of its sender
    (for the announcement), one record per attachment and completion (finding none) follow in the
    same invocation. The fetch was n + 3 before the raw
    message, n + 4 before the limiter, and 2n + 5 before that. Counted by the gateway."""
    # Without Resend's rate limit: on a loaded machine the limiter's pacing (by the database's clock)
    # and the stand-in's window (by its own) can disagree, and a 429's release and second claim
    # are throttling's calls (the test below of a 429 on the listing), not a job's.
    provider.rate_limit = TeamRateLimit(None)
    # Quiet first, the job after: a worker still finishing would otherwise claim it next.
    before = quiet_gateway_requests(stack_env)
    receive(db, provider, sample_email("em_trips", attachment_count=attachments, rng=random.Random(3)))

    assert invoke_worker(worker_url)["completed"] == 2

    after = gateway_requests(stack_env)
    served = {path: after[path] - before.get(path, 0) for path in after if after[path] != before.get(path, 0)}
    assert {path: n for path, n in served.items() if path.startswith(("POST /rest/v1/", "GET /rest/v1/"))} == {
        "POST /rest/v1/rpc/claim_document_job_of_kinds": 1,  # reconcile_emails first, then fetch_email
        "POST /rest/v1/rpc/start_fetch_email_v2": 1,
        "POST /rest/v1/rpc/record_document_attachment_v3": attachments,
        "POST /rest/v1/rpc/reserve_provider_request": 1,  # the raw message's request to Resend
        "POST /rest/v1/rpc/record_raw_message_v2": 1,
        "POST /rest/v1/rpc/complete_document_job_and_claim_next_v2": 2,
        "POST /rest/v1/rpc/start_prepare_fax_v3": 1,
        "POST /rest/v1/rpc/record_fax_sender_v1": 1,
        "POST /rest/v1/rpc/record_fax_attachment_view_v2": attachments,
    }, "and no table read"
    assert {r["status"] for r in db.execute("select status from document_jobs")} == {"completed"}


def test_a_job_run_again_after_a_crash_stores_nothing_twice(db, admin, provider, worker_url, stack_env, monkeypatch):
    email = sample_email("em_crash", attachment_count=3)
    row_id = receive(db, provider, email)
    uploads = []

    def die_after_upload(self, job, attachment) -> None:
        uploads.append(attachment.versions[-1].storage_path)
        raise Crash  # the upload happened, its row was never written

    with monkeypatch.context() as patch, connected(WorkerSettings.load()) as (queue, run_job):
        patch.setattr(Queue, "record_attachment", die_after_upload)
        job = queue.claim("fetch_email")
        with pytest.raises(Crash):
            run_job(job, checkpoint(lambda: queue.extend(job)))
    assert len(stored_objects(stack_env, row_id)) == 1 and len(uploads) == 1
    admin.execute("update document_jobs set lease_until = now() - interval '1 second'")  # the lease passes

    summary = invoke_worker(worker_url)

    assert summary["completed"] == 2, "the fetch, then its fax's preparation"
    job_row = db.execute("select status, attempts, generation from document_jobs where kind = 'fetch_email'").fetchone()
    assert job_row == {"status": "completed", "attempts": 2, "generation": 2}
    assert db.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"] == 3
    objects = stored_objects(stack_env, row_id)
    assert len(objects) == 3, "the object uploaded before the crash counted as stored: not replaced, not duplicated"
    assert {p.read_bytes() for p in objects} == {a.content for a in email.attachments}


def test_a_stale_worker_loses_its_job_and_writes_nothing(db, admin, provider, worker_env, stack_env) -> None:
    email = sample_email("em_stale", attachment_count=2)
    row_id = receive(db, provider, email)
    settings = WorkerSettings.load()
    with connected(settings) as (stale_queue, stale_run), connected(settings) as (queue, run_job):
        stale_job = stale_queue.claim("fetch_email")
        admin.execute("update document_jobs set lease_until = now() - interval '1 second'")  # it froze
        job = queue.claim("fetch_email")
        assert (stale_job.generation, job.generation) == (1, 2)
        before = db.execute("select * from document_jobs").fetchone()

        with pytest.raises(LeaseLost):
            stale_run(stale_job, checkpoint(lambda: stale_queue.extend(stale_job)))
        for write in (lambda: stale_queue.complete(stale_job),
                      lambda: stale_queue.fail(stale_job, "resend_unavailable", "x", retryable=True),
                      lambda: stale_queue.release(stale_job, timedelta(0)),
                      lambda: stale_queue.record_attachment(stale_job, STORED)):  # fmt: skip
            with pytest.raises(LeaseLost):
                write()

        assert db.execute("select * from document_jobs").fetchone() == before
        assert stored_objects(stack_env, row_id) == []
        assert db.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"] == 0

        run_job(job, checkpoint(lambda: queue.extend(job)))  # the live holder is unaffected
        queue.complete(job)
    assert db.execute("select status from document_jobs where kind = 'fetch_email'").fetchone()["status"] == "completed"
    assert len(stored_objects(stack_env, row_id)) == 2


@pytest.mark.parametrize(
    ("error_name", "code"),
    [("rate_limit_exceeded", "resend_rate_limited"), ("daily_quota_exceeded", "resend_quota_exceeded")],
)
def test_a_provider_wait_longer_than_a_day_is_cut_to_a_day(db, provider, faults, worker_url, error_name, code):
    """The database refuses a retry_after over a day (a job parked longer is lost work): the worker asks
    again after a day instead of failing to record the failure and leaving the job running."""
    receive(db, provider, sample_email("em_wait", attachment_count=1))
    faults.add(Fault(kind="status", target="list", status=429, name=error_name, retry_after=3 * 86400))

    summary = invoke_worker(worker_url)

    assert (summary["claimed"], summary["unrecorded"]) == (1, 0), summary
    job = db.execute("select status, last_error_code, run_after - now() as wait from document_jobs").fetchone()
    assert (job["status"], job["last_error_code"]) == ("queued", code)
    assert timedelta(hours=23) < job["wait"] <= timedelta(days=1)


def served_object(stack_env, key: str) -> httpx.Response:
    """The object as an operator's browser gets it: through a signed URL (lib/screen/endpoint.py)."""
    storage = f"{stack_env['SUPABASE_URL']}/storage/v1"
    signed = httpx.post(f"{storage}/object/sign/fax-attachments/{key}", json={"expiresIn": 60},
                        headers=api_headers(stack_env["SUPABASE_SECRET_KEY"]), timeout=10)  # fmt: skip
    signed.raise_for_status()
    return httpx.get(storage + signed.json()["signedURL"], timeout=10)


def test_sender_chosen_content_types_are_stored_and_served_as_document_types(db, provider, worker_url, stack_env):
    declared = {"page.html": "text/html", "logo.svg": "image/svg+xml",
                "fax.pdf": "application/pdf\r\nX-Injected: 1", "scan.TIF": "application/octet-stream"}  # fmt: skip
    email = SampleEmail("em_types", tuple(SampleAttachment(name, kind, b"<script>alert(1)</script>")
                                          for name, kind in declared.items()))  # fmt: skip
    receive(db, provider, email)

    assert invoke_worker(worker_url)["completed"] == 1

    rows = db.execute("select filename, content_type, storage_path from fax_received_email_attachments").fetchall()
    stored = {r["filename"]: (r["content_type"], r["storage_path"].rsplit(".", 1)[1]) for r in rows}
    assert stored == {"page.html": ("application/octet-stream", "bin"), "logo.svg": ("application/octet-stream", "bin"),
                      "fax.pdf": ("application/octet-stream", "bin"), "scan.TIF": ("image/tiff", "tif")}  # fmt: skip
    for row in rows:
        served = served_object(stack_env, row["storage_path"])
        assert (served.status_code, served.headers["content-type"]) == (200, row["content_type"])
        assert "x-injected" not in served.headers
        assert served.content == b"<script>alert(1)</script>"


def test_a_file_name_postgres_cannot_store_neither_poisons_the_job_nor_blocks_the_others(db, provider, worker_url):
    names = ["請求書\x00.pdf", "送付状.pdf", "\x00"]
    email = SampleEmail(
        "em_nul_names", tuple(SampleAttachment(name, "application/pdf", b"%PDF-1.4 page") for name in names)
    )
    receive(db, provider, email)

    summary = invoke_worker(worker_url)

    assert (summary["completed"], summary["retried"]) == (1, 0)
    rows = db.execute("select provider_attachment_id, filename from fax_received_email_attachments").fetchall()
    assert sorted(r["filename"] for r in rows) == sorted(["請求書\ufffd.pdf", "送付状.pdf", "\ufffd"])
    assert {r["provider_attachment_id"] for r in rows} == {a.id for a in email.attachments}
    assert invoke_worker(worker_url)["claimed"] == 0, "nothing left to retry"
