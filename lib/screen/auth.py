"""Who calls the admin API, and what they may do: an operator of Supabase Auth, by their access token.

As Supabase documents it (docs: guides/auth/jwts "Verifying a JWT from Supabase",
guides/auth/signing-keys, guides/auth/jwt-fields, custom-claims-and-role-based-access-control-rbac):

- A token signed with an asymmetric key (ES256, RS256: every current project) is verified here,
  against the project's JWKS ({SUPABASE_URL}/auth/v1/.well-known/jwks.json) with PyJWT's
  PyJWKClient: its "kid" picks the key, whose "alg" must be the token's. The key set is cached
  per process for 10 minutes (Supabase's own edge caches it for 10; its guide asks not to cache
  longer, or revoking a key would take longer to bite), by one client per URL that serializes its
  fetches (PyJWKClient's lock), so that the threads of a Fluid compute instance share it. A key id
  it does not know makes it fetch again at once (a rotation), but at most every 30 seconds: tokens
  naming made-up key ids cannot turn into a flood of fetches.
- A token signed with the legacy HS256 JWT secret (an older project) is verified with
  SUPABASE_JWT_SECRET when it is set, else by asking Auth (GET /auth/v1/user), as the guide
  recommends for a shared secret.
- Then the claims: exp (a 10 s leeway for clocks), iss ({SUPABASE_URL}/auth/v1), aud
  "authenticated", sub, role "authenticated", not an anonymous user.
- The operator's role is app_metadata.document_jobs_role: "admin" (may do everything), "clerk"
  (may read, and mark who is dealing with a fax) or "viewer" (may read); anything else, or none,
  is a 403. user_metadata is never read: users can write it.
- A token stays valid for up to an hour after its user is removed, banned or deleted, their role
  changes, or they sign out. So every read's own database call checks the user, the role and the
  session as Auth stores them now, in the same statement (the document_jobs_operator_* functions
  take the token's sub and session_id claim, and read auth.users and auth.sessions: Supabase Auth
  keeps them in the project's database); and before any action the role is also confirmed with
  Auth itself (confirm_role: GET /auth/v1/user with the token answers the user as stored now, and
  refuses a token whose session has ended).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
import jwt
from jwt import PyJWKClient

from lib.errors import Refusal
from lib.settings import AdminSettings
from lib.supabase.keys import request_headers

ROLE_CLAIM = "document_jobs_role"
ROLES = ("admin", "clerk", "viewer")
Role = Literal["admin", "clerk", "viewer"]
# Who may do what, beyond reading (every role reads): an admin everything, a clerk marks faxes and
# enters their index fields.
ADMIN_ONLY: tuple[Role, ...] = ("admin",)
MARKERS: tuple[Role, ...] = ("admin", "clerk")
AUDIENCE = "authenticated"
ASYMMETRIC = ("ES256", "RS256")
JWKS_LIFESPAN_S = 600
JWKS_REFETCH_COOLDOWN_S = 30
JWKS_TIMEOUT_S = 5
CLOCK_LEEWAY_S = 10
AUTH_TIMEOUT = httpx.Timeout(10.0, connect=5.0)


@dataclass(frozen=True)
class Operator:
    user_id: str
    email: str | None
    role: Role  # as the token says: the database's functions check it as stored now
    session_id: str | None = None  # the token's session_id claim (Auth's auth.sessions row)


def unauthenticated(code: str, message: str) -> Refusal:
    return Refusal(code, message, 401)


# One JWKS client per JWKS URL for the life of the process: the only state this module keeps, on
# purpose (a cache the requests of one instance share). Created under the lock; the client
# serializes its own fetches.
_JWKS_CLIENTS: dict[str, PyJWKClient] = {}
_JWKS_CLIENTS_LOCK = threading.Lock()


def jwks_client(settings: AdminSettings) -> PyJWKClient:
    url = f"{settings.auth_url}/.well-known/jwks.json"
    with _JWKS_CLIENTS_LOCK:
        client = _JWKS_CLIENTS.get(url)
        if client is None:
            client = PyJWKClient(
                url,
                cache_jwk_set=True,
                lifespan=JWKS_LIFESPAN_S,
                cooldown_duration=JWKS_REFETCH_COOLDOWN_S,
                timeout=JWKS_TIMEOUT_S,
                # Sent although the endpoint may be open: the strictest reading of the gateway's rules.
                headers={**request_headers(settings.browser_key), "User-Agent": "document-jobs-admin"},
            )
            _JWKS_CLIENTS[url] = client
        return client


def bearer_token(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthenticated("missing_token", "sign in: this request carries no access token")
    return token.strip()


def verify(token: str, settings: AdminSettings, http: httpx.Client) -> dict[str, Any]:
    """The token's claims once its signature and claims hold; a Refusal (401) otherwise, or 503 when
    the keys cannot be fetched. For an HS256 token without the JWT secret here, Auth's own record
    of the user stands in for the claims (its id as sub, its app_metadata)."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise unauthenticated("invalid_token", "the access token is not a JWT") from None
    algorithm = header.get("alg")
    if algorithm in ASYMMETRIC:
        key = signing_key(settings, header.get("kid"))
        if key.algorithm_name != algorithm:
            raise unauthenticated("invalid_token", "the access token's algorithm is not its key's")
        return decode(token, key.key, algorithm, settings)
    if algorithm == "HS256":
        if settings.supabase_jwt_secret is not None:
            return decode(token, settings.supabase_jwt_secret.get_secret_value(), "HS256", settings)
        user = current_user(token, settings, http)
        # Auth has just vouched for the token: its session_id claim can be read as it is.
        session_id = jwt.decode(token, options={"verify_signature": False}).get("session_id")
        return {"sub": user["id"], "email": user.get("email"), "app_metadata": user.get("app_metadata") or {},
                "role": user.get("role"), "is_anonymous": user.get("is_anonymous", False),
                "session_id": session_id}  # fmt: skip
    raise unauthenticated("invalid_token", "the access token is signed with an algorithm Supabase Auth does not use")


