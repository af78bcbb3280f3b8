"""lib/screen/auth.py without a stack: the JWKS cache shared by threads and its refetch on a key id
it does not know (at most once per cooldown), the legacy HS256 path that asks Auth, roles."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import httpx
import jwt
import pytest
import respx
from cryptography.hazmat.primitives.asymmetric import ec

from lib.errors import Refusal
from lib.screen import auth as operator_auth
from lib.screen.auth import ADMIN_ONLY, MARKERS, Operator, confirm_role, operator, verify
from lib.settings import AdminSettings


class Keys:
    """A project's signing keys, and a count of how often its JWKS was fetched."""

    def __init__(self) -> None:
        self.keys: dict[str, ec.EllipticCurvePrivateKey] = {}
        self.fetches = 0
        self.rotate()

    def rotate(self) -> str:
        kid = uuid.uuid4().hex
        self.keys[kid] = ec.generate_private_key(ec.SECP256R1())
        return kid

    def jwks(self) -> dict[str, Any]:
        self.fetches += 1
        time.sleep(0.02)  # a fetch takes a while: threads arriving meanwhile must wait for it, not fetch too
        return {"keys": [{**jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid,
                          "alg": "ES256", "use": "sig"} for kid, key in self.keys.items()]}  # fmt: skip


@pytest.fixture
def settings() -> AdminSettings:
    # A URL of its own per test: the JWKS clients live for the process, one per URL. Every field is
    # named, so that a stack's environment (its SUPABASE_JWT_SECRET) does not reach these settings.
    return AdminSettings(supabase_url=f"https://{uuid.uuid4().hex[:12]}.supabase.co",
                         supabase_service_role_key="service", supabase_publishable_key="sb_publishable_x",
                         supabase_anon_key=None, supabase_jwt_secret=None)  # fmt: skip


@pytest.fixture
def keys(settings, monkeypatch) -> Keys:
    project = Keys()
    client = operator_auth.jwks_client(settings)
    monkeypatch.setattr(client, "fetch_data", project.jwks)
    return project


def token(settings: AdminSettings, keys: Keys, kid: str | None = None, **claims: Any) -> str:
    kid = kid or next(iter(keys.keys))
    now = int(time.time())
    body = {"iss": settings.auth_url, "aud": "authenticated", "sub": str(uuid.uuid4()), "iat": now, "exp": now + 3600,
            "role": "authenticated", "email": "op@example.com", "app_metadata": {"document_jobs_role": "admin"},
            "is_anonymous": False, **claims}  # fmt: skip
    return jwt.encode(body, keys.keys[kid], algorithm="ES256", headers={"kid": kid})


def test_threads_share_one_fetch_of_the_key_set(settings, keys, http) -> None:
    tokens = [token(settings, keys) for _ in range(16)]
    results: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda t=t: results.append(verify(t, settings, http))) for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 16 and keys.fetches == 1


def test_a_new_key_is_fetched_at_once_but_made_up_key_ids_do_not_fetch_again(settings, keys, http, monkeypatch) -> None:
    client = operator_auth.jwks_client(settings)
    verify(token(settings, keys), settings, http)
    monkeypatch.setattr(client, "_last_successful_fetch", time.monotonic() - 60)  # past the cooldown
    rotated = keys.rotate()
    assert verify(token(settings, keys, rotated), settings, http)["iss"] == settings.auth_url
    assert keys.fetches == 2, "a rotation: the unknown key id made one fetch"
    for _ in range(5):
        forged = jwt.encode({"sub": "x"}, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                            headers={"kid": uuid.uuid4().hex})  # fmt: skip
        with pytest.raises(Refusal) as refused:
            verify(forged, settings, http)
        assert refused.value.status == 401
    assert keys.fetches == 2, "within the cooldown, made-up key ids fetch nothing"


def test_a_token_of_another_key_with_a_known_key_id_is_refused(settings, keys, http) -> None:
    kid = next(iter(keys.keys))
    forged = jwt.encode({"sub": "x", "aud": "authenticated", "iss": settings.auth_url, "exp": time.time() + 60,
                         "iat": time.time()}, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                        headers={"kid": kid})  # fmt: skip
    with pytest.raises(Refusal) as refused:
        verify(forged, settings, http)
    assert (refused.value.status, refused.value.code) == (401, "invalid_token")


