"""Calls to SUPABASE_URL: the headers every one carries, and the supabase-py client of the server
key, created per invocation (no module-level state).

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
from typing import TYPE_CHECKING

import httpx

from lib.settings import SupabaseSettings

if TYPE_CHECKING:
    from supabase import Client

# PostgREST and Storage calls: a slow database must not eat the whole invocation.
TIMEOUT = httpx.Timeout(20.0, connect=5.0)

# The header the worker names its invocation in, on every call to the database (the database's name:
# document_jobs_internal.limits(), tests/test_constants.py): claim_document_jobs
# records it in the attempt history (PostgREST hands request headers to SQL as request.headers).
INVOCATION_HEADER = "x-document-jobs-invocation"

# A compact JWS: three base64url parts (the legacy anon and service_role keys are HS256 JWTs).
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_KEY_HEADERS = frozenset({"apikey", "authorization"})


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


def service_client(settings: SupabaseSettings, http: httpx.Client, invocation_id: str | None = None) -> Client:
    """supabase-py over `http`, as the server key (the secret key, or the legacy service_role JWT)."""
    # supabase is the heaviest import of the function (~0.3 s): only requests that get this far pay it.
    from supabase import ClientOptions, create_client

    key = settings.server_key
    options = ClientOptions(httpx_client=http, postgrest_client_retry=False)
    if invocation_id:
        options.headers = {**options.headers, INVOCATION_HEADER: invocation_id}
    client = create_client(settings.supabase_url, key, options=options)
    # supabase-py 2.34 adds `apiKey: <key>` and `Authorization: Bearer <key>` to every request, and
    # offers no option to leave Authorization out. Its sub-clients (PostgREST, Storage) are created
    # on first use from these headers, so replacing the key's headers here reaches all of them.
    kept = {name: value for name, value in client.options.headers.items() if name.lower() not in _KEY_HEADERS}
    client.options.headers = {**kept, **api_headers(key)}
    return client
