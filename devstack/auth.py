"""Stand-in for Supabase Auth (GoTrue) under /auth/v1 of the local gateway. Local stack only: never
deployed, and nothing in lib/ or api/ imports it. It answers what the admin screen and its CLI
send, as the real service answers, from its public reference and source:

- POST /token?grant_type=password {"email", "password"} and ?grant_type=refresh_token
  {"refresh_token"}: a session {"access_token", "token_type": "bearer", "expires_in", "expires_at",
  "refresh_token", "user"}. Refresh tokens rotate: each is used once; used again within 10 s (the
  reuse interval) it answers the session its first use made, later "refresh_token_already_used"
  and the session is ended (reuse detection). A wrong password: 400 invalid_credentials
  "Invalid login credentials" (supabase.com/docs/guides/auth/debugging/error-codes).
- Access tokens are JWTs signed with an ES256 key (supabase.com/docs/guides/auth/signing-keys),
  whose public part is served at GET /.well-known/jwks.json with its "kid" and "alg"
  (docs/guides/auth/jwts, "Verifying a JWT from Supabase"); the claims of
  docs/guides/auth/jwt-fields: iss ({SUPABASE_URL}/auth/v1), aud authenticated, exp, iat, sub,
  email, phone, role authenticated, aal, amr, session_id, is_anonymous, app_metadata,
  user_metadata.
- GET /user with the access token: the user as stored now (app_metadata as it is, not as the
  token says); 403 session_not_found once the session is gone ("Session from session_id claim in
  JWT does not exist"), 403 bad_jwt for an expired or forged token, 401 no_authorization without.
- POST /logout?scope=global|local|others: ends the sessions (their refresh tokens stop working;
  access tokens stay valid until they expire, as JWTs do).
- The admin API (docs: reference/javascript/auth-admin-createuser and the admin users pages),
  for the secret key (legacy: the service_role JWT as Bearer): POST /admin/users {"email",
  "password", "email_confirm", "app_metadata", "user_metadata"}, GET /admin/users?page=&per_page=
  ({"users", "aud"}, X-Total-Count and Link headers), GET/PUT/DELETE /admin/users/{id}. PUT merges
  app_metadata key by key, and a key set to null is removed (GoTrue's UpdateAppMetaData).
- Errors in GoTrue's shape: {"code": <status>, "error_code", "msg"}, or {"code": <error_code>,
  "message"} when the request names X-Supabase-Api-Version 2024-01-01 or later
  (github.com/supabase/auth internal/api/errors.go), echoing the version.
- CORS as GoTrue's handler (rs/cors, github.com/supabase/auth internal/api/api.go) answers it: a
  preflight (OPTIONS with Access-Control-Request-Method) gets 200 and, when its origin is given,
  its method is one of GET, POST, PUT, DELETE and every header it asks for is allowed, the origin
  echoed, the method, the headers asked for, Access-Control-Allow-Credentials: true and Vary;
  anything else gets the Vary headers alone (so the browser refuses the request). Allowed
  headers: GoTrue's list (Accept, Authorization, Content-Type, X-Client-IP, X-Client-Info,
  X-JWT-AUD, X-Use-Cookie, X-Supabase-Api-Version) and apikey, which Supabase's gateway takes
  in front of it. Other answers to a request with an Origin echo it, with
  Access-Control-Expose-Headers: X-Total-Count, Link, X-Supabase-Api-Version.
- API keys are the gateway's (devstack/gateway.py applies Supabase's key rules to every path,
  the JWKS included, before Auth sees a request; a preflight needs none).

Left out: sign-ups, magic links, OTP, MFA, OAuth, e-mail confirmation mails, rate limits, hooks.
Users and sessions live in a JSON file (DEVSTACK_FOLDER/auth.json), so that a restarted gateway
keeps them. POST /_control/auth {"access_token_seconds": N, "refresh_reuse_interval_s": N} (on the
gateway) shortens the tokens it issues and the reuse interval, for tests of refreshing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from devstack.messages import Request, Response

AUDIENCE = "authenticated"
DEFAULT_ACCESS_TOKEN_SECONDS = 3600
REFRESH_REUSE_INTERVAL_S = 10
MIN_PASSWORD_LENGTH = 6
ADMIN_ROLES = ("service_role", "supabase_admin")
CORS_METHODS = ("GET", "POST", "PUT", "DELETE")
CORS_HEADERS = frozenset(
    h.lower()
    for h in (
        "Accept", "Authorization", "Content-Type", "X-Client-IP", "X-Client-Info", "X-JWT-AUD", "X-Use-Cookie",
        "X-Supabase-Api-Version", "Origin", "apikey",
    )
)  # fmt: skip
EXPOSED_HEADERS = "X-Total-Count, Link, X-Supabase-Api-Version"
API_VERSION_HEADER = "X-Supabase-Api-Version"
NEW_ERROR_SHAPE_SINCE = "2024-01-01"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def password_matches(password: str, stored: str) -> bool:
    _, salt, _ = stored.split("$")
    return hmac.compare_digest(hash_password(password, base64.b64decode(salt)), stored)


class AuthError(Exception):
    def __init__(self, status: int, error_code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error_code, self.message = status, error_code, message


@dataclass(frozen=True)
class Keys:
    """The keys the stack made: the ES256 signing key, and the legacy JWT secret."""

    signing_key_pem: str
    key_id: str
    # Signs the legacy anon and service_role keys, and the role JWTs the gateway hands on for a
    # publishable or secret key.
    jwt_secret: str


class State:
    """Users, sessions and refresh tokens, in one JSON file written after every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.data: dict[str, Any] = {"users": {}, "sessions": {}, "refresh_tokens": {}, "settings": {}}
        if path.exists():
            self.data = json.loads(path.read_text())

    def save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data))
        temporary.replace(self.path)


