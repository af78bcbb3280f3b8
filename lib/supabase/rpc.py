"""Every call to the database through supabase-py (RPC and table reads) goes through `execute`,
so that every failure reaches the caller as one type, DatabaseError (lib/errors.py), whatever the cause.

supabase-py raises postgrest's APIError when PostgREST answers an error, and lets httpx's own
exceptions through when it cannot be reached. Callers decide what a failure means (the worker
retries the job, the webhook answers 500, the admin CLI prints one line); none of them needs to
know which library raised what.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

import httpx

from lib.errors import DatabaseError


class Executable(Protocol):
    """A supabase-py request builder: `client.rpc(...)` or `client.table(...).select(...)...`."""

    def execute(self) -> Any: ...


def execute(what: str, request: Executable) -> Any:
    """The answer's data (`.data`: rows, or an RPC's value); DatabaseError for any failure.
    `what` names the call in the error, e.g. the RPC's name."""
    # Imported here: postgrest comes with supabase, which the functions import only when a
    # request gets as far as the database (about 0.3 s).
    from postgrest.exceptions import APIError

    try:
        return request.execute().data
    except APIError as error:
        raise DatabaseError(
            what, error.message or "the database refused the call", code=error.code, hint=error.hint,
            details=error.details,
        ) from error  # fmt: skip
    except httpx.HTTPError as error:
        raise DatabaseError(what, f"unreachable ({type(error).__name__})", unreachable=True) from error


def interval(value: timedelta) -> str:
    """A Postgres interval literal PostgREST can cast."""
    return f"{value.total_seconds():.3f} seconds"