def test_an_hs256_token_without_the_secret_here_is_verified_by_asking_auth(settings, http) -> None:
    legacy = jwt.encode({"sub": "u1", "exp": time.time() + 60}, "a legacy secret long enough for hs256", "HS256")
    with respx.mock(assert_all_called=True) as router:
        user = {
            "id": "u1",
            "email": "op@example.com",
            "role": "authenticated",
            "app_metadata": {"document_jobs_role": "viewer"},
            "user_metadata": {"document_jobs_role": "admin"},
        }
        route = router.get(f"{settings.auth_url}/user").mock(return_value=httpx.Response(200, json=user))
        who = operator(verify(legacy, settings, http))
    assert who == Operator(user_id="u1", email="op@example.com", role="viewer"), "app_metadata, never user_metadata"
    sent = route.calls.last.request.headers
    assert sent["apikey"] == "sb_publishable_x" and sent["authorization"] == f"Bearer {legacy}"
    with respx.mock() as router:
        router.get(f"{settings.auth_url}/user").mock(return_value=httpx.Response(403, json={"code": "bad_jwt"}))
        with pytest.raises(Refusal) as refused:
            verify(legacy, settings, http)
    assert (refused.value.status, refused.value.code) == (401, "session_ended")


@pytest.mark.parametrize(
    ("claims", "code"),
    [
        ({"app_metadata": {}}, "no_role"),
        ({"app_metadata": {"document_jobs_role": "owner"}}, "no_role"),
        ({"app_metadata": {}, "user_metadata": {"document_jobs_role": "admin"}}, "no_role"),
        ({"app_metadata": {"document_jobs_role": "admin"}, "is_anonymous": True}, "no_role"),
        ({"app_metadata": {"document_jobs_role": "admin"}, "role": "service_role"}, "no_role"),
    ],
)
def test_a_role_comes_from_app_metadata_only(claims, code) -> None:
    with pytest.raises(Refusal) as refused:
        operator({"sub": "u1", "role": "authenticated", **claims})
    assert (refused.value.status, refused.value.code) == (403, code)


def test_before_acting_the_role_is_the_one_auth_has_now(settings, http) -> None:
    who = Operator(user_id="u1", email="op@example.com", role="admin")
    answers = {
        "viewer now": (httpx.Response(200, json={"id": "u1", "app_metadata": {"document_jobs_role": "viewer"}}),
                       403, "not_admin"),
        "removed": (httpx.Response(200, json={"id": "u1", "app_metadata": {}}), 403, "no_role"),
        "banned": (httpx.Response(200, json={"id": "u1", "banned_until": "2999-01-01T00:00:00Z",
                                             "app_metadata": {"document_jobs_role": "admin"}}), 401, "session_ended"),
        "signed out": (httpx.Response(403, json={"code": "session_not_found"}), 401, "session_ended"),
        "auth down": (httpx.Response(502), 503, "auth_unavailable"),
    }  # fmt: skip
    for what, (answer, status, code) in answers.items():
        with respx.mock() as router:
            router.get(f"{settings.auth_url}/user").mock(return_value=answer)
            with pytest.raises(Refusal) as refused:
                confirm_role(who, "token", settings, http, ADMIN_ONLY)
        assert (refused.value.status, refused.value.code) == (status, code), what
    with respx.mock() as router:
        user = {"id": "u1", "email": "op@example.com", "app_metadata": {"document_jobs_role": "admin"}}
        router.get(f"{settings.auth_url}/user").mock(return_value=httpx.Response(200, json=user))
        assert confirm_role(who, "token", settings, http, ADMIN_ONLY) == who


def test_before_marking_a_fax_the_role_is_a_clerk_or_an_admin_as_auth_has_it_now(settings, http) -> None:
    who = Operator(user_id="u1", email="op@example.com", role="clerk")
    for role, refused_with in (("admin", None), ("clerk", None), ("viewer", "read_only")):
        user = {"id": "u1", "email": "op@example.com", "app_metadata": {"document_jobs_role": role}}
        with respx.mock() as router:
            router.get(f"{settings.auth_url}/user").mock(return_value=httpx.Response(200, json=user))
            if refused_with is None:
                assert confirm_role(who, "token", settings, http, MARKERS).role == role
                continue
            with pytest.raises(Refusal) as refused:
                confirm_role(who, "token", settings, http, MARKERS)
        assert (refused.value.status, refused.value.code) == (403, refused_with)
    # A clerk is no admin: the jobs' actions stay an admin's.
    user = {"id": "u1", "email": "op@example.com", "app_metadata": {"document_jobs_role": "clerk"}}
    with respx.mock() as router:
        router.get(f"{settings.auth_url}/user").mock(return_value=httpx.Response(200, json=user))
        with pytest.raises(Refusal) as refused:
            confirm_role(who, "token", settings, http, ADMIN_ONLY)
    assert (refused.value.status, refused.value.code) == (403, "not_admin")
