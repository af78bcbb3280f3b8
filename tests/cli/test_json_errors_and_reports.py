"""The admin CLI for an operator on call, against the local stack: --json anywhere and JSON
errors with stable codes, refusals that say what happened, the key it needs, list's columns,
filters and totals, show's download names and local times, health, purge's dry run, download."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from lib.admin import cli as admin
from lib.explanations import outage_explanation
from tests.support.database import add_jobs
from tests.support.emails import email_with_job, failed_email, receive_email, stored_attachment
from tests.support.emails import stored_job as _stored
from tests.support.operators import admin_api

ZERO = "00000000-0000-0000-0000-000000000000"


def test_json_is_accepted_before_or_after_the_command(cli, db) -> None:
    add_jobs(db, 2)
    before, after = cli("--json", "stats"), cli("stats", "--json")
    assert before[0] == after[0] == 0
    assert json.loads(before[1])["by_kind_and_status"] == json.loads(after[1])["by_kind_and_status"]


@pytest.mark.parametrize(
    ("argv", "status", "code"),
    [
        (("--json", "show", ZERO), 1, "job_not_found"),
        (("retry", ZERO, "--as", "x@example.com", "--json"), 1, "job_not_found"),
        (("retry", ZERO, "--json"), 2, "actor_required"),
        (("--json", "list", "--state", "sleeping"), 2, "usage"),
        (("--json", "list", "--kind", "fetch_fax"), 2, "unknown_kind"),
        (("--json", "list", "--error-code", "resend_unauthorised"), 2, "unknown_error_code"),
        (("--json", "purge", "--older-than", "1 minute"), 2, "invalid_argument"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v),
)
def test_errors_under_json_are_json_on_stderr_with_a_stable_code(cli, argv, status, code) -> None:
    got, out, err = cli(*argv)
    assert (got, out) == (status, "")
    error = json.loads(err)
    assert error["error"] == code and error["message"]


def test_help_lists_the_exit_statuses() -> None:
    result = subprocess.run([sys.executable, "-m", "lib.admin", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for line in ("0  done", "1  refused by the queue", "2  the arguments", "3  the settings", "4  the database or",
                 "5  health: an outage is open, a guard of the record of received faxes is not in place",
                 "or a required Vault secret"):  # fmt: skip
        assert line in result.stdout
    optional = "without the optional document_jobs_alert_url alerts are off, which is not an error (0)"
    assert optional in result.stdout


def test_a_job_that_does_not_exist_says_so(cli, db, operator) -> None:
    for argv in (
        ("retry", ZERO, "--as", operator),
        ("cancel", ZERO, "--as", operator, "--reason", "x"),
        ("show", ZERO),
    ):
        assert cli(*argv)[0:3:2] == (1, f"error: there is no job {ZERO}\n")


def test_a_cancel_refused_says_what_state_the_job_is_in(cli, db, operator) -> None:
    job_id, _ = email_with_job(db)
    db.execute("update document_jobs set status = 'completed', finished_at = now()")
    assert cli("cancel", job_id, "--as", operator, "--reason", "x")[0:3:2] == (
        1, f"error: job {job_id} was not cancelled: it is completed, and only a queued or running job can be\n"
    )  # fmt: skip


def test_bounds_name_the_flag_not_the_sql_parameter(cli, db) -> None:
    status, _, err = cli("retention", "--set", "20 years")
    assert status == 2 and err == "error: --set must be between 1 hour and 10 years\n"
    status, _, err = cli("purge", "--older-than", "a fortnight")
    assert status == 2 and err.startswith("error: --older-than: ") and "p_older_than" not in err


def test_the_wrong_key_says_which_key_is_needed(cli, stack_env, monkeypatch) -> None:
    monkeypatch.setenv("SUPABASE_SECRET_KEY", stack_env["SUPABASE_PUBLISHABLE_KEY"])
    status, _, err = cli("stats")
    assert status == 3 and "SUPABASE_SECRET_KEY is a publishable key" in err and "sb_secret_" in err

    monkeypatch.delenv("SUPABASE_SECRET_KEY")
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", stack_env["DEVSTACK_LEGACY_ANON_KEY"])
    status, _, err = cli("stats")
    assert status == 3 and "SUPABASE_SERVICE_ROLE_KEY is a JWT for the role 'anon'" in err

    monkeypatch.setenv("SUPABASE_SECRET_KEY", "sb_secret_not_this_projects_key")
    status, _, err = cli("--json", "stats")
    assert status == 3 and json.loads(err)["error"] == "wrong_key"


def test_list_shows_sender_subject_next_run_and_how_many_of_how_many(cli, db) -> None:
    job_id, _ = email_with_job(db)
    db.execute("update document_jobs set attempts = 1, run_after = now() + interval '4 minutes 30 seconds', "
               "last_error_code = 'resend_unavailable'")  # fmt: skip
    add_jobs(db, 1233, created_at="now() - interval '1 day'")

    status, out, _ = cli("list", "--limit", "2")

    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "status", "received", "attempt", "next", "run", "sender", "subject", "error"]
    assert lines[2].startswith(job_id[:8] + " "), "the short id, which every command takes"
    assert "in 4 min" in lines[2] and "fax@example.jp" in lines[2] and "請求書" in lines[2]
    assert lines[2].rstrip().endswith("resend_unavailable")
    assert lines[-1].startswith("showing 2 of 1,234, newest first")


def test_list_filters(cli, db) -> None:
    job_id, _ = email_with_job(db)
    db.execute("update document_jobs set status = 'failed', last_error_code = 'resend_unauthorized'")
    add_jobs(db, 3, status="'failed'", last_error_code="'resend_not_found'", created_at="now() - interval '3 days'")

    def ids(*argv: str) -> list[str]:
        status, out, _ = cli("list", "--json", *argv)
        assert status == 0
        return [job["id"] for job in json.loads(out)["jobs"]]

    assert ids("--error-code", "resend_unauthorized") == [job_id]
    assert len(ids("--error-code", "resend_not_found")) == 3
    assert ids("--received-from", "1d") == [job_id]
    assert len(ids("--received-to", "2d")) == 3
    assert ids("--search", "em_admin") == [job_id], "Resend's e-mail id, in the screen's search"
    assert ids("--search", job_id[:6]) == [job_id], "a job's id as people copy it"
    assert ids("--sender", "EXAMPLE.jp") == [job_id]
    assert ids("--state", "failed", "--state", "queued", "--error-code", "resend_unauthorized") == [job_id]
    assert ids("--state", "queued") == []
    assert ids("--sender", "nobody@") == []
    assert cli("list", "--sender", "nobody@")[1] == "no jobs match\n"


def test_list_by_sender_is_the_senders_text_only(cli, db) -> None:
    """--sender is a filter of its own: the sender's text in any case, never a subject's or an id's (the
    screen's search, --search, finds those), and it narrows a search too."""
    by_sender = {failed_email(db, f"order {i}", sender="ACME商事 <fax@acme.example>")[0] for i in range(2)}
    in_subject, _ = failed_email(db, "acme商事 御中")

    def ids(*argv: str) -> set[str]:
        status, out, _ = cli("list", "--json", *argv)
        assert status == 0
        return {job["id"] for job in json.loads(out)["jobs"]}

    assert ids("--sender", "acme商事") == by_sender
    assert ids("--search", "acme商事") == by_sender | {in_subject}, "the search finds the subject too"
    both = ids("--sender", "acme商事", "--search", "order 1")
    assert len(both) == 1 and both <= by_sender, "with a search: the sender's jobs that match it"
    out = cli("list", "--json", "--sender", "acme商事")[1]
    assert json.loads(out)["filter"] == {"sender": "acme商事"}
    assert json.loads(out)["total"] == 2, "a sender's jobs are counted"


