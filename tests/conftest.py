"""Shared fixtures. The tests run against the local stack, which `make test` starts
(`python -m devstack run -- pytest` does the same by hand); its settings arrive as
environment variables."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row

STACK_VARIABLES = ("DATABASE_URL", "DEVSTACK_ADMIN_DATABASE_URL", "SUPABASE_URL", "SUPABASE_SECRET_KEY")


@pytest.fixture(scope="session")
def stack_env() -> dict[str, str]:
    missing = [name for name in STACK_VARIABLES if not os.environ.get(name)]
    if missing:
        pytest.fail(
            f"the local stack is not up ({', '.join(missing)} unset): run `make test`, or "
            "`.venv/bin/python -m devstack run -- .venv/bin/pytest ...`"
        )
    return dict(os.environ)


def connect(conninfo: str) -> psycopg.Connection[dict]:
    return psycopg.connect(conninfo, autocommit=True, row_factory=dict_row)


@pytest.fixture
def admin(stack_env: dict[str, str]) -> Iterator[psycopg.Connection[dict]]:
    """The cluster's superuser (supabase_admin): for setting up and inspecting, never for the code under test."""
    with connect(stack_env["DEVSTACK_ADMIN_DATABASE_URL"]) as conn:
        yield conn


@pytest.fixture
def db(stack_env: dict[str, str], admin: psycopg.Connection[dict]) -> Iterator[psycopg.Connection[dict]]:
    """A connection as service_role (what PostgREST uses for the service-role key), on an empty queue."""
    reset(admin)
    shutil.rmtree(Path(stack_env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments", ignore_errors=True)  # the objects too
    with connect(stack_env["DATABASE_URL"]) as conn:
        conn.execute("set role service_role")
        yield conn


def reset(admin: psycopg.Connection[dict]) -> None:
    """Empty every table the tests write, so that each test starts from nothing."""
    admin.execute(
        "truncate public.document_job_attempts, public.document_jobs, public.fax_received_email_attachments,"
        " public.fax_received_emails, net.http_request_queue, net._http_response, vault.secrets,"
        " document_jobs_internal.worker_requests, public.document_jobs_audit, document_jobs_internal.bulk_actions,"
        " document_jobs_internal.bulk_action_jobs, document_jobs_internal.hourly_outcomes"
    )
    admin.execute("update document_jobs_internal.outages set active = false, since = null, alerted_at = null")
    reset_rate_limit(admin)


def reset_rate_limit(admin: psycopg.Connection[dict]) -> None:
    """The Resend limiter and the cap of invocations in flight as a fresh deploy has them: a test's
    reservations (or a 429's pause) must not make the next test wait."""
    admin.execute(
        "update document_jobs_rate_limits set requests_per_second = default, share_for_others = default,"
        " burst = default, enabled = default, learned_at = null, next_at = default, paused_until = null"
    )
    admin.execute("update document_jobs_settings set max_invocations_in_flight = null")
