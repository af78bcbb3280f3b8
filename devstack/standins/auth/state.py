"""Users, sessions and refresh tokens, in one JSON file (DEVSTACK_FOLDER/auth.json) written after
every change, so that a restarted gateway keeps them; passwords as scrypt hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def password_matches(password: str, stored: str) -> bool:
    _, salt, _ = stored.split("$")
    return hmac.compare_digest(hash_password(password, base64.b64decode(salt)), stored)


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
