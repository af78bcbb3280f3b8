"""lib/supabase: a request made for a signed-in user carries their token; one TLS context per process."""

from __future__ import annotations

import jwt

from lib.supabase.client import http_client, tls_context
from lib.supabase.keys import request_headers

LEGACY_KEY = jwt.encode({"role": "anon"}, "a legacy jwt secret of enough length", "HS256")


def test_acting_as_the_user_sends_their_access_token_as_the_bearer() -> None:
    assert request_headers("sb_publishable_abc", access_token="user.access.token") == {
        "apikey": "sb_publishable_abc",
        "Authorization": "Bearer user.access.token",
    }
    # A legacy anon key (a JWT) gives way to the user's token: Auth reads the user from the Bearer.
    assert request_headers(LEGACY_KEY, access_token="user.access.token")["Authorization"] == "Bearer user.access.token"


def test_every_client_of_the_process_shares_one_tls_context() -> None:
    # Loading the CA bundle per request costs tens of milliseconds: it happens once.
    with http_client() as first, http_client() as second:
        contexts = {id(client._transport._pool._ssl_context) for client in (first, second)}  # type: ignore[attr-defined]
    assert contexts == {id(tls_context())}
