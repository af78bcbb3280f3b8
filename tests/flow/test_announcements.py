"""New faxes announced in a chat, on the whole stack: signed webhooks into the function host, the
worker fetching and preparing each fax, and the tick of the cron job document-jobs-announce
(document_jobs_internal.announce_faxes, run here as the cron runs it, as postgres) POSTing through
the pg_net dispatcher to a receiver on loopback. One message per fax; faxes that became ready
within a minute of the last message wait for the next tick and go together in one; each fax is
announced once; the sender's text is inert; never a file name or a subject."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import psycopg
import pytest

from devstack import stack
from devstack.tools import inbound
from tests.support.alerts import received_until_marker
from tests.support.database import as_postgres
from tests.support.receiver import Receiver, receiver
from tests.support.webhooks import deliver

ANNOUNCE_PATH = "/hooks/announce"
# eFax's subject (tests/unit/test_sender_numbers.py cites the page): the parser reads name and number.
EFAX_SUBJECT = "eFax from YAMADA SHOJI – 3 page(s), caller ID: 06-1111-2222"
SCREEN = "https://office.example/admin"
LINE = ("fax@office.example", "本社")
WAIT_S = 120  # a fetch and a preparation each, on a loaded machine
PAUSE = "select cron.alter_job(jobid, active => %s) from cron.job where jobname = 'document-jobs-announce'"
LINK = re.compile(r"<https://office\.example/admin#/faxes/([0-9a-f-]{36})>")


@pytest.fixture
def announced(db: psycopg.Connection, env: dict[str, str], admin: psycopg.Connection) -> Iterator[Receiver]:
    """Announcements on, to a receiver on loopback, linking to SCREEN; the cron job paused, so that
    the test runs the ticks (and says when a minute has passed)."""
    admin.execute(PAUSE, (False,))
    try:
        with receiver() as chat:
            with as_postgres(db):
                stack.store_vault_secret(db, stack.ANNOUNCE_URL_SECRET, chat.url + ANNOUNCE_PATH)
            admin.execute("update office_settings set screen_url = %s", (SCREEN,))
            db.execute("select set_fax_line(%s, %s)", LINE)
            yield chat
    finally:
        admin.execute("update document_jobs_settings set alert_receiver = 'slack'")
        admin.execute(PAUSE, (True,))


def tick(db: psycopg.Connection) -> int:
    """What the cron job runs every minute."""
    with as_postgres(db):
        return db.execute("select document_jobs_internal.announce_faxes() as n").fetchone()["n"]


def a_minute_passes(admin: psycopg.Connection) -> None:
    """The last message is a minute old (the rule is about the time since the last message)."""
    admin.execute("update document_jobs_internal.fax_announcements set decided_at = decided_at - interval '1 minute'"
                  " where state = 'sent'")  # fmt: skip


def messages(db: psycopg.Connection, chat: Receiver) -> list[dict]:
    got = received_until_marker(db, chat)
    assert {r.path for r in got} <= {ANNOUNCE_PATH}
    return [json.loads(r.body) for r in got]


def send(env: dict[str, str], **email: object) -> dict:
    data = inbound.add_email(env["RESEND_API_URL"], **email)  # type: ignore[arg-type]
    data["to"] = [LINE[0]]
    assert deliver(env, data).status_code == 200
    return data


def email_row(db: psycopg.Connection, data: dict) -> str:
    return str(db.execute("select id from fax_received_emails where provider_email_id = %s",
                          (data["email_id"],)).fetchone()["id"])  # fmt: skip


def wait_ready(admin: psycopg.Connection, count: int) -> None:
    """Until `count` faxes are ready to announce (their jobs ended) and none is announced yet."""
    deadline = time.monotonic() + WAIT_S
    while admin.execute("select count(*) as n from document_jobs_internal.fax_announcements"
                        " where state = 'pending'").fetchone()["n"] < count:  # fmt: skip
        assert time.monotonic() < deadline, f"timed out waiting for {count} faxes to be ready"
        time.sleep(0.3)


def test_one_message_per_fax_then_a_burst_in_one_message_a_minute(db, env, admin, announced) -> None:
    tiff = send(env, sample="efax", subject=EFAX_SUBJECT)
    wait_ready(admin, 1)
    assert tick(db) == 1
    [first] = messages(db, announced)
    lines = first["text"].split("\n")
    assert lines[:3] == ["新しいFAXが届きました", "回線: `本社`", "送信元: `YAMADA SHOJI` FAX `06-1111-2222`"], (
        "the sender's name and number as the prepare_fax job read them (lib/fax/senders.py)"
    )
    assert lines[3] == "ページ数: 3", "the pages its preparation counted"
    assert re.fullmatch(r"受信: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+09:00", lines[4]), "in the office's zone"
    assert LINK.findall(first["text"]) == [email_row(db, tiff)]
    assert first["event"] == "faxes_received" and first["count"] == 1
    assert tiff["subject"] not in json.dumps(first, ensure_ascii=False), "never the subject"
    assert ".tif" not in first["text"] and ".pdf" not in first["text"], "never a file name"

    a_minute_passes(admin)
    invoice = send(env, sample="invoice")
    wait_ready(admin, 1)
    assert tick(db) == 1
    [second] = messages(db, announced)
    assert "送信元: `株式会社山田商事`" in second["text"].split("\n")
    assert LINK.findall(second["text"]) == [email_row(db, invoice)], "one message per fax"

    # A burst within the minute of the last message: nothing until the minute is over, then one message.
    burst = [send(env, attachments=1) for _ in range(4)]
    wait_ready(admin, 4)
    assert tick(db) == 0, "at most one message a minute"
    assert messages(db, announced) == []
    a_minute_passes(admin)
    assert tick(db) == 4
    [together] = messages(db, announced)
    assert together["text"].split("\n")[0] == "新しいFAXが 4 件届きました"
    assert sorted(LINK.findall(together["text"])) == sorted(email_row(db, data) for data in burst)
    assert together["count"] == 4

    # Each fax once: another minute, another tick, nothing.
    a_minute_passes(admin)
    assert tick(db) == 0
    assert messages(db, announced) == []
    assert admin.execute("select count(*) as n from document_jobs_internal.fax_announcements"
                         " where state = 'sent'").fetchone()["n"] == 6  # fmt: skip


HOSTILE_SENDER = '"<!channel> @everyone *bold* [x](https://evil.example)\u202e\u0007" <evil@sender.example>'


@pytest.mark.parametrize("kind", ["slack", "mattermost", "discord"])
def test_the_sender_text_is_inert(db, env, admin, announced, kind) -> None:
    admin.execute("update document_jobs_settings set alert_receiver = %s", (kind,))
    data = send(env, attachments=1, sender=HOSTILE_SENDER)
    wait_ready(admin, 1)
    assert tick(db) == 1
    [message] = messages(db, announced)
    text = message["content" if kind == "discord" else "text"]
    lines = text.split("\n")
    assert len(lines) == 6, "the sender adds no line"
    assert all(char.isprintable() for line in lines for char in line), "no control character"
    sender = lines[2].split(": ", 1)[1]
    assert sender.startswith("`") and sender.endswith("`") and "`" not in sender[1:-1], "one piece of code"
    if kind == "slack":
        assert "<!channel>" not in text and "&lt;!channel&gt;" in sender, "no mention for Slack to parse"
        assert text.count("<") == 1 and text.count(">") == 1, "the one link is ours"
    else:
        from tests.flow.test_alerts import markdown_outside_code

        found = markdown_outside_code(text)
        own_link = f"{SCREEN}#/faxes/{email_row(db, data)}"
        assert [token for token in found if token[0] not in ("link_open", "link_close")] == []
        assert text.count("<") == 1 + ("<!channel>" in sender) and own_link in text
        if kind == "discord":
            assert message["allowed_mentions"] == {"parse": []}
