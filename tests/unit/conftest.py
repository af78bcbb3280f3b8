"""Unit tests: no stack, no network. HTTP is answered by respx; the clock is fake."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx

from lib.settings import SupabaseSettings
from lib.supabase.client import service_client
from lib.worker.queue import Queue
from tests.unit.fake_supabase import KEY, URL, FakeSupabase


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture
def fake(router: respx.MockRouter) -> FakeSupabase:
    fake = FakeSupabase()
    fake.install(router)
    return fake


@pytest.fixture
def client(http: httpx.Client):
    return service_client(SupabaseSettings(supabase_url=URL, supabase_secret_key=KEY), http)


@pytest.fixture
def queue(client, clock: FakeClock) -> Queue:
    return Queue(client, wall=clock)  # the fake clock is the wall clock too: the lease's age is the test's
