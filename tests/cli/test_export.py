"""`document-jobs-admin export` on the local stack: originals stored in Storage and recorded,
indexed by a clerk, exported by date range and as the office's incremental copy. Every exported
file's SHA-256 is computed again here, every CSV row checked against the database, and
`sha256sum -c` run on the folder; --since-last copies only what was recorded since its mark, and
nothing recorded within the last five minutes; a replaced original stops the export (exit 6,
named); a sender's formula and control characters stay inert in the CSV; and the memory an
export takes does not grow with the size of an original (tracemalloc's peak)."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import httpx
import pytest

from lib.admin import export
from lib.admin.export_files import CSV_HEADER, MAX_NAME_BYTES, MAX_NAME_CHARS
from tests.support.operators import admin_api

RESERVED = set('\\/:*?"<>|')


def store(env, db, fax_id: str, attachment: str, content: bytes, *, filename: str = "請求書.pdf",
          age: str = "1 hour", at: tuple[str, str] | None = None, version: int = 1) -> str:  # fmt: skip
    """An original in the stack's Storage and its row, recorded `age` ago (or at a time plus an
    interval): the attachment's id."""
    path = f"fax_received_emails/{fax_id}/{attachment}.v{version}.pdf"
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", content=content,
                        headers={**admin_api(env), "Content-Type": "application/pdf"}, timeout=30)  # fmt: skip
    assert answer.status_code == 200, answer.text
    base, plus = at or (db.execute("select now()::text as t").fetchone()["t"], f"-{age}")
    when = db.execute("select %s::timestamptz + %s::interval as t", (base, plus)).fetchone()["t"]
    return str(db.execute(
        "insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,"
        " content_type, size_bytes, sha256, bucket, storage_path, version, created_at, updated_at)"
        " values (%s, %s, %s, 'application/pdf', %s, %s, 'fax-attachments', %s, %s, %s, %s) returning id",
        (fax_id, attachment, filename, len(content), hashlib.sha256(content).hexdigest(), path, version, when, when),
    ).fetchone()["id"])  # fmt: skip


def stored_raw(env, admin, fax_id: str, content: bytes) -> str:
    """The e-mail itself stored and recorded as the fetch_email job does (a raw message row, which
    service_role may only read: the job writes it through record_raw_message_v2), an hour ago: the
    row's id."""
    path = f"fax_received_emails/{fax_id}/raw.v1.eml"
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", content=content,
                        headers={**admin_api(env), "Content-Type": "message/rfc822"}, timeout=30)  # fmt: skip
    assert answer.status_code == 200, answer.text
    return str(admin.execute(
        "insert into fax_received_email_raw_messages (fax_received_email_id, bucket, storage_path, size_bytes, sha256,"
        " created_at) values (%s, 'fax-attachments', %s, %s, %s, now() - interval '1 hour') returning id",
        (fax_id, path, len(content), hashlib.sha256(content).hexdigest()),
    ).fetchone()["id"])  # fmt: skip


def fax(db, provider_id: str, received: str, sender: str = "fax@example.jp", subject: str = "FAX") -> str:
    return str(db.execute(
        "insert into fax_received_emails (provider_email_id, data, from_address, subject, received_at)"
        " values (%s, '{}', %s, %s, %s) returning id", (provider_id, sender, subject, received),
    ).fetchone()["id"])  # fmt: skip


def index(db, clerk: str, fax_id: str, values: dict) -> None:
    db.execute("select set_fax_index(%s, null, %s, %s)", (clerk, fax_id, json.dumps(values)))


@pytest.fixture
def clerk(admin, stack_env) -> str:
    return str(admin.execute("select id from auth.users where email = %s",
                             (stack_env["DEVSTACK_OPERATOR_EMAIL"],)).fetchone()["id"])  # fmt: skip


