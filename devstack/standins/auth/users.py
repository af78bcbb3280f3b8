"""The admin users API, for the secret key (legacy: the service_role JWT as Bearer): what the
operators CLI calls (lib/admin/operators.py). POST /admin/users {"email", "password", "email_confirm",
"app_metadata", "user_metadata"}, GET /admin/users?page=&per_page= ({"users", "aud"},
X-Total-Count), PUT /admin/users/{id} {"app_metadata"}, merged key by key, a key set to null
removed (GoTrue's UpdateAppMetaData). Docs: reference/javascript/auth-admin-createuser and the
admin users pages."""

from __future__ import annotations

import re
import secrets
import uuid
from typing import Any

from devstack.standins.auth.errors import AuthError, json_body
from devstack.standins.auth.state import State, hash_password, now_iso
from devstack.standins.messages import Request, Response

AUDIENCE = "authenticated"
MIN_PASSWORD_LENGTH = 6
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def admin(state: State, request: Request, user_id: str, query: dict[str, str]) -> Response:
    if not user_id:
        if request.method == "GET":
            return list_users(state, query)
        if request.method == "POST":
            return create_user(state, json_body(request))
        raise AuthError(405, "method_not_allowed", "Method Not Allowed")
    if not _UUID.match(user_id):
        raise AuthError(400, "validation_failed", "user_id must be an UUID")
    if request.method != "PUT":
        raise AuthError(405, "method_not_allowed", "Method Not Allowed")
    body = json_body(request)
    with state.lock:
        user = state.data["users"].get(user_id)
        if user is None:
            raise AuthError(404, "user_not_found", "User not found")
        merge_app_metadata(user, body.get("app_metadata"))
        state.save()
        return Response.json(200, public_user(user))


def list_users(state: State, query: dict[str, str]) -> Response:
    try:
        page, per_page = int(query.get("page", "1")), int(query.get("per_page", "50"))
    except ValueError as error:
        raise AuthError(400, "validation_failed", "Bad Pagination Parameters") from error
    if page < 1 or per_page < 1:
        raise AuthError(400, "validation_failed", "Bad Pagination Parameters")
    with state.lock:
        users = sorted(state.data["users"].values(), key=lambda u: u["created_at"], reverse=True)
    chunk = users[(page - 1) * per_page : page * per_page]
    body = {"users": [public_user(u) for u in chunk], "aud": AUDIENCE}
    return Response.json(200, body, {"X-Total-Count": str(len(users))})


def create_user(state: State, body: dict[str, Any]) -> Response:
    email = str(body.get("email") or "").strip().lower()
    if not email:
        raise AuthError(422, "validation_failed", "Cannot create a user without either an email or phone")
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        raise AuthError(400, "validation_failed", "Unable to validate email address: invalid format")
    password = body.get("password") or secrets.token_urlsafe(32)
    if len(str(password)) < MIN_PASSWORD_LENGTH:
        raise AuthError(422, "weak_password", f"Password should be at least {MIN_PASSWORD_LENGTH} characters.")
    with state.lock:
        if any(u["email"] == email for u in state.data["users"].values()):
            raise AuthError(422, "email_exists", "A user with this email address has already been registered")
        stamp = now_iso()
        user = {
            "id": str(uuid.uuid4()),
            "aud": AUDIENCE,
            "role": "authenticated",
            "email": email,
            "email_confirmed_at": stamp if body.get("email_confirm") else None,
            "phone": "",
            "confirmed_at": stamp if body.get("email_confirm") else None,
            "last_sign_in_at": None,
            "app_metadata": {"provider": "email", "providers": ["email"]},
            "user_metadata": dict(body.get("user_metadata") or {}),
            "identities": [],
            "created_at": stamp,
            "updated_at": stamp,
            "is_anonymous": False,
            "password_hash": hash_password(str(password)),
        }
        merge_app_metadata(user, body.get("app_metadata"))
        state.data["users"][user["id"]] = user
        state.save()
    return Response.json(200, public_user(user))


def merge_app_metadata(user: dict[str, Any], app_metadata: dict[str, Any] | None) -> None:
    for key, value in (app_metadata or {}).items():
        if value is None:
            user["app_metadata"].pop(key, None)
        else:
            user["app_metadata"][key] = value
    user["updated_at"] = now_iso()


def public_user(user: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in user.items() if key != "password_hash"}
