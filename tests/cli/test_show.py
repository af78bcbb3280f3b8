"""`show` says what the admin screen's job page says: for a job with an error, what it means and what
to do, in the screen's own words (lib/explanations.py's table, which public/admin/explanations.js
is written from), in the operator's language; and how the job's e-mail was found, by its webhook or
by reconciliation, and when."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from devstack.tools import inbound
from lib.explanations import table
from tests.support.emails import email_with_job, failed_email


@pytest.mark.parametrize(("locale", "language"), [("C.UTF-8", "en"), ("ja_JP.UTF-8", "ja")])
def test_show_of_a_failed_job_says_what_it_means_and_what_to_do_as_the_screen_does(cli, db, monkeypatch, locale,
                                                                                    language) -> None:  # fmt: skip
    monkeypatch.setenv("LANG", locale)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    job_id, _ = failed_email(db, "not at Resend", "resend_not_found")
    screen = table()["job"]["resend_not_found"][language]  # what the job page shows for the code

    status, out, _ = cli("show", job_id)

    assert status == 0
    # What an admin sees on the job page: the meaning, the clerk's advice, the operator's (where it says more).
    lines = [screen["meaning"], screen["clerk"], *([screen["operator"]] if "operator" in screen else [])]
    assert "what to do (resend_not_found)\n  " + "\n  ".join(lines) + "\n" in out, out
    data = json.loads(cli("show", job_id, "--json")[1])
    for language in ("en", "ja"):
        said = table()["job"]["resend_not_found"][language]
        assert data["explanation"][f"meaning_{language}"] == said["meaning"]
        assert data["explanation"][f"clerk_{language}"] == said["clerk"]
        assert data["explanation"][f"operator_{language}"] == said.get("operator", said["clerk"])


def test_show_of_a_job_without_an_error_has_no_advice(cli, db) -> None:
    job_id, _ = email_with_job(db)
    status, out, _ = cli("show", job_id)
    assert status == 0 and "what to do" not in out
    assert "explanation" not in json.loads(cli("show", job_id, "--json")[1])


def test_show_says_how_the_email_was_found_by_reconciliation_and_when(cli, db, stack_env, operator,
                                                                      monkeypatch) -> None:  # fmt: skip
    httpx.post(f"{stack_env['RESEND_API_URL']}/_control/emails/clear", timeout=10).raise_for_status()
    monkeypatch.setenv("RESEND_API_KEY", stack_env["RESEND_API_KEY"])
    monkeypatch.setenv("RESEND_API_URL", stack_env["RESEND_API_URL"])
    [missed] = inbound.receive_without_webhook(stack_env["RESEND_API_URL"], count=1, attachments=1, age_seconds=7200)
    assert cli("reconcile", "--since", "1d", "--as", operator)[0] == 0  # records it, as an operator would
    by_webhook, _ = email_with_job(db)
    job_id = str(db.execute("select j.id from document_jobs j join fax_received_emails e"
                            " on e.id = j.fax_received_email_id where e.provider_email_id = %s",
                            (missed["email_id"],)).fetchone()["id"])  # fmt: skip

    status, out, _ = cli("show", job_id)
    data = json.loads(cli("show", job_id, "--json")[1])

    assert status == 0
    assert data["email"]["found_by"] == "reconciliation" and data["email"]["reconciled_at"]
    assert re.search(
        r"\n +found_by: reconciliation, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d \((now|\d+ s ago)\): "
        r"Resend listed it and no webhook had delivered it\n",
        out,
    ), out
    status, out, _ = cli("show", by_webhook)
    assert status == 0 and "\n            found_by: its webhook\n" in out, out
    email = json.loads(cli("show", by_webhook, "--json")[1])["email"]
    assert (email["found_by"], email["reconciled_at"]) == ("webhook", None)
