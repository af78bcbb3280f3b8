"""No fax lost, stored wrongly or stuck in silence, end to end: signed webhooks into the function
host, the worker as Vercel's own runtime runs it, the Resend stand-in answering as Resend's
current reference says, Storage, PostgREST and the health check.

A failure that is not the job's own (a deleted key, a missing bucket, a refused server key)
releases the job without spending an attempt, and the operator hears of it once; a provider's
odd moment (a proxy's 408, a 409) is retried; what the provider lists but cannot be stored as
listed (no size, a lone surrogate in an id, a repeated id, a lying Content-Length) is stored
right or not at all."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.tools import inbound
from tests.support.alerts import alerts_until_marker, check_health
from tests.support.webhooks import WAIT_S, deliver

KEY_SETTINGS = "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"


@pytest.fixture
def fast_backoff(admin) -> Iterator[None]:
    """Retries after a second, not a minute (a setting, as the chaos run has it)."""
    admin.execute("update document_jobs_settings set backoff_base = '1 second'")
    yield
    admin.execute("update document_jobs_settings set backoff_base = '1 minute'")


def provider(env: dict[str, str], path: str, body: dict[str, Any]) -> None:
    # json.dumps escapes a lone surrogate (an id a test sets) as JavaScript does; httpx's json= cannot.
    httpx.post(f"{env['RESEND_API_URL']}/_control/{path}", content=json.dumps(body), timeout=10).raise_for_status()


def jobs(db) -> list[dict[str, Any]]:
    """The faxes' fetch_email jobs (a fetched fax's prepare_fax job is another matter)."""
    return db.execute(
        """select e.provider_email_id, j.status, j.attempts, j.last_error_code, j.last_error_message
             from document_jobs j join fax_received_emails e on e.id = j.fax_received_email_id
            where j.kind = 'fetch_email'
            order by e.provider_email_id"""
    ).fetchall()


def until(db, condition: Callable[[list[dict[str, Any]]], bool], what: str) -> list[dict[str, Any]]:
    """The jobs once `condition` holds, calling the cron's entry point every second meanwhile (a
    retried job waits for its backoff; a webhook's kick calls the worker only once)."""
    deadline = time.monotonic() + WAIT_S
    while not condition(rows := jobs(db)):
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {rows}"
        db.execute("select invoke_document_jobs()")
        time.sleep(1)
    return rows


def released_now(db) -> None:
    """The release's wait (10 minutes for a key) is over: what time does, made quick."""
    db.execute("update document_jobs set run_after = now() where status = 'queued'")


def worker_log(env: dict[str, str], event: str) -> list[dict[str, Any]]:
    lines = (Path(env["DEVSTACK_FOLDER"]) / "function_host.log").read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and f'"event": "{event}"' in line]


def stored(db) -> list[dict[str, Any]]:
    return db.execute(
        "select provider_attachment_id, sha256, storage_path from fax_received_email_attachments"
        " order by provider_attachment_id"
    ).fetchall()


def provider_digests(env: dict[str, str]) -> dict[str, str]:
    return httpx.get(f"{env['RESEND_API_URL']}/_control/attachments", timeout=10).json()


