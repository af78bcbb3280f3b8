"""The Auth service behind the gateway's /auth/v1: its routes, the API keys it trusts for the admin
API, and sessions, in GoTrue's tables (state.py): the password and refresh-token grants (refresh
tokens rotate, with GoTrue's reuse interval and reuse detection: github.com/supabase/auth
internal/tokens/service.go), access tokens signed with the ES256 key, GET /user (its
requireAuthentication: the user and the session of the token must still exist, and the user must
not be banned), and POST /logout?scope=global|local|others (internal/api/logout.go: global, the
default, deletes every session of the user; local the token's own; others every other one; the
refresh tokens go with their sessions)."""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any

import jwt

from devstack.standins.auth import cors, mail, users
from devstack.standins.auth.errors import AuthError, error_response, json_body
from devstack.standins.auth.keys import Keys, jwk, private_key
from devstack.standins.auth.state import USER_COLUMNS, State, public_user
from devstack.standins.auth.users import AUDIENCE
from devstack.standins.messages import Request, Response

DEFAULT_ACCESS_TOKEN_SECONDS = 3600
REFRESH_REUSE_INTERVAL_S = 10.0
LOGOUT_SCOPES = ("global", "local", "others")
ADMIN_ROLES = ("service_role", "supabase_admin")


class Auth:
    def __init__(self, state: State, keys: Keys, issuer: str) -> None:
        self.state = state
        self.keys = keys
        self.issuer = issuer
        self.private_key = private_key(keys)
        self.jwk = jwk(keys)
        self.outbox = mail.Outbox()

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
        if path == "user" and request.method == "PUT":
            return self.update_user(request)
        if path == "logout" and request.method == "POST":
            return self.logout(request, query.get("scope") or "global")
        if path == "recover" and request.method == "POST":
            return self.recover(request, query)
        if path == "verify" and request.method == "GET":
            return self.verify(request, query)
        if path == "invite" and request.method == "POST":
            self.require_admin(request)
            return self.invite(request, query)
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
        seconds = self.state.settings.access_token_seconds
        return int(DEFAULT_ACCESS_TOKEN_SECONDS if seconds is None else seconds)

    def reuse_interval_s(self) -> float:
        seconds = self.state.settings.refresh_reuse_interval_s
        return REFRESH_REUSE_INTERVAL_S if seconds is None else seconds

    def configure(self, settings: dict[str, Any]) -> None:
        """Tests only: {"access_token_seconds": N, "refresh_reuse_interval_s": N}; null restores the
        default. And the project's settings of e-mailed links (mail.Outbox.configure): "site_url",
        "uri_allow_list", "max_frequency_s", "emails_per_hour"."""
        self.outbox.configure(settings)
        with self.state.settings.lock:
            for name in ("access_token_seconds", "refresh_reuse_interval_s"):
                if name in settings:
                    value = settings[name]
                    setattr(self.state.settings, name, None if value is None else float(value))

    def issue(
        self, user: dict[str, Any], session_id: str, refresh_token: str, method: str = "password"
    ) -> dict[str, Any]:
        issued = int(time.time())
        lifetime = self.access_token_seconds()
        public = public_user(user)
        claims = {
            "iss": self.issuer,
            "sub": public["id"],
            "aud": AUDIENCE,
            "exp": issued + lifetime,
            "iat": issued,
            "email": public["email"],
            "phone": public["phone"],
            "app_metadata": public["app_metadata"],
            "user_metadata": public["user_metadata"],
            "role": "authenticated",
            "aal": "aal1",
            "amr": [{"method": method, "timestamp": issued}],
            "session_id": session_id,
            "is_anonymous": public["is_anonymous"],
        }
        token = jwt.encode(claims, self.private_key, algorithm="ES256", headers={"kid": self.keys.key_id})
        return {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": lifetime,
            "expires_at": issued + lifetime,
            "refresh_token": refresh_token,
            "user": public,
        }

    def password_grant(self, request: Request) -> Response:
        body = json_body(request)
        email, password = str(body.get("email") or "").strip().lower(), str(body.get("password") or "")
        if not email:
            raise AuthError(400, "validation_failed", "missing email or phone")
        with self.state.transaction() as cursor:
            user = cursor.execute(
                f"select {USER_COLUMNS}, encrypted_password = extensions.crypt(%s, encrypted_password) as matches,"
                " banned_until is not null and banned_until > now() as banned"
                " from auth.users where email = %s and aud = %s and encrypted_password is not null",
                (password, email, AUDIENCE),
            ).fetchone()
            if user is None:
                raise AuthError(400, "invalid_credentials", "Invalid login credentials")
            # GoTrue checks the ban before the password (internal/api/token.go).
            if user["banned"]:
                raise AuthError(400, "user_banned", "User is banned")
            if not user["matches"]:
                raise AuthError(400, "invalid_credentials", "Invalid login credentials")
            session_id, refresh_token = self.new_session(cursor, user["id"])
            user = cursor.execute(f"update auth.users set last_sign_in_at = now(), updated_at = now() where id = %s"
                                  f" returning {USER_COLUMNS}", (user["id"],)).fetchone()  # fmt: skip
        assert user is not None
        return Response.json(200, self.issue(user, session_id, refresh_token))

    def new_session(self, cursor: Any, user_id: Any) -> tuple[str, str]:
        """A session of the user and its first refresh token."""
        session_id = str(uuid.uuid4())
        refresh_token = secrets.token_urlsafe(16)
        cursor.execute("insert into auth.sessions (id, user_id, created_at, updated_at, aal)"
                       " values (%s, %s, now(), now(), 'aal1')", (session_id, user_id))  # fmt: skip
        self.new_refresh_token(cursor, refresh_token, user_id, session_id, parent=None)
        return session_id, refresh_token

    @staticmethod
    def new_refresh_token(cursor: Any, token: str, user_id: Any, session_id: str, parent: str | None) -> None:
        cursor.execute(
            "insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent,"
            " session_id) values ('00000000-0000-0000-0000-000000000000', %s, %s, false, now(), now(), %s, %s)",
            (token, str(user_id), parent, session_id),
        )

    def refresh_grant(self, request: Request) -> Response:
        presented = str(json_body(request).get("refresh_token") or "")
        already_used = False
        user: dict[str, Any] | None = None
        with self.state.transaction() as cursor:
            found = cursor.execute(
                """select t.token, t.revoked, t.session_id, t.updated_at + make_interval(secs => %s) < now() as stale,
                          s.not_after is not null and s.not_after < now() as session_expired,
                          u.banned_until is not null and u.banned_until > now() as banned, u.id as user_id
                     from auth.refresh_tokens t
                     join auth.sessions s on s.id = t.session_id
                     join auth.users u on u.id = s.user_id
                    where t.token = %s
                    for update of t, s""",
                (self.reuse_interval_s(), presented),
            ).fetchone()
            if found is None:
                raise AuthError(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
            if found["banned"]:
                raise AuthError(400, "user_banned", "Invalid Refresh Token: User Banned")
            if found["session_expired"]:
                raise AuthError(400, "session_expired", "Invalid Refresh Token: Session Expired")
            issued: str | None = None
            if found["revoked"]:
                active = cursor.execute("select token, parent from auth.refresh_tokens where session_id = %s"
                                        " and not revoked order by id desc limit 1",
                                        (found["session_id"],)).fetchone()  # fmt: skip
                if active is not None and active["parent"] == presented:
                    issued = active["token"]  # its first use's answer never reached the client: the same again
                elif found["stale"]:
                    # Reuse detection: the token family is revoked (RevokeTokenFamily), the error committed.
                    cursor.execute("update auth.refresh_tokens set revoked = true, updated_at = now()"
                                   " where session_id = %s and not revoked", (found["session_id"],))  # fmt: skip
                    already_used = True
            if not already_used:
                if issued is None:  # GrantRefreshTokenSwap: this one revoked, a child issued
                    issued = secrets.token_urlsafe(16)
                    cursor.execute("update auth.refresh_tokens set revoked = true, updated_at = now() where token = %s",
                                   (presented,))  # fmt: skip
                    self.new_refresh_token(cursor, issued, found["user_id"], str(found["session_id"]), presented)
                cursor.execute("update auth.sessions set refreshed_at = now() at time zone 'utc', updated_at = now()"
                               " where id = %s", (found["session_id"],))  # fmt: skip
                user = cursor.execute(f"select {USER_COLUMNS} from auth.users where id = %s",
                                      (found["user_id"],)).fetchone()  # fmt: skip
        if already_used:
            raise AuthError(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
        assert user is not None and issued is not None
        return Response.json(200, self.issue(user, str(found["session_id"]), issued))

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
        try:
            user_id, session_id = uuid.UUID(str(claims["sub"])), uuid.UUID(str(claims.get("session_id")))
        except ValueError as error:
            raise AuthError(403, "bad_jwt", "invalid JWT: unable to parse or verify signature, bad claims") from error
        with self.state.transaction() as cursor:
            user = cursor.execute(
                f"select {USER_COLUMNS}, banned_until is not null and banned_until > now() as banned,"
                " exists (select from auth.sessions s where s.id = %s and s.user_id = u.id) as has_session"
                " from auth.users u where id = %s",
                (session_id, user_id),
            ).fetchone()
        if user is None:
            raise AuthError(403, "user_not_found", "User from sub claim in JWT does not exist")
        if not user["has_session"]:
            raise AuthError(403, "session_not_found", "Session from session_id claim in JWT does not exist")
        if user["banned"]:
            raise AuthError(403, "user_banned", "User is banned")
        return user, claims

    def logout(self, request: Request, scope: str) -> Response:
        if scope not in LOGOUT_SCOPES:
            raise AuthError(400, "validation_failed", f"Unsupported logout scope {scope!r}")
        user, claims = self.authenticated(request)
        condition = {"global": "user_id = %(user)s", "local": "id = %(session)s",
                     "others": "user_id = %(user)s and id <> %(session)s"}[scope]  # fmt: skip
        with self.state.transaction() as cursor:
            # Their refresh tokens go with them (refresh_tokens_session_id_fkey ... on delete cascade).
            cursor.execute(f"delete from auth.sessions where {condition}",
                           {"user": user["id"], "session": claims["session_id"]})  # fmt: skip
        return Response(204)

    # -- e-mailed links (mail.py) -----------------------------------------------------------------

    def redirect_to(self, request: Request, query: dict[str, str]) -> str:
        return self.outbox.redirect_url(query.get("redirect_to"), request.headers.get("Referer"))

    def recover(self, request: Request, query: dict[str, str]) -> Response:
        body = json_body(request)
        if not str(body.get("email") or ""):
            raise AuthError(400, "validation_failed", "Password recovery requires an email")
        email = users.valid_email(str(body["email"]))
        mail.recover(self.state, self.outbox, self.issuer, email, self.redirect_to(request, query))
        return Response.json(200, {})

    def invite(self, request: Request, query: dict[str, str]) -> Response:
        body = json_body(request)
        email = users.valid_email(str(body.get("email") or ""))
        data = body.get("data") or {}
        if not isinstance(data, dict):
            raise AuthError(400, "bad_json", "Could not parse request body as JSON")
        user = mail.invite(self.state, self.outbox, self.issuer, email, data, self.redirect_to(request, query))
        return Response.json(200, public_user(user))

    def verify(self, request: Request, query: dict[str, str]) -> Response:
        kind, token = query.get("type") or "", query.get("token") or ""
        if not kind:
            raise AuthError(400, "validation_failed", "Verify requires a verification type")
        if not token:
            raise AuthError(400, "validation_failed", "Verify requires a token or a token hash")
        target = self.redirect_to(request, query)
        try:
            if kind not in ("recovery", "invite"):
                raise AuthError(400, "validation_failed", "Invalid email verification type")
            user = mail.verified_user(self.state, token, kind)
            with self.state.transaction() as cursor:
                session_id, refresh_token = self.new_session(cursor, user["id"])
            fragment = mail.session_fragment(self.issue(user, session_id, refresh_token, method="otp"), kind)
        except AuthError as error:
            fragment = mail.error_fragment(error)
        else:
            return Response(303, b"", {"Location": f"{target}#{fragment}"})  # AsRedirectURL appends
        # prepErrorRedirectURL sets the fragment.
        return Response(303, b"", {"Location": f"{target.split('#', 1)[0]}#{fragment}"})

    def update_user(self, request: Request) -> Response:
        user, claims = self.authenticated(request)
        body = json_body(request)
        password = body.get("password")
        if password is None:
            return Response.json(200, public_user(user))
        updated = mail.set_password(self.state, str(user["id"]), str(claims["session_id"]), str(password))
        return Response.json(200, public_user(updated))
