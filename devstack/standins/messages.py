"""The local gateway's requests and answers, as the stand-ins behind it (PostgREST, Storage, Auth)
take and give them, and what each request handler needs from the gateway."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, Protocol

import psycopg

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


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


class ConnectionSource(Protocol):
    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


@dataclass(frozen=True)
class Backend:
    """What every request handler needs: the pool (connected as "authenticator"; see
    devstack/standins/postgrest/connections.py) and the JWT secret."""

    pool: ConnectionSource
    jwt_secret: str
