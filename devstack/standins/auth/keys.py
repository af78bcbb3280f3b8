"""The project's keys: the ES256 signing key whose public part is the JWKS
(supabase.com/docs/guides/auth/signing-keys), and the legacy JWT secret."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key


@dataclass(frozen=True)
class Keys:
    """The keys the stack made: the ES256 signing key, and the legacy JWT secret."""

    signing_key_pem: str
    key_id: str
    # Signs the legacy anon and service_role keys, and the role JWTs the gateway hands on for a
    # publishable or secret key.
    jwt_secret: str


def private_key(keys: Keys) -> ec.EllipticCurvePrivateKey:
    key = load_pem_private_key(keys.signing_key_pem.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def jwk(keys: Keys) -> dict[str, Any]:
    """The public key as GET /.well-known/jwks.json lists it, with its "kid" and "alg"."""
    public = jwt.algorithms.ECAlgorithm.to_jwk(private_key(keys).public_key(), as_dict=True)
    return {**public, "kid": keys.key_id, "alg": "ES256", "use": "sig", "key_ops": ["verify"]}


def new_signing_key() -> tuple[str, str]:
    """A fresh ES256 (P-256) signing key as PEM, and a key id, as a project's first signing key."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem.decode(), str(uuid.uuid4())
