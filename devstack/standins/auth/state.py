"""Where Auth keeps its users, sessions and refresh tokens: GoTrue's own tables in the auth schema
of the project's database (auth.users, auth.sessions, auth.refresh_tokens; created by
devstack/bootstrap.sql with GoTrue's columns), reached as GoTrue reaches them, as its role
supabase_auth_admin. Passwords are bcrypt hashes in encrypted_password, made and checked by
pgcrypto's crypt(), as GoTrue's are (and as Supabase's guide to creating users in SQL makes them).
The settings tests change (token lifetime, reuse interval) are the service's configuration, not its
data: they live in the process."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from devstack.standins.postgrest.connections import Connections

# The columns of auth.users a user's JSON is made of (GoTrue's models.User, as the API answers it).
USER_COLUMNS = (
    "id, aud, role, email, email_confirmed_at, phone, confirmed_at, last_sign_in_at, raw_app_meta_data, "
    "raw_user_meta_data, created_at, updated_at, banned_until, deleted_at, is_anonymous"
)
POOL_MIN, POOL_MAX, POOL_TIMEOUT_S = 1, 4, 10.0


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def public_user(row: dict[str, Any]) -> dict[str, Any]:
    """A row of auth.users as GoTrue's API answers it (no password hash; banned_until and deleted_at
    only when set: json "banned_until,omitempty" and "deleted_at,omitempty" of GoTrue's models.User,
    github.com/supabase/auth internal/models/user.go)."""
    user = {
        "id": str(row["id"]),
        "aud": row["aud"],
        "role": row["role"],
        "email": row["email"] or "",
        "email_confirmed_at": iso(row["email_confirmed_at"]),
        "phone": row["phone"] or "",
        "confirmed_at": iso(row["confirmed_at"]),
        "last_sign_in_at": iso(row["last_sign_in_at"]),
        "app_metadata": row["raw_app_meta_data"] or {},
        "user_metadata": row["raw_user_meta_data"] or {},
        "identities": [],
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
        "is_anonymous": row["is_anonymous"],
    }
    if row["banned_until"] is not None:
        user["banned_until"] = iso(row["banned_until"])
    if row["deleted_at"] is not None:
        user["deleted_at"] = iso(row["deleted_at"])
    return user


@dataclass
class Settings:
    access_token_seconds: float | None = None
    refresh_reuse_interval_s: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class State:
    """The auth tables, through a pool of connections as supabase_auth_admin."""

    def __init__(self, conninfo: str) -> None:
        self.pool = Connections(conninfo, min_size=POOL_MIN, max_size=POOL_MAX, timeout=POOL_TIMEOUT_S,
                                name="auth")  # fmt: skip
        self.settings = Settings()

    def open(self, timeout: float) -> None:
        self.pool.open(timeout=timeout)

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        """A cursor in one transaction, its rows as dicts."""
        with self.pool.connection() as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cursor:
            yield cursor
