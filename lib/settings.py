"""Settings from the environment (Vercel's project environment variables), read per request."""

from __future__ import annotations

import base64
import binascii
import logging
import os
import threading
from collections.abc import Callable
from typing import Annotated, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from lib import log
from lib.limits import DEFAULT_LEASE, MAX_LEASE


class ConfigError(RuntimeError):
    """Required environment variables are missing or invalid. Names the variables and what is
    wrong with each, never their values."""


def _http_url(value: str) -> str:
    """An http(s) URL with a host, checked here so that a bad one is a configuration error that
    names the variable, not an exception from deep inside a request (supabase-py's "Invalid URL",
    httpx's InvalidURL)."""
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError("must not contain spaces or control characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    if "@" in parts.netloc or parts.query or parts.fragment or value.endswith(("?", "#")):
        raise ValueError("must have no user, query or fragment")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number in 0..65535
    except ValueError:
        raise ValueError("must have a port between 0 and 65535") from None
    return value.rstrip("/")


def _bucket_name(value: str) -> str:
    if value in (".", ".."):
        raise ValueError("must not be . or ..")
    return value


def _webhook_secret(value: SecretStr) -> SecretStr:
    # A secret that is not base64 would make every signature check fail: 401 for every webhook,
    # and Resend would give up on them. Better a 500 that names the variable (Resend redelivers).
    key = value.get_secret_value().removeprefix("whsec_")
    try:
        decoded = base64.b64decode(key + "=" * (-len(key) % 4), validate=True)
    except binascii.Error:
        raise ValueError("must be whsec_ followed by base64, as Resend shows it") from None
    if not decoded:
        raise ValueError("must not be empty")
    return value


PUBLISHABLE_KEY_PREFIX = "sb_publishable_"
SERVER_KEY_VARIABLES = ("SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY")
_NO_SERVER_KEY = (
    f"{' or '.join(SERVER_KEY_VARIABLES)} must be set (the project's secret key, or its legacy service_role key)"
)


def _server_key(value: SecretStr | None) -> SecretStr | None:
    # A publishable key maps to the anon role: every call would be refused as a missing privilege,
    # far from the setting that causes it.
    if value is not None and value.get_secret_value().startswith(PUBLISHABLE_KEY_PREFIX):
        raise ValueError("is a publishable key; the functions need the secret key (sb_secret_...)")
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]
ServerKey = Annotated[SecretStr | None, Field(default=None, min_length=1), AfterValidator(_server_key)]


