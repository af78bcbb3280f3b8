"""The Auth stand-in (devstack/standins/auth/) answers as Supabase Auth does: the password and refresh-token
grants, /user, /logout, the JWKS, the admin users API, API keys, errors and CORS preflights."""

from __future__ import annotations

import time
import uuid

import httpx
import jwt
import pytest

from tests.support.operators import admin_api, new_account, set_app_metadata, sign_in


@pytest.fixture
def auth(stack_env) -> str:
    return f"{stack_env['SUPABASE_URL']}/auth/v1"


@pytest.fixture
def anon(stack_env) -> dict[str, str]:
    return {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"]}


def test_a_password_sign_in_answers_a_session_signed_with_the_jwks_key(stack_env, auth) -> None:
    session = sign_in(stack_env, stack_env["DEVSTACK_OPERATOR_EMAIL"], stack_env["DEVSTACK_OPERATOR_PASSWORD"])
    assert session["token_type"] == "bearer" and session["refresh_token"]
    assert session["expires_at"] - session["expires_in"] == pytest.approx(time.time(), abs=5)
    jwks = httpx.get(f"{auth}/.well-known/jwks.json", timeout=10).json()
    [key] = jwks["keys"]
    assert (key["kty"], key["crv"], key["alg"], key["use"]) == ("EC", "P-256", "ES256", "sig")
    assert jwt.get_unverified_header(session["access_token"])["kid"] == key["kid"]
    claims = jwt.decode(session["access_token"], jwt.PyJWK(key).key, algorithms=["ES256"], audience="authenticated",
                        issuer=auth)  # fmt: skip
    assert claims["sub"] == session["user"]["id"]
    assert claims["role"] == "authenticated" and claims["is_anonymous"] is False and claims["session_id"]
    assert claims["app_metadata"]["document_jobs_role"] == "admin"
    assert "password_hash" not in session["user"]


def test_a_wrong_password_gets_invalid_credentials(auth, anon, stack_env) -> None:
    wrong = {"email": stack_env["DEVSTACK_OPERATOR_EMAIL"], "password": "not it"}
    answer = httpx.post(f"{auth}/token?grant_type=password", headers=anon, json=wrong, timeout=10)
    assert answer.status_code == 400
    assert answer.json() == {"code": 400, "error_code": "invalid_credentials", "msg": "Invalid login credentials"}
    versioned = httpx.post(
        f"{auth}/token?grant_type=password",
        headers={**anon, "X-Supabase-Api-Version": "2024-01-01"},
        json={"email": "nobody@example.com", "password": "x"},
        timeout=10,
    )
    assert versioned.json() == {"code": "invalid_credentials", "message": "Invalid login credentials"}
    assert versioned.headers["X-Supabase-Api-Version"] == "2024-01-01"


def test_without_an_api_key_the_gateway_refuses(auth, stack_env) -> None:
    answer = httpx.post(
        f"{auth}/token?grant_type=password", json={"email": "a@example.com", "password": "x"}, timeout=10
    )
    assert answer.status_code == 401 and answer.json()["message"] == "No API key found in request"
    wrong = httpx.get(f"{auth}/user", headers={"apikey": "sb_publishable_made_up"}, timeout=10)
    assert wrong.status_code == 401 and wrong.json()["message"] == "Invalid API key"
    # A page across origins can read the refusal (CORS), and needs no key for the JWKS.
    origin = "http://127.0.0.1:1"
    cross = httpx.get(f"{auth}/user", headers={"Origin": origin}, timeout=10)
    assert cross.status_code == 401 and cross.headers["Access-Control-Allow-Origin"] == origin
    assert httpx.get(f"{auth}/.well-known/jwks.json", timeout=10).json()["keys"]


def configure_auth(env: dict[str, str], **settings: float | None) -> None:
    httpx.post(f"{env['SUPABASE_URL']}/_control/auth", json=settings, timeout=10).raise_for_status()


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_family(auth, anon, stack_env) -> None:
    account, password = new_account(stack_env)
    session = sign_in(stack_env, account["email"], password)

    def refresh(token: str) -> httpx.Response:
        return httpx.post(f"{auth}/token?grant_type=refresh_token", headers=anon, json={"refresh_token": token},
                          timeout=10)  # fmt: skip

    renewed = refresh(session["refresh_token"])
    assert renewed.status_code == 200 and renewed.json()["refresh_token"] != session["refresh_token"]
    # The parent of the active token: its first answer was lost, so GoTrue answers the same again.
    again = refresh(session["refresh_token"])
    assert again.status_code == 200 and again.json()["refresh_token"] == renewed.json()["refresh_token"]
    newest = refresh(renewed.json()["refresh_token"])
    assert newest.status_code == 200
    configure_auth(stack_env, refresh_reuse_interval_s=0)
    try:
        time.sleep(0.05)
        reused = refresh(session["refresh_token"])  # neither active nor its parent, past the reuse interval
        assert (reused.status_code, reused.json()["error_code"]) == (400, "refresh_token_already_used")
        time.sleep(0.05)
        ended = refresh(newest.json()["refresh_token"])
        assert (ended.status_code, ended.json()["error_code"]) == (400, "refresh_token_already_used"), "revoked"
    finally:
        configure_auth(stack_env, refresh_reuse_interval_s=None)
    unknown = refresh("not-a-refresh-token")
    assert unknown.status_code == 400 and unknown.json()["error_code"] == "refresh_token_not_found"


def test_user_answers_the_stored_user_and_refuses_what_auth_refuses(auth, anon, stack_env) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    session = sign_in(stack_env, account["email"], password)
    bearer = {**anon, "Authorization": f"Bearer {session['access_token']}"}
    set_app_metadata(stack_env, account["id"], {"document_jobs_role": None})
    user = httpx.get(f"{auth}/user", headers=bearer, timeout=10).json()
    assert user["id"] == account["id"] and "document_jobs_role" not in user["app_metadata"], "as stored now"
    none = httpx.get(f"{auth}/user", headers={"apikey": stack_env["DEVSTACK_LEGACY_ANON_KEY"]}, timeout=10)
    assert (none.status_code, none.json()["error_code"]) == (401, "no_authorization")
    # A publishable key alone reaches Auth as the anon role's JWT (the gateway's), which names no user.
    anonymous = httpx.get(f"{auth}/user", headers=anon, timeout=10)
    assert (anonymous.status_code, anonymous.json()["error_code"]) == (403, "bad_jwt")
    forged = httpx.get(f"{auth}/user", headers={**anon, "Authorization": f"Bearer {session['access_token'][:-4]}AAAA"},
                       timeout=10)  # fmt: skip
    assert (forged.status_code, forged.json()["error_code"]) == (403, "bad_jwt")
    assert httpx.post(f"{auth}/logout?scope=local", headers=bearer, timeout=10).status_code == 204
    after = httpx.get(f"{auth}/user", headers=bearer, timeout=10)
    assert (after.status_code, after.json()["error_code"]) == (403, "session_not_found")
    refresh = httpx.post(f"{auth}/token?grant_type=refresh_token", headers=anon,
                         json={"refresh_token": session["refresh_token"]}, timeout=10)  # fmt: skip
    assert (refresh.status_code, refresh.json()["error_code"]) == (400, "refresh_token_not_found")


def test_logout_ends_every_session_of_the_user_by_default_and_others_or_local_when_asked(auth, anon, stack_env) -> None:
    account, password = new_account(stack_env)
    other, other_password = new_account(stack_env)
    bystander = sign_in(stack_env, other["email"], other_password)

    def devices(count: int) -> list[dict[str, str]]:
        return [{**anon, "Authorization": f"Bearer {sign_in(stack_env, account['email'], password)['access_token']}"}
                for _ in range(count)]  # fmt: skip

    def alive(bearer: dict[str, str]) -> bool:
        return httpx.get(f"{auth}/user", headers=bearer, timeout=10).status_code == 200

    here, elsewhere, third = devices(3)
    unknown = httpx.post(f"{auth}/logout?scope=everywhere", headers=here, timeout=10)
    assert (unknown.status_code, unknown.json()["error_code"]) == (400, "validation_failed") and alive(here)
    assert httpx.post(f"{auth}/logout?scope=others", headers=here, timeout=10).status_code == 204
    assert [alive(here), alive(elsewhere), alive(third)] == [True, False, False]
    [elsewhere] = devices(1)
    assert httpx.post(f"{auth}/logout", headers=here, timeout=10).status_code == 204  # no scope: global
    assert [alive(here), alive(elsewhere)] == [False, False]
    here, elsewhere = devices(2)
    assert httpx.post(f"{auth}/logout?scope=global", headers=elsewhere, timeout=10).status_code == 204
    assert [alive(here), alive(elsewhere)] == [False, False]
    assert alive({**anon, "Authorization": f"Bearer {bystander['access_token']}"}), "another user's session stays"


def test_the_admin_api_needs_the_service_role(auth, anon, stack_env) -> None:
    listed = httpx.get(f"{auth}/admin/users", headers=admin_api(stack_env), params={"per_page": 1}, timeout=10)
    assert listed.status_code == 200 and len(listed.json()["users"]) == 1
    assert int(listed.headers["X-Total-Count"]) >= 2
    anon_bearer = {**anon, "Authorization": f"Bearer {stack_env['DEVSTACK_LEGACY_ANON_KEY']}"}
    refused = httpx.get(f"{auth}/admin/users", headers=anon_bearer, timeout=10)
    assert (refused.status_code, refused.json()["error_code"]) == (403, "not_admin")


def test_admin_updates_merge_app_metadata_and_null_removes_a_key(stack_env, auth) -> None:
    account, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin", "team": "fax"})
    set_app_metadata(stack_env, account["id"], {"document_jobs_role": None})
    listed = httpx.get(f"{auth}/admin/users", headers=admin_api(stack_env), params={"per_page": 1000}, timeout=10)
    [user] = [user for user in listed.json()["users"] if user["id"] == account["id"]]
    assert user["app_metadata"] == {"provider": "email", "providers": ["email"], "team": "fax"}
    duplicate = httpx.post(f"{auth}/admin/users", headers=admin_api(stack_env),
                           json={"email": account["email"], "password": "long enough"}, timeout=10)  # fmt: skip
    assert (duplicate.status_code, duplicate.json()["error_code"]) == (422, "email_exists")
    missing = httpx.put(f"{auth}/admin/users/{uuid.uuid4()}", headers=admin_api(stack_env), json={}, timeout=10)
    assert (missing.status_code, missing.json()["error_code"]) == (404, "user_not_found")


def test_a_preflight_is_answered_as_gotrue_answers_it(auth) -> None:
    origin = "https://admin.example.com"
    allowed = httpx.options(f"{auth}/token?grant_type=password", timeout=10, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "apikey, content-type, x-supabase-api-version, authorization"})  # fmt: skip
    assert allowed.status_code == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == origin
    assert allowed.headers["Access-Control-Allow-Methods"] == "POST"
    assert (
        allowed.headers["Access-Control-Allow-Headers"] == "apikey, content-type, x-supabase-api-version, authorization"
    )
    assert allowed.headers["Access-Control-Allow-Credentials"] == "true"
    asking = {"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-made-up"}
    refused = httpx.options(f"{auth}/token", timeout=10, headers=asking)
    assert refused.status_code == 200 and "Access-Control-Allow-Origin" not in refused.headers
    patch = httpx.options(
        f"{auth}/user", timeout=10, headers={"Origin": origin, "Access-Control-Request-Method": "PATCH"}
    )
    assert "Access-Control-Allow-Origin" not in patch.headers
    actual = httpx.get(f"{auth}/.well-known/jwks.json", headers={"Origin": origin}, timeout=10)
    assert actual.headers["Access-Control-Allow-Origin"] == origin
    assert actual.headers["Access-Control-Expose-Headers"] == "X-Total-Count, Link, X-Supabase-Api-Version"
