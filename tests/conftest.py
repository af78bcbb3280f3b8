"""Shared fixtures. The tests run against the local stack, which `make test` starts
(`python -m devstack run -- pytest` does the same by hand); its settings arrive as
environment variables. The helpers the fixtures use are in tests/support."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import psycopg
import pytest

from devstack import stack
from tests.support import lanes
from tests.support.alerts import ALERT_PATH
from tests.support.database import connect, reconcile_cron_paused, reset
from tests.support.receiver import Receiver, receiver
from tests.support.vault import store_secrets

STACK_VARIABLES = ("DATABASE_URL", "DEVSTACK_ADMIN_DATABASE_URL", "SUPABASE_URL", "SUPABASE_SECRET_KEY")
RECONCILIATION_PAUSED = pytest.StashKey[ExitStack]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[lanes.STARTING_ENVIRONMENT] = dict(os.environ)
    config.stash[lanes.SHARED_STACK_NAMES] = lanes.stack_variables()
    # pytest-xdist hands out the lanes in the order the workers collected them (tests/support/lanes.py),
    # not biggest group first: the shared stack's lane has the most tests, but the own stacks' lane,
    # with a dozen, is the next longest.
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lanes.group(items, for_workers=hasattr(config, "workerinput"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    with lanes.kept_to_its_lane(item, item.config.stash[lanes.SHARED_STACK_NAMES]):
        return (yield)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The stack's scheduled reconciliation paused for the whole run, once, by the process that
    runs pytest (never by a worker of pytest-xdist: the first to finish would switch it on again
    while another still runs the stack's tests). The unit tests need no stack."""
    if hasattr(session.config, "workerinput") or not all(os.environ.get(name) for name in STACK_VARIABLES):
        return
    paused = session.config.stash[RECONCILIATION_PAUSED] = ExitStack()
    paused.enter_context(reconcile_cron_paused(os.environ["DEVSTACK_ADMIN_DATABASE_URL"]))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if paused := session.config.stash.get(RECONCILIATION_PAUSED, None):
        paused.close()


@pytest.fixture(scope="session")
def stack_env(pytestconfig: pytest.Config) -> dict[str, str]:
    """The stack `make test` started: asking for it puts a test in the shared stack's lane."""
    environment = pytestconfig.stash[lanes.STARTING_ENVIRONMENT]
    missing = [name for name in STACK_VARIABLES if not environment.get(name)]
    if missing:
        pytest.fail(
            f"the local stack is not up ({', '.join(missing)} unset): run `make test`, or "
            "`.venv/bin/python -m devstack run -- .venv/bin/pytest ...`"
        )
    return dict(environment)


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


@pytest.fixture
def tx(db: psycopg.Connection[dict]) -> Iterator[psycopg.Connection[dict]]:
    """The test's writes in one transaction that is rolled back: the every-minute cron never sees
    them, and pg_net never sends the POSTs they queue."""
    with db.transaction(force_rollback=True):
        yield db


@pytest.fixture
def env(db: psycopg.Connection[dict], stack_env: dict[str, str]) -> dict[str, str]:
    """The stack, with the Vault secrets an operator stores (so that the kick and the cron call the
    worker), as postgres: service_role has no access to Vault."""
    with connect(stack_env["DATABASE_URL"]) as operator:
        stack.store_vault_secrets(operator, stack_env)
    return stack_env


@pytest.fixture
def hook(db: psycopg.Connection[dict]) -> Iterator[Receiver]:
    """Where the alerts go: a receiver on loopback, its URL in Vault."""
    with receiver() as alerts:
        store_secrets(db, None, None, alert_url=alerts.url + ALERT_PATH)
        yield alerts


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client
