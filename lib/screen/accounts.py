"""Supabase Auth's admin API with the server key, on the server only (the CLI's operators command,
lib/admin/operators.py, and the admin screen's accounts view, lib/screen/endpoint.py; the page
never holds the key): the users, a role in app_metadata, and Auth's own e-mails, an invitation
(POST /auth/v1/invite: docs reference/javascript/auth-admin-inviteuserbyemail) and a password
recovery (POST /auth/v1/recover: reference/javascript/auth-resetpasswordforemail). Their links
return to redirect_to when it is among the project's Redirect URLs, else to Auth's Site URL
(guides/auth/redirect-urls; docs/DEPLOY.md). Auth's refusals become a Refusal "auth_refused" with
Auth's own code in its details (auth_code: over_email_send_rate_limit past its e-mail limits), and
an Auth out of reach "auth_unavailable", the screen's codes (lib/explanations.py) and the CLI's."""

from __future__ import annotations

from typing import Any

import httpx

from lib.errors import Refusal
from lib.screen.auth import ROLE_CLAIM
from lib.settings import SupabaseSettings
from lib.supabase.keys import api_headers

PAGE_SIZE = 1000
TIMEOUT = httpx.Timeout(20.0, connect=5.0)


class AuthAdmin:
    """Auth's admin API, with the server key."""

    def __init__(self, http: httpx.Client, settings: SupabaseSettings) -> None:
        self.http = http
        self.auth = f"{settings.supabase_url}/auth/v1"
        self.base = f"{self.auth}/admin/users"
        self.headers = api_headers(settings.server_key)

    def call(self, method: str, url: str, **kwargs: Any) -> Any:
        try:
            response = self.http.request(method, url, headers=self.headers, timeout=TIMEOUT, **kwargs)
        except httpx.HTTPError as error:
            raise Refusal(
                "auth_unavailable", f"Supabase Auth could not be reached ({type(error).__name__})", 503
            ) from None
        if not response.is_success:
            said = f"Supabase Auth refused: {response.status_code} {auth_message(response)}"
            raise Refusal("auth_refused", said, 502, auth_code=auth_code(response))
        return response.json()

    def users(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = self.call("GET", self.base, params={"page": page, "per_page": PAGE_SIZE})["users"]
            found += batch
            if len(batch) < PAGE_SIZE:
                return found
            page += 1

    def find(self, email: str) -> dict[str, Any] | None:
        wanted = email.strip().lower()
        return next((user for user in self.users() if (user.get("email") or "").lower() == wanted), None)

    def create(self, email: str, password: str, role: str) -> dict[str, Any]:
        body = {"email": email, "password": password, "email_confirm": True, "app_metadata": {ROLE_CLAIM: role}}
        user: dict[str, Any] = self.call("POST", self.base, json=body)
        return user

    def invite(self, email: str, redirect_to: str | None) -> dict[str, Any]:
        """Auth's invitation e-mail; the user it made (or already had, unconfirmed)."""
        user: dict[str, Any] = self.call("POST", f"{self.auth}/invite", params=_redirect(redirect_to),
                                         json={"email": email, "data": {}})  # fmt: skip
        return user

    def send_recovery(self, email: str, redirect_to: str | None) -> None:
        """Auth's password recovery e-mail (what resetPasswordForEmail sends from the sign-in page)."""
        self.call("POST", f"{self.auth}/recover", params=_redirect(redirect_to), json={"email": email})

    def set_role(self, user_id: str, role: str | None) -> dict[str, Any]:
        # Auth merges app_metadata key by key; null removes the key.
        user: dict[str, Any] = self.call("PUT", f"{self.base}/{user_id}", json={"app_metadata": {ROLE_CLAIM: role}})
        return user


def _redirect(redirect_to: str | None) -> dict[str, str]:
    return {"redirect_to": redirect_to} if redirect_to else {}


def auth_code(response: httpx.Response) -> str | None:
    """Auth's error code ("error_code", or "code" in its newer shape), if it gave one."""
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    code = body.get("error_code") or body.get("code")
    return code if isinstance(code, str) else None


def auth_message(response: httpx.Response) -> str:
    """Auth's own words for a refusal ("msg" or "message"), or its status text."""
    try:
        body = response.json()
    except ValueError:
        return response.reason_phrase
    if isinstance(body, dict):
        return str(body.get("msg") or body.get("message") or body.get("error_description") or response.reason_phrase)
    return response.reason_phrase


def invite(admin: AuthAdmin, email: str, role: str, redirect_to: str | None) -> dict[str, Any]:
    """The invited operator, with their role. An account that is already in use is refused with
    what to do instead (Auth would refuse it too: email_exists)."""
    existing = admin.find(email)
    if existing is not None and existing.get("email_confirmed_at"):
        instead = f"'operators add {email} --role {role}', or send 'operators reset-password {email}'"
        raise Refusal("account_exists", f"{email} already has an account: give it a role with {instead}", 409)
    user = admin.invite(email, redirect_to)
    return admin.set_role(user["id"], role)


def reset_password(admin: AuthAdmin, email: str, redirect_to: str | None) -> dict[str, Any]:
    """Auth's recovery e-mail to an account (an admin's tool: unlike the sign-in page, it says
    when there is no such account, rather than sending nothing)."""
    existing = admin.find(email)
    if existing is None or existing.get("deleted_at"):
        raise Refusal("no_account", f"{email} has no account", 404)
    admin.send_recovery(existing["email"], redirect_to)
    return existing