class _Once:
    """Runs an action the first time only, in this process. A Fluid instance serves many requests as
    threads of one process: a fact about its settings is logged once, not once per request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False

    def __call__(self, action: Callable[[], object]) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        action()


# Process state in lib/ is listed in docs/QUEUE.md ("Fluid compute"): this flag is one piece of it.
_BOTH_KEYS_NOTED = _Once()


class _EnvSettings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=False)

    @classmethod
    def load(cls) -> Self:
        try:
            return cls()
        except ValidationError as error:
            # pydantic's "msg" never holds the input (that is "input"), so no value is repeated.
            # An error of the whole model (no loc) is one of ours below, naming its own variables.
            problems = sorted({f"{str(e['loc'][0]).upper()} ({e['msg']})" if e["loc"] else
                               e["msg"].removeprefix("Value error, ") for e in error.errors()}
                              | set(cls._model_problems()))  # fmt: skip
            raise ConfigError(f"missing or invalid environment variables: {'; '.join(problems)}") from None

    @classmethod
    def _model_problems(cls) -> list[str]:
        """What the model's own validators would say: pydantic runs them only once every field is
        valid, so a missing field alone would hide them (and the operator would fix one setting
        only to be told of the next)."""
        return []


class InternalCallSettings(_EnvSettings):
    """Checked before anything else, so that an unauthenticated caller learns nothing about the rest."""

    internal_function_secret: SecretStr | None = None
    # During a rotation the old value is accepted too, so that no call is refused while Vault and
    # Vercel are not yet both on the new one.
    internal_function_secret_previous: SecretStr | None = None


class SupabaseSettings(_EnvSettings):
    """The project URL and its server key: the secret key (sb_secret_..., what a new project has)
    or, on a project that still has it, the legacy service_role JWT. During a key migration both
    may be set; the secret key wins."""

    supabase_url: HttpUrl
    supabase_secret_key: ServerKey
    supabase_service_role_key: ServerKey

    @model_validator(mode="after")
    def _a_server_key_is_set(self) -> Self:
        if self.supabase_secret_key is None and self.supabase_service_role_key is None:
            raise ValueError(_NO_SERVER_KEY)
        return self

    @classmethod
    def _model_problems(cls) -> list[str]:
        # As the settings read them: names in any case (case_sensitive=False).
        names = {name.upper() for name in os.environ}
        return [] if names & set(SERVER_KEY_VARIABLES) else [_NO_SERVER_KEY]

    @property
    def server_key(self) -> str:
        """The key every call to SUPABASE_URL carries (lib/supabase/keys.py api_headers)."""
        if self.supabase_secret_key is not None:
            if self.supabase_service_role_key is not None:
                _BOTH_KEYS_NOTED(_note_both_keys)
            return self.supabase_secret_key.get_secret_value()
        assert self.supabase_service_role_key is not None  # the validator above
        return self.supabase_service_role_key.get_secret_value()


def _note_both_keys() -> None:
    secret, legacy = SERVER_KEY_VARIABLES
    log.event("supabase_key_chosen", logging.WARNING, using=secret, ignored=legacy,
              message=f"{secret} and {legacy} are both set; the functions use {secret}")  # fmt: skip


class WorkerSettings(SupabaseSettings):
    resend_api_key: SecretStr = Field(min_length=1)
    resend_api_url: HttpUrl = "https://api.resend.com"
    # Storage's rule for bucket names; the name also becomes a segment of the upload's URL.
    attachments_bucket: Annotated[str, AfterValidator(_bucket_name)] = Field(
        default="fax-attachments", pattern=r"^[A-Za-z0-9_!.*'() &$@=;:+,?-]{1,100}$"
    )
    # Resend accepts e-mails of up to 40 MB in all: no single attachment can be larger.
    attachment_max_bytes: int = Field(default=40 * 1024 * 1024, gt=0)
    # Shorter only for tests and chaos runs; a lease must outlast the slowest attachment step.
    job_lease_seconds: int = Field(default=int(DEFAULT_LEASE.total_seconds()), ge=5, le=int(MAX_LEASE.total_seconds()))
    # Capped by the invocation's deadline anyway (lib/budget.py); more than maxDuration is a mistake.
    resend_timeout_seconds: float = Field(default=30.0, gt=0, le=300, allow_inf_nan=False)


class ResendListingSettings(_EnvSettings):
    """What the operator CLI's reconcile needs to list Resend's received e-mails (the worker's
    RESEND_API_KEY, a full-access key)."""

    resend_api_key: SecretStr = Field(min_length=1)
    resend_api_url: HttpUrl = "https://api.resend.com"
    resend_timeout_seconds: float = Field(default=30.0, gt=0, le=300, allow_inf_nan=False)


class WebhookSettings(SupabaseSettings):
    # whsec_...: the signing secret Resend shows for the webhook
    resend_webhook_secret: Annotated[SecretStr, AfterValidator(_webhook_secret)]
    # The event carries metadata only, never attachment content.
    webhook_max_body_bytes: int = Field(default=1024 * 1024, gt=0)


class AdminSettings(SupabaseSettings):
    """The admin screen's function. The page signs in with the publishable key (the legacy anon key
    on an older project): it is public by design, and the only key the browser ever gets."""

    supabase_publishable_key: str | None = Field(default=None, min_length=1)
    supabase_anon_key: str | None = Field(default=None, min_length=1)
    # A legacy project's JWT secret, to verify its HS256 access tokens here; without it they are
    # verified by asking Auth. Projects on asymmetric signing keys need neither.
    supabase_jwt_secret: SecretStr | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _a_browser_key(self) -> Self:
        if not (self.supabase_publishable_key or self.supabase_anon_key):
            raise ValueError("SUPABASE_PUBLISHABLE_KEY (or, on an older project, SUPABASE_ANON_KEY) must be set")
        return self

    @property
    def browser_key(self) -> str:
        key = self.supabase_publishable_key or self.supabase_anon_key
        assert key is not None  # the validator above
        return key

    @property
    def auth_url(self) -> str:
        """Supabase Auth, and the issuer ("iss") of the access tokens it signs."""
        return f"{self.supabase_url}/auth/v1"