def test_japanese_text_aligns_and_a_long_name_is_cut_by_width(cli, db) -> None:
    import unicodedata

    long_sender = "株式会社" + "サンプル" * 12  # 52 characters, 104 columns
    decomposed = unicodedata.normalize("NFD", "ガイドブック.pdf")  # as some mail clients send it
    for sender, subject in ((long_sender, "注文書"), ("①※ <a@b.jp>", decomposed), ("ascii@x.jp", "plain")):
        db.execute(
            "select record_inbound_email(%s, 'msg', %s)",
            (f"em_{hash(sender)}", json.dumps({"from": sender, "subject": subject})),
        )
    from lib.admin.display import width

    lines = cli("list")[1].splitlines()[:5]
    header_error = lines[0].index("error")
    rows = lines[2:5]
    widths = {width(line[: line.index("queued") + 6]) for line in rows}
    assert len(widths) == 1, "the status column starts at the same column on every row"
    subject_at = width(lines[0][: lines[0].index("subject")])
    assert {
        width(line[: line.index(s)]) for line, s in zip(rows, ("plain", "ガイドブック", "注文書"), strict=True)
    } == {subject_at}
    assert max(width(line) for line in lines) < 150 and header_error > 0
    assert "..." in rows[2]


def test_show_gives_the_screens_download_name_and_local_times(cli, db, monkeypatch) -> None:
    job_id, _ = email_with_job(db, filename="請求書")
    db.execute("update document_jobs set created_at = now() - interval '3 minutes 10 seconds'")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    import time

    time.tzset()
    try:
        status, out, _ = cli("show", job_id)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert status == 0
    assert "  downloads as: 請求書.pdf" in out, "the name the screen downloads it as (lib/attachment_names.py)"
    [created] = [line for line in out.splitlines() if line.strip().startswith("created_at:")][:1]
    assert re.search(r"created_at: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+09:00 \(3 min ago\)$", created), created


