"""Stand-in for PostgREST, the REST API Supabase puts in front of the database. Local stack only:
it is never deployed, and nothing in lib/ or api/ imports it. The deployed code talks to the real
PostgREST through supabase-py; this module answers the same requests the same way, so that the
code under test cannot tell the difference where it matters:

- the database role comes from the JWT's "role" claim (no Authorization header: anon), set with
  "set local role" in the request's own transaction, so grants and RLS are enforced by Postgres;
- RPC: POST /rest/v1/rpc/<fn> with a JSON object of named arguments, overloads resolved by
  argument names, set-returning functions answer arrays, others a scalar or an object, void 204;
- tables: GET with select/filters/order/limit (and Prefer: count=exact), POST (insert, upsert with on_conflict and
  Prefer: resolution=...), PATCH and DELETE with filters, Prefer: return=..., and
  Accept: application/vnd.pgrst.object+json for exactly one row;
- errors in PostgREST's shape {"code", "message", "details", "hint"} with its HTTP statuses.

Only schema "public" is exposed, and only the query syntax listed above: anything else is
refused with 400 PGRST100 rather than silently misread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.message import Message
from itertools import count
from typing import Any, TypeVar
from urllib.parse import unquote

import jwt
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

SCHEMA = "public"
ANON_ROLE = "anon"
JSON_CONTENT_TYPE = "application/json; charset=utf-8"
SINGLE_OBJECT = "application/vnd.pgrst.object+json"
JWT_LEEWAY_S = 30  # PostgREST tolerates this much clock skew on exp/nbf/iat.
RESERVED_PARAMS = frozenset({"select", "order", "limit", "offset", "on_conflict", "columns"})
T = TypeVar("T")


# --- requests, responses, errors (shared with the Storage stand-in) ---------------------------


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # below the service's prefix, still percent-encoded, e.g. "rpc/claim_document_jobs"
    query: list[tuple[str, str]]
    headers: Message
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, value: Any, headers: Mapping[str, str] | None = None) -> Response:
        return cls.json_text(status, json.dumps(value, ensure_ascii=False), headers)

    @classmethod
    def json_text(cls, status: int, text: str, headers: Mapping[str, str] | None = None) -> Response:
        return cls(status, text.encode(), {"Content-Type": JSON_CONTENT_TYPE, **(headers or {})})


@dataclass(frozen=True)
class Backend:
    """What every request handler needs: the pool (connected as "authenticator") and the JWT secret."""

    pool: ConnectionPool
    jwt_secret: str


class ApiError(Exception):
    """An answer in PostgREST's error shape."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: str | None = None,
        hint: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details, self.hint = status, code, message, details, hint
        self.headers = dict(headers or {})

    def response(self) -> Response:
        body = {"code": self.code, "message": self.message, "details": self.details, "hint": self.hint}
        return Response.json(self.status, body, self.headers)


def bad_request(message: str, details: str | None = None) -> ApiError:
    return ApiError(400, "PGRST100", message, details)


# --- authentication ---------------------------------------------------------------------------


class AuthError(Exception):
    """A JWT that cannot be trusted; the message is PostgREST's."""


def authenticate(headers: Message, secret: str) -> dict[str, Any]:
    """The request's JWT claims; no Authorization header means the anonymous role."""
    authorization = headers.get("Authorization")
    if authorization is None:
        return {"role": ANON_ROLE}
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise AuthError("Unsupported authorization scheme: a Bearer token is required")
    token = token.strip()
    if not token:
        raise AuthError("Empty JWT is sent in Authorization header")
    if token.count(".") != 2:
        raise AuthError(f"Expected 3 parts in JWT; got {token.count('.') + 1}")
    try:
        claims = jwt.decode(token, secret, algorithms=["HS256"], leeway=JWT_LEEWAY_S, options={"verify_aud": False})
    except jwt.ExpiredSignatureError as error:
        raise AuthError("JWT expired") from error
    except jwt.ImmatureSignatureError as error:
        raise AuthError("JWT not yet valid") from error
    except jwt.InvalidAlgorithmError as error:
        raise AuthError("Wrong or unsupported encoding algorithm") from error
    except jwt.InvalidSignatureError as error:
        raise AuthError("JWT cryptographic operation failed") from error
    except jwt.InvalidTokenError as error:
        raise AuthError("JWT couldn't be decoded") from error
    role = claims.setdefault("role", ANON_ROLE)
    if not isinstance(role, str) or not role:
        raise AuthError("Parsing claims failed")
    return claims


