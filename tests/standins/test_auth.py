"""The Auth stand-in (devstack/standins/auth/) answers as Supabase Auth does: the password and refresh-token
grants, /user, /logout, the JWKS, the admin users API, API keys, errors and CORS preflights; and
supabase-py's own Auth client (supabase_auth) signs in, reads, verifies, refreshes and signs out
against it, with its rows in Auth's tables as GoTrue would leave them."""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from supabase_auth import Session, SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthInvalidJwtError

from tests.support.operators import admin_api, ban, delete_user, mails, new_account, set_app_metadata, sign_in


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


def configure_auth(env: dict[str, str], **settings: Any) -> None:
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


def test_the_admin_api_answers_a_ban_and_a_soft_delete_as_gotrue_does(stack_env, auth) -> None:
    """GoTrue's User answers banned_until and deleted_at when set (json ",omitempty",
    github.com/supabase/auth internal/models/user.go); ban_duration "none" lifts a ban (User.Ban);
    SoftDeleteUser obfuscates the e-mail and clears app_metadata, and the admin list still has the user."""
    account, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})

    def listed() -> dict[str, Any]:
        users = httpx.get(f"{auth}/admin/users", headers=admin_api(stack_env), params={"per_page": 1000}, timeout=10)
        [user] = [user for user in users.json()["users"] if user["id"] == account["id"]]
        return user

    assert "banned_until" not in listed() and "deleted_at" not in listed()
    banned = ban(stack_env, account["id"], "24h")
    assert banned["banned_until"] == listed()["banned_until"]
    ban(stack_env, account["id"], "none")
    assert "banned_until" not in listed()
    delete_user(stack_env, account["id"], soft=True)
    user = listed()
    assert user["deleted_at"] and user["email"] != account["email"]
    assert "document_jobs_role" not in user["app_metadata"]


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


# -- supabase-py's own Auth client ---------------------------------------------------------------


@pytest.fixture
def gotrue(auth, anon) -> Callable[[], SyncGoTrueClient]:
    """A new client of supabase-py's Auth (supabase_auth), one device each, as supabase-py's
    create_client makes it (the API key on every request); no refresh timer."""

    def new() -> SyncGoTrueClient:
        return SyncGoTrueClient(url=auth, headers=dict(anon), auto_refresh_token=False)

    return new


def signed_in(client: SyncGoTrueClient, account: dict[str, Any], password: str) -> Session:
    answer = client.sign_in_with_password({"email": account["email"], "password": password})
    assert answer.session is not None
    return answer.session


def sessions_of(admin, user_id: str) -> dict[str, list[tuple[str, bool]]]:
    """The user's rows in Auth's tables: each session id and its refresh tokens (token, revoked)."""
    rows = admin.execute(
        """select s.id::text as session_id, t.token, t.revoked
             from auth.sessions s left join auth.refresh_tokens t on t.session_id = s.id
            where s.user_id = %s order by t.id""",
        (user_id,),
    ).fetchall()
    found: dict[str, list[tuple[str, bool]]] = {}
    for row in rows:
        found.setdefault(row["session_id"], []).extend([(row["token"], row["revoked"])] if row["token"] else [])
    return found


def refresh_tokens_of(admin, user_id: str) -> int:
    return admin.execute("select count(*) as n from auth.refresh_tokens where user_id = %s", (user_id,)).fetchone()["n"]