def test_retention_prints_intervals_as_written(cli, db) -> None:
    assert cli("retention", "--set", "1 month")[1] == "completed jobs are kept for 1 month\n"
    assert cli("stats")[1].splitlines()[-1] == "completed jobs kept:  1 month"
    assert cli("retention", "--set", "36 hours")[1] == "completed jobs are kept for 36 hours\n"
    db.execute("select set_document_jobs_retention('30 days')")


def test_purge_dry_run_counts_and_deletes_nothing(cli, db) -> None:
    add_jobs(db, 3, status="'completed'", finished_at="now() - interval '40 days'")
    add_jobs(db, 2, status="'completed'", finished_at="now() - interval '1 day'")
    status, out, _ = cli("purge", "--dry-run")
    assert (status, out) == (0, "would delete 3 completed jobs finished more than 30 days (the retention setting) "
                                "ago (dry run: none deleted)\n")  # fmt: skip
    assert json.loads(cli("purge", "--dry-run", "--older-than", "12 hours", "--json")[1])["would_delete"] == 5
    assert db.execute("select count(*) as n from document_jobs").fetchone()["n"] == 5
    assert cli("purge")[1] == "deleted 3 completed jobs finished more than 30 days (the retention setting) ago\n"


def test_health_shows_open_outages_and_missing_vault_secrets(cli, db, admin, stack_env, monkeypatch) -> None:
    status, out, _ = cli("health")
    assert status == 5, "nothing is called without the Vault secrets"
    assert "document_jobs_url MISSING" in out and "no worker is called" in out

    admin.execute("select vault.create_secret('http://x/api/internal/document-jobs', 'document_jobs_url')")
    admin.execute("select vault.create_secret('s', 'internal_function_secret')")
    status, out, _ = cli("health")
    assert status == 0, "without the optional alert URL the flow works: alerts are off, which is not an error"
    assert "open outages: none" in out and "document_jobs_alert_url not stored (optional)" in out
    assert "MISSING" not in out
    assert "alerts: off (no document_jobs_alert_url in Vault): no failure alert is sent; not an error" in out
    data = json.loads(cli("health", "--json")[1])
    assert (data["healthy"], data["alerts"]) == (True, "off")

    admin.execute("select vault.create_secret('http://x/alert', 'document_jobs_alert_url')")
    status, out, _ = cli("health")
    assert status == 0 and "document_jobs_alert_url stored" in out and "alerts: off" not in out
    assert json.loads(cli("health", "--json")[1])["alerts"] == "on"

    admin.execute("update document_jobs_internal.outages set active = true, since = now() - interval '5 minutes' "
                  "where cause = 'worker_unauthorized'")  # fmt: skip
    status, out, _ = cli("health")
    data = json.loads(cli("health", "--json")[1])
    assert status == 5 and "open outages: 1" in out and "worker_unauthorized since" in out and "(5 min ago)" in out
    assert [o["cause"] for o in data["outages"]] == ["worker_unauthorized"] and data["healthy"] is False
    assert "INTERNAL_FUNCTION_SECRET" in out, "the advice says what to check"
    # The advice is lib/failures.py's operator's advice, which the screen shows admins: in English,
    # in both under --json, and in Japanese under a Japanese locale; never the clerk's.
    said = outage_explanation("worker_unauthorized")
    assert said is not None and said.operator_en in out and said.meaning_en in out
    assert said.clerk_en not in out
    assert (data["outages"][0]["advice"], data["outages"][0]["advice_ja"]) == (said.operator_en, said.operator_ja)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    out = cli("health")[1]
    assert said.operator_ja in out and said.operator_en not in out


