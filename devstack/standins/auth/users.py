"""The admin users API, for the secret key (legacy: the service_role JWT as Bearer), on the rows of
auth.users (state.py). POST /admin/users {"email", "password", "email_confirm", "app_metadata",
"user_metadata", "ban_duration"}, GET /admin/users?page=&per_page= ({"users", "aud"},
X-Total-Count), PUT /admin/users/{id} {"app_metadata", "ban_duration"}, DELETE /admin/users/{id}
{"should_soft_delete"}. As GoTrue does it (github.com/supabase/auth internal/api/admin.go,
internal/models/user.go): PUT merges app_metadata key by key and a key set to null is removed
(UpdateAppMetaData); ban_duration is a Go duration ("24h", "30m") setting banned_until that far
ahead, or "none" lifting the ban (a ban leaves the user's sessions as they are: its access tokens
stay valid, GET /user and refreshing refuse it); a hard DELETE removes the row (its sessions and
refresh tokens go with it, ON DELETE CASCADE), a soft one (SoftDeleteUser) sets deleted_at, clears
the e-mail, password and both metadata, and deletes the user's sessions. Docs:
reference/javascript/auth-admin-createuser, auth-admin-updateuserbyid, auth-admin-deleteuser."""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from devstack.standins.auth.errors import AuthError, json_body
from devstack.standins.auth.state import USER_COLUMNS, State, public_user
from devstack.standins.messages import Request, Response

AUDIENCE = "authenticated"
MIN_PASSWORD_LENGTH = 6
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_UNITS_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def admin(state: State, request: Request, user_id: str, query: dict[str, str]) -> Response:
    if not user_id:
        if request.method == "GET":
            return list_users(state, query)
        if request.method == "POST":
            return create_user(state, json_body(request))
        raise AuthError(405, "method_not_allowed", "Method Not Allowed")
    if not _UUID.match(user_id):
        raise AuthError(400, "validation_failed", "user_id must be an UUID")
    if request.method == "PUT":
        return update_user(state, user_id, json_body(request))
    if request.method == "DELETE":
        return delete_user(state, user_id, json_body(request))
    raise AuthError(405, "method_not_allowed", "Method Not Allowed")


def ban_duration(value: Any) -> timedelta | None:
    """GoTrue's ban_duration (time.ParseDuration); "none" lifts a ban (timedelta 0); None: not given."""
    if value is None or value == "":
        return None
    if value == "none":
        return timedelta(0)
    text = str(value)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    parts = _GO_DURATION_PART.findall(body)
    if not body or "".join(number + unit for number, unit in parts) != body:
        raise AuthError(400, "validation_failed", f'invalid format for ban duration: time: invalid duration "{text}"')
    return timedelta(seconds=sign * sum(float(number) * _GO_UNITS_S[unit] for number, unit in parts))


def banned_until_sql(duration: timedelta | None) -> tuple[str, list[Any]]:
    """The SET clause for a ban (GoTrue's User.Ban: none -> null, else now + duration)."""
    if duration is None:
        return "", []
    if duration == timedelta(0):
        return ", banned_until = null", []
    return ", banned_until = now() + %s", [duration]


def list_users(state: State, query: dict[str, str]) -> Response:
    try:
        page, per_page = int(query.get("page", "1")), int(query.get("per_page", "50"))
    except ValueError as error:
        raise AuthError(400, "validation_failed", "Bad Pagination Parameters") from error
    if page < 1 or per_page < 1:
        raise AuthError(400, "validation_failed", "Bad Pagination Parameters")
    with state.transaction() as cursor:
        rows = cursor.execute(f"select {USER_COLUMNS} from auth.users order by created_at desc, id desc"
                              " limit %s offset %s", (per_page, (page - 1) * per_page)).fetchall()  # fmt: skip
        total = cursor.execute("select count(*) as n from auth.users").fetchone()
    body = {"users": [public_user(row) for row in rows], "aud": AUDIENCE}
    return Response.json(200, body, {"X-Total-Count": str(total["n"] if total else 0)})