def signing_key(settings: AdminSettings, key_id: Any) -> jwt.PyJWK:
    if not isinstance(key_id, str) or not key_id:
        raise unauthenticated("invalid_token", "the access token names no signing key")
    try:
        return jwks_client(settings).get_signing_key(key_id)
    except jwt.PyJWKClientConnectionError:
        raise Refusal("auth_unavailable", "Supabase Auth's signing keys could not be fetched; try again", 503) from None
    except jwt.PyJWKClientError:
        raise unauthenticated("invalid_token", "the access token is not signed by a key of this project") from None


def decode(token: str, key: Any, algorithm: str, settings: AdminSettings) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            audience=AUDIENCE,
            issuer=settings.auth_url,
            leeway=CLOCK_LEEWAY_S,
            options={"require": ["exp", "iat", "sub", "aud", "iss"]},
        )
    except jwt.ExpiredSignatureError:
        raise unauthenticated("token_expired", "your session has expired: sign in again") from None
    except jwt.InvalidTokenError:
        raise unauthenticated("invalid_token", "the access token is not valid for this project") from None
    return claims


def operator(claims: dict[str, Any]) -> Operator:
    """The operator the claims name, with their role from app_metadata; 403 without one."""
    if claims.get("role") != "authenticated" or claims.get("is_anonymous") is True:
        raise Refusal("no_role", "this account may not use the admin screen", 403)
    app_metadata = claims.get("app_metadata")
    role = app_metadata.get(ROLE_CLAIM) if isinstance(app_metadata, dict) else None
    if role not in ROLES:
        raise Refusal("no_role", "this account has no role on the admin screen (ask an admin)", 403)
    email, session_id = claims.get("email"), claims.get("session_id")
    return Operator(user_id=str(claims["sub"]), email=email if isinstance(email, str) else None, role=role,
                    session_id=session_id if isinstance(session_id, str) else None)  # fmt: skip


def authenticate(authorization: str | None, settings: AdminSettings, http: httpx.Client) -> tuple[Operator, str]:
    """The operator of a request (an admin or a viewer) and their token."""
    token = bearer_token(authorization)
    return operator(verify(token, settings, http)), token


def current_user(token: str, settings: AdminSettings, http: httpx.Client) -> dict[str, Any]:
    """Auth's record of the token's user as it is now (GET /auth/v1/user)."""
    try:
        response = http.get(
            f"{settings.auth_url}/user",
            headers=request_headers(settings.browser_key, access_token=token),
            timeout=AUTH_TIMEOUT,
        )
    except httpx.HTTPError:
        raise Refusal("auth_unavailable", "Supabase Auth could not be reached; try again", 503) from None
    if response.status_code in (401, 403, 404):
        raise unauthenticated("session_ended", "your session has ended: sign in again")
    if not response.is_success:
        raise Refusal("auth_unavailable", f"Supabase Auth answered {response.status_code}; try again", 503)
    user = response.json()
    if not isinstance(user, dict) or not isinstance(user.get("id"), str):
        raise Refusal("auth_unavailable", "Supabase Auth answered something unexpected; try again", 503)
    return user


def role_refusal(role: str, allowed: tuple[Role, ...]) -> Refusal:
    """The 403 for a role that may not do this: an admin's action (not_admin), or a clerk's (read_only:
    a mark, the index fields)."""
    if allowed == ADMIN_ONLY:
        return Refusal("not_admin", f"only an admin may do this; your role is {role}", 403)
    return Refusal("read_only", f"a {role} may only read: this is for a clerk or an admin", 403)


def confirm_role(
    who: Operator, token: str, settings: AdminSettings, http: httpx.Client, allowed: tuple[Role, ...]
) -> Operator:
    """Before an action: the operator has one of the allowed roles now, by Auth's current record,
    not only the token's."""
    user = current_user(token, settings, http)
    banned_until = user.get("banned_until")
    if user["id"] != who.user_id or (isinstance(banned_until, str) and _after_now(banned_until)):
        raise unauthenticated("session_ended", "your session has ended: sign in again")
    now = operator({**user, "sub": user["id"], "role": "authenticated", "session_id": who.session_id})
    if now.role not in allowed:
        raise role_refusal(now.role, allowed)
    return now


def _after_now(timestamp: str) -> bool:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")) > datetime.now(UTC)
    except ValueError:
        return True  # a ban we cannot read is a ban