def test_download_writes_the_stored_fax(cli, db, stack_env, tmp_path: Path) -> None:
    content = b"%PDF-1.4 a fax"
    job_id, _ = _stored(db, stack_env, content)

    status, out, _ = cli("download", job_id, "-o", str(tmp_path))

    assert status == 0 and (tmp_path / "請求書.pdf").read_bytes() == content, "the name the screen downloads as"
    assert "請求書.pdf" in out and "SHA-256 as recorded" in out
    assert cli("download", job_id, "-o", str(tmp_path))[0:3:2] == (
        1, f"error: {tmp_path / '請求書.pdf'} exists: nothing overwritten (choose another --output)\n"
    )  # fmt: skip
    single = tmp_path / "one.pdf"
    assert cli("download", "att_1", "-o", str(single))[0] == 0 and single.read_bytes() == content


def test_download_names_the_file_as_the_screen_does_safe_and_by_its_stored_type(
    cli, db, stack_env, tmp_path: Path
) -> None:
    # Three objects of their own (a row records one object), named as a sender may name them.
    email = receive_email(db, "em_admin", {"from": "fax@example.jp", "subject": "請求書"})
    names = {"att_1": "scan.pdf.exe", "att_2": "FAX-invoice\u202efdp.exe", "att_3": "SCAN.pdf.EXE"}
    email_id = str(email["fax_received_email_id"])
    for attachment_id, filename in names.items():
        stored_attachment(db, stack_env, email_id, attachment_id, filename, b"%PDF-1.4 a fax")
    job_id = str(email["job_id"])
    status, out, _ = cli("--json", "download", job_id, "-o", str(tmp_path))
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FAX-invoicefdp.pdf", "SCAN.pdf.pdf", "scan.pdf (2).pdf"]
    assert sorted(item["filename"] for item in json.loads(out)["written"]) == [
        "FAX-invoice\u202efdp.exe", "SCAN.pdf.EXE", "scan.pdf.exe"]  # fmt: skip