def jwt_error(error: AuthError) -> ApiError:
    www_authenticate = f'Bearer error="invalid_token", error_description="{error}"'
    return ApiError(401, "PGRST301", str(error), headers={"WWW-Authenticate": www_authenticate})


# --- database errors --------------------------------------------------------------------------

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


# --- entry point ------------------------------------------------------------------------------


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
    header = "Accept-Profile" if request.method in ("GET", "HEAD") else "Content-Profile"
    profile = request.headers.get(header)
    if profile is not None and profile != SCHEMA:
        raise ApiError(406, "PGRST106", f"The schema must be one of the following: {SCHEMA}")


def route(backend: Backend, claims: dict[str, Any], request: Request) -> Response:
    segments = [unquote(segment) for segment in request.path.split("/")]
    if len(segments) == 2 and segments[0] == "rpc" and segments[1]:
        if request.method not in ("GET", "POST"):
            raise ApiError(405, "PGRST117", f"Unsupported HTTP method: {request.method}")
        return call_function(backend, claims, request, segments[1])
    if len(segments) == 1 and segments[0]:
        handlers = {
            "GET": read_rows,
            "HEAD": read_rows,
            "POST": insert_rows,
            "PATCH": update_rows,
            "DELETE": delete_rows,
        }
        if request.method not in handlers:
            raise ApiError(405, "PGRST117", f"Unsupported HTTP method: {request.method}")
        return handlers[request.method](backend, claims, request, segments[0])
    raise ApiError(404, "PGRST125", f"Invalid path specified in request URL: /{request.path}")


def wants_single_object(request: Request) -> bool:
    return SINGLE_OBJECT in (request.headers.get("Accept") or "")


def single_object_error(rows: int) -> ApiError:
    return ApiError(
        406, "PGRST116", "Cannot coerce the result to a single JSON object", f"The result contains {rows} rows"
    )


def read_json_body(request: Request) -> Any:
    if not request.body.strip():
        return None
    try:
        return json.loads(request.body)
    except ValueError as error:
        raise ApiError(400, "PGRST102", "Empty or invalid json", str(error)) from error


# --- RPC --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    name: str
    inputs: list[tuple[str, str]]  # (argument name, SQL type) in declaration order
    required: int  # the leading inputs that have no default
    returns_set: bool
    returns_void: bool

    def accepts(self, keys: set[str]) -> bool:
        names = [name for name, _ in self.inputs]
        return keys <= set(names) - {""} and set(names[: self.required]) <= keys


FUNCTIONS_SQL = """
select p.proretset,
       p.prorettype = 'pg_catalog.void'::pg_catalog.regtype,
       p.pronargs - p.pronargdefaults,
       coalesce(p.proargnames, '{}'),
       coalesce(p.proargmodes::text[], '{}'),
       array(select pg_catalog.format_type(u.t, null)
               from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality as u(t, n)
              order by u.n)
  from pg_catalog.pg_proc p
 where p.pronamespace = %s::pg_catalog.regnamespace and p.proname = %s and p.prokind = 'f'
"""


def load_functions(cur: psycopg.Cursor[Any], name: str) -> list[Function]:
    functions = []
    for returns_set, returns_void, required, names, modes, types in cur.execute(FUNCTIONS_SQL, (SCHEMA, name)):
        names = names or [""] * len(types)
        # proargnames/proallargtypes also list OUT and TABLE columns; only IN, INOUT and VARIADIC are inputs.
        inputs = [(names[i], types[i]) for i in range(len(types)) if not modes or modes[i] in ("i", "b", "v")]
        functions.append(Function(name, inputs, required, returns_set, returns_void))
    return functions


