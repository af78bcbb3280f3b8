"""The Vault secrets a test stores, as an operator does after a deploy."""

from __future__ import annotations

import psycopg

from devstack import stack
from tests.support.database import as_postgres

WORKER_URL = "https://app.example/api/internal/document-jobs"
SECRET = "local-test-secret-0123456789abcdef"


def store_secrets(
    conn: psycopg.Connection, url: str | None = WORKER_URL, secret: str | None = SECRET, alert_url: str | None = None
) -> None:
    """The worker's URL and secret (by default a worker nobody answers for), and where alerts go;
    a None is left unstored. `conn` is service_role; Vault is written as postgres."""
    wanted = {stack.WORKER_URL_SECRET: url, stack.WORKER_SECRET_SECRET: secret, stack.ALERT_URL_SECRET: alert_url}
    with as_postgres(conn):
        for name, value in wanted.items():
            if value is not None:
                stack.store_vault_secret(conn, name, value)
