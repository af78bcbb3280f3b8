"""PostgREST's authentication: the request's role from the JWT in Authorization (HS256, the
project's JWT secret), anonymous without one; PostgREST's messages for a JWT it cannot trust
(docs.postgrest.org, references/auth)."""

from __future__ import annotations

from email.message import Message
from typing import Any

import jwt

from devstack.standins.postgrest.errors import ApiError

ANON_ROLE = "anon"
JWT_LEEWAY_S = 30  # PostgREST tolerates this much clock skew on exp/nbf/iat.


class AuthError(Exception):
    """A JWT that cannot be trusted; the message is PostgREST's."""


def authenticate(headers: Message, secret: str) -> dict[str, Any]:
    """The request's JWT claims; no Authorization header means the anonymous role."""
    authorization = headers.get("Authorization")
    if authorization is None:
        return {"role": ANON_ROLE}
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise AuthError("Unsupported authorization scheme: a Bearer token is required")
    token = token.strip()
    if not token:
        raise AuthError("Empty JWT is sent in Authorization header")
    if token.count(".") != 2:
        raise AuthError(f"Expected 3 parts in JWT; got {token.count('.') + 1}")
    try:
        claims = jwt.decode(token, secret, algorithms=["HS256"], leeway=JWT_LEEWAY_S, options={"verify_aud": False})
    except jwt.ExpiredSignatureError as error:
        raise AuthError("JWT expired") from error
    except jwt.ImmatureSignatureError as error:
        raise AuthError("JWT not yet valid") from error
    except jwt.InvalidAlgorithmError as error:
        raise AuthError("Wrong or unsupported encoding algorithm") from error
    except jwt.InvalidSignatureError as error:
        raise AuthError("JWT cryptographic operation failed") from error
    except jwt.InvalidTokenError as error:
        raise AuthError("JWT couldn't be decoded") from error
    role = claims.setdefault("role", ANON_ROLE)
    if not isinstance(role, str) or not role:
        raise AuthError("Parsing claims failed")
    return claims


def jwt_error(error: AuthError) -> ApiError:
    www_authenticate = f'Bearer error="invalid_token", error_description="{error}"'
    return ApiError(401, "PGRST301", str(error), headers={"WWW-Authenticate": www_authenticate})
