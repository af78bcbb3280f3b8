"""The export from the screen on the local stack: an admin asks for the originals filed in a date
range through the screen's HTTP API (a clerk and a viewer are refused, and may not read the
exports), the export_faxes job builds it in Storage in zip parts (small parts here, so that there
are several; an invocation of the worker's own loop whose time runs out after the first part is
released for its time budget, and a run of the next generation goes on after that part), and the
links the screen signs download every part, index.csv and SHA256SUMS. Every original unzipped is
hashed again against SHA256SUMS (`sha256sum -c`), the records of the export and the originals'
rows; every CSV row is checked. An original replaced through Storage's API stops the export: the
job fails with export_original_mismatch, and no link is offered. No Vault secret is stored here,
so the stack's own worker is never kicked: the test runs the job itself, as the worker does."""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import time
import zipfile
from typing import Any

import httpx
import pytest

from lib.fax.export_files import CSV_HEADER
from lib.settings import WorkerSettings
from lib.worker import export_faxes
from lib.worker.endpoint import connected
from lib.worker.kinds import KINDS
from lib.worker.loop import BUDGET, run_invocation
from tests.cli.test_export import fax, index, store
from tests.flow.test_worker_over_http import checkpoint
from tests.support.operators import admin_api, sign_in

TIMEOUT = 60


@pytest.fixture(scope="module")
def sessions(stack_env) -> dict[str, str]:
    return {
        role: sign_in(stack_env, stack_env[f"DEVSTACK_{role}_EMAIL"], stack_env[f"DEVSTACK_{role}_PASSWORD"])[
            "access_token"
        ]
        for role in ("OPERATOR", "CLERK", "VIEWER")
    }


def call(env: dict[str, str], path: str, token: str, body: dict[str, Any] | None = None) -> httpx.Response:
    url = f"{env['FUNCTIONS_URL']}/api/admin/{path}"
    headers = {"Authorization": f"Bearer {token}"}
    if body is None:
        return httpx.get(url, headers=headers, timeout=TIMEOUT)
    return httpx.post(url, headers=headers, json=body, timeout=TIMEOUT)


@pytest.fixture
def operator_id(admin, stack_env) -> str:
    return str(admin.execute("select id from auth.users where email = %s",
                             (stack_env["DEVSTACK_OPERATOR_EMAIL"],)).fetchone()["id"])  # fmt: skip