def test_supabase_py_signs_in_reads_the_user_and_its_verified_claims_and_refreshes(gotrue, admin, stack_env) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    client = gotrue()
    session = signed_in(client, account, password)
    session_id = jwt.decode(session.access_token, options={"verify_signature": False})["session_id"]
    assert sessions_of(admin, account["id"]) == {session_id: [(session.refresh_token, False)]}

    user = client.get_user()
    assert user is not None and user.user.id == account["id"] and user.user.email == account["email"]
    assert user.user.app_metadata["document_jobs_role"] == "viewer"
    claims = client.get_claims()  # verified with the JWKS's key, fetched through the gateway
    assert claims is not None
    assert (claims["claims"]["sub"], claims["claims"]["session_id"]) == (account["id"], session_id)
    assert claims["headers"]["alg"] == "ES256" and claims["claims"]["iss"] == client._url
    forged = jwt.encode({**claims["claims"]}, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                        headers={"kid": claims["headers"]["kid"]})  # fmt: skip
    with pytest.raises(AuthInvalidJwtError):
        client.get_claims(forged)

    renewed = client.refresh_session().session
    assert renewed is not None and renewed.refresh_token != session.refresh_token
    assert jwt.decode(renewed.access_token, options={"verify_signature": False})["session_id"] == session_id
    assert client.get_session() == renewed
    assert sessions_of(admin, account["id"]) == {session_id: [(session.refresh_token, True),
                                                              (renewed.refresh_token, False)]}  # fmt: skip
    parent = admin.execute("select parent from auth.refresh_tokens where token = %s", (renewed.refresh_token,))
    assert parent.fetchone()["parent"] == session.refresh_token
    assert admin.execute("select refreshed_at from auth.sessions where id = %s", (session_id,)).fetchone()[
        "refreshed_at"] is not None  # fmt: skip


@pytest.mark.parametrize("scope", [None, "global", "local", "others"])
def test_supabase_py_signs_out_with_each_scope(gotrue, admin, stack_env, scope) -> None:
    account, password = new_account(stack_env)
    here, elsewhere, third = gotrue(), gotrue(), gotrue()
    sessions = [signed_in(client, account, password) for client in (here, elsewhere, third)]
    ids = [jwt.decode(s.access_token, options={"verify_signature": False})["session_id"] for s in sessions]
    assert set(sessions_of(admin, account["id"])) == set(ids)

    here.sign_out() if scope is None else here.sign_out({"scope": scope})

    ended_here = scope != "others"
    ended_elsewhere = scope != "local"
    assert (here.get_session() is None) == ended_here, "the client forgets its session unless others were asked"
    remaining = sessions_of(admin, account["id"])
    expected = set(ids) - ({ids[0]} if ended_here else set()) - (set(ids[1:]) if ended_elsewhere else set())
    assert set(remaining) == expected
    assert refresh_tokens_of(admin, account["id"]) == len(expected), "the refresh tokens went with their sessions"
    for client, session, ended in ((here, sessions[0], ended_here), (elsewhere, sessions[1], ended_elsewhere),
                                   (third, sessions[2], ended_elsewhere)):  # fmt: skip
        if ended:
            with pytest.raises(AuthApiError) as refused:
                gotrue().refresh_session(session.refresh_token)
            assert refused.value.code == "refresh_token_not_found"
            with pytest.raises(AuthApiError) as gone:
                gotrue().get_user(session.access_token)
            assert (gone.value.status, gone.value.code) == (403, "session_not_found")
        else:
            renewed = client.refresh_session(session.refresh_token).session
            assert renewed is not None and renewed.refresh_token != session.refresh_token


# -- e-mailed links: a password recovery, an invitation, /verify, a new password (auth/mail.py) -----


def _fragment(location: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(location).fragment, keep_blank_values=True))


