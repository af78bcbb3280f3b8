"""Verification on the local stack: faxes stored in Storage and recorded, one original then
replaced through Storage's own API with the secret key (an upsert, as anyone with the key can),
and both `document-jobs-admin verify` and the weekly verify_originals job (run by the stack's
worker over HTTP after its kick) find it: the command prints the fax's short id and exits 6, the
outage original_mismatch opens once with one alert, and a run that finds the same mismatch again
alerts nobody. The original put back, a run closes the outage."""

from __future__ import annotations

import json
import time

import httpx

from tests.support.alerts import alerts_until_marker
from tests.support.database import as_postgres
from tests.support.emails import receive_email, storage_path, stored_attachment
from tests.support.operators import admin_api

WAIT_S = 90


def replace_object(env, path: str, content: bytes) -> None:
    """Storage's upload with x-upsert: true and the secret key: the object at `path` replaced."""
    headers = {**admin_api(env), "Content-Type": "application/pdf", "x-upsert": "true"}
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", content=content,
                        headers=headers, timeout=10)  # fmt: skip
    assert answer.status_code == 200, answer.text


def delete_object(env, path: str) -> None:
    # Storage's "Delete an object" with the secret key, as the dashboard or a script with it can.
    answer = httpx.delete(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", headers=admin_api(env),
                          timeout=10)  # fmt: skip
    assert answer.status_code == 200, answer.text


def stored_faxes(db, env, count: int) -> list[dict]:
    """`count` faxes, each with one original stored and recorded: e-mail row id, key, content."""
    faxes = []
    for n in range(count):
        email = receive_email(db, f"em_verify_{n}", {"from": "fax@example.jp", "subject": "請求書"})
        email_id = str(email["fax_received_email_id"])
        content = f"%PDF-1.4 fax number {n} ".encode() + bytes(range(256)) * (n + 1)
        # The sender's file name carries a terminal escape: printed inert, never as a control.
        stored_attachment(db, env, email_id, filename=f"\x1b[2J請求書{n}.pdf", content=content)
        faxes.append({"email_id": email_id, "path": storage_path(email_id, "att_1"), "content": content})
    return faxes


def run_the_job(db) -> dict:
    job_id = db.execute("select enqueue_original_verification() as id").fetchone()["id"]
    assert job_id is not None
    deadline = time.monotonic() + WAIT_S
    while (job := db.execute("select * from document_jobs where id = %s", (job_id,)).fetchone())["status"] not in (
        "completed",
        "failed",
    ):
        assert time.monotonic() < deadline, f"the verify_originals job did not end: {job}"
        time.sleep(0.3)
    return job


def outage(db) -> dict:
    return db.execute(
        "select * from document_jobs_health() h, jsonb_array_elements(h -> 'outages') o"
        " where o ->> 'cause' = 'original_mismatch'"
    ).fetchone()


def mismatch_alerts(db, hook) -> list[dict]:
    return [a for a in alerts_until_marker(db, hook) if a.get("cause") == "original_mismatch"]


def test_verify_finds_an_original_replaced_through_storage_and_the_weekly_job_alerts_once(db, env, hook, cli) -> None:
    faxes = stored_faxes(db, env, 3)
    status, out, err = cli("verify")
    assert status == 0, err
    assert "read back 3 of 3 stored originals: every one as recorded" in out

    replaced = faxes[1]
    replace_object(env, replaced["path"], b"%PDF-1.4 not what the sender sent")

    status, out, _ = cli("verify")
    assert status == 6
    [line] = [line for line in out.splitlines() if line.startswith("MISMATCH")]
    assert f"fax {replaced['email_id'][:8]}" in line and "another size" in line
    assert "\x1b" not in out and "\\x1b[2J請求書1.pdf" in line, "the sender's file name is printed inert"
    assert "1 not as recorded" in out

    status, out, _ = cli("--json", "verify", "--sample", "2")
    data = json.loads(out)
    assert data["checked"] == 2 and status == (6 if data["mismatched"] else 0)

    # The CLI's runs found it first: the outage is open, told once.
    [told] = mismatch_alerts(db, hook)
    assert told["event"] == "document_jobs_outage"
    assert replaced["email_id"][:8] in told["summary"]

    # The weekly job: its sample is the setting; 3 stored, all read. The same mismatch: no alert again.
    with as_postgres(db):
        db.execute("update original_verification set sample = 10")
    job = run_the_job(db)
    assert job["status"] == "completed", job
    run = db.execute("select * from original_verify_runs where job_id = %s", (job["id"],)).fetchone()
    assert (run["total"], run["checked"], run["mismatched"]) == (3, 3, 1)
    assert run["finished_at"] is not None
    assert mismatch_alerts(db, hook) == [], "a mismatch already known alerts nobody"
    assert outage(db) is not None

    # The original put back from the office's copy: a run reads it as recorded, the outage closes.
    replace_object(env, replaced["path"], replaced["content"])
    status, out, _ = cli("verify")
    assert status == 0, out
    [recovered] = mismatch_alerts(db, hook)
    assert recovered["event"] == "document_jobs_recovered"
    assert outage(db) is None


def test_the_weekly_job_alone_finds_a_deleted_original_and_alerts_once(db, env, hook) -> None:
    faxes = stored_faxes(db, env, 2)
    delete_object(env, faxes[0]["path"])

    job = run_the_job(db)
    assert job["status"] == "completed", job
    reads = db.execute(
        "select v.outcome, a.fax_received_email_id::text as email_id from original_verifications v"
        " join fax_received_email_attachments a on a.id = v.attachment_id order by v.outcome"
    ).fetchall()
    assert [(r["outcome"], r["email_id"]) for r in reads] == [
        ("matches", faxes[1]["email_id"]),
        ("missing", faxes[0]["email_id"]),
    ]
    [told] = mismatch_alerts(db, hook)
    assert told["event"] == "document_jobs_outage" and faxes[0]["email_id"][:8] in told["summary"]
    assert told["advice"].startswith("Run document-jobs-admin verify")

    job = run_the_job(db)
    assert job["status"] == "completed"
    assert mismatch_alerts(db, hook) == [], "found again the next week: no second alert"
