"""When an operator's access ends, their next read ends with it, though their access token still
verifies for up to an hour: an operator removed (as the operators CLI does it), banned, deleted
(soft or hard) or signed out gets, on the very next request to every read route of the admin API
(/me, the overview, the list, a job, the audit, a signed download URL), 403 no_role or 401
session_ended, and never a view or a signed URL. Real operators signed in through the local
stack's Auth stand-in, the admin function through the local function host."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from lib.admin import operators
from lib.settings import SupabaseSettings
from tests.support.emails import failed_email, stored_attachment
from tests.support.operators import admin_api, new_account, sign_in

TIMEOUT = 60
ROLE = {"document_jobs_role": "admin"}


def read(env: dict[str, str], route: str, token: str) -> httpx.Response:
    """One read route: a GET, or (the download URL) a POST without a body."""
    url = f"{env['FUNCTIONS_URL']}/api/admin/{route}"
    headers = {"Authorization": f"Bearer {token}"}
    if route.startswith("attachments/"):
        return httpx.post(url, headers=headers, json={}, timeout=TIMEOUT)
    return httpx.get(url, headers=headers, timeout=TIMEOUT)


def attachment_of_a_failed_job(env: dict[str, str], db: psycopg.Connection[dict]) -> tuple[str, str]:
    """A failed job whose e-mail has one attachment stored in Storage: (job id, attachment id)."""
    job_id, email_id = failed_email(db, "access ends")
    return job_id, stored_attachment(db, env, email_id, "att_end", "注文書.pdf", b"%PDF-1.4 end")


def auth_admin_call(env: dict[str, str], method: str, user_id: str, body: dict[str, Any]) -> None:
    answer = httpx.request(method, f"{env['SUPABASE_URL']}/auth/v1/admin/users/{user_id}", headers=admin_api(env),
                           json=body, timeout=10)  # fmt: skip
    assert answer.status_code == 200, answer.text


def removed(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    """The operators CLI's remove (lib/admin/operators.py): the role taken away, the account kept."""
    settings = SupabaseSettings(supabase_url=env["SUPABASE_URL"], supabase_secret_key=env["SUPABASE_SECRET_KEY"])
    with httpx.Client() as http:
        user = operators.remove(operators.AuthAdmin(http, settings), account["email"])
    assert operators.role_of(user) is None


def banned(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    auth_admin_call(env, "PUT", account["id"], {"ban_duration": "24h"})


def soft_deleted(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    auth_admin_call(env, "DELETE", account["id"], {"should_soft_delete": True})


def hard_deleted(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    auth_admin_call(env, "DELETE", account["id"], {"should_soft_delete": False})


def signed_out(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    """What the page's sign-out sends: supabase-js's signOut(), scope global."""
    headers = {"apikey": env["SUPABASE_PUBLISHABLE_KEY"], "Authorization": f"Bearer {token}"}
    assert httpx.post(f"{env['SUPABASE_URL']}/auth/v1/logout", headers=headers, timeout=10).status_code == 204


def signed_out_elsewhere(env: dict[str, str], account: dict[str, Any], token: str) -> None:
    """Another device of the same operator signs out everywhere (scope global) with its own token."""
    other = sign_in(env, account["email"], account["password"])
    signed_out(env, account, other["access_token"])


Ending = Callable[[dict[str, str], dict[str, Any], str], None]
ENDINGS: dict[str, tuple[Ending, int, str]] = {
    "removed": (removed, 403, "no_role"),
    "banned": (banned, 401, "session_ended"),
    "soft-deleted": (soft_deleted, 401, "session_ended"),
    "hard-deleted": (hard_deleted, 401, "session_ended"),
    "signed out": (signed_out, 401, "session_ended"),
    "signed out on another device": (signed_out_elsewhere, 401, "session_ended"),
}


@pytest.mark.parametrize("ending", ENDINGS, ids=list(ENDINGS))
def test_the_next_read_after_access_ends_is_refused_on_every_route(stack_env, db, ending) -> None:
    end, status, code = ENDINGS[ending]
    account, password = new_account(stack_env, app_metadata=ROLE)
    account["password"] = password
    token = sign_in(stack_env, account["email"], password)["access_token"]
    job_id, attachment_id = attachment_of_a_failed_job(stack_env, db)
    routes = ["me", "overview", "jobs", f"jobs/{job_id}", "audit", f"attachments/{attachment_id}/download"]

    before = {route: read(stack_env, route, token) for route in routes}
    assert {route: answer.status_code for route, answer in before.items()} == dict.fromkeys(routes, 200)
    assert before["me"].json()["email"] == account["email"]
    assert before[f"jobs/{job_id}"].json()["attachments"][0]["id"] == attachment_id
    assert httpx.get(before[routes[-1]].json()["url"], timeout=10).content == b"%PDF-1.4 end", "a URL that works"

    end(stack_env, account, token)

    after = {route: read(stack_env, route, token) for route in routes}
    refused = {route: (answer.status_code, answer.json().get("error")) for route, answer in after.items()}
    assert refused == dict.fromkeys(routes, (status, code)), f"the same token, {ending}"
    for route, answer in after.items():
        assert "url" not in answer.json(), f"{route} signed no download URL"
        assert answer.headers["Cache-Control"] == "no-store"
        if status == 401:
            assert answer.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"'), route


def test_a_token_of_a_session_that_ended_stays_refused_after_its_operator_signs_in_again(stack_env, db) -> None:
    """Signing in again starts a new session: the old token does not come back to life with it."""
    account, password = new_account(stack_env, app_metadata=ROLE)
    first = sign_in(stack_env, account["email"], password)["access_token"]
    signed_out(stack_env, account, first)
    second = sign_in(stack_env, account["email"], password)["access_token"]
    assert read(stack_env, "me", second).status_code == 200
    answer = read(stack_env, "me", first)
    assert (answer.status_code, answer.json()["error"]) == (401, "session_ended")
