"""The clients of SUPABASE_URL: supabase-py as the server key, created per invocation, and plain
httpx clients for raw calls (Auth, Storage) over one TLS context per process; a client with a
deadline for a call that must end by a given time whatever the network does (the webhook's)."""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING

import httpx

from lib.budget import Deadline, deadline_transport
from lib.limits import INVOCATION_HEADER
from lib.settings import SupabaseSettings
from lib.supabase.keys import api_headers

if TYPE_CHECKING:
    from supabase import Client

# PostgREST and Storage calls: a slow database must not eat the whole invocation. Per network wait:
# a call with a deadline of its own uses deadline_client.
TIMEOUT = httpx.Timeout(20.0, connect=5.0)

_KEY_HEADERS = frozenset({"apikey", "authorization"})


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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's CA bundle), made once per process. Loading the bundle
    takes tens of milliseconds, which a client made per request would pay on every request; the
    threads of an instance share the context, which nothing changes once it is made."""
    return httpx.create_ssl_context()


def http_client() -> httpx.Client:
    """A client for one request's calls to Supabase (its connections close with it)."""
    return httpx.Client(verify=tls_context())


def deadline_client(deadline: Deadline) -> httpx.Client:
    """A client whose requests end by `deadline`: every network wait (connecting, TLS, each write
    and read) is capped by the time left, and a request still going when it passes fails with
    httpx's timeout (which lib/supabase/rpc.py reports as an unreachable database). httpx's own
    timeouts are per wait, and an answer trickling in a byte at a time never trips them."""
    return httpx.Client(transport=deadline_transport(deadline, tls_context()), timeout=None)
