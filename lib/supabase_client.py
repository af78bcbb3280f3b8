"""The service-role supabase-py client, created per invocation (no module-level state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from lib.settings import SupabaseSettings

if TYPE_CHECKING:
    from supabase import Client

# PostgREST and Storage calls: a slow database must not eat the whole invocation.
TIMEOUT = httpx.Timeout(20.0, connect=5.0)


# The header the worker names its invocation in, on every call to the database: claim_document_jobs
# records it in the attempt history (PostgREST hands request headers to SQL as request.headers).
INVOCATION_HEADER = "x-document-jobs-invocation"


def service_client(settings: SupabaseSettings, http: httpx.Client, invocation_id: str | None = None) -> Client:
    # supabase is the heaviest import of the function (~0.3 s): only requests that get this far pay it.
    from supabase import ClientOptions, create_client

    options = ClientOptions(httpx_client=http, postgrest_client_retry=False)
    if invocation_id:
        options.headers = {**options.headers, INVOCATION_HEADER: invocation_id}
    return create_client(settings.supabase_url, settings.supabase_service_role_key.get_secret_value(), options=options)
