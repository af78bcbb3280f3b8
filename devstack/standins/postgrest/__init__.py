"""Stand-in for PostgREST, the REST API Supabase puts in front of the database. Local stack only:
it is never deployed, and nothing in lib/ or api/ imports it. The deployed code talks to the real
PostgREST through supabase-py; this package answers the requests the product makes the same way
(docs.postgrest.org, the v12 references), so that the code under test cannot tell the difference:

- the database role comes from the JWT's "role" claim (no Authorization header: anon), set with
  "set local role" in the request's own transaction, so grants and RLS are enforced by Postgres
  (jwt_auth.py, database.py);
- RPC: POST /rest/v1/rpc/<fn> (rpc.py);
- table reads: GET /rest/v1/<table> with select, the filters, order and limit the product uses
  (tables.py);
- errors in PostgREST's shape {"code", "message", "details", "hint"} with its HTTP statuses
  (errors.py, database.py).

Only schema "public" is exposed, and only what is listed above: the rest of PostgREST (table
writes, single-object answers, HEAD, RPC over GET, embedding, logical filters), which nothing in
the product asks for, is refused with 400 PGRST100 rather than imitated or silently misread.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from devstack.standins.messages import Backend, Request, Response
from devstack.standins.postgrest.database import SCHEMA
from devstack.standins.postgrest.errors import ApiError, bad_request
from devstack.standins.postgrest.jwt_auth import AuthError, authenticate, jwt_error
from devstack.standins.postgrest.rpc import call_function
from devstack.standins.postgrest.tables import read_rows

SINGLE_OBJECT = "application/vnd.pgrst.object+json"


def handle(backend: Backend, request: Request) -> Response:
    try:
        check_profile(request)
        claims = authenticate(request.headers, backend.jwt_secret)
        return route(backend, claims, request)
    except AuthError as error:
        return jwt_error(error).response()
    except ApiError as error:
        return error.response()


def check_profile(request: Request) -> None:
    """supabase-py names the schema in Accept-Profile / Content-Profile; only public is exposed."""
    header = "Accept-Profile" if request.method == "GET" else "Content-Profile"
    profile = request.headers.get(header)
    if profile is not None and profile != SCHEMA:
        raise ApiError(406, "PGRST106", f"The schema must be one of the following: {SCHEMA}")


def route(backend: Backend, claims: dict[str, Any], request: Request) -> Response:
    if SINGLE_OBJECT in (request.headers.get("Accept") or ""):
        raise bad_request("A single-object answer (.single()) is not supported by this stand-in")
    segments = [unquote(segment) for segment in request.path.split("/")]
    if len(segments) == 2 and segments[0] == "rpc" and segments[1]:
        if request.method not in ("GET", "POST"):
            raise ApiError(405, "PGRST117", f"Unsupported HTTP method: {request.method}")
        if request.method == "GET":
            raise bad_request("RPC over GET is not supported by this stand-in: the product calls functions with POST")
        return call_function(backend, claims, request, segments[1])
    if len(segments) == 1 and segments[0]:
        if request.method not in ("GET", "HEAD", "POST", "PATCH", "DELETE"):
            raise ApiError(405, "PGRST117", f"Unsupported HTTP method: {request.method}")
        if request.method != "GET":
            raise bad_request(f"{request.method} on a table is not supported by this stand-in: the product only reads")
        return read_rows(backend, claims, request, segments[0])
    raise ApiError(404, "PGRST125", f"Invalid path specified in request URL: /{request.path}")