def test_a_deleted_resend_key_releases_the_faxes_alerts_once_and_a_key_fix_drains_them(db, env, hook) -> None:
    provider(env, "key", {"deleted": True})  # Resend now answers 400 validation_error "API key is invalid"
    try:
        emails = [inbound.add_email(env["RESEND_API_URL"], attachments=2) for _ in range(3)]
        assert [deliver(env, data).status_code for data in emails] == [200] * 3
        rows = until(db, lambda rows: len(rows) == 3 and all(r["last_error_code"] for r in rows), "the releases")
        assert {(r["status"], r["attempts"], r["last_error_code"]) for r in rows} == {
            ("queued", 0, "resend_unauthorized")}, "waiting, no attempt spent, not failed"  # fmt: skip
        assert "API key is invalid" in rows[0]["last_error_message"]
        assert {line["check"] for line in worker_log(env, "job_finished")
                if line["error_code"] == "resend_unauthorized"} == {"RESEND_API_KEY"}  # fmt: skip

        check_health(db)
        check_health(db)
        [alert] = alerts_until_marker(db, hook, "document_jobs_outage")
        assert alert["cause"] == "resend_unauthorized" and "RESEND_API_KEY" in alert["text"]
    finally:
        provider(env, "key", {"deleted": False})  # the operator sets a working key

    released_now(db)
    until(db, lambda rows: [r["status"] for r in rows] == ["completed"] * 3, "the jobs drained")
    check_health(db)
    [recovered] = alerts_until_marker(db, hook, "document_jobs_recovered")
    assert recovered["cause"] == "resend_unauthorized"
    assert len(stored(db)) == 6


@pytest.mark.parametrize(
    ("status", "name", "code"),
    [(408, None, "resend_timeout"), (409, "concurrent_idempotent_requests", "resend_unavailable")],
)
def test_a_proxys_408_and_a_409_are_retried_and_the_fax_is_fetched(db, env, fast_backoff, status, name, code) -> None:
    data = inbound.add_email(env["RESEND_API_URL"], attachments=1)
    provider(env, "faults", {"kind": "status", "status": status, "name": name, "target": "list", "count": 1,
                             "email_id": data["email_id"], "message": "Request Timeout"})  # fmt: skip
    assert deliver(env, data).status_code == 200

    [row] = until(db, lambda rows: rows and rows[0]["status"] == "completed", "the retried job completed")

    assert (row["attempts"], row["last_error_code"]) == (2, code), "one attempt spent on the retry, none failed"


def test_a_missing_bucket_releases_the_fax_until_the_bucket_is_back(db, admin, env) -> None:
    [bucket] = admin.execute("select * from storage.buckets where id = 'fax-attachments'").fetchall()
    with admin.transaction():  # as Storage's own API deletes a bucket
        admin.execute("set local storage.allow_delete_query = 'true'")
        admin.execute("delete from storage.buckets where id = 'fax-attachments'")
    try:
        assert deliver(env, inbound.add_email(env["RESEND_API_URL"], attachments=1)).status_code == 200
        [row] = until(db, lambda rows: rows and rows[0]["last_error_code"], "the release")
        assert (row["status"], row["attempts"], row["last_error_code"]) == ("queued", 0, "storage_bucket_not_found")
        assert "ATTACHMENTS_BUCKET" in row["last_error_message"]
    finally:
        admin.execute(
            "insert into storage.buckets (id, name, public) values (%s, %s, %s) on conflict do nothing",
            (bucket["id"], bucket["name"], bucket["public"]),
        )

    released_now(db)
    until(db, lambda rows: rows[0]["status"] == "completed", "the job completed")


def test_a_database_that_refuses_the_key_mid_job_releases_and_the_log_names_the_settings(db, admin, env) -> None:
    # What a key without service_role's privileges meets: permission denied (42501, 403), here
    # once the attachment is uploaded and its row is to be recorded.
    record = "public.record_document_attachment_v3(uuid, int, text, text, text, jsonb, interval)"
    admin.execute(f"revoke execute on function {record} from service_role")
    try:
        assert deliver(env, inbound.add_email(env["RESEND_API_URL"], attachments=1)).status_code == 200
        [row] = until(db, lambda rows: rows and rows[0]["last_error_code"], "the release")
    finally:
        admin.execute(f"grant execute on function {record} to service_role")
    assert (row["status"], row["attempts"], row["last_error_code"]) == ("queued", 0, "database_unauthorized")
    assert KEY_SETTINGS in row["last_error_message"]
    assert KEY_SETTINGS in {line["check"] for line in worker_log(env, "job_finished") if line["check"]}


