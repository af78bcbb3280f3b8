"""The headers that carry a key on every request to SUPABASE_URL.

Supabase's API-key rules (docs: guides/api/api-keys, "Known limitations"): the key goes in the
`apikey` header. A legacy key is a JWT and goes in `Authorization: Bearer` too, as always. A
publishable or secret key (`sb_publishable_...`, `sb_secret_...`) is not a JWT: it "cannot be
sent in the Authorization header, except if the value exactly equals the apikey header", and
even then the services behind the gateway reject it "as the value is not a JWT". So it is never
sent there: the strictest reading, and the only one under which raw Storage calls work (with a
secret key as Bearer they fail with "Invalid Compact JWS").
"""

from __future__ import annotations

import re

# A compact JWS: three base64url parts (the legacy anon and service_role keys are HS256 JWTs).
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


def is_jwt(key: str) -> bool:
    return _JWT.fullmatch(key) is not None


def api_headers(key: str) -> dict[str, str]:
    """The headers that carry `key` on any request to SUPABASE_URL: `apikey` always, and
    `Authorization: Bearer` only when the key is a JWT (a legacy key). Decided by the key's form,
    not by the variable it came from."""
    headers = {"apikey": key}
    if is_jwt(key):
        headers["Authorization"] = f"Bearer {key}"
    return headers


def request_headers(key: str, access_token: str | None = None) -> dict[str, str]:
    """The key's headers (api_headers: `apikey`, and `Authorization` only for a legacy JWT key);
    acting as a user, `Authorization: Bearer` carries the user's access token."""
    headers = api_headers(key)
    if access_token:
        headers["Authorization"] = f"Bearer {access_token}"
    return headers
