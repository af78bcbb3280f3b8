"""The admin function (api/admin.py) through the local function host, as the deployed code runs:
the page and its Content-Security-Policy, token verification (no token, forged, expired, other
projects', legacy HS256), roles (admin, viewer, none; user_metadata ignored; removed at once for
actions), the views, single and bulk actions with their audit, and signed download URLs."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.emails import failed_email, stored_attachment
from tests.support.operators import new_account, set_app_metadata, sign_in

TIMEOUT = 60


@pytest.fixture(scope="module")
def operator_session(stack_env) -> dict[str, Any]:
    return sign_in(stack_env, stack_env["DEVSTACK_OPERATOR_EMAIL"], stack_env["DEVSTACK_OPERATOR_PASSWORD"])


@pytest.fixture(scope="module")
def viewer_session(stack_env) -> dict[str, Any]:
    return sign_in(stack_env, stack_env["DEVSTACK_VIEWER_EMAIL"], stack_env["DEVSTACK_VIEWER_PASSWORD"])


def call(
    env: dict[str, str], path: str, token: str | None = None, body: dict[str, Any] | None = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{env['FUNCTIONS_URL']}/api/admin/{path}"
    if body is None:
        return httpx.get(url, headers=headers, timeout=TIMEOUT)
    return httpx.post(url, headers=headers, json=body, timeout=TIMEOUT)


def claims_of(session: dict[str, Any]) -> dict[str, Any]:
    return jwt.decode(session["access_token"], options={"verify_signature": False})


def signed(env: dict[str, str], claims: dict[str, Any], key: Any = None, algorithm: str = "ES256",
           kid: str | None = None) -> str:  # fmt: skip
    headers = {"kid": kid or env["DEVSTACK_AUTH_KEY_ID"]} if algorithm != "HS256" else {}
    return jwt.encode(claims, key if key is not None else env["DEVSTACK_AUTH_SIGNING_KEY"], algorithm=algorithm,
                      headers=headers)  # fmt: skip


# -- the page ------------------------------------------------------------------------------------


def test_the_page_has_a_strict_policy_and_only_the_publishable_key(stack_env) -> None:
    page = httpx.get(stack_env["ADMIN_URL"], timeout=TIMEOUT)
    assert page.status_code == 200 and page.headers["Content-Type"] == "text/html; charset=utf-8"
    policy = dict(part.strip().split(" ", 1) for part in page.headers["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'" and policy["default-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["connect-src"] == f"'self' {stack_env['SUPABASE_URL']}", "this origin and the Supabase URL, exactly"
    assert "unsafe-inline" not in page.headers["Content-Security-Policy"]
    assert "unsafe-eval" not in page.headers["Content-Security-Policy"]
    assert stack_env["SUPABASE_PUBLISHABLE_KEY"] in page.text
    assert not re.search(r"<script(?![^>]*\bsrc=)", page.text), "no inline script"
    assert " on" not in re.sub(r'content="[^"]*"', "", page.text).lower().replace("noscript", ""), "no inline handler"


def test_the_page_and_its_files_never_hold_a_server_secret(stack_env) -> None:
    secrets = [
        stack_env[name]
        for name in (
            "SUPABASE_SECRET_KEY",
            "DEVSTACK_LEGACY_SERVICE_ROLE_KEY",
            "SUPABASE_JWT_SECRET",
            "INTERNAL_FUNCTION_SECRET",
        )
    ]
    texts = [httpx.get(stack_env["ADMIN_URL"], timeout=TIMEOUT).text]
    for name in ("app.js", "session.js", "api.js", "admin.css", "vendor/supabase.js"):
        asset = httpx.get(f"{stack_env['FUNCTIONS_URL']}/admin/{name}", timeout=TIMEOUT)
        assert asset.status_code == 200, name
        assert asset.headers["X-Content-Type-Options"] == "nosniff" and "frame-ancestors 'none'" in asset.headers[
            "Content-Security-Policy"]  # fmt: skip
        texts.append(asset.text)
    assert httpx.get(f"{stack_env['FUNCTIONS_URL']}/admin/app.js", timeout=TIMEOUT).headers["Content-Type"].startswith(
        "text/javascript")  # fmt: skip
    assert not [secret for secret in secrets for text in texts if secret in text]


# -- tokens --------------------------------------------------------------------------------------


def test_without_a_token_the_api_refuses(stack_env) -> None:
    answer = call(stack_env, "overview")
    assert (answer.status_code, answer.json()["error"]) == (401, "missing_token")
    assert answer.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert answer.headers["Cache-Control"] == "no-store"


def test_tokens_that_are_not_this_projects_are_refused(stack_env, operator_session) -> None:
    claims = claims_of(operator_session)
    other_key = ec.generate_private_key(ec.SECP256R1())
    tokens = {
        "not a JWT": ("not-a-jwt", "invalid_token"),
        "forged (another key, the same kid)": (signed(stack_env, claims, other_key), "invalid_token"),
        "a key id the project does not have": (signed(stack_env, claims, kid="no-such-key"), "invalid_token"),
        "alg none": (jwt.encode(claims, None, algorithm="none"), "invalid_token"),
        "expired": (signed(stack_env, {**claims, "iat": time.time() - 7200, "exp": time.time() - 60}), "token_expired"),
        "another issuer": (signed(stack_env, {**claims, "iss": "https://other.supabase.co/auth/v1"}), "invalid_token"),
        "another audience": (signed(stack_env, {**claims, "aud": "somebody-else"}), "invalid_token"),
        "HS256 with another secret": (signed(stack_env, claims, "not-the-secret-" * 3, "HS256"), "invalid_token"),
        "the legacy service_role key": (stack_env["DEVSTACK_LEGACY_SERVICE_ROLE_KEY"], "invalid_token"),
        "the secret key": (stack_env["SUPABASE_SECRET_KEY"], "invalid_token"),
    }
    for what, (token, code) in tokens.items():
        answer = call(stack_env, "me", token)
        assert (answer.status_code, answer.json()["error"]) == (401, code), what


def test_a_legacy_hs256_token_is_verified_with_the_jwt_secret(stack_env, operator_session) -> None:
    token = signed(stack_env, claims_of(operator_session), stack_env["SUPABASE_JWT_SECRET"], "HS256")
    answer = call(stack_env, "me", token)
    assert answer.status_code == 200 and answer.json()["role"] == "admin"


# -- roles ---------------------------------------------------------------------------------------


def test_a_viewer_reads_everything_and_the_server_refuses_its_actions(stack_env, viewer_session, db) -> None:
    job_id, _ = failed_email(db, "viewer test")
    token = viewer_session["access_token"]
    assert call(stack_env, "me", token).json()["role"] == "viewer"
    assert call(stack_env, "overview", token).status_code == 200
    assert call(stack_env, f"jobs/{job_id}", token).json()["job"]["id"] == job_id
    for path, body in ((f"jobs/{job_id}/retry", {}), (f"jobs/{job_id}/cancel", {"reason": "x"}),
                       ("bulk", {"action": "retry", "query": "state=failed"})):  # fmt: skip
        answer = call(stack_env, path, token, body)
        assert (answer.status_code, answer.json()["error"]) == (403, "not_admin"), path
    assert db.execute("select status from document_jobs where id = %s", (job_id,)).fetchone()["status"] == "failed"


def test_no_role_is_a_403_and_user_metadata_is_never_read(stack_env) -> None:
    account, password = new_account(stack_env, user_metadata={"document_jobs_role": "admin"})
    token = sign_in(stack_env, account["email"], password)["access_token"]
    answer = call(stack_env, "overview", token)
    assert (answer.status_code, answer.json()["error"]) == (403, "no_role")


def test_a_removed_role_takes_effect_for_actions_at_once(stack_env, db) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    token = sign_in(stack_env, account["email"], password)["access_token"]
    job_id, _ = failed_email(db, "role removed")
    set_app_metadata(stack_env, account["id"], {"document_jobs_role": "viewer"})
    assert call(stack_env, "me", token).json()["role"] == "viewer", "the token says admin, the database does not"
    answer = call(stack_env, f"jobs/{job_id}/retry", token, {})
    assert (answer.status_code, answer.json()["error"]) == (403, "not_admin"), "and Auth, asked before acting"
    set_app_metadata(stack_env, account["id"], {"document_jobs_role": None})
    answer = call(stack_env, f"jobs/{job_id}/retry", token, {})
    assert (answer.status_code, answer.json()["error"]) == (403, "no_role")
    for view in ("me", "overview", "jobs", f"jobs/{job_id}", "audit"):
        answer = call(stack_env, view, token)
        assert (answer.status_code, answer.json()["error"]) == (403, "no_role"), f"{view} reads nothing"
    assert db.execute("select status from document_jobs where id = %s", (job_id,)).fetchone()["status"] == "failed"


def test_after_signing_out_a_token_can_no_longer_act(stack_env, db) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    token = sign_in(stack_env, account["email"], password)["access_token"]
    job_id, _ = failed_email(db, "signed out")
    headers = {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"], "Authorization": f"Bearer {token}"}
    logout = httpx.post(f"{stack_env['SUPABASE_URL']}/auth/v1/logout?scope=local", timeout=10, headers=headers)
    assert logout.status_code == 204
    answer = call(stack_env, f"jobs/{job_id}/retry", token, {})
    assert (answer.status_code, answer.json()["error"]) == (401, "session_ended")


# -- views and actions ---------------------------------------------------------------------------


def test_the_list_takes_its_filter_from_the_query_and_the_database_checks_it(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    job_id, _ = failed_email(db, "請求書 filter", "storage_rejected")
    page = call(stack_env, "jobs?state=failed&code=storage_rejected&q=%E8%AB%8B%E6%B1%82%E6%9B%B8", token)
    assert page.status_code == 200
    assert [job["id"] for job in page.json()["jobs"]] == [job_id]
    assert re.fullmatch(r"app;dur=[\d.]+, db;dur=[\d.]+", page.headers["Server-Timing"])
    refused = call(stack_env, "jobs?state=lost", token)
    assert (refused.status_code, refused.json()["error"]) == (400, "bad_request")
    assert "queued, running, completed, failed" in refused.json()["message"]
    assert call(stack_env, "jobs?limit=0", token).status_code == 400
    assert call(stack_env, f"jobs/{uuid.uuid4()}", token).status_code == 404


def test_the_list_filters_by_sender_apart_from_the_search(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    job_id, _ = failed_email(db, "by sender", sender="Fax Gateway <gw@example.jp>")
    failed_email(db, "forwarded by Fax Gateway")
    page = call(stack_env, "jobs?sender=fax%20gateway", token).json()
    assert ([job["id"] for job in page["jobs"]], page["filter"]) == ([job_id], {"sender": "fax gateway"})
    assert len(call(stack_env, "jobs?q=fax%20gateway", token).json()["jobs"]) == 2, "the search finds the subject too"


def test_an_admin_retries_and_cancels_one_job_and_the_audit_says_so(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    job_id, _ = failed_email(db, "one job")
    assert call(stack_env, f"jobs/{job_id}/retry", token, {"reason": "fixed"}).json() == {"changed": True}
    again = call(stack_env, f"jobs/{job_id}/retry", token, {})
    assert (again.status_code, again.json()["error"]) == (409, "not_failed")
    assert call(stack_env, f"jobs/{job_id}/cancel", token, {}).status_code == 400, "a cancel needs a reason"
    assert call(stack_env, f"jobs/{job_id}/cancel", token, {"reason": "duplicate fax"}).json() == {"changed": True}
    entries = call(stack_env, "audit", token).json()["entries"]
    assert [(e["action"], e["job_id"], e["reason"], e["actor_email"]) for e in entries[:2]] == [
        ("cancel", job_id, "duplicate fax", stack_env["DEVSTACK_OPERATOR_EMAIL"]),
        ("retry", job_id, "fixed", stack_env["DEVSTACK_OPERATOR_EMAIL"]),
    ]


def test_bulk_retry_applies_to_the_counted_jobs_in_batches_and_is_audited_once(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    counted = {failed_email(db, f"bulk {i}", "storage_invalid_key")[0] for i in range(3)}
    prepared = call(stack_env, "bulk", token, {"action": "retry", "query": "code=storage_invalid_key"}).json()
    assert prepared["job_count"] == 3 and prepared["states"] == ["failed"]
    late, _ = failed_email(db, "after the count", "storage_invalid_key")
    progress = call(stack_env, f"bulk/{prepared['bulk_action_id']}/apply", token, {"reason": "key fixed"}).json()
    assert (progress["done"], progress["changed"], progress["skipped"]) == (True, 3, 0)
    statuses = {r["id"]: r["status"] for r in db.execute("select id::text, status from document_jobs").fetchall()}
    assert {statuses[job] for job in counted} == {"queued"} and statuses[late] == "failed"
    again = call(stack_env, f"bulk/{prepared['bulk_action_id']}/apply", token, {}).json()
    assert again["changed"] == 3, "applying again changes nothing"
    bulk = [e for e in call(stack_env, "audit", token).json()["entries"] if e["action"] == "bulk_retry"]
    assert [(e["job_count"], e["reason"], e["filter"], e["bulk"]["done"]) for e in bulk] == [
        (3, "key fixed", {"error_code": "storage_invalid_key"}, True)]  # fmt: skip


def test_a_bulk_retry_leaves_cancelled_jobs_out_unless_the_filter_names_that_code(
    stack_env, operator_session, db
) -> None:
    token = operator_session["access_token"]
    failed, _ = failed_email(db, "failed on its own", "storage_rejected")
    cancelled, _ = failed_email(db, "cancelled by an admin", "cancelled")
    every = call(stack_env, "bulk", token, {"action": "retry", "query": "state=failed"}).json()
    assert (every["job_count"], every["cancelled_left_out"]) == (1, True)
    named = call(stack_env, "bulk", token, {"action": "retry", "query": "state=failed&code=cancelled"}).json()
    assert (named["job_count"], named["cancelled_left_out"]) == (1, False)
    call(stack_env, f"bulk/{every['bulk_action_id']}/apply", token, {"reason": "all failed"})
    statuses = {r["id"]: r["status"] for r in db.execute("select id::text, status from document_jobs").fetchall()}
    assert (statuses[failed], statuses[cancelled]) == ("queued", "failed")


def test_a_download_is_a_signed_url_valid_for_a_minute_under_the_original_name(stack_env, operator_session, db) -> None:
    _, email_id = failed_email(db, "with an attachment")
    attachment_id = stored_attachment(db, stack_env, email_id, "att_dl", "注文書 (1).pdf", b"%PDF-1.4 test")
    answer = call(stack_env, f"attachments/{attachment_id}/download", operator_session["access_token"], {}).json()
    assert answer["expires_in"] == 60
    token = parse_qs(urlsplit(answer["url"]).query)["token"][0]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 60
    download = httpx.get(answer["url"], timeout=10)
    assert download.status_code == 200 and download.content == b"%PDF-1.4 test"
    assert "filename*=UTF-8''%E6%B3%A8%E6%96%87%E6%9B%B8%20(1).pdf" in download.headers["Content-Disposition"]
    assert stack_env["SUPABASE_SECRET_KEY"] not in answer["url"]


def test_a_download_is_named_safely_by_its_stored_type_and_the_job_shows_that_name(
    stack_env, operator_session, db
) -> None:
    job_id, email_id = failed_email(db, "a disguised attachment")
    ids = [
        stored_attachment(db, stack_env, email_id, provider_id, filename, b"%PDF-1.4 x")
        for provider_id, filename in (("att_x", "scan.pdf.exe"), ("att_y", "FAX-invoice\u202efdp.exe"))
    ]
    token = operator_session["access_token"]
    shown = {a["filename"]: a["download_name"] for a in call(stack_env, f"jobs/{job_id}", token).json()["attachments"]}
    assert shown == {"scan.pdf.exe": "scan.pdf.pdf", "FAX-invoice\u202efdp.exe": "FAX-invoicefdp.pdf"}
    for attachment_id, name in zip(ids, ("scan.pdf.pdf", "FAX-invoicefdp.pdf"), strict=True):
        answer = call(stack_env, f"attachments/{attachment_id}/download", token, {}).json()
        download = httpx.get(answer["url"], timeout=10)
        assert f"filename*=UTF-8''{name}" in download.headers["Content-Disposition"]


def test_nul_lone_surrogates_and_tampered_cursors_are_400_with_a_stable_code(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    job_id, _ = failed_email(db, "bad input")
    failed_email(db, "bad input, a second job")
    for path in ("jobs?q=a%00b", "jobs?state=failed&q=%00"):
        refused = call(stack_env, path, token)
        assert (refused.status_code, refused.json()["error"]) == (400, "bad_text"), path
    surrogate = httpx.post(
        f"{stack_env['FUNCTIONS_URL']}/api/admin/jobs/{job_id}/retry",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        content=b'{"reason": "\\ud800"}',
        timeout=TIMEOUT,
    )
    assert (surrogate.status_code, surrogate.json()["error"]) == (400, "bad_text")
    bulk = call(stack_env, "bulk", token, {"action": "retry", "query": "q=x%00"})
    assert (bulk.status_code, bulk.json()["error"]) == (400, "bad_text")
    tampered = call(stack_env, f"jobs?after_time=not-a-time&after_id={job_id}", token)
    assert (tampered.status_code, tampered.json()["error"]) == (400, "bad_cursor")
    first = call(stack_env, "jobs?limit=1", token).json()
    cursor = first["next"]
    page = httpx.get(
        f"{stack_env['FUNCTIONS_URL']}/api/admin/jobs",
        params={"limit": "1", "after_time": cursor["created_at"], "after_id": cursor["id"]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    )
    assert page.status_code == 200, "the cursor a page gives is taken"


def test_the_search_finds_a_job_by_the_short_id_the_list_shows(stack_env, operator_session, db) -> None:
    token = operator_session["access_token"]
    job_id, email_id = failed_email(db, "short id")
    failed_email(db, "another job")
    for given in (job_id[:8], job_id[:8].upper(), job_id[:13], email_id[:8]):
        found = call(stack_env, f"jobs?q={given}", token).json()["jobs"]
        assert [job["id"] for job in found] == [job_id], given
