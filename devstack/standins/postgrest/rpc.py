"""RPC: POST /rest/v1/rpc/<fn> with a JSON object of named arguments, overloads resolved by
argument names (docs.postgrest.org, references/api/functions). Set-returning functions answer
an array, others a scalar or an object, void 204."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from devstack.standins.messages import Backend, Request, Response
from devstack.standins.postgrest.database import SCHEMA, in_transaction
from devstack.standins.postgrest.errors import ApiError, bad_request


def read_json_body(request: Request) -> Any:
    if not request.body.strip():
        return None
    try:
        return json.loads(request.body)
    except ValueError as error:
        raise ApiError(400, "PGRST102", "Empty or invalid json", str(error)) from error


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
    body = read_json_body(request)
    if body is not None and not isinstance(body, dict):
        raise ApiError(400, "PGRST102", "This stand-in takes the arguments as one JSON object of named arguments")
    arguments: dict[str, Any] = body or {}
    if request.query:
        raise bad_request(
            "Query parameters on an RPC call are not supported by this stand-in",
            ", ".join(key for key, _ in request.query),
        )

    def work(cur: psycopg.Cursor[Any]) -> Response:
        function = choose_function(load_functions(cur, name), name, set(arguments))
        call = function_call(function, arguments)
        if function.returns_void:
            cur.execute(sql.SQL("select {}").format(call[0]), call[1])
            return Response(204)
        if not function.returns_set:
            row = cur.execute(sql.SQL("select to_json(_r)::text from {} as _r").format(call[0]), call[1]).fetchone()
            return Response.json_text(200, row[0] if row and row[0] is not None else "null")
        query = sql.SQL("select coalesce(json_agg(_r), '[]')::text from {} as _r")
        return Response.json_text(200, cur.execute(query.format(call[0]), call[1]).fetchone()[0])

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
