"""Raw HTTP requests to the Supabase project (Auth, Storage): which key they carry, and how.

Every header of a request this code builds for Supabase, and every use of the server key outside
supabase-py, goes through this module, so that a change of Supabase's key rules changes one place.
"""

from __future__ import annotations

import functools
import ssl

import httpx

from lib.settings import SupabaseSettings


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's CA bundle), made once per process. Loading the bundle
    takes tens of milliseconds, which a client made per request would pay on every request; the
    threads of an instance share the context, which nothing changes once it is made."""
    return httpx.create_ssl_context()


def http_client() -> httpx.Client:
    """A client for one request's calls to Supabase (its connections close with it)."""
    return httpx.Client(verify=tls_context())


def server_key(settings: SupabaseSettings) -> str:
    """The key with the service_role's rights: for the database, Storage and Auth's admin API only."""
    return settings.supabase_service_role_key.get_secret_value()


def request_headers(key: str, access_token: str | None = None) -> dict[str, str]:
    """`apikey` always; `Authorization: Bearer` with the user's access token when acting as the
    user, else with the key itself when it is a JWT (a legacy anon or service_role key). Supabase
    refuses a new-style key (sb_publishable_..., sb_secret_...) as a Bearer token."""
    headers = {"apikey": key}
    bearer = access_token or (key if key.count(".") == 2 else None)
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    return headers
