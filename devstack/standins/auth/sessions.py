"""The Auth service behind the gateway's /auth/v1: its routes, the API keys it trusts for the admin
API, and sessions: the password and refresh-token grants (refresh tokens rotate, with GoTrue's
reuse interval and reuse detection), access tokens signed with the ES256 key, GET /user, and
POST /logout (scope global, local or others)."""

from __future__ import annotations

import secrets
import time
import uuid
from pathlib import Path
from typing import Any

import jwt

from devstack.standins.auth import cors, users
from devstack.standins.auth.errors import AuthError, error_response, json_body
from devstack.standins.auth.keys import Keys, jwk, private_key
from devstack.standins.auth.state import State, now_iso, password_matches
from devstack.standins.auth.users import AUDIENCE, public_user
from devstack.standins.messages import Request, Response

DEFAULT_ACCESS_TOKEN_SECONDS = 3600
REFRESH_REUSE_INTERVAL_S = 10
ADMIN_ROLES = ("service_role", "supabase_admin")


class Auth:
    def __init__(self, state_path: Path, keys: Keys, issuer: str) -> None:
        self.state = State(state_path)
        self.keys = keys
        self.issuer = issuer
        self.private_key = private_key(keys)
        self.jwk = jwk(keys)

    # -- entry point ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS" and request.headers.get("Access-Control-Request-Method"):
            return cors.preflight(request, origin)
        try:
            response = self.route(request)
        except AuthError as error:
            response = error_response(request, error)
        return cors.with_cors(response, origin)

    def route(self, request: Request) -> Response:
        path = request.path.strip("/")
        if path == ".well-known/jwks.json" and request.method == "GET":
            return Response.json(200, {"keys": [self.jwk]})
        query = dict(request.query)
        if path == "token" and request.method == "POST":
            grant = query.get("grant_type")
            if grant == "password":
                return self.password_grant(request)
            if grant == "refresh_token":
                return self.refresh_grant(request)
            raise AuthError(400, "validation_failed", "unsupported_grant_type")
        if path == "user" and request.method == "GET":
            user, _ = self.authenticated(request)
            return Response.json(200, public_user(user))
        if path == "logout" and request.method == "POST":
            return self.logout(request, query.get("scope", "global"))
        if path == "admin/users" or path.startswith("admin/users/"):
            self.require_admin(request)
            return users.admin(self.state, request, path.removeprefix("admin/users").strip("/"), query)
        raise AuthError(404, "not_found", "Not Found")

    # -- API keys ------------------------------------------------------------------------------

    def legacy_key_role(self, token: str) -> str | None:
        """The role of a legacy anon/service_role key (an HS256 JWT with the project's JWT secret)."""
        try:
            return str(
                jwt.decode(token, self.keys.jwt_secret, algorithms=["HS256"], options={"verify_aud": False})["role"]
            )
        except (jwt.InvalidTokenError, KeyError):
            return None

    def require_admin(self, request: Request) -> None:
        """GoTrue's requireAdmin: the Bearer token's role must be service_role (for a secret key in
        apikey, the gateway hands on a service_role JWT, as Supabase's does)."""
        scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise AuthError(401, "no_authorization", "This endpoint requires a valid Bearer token")
        if self.legacy_key_role(token.strip()) not in ADMIN_ROLES:
            raise AuthError(403, "not_admin", "User not allowed")

    # -- sessions ------------------------------------------------------------------------------

    def access_token_seconds(self) -> int:
        return int(self.state.data["settings"].get("access_token_seconds", DEFAULT_ACCESS_TOKEN_SECONDS))

    def configure(self, settings: dict[str, Any]) -> None:
        """Tests only: {"access_token_seconds": N, "refresh_reuse_interval_s": N}; null restores the default."""
        with self.state.lock:
            for name in ("access_token_seconds", "refresh_reuse_interval_s"):
                if name in settings:
                    if settings[name] is None:
                        self.state.data["settings"].pop(name, None)
                    else:
                        self.state.data["settings"][name] = float(settings[name])
            self.state.save()

    def issue(self, user: dict[str, Any], session_id: str, refresh_token: str) -> dict[str, Any]:
        issued = int(time.time())
        lifetime = int(self.access_token_seconds())
        claims = {
            "iss": self.issuer,
            "sub": user["id"],
            "aud": AUDIENCE,
            "exp": issued + lifetime,
            "iat": issued,
            "email": user["email"],
            "phone": "",
            "app_metadata": user["app_metadata"],
            "user_metadata": user["user_metadata"],
            "role": "authenticated",
            "aal": "aal1",
            "amr": [{"method": "password", "timestamp": issued}],
            "session_id": session_id,
            "is_anonymous": False,
        }
        token = jwt.encode(claims, self.private_key, algorithm="ES256", headers={"kid": self.keys.key_id})
        return {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": lifetime,
            "expires_at": issued + lifetime,
            "refresh_token": refresh_token,
            "user": public_user(user),
        }

    def password_grant(self, request: Request) -> Response:
        body = json_body(request)
        email, password = str(body.get("email") or "").strip().lower(), str(body.get("password") or "")
        if not email:
            raise AuthError(400, "validation_failed", "missing email or phone")
        with self.state.lock:
            user = next((u for u in self.state.data["users"].values() if u["email"] == email), None)
            if user is None or not password_matches(password, user["password_hash"]):
                raise AuthError(400, "invalid_credentials", "Invalid login credentials")
            session_id = str(uuid.uuid4())
            refresh_token = secrets.token_urlsafe(16)
            self.state.data["sessions"][session_id] = {"user_id": user["id"], "created_at": now_iso()}
            self.state.data["refresh_tokens"][refresh_token] = {
                "session_id": session_id,
                "used_at": None,
                "child": None,
            }
            user["last_sign_in_at"] = now_iso()
            self.state.save()
        return Response.json(200, self.issue(user, session_id, refresh_token))

    def refresh_grant(self, request: Request) -> Response:
        presented = str(json_body(request).get("refresh_token") or "")
        with self.state.lock:
            record = self.state.data["refresh_tokens"].get(presented)
            session = self.state.data["sessions"].get(record["session_id"]) if record else None
            if record is None or session is None:
                raise AuthError(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
            if record["used_at"] is not None:
                reuse_interval = self.state.data["settings"].get("refresh_reuse_interval_s", REFRESH_REUSE_INTERVAL_S)
                if time.time() - record["used_at"] > reuse_interval:
                    self.end_sessions([record["session_id"]])
                    self.state.save()
                    raise AuthError(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
                child = record["child"]  # within the reuse interval: the session its first use made
            else:
                child = secrets.token_urlsafe(16)
                record["used_at"], record["child"] = time.time(), child
                self.state.data["refresh_tokens"][child] = {"session_id": record["session_id"], "used_at": None,
                                                            "child": None}  # fmt: skip
            user = self.state.data["users"].get(session["user_id"])
            if user is None:
                raise AuthError(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
            self.state.save()
        return Response.json(200, self.issue(user, record["session_id"], child))

    def end_sessions(self, session_ids: list[str]) -> None:
        """Called with the state's lock held."""
        for session_id in session_ids:
            self.state.data["sessions"].pop(session_id, None)
        tokens = self.state.data["refresh_tokens"]
        for token in [t for t, r in tokens.items() if r["session_id"] in session_ids]:
            del tokens[token]

    def authenticated(self, request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        """GoTrue's requireAuthentication: the Bearer access token, verified, and its user and session."""
        scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError(401, "no_authorization", "This endpoint requires a valid Bearer token")
        # The signing key, or the legacy JWT secret: a project moving to signing keys trusts both
        # (docs/guides/auth/signing-keys), so tokens signed before the rotation keep working.
        try:
            legacy = jwt.get_unverified_header(token.strip()).get("alg") == "HS256"
            key: Any = self.keys.jwt_secret if legacy else self.private_key.public_key()
            claims = jwt.decode(token.strip(), key, algorithms=["HS256" if legacy else "ES256"], audience=AUDIENCE,
                                options={"require": ["exp", "sub"]})  # fmt: skip
        except jwt.ExpiredSignatureError as error:
            raise AuthError(
                403,
                "bad_jwt",
                "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired",
            ) from error
        except jwt.InvalidTokenError as error:
            raise AuthError(403, "bad_jwt", f"invalid JWT: unable to parse or verify signature, {error}") from error
        with self.state.lock:
            user = self.state.data["users"].get(claims["sub"])
            if user is None:
                raise AuthError(403, "user_not_found", "User from sub claim in JWT does not exist")
            if claims.get("session_id") not in self.state.data["sessions"]:
                raise AuthError(403, "session_not_found", "Session from session_id claim in JWT does not exist")
            return user, claims

    def logout(self, request: Request, scope: str) -> Response:
        """GoTrue's Logout (internal/api/logout.go), after requireAuthentication: scope "global" (also
        when empty; the default, and supabase-js's signOut() default) ends every session of the user,
        "local" the token's own, "others" all but it; any other scope is refused."""
        user, claims = self.authenticated(request)
        if scope not in ("", "global", "local", "others"):
            raise AuthError(400, "validation_failed", f'Unsupported logout scope "{scope}"')
        with self.state.lock:
            own = claims["session_id"]
            users = [sid for sid, session in self.state.data["sessions"].items() if session["user_id"] == user["id"]]
            self.end_sessions([own] if scope == "local" else [s for s in users if s != own or scope != "others"])
            self.state.save()
        return Response(204)
