"""Raw HTTP requests of the admin function to the Supabase project (Auth, Storage): one TLS
context per process, and the headers of a request made for a signed-in user."""

from __future__ import annotations

import functools
import ssl

import httpx

from lib.supabase.client import api_headers


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's CA bundle), made once per process. Loading the bundle
    takes tens of milliseconds, which a client made per request would pay on every request; the
    threads of an instance share the context, which nothing changes once it is made."""
    return httpx.create_ssl_context()


def http_client() -> httpx.Client:
    """A client for one request's calls to Supabase (its connections close with it)."""
    return httpx.Client(verify=tls_context())


def request_headers(key: str, access_token: str | None = None) -> dict[str, str]:
    """The key's headers (lib/supabase/client.py api_headers: `apikey`, and `Authorization` only for
    a legacy JWT key); acting as a user, `Authorization: Bearer` carries the user's access token."""
    headers = api_headers(key)
    if access_token:
        headers["Authorization"] = f"Bearer {access_token}"
    return headers
