"""Settings from the environment (Vercel's project environment variables), read per request."""

from __future__ import annotations

from typing import Self

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from lib.queue import DEFAULT_LEASE


class ConfigError(RuntimeError):
    """Required environment variables are missing or invalid. Names the variables, never their values."""


class _EnvSettings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=False)

    @classmethod
    def load(cls) -> Self:
        try:
            return cls()
        except ValidationError as error:
            names = sorted({str(e["loc"][0]).upper() for e in error.errors() if e["loc"]})
            raise ConfigError(f"missing or invalid environment variables: {', '.join(names)}") from None


class InternalCallSettings(_EnvSettings):
    """Checked before anything else, so that an unauthenticated caller learns nothing about the rest."""

    internal_function_secret: SecretStr | None = None
    # During a rotation the old value is accepted too, so that no call is refused while Vault and
    # Vercel are not yet both on the new one.
    internal_function_secret_previous: SecretStr | None = None


class SupabaseSettings(_EnvSettings):
    supabase_url: str
    supabase_service_role_key: SecretStr


class WorkerSettings(SupabaseSettings):
    resend_api_key: SecretStr
    resend_api_url: str = "https://api.resend.com"
    attachments_bucket: str = "fax-attachments"
    # Resend accepts e-mails of up to 40 MB in all: no single attachment can be larger.
    attachment_max_bytes: int = 40 * 1024 * 1024
    # Shorter only for tests and chaos runs; a lease must outlast the slowest attachment step.
    job_lease_seconds: int = Field(default=int(DEFAULT_LEASE.total_seconds()), ge=5)
    resend_timeout_seconds: float = Field(default=30.0, gt=0)


class WebhookSettings(SupabaseSettings):
    resend_webhook_secret: SecretStr  # whsec_...: the signing secret Resend shows for the webhook
    webhook_max_body_bytes: int = 1024 * 1024  # the event carries metadata only, never attachment content