def faxes_of_december(db, stack_env, operator_id) -> dict[str, bytes]:
    """Originals of faxes filed 1 to 3 December (two share a short id and a name), and one of 5
    December: {document id: content}."""
    stored = {}
    invoice = fax(db, "em_sx_1", "2026-12-01T09:00:00+09:00", sender="=cmd <fax@example.jp>")
    index(db, operator_id, invoice, {"transaction_date": "2026-12-01", "amount": 54000, "counterparty": "ヤマダ商事"})
    for n, size in enumerate((30_000, 25_000)):
        content = f"%PDF-1.4 invoice page {n} ".encode() + bytes(range(256)) * (size // 256)
        stored[store(stack_env, db, invoice, f"att_{n}", content)] = content
    for n in (1, 2):  # two faxes whose ids begin alike, on the same day, not indexed: the same name
        twin = str(db.execute(
            "insert into fax_received_emails (id, provider_email_id, data, from_address, received_at)"
            " values (%s, %s, '{}', 'twin@example.jp', '2026-12-02T10:00:00+09:00') returning id",
            (f"abcdef01-0000-4000-8000-00000000000{n}", f"em_sx_twin_{n}"),
        ).fetchone()["id"])  # fmt: skip
        content = f"%PDF-1.4 twin {n} ".encode() * 2000
        stored[store(stack_env, db, twin, "att_1", content)] = content
    late = fax(db, "em_sx_late", "2026-12-05T09:00:00+09:00")
    store(stack_env, db, late, "att_1", b"%PDF-1.4 filed on the 5th")
    return stored


def run_until_done(db, *, stop_after_first_part: bool) -> None:
    """The export's job run as the worker runs it; first, when told, an invocation of the worker's
    own loop whose time runs out once the first part is recorded (its clock jumps then): the job is
    released for its time budget, and a run of the next generation goes on after that part."""
    settings = WorkerSettings.load()
    with connected(settings) as (queue, run_job):
        if stop_after_first_part:

            def clock() -> float:
                parts = db.execute("select count(*) as n from fax_export_parts").fetchone()["n"]
                return time.monotonic() + (BUDGET.total_seconds() - 10 if parts else 0)

            summary = run_invocation(queue, KINDS, run_job, clock, clock())
            assert summary.stopped_because == "time_budget"
            job = db.execute("select * from document_jobs where kind = 'export_faxes'").fetchone()
            assert (job["status"], job["last_error_code"]) == ("queued", "time_budget")
            assert db.execute("select count(*) as n from fax_export_parts").fetchone()["n"] == 1
            db.execute("update document_jobs set run_after = now() where id = %s", (job["id"],))
        job = queue.claim("export_faxes")
        assert job is not None
        assert job.generation >= 2 if stop_after_first_part else True
        run_job(job, checkpoint(lambda: queue.extend(job)))
        queue.complete(job)


def test_an_admin_exports_from_the_screen_in_parts_and_downloads_them_through_signed_links(
    db, admin, stack_env, sessions, operator_id, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(export_faxes, "PART_BYTES", 40_000)  # a part or two per original here
    monkeypatch.setattr(export_faxes, "SCAN", 2)  # several pages of the record per part
    stored = faxes_of_december(db, stack_env, operator_id)
    asked = {"from": "2026-12-01", "to": "2026-12-03"}

    for role in ("CLERK", "VIEWER"):
        refused = call(stack_env, "exports", sessions[role], asked)
        assert refused.status_code == 403, refused.text
        assert call(stack_env, "exports", sessions[role]).status_code == 403, "nor may they read the exports"
    assert db.execute("select count(*) as n from document_jobs where kind = 'export_faxes'").fetchone()["n"] == 0
    backwards = {"from": "2026-12-03", "to": "2026-12-01"}
    assert call(stack_env, "exports", sessions["OPERATOR"], backwards).status_code == 400

    answer = call(stack_env, "exports", sessions["OPERATOR"], asked)
    assert answer.status_code == 200, answer.text
    export_id = answer.json()["export_id"]
    assert answer.json()["total"] == len(stored) == 4
    again = call(stack_env, "exports", sessions["OPERATOR"], {"from": "2026-01-01", "to": "2026-12-31"})
    assert (again.status_code, again.json()["error"]) == (409, "export_running")
    early = call(stack_env, f"exports/{export_id}/links", sessions["OPERATOR"], {})
    assert (early.status_code, early.json()["error"]) == (409, "export_not_finished")
    audit = db.execute("select actor_email, filter from document_jobs_audit where action = 'export'").fetchall()
    assert [(a["actor_email"], a["filter"]["export_id"]) for a in audit] == [
        (stack_env["DEVSTACK_OPERATOR_EMAIL"], export_id)
    ]

    run_until_done(db, stop_after_first_part=True)

    [shown] = call(stack_env, "exports", sessions["OPERATOR"]).json()["exports"]
    assert (shown["id"], shown["state"], shown["written"], shown["total"]) == (export_id, "completed", 4, 4)
    parts = shown["parts"]
    assert len(parts) >= 3 and [p["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert all(p["path"].startswith(f"exports/{export_id}/") for p in parts)
    links = call(stack_env, f"exports/{export_id}/links", sessions["OPERATOR"], {})
    assert links.status_code == 200, links.text
    assert links.json()["expires_in"] == 3600
    for role in ("CLERK", "VIEWER"):
        assert call(stack_env, f"exports/{export_id}/links", sessions[role], {}).status_code == 403

    folder = tmp_path / "export"
    folder.mkdir()
    downloaded = {}
    for link in links.json()["links"]:
        body = httpx.get(link["url"], timeout=TIMEOUT)  # the signed URL alone: no key, no token
        assert body.status_code == 200, body.text
        assert hashlib.sha256(body.content).hexdigest() == link["sha256"] and len(body.content) == link["size_bytes"]
        downloaded[link["name"]] = body.content
    assert sorted(downloaded) == sorted([f"part-{p['part']:04d}.zip" for p in parts] + ["index.csv", "SHA256SUMS"])
    names_in_parts: list[str] = []
    for name, content in downloaded.items():
        if name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(content)) as zipped:
                names_in_parts += zipped.namelist()
                zipped.extractall(folder)
        else:
            (folder / name).write_bytes(content)
    assert len(names_in_parts) == len(set(n.lower() for n in names_in_parts)) == 4, "every name once, case aside"
    assert any(n.endswith("_abcdef01 (2).pdf") for n in names_in_parts), "the twin's name numbered, across parts"

    done = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK") == 5  # four originals and index.csv

    recorded = {r["name"]: r for r in db.execute(
        "select name, document_id::text, sha256, size_bytes from fax_export_files where export_id = %s order by seq",
        (export_id,)).fetchall()}  # fmt: skip
    assert sorted(recorded) == sorted(names_in_parts)
    for name, row in recorded.items():
        content = (folder / name).read_bytes()
        assert content == stored[row["document_id"]], f"{name} is the original, byte for byte"
        assert hashlib.sha256(content).hexdigest() == row["sha256"]
        original = db.execute("select sha256 from fax_received_email_attachments where id = %s",
                              (row["document_id"],)).fetchone()  # fmt: skip
        assert original["sha256"] == row["sha256"]

    raw = (folder / "index.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    assert tuple(rows[0]) == CSV_HEADER
    by_name = {row[0]: dict(zip(CSV_HEADER, row, strict=True)) for row in rows[1:]}
    assert sorted(by_name) == sorted(recorded)
    for name, row in by_name.items():
        assert row["SHA-256"] == recorded[name]["sha256"]
        assert int(row["サイズ（バイト）"]) == recorded[name]["size_bytes"]
    invoice_rows = [row for row in by_name.values() if row["取引先"] == "ヤマダ商事"]
    assert len(invoice_rows) == 2 and all(row["取引金額"] == "54000" for row in invoice_rows)
    assert all(row["送信者"] == "'=cmd <fax@example.jp>" for row in invoice_rows), "a formula stays text"


def test_an_original_not_as_recorded_fails_the_export_and_offers_no_link(
    db, admin, stack_env, sessions, operator_id
) -> None:
    content = b"%PDF-1.4 the original " * 100
    received = fax(db, "em_sx_bad", "2026-12-01T09:00:00+09:00")
    store(stack_env, db, received, "att_1", content)
    path = db.execute("select storage_path from fax_received_email_attachments").fetchone()["storage_path"]
    headers = {**admin_api(stack_env), "Content-Type": "application/pdf", "x-upsert": "true"}
    replaced = httpx.post(f"{stack_env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}",
                          content=b"%PDF-1.4 not the original", timeout=TIMEOUT, headers=headers)  # fmt: skip
    assert replaced.status_code == 200, replaced.text
    answer = call(stack_env, "exports", sessions["OPERATOR"], {"from": "2026-12-01", "to": "2026-12-01"})
    assert answer.status_code == 200, answer.text
    export_id = answer.json()["export_id"]

    with connected(WorkerSettings.load()) as (queue, run_job):
        run_invocation(queue, KINDS, run_job, time.monotonic)

    job = db.execute("select status, last_error_code, last_error_message from document_jobs"
                     " where kind = 'export_faxes'").fetchone()  # fmt: skip
    assert (job["status"], job["last_error_code"]) == ("failed", "export_original_mismatch")
    assert received[:8] in job["last_error_message"], "the error names the fax by its short id"
    [shown] = call(stack_env, "exports", sessions["OPERATOR"]).json()["exports"]
    assert (shown["state"], shown["error_code"], shown["parts"], shown["finished_at"]) == (
        "failed", "export_original_mismatch", [], None)  # fmt: skip
    refused = call(stack_env, f"exports/{export_id}/links", sessions["OPERATOR"], {})
    assert (refused.status_code, refused.json()["error"]) == (409, "export_not_finished")
    # A new export may be asked for: the failed one is not live.
    another = {"from": "2026-12-02", "to": "2026-12-02"}
    assert call(stack_env, "exports", sessions["OPERATOR"], another).status_code == 200