def test_download_refuses_what_is_not_as_recorded(cli, db, stack_env, tmp_path: Path) -> None:
    job_id, path = _stored(db, stack_env, b"%PDF-1.4 a fax")
    # The record never changes: the object does, replaced (or deleted) through Storage's own API.
    object_url = f"{stack_env['SUPABASE_URL']}/storage/v1/object/fax-attachments/{path}"
    replaced = httpx.post(
        object_url,
        content=b"%PDF-1.4 other bytes",
        timeout=10,
        headers={**admin_api(stack_env), "Content-Type": "application/pdf", "x-upsert": "true"},
    )
    assert replaced.status_code == 200, replaced.text
    status, _, err = cli("--json", "download", job_id, "-o", str(tmp_path))
    assert status == 1 and json.loads(err)["error"] == "checksum_mismatch" and not list(tmp_path.iterdir())
    deleted = httpx.delete(object_url, headers=admin_api(stack_env), timeout=10)
    assert deleted.status_code == 200, deleted.text
    status, _, err = cli("--json", "download", job_id, "-o", str(tmp_path))
    assert status == 1 and json.loads(err)["error"] == "object_not_found"
    assert json.loads(cli("--json", "download", "nothing-like-it")[2])["error"] == "not_found"


def test_bad_arguments_keep_argparse_out_of_stdout(capsys) -> None:
    assert admin.main(["--json", "frobnicate"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and json.loads(err)["error"] == "usage"


def test_every_command_takes_the_id_people_see(cli, db, stack_env, operator, tmp_path: Path) -> None:
    """The list's 8 characters, any prefix of 6 or more hex characters of the job's id, its e-mail's
    row id or Resend's e-mail id, in any case and with or without hyphens."""
    job_id, _ = _stored(db, stack_env, b"%PDF-1.4 a fax", provider_email_id="4ec0ffee-1234-4abc-9def-00000000000a")
    email_id, provider_id = (
        db.execute(
            "select e.id::text, e.provider_email_id from fax_received_emails e join document_jobs j"
            " on j.fax_received_email_id = e.id where j.id = %s",
            (job_id,),
        )
        .fetchone()
        .values()
    )
    for given in (job_id[:8], job_id[:6].upper(), job_id[:13], job_id.replace("-", "")[:16], email_id[:8]):
        status, out, err = cli("--json", "show", given)
        assert (status, err) == (0, ""), given
        assert json.loads(out)["job"]["id"] == job_id
    assert json.loads(cli("--json", "show", "4EC0FFEE12")[1])["job"]["id"] == job_id, "Resend's e-mail id"
    assert cli("download", job_id[:8], "-o", str(tmp_path))[0] == 0
    db.execute("update document_jobs set status = 'failed', finished_at = now(), last_error_code = 'x' where id = %s",
               (job_id,))  # fmt: skip
    assert cli("retry", job_id[:8], "--as", operator)[0] == 0
    assert cli("cancel", job_id[:8], "--reason", "duplicate", "--as", operator)[0] == 0
    assert provider_id


def test_an_id_that_names_several_jobs_says_so_and_lists_them(cli, db) -> None:
    ids = ["abcdef12-0000-4000-8000-000000000000", "abcdef12-1111-4000-8000-000000000000"]
    for new_id in ids:
        job_id, _ = failed_email(db, f"sharing a short id {new_id}")
        db.execute("update document_jobs set id = %s where id = %s", (new_id, job_id))
    status, _, err = cli("--json", "show", "abcdef12")
    refusal = json.loads(err)
    assert status == 1 and refusal["error"] == "ambiguous_id" and sorted(refusal["jobs"]) == ids
    status, _, err = cli("show", "ABCDEF12")
    assert "ABCDEF12 names 2 jobs: give more of the id" in err and all(i in err for i in ids)
    assert json.loads(cli("--json", "show", "abcdef12-1")[1])["job"]["id"] == ids[1]
    assert cli("show", "abcde")[0] == 2, "fewer than 6 hex characters is a usage error"
