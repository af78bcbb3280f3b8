"""lib/supabase_http.py: which key a raw request to Supabase carries, and how; one TLS context per process."""

from __future__ import annotations

import jwt

from lib.supabase_http import http_client, request_headers, tls_context

LEGACY_KEY = jwt.encode({"role": "service_role"}, "a legacy jwt secret of enough length", "HS256")


def test_a_new_style_key_goes_in_apikey_alone() -> None:
    # Supabase refuses sb_publishable_/sb_secret_ keys as a Bearer token (they are not JWTs).
    assert request_headers("sb_secret_abc") == {"apikey": "sb_secret_abc"}
    assert request_headers("sb_publishable_abc") == {"apikey": "sb_publishable_abc"}


def test_a_legacy_jwt_key_is_also_the_bearer() -> None:
    assert request_headers(LEGACY_KEY) == {"apikey": LEGACY_KEY, "Authorization": f"Bearer {LEGACY_KEY}"}


def test_acting_as_the_user_sends_their_access_token_as_the_bearer() -> None:
    assert request_headers("sb_publishable_abc", access_token="user.access.token") == {
        "apikey": "sb_publishable_abc",
        "Authorization": "Bearer user.access.token",
    }


def test_every_client_of_the_process_shares_one_tls_context() -> None:
    # Loading the CA bundle per request costs tens of milliseconds: it happens once.
    with http_client() as first, http_client() as second:
        contexts = {id(client._transport._pool._ssl_context) for client in (first, second)}  # type: ignore[attr-defined]
    assert contexts == {id(tls_context())}
