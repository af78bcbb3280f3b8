"""Signing in to the local stack's Auth stand-in as the admin screen's page does, and accounts of
one's own for a test (through Auth's admin API, as the operators CLI does)."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import httpx

from lib.supabase.keys import api_headers


def sign_in(env: dict[str, str], email: str, password: str) -> dict[str, Any]:
    """A session: {"access_token", "refresh_token", "expires_at", "user", ...}."""
    answer = httpx.post(
        f"{env['SUPABASE_URL']}/auth/v1/token?grant_type=password",
        headers={"apikey": env["SUPABASE_PUBLISHABLE_KEY"]},
        json={"email": email, "password": password},
        timeout=10,
    )
    answer.raise_for_status()
    session: dict[str, Any] = answer.json()
    return session


def admin_api(env: dict[str, str]) -> dict[str, str]:
    return api_headers(env["SUPABASE_SECRET_KEY"])


def new_account(env: dict[str, str], app_metadata: dict[str, Any] | None = None,
                user_metadata: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:  # fmt: skip
    """A fresh Auth user (e-mail confirmed) and its password."""
    password = secrets.token_urlsafe(12)
    body = {
        "email": f"test-{uuid.uuid4().hex[:10]}@example.com",
        "password": password,
        "email_confirm": True,
        "app_metadata": app_metadata or {},
        "user_metadata": user_metadata or {},
    }
    answer = httpx.post(f"{env['SUPABASE_URL']}/auth/v1/admin/users", headers=admin_api(env), json=body, timeout=10)
    answer.raise_for_status()
    return answer.json(), password


def set_app_metadata(env: dict[str, str], user_id: str, app_metadata: dict[str, Any]) -> None:
    answer = httpx.put(f"{env['SUPABASE_URL']}/auth/v1/admin/users/{user_id}", headers=admin_api(env),
                       json={"app_metadata": app_metadata}, timeout=10)  # fmt: skip
    answer.raise_for_status()


def ban(env: dict[str, str], user_id: str, duration: str) -> dict[str, Any]:
    """Auth's ban, as GoTrue's admin API takes it (PUT /admin/users/{id} {"ban_duration"}: a Go
    duration such as "24h", or "none" to lift it); the user as Auth answers it."""
    answer = httpx.put(f"{env['SUPABASE_URL']}/auth/v1/admin/users/{user_id}", headers=admin_api(env),
                       json={"ban_duration": duration}, timeout=10)  # fmt: skip
    answer.raise_for_status()
    user: dict[str, Any] = answer.json()
    return user


def delete_user(env: dict[str, str], user_id: str, soft: bool) -> None:
    """Auth's DELETE /admin/users/{id}: soft (deleted_at, the e-mail obfuscated, the metadata cleared) or hard."""
    answer = httpx.request("DELETE", f"{env['SUPABASE_URL']}/auth/v1/admin/users/{user_id}", headers=admin_api(env),
                           json={"should_soft_delete": soft}, timeout=10)  # fmt: skip
    answer.raise_for_status()


def mails(env: dict[str, str], to: str) -> list[dict[str, Any]]:
    """The e-mails the Auth stand-in has sent to an address, oldest first: {"to", "type", "subject",
    "link", "code", "sent_at"} (captured, never delivered)."""
    answer = httpx.get(f"{env['SUPABASE_URL']}/_control/auth/mail", params={"to": to}, timeout=10)
    answer.raise_for_status()
    found: list[dict[str, Any]] = answer.json()["mails"]
    return found


def configure_auth(env: dict[str, str], **settings: Any) -> None:
    """The Auth stand-in's settings (devstack/standins/gateway.py's POST /_control/auth); None restores one."""
    httpx.post(f"{env['SUPABASE_URL']}/_control/auth", json=settings, timeout=10).raise_for_status()