def test_recover_answers_the_same_for_anyone_and_mails_a_link_that_signs_in_once(auth, anon, stack_env) -> None:
    account, password = new_account(stack_env)
    screen = "http://127.0.0.1:9/admin"
    nobody = f"nobody-{uuid.uuid4().hex[:8]}@example.com"
    for email in (nobody, account["email"].upper()):
        answer = httpx.post(f"{auth}/recover", params={"redirect_to": screen}, headers=anon, json={"email": email},
                            timeout=10)  # fmt: skip
        assert (answer.status_code, answer.json()) == (200, {}), "no enumeration: the same answer"
    assert mails(stack_env, nobody) == []
    [mail] = mails(stack_env, account["email"])
    assert (mail["type"], mail["subject"]) == ("recovery", "Reset Your Password")
    link = urlsplit(mail["link"])
    query = dict(parse_qsl(link.query))
    assert f"{link.scheme}://{link.netloc}{link.path}" == f"{auth}/verify"
    assert query["type"] == "recovery" and query["redirect_to"] == screen
    assert query["token"] == hashlib.sha224((account["email"] + mail["code"]).encode()).hexdigest()
    # Within GoTrue's SMTP_MAX_FREQUENCY (a minute), no second e-mail.
    again = httpx.post(f"{auth}/recover", headers=anon, json={"email": account["email"]}, timeout=10)
    assert (again.status_code, again.json()["error_code"]) == (429, "over_email_send_rate_limit")
    assert re.fullmatch(r"For security purposes, you can only request this after \d+ seconds\.", again.json()["msg"])
    # The link needs no API key (a browser follows it from the e-mail), answers 303 to the screen
    # with the session in the fragment.
    landed = httpx.get(mail["link"], timeout=10)
    assert landed.status_code == 303 and landed.headers["Location"].startswith(screen + "#")
    session = _fragment(landed.headers["Location"])
    assert session["type"] == "recovery" and session["token_type"] == "bearer" and session["sb"] == ""
    assert list(session) == sorted(session), "url.Values.Encode's order"
    bearer = {**anon, "Authorization": f"Bearer {session['access_token']}"}
    user = httpx.get(f"{auth}/user", headers=bearer, timeout=10).json()
    assert user["id"] == account["id"]
    claims = jwt.decode(session["access_token"], options={"verify_signature": False})
    assert claims["amr"][0]["method"] == "otp"
    used = httpx.get(mail["link"], timeout=10)
    assert _fragment(used.headers["Location"]) == {"error": "access_denied", "error_code": "otp_expired",
                                                   "error_description": "Email link is invalid or has expired",
                                                   "sb": ""}  # fmt: skip
    # A new password (PUT /user, what updateUser sends): the old one no longer signs in, and the
    # user's other sessions end; this one stays.
    elsewhere = sign_in(stack_env, account["email"], password)
    weak = httpx.put(f"{auth}/user", headers=bearer, json={"password": "abc"}, timeout=10)
    assert (weak.status_code, weak.json()["error_code"]) == (422, "weak_password")
    same = httpx.put(f"{auth}/user", headers=bearer, json={"password": password}, timeout=10)
    assert (same.status_code, same.json()["error_code"]) == (422, "same_password")
    changed = httpx.put(f"{auth}/user", headers=bearer, json={"password": "a new long password"}, timeout=10)
    assert changed.status_code == 200 and changed.json()["id"] == account["id"]
    with pytest.raises(httpx.HTTPStatusError):
        sign_in(stack_env, account["email"], password)
    assert sign_in(stack_env, account["email"], "a new long password")["user"]["id"] == account["id"]
    other = httpx.get(f"{auth}/user", headers={**anon, "Authorization": f"Bearer {elsewhere['access_token']}"},
                      timeout=10)  # fmt: skip
    assert (other.status_code, other.json()["error_code"]) == (403, "session_not_found")
    assert httpx.get(f"{auth}/user", headers=bearer, timeout=10).status_code == 200


def test_a_redirect_url_not_allowed_falls_back_to_the_site_url(auth, anon, stack_env) -> None:
    account, _ = new_account(stack_env)
    configure_auth(stack_env, max_frequency_s=0, uri_allow_list=["https://office.example.jp/admin**"])
    try:
        for asked, expected in (("https://evil.example/steal", stack_env["ADMIN_URL"]),
                                ("https://office.example.jp/admin", "https://office.example.jp/admin"),
                                ("https://office.example.jp/other", stack_env["ADMIN_URL"])):  # fmt: skip
            answer = httpx.post(f"{auth}/recover", params={"redirect_to": asked}, headers=anon,
                                json={"email": account["email"]}, timeout=10)  # fmt: skip
            assert answer.status_code == 200
            link = mails(stack_env, account["email"])[-1]["link"]
            assert dict(parse_qsl(urlsplit(link).query))["redirect_to"] == expected, asked
        assert httpx.get(link, timeout=10).headers["Location"].startswith(stack_env["ADMIN_URL"] + "#access_token=")
    finally:
        configure_auth(stack_env, max_frequency_s=None, uri_allow_list=[])


