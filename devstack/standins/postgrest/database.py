"""A request's work in the database, as PostgREST runs it: as the JWT's role, in one transaction,
with the request's claims, method, path and headers in settings; a database error answered with
PostgREST's status for its SQLSTATE."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import PoolTimeout

from devstack.standins.messages import Backend, Request
from devstack.standins.postgrest.connections import DatabaseUnavailable
from devstack.standins.postgrest.errors import ApiError
from devstack.standins.postgrest.jwt_auth import ANON_ROLE

SCHEMA = "public"  # the only schema exposed (PostgREST's db-schemas)

# PostgREST's table (src/PostgREST/Error.hs): SQLSTATE class or code -> HTTP status.
_SERVER_ERROR_CLASSES = ("09", "25", "2D", "38", "39", "3B", "40", "54", "55", "57", "58", "F0", "HV", "P0", "XX")


_EXACT_STATUS = {
    "23503": 409,
    "23505": 409,
    "25006": 405,
    "53400": 500,
    "P0001": 400,
    "42883": 404,
    "42P01": 404,
    "42P17": 500,
}


def http_status(sqlstate: str, message: str, authenticated: bool) -> int:
    if sqlstate in _EXACT_STATUS:
        return _EXACT_STATUS[sqlstate]
    if sqlstate == "42501":
        return 403 if authenticated else 401
    if sqlstate == "21000":
        return 400 if message.endswith("requires a WHERE clause") else 500
    if sqlstate == "22023" and message.startswith("role") and message.endswith("does not exist"):
        return 401  # the JWT names a role the database does not have
    prefix = sqlstate[:2]
    if prefix == "08" or prefix == "53":
        return 503
    if prefix in ("0L", "0P", "28"):
        return 403
    if prefix in _SERVER_ERROR_CLASSES:
        return 500
    return 400


def database_error(error: psycopg.Error, role: str) -> ApiError:
    if isinstance(error, DatabaseUnavailable):  # the database is away (connections.py)
        return ApiError(503, error.code, error.message, error.details,
                        headers={"Retry-After": str(error.retry_after_s)})  # fmt: skip
    if isinstance(error, PoolTimeout):
        return ApiError(504, "PGRST003", "Timed out acquiring connection from connection pool.")
    if error.sqlstate is None:  # no answer from the server: the connection itself failed
        return ApiError(503, "PGRST001", "Database client error. Retrying the connection.", str(error).strip())
    message = error.diag.message_primary or str(error)
    status = http_status(error.sqlstate, message, authenticated=role != ANON_ROLE)
    return ApiError(status, error.sqlstate, message, error.diag.message_detail, error.diag.message_hint)


def in_transaction[T](
    backend: Backend, claims: dict[str, Any], request: Request, work: Callable[[psycopg.Cursor[Any]], T]
) -> T:
    """Runs work as the JWT's role in one transaction, as PostgREST does; any exception rolls back."""
    role = claims["role"]
    try:
        with backend.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(sql.SQL("set local role {}").format(sql.Identifier(role)))
            # As PostgREST (v10 and later): the request's headers as one JSON object, names lowercased.
            cur.execute(
                "select set_config('request.jwt.claims', %s, true), set_config('request.method', %s, true),"
                " set_config('request.path', %s, true), set_config('request.headers', %s, true)",
                (json.dumps(claims), request.method, "/" + request.path, json.dumps(request_headers(request))),
            )
            return work(cur)
    except psycopg.Error as error:
        raise database_error(error, role) from error


def request_headers(request: Request) -> dict[str, str]:
    """What PostgREST puts in the setting request.headers: every header, its name lowercased."""
    return {name.lower(): value for name, value in request.headers.items()}