def valid_email(text: str) -> str:
    """GoTrue's validateEmail (internal/api/mail.go): required, at most 255 characters, a valid
    format; lower-cased."""
    if not text:
        raise AuthError(400, "validation_failed", "An email address is required")
    if len(text) > 255:
        raise AuthError(400, "validation_failed", "An email address is too long")
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
        raise AuthError(400, "validation_failed", "Unable to validate email address: invalid format")
    return text.lower()


def create_user(state: State, body: dict[str, Any]) -> Response:
    email = str(body.get("email") or "").strip().lower()
    if not email:
        raise AuthError(422, "validation_failed", "Cannot create a user without either an email or phone")
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        raise AuthError(400, "validation_failed", "Unable to validate email address: invalid format")
    password = body.get("password") or secrets.token_urlsafe(32)
    if len(str(password)) < MIN_PASSWORD_LENGTH:
        raise AuthError(422, "weak_password", f"Password should be at least {MIN_PASSWORD_LENGTH} characters.")
    app_metadata = merged({"provider": "email", "providers": ["email"]}, body.get("app_metadata"))
    ban, ban_params = banned_until_sql(ban_duration(body.get("ban_duration")))
    try:
        with state.transaction() as cursor:
            row = cursor.execute(
                """insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                                           raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
                    values ('00000000-0000-0000-0000-000000000000', %s, %s, 'authenticated', %s,
                            extensions.crypt(%s, extensions.gen_salt('bf', 10)), case when %s then now() end,
                            %s, %s, now(), now())
                    returning id""",
                (uuid.uuid4(), AUDIENCE, email, str(password), bool(body.get("email_confirm")),
                 Jsonb(app_metadata),
                 Jsonb(dict(body.get("user_metadata") or {}))),
            ).fetchone()  # fmt: skip
            assert row is not None
            if ban:
                cursor.execute(f"update auth.users set updated_at = now(){ban} where id = %s", (*ban_params, row["id"]))
            user = cursor.execute(f"select {USER_COLUMNS} from auth.users where id = %s", (row["id"],)).fetchone()
    except psycopg.errors.UniqueViolation as error:
        raise AuthError(422, "email_exists", "A user with this email address has already been registered") from error
    assert user is not None
    return Response.json(200, public_user(user))


def update_user(state: State, user_id: str, body: dict[str, Any]) -> Response:
    ban, ban_params = banned_until_sql(ban_duration(body.get("ban_duration")))
    with state.transaction() as cursor:
        row = cursor.execute("select raw_app_meta_data from auth.users where id = %s for update",
                             (user_id,)).fetchone()  # fmt: skip
        if row is None:
            raise AuthError(404, "user_not_found", "User not found")
        app_metadata = merged(row["raw_app_meta_data"] or {}, body.get("app_metadata"))
        user = cursor.execute(
            f"update auth.users set raw_app_meta_data = %s, updated_at = now(){ban} where id = %s"
            f" returning {USER_COLUMNS}",
            (Jsonb(app_metadata), *ban_params, user_id),
        ).fetchone()
    assert user is not None
    return Response.json(200, public_user(user))


def delete_user(state: State, user_id: str, body: dict[str, Any]) -> Response:
    with state.transaction() as cursor:
        row = cursor.execute("select deleted_at from auth.users where id = %s for update", (user_id,)).fetchone()
        if row is None:
            raise AuthError(404, "user_not_found", "User not found")
        if not body.get("should_soft_delete"):
            cursor.execute("delete from auth.users where id = %s", (user_id,))
        elif row["deleted_at"] is None:
            # SoftDeleteUser: obfuscated e-mail (a hash of it here), no password, no metadata, no sessions.
            cursor.execute(
                """update auth.users set email = encode(extensions.digest(coalesce(email, ''), 'sha256'), 'hex'),
                          encrypted_password = null, raw_app_meta_data = '{}', raw_user_meta_data = '{}',
                          deleted_at = now(), updated_at = now()
                    where id = %s""",
                (user_id,),
            )
            cursor.execute("delete from auth.sessions where user_id = %s", (user_id,))
    return Response.json(200, {})


def merged(app_metadata: dict[str, Any], changes: dict[str, Any] | None) -> dict[str, Any]:
    """GoTrue's UpdateAppMetaData: key by key, a key set to null removed."""
    result = dict(app_metadata)
    for key, value in (changes or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result