@pytest.mark.parametrize(
    "edits",
    [[{"index": 0, "unset": ["size"]}, {"index": 1, "set": {"size": 12.5}}],
     [{"index": 0, "set": {"size": None}}, {"index": 1, "set": {"size": "5100"}}]],
    ids=["no size, a fraction", "null, a string"],
)  # fmt: skip
def test_listing_items_without_a_usable_size_are_stored_with_their_bytes(db, env, edits) -> None:
    data = inbound.add_email(env["RESEND_API_URL"], attachments=2)
    provider(env, "faults", {"kind": "edit_listing", "target": "list", "email_id": data["email_id"], "edits": edits})
    assert deliver(env, data).status_code == 200

    until(db, lambda rows: rows and rows[0]["status"] == "completed", "the job completed")

    digests = provider_digests(env)
    assert [(r["provider_attachment_id"], r["sha256"]) for r in stored(db)] == sorted(
        (a["id"], digests[a["id"]]) for a in data["attachments"])  # fmt: skip


def test_an_attachment_id_with_a_lone_surrogate_is_stored(db, env) -> None:
    data = inbound.add_email(env["RESEND_API_URL"], attachments=1)
    provider(env, "faults", {"kind": "edit_listing", "target": "list", "email_id": data["email_id"],
                             "edits": [{"index": 0, "set": {"id": "att_\ud800"}}]})  # fmt: skip
    assert deliver(env, data).status_code == 200

    until(db, lambda rows: rows and rows[0]["status"] == "completed", "the job completed")

    [row] = stored(db)
    digest = hashlib.sha256("att_\ud800".encode("utf-8", "surrogatepass")).hexdigest()
    assert (row["provider_attachment_id"], row["storage_path"].rsplit("/", 1)[1]) == ("att_\ufffd", f"{digest}.pdf")


@pytest.mark.parametrize(("kind", "length"), [("short_body", 20), ("long_length", 100)])
def test_a_lying_content_length_stores_nothing_wrong(db, env, fast_backoff, kind, length) -> None:
    data = inbound.add_email(env["RESEND_API_URL"], attachments=2)
    provider(env, "faults", {"kind": kind, "target": "download", "length": length, "count": 1,
                             "email_id": data["email_id"]})  # fmt: skip
    assert deliver(env, data).status_code == 200

    [row] = until(db, lambda rows: rows and rows[0]["status"] == "completed", "the retried job completed")

    assert (row["attempts"], row["last_error_code"]) == (2, "download_failed")
    digests = provider_digests(env)
    assert [(r["provider_attachment_id"], r["sha256"]) for r in stored(db)] == sorted(
        (a["id"], digests[a["id"]]) for a in data["attachments"]), "every stored byte is the provider's"  # fmt: skip
    folder = Path(env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments"
    for r in stored(db):
        assert hashlib.sha256((folder / r["storage_path"]).read_bytes()).hexdigest() == r["sha256"]


def test_an_id_listed_twice_keeps_both_attachments(db, env) -> None:
    data = inbound.add_email(env["RESEND_API_URL"], attachments=2)
    provider(env, "faults", {"kind": "edit_listing", "target": "list", "email_id": data["email_id"],
                             "edits": [{"index": 1, "duplicate": True}]})  # fmt: skip
    assert deliver(env, data).status_code == 200

    until(db, lambda rows: rows and rows[0]["status"] == "completed", "the job completed")

    second = data["attachments"][1]["id"]
    assert [r["provider_attachment_id"] for r in stored(db)] == sorted(
        [data["attachments"][0]["id"], second, second + "\ufffd"])  # fmt: skip
    assert len({r["storage_path"] for r in stored(db)}) == 3, "an object each"
    assert [line["stored_as"] for line in worker_log(env, "attachment_id_disambiguated")
            if line["attachment_id"] == second] == [second + "\ufffd"]  # fmt: skip


@pytest.mark.parametrize("email_id", [".", ".."])
def test_an_email_id_a_url_path_would_normalise_away_gets_400(db, env, email_id) -> None:
    answer = deliver(env, {"email_id": email_id})
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_email_id")
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 0
