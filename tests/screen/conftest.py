"""The browser the admin screen's browser tests share: Debian's chromium, headless (devstack/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from devstack import browser
from tests.support.admin_page import EXPECT_MS


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    expect.set_options(timeout=EXPECT_MS)
    with sync_playwright() as playwright:
        launched = browser.launch(playwright)
        yield launched
        launched.close()
