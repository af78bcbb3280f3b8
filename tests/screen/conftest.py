"""The browser the admin screen's browser tests share (Debian's chromium, headless: devstack/browser.py),
and the health check held still for tests that open an outage by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from devstack import browser
from tests.support.admin_page import EXPECT_MS
from tests.support.database import cron_paused


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    expect.set_options(timeout=EXPECT_MS)
    with sync_playwright() as playwright:
        launched = browser.launch(playwright)
        yield launched
        launched.close()


@pytest.fixture
def health_check_paused(stack_env: dict[str, str]) -> Iterator[None]:
    """The every-minute health check off: its next run would close an outage a test opened by hand."""
    with cron_paused(stack_env["DEVSTACK_ADMIN_DATABASE_URL"], "document-jobs-health"):
        yield