def test_a_stale_or_made_up_link_and_a_banned_user_land_with_an_error(auth, anon, stack_env, admin) -> None:
    account, _ = new_account(stack_env)
    httpx.post(f"{auth}/recover", headers=anon, json={"email": account["email"]}, timeout=10).raise_for_status()
    link = mails(stack_env, account["email"])[-1]["link"]
    admin.execute("update auth.users set recovery_sent_at = now() - interval '25 hours' where id = %s",
                  (account["id"],))  # fmt: skip
    assert _fragment(httpx.get(link, timeout=10).headers["Location"])["error_code"] == "otp_expired"
    admin.execute("update auth.users set recovery_sent_at = now() where id = %s", (account["id"],))
    ban(stack_env, account["id"], "24h")
    assert _fragment(httpx.get(link, timeout=10).headers["Location"])["error_code"] == "user_banned"
    made_up = httpx.get(f"{auth}/verify", params={"token": "0" * 56, "type": "recovery"}, timeout=10)
    assert _fragment(made_up.headers["Location"])["error_code"] == "otp_expired"
    no_type = httpx.get(f"{auth}/verify", params={"token": "x"}, timeout=10)
    assert (no_type.status_code, no_type.json()["error_code"]) == (400, "validation_failed")
    bad = httpx.post(f"{auth}/recover", headers=anon, json={"email": "not an address"}, timeout=10)
    assert (bad.status_code, bad.json()["error_code"]) == (400, "validation_failed")


def test_invite_is_the_admin_apis_and_its_link_confirms_an_account_without_a_password(auth, anon, stack_env) -> None:
    email = f"invited-{uuid.uuid4().hex[:8]}@example.com"
    refused = httpx.post(f"{auth}/invite", headers=anon, json={"email": email}, timeout=10)
    assert refused.status_code in (401, 403) and mails(stack_env, email) == []
    invited = httpx.post(f"{auth}/invite", headers=admin_api(stack_env), json={"email": email, "data": {"n": 1}},
                         timeout=10)  # fmt: skip
    assert invited.status_code == 200
    user = invited.json()
    assert user["email"] == email and user["email_confirmed_at"] is None and user["user_metadata"] == {"n": 1}
    [mail] = mails(stack_env, email)
    assert mail["type"] == "invite" and "type=invite" in mail["link"]
    landed = _fragment(httpx.get(mail["link"], timeout=10).headers["Location"])
    assert landed["type"] == "invite"
    bearer = {**anon, "Authorization": f"Bearer {landed['access_token']}"}
    assert httpx.get(f"{auth}/user", headers=bearer, timeout=10).json()["email_confirmed_at"]
    assert httpx.put(f"{auth}/user", headers=bearer, json={"password": "first password"}, timeout=10).status_code == 200
    assert sign_in(stack_env, email, "first password")["user"]["id"] == user["id"]
    twice = httpx.post(f"{auth}/invite", headers=admin_api(stack_env), json={"email": email}, timeout=10)
    assert (twice.status_code, twice.json()["error_code"]) == (422, "email_exists")


def test_past_the_hourly_email_limit_auth_refuses_to_send(auth, anon, stack_env) -> None:
    account, _ = new_account(stack_env)
    sent = len(httpx.get(f"{stack_env['SUPABASE_URL']}/_control/auth/mail", timeout=10).json()["mails"])
    configure_auth(stack_env, emails_per_hour=sent)
    try:
        answer = httpx.post(f"{auth}/recover", headers=anon, json={"email": account["email"]}, timeout=10)
        assert answer.status_code == 429
        assert (answer.json()["error_code"], answer.json()["msg"]) == ("over_email_send_rate_limit",
                                                                        "email rate limit exceeded")  # fmt: skip
        assert mails(stack_env, account["email"]) == []
    finally:
        configure_auth(stack_env, emails_per_hour=None)
