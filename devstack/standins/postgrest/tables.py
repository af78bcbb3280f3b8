"""Table reads: GET /rest/v1/<table> with select=, filters, order= and limit=, the rows as a JSON
array (docs.postgrest.org, references/api/tables_views). Only the syntax the product's reads use;
anything else is refused with 400 PGRST100 rather than silently misread."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from typing import Any

import psycopg
from psycopg import sql

from devstack.standins.messages import Backend, Request, Response
from devstack.standins.postgrest.database import SCHEMA, in_transaction
from devstack.standins.postgrest.errors import ApiError, bad_request

RESERVED_PARAMS = frozenset({"select", "order", "limit"})
# The filters the product's reads use (lib/): the comparisons, ilike (its "*" is SQL's "%"), in.
_COMPARISONS = {"eq": "=", "lt": "<", "gte": ">="}


@dataclass(frozen=True)
class Table:
    name: str
    columns: dict[str, str]  # column name -> SQL type

    @property
    def qualified(self) -> sql.Composed:
        return sql.SQL("{}.{}").format(sql.Identifier(SCHEMA), sql.Identifier(self.name))

    def column(self, name: str) -> sql.Composed:
        if name not in self.columns:
            raise ApiError(400, "42703", f"column {self.name}.{name} does not exist")
        return sql.SQL("_t.{}").format(sql.Identifier(name))


TABLE_SQL = """
select array_agg(a.attname::text order by a.attnum),
       array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) order by a.attnum)
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
    names, types = row
    return Table(name, dict(zip(names, types, strict=True)))


class Params:
    """Named query parameters, so that SQL pieces can be composed in any order."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self._names: Iterator[int] = count()

    def add(self, value: Any) -> sql.Placeholder:
        name = f"p{next(self._names)}"
        self.values[name] = value
        return sql.Placeholder(name)


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
    operator, dot, value = expression.partition(".")
    if not dot:
        raise bad_request(
            f'"failed to parse filter ({expression})" (line 1, column 1)',
            f"Unexpected filter on column {column}; expected operator.value",
        )
    target = table.column(column)
    sql_type = sql.SQL(table.columns[column])
    if operator in _COMPARISONS:
        return sql.SQL("{} {} {}::{}").format(target, sql.SQL(_COMPARISONS[operator]), params.add(value), sql_type)
    if operator == "ilike":
        return sql.SQL("{}::text ilike {}").format(target, params.add(value.replace("*", "%")))
    if operator == "in" and value.startswith("(") and value.endswith(")"):
        items = split_list(value[1:-1]) if value[1:-1] else []
        if not items:
            return sql.SQL("false")
        placeholders = [sql.SQL("{}::{}").format(params.add(item), sql_type) for item in items]
        return sql.SQL("{} in ({})").format(target, sql.SQL(", ").join(placeholders))
    raise bad_request(
        f"Unsupported filter {operator!r} on column {column} in this stand-in",
        f"Supported: {', '.join(_COMPARISONS)}, ilike, in",
    )


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


def projection(table: Table, request: Request) -> sql.Composable:
    """The select= list: "*" or columns; aliases, casts and embedded resources are refused."""
    select = query_value(request, "select")
    if select is None or select.strip() == "*":
        return sql.SQL("_t.*")
    items = []
    for raw in select.split(","):
        item = raw.strip()
        if not item.isidentifier():
            raise bad_request(f"Unsupported select item {item!r} in this stand-in", "Supported: *, column")
        items.append(sql.SQL("{} as {}").format(table.column(item), sql.Identifier(item)))
    return sql.SQL(", ").join(items)


def order_clause(table: Table, request: Request) -> sql.Composable:
    order = query_value(request, "order")
    if not order:
        return sql.SQL("")
    terms = []
    for item in order.split(","):
        column, *modifiers = item.strip().split(".")
        if modifiers not in ([], ["asc"], ["desc"]):
            raise bad_request(
                f"Unsupported order {item!r} in this stand-in", "Supported: column, column.asc, column.desc"
            )
        terms.append(sql.SQL(" ").join([table.column(column), *map(sql.SQL, modifiers)]))
    return sql.SQL(" order by ") + sql.SQL(", ").join(terms)


def limit_clause(request: Request) -> sql.Composable:
    value = query_value(request, "limit")
    if value is None:
        return sql.SQL("")
    if not value.isdigit():
        raise bad_request(f"limit must be a non-negative integer, not {value!r}")
    return sql.SQL(" limit ") + sql.Literal(int(value))


def read_rows(backend: Backend, claims: dict[str, Any], request: Request, name: str) -> Response:
    """The rows as one JSON array, with PostgREST's Content-Range: the total is "*" unless
    `Prefer: count=exact` asks for it (docs.postgrest.org, references/api/pagination_count)."""

    def work(cur: psycopg.Cursor[Any]) -> Response:
        table = load_table(cur, name)
        params = Params()
        where = where_clause(table, request, params)
        source = sql.SQL("{} as _t{}{}{}").format(
            table.qualified, where, order_clause(table, request), limit_clause(request)
        )
        query = sql.SQL("select coalesce(json_agg(_r), '[]')::text, count(*) from (select {} from {}) as _r").format(
            projection(table, request), source
        )
        array, rows = cur.execute(query, params.values).fetchone()
        total = "*"
        if "count=exact" in (request.headers.get("Prefer") or "").replace(" ", "").split(","):
            counted = sql.SQL("select count(*) from {} as _t{}").format(table.qualified, where)
            total = str(cur.execute(counted, params.values).fetchone()[0])
        return Response.json_text(200, array, {"Content-Range": f"0-{rows - 1}/{total}" if rows else f"*/{total}"})

    return in_transaction(backend, claims, request, work)