def choose_function(functions: list[Function], name: str, keys: set[str]) -> Function:
    matches = [function for function in functions if function.accepts(keys)]
    if len(matches) == 1:
        return matches[0]
    described = f"{SCHEMA}.{name}({', '.join(sorted(keys))})"
    if not matches:
        raise ApiError(
            404,
            "PGRST202",
            f"Could not find the function {described} in the schema cache",
            f"Searched for the function {SCHEMA}.{name} with parameters {', '.join(sorted(keys)) or '(none)'}, "
            "but no matches were found in the schema cache.",
        )
    raise ApiError(300, "PGRST203", f"Could not choose the best candidate function between overloads of {described}")


def argument_text(value: Any, sql_type: str) -> str | None:
    """A JSON value as the text Postgres casts to the parameter's type."""
    if value is None:
        return None
    if sql_type in ("json", "jsonb"):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list) and sql_type.endswith("[]"):
        return array_literal(value)
    return json.dumps(value)


def array_literal(values: list[Any]) -> str:
    def element(value: Any) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, list):
            return array_literal(value)
        text = argument_text(value, "")
        return '"' + (text or "").replace("\\", "\\\\").replace('"', '\\"') + '"'

    return "{" + ",".join(element(value) for value in values) + "}"


def call_function(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    if request.method == "GET":
        arguments: dict[str, Any] = dict(request.query)
    else:
        body = read_json_body(request)
        if body is not None and not isinstance(body, dict):
            raise ApiError(400, "PGRST102", "This stand-in takes the arguments as one JSON object of named arguments")
        arguments = body or {}
        if request.query:
            raise bad_request(
                "Query parameters on an RPC call are not supported by this stand-in",
                ", ".join(key for key, _ in request.query),
            )
    single = wants_single_object(request)

    def work(cur: psycopg.Cursor[Any]) -> Response:
        function = choose_function(load_functions(cur, name), name, set(arguments))
        call = function_call(function, arguments)
        if function.returns_void:
            cur.execute(sql.SQL("select {}").format(call[0]), call[1])
            return Response(204)
        if not function.returns_set:
            row = cur.execute(sql.SQL("select to_json(_r)::text from {} as _r").format(call[0]), call[1]).fetchone()
            return Response.json_text(200, row[0] if row and row[0] is not None else "null")
        query = sql.SQL("select coalesce(json_agg(_r), '[]')::text, count(*), (json_agg(_r) -> 0)::text from {} as _r")
        array, rows, first = cur.execute(query.format(call[0]), call[1]).fetchone()
        if single:
            if rows != 1:
                raise single_object_error(rows)
            return Response.json_text(200, first)
        return Response.json_text(200, array)

    return in_transaction(backend, claims, request, work)


def function_call(function: Function, arguments: dict[str, Any]) -> tuple[sql.Composed, dict[str, Any]]:
    """public.fn(p_a => %(a0)s::type, ...), in named notation so that defaults fill the rest."""
    params: dict[str, Any] = {}
    parts = []
    for index, (name, sql_type) in enumerate(function.inputs):
        if name not in arguments:
            continue
        key = f"a{index}"
        params[key] = argument_text(arguments[name], sql_type)
        parts.append(sql.SQL("{} => {}::{}").format(sql.Identifier(name), sql.Placeholder(key), sql.SQL(sql_type)))
    call = sql.SQL("{}.{}({})").format(sql.Identifier(SCHEMA), sql.Identifier(function.name), sql.SQL(", ").join(parts))
    return call, params


# --- tables -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    name: str
    columns: dict[str, str]  # column name -> SQL type
    primary_key: list[str]

    @property
    def qualified(self) -> sql.Composed:
        return sql.SQL("{}.{}").format(sql.Identifier(SCHEMA), sql.Identifier(self.name))

    def column(self, name: str) -> sql.Composed:
        if name not in self.columns:
            raise ApiError(400, "42703", f"column {self.name}.{name} does not exist")
        return sql.SQL("_t.{}").format(sql.Identifier(name))


TABLE_SQL = """
select array_agg(a.attname::text order by a.attnum),
       array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) order by a.attnum),
       coalesce((select array_agg(k.attname::text order by u.n)
                   from pg_catalog.pg_index i
                  cross join unnest(i.indkey::int2[]) with ordinality as u(attnum, n)
                   join pg_catalog.pg_attribute k on k.attrelid = i.indrelid and k.attnum = u.attnum
                  where i.indrelid = c.oid and i.indisprimary), '{}')
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace s on s.oid = c.relnamespace
  join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
 where s.nspname = %s and c.relname = %s and c.relkind in ('r', 'p', 'v', 'm', 'f')
 group by c.oid
"""


def load_table(cur: psycopg.Cursor[Any], name: str) -> Table:
    row = cur.execute(TABLE_SQL, (SCHEMA, name)).fetchone()
    if row is None:
        raise ApiError(404, "PGRST205", f"Could not find the table '{SCHEMA}.{name}' in the schema cache")
    names, types, primary_key = row
    return Table(name, dict(zip(names, types, strict=True)), primary_key)


class Params:
    """Named query parameters, so that SQL pieces can be composed in any order."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self._names: Iterator[int] = count()

    def add(self, value: Any) -> sql.Placeholder:
        name = f"p{next(self._names)}"
        self.values[name] = value
        return sql.Placeholder(name)


_OPERATORS = {"eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "match": "~", "imatch": "~*"}
_IS_VALUES = {"null": "null", "true": "true", "false": "false", "unknown": "unknown"}


def split_list(text: str) -> list[str]:
    """PostgREST's comma lists: items may be double-quoted, with backslash escapes inside quotes."""
    items: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if quoted:
        raise bad_request(f"Unclosed double quote in {text!r}")
    items.append("".join(current))
    return items


def filter_condition(table: Table, column: str, expression: str, params: Params) -> sql.Composable:
    negate = expression.startswith("not.")
    if negate:
        expression = expression[len("not.") :]
    operator, dot, value = expression.partition(".")
    if not dot:
        raise bad_request(
            f'"failed to parse filter ({expression})" (line 1, column 1)',
            f"Unexpected filter on column {column}; expected operator.value",
        )
    target = table.column(column)
    sql_type = sql.SQL(table.columns[column])
    if operator in _OPERATORS:
        condition: sql.Composable = sql.SQL("{} {} {}::{}").format(
            target, sql.SQL(_OPERATORS[operator]), params.add(value), sql_type
        )
    elif operator in ("like", "ilike"):
        condition = sql.SQL("{}::text {} {}").format(target, sql.SQL(operator), params.add(value.replace("*", "%")))
    elif operator == "is" and value in _IS_VALUES:
        condition = sql.SQL("{} is {}").format(target, sql.SQL(_IS_VALUES[value]))
    elif operator == "in" and value.startswith("(") and value.endswith(")"):
        items = split_list(value[1:-1]) if value[1:-1] else []
        placeholders = [sql.SQL("{}::{}").format(params.add(item), sql_type) for item in items]
        condition = (
            sql.SQL("{} in ({})").format(target, sql.SQL(", ").join(placeholders)) if items else sql.SQL("false")
        )
    else:
        raise bad_request(
            f"Unsupported filter {operator!r} on column {column} in this stand-in",
            "Supported: eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, is, in, and not.<op>",
        )
    return sql.SQL("not ({})").format(condition) if negate else condition


def where_clause(table: Table, request: Request, params: Params) -> sql.Composable:
    conditions = []
    for key, value in request.query:
        if key in RESERVED_PARAMS:
            continue
        if key in ("or", "and", "not.or", "not.and") or "." in key:
            raise bad_request(f"Unsupported query parameter {key!r} in this stand-in")
        conditions.append(filter_condition(table, key, value, params))
    if not conditions:
        return sql.SQL("")
    return sql.SQL(" where ") + sql.SQL(" and ").join(conditions)


def query_value(request: Request, name: str) -> str | None:
    values = [value for key, value in request.query if key == name]
    if len(values) > 1:
        raise bad_request(f"Query parameter {name!r} given more than once")
    return values[0] if values else None


_SELECT_ITEM = re.compile(
    r'^(?:(?P<alias>[A-Za-z_][A-Za-z0-9_]*|"[^"]+"):)?(?P<column>[A-Za-z_][A-Za-z0-9_$]*|"[^"]+")$'
)


def projection(table: Table, request: Request) -> sql.Composable:
    """The select= list: "*", columns, and alias:column; embedded resources and casts are refused."""
    select = query_value(request, "select")
    if select is None or select.strip() == "*":
        return sql.SQL("_t.*")
    items = []
    for raw in select.split(","):
        item = raw.strip()
        if item == "*":
            items.append(sql.SQL("_t.*"))
            continue
        match = _SELECT_ITEM.match(item)
        if match is None:
            raise bad_request(
                f"Unsupported select item {item!r} in this stand-in", "Supported: *, column, alias:column"
            )
        column = match["column"].strip('"')
        alias = (match["alias"] or match["column"]).strip('"')
        items.append(sql.SQL("{} as {}").format(table.column(column), sql.Identifier(alias)))
    return sql.SQL(", ").join(items)


def order_clause(table: Table, request: Request) -> sql.Composable:
    order = query_value(request, "order")
    if not order:
        return sql.SQL("")
    terms = []
    for item in order.split(","):
        column, *modifiers = item.strip().split(".")
        words = [table.column(column)]
        for modifier in modifiers:
            keyword = {"asc": "asc", "desc": "desc", "nullsfirst": "nulls first", "nullslast": "nulls last"}.get(
                modifier
            )
            if keyword is None:
                raise bad_request(f"Unsupported order modifier {modifier!r} in {item!r}")
            words.append(sql.SQL(keyword))
        terms.append(sql.SQL(" ").join(words))
    return sql.SQL(" order by ") + sql.SQL(", ").join(terms)


def paging_clause(request: Request) -> sql.Composable:
    clause = sql.SQL("")
    for name in ("limit", "offset"):
        value = query_value(request, name)
        if value is None:
            continue
        if not value.isdigit():
            raise bad_request(f"{name} must be a non-negative integer, not {value!r}")
        clause += sql.SQL(f" {name} ") + sql.Literal(int(value))
    return clause


def aggregate(source: sql.Composable, table: Table, request: Request) -> sql.Composed:
    """Rows as one JSON array, their count, and the first row (for a single-object answer)."""
    return sql.SQL(
        "select coalesce(json_agg(_r), '[]')::text, count(*), (json_agg(_r) -> 0)::text from (select {} from {}) as _r"
    ).format(projection(table, request), source)


def rows_response(
    status: int, result: tuple[str, int, str | None], request: Request, total: int | None = None
) -> Response:
    """`total`: the count of every row the filters match, for `Prefer: count=exact` (else `*`)."""
    array, rows, first = result
    if wants_single_object(request):
        if rows != 1:
            raise single_object_error(rows)
        return Response.json_text(status, first or "null")
    of = "*" if total is None else str(total)
    return Response.json_text(status, array, {"Content-Range": f"0-{rows - 1}/{of}" if rows else f"*/{of}"})


def read_rows(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    def work(cur: psycopg.Cursor[Any]) -> Response:
        table = load_table(cur, name)
        params = Params()
        where = where_clause(table, request, params)
        source = sql.SQL("{} as _t{}{}{}").format(
            table.qualified, where, order_clause(table, request), paging_clause(request)
        )
        result = cur.execute(aggregate(source, table, request), params.values).fetchone()
        total = None
        # PostgREST's exact count: the rows the filters match, whatever the limit and offset
        # (docs.postgrest.org, references/api/pagination_count: "Exact Count").
        if preferences(request).get("count") == "exact":
            count = sql.SQL("select count(*) from {} as _t{}").format(table.qualified, where)
            total = cur.execute(count, params.values).fetchone()[0]
        return rows_response(200, result, request, total)

    return in_transaction(backend, claims, request, work)


def preferences(request: Request) -> dict[str, str]:
    found: dict[str, str] = {}
    for header in request.headers.get_all("Prefer") or []:
        for item in header.split(","):
            key, _, value = item.strip().partition("=")
            if key:
                found[key] = value
    return found


def write_rows(
    backend: Backend,
    claims: dict[str, Any],
    request: Request,
    name: str,
    statement: Callable[[Table, Params], sql.Composable],
    success: int,
) -> Response:
    """Runs an insert/update/delete, answering its rows when Prefer: return=representation."""
    representation = preferences(request).get("return") == "representation"

    def work(cur: psycopg.Cursor[Any]) -> Response:
        table = load_table(cur, name)
        params = Params()
        body = statement(table, params)
        if not representation:
            cur.execute(body, params.values)
            return Response(201 if success == 201 else 204)
        query = sql.SQL("with _w as ({} returning _t.*) ").format(body) + aggregate(sql.SQL("_w as _t"), table, request)
        return rows_response(success, cur.execute(query, params.values).fetchone(), request)

    return in_transaction(backend, claims, request, work)


def payload_rows(request: Request) -> list[dict[str, Any]]:
    body = read_json_body(request)
    rows = [body] if isinstance(body, dict) else body
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ApiError(400, "PGRST102", "Empty or invalid json", "expected a JSON object or an array of objects")
    return rows


def payload_columns(request: Request, rows: Sequence[dict[str, Any]]) -> list[str]:
    columns = query_value(request, "columns")
    if columns is not None:
        return [column.strip() for column in split_list(columns)]
    return list(rows[0]) if rows else []


def conflict_clause(table: Table, request: Request, columns: list[str]) -> sql.Composable:
    resolution = preferences(request).get("resolution")
    if resolution not in ("merge-duplicates", "ignore-duplicates"):
        return sql.SQL("")
    on_conflict = query_value(request, "on_conflict")
    target = [column.strip() for column in split_list(on_conflict)] if on_conflict else table.primary_key
    if not target:
        raise bad_request(f"Upsert on {table.name} needs on_conflict: the table has no primary key")
    clause = sql.SQL(" on conflict ({})").format(sql.SQL(", ").join(sql.Identifier(column) for column in target))
    if resolution == "ignore-duplicates":
        return clause + sql.SQL(" do nothing")
    assignments = [sql.SQL("{0} = excluded.{0}").format(sql.Identifier(column)) for column in columns]
    return clause + sql.SQL(" do update set ") + sql.SQL(", ").join(assignments)


def insert_rows(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    if preferences(request).get("missing") == "default":
        # json_populate_recordset fills the keys a row lacks with null, PostgREST's default
        # (missing=null); per-row defaults are not worth imitating here, so say so instead.
        raise bad_request("Prefer: missing=default is not supported by this stand-in")
    rows = payload_rows(request)
    columns = payload_columns(request, rows)
    if not rows:
        return (
            Response.json_text(201, "[]") if preferences(request).get("return") == "representation" else Response(201)
        )
    if not columns:
        raise bad_request("This stand-in cannot insert a row without any column")

    def statement(table: Table, params: Params) -> sql.Composable:
        for column in columns:
            table.column(column)
        names = sql.SQL(", ").join(sql.Identifier(column) for column in columns)
        # Values pass through the table's own row type, so each column gets its declared type.
        return sql.SQL("insert into {} as _t ({}) select {} from json_populate_recordset(null::{}, {}::json){}").format(
            table.qualified,
            names,
            names,
            table.qualified,
            params.add(json.dumps(rows)),
            conflict_clause(table, request, columns),
        )

    return write_rows(backend, claims, request, name, statement, 201)


def update_rows(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    body = read_json_body(request)
    if not isinstance(body, dict) or not body:
        raise ApiError(400, "PGRST102", "Empty or invalid json", "PATCH takes one JSON object of columns to set")

    def statement(table: Table, params: Params) -> sql.Composable:
        for column in body:
            table.column(column)
        assignments = [sql.SQL("{0} = _p.{0}").format(sql.Identifier(column)) for column in body]
        where = where_clause(table, request, params)
        if not request_has_filters(request):
            raise ApiError(400, "21000", "UPDATE requires a WHERE clause")  # Supabase runs pg-safeupdate
        return sql.SQL("update {} as _t set {} from json_populate_record(null::{}, {}::json) as _p{}").format(
            table.qualified, sql.SQL(", ").join(assignments), table.qualified, params.add(json.dumps(body)), where
        )

    return write_rows(backend, claims, request, name, statement, 200)


def delete_rows(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    def statement(table: Table, params: Params) -> sql.Composable:
        where = where_clause(table, request, params)
        if not request_has_filters(request):
            raise ApiError(400, "21000", "DELETE requires a WHERE clause")  # Supabase runs pg-safeupdate
        return sql.SQL("delete from {} as _t{}").format(table.qualified, where)

    return write_rows(backend, claims, request, name, statement, 200)


def request_has_filters(request: Request) -> bool:
    return any(key not in RESERVED_PARAMS for key, _ in request.query)