class Auth:
    def __init__(self, state_path: Path, keys: Keys, issuer: str) -> None:
        self.state = State(state_path)
        self.keys = keys
        self.issuer = issuer
        private_key = load_pem_private_key(keys.signing_key_pem.encode(), password=None)
        assert isinstance(private_key, ec.EllipticCurvePrivateKey)
        self.private_key = private_key
        public = jwt.algorithms.ECAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
        self.jwk = {**public, "kid": keys.key_id, "alg": "ES256", "use": "sig", "key_ops": ["verify"]}

    # -- entry point ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS" and request.headers.get("Access-Control-Request-Method"):
            return self.preflight(request, origin)
        try:
            response = self.route(request)
        except AuthError as error:
            response = self.error(request, error)
        return self.with_cors(response, origin)

    def preflight(self, request: Request, origin: str | None) -> Response:
        headers = {"Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}
        method = (request.headers.get("Access-Control-Request-Method") or "").upper()
        asked = [
            h.strip() for h in (request.headers.get("Access-Control-Request-Headers") or "").split(",") if h.strip()
        ]
        if origin and method in (*CORS_METHODS, "OPTIONS") and all(h.lower() in CORS_HEADERS for h in asked):
            headers |= {
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": method,
                "Access-Control-Allow-Credentials": "true",
            }
            if asked:
                headers["Access-Control-Allow-Headers"] = ", ".join(asked)
        return Response(200, b"", headers)

    @staticmethod
    def with_cors(response: Response, origin: str | None) -> Response:
        response.headers["Vary"] = "Origin"
        if origin:
            response.headers |= {
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Credentials": "true",
                "Access-Control-Expose-Headers": EXPOSED_HEADERS,
            }
        return response

    def error(self, request: Request, error: AuthError) -> Response:
        version = request.headers.get(API_VERSION_HEADER) or ""
        if version >= NEW_ERROR_SHAPE_SINCE:
            body: dict[str, Any] = {"code": error.error_code, "message": error.message}
            return Response.json(error.status, body, {API_VERSION_HEADER: NEW_ERROR_SHAPE_SINCE})
        return Response.json(error.status, {"code": error.status, "error_code": error.error_code, "msg": error.message})

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
            return Response.json(200, self.public_user(user))
        if path == "logout" and request.method == "POST":
            return self.logout(request, query.get("scope", "global"))
        if path == "admin/users" or path.startswith("admin/users/"):
            self.require_admin(request)
            return self.admin(request, path.removeprefix("admin/users").strip("/"), query)
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
            "user": self.public_user(user),
        }

    def password_grant(self, request: Request) -> Response:
        body = self.json_body(request)
        email, password = str(body.get("email") or "").strip().lower(), str(body.get("password") or "")
        if not email:
            raise AuthError(400, "validation_failed", "missing email or phone")
        with self.state.lock:
            user = next((u for u in self.state.data["users"].values() if u["email"] == email), None)
            if user is None or not password_matches(password, user["password_hash"]):
                raise AuthError(400, "invalid_credentials", "Invalid login credentials")
            if user.get("banned_until") and user["banned_until"] > now_iso():
                raise AuthError(400, "user_banned", "User is banned")
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
        presented = str(self.json_body(request).get("refresh_token") or "")
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
        if scope not in ("global", "local", "others"):
            raise AuthError(400, "validation_failed", "Unsupported logout scope")
        user, claims = self.authenticated(request)
        with self.state.lock:
            sessions = [s for s, v in self.state.data["sessions"].items() if v["user_id"] == user["id"]]
            if scope == "local":
                sessions = [claims["session_id"]]
            elif scope == "others":
                sessions = [s for s in sessions if s != claims["session_id"]]
            self.end_sessions(sessions)
            self.state.save()
        return Response(204)

    # -- the admin API -------------------------------------------------------------------------

    def admin(self, request: Request, user_id: str, query: dict[str, str]) -> Response:
        if not user_id:
            if request.method == "GET":
                return self.list_users(query)
            if request.method == "POST":
                return self.create_user(self.json_body(request))
            raise AuthError(405, "method_not_allowed", "Method Not Allowed")
        if not _UUID.match(user_id):
            raise AuthError(400, "validation_failed", "user_id must be an UUID")
        with self.state.lock:
            user = self.state.data["users"].get(user_id)
            if user is None:
                raise AuthError(404, "user_not_found", "User not found")
            if request.method == "GET":
                return Response.json(200, self.public_user(user))
            if request.method == "PUT":
                self.update_user(user, self.json_body(request))
                self.state.save()
                return Response.json(200, self.public_user(user))
            if request.method == "DELETE":
                del self.state.data["users"][user_id]
                self.end_sessions([s for s, v in self.state.data["sessions"].items() if v["user_id"] == user_id])
                self.state.save()
                return Response.json(200, {})
        raise AuthError(405, "method_not_allowed", "Method Not Allowed")

    def list_users(self, query: dict[str, str]) -> Response:
        try:
            page, per_page = int(query.get("page", "1")), int(query.get("per_page", "50"))
        except ValueError as error:
            raise AuthError(400, "validation_failed", "Bad Pagination Parameters") from error
        if page < 1 or per_page < 1:
            raise AuthError(400, "validation_failed", "Bad Pagination Parameters")
        with self.state.lock:
            users = sorted(self.state.data["users"].values(), key=lambda u: u["created_at"], reverse=True)
        chunk = users[(page - 1) * per_page : page * per_page]
        links = []
        if page * per_page < len(users):
            links.append(f'</admin/users?{urlencode({"page": page + 1, "per_page": per_page})}>; rel="next"')
        last = max(1, -(-len(users) // per_page))
        links.append(f'</admin/users?{urlencode({"page": last, "per_page": per_page})}>; rel="last"')
        body = {"users": [self.public_user(u) for u in chunk], "aud": AUDIENCE}
        return Response.json(200, body, {"X-Total-Count": str(len(users)), "Link": ", ".join(links)})

    def create_user(self, body: dict[str, Any]) -> Response:
        email = str(body.get("email") or "").strip().lower()
        if not email:
            raise AuthError(422, "validation_failed", "Cannot create a user without either an email or phone")
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
            raise AuthError(400, "validation_failed", "Unable to validate email address: invalid format")
        password = body.get("password") or secrets.token_urlsafe(32)
        if len(str(password)) < MIN_PASSWORD_LENGTH:
            raise AuthError(422, "weak_password", f"Password should be at least {MIN_PASSWORD_LENGTH} characters.")
        with self.state.lock:
            if any(u["email"] == email for u in self.state.data["users"].values()):
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
            self.update_user(user, {"app_metadata": body.get("app_metadata")})
            self.state.data["users"][user["id"]] = user
            self.state.save()
        return Response.json(200, self.public_user(user))

    def update_user(self, user: dict[str, Any], body: dict[str, Any]) -> None:
        for field in ("app_metadata", "user_metadata"):
            for key, value in (body.get(field) or {}).items():
                if value is None:
                    user[field].pop(key, None)
                else:
                    user[field][key] = value
        if body.get("password"):
            if len(str(body["password"])) < MIN_PASSWORD_LENGTH:
                raise AuthError(422, "weak_password", f"Password should be at least {MIN_PASSWORD_LENGTH} characters.")
            user["password_hash"] = hash_password(str(body["password"]))
        if "ban_duration" in body:
            duration = str(body["ban_duration"])
            user["banned_until"] = None if duration == "none" else datetime.fromtimestamp(
                time.time() + _duration_seconds(duration), UTC).isoformat().replace("+00:00", "Z")  # fmt: skip
        user["updated_at"] = now_iso()

    @staticmethod
    def public_user(user: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in user.items() if key != "password_hash"}

    @staticmethod
    def json_body(request: Request) -> dict[str, Any]:
        try:
            body = json.loads(request.body or b"{}")
        except ValueError as error:
            raise AuthError(400, "bad_json", "Could not parse request body as JSON") from error
        if not isinstance(body, dict):
            raise AuthError(400, "bad_json", "Could not parse request body as JSON")
        return body


def _duration_seconds(text: str) -> float:
    """Go's time.ParseDuration for the forms GoTrue's ban_duration takes: 24h, 30m, 90s."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(h|m|s)", text)
    if not match:
        raise AuthError(400, "validation_failed", f"invalid format for ban duration: {text}")
    return float(match[1]) * {"h": 3600, "m": 60, "s": 1}[match[2]]


def new_signing_key() -> tuple[str, str]:
    """A fresh ES256 (P-256) signing key as PEM, and a key id, as a project's first signing key."""
    from cryptography.hazmat.primitives import serialization

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem.decode(), str(uuid.uuid4())
