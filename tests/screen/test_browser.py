"""The admin screen in a real browser: Debian's chromium, headless, driven by Playwright, against the
local stack (the page and its API from the function host's real `vercel build`, Supabase Auth's
stand-in across origins, so CORS preflights are real too).

The operator signs in, finds a failed job whose subject is an HTML payload and sees it as text with
no script run, filters by an error code (a deep link), bulk-retries every job failed with it and
watches them complete, and finds the action in the audit; the viewer is refused an action by the
server even when the page's button is forced on; a wrong password gets Auth's answer. The session
is Supabase's own auth client's (public/admin/vendor/supabase.js): it signs in, renews the token
before it expires, shares the session between two tabs, signs out everywhere (scope global), and
ends the session with a message when Auth refuses to renew it; all under the page's policy, with
Trusted Types, and no violation reported.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
import pytest
from playwright.sync_api import Page, expect

from devstack import stack
from devstack.tools import inbound
from lib.attachment_names import download_name
from lib.failures import FAILURES, FailureCode
from tests.support import operators
from tests.support.admin_page import Watched, sign_in
from tests.support.database import connect
from tests.support.emails import add_attachment, receive_email

pytestmark = pytest.mark.slow  # a browser, and a worker run through the whole stack

XSS_SUBJECT = '<img src=x onerror="window.__xss=1">'
XSS_FILENAME = "<script>window.__xss=2</script>.pdf"
SERVER_SECRETS = ("SUPABASE_SECRET_KEY", "DEVSTACK_LEGACY_SERVICE_ROLE_KEY", "SUPABASE_JWT_SECRET",
                  "INTERNAL_FUNCTION_SECRET", "RESEND_API_KEY", "RESEND_WEBHOOK_SECRET")  # fmt: skip
WAIT_MS = 90_000
STORAGE_KEY = "document-jobs-admin-session"  # where Supabase's client keeps the session (public/admin/session.js)


def requests_to(env: dict[str, str], route: str) -> int:
    return int(httpx.get(f"{env['SUPABASE_URL']}/_control/requests", timeout=10).json().get(route, 0))


def configure_auth(env: dict[str, str], **settings: Any) -> None:
    httpx.post(f"{env['SUPABASE_URL']}/_control/auth", json=settings, timeout=10).raise_for_status()


@pytest.fixture
def faxes(db, stack_env) -> dict[str, Any]:
    """Three e-mails whose jobs failed with resend_malformed_response (Resend answers them well now: a
    retry succeeds; a code whose advice is to retry, so the screen offers it),
    one failed job whose subject and attachment name are HTML, and the Vault secrets stored last
    (so that nothing ran before)."""
    jobs = []
    for _ in range(3):
        data = inbound.add_email(stack_env["RESEND_API_URL"], attachments=1)
        row = receive_email(db, data["email_id"], data, f"msg_{data['email_id']}")
        jobs.append(str(row["job_id"]))
    evil = receive_email(db, "em_evil", {"from": "Mallory <m@example.com>", "subject": XSS_SUBJECT})
    add_attachment(db, evil["fax_received_email_id"], "att_evil", XSS_FILENAME, size_bytes=1)
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now(),"
               " last_error_code = 'resend_malformed_response', last_error_message = 'Resend answered without id'"
               " where id = any(%s)", (jobs,))  # fmt: skip
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now(),"
               " last_error_code = 'resend_rejected', last_error_message = %s where id = %s",
               (XSS_SUBJECT, evil["job_id"]))  # fmt: skip
    with connect(stack_env["DATABASE_URL"]) as postgres:
        stack.store_vault_secrets(postgres, stack_env)
    return {"retried": jobs, "evil": str(evil["job_id"])}


def test_an_operator_bulk_retries_and_a_viewer_is_refused(chromium, stack_env, faxes, db) -> None:
    context = chromium.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "OPERATOR")
    expect(page.locator(".inbox-view .count-line")).to_be_visible()  # the inbox is the first view
    page.click("header nav.views >> text=Overview")
    expect(page.locator(".cards")).to_be_visible()
    expect(page.locator(".who")).to_contain_text("admin")
    # No empty table header (axe-core's empty-table-header): the failed-now table's link column has one.
    expect(page.locator("th", has_text="Jobs").first).to_be_visible()
    assert page.locator("th").evaluate_all("cells => cells.filter(c => !c.textContent.trim()).length") == 0

    # The HTML subject is text, and nothing of it ran.
    page.click("header nav.views >> text=Jobs")
    page.click("nav.tabs >> text=Failed")
    expect(page.get_by_text(XSS_SUBJECT, exact=True)).to_be_visible()
    page.click(f'tr[data-job-id="{faxes["evil"]}"] a')
    expect(page.locator("td.filename bdi")).to_have_text(download_name(XSS_FILENAME, "application/pdf"))
    expect(page.locator(".subject")).to_have_text(XSS_SUBJECT)
    expect(page.locator("bdi.subject")).to_have_attribute("dir", "auto")  # a sender's text is bidi-isolated
    assert page.locator("th").evaluate_all("cells => cells.filter(c => !c.textContent.trim()).length") == 0
    assert page.evaluate("window.__xss") is None
    assert page.locator('img[src="x"], script:not([src])').count() == 0

    # Every job failed with one error code: a deep link, the exact count, then the action.
    page.click("text=← Back to the list")
    page.fill("input[name=code]", "resend_malformed_response")
    page.click("form.filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"#/jobs\?code=resend_malformed_response$"))
    expect(page.locator("table.jobs tbody tr")).to_have_count(3)
    page.click("button.bulk-retry")
    dialog = page.locator("dialog.ask")
    expect(dialog.locator("h2")).to_have_text("Retry exactly 3 failed jobs?")
    # The code beside its meaning (lib/failures.py).
    meaning = FAILURES[FailureCode.RESEND_MALFORMED_RESPONSE].explanation.meaning_en
    # The queue's own jobs are left out of the console, and of what its bulk action counts.
    expect(dialog.locator(".bulk-filter")).to_have_text(
        f"Filter: Error code: resend_malformed_response ({meaning}); faxes' jobs only"
    )
    dialog.locator("textarea").fill("Resend has the e-mails now")
    dialog.locator("button[value=confirm]").click()
    expect(page.locator(".bulk-report")).to_contain_text("Done: 3 of 3 jobs changed, 0 not changed.")

    # The workers it started take them: the list (refreshing itself) shows them completed.
    page.click("nav.tabs >> text=Completed")
    expect(page.locator("table.jobs tbody tr")).to_have_count(3, timeout=WAIT_MS)
    statuses = db.execute("select status from document_jobs where id = any(%s)", (faxes["retried"],)).fetchall()
    assert [row["status"] for row in statuses] == ["completed"] * 3

    page.click("header nav.views >> text=Audit")
    row = page.locator("table.audit tbody tr").first
    expect(row).to_contain_text("bulk retry")
    expect(row).to_contain_text("Resend has the e-mails now")
    expect(row).to_contain_text(stack_env["DEVSTACK_OPERATOR_EMAIL"])
    expect(row).to_contain_text("3 changed, 0 not changed")
    expect(row).to_contain_text("Error code: resend_malformed_response")

    page.click("button.sign-out")
    expect(page.locator("form.sign-in")).to_contain_text("You are signed out.")

    # The viewer: the button is off, and forced on, the server refuses.
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("viewer")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs?state=failed")
    button = page.locator("button.bulk-retry")
    expect(button).to_be_disabled()
    button.evaluate("element => { element.disabled = false; }")
    button.click()
    expect(page.locator(".bulk-report")).to_contain_text("Only an admin may do this")
    assert db.execute("select count(*) as n from document_jobs_audit").fetchone()["n"] == 1
    assert (
        db.execute("select status from document_jobs where id = %s", (faxes["evil"],)).fetchone()["status"] == "failed"
    )

    # Japanese, by the switch.
    page.select_option("select.language", "ja")
    expect(page.locator("header nav.views")).to_contain_text("操作履歴")
    page.select_option("select.language", "en")
    assert watched.problems == []

    # The page talked to its own origin and to Supabase, and never with a server secret.
    origins = {urlsplit(stack_env[name])._replace(path="").geturl() for name in ("FUNCTIONS_URL", "SUPABASE_URL")}
    assert {origin for origin, _ in watched.sent} == origins
    server_secrets = [stack_env[name] for name in SERVER_SECRETS]
    stored = page.evaluate("JSON.stringify(Object.entries(localStorage))")
    assert not [secret for secret in server_secrets for _, sent in watched.sent if secret in sent]
    assert not [secret for secret in server_secrets if secret in stored]
    assert any(stack_env["SUPABASE_PUBLISHABLE_KEY"] in sent for _, sent in watched.sent)  # what it does send
    context.close()


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_a_wrong_password_gets_auths_answer_and_nothing_else(chromium, stack_env, locale) -> None:
    from lib.explanations import auth_codes

    context = chromium.new_context(locale=locale)
    page = context.new_page()
    sign_in(page, stack_env, "OPERATOR", password="wrong password")
    # Auth's refusal by its code (invalid_credentials), in the page's language; not Auth's English.
    said = auth_codes()["invalid_credentials"]
    language = locale[:2]
    status = page.locator(".sign-in-status")
    expect(status).to_contain_text(said.clerk(language))  # before a sign-in, no one is an admin
    expect(status).to_contain_text(said.meaning(language)[1:])
    expect(status).not_to_contain_text("Invalid login credentials")
    assert page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')") is None
    context.close()


def stored_session(page: Page) -> dict[str, Any] | None:
    """The session as Supabase's client keeps it in localStorage (shared by the page's tabs)."""
    text = page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')")
    return json.loads(text) if text else None


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def bearers(watched: Watched, since: int = 0) -> list[str]:
    """The access tokens the page sent to its own admin API, in order."""
    return [re.search(r"'authorization': 'Bearer ([^']+)'", sent)[1]  # type: ignore[index]
            for _, sent in watched.sent[since:] if "/api/admin/" in sent.split("\n", 1)[0]]  # fmt: skip


def auth(env: dict[str, str], method: str, path: str, token: str | None = None, **body: str) -> httpx.Response:
    """Auth, asked as the page asks it (the publishable key, and the access token when given)."""
    headers = {"apikey": env["SUPABASE_PUBLISHABLE_KEY"]} | ({"Authorization": f"Bearer {token}"} if token else {})
    return httpx.request(method, f"{env['SUPABASE_URL']}/auth/v1/{path}", headers=headers, json=body or None,
                         timeout=10)  # fmt: skip


def sign_in_as(page: Page, env: dict[str, str], email: str, password: str) -> None:
    page.goto(env["ADMIN_URL"])
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    page.click("form.sign-in button[type=submit]")


def test_the_client_renews_before_expiry_shares_one_session_between_tabs_and_signs_out_everywhere(
    chromium, stack_env
) -> None:
    # Tokens of 100 s: Supabase's client looks every 30 s and renews a token with less than 90 s left
    # (its documented margin), so the first renewal comes about 30 s after the page loaded, with
    # more than a minute of the token still to run. An account of its own: signing out is global.
    account, password = operators.new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    configure_auth(stack_env, access_token_seconds=100)
    try:
        context = chromium.new_context(locale="en-US")
        first = Watched(context.new_page())
        sign_in_as(first.page, stack_env, account["email"], password)
        expect(first.page.locator(".who")).to_contain_text("viewer")
        signed_in = stored_session(first.page)
        assert signed_in and signed_in["expires_at"] - time.time() > 90
        session_id = claims(signed_in["access_token"])["session_id"]
        # Another device of the same operator, which the global sign-out ends too.
        device = operators.sign_in(stack_env, account["email"], password)
        before = requests_to(stack_env, "POST /auth/v1/token")

        # The renewal, in the background, long before the token expires.
        started = time.monotonic()
        renewed = signed_in
        while renewed and renewed["access_token"] == signed_in["access_token"] and time.monotonic() - started < 45:
            time.sleep(0.5)
            renewed = stored_session(first.page)
        assert renewed and renewed["access_token"] != signed_in["access_token"], "no renewal within 45 s"
        assert signed_in["expires_at"] - time.time() > 30, "renewed well before the token expired"
        assert renewed["expires_at"] > signed_in["expires_at"]
        assert renewed["refresh_token"] != signed_in["refresh_token"]
        assert claims(renewed["access_token"])["session_id"] == session_id, "the same session, renewed"

        # A second tab opens signed in: the one session in localStorage, no sign-in of its own.
        second = Watched(context.new_page())
        second.page.goto(f"{stack_env['ADMIN_URL']}#/audit")
        expect(second.page.locator(".audit-view")).to_be_visible()
        assert {claims(token)["session_id"] for token in bearers(second)} == {session_id}
        assert not second.page.locator("form.sign-in").count()

        # Both tabs go on with the renewed session: their next API calls carry its tokens.
        for watched, view, path in ((first, "Jobs", "/api/admin/jobs?"), (second, "Overview", "/api/admin/overview")):
            with watched.page.expect_response(lambda r, path=path: path in r.url) as answer:
                watched.page.click(f"header nav.views >> text={view}")
            assert answer.value.status == 200, f"{view}: {answer.value.status}"
            token = answer.value.request.all_headers()["authorization"].removeprefix("Bearer ")
            assert token != signed_in["access_token"] and claims(token)["session_id"] == session_id
        newest = stored_session(second.page)
        assert newest and newest == stored_session(first.page), "one session, shared"
        user = auth(stack_env, "GET", "user", newest["access_token"])
        assert user.status_code == 200, "no refresh token was used twice (that would have ended the session)"
        # At most one renewal per tab and tick of the client (every 30 s), and the tab opening.
        renewals = requests_to(stack_env, "POST /auth/v1/token") - before
        assert 1 <= renewals <= 2 * (2 + (time.monotonic() - started) // 30), f"{renewals} renewals"

        # Signing out in one tab ends the session everywhere: in the other tab, at Auth, on the other device.
        second.page.click("button.sign-out")
        expect(second.page.locator("form.sign-in")).to_contain_text("You are signed out.")
        expect(first.page.locator("form.sign-in")).to_contain_text("You signed out in another tab.")
        assert stored_session(first.page) is None and stored_session(second.page) is None
        for token in (newest["access_token"], device["access_token"]):
            ended = auth(stack_env, "GET", "user", token)
            assert (ended.status_code, ended.json()["error_code"]) == (403, "session_not_found")
        for token in (newest["refresh_token"], device["refresh_token"]):
            refused = auth(stack_env, "POST", "token?grant_type=refresh_token", refresh_token=token)
            assert (refused.status_code, refused.json()["error_code"]) == (400, "refresh_token_not_found")
        assert first.problems == [] and second.problems == []

        # The watch would have seen a violation: Trusted Types refuses a string for an HTML sink, from
        # the page's own task (as the vendored client's code would run).
        first.page.evaluate("setTimeout(() => { try { document.body.innerHTML = '<b>markup</b>'; } catch {} })")
        deadline = time.monotonic() + 10
        while len(first.problems) < 2 and time.monotonic() < deadline:
            first.page.wait_for_timeout(100)
        assert any(p.startswith("policy violation: require-trusted-types-for") for p in first.problems), first.problems
        assert any(p.startswith("console: ") and "TrustedHTML" in p for p in first.problems), first.problems
        context.close()
    finally:
        configure_auth(stack_env, access_token_seconds=None)


def test_a_token_is_renewed_when_needed_and_a_refused_renewal_signs_out_with_a_message(chromium, stack_env) -> None:
    configure_auth(stack_env, access_token_seconds=5)
    try:
        context = chromium.new_context(locale="en-US")
        watched = Watched(context.new_page())
        page = watched.page
        sign_in(page, stack_env, "VIEWER")
        expect(page.locator(".who")).to_contain_text("viewer")
        expect(page.locator(".inbox-view .count-line")).to_be_visible()  # the inbox's request went with the first token
        signed_in = stored_session(page)
        assert signed_in

        # The token has expired: the next view gets a renewed one first, and the API takes it.
        time.sleep(6)
        # Playwright hands the page's events to the test only when the test calls it: a request sent
        # before now (a slow overview's, on a loaded machine) would otherwise be counted after "since".
        page.evaluate("0")
        since = len(watched.sent)
        page.click("header nav.views >> text=Audit")
        expect(page.locator(".audit-view")).to_be_visible()
        assert signed_in["access_token"] not in bearers(watched, since) and bearers(watched, since)

        # Auth ends the session (signed out on another device): once the token has expired, the renewal
        # is refused, and the page says why.
        current = stored_session(page)
        assert current
        auth(stack_env, "POST", "logout?scope=local", current["access_token"]).raise_for_status()
        time.sleep(6)
        page.click("header nav.views >> text=Jobs")
        expect(page.locator("form.sign-in")).to_contain_text("Your session expired and could not be renewed")
        assert stored_session(page) is None
        assert watched.problems == []
        context.close()
    finally:
        configure_auth(stack_env, access_token_seconds=None)


def test_attempts_are_numbered_across_retries_and_a_finished_job_stored_nothing(chromium, stack_env, db, admin) -> None:
    row = receive_email(db, "em_retried", {"from": "fax@example.jp", "subject": "retried twice"})
    job_id = str(row["job_id"])
    # Two attempts, a retry (the job's counter starts again), one more: generations 1..3.
    for generation, attempt, outcome in ((1, 1, "retried"), (2, 2, "failed"), (3, 1, "failed")):
        admin.execute(
            "insert into document_job_attempts (job_id, generation, attempt, started_at, finished_at, outcome,"
            " error_code) values (%s, %s, %s, now() - interval '1 hour' + %s * interval '1 minute',"
            " now() - interval '1 hour' + %s * interval '1 minute' + interval '2 seconds', %s, 'resend_not_found')",
            (job_id, generation, attempt, generation, generation, outcome),
        )
    db.execute("update document_jobs set status = 'failed', attempts = 1, generation = 3, finished_at = now(),"
               " last_error_code = 'resend_not_found' where id = %s", (job_id,))  # fmt: skip
    admin.execute("insert into document_jobs_audit (actor_id, actor_email, action, job_id, job_count, reason)"
               " values (gen_random_uuid(), 'a@example.com', 'retry', %s, 1, 'once')", (job_id,))  # fmt: skip
    # A retry through the public API's retry_document_job: its caller, the service key, names nobody.
    admin.execute("insert into document_jobs_audit (actor_id, action, job_id, job_count) values (null, 'retry', %s, 1)",
                  (job_id,))  # fmt: skip
    context = chromium.new_context(locale="en-US")
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("viewer")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{job_id}")
    expect(page.locator(".attempt-head strong")).to_have_text(["Attempt 1", "Attempt 2", "Attempt 3"])
    expect(page.locator(".attempt-head").nth(2)).to_contain_text("after retry 1")
    expect(page.locator(".attempt-head").nth(1)).not_to_contain_text("after retry")
    expect(page.get_by_text("No attachment was stored.")).to_be_visible()

    page.select_option("select.language", "ja")
    page.goto(f"{stack_env['ADMIN_URL']}#/audit")
    header = page.locator("table.audit th", has_text="件数")
    expect(header).to_be_visible()
    # One line box for the header's text (it wrapped one character a line).
    lines = header.evaluate("th => { const r = document.createRange(); r.selectNodeContents(th); "
                            "return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }")  # fmt: skip
    assert lines == 1, f"件数 takes {lines} lines"
    expect(page.locator("table.audit tbody tr").first).to_contain_text("サービスキーによる操作（操作者の記録なし）")
    expect(page.locator("table.audit tbody tr").nth(1)).to_contain_text("a@example.com")
    context.close()


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/St_Johns"])
def test_times_carry_their_offset_in_the_browsers_zone_as_the_cli_prints_them(chromium, stack_env, db, zone) -> None:
    from zoneinfo import ZoneInfo

    from lib.admin.display import absolute_time

    row = receive_email(db, f"em_time_{zone}", {"from": "fax@example.jp", "subject": "a time"})
    created = db.execute("select created_at from document_jobs where id = %s", (row["job_id"],)).fetchone()
    shown = absolute_time(created["created_at"].isoformat(), ZoneInfo(zone))  # what the CLI prints in TZ=zone
    context = chromium.new_context(locale="ja-JP", timezone_id=zone)
    page = context.new_page()
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator(".who")).to_contain_text("viewer")
    page.goto(f"{stack_env['ADMIN_URL']}#/jobs")
    cell = page.locator(f'tr[data-job-id="{row["job_id"]}"] td').first
    expect(cell).to_contain_text(shown)
    assert re.fullmatch(rf"{re.escape(shown)} \(.+\)", cell.inner_text()), "how long ago beside, not instead"
    context.close()


def test_outages_and_errors_say_what_they_mean_and_what_to_do_in_both_languages(
    chromium, stack_env, db, admin, health_check_paused
) -> None:
    # The texts are lib/failures.py's (the CLI's health prints the operator's), through explanations.js:
    # the clerk's advice for everyone, the operator's (the engineer's steps) for an admin only.
    from lib.explanations import job_codes, outage_codes

    admin.execute("update document_jobs_internal.outages set active = true, since = now() - interval '5 minutes'"
                  " where cause in ('resend_unauthorized', 'webhooks_missing')")  # fmt: skip
    row = receive_email(db, "em_advice", {"from": "fax@example.jp", "subject": "refused"})
    db.execute("update document_jobs set status = 'failed', attempts = 5, finished_at = now(),"
               " last_error_code = 'resend_not_found', last_error_message = 'Resend 404 not_found: Email not found'"
               " where id = %s", (row["job_id"],))  # fmt: skip
    outages = {cause: outage_codes()[cause] for cause in ("resend_unauthorized", "webhooks_missing")}
    not_found = job_codes()["resend_not_found"]
    context = chromium.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    for who in ("VIEWER", "OPERATOR"):
        sign_in(page, stack_env, who)
        role = "viewer" if who == "VIEWER" else "admin"
        expect(page.locator(".who")).to_contain_text(role)
        for language in ("en", "ja"):
            page.select_option("select.language", language)
            page.goto(f"{stack_env['ADMIN_URL']}#/overview")
            for cause, said in outages.items():
                outage = page.locator(f'li.outage[data-cause="{cause}"]')
                expect(outage.locator(".meaning")).to_contain_text(said.meaning(language)[1:])
                expect(outage.locator(".advice")).to_contain_text(said.clerk(language))
                expect(outage.locator("code")).to_have_text(cause)
                if role == "admin":
                    expect(outage.locator(".operator-advice")).to_contain_text(said.operator(language))
                else:  # a viewer (and later a clerk) is told whom to call, not the engineer's steps
                    expect(outage.locator(".operator-advice")).to_have_count(0)
                    expect(outage).not_to_contain_text("Vercel")
            page.goto(f"{stack_env['ADMIN_URL']}#/jobs/{row['job_id']}")
            error = page.locator('dl.facts .explanation[data-code="resend_not_found"]')
            expect(error.locator(".advice")).to_contain_text(not_found.clerk(language))
            # The advice names the screen's own buttons: the retry it says cannot help, which the page
            # therefore does not offer, and the mark that closes the fax, which a viewer does not have.
            button = "再実行" if language == "ja" else "Retry"
            expect(error.locator(".advice")).to_contain_text(f"「{button}」" if language == "ja" else f"“{button}”")
            expect(page.locator(".retry-cannot-help")).to_be_visible()
            expect(page.locator("button.job-retry")).to_have_count(0)
            done = "対応済みにする" if language == "ja" else "Mark done"
            expect(error.locator(".advice")).to_contain_text(f"「{done}」" if language == "ja" else f"“{done}”")
            expect(page.locator(".handling .badge.handling-new")).to_be_visible()  # its control is drawn last
            expect(page.locator("button.handling-to-done")).to_have_count(1 if role == "admin" else 0)
            if role == "admin":
                expect(page.locator("button.handling-to-done")).to_have_text(done)
            expect(error.locator(".operator-advice")).to_have_count(1 if role == "admin" else 0)
            label = "Resendからのメッセージ:" if language == "ja" else "Message from Resend:"
            expect(error.locator(".message")).to_have_text(f"{label} Resend 404 not_found: Email not found")
            if language == "ja":
                # No English of ours on the Japanese page: the meaning and advice are Japanese.
                expect(page.locator("main")).not_to_contain_text(not_found.clerk_en)
                expect(page.locator("main")).not_to_contain_text(not_found.operator_en[:40])
                page.goto(f"{stack_env['ADMIN_URL']}#/overview")
                expect(page.locator("li.outage").first).to_be_visible()
                expect(page.locator("main")).not_to_contain_text(outages["webhooks_missing"].clerk_en[:40])
                page.select_option("select.language", "en")
        page.click("button.sign-out")
        expect(page.locator("form.sign-in")).to_be_visible()
    context.close()