def read_export(folder: Path) -> tuple[list[dict], dict[str, str]]:
    raw = (folder / "index.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "UTF-8 with a BOM, which Excel in Japan needs"
    assert b"\r\n" in raw
    with (folder / "index.csv").open(encoding="utf-8-sig", newline="") as file:
        rows = list(csv.reader(file))
    assert tuple(rows[0]) == CSV_HEADER
    sums = {}
    for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        sums[name] = digest
    return [dict(zip(CSV_HEADER, row, strict=True)) for row in rows[1:]], sums


def sha256sum_check(folder: Path) -> None:
    done = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK") == len((folder / "SHA256SUMS").read_text().splitlines())


def test_export_by_date_range_writes_each_original_its_row_and_its_sum(cli, db, admin, env, clerk, tmp_path,
                                                                      monkeypatch) -> None:  # fmt: skip
    monkeypatch.setattr(export, "SCAN", 2)  # several pages of the cursor, from a handful of rows
    invoice = fax(db, "em_x_1", "2026-12-01T09:00:00+09:00",
                  sender='=HYPERLINK("http://evil.example/","請求書") <fax@example.jp>',
                  subject="@SUM(1+1)\x1b[2J")  # fmt: skip
    index(db, clerk, invoice, {"transaction_date": "2026-11-30", "amount": 108000,
                               "counterparty": 'ヤマダ/商事:"本社"*?<>| CON.', "doc_type": "請求書"})  # fmt: skip
    content = b"%PDF-1.4 invoice " + bytes(range(256)) * 40
    first = store(env, db, invoice, "att_1", content, filename="=cmd|'/C calc'!A0")
    second = store(env, db, invoice, "att_2", b"%PDF-1.4 its delivery note " * 50, filename="納品書.pdf")
    raw = stored_raw(env, admin, invoice, b"From: fax@example.jp\r\nSubject: FAX\r\n\r\nthe raw message\r\n")
    # No index: filed by the day it was received in the office's time zone (23:30 UTC is the 3rd in Tokyo).
    unindexed = fax(db, "em_x_2", "2026-12-02T23:30:00+00:00")
    third = store(env, db, unindexed, "att_1", b"%PDF-1.4 no index yet")
    # Its raw message could not be had (Resend's answer had none): nothing to export for it.
    admin.execute("insert into fax_received_email_raw_messages (fax_received_email_id, unavailable, created_at)"
               " values (%s, 'raw_null', now() - interval '1 hour')", (unindexed,))  # fmt: skip
    long_name = fax(db, "em_x_3", "2026-12-03T10:00:00+09:00")
    index(db, clerk, long_name, {"transaction_date": "2026-12-03", "counterparty": "株式会社" + "長" * 190})
    fourth = store(env, db, long_name, "att_1", b"%PDF-1.4 a long counterparty")
    outside = fax(db, "em_x_4", "2026-12-03T10:00:00+09:00")
    index(db, clerk, outside, {"transaction_date": "2026-10-31", "amount": 5})  # received inside, filed outside
    store(env, db, outside, "att_1", b"%PDF-1.4 filed in October")

    folder = tmp_path / "税務調査"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # on a terminal: the progress line
    status, out, err = cli("export", "--from", "2026-11-01", "--to", "2026-12-03", "-o", str(folder))
    assert status == 0, err
    assert "wrote 5 originals" in out
    assert err.startswith("\rexport: ") and err.endswith("\rexport: 5 of 5 originals written, 0.0 MB\n"), repr(err)

    rows, sums = read_export(folder)
    assert len(rows) == 5
    recorded = {str(r["id"]): r for r in db.execute(
        "select a.id, a.fax_received_email_id, a.size_bytes, a.sha256, e.from_address"
        " from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id"
        " union all select r.id, r.fax_received_email_id, r.size_bytes, r.sha256, null"
        " from fax_received_email_raw_messages r where r.unavailable is null").fetchall()}  # fmt: skip
    names = set()
    for row in rows:
        name = row["ファイル名"]
        names.add(name)
        content = (folder / name).read_bytes()
        digest = hashlib.sha256(content).hexdigest()
        attachment = recorded[row["添付ファイル・受信メールのID"]]
        assert digest == attachment["sha256"] == row["SHA-256"] == sums[name]
        assert len(content) == attachment["size_bytes"] == int(row["サイズ（バイト）"])
        assert row["FAXのID"] == str(attachment["fax_received_email_id"])
        assert row["FAX（短縮ID）"] == row["FAXのID"][:8] and row["FAX（短縮ID）"] in name
        assert not RESERVED & set(name) and not any(ord(c) < 32 for c in name), name
        assert not name.endswith((".", " ")) and len(name) <= MAX_NAME_CHARS
        assert len(name.encode()) <= MAX_NAME_BYTES
    assert len(names) == 5
    by_id = {row["添付ファイル・受信メールのID"]: row for row in rows}

    row = by_id[first]
    assert row["ファイル名"] == f"20261130_ヤマダ_商事__本社______ CON_108000_{invoice[:8]}.pdf"
    assert by_id[second]["ファイル名"] == f"20261130_ヤマダ_商事__本社______ CON_108000_{invoice[:8]}-2.pdf"
    # The e-mail itself beside its attachments: the evidence of when and from whom.
    assert by_id[raw]["ファイル名"] == f"20261130_ヤマダ_商事__本社______ CON_108000_{invoice[:8]}.eml"
    assert (by_id[raw]["区分"], by_id[first]["区分"]) == ("受信メール（.eml）", "原本（添付ファイル）")
    assert by_id[raw]["ファイルの種類"] == "message/rfc822" and by_id[raw]["元のファイル名"] == ""
    assert (row["取引年月日"], row["取引金額"], row["書類の種類"]) == ("2026-11-30", "108000", "請求書")
    assert row["取引先"] == 'ヤマダ/商事:"本社"*?<>| CON.'  # as entered: the CSV holds it, the name only a safe form
    assert row["受信日時"] == "2026-12-01T09:00:00+09:00"
    # A sender's formula is text to Excel (a leading apostrophe), and a control character its escape.
    assert row["送信者"] == "'" + recorded[first]["from_address"]
    assert row["件名"] == "'@SUM(1+1)\\x1b[2J"
    assert row["元のファイル名"] == "'=cmd|'/C calc'!A0"
    assert row["ファイル名の日付"] == "取引年月日"

    row = by_id[third]
    assert row["ファイル名"] == f"20261203_取引先未入力_金額未入力_{unindexed[:8]}.pdf"
    assert row["受信日時"] == "2026-12-03T08:30:00+09:00"
    assert row["ファイル名の日付"].startswith("受信日") and row["取引年月日"] == "" and row["取引金額"] == ""

    row = by_id[fourth]
    assert row["ファイル名"].startswith("20261203_株式会社長")
    assert row["ファイル名"].endswith(f"_金額未入力_{long_name[:8]}.pdf")
    assert row["取引先"] == "株式会社" + "長" * 190
    assert sums["index.csv"] == hashlib.sha256((folder / "index.csv").read_bytes()).hexdigest()
    sha256sum_check(folder)

    # The folder is the export's alone: a second run into it is refused, and writes nothing.
    status, _, err = cli("export", "--from", "2026-11-01", "--to", "2026-12-03", "-o", str(folder))
    assert status == 2 and "not an empty folder" in err
    status, _, err = cli("export", "--from", "2026-12-04", "--to", "2026-12-03", "-o", str(tmp_path / "x"))
    assert status == 2 and "--from" in err


def test_since_last_copies_only_what_is_new_and_keeps_its_mark_in_the_copy(cli, db, env, tmp_path) -> None:
    copy = tmp_path / "office-copy"
    old = [fax(db, f"em_s_{n}", "2026-12-01T09:00:00+09:00") for n in range(3)]
    for n, fax_id in enumerate(old):
        store(env, db, fax_id, "att_1", f"%PDF-1.4 old {n}".encode(), age="2 hours")

    status, out, err = cli("export", "--since-last", "-o", str(copy), "--json")
    assert status == 0, err
    first = json.loads(out)
    assert first["originals"] == 3 and first["since"] is None
    first_folder = Path(first["folder"])
    assert first_folder.parent == copy and len(read_export(first_folder)[0]) == 3
    sha256sum_check(first_folder)
    mark_file = copy / "document-jobs-export.json"
    mark = json.loads(mark_file.read_text())
    assert mark["stored_before"] == first["stored_before"] and mark["project"] == env["SUPABASE_URL"]

    # Recorded since the first run's window ended (a second after its end), and one a moment ago:
    # the window ends five minutes before each run, so the one a moment ago, whose recording could
    # be a transaction still under way, is left for a later run; nothing is copied twice.
    time.sleep(1.5)
    new = fax(db, "em_s_new", "2026-12-07T09:00:00+09:00")
    since = store(env, db, new, "att_1", b"%PDF-1.4 new", at=(mark["stored_before"], "1 second"))
    store(env, db, new, "att_2", b"%PDF-1.4 a moment ago", age="0 seconds")
    status, out, err = cli("export", "--since-last", "-o", str(copy), "--json")
    assert status == 0, err
    second = json.loads(out)
    assert second["originals"] == 1 and second["since"] == first["stored_before"]
    rows, _ = read_export(Path(second["folder"]))
    assert [row["添付ファイル・受信メールのID"] for row in rows] == [since]
    sha256sum_check(Path(second["folder"]))
    assert json.loads(mark_file.read_text())["stored_before"] == second["stored_before"]

    # Nothing new in the window: no folder, the mark moved on.
    time.sleep(1.1)
    status, out, err = cli("export", "--since-last", "-o", str(copy), "--json")
    assert status == 0 and json.loads(out)["originals"] == 0, err
    assert sorted(p.name for p in copy.iterdir()) == sorted([first_folder.name, Path(second["folder"]).name,
                                                             mark_file.name])  # fmt: skip
    assert json.loads(mark_file.read_text())["stored_before"] > second["stored_before"]

    # A mark ahead of the window (a clock set back) is kept as it is: nothing is copied twice.
    mark = json.loads(mark_file.read_text())
    ahead = mark | {"stored_before": db.execute("select (now() + interval '1 day')::text as t").fetchone()["t"]}
    mark_file.write_text(json.dumps(ahead))
    status, out, err = cli("export", "--since-last", "-o", str(copy), "--json")
    assert status == 0 and json.loads(out)["originals"] == 0, err
    assert json.loads(mark_file.read_text()) == ahead
    mark_file.write_text(json.dumps(mark))

    # A mark of another project's copy is refused, and no date range goes with --since-last.
    mark_file.write_text(json.dumps(mark | {"project": "https://another.supabase.co"}))
    status, _, err = cli("export", "--since-last", "-o", str(copy))
    assert status == 2 and "another.supabase.co" in err
    status, _, err = cli("export", "--since-last", "--from", "2026-12-01", "-o", str(copy))
    assert status == 2 and "--since-last" in err


def test_a_replaced_original_stops_the_export_and_is_named(cli, db, env, tmp_path) -> None:
    fax_id = fax(db, "em_m_1", "2026-12-01T09:00:00+09:00")
    store(env, db, fax_id, "att_1", b"%PDF-1.4 as received")
    path = f"fax_received_emails/{fax_id}/att_1.v1.pdf"
    headers = {**admin_api(env), "Content-Type": "application/pdf", "x-upsert": "true"}  # replaced, as the key can
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}", content=b"%PDF-1.4 forged",
                        headers=headers, timeout=10)  # fmt: skip
    assert answer.status_code == 200

    status, out, err = cli("export", "--from", "2026-12-01", "--to", "2026-12-01", "-o", str(tmp_path / "e"))
    assert status == 6, (out, err)
    name = f"20261201_取引先未入力_金額未入力_{fax_id[:8]}.pdf"
    assert name in err and fax_id[:8] in err and "not as recorded" in err
    assert not (tmp_path / "e" / name).exists()
    assert (tmp_path / "e" / (name + ".not-as-recorded")).read_bytes() == b"%PDF-1.4 forged"
    assert name not in (tmp_path / "e" / "SHA256SUMS").read_text()


def test_memory_does_not_grow_with_the_size_of_an_original(cli, db, env, tmp_path) -> None:
    peaks = {}
    for size in (64 * 1024, 24 * 1024 * 1024):
        day = "2026-11-15" if size < 1_000_000 else "2026-11-16"
        fax_id = fax(db, f"em_big_{size}", f"{day}T09:00:00+09:00")
        store(env, db, fax_id, "att_1", b"%PDF-1.4 " + hashlib.sha256(str(size).encode()).digest() * (size // 32))
        tracemalloc.start()
        status, _, err = cli("export", "--from", day, "--to", day, "-o", str(tmp_path / str(size)))
        peaks[size] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert status == 0, err
        sha256sum_check(tmp_path / str(size))
    # 24 MB read through a peak within 2 MB of 64 KB's: chunks, never the whole original.
    assert peaks[24 * 1024 * 1024] - peaks[64 * 1024] < 2 * 1024 * 1024, peaks
    print(f"tracemalloc peak: 64 KB original {peaks[64 * 1024]:,} B, 24 MB original {peaks[24 * 1024 * 1024]:,} B")
    shutil.rmtree(tmp_path)
