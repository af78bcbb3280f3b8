"""The inbox's dates follow the office's time zone (office_settings.time_zone, which GET
/api/admin/me answers): the day shortcuts become times at the zone's midnight, and the filter's
hint names the zone; in Chromium, whatever zone the browser itself is in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.support import operators
from tests.support.admin_page import Watched, sign_in

DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture
def office_zone(admin) -> Iterator[None]:
    # Kiritimati is UTC+14: its midnight is not the browser's (Tokyo here) nor UTC's.
    admin.execute("update office_settings set time_zone = 'Pacific/Kiritimati'")
    yield
    admin.execute("update office_settings set time_zone = default")


def test_the_api_answers_the_office_time_zone(stack_env, admin) -> None:
    token = operators.sign_in(stack_env, stack_env["DEVSTACK_VIEWER_EMAIL"], stack_env["DEVSTACK_VIEWER_PASSWORD"])
    me = f"{stack_env['FUNCTIONS_URL']}/api/admin/me"
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    assert httpx.get(me, headers=headers, timeout=60).json()["time_zone"] == "Asia/Tokyo"
    admin.execute("update office_settings set time_zone = 'Europe/Paris'")
    try:
        assert httpx.get(me, headers=headers, timeout=60).json()["time_zone"] == "Europe/Paris"
    finally:
        admin.execute("update office_settings set time_zone = default")


def test_today_is_the_office_zones_today(chromium, stack_env, office_zone) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=DESKTOP, timezone_id="Asia/Tokyo")
    watched = Watched(context.new_page())
    page = watched.page
    sign_in(page, stack_env, "VIEWER")
    expect(page.locator("#date-format")).to_contain_text("Pacific/Kiritimati")
    with page.expect_request(re.compile(r"/api/admin/faxes\?")) as asked:
        page.goto(f"{stack_env['ADMIN_URL']}#/faxes?period=today")
    query = parse_qs(urlsplit(asked.value.url).query)
    [start], [end] = query["from"], query["to"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT00:00:00\+14:00", start), start
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT00:00:00\+14:00", end), end
    assert watched.problems == []
    context.close()
