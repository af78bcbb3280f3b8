"""How the admin CLI measures and shows text: display columns after NFC, cuts by columns,
intervals in words, times with how long ago."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta

import pytest

from lib.admin import display


def test_a_decomposed_name_counts_as_its_composed_form() -> None:
    composed = "ガイドブック.pdf"
    decomposed = unicodedata.normalize("NFD", composed)
    assert len(decomposed) == 13 and len(composed) == 10
    assert display.width(display.text(decomposed)) == display.width(composed) == 16


@pytest.mark.parametrize(("text", "columns"), [("①", 1), ("※", 1), ("請求書", 6), ("ＦＡＸ", 6), ("fax", 3)])
def test_east_asian_widths(text: str, columns: int) -> None:
    assert display.width(text) == columns


def test_rows_align_by_display_width() -> None:
    rows = [{"name": unicodedata.normalize("NFD", "ガイドブック.pdf"), "n": 1}, {"name": "①※.pdf", "n": 2},
            {"name": "plain.pdf", "n": 3}]  # fmt: skip
    lines = display.table(rows, ["name", "n"]).splitlines()
    columns = {display.width(line[: len(line) - 1]) for line in lines[2:]}
    assert columns == {18}, lines


def test_long_text_is_cut_by_display_width() -> None:
    name = "株式会社" + "サンプル" * 12  # 52 characters, 104 columns
    cut = display.clip(name, 28)
    assert display.width(cut) <= 28 and cut.endswith("...") and cut.startswith("株式会社")
    assert display.clip("short", 28) == "short"


def test_control_characters_are_printed_as_escapes() -> None:
    assert display.text("a\x1b[2Jb\r\nc\u202e") == "a\\x1b[2Jb\\r\\nc\\u202e"


@pytest.mark.parametrize(
    ("postgres", "words"),
    [("1 mon", "1 month"), ("2 mons", "2 months"), ("30 days", "30 days"), ("1 day", "1 day"),
     ("1 year 2 mons 3 days", "1 year 2 months 3 days"), ("01:00:00", "1 hour"), ("36:00:00", "36 hours"),
     ("01:30:00", "1 hour 30 minutes"), ("7 days 12:00:00", "7 days 12 hours"), ("00:00:00", "0 seconds")],
)  # fmt: skip
def test_intervals_read_as_written(postgres: str, words: str) -> None:
    assert display.interval(postgres) == words


def test_times_say_how_long_ago_or_from_now() -> None:
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    assert display.age((now - timedelta(minutes=3, seconds=20)).isoformat(), now) == "3 min ago"
    assert display.age((now + timedelta(minutes=4, seconds=30)).isoformat(), now) == "in 4 min"
    assert display.age((now - timedelta(days=2, hours=1)).isoformat(), now) == "2 days ago"
    assert display.age((now - timedelta(hours=3)).isoformat(), now) == "3 h ago"
    assert display.local_time(now.isoformat(), now).endswith("(now)")


def test_every_time_carries_its_offset_in_the_operators_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time as clock
    from zoneinfo import ZoneInfo

    at = "2026-12-02T21:29:59.654321+00:00"
    assert display.absolute_time(at, ZoneInfo("Asia/Tokyo")) == "2026-12-03 06:29:59 +09:00"
    assert display.absolute_time(at, ZoneInfo("America/St_Johns")) == "2026-12-02 17:59:59 -03:30"
    assert display.absolute_time(at, UTC) == "2026-12-02 21:29:59 +00:00"
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    clock.tzset()
    try:
        now = datetime.fromisoformat(at) + timedelta(minutes=3)
        assert display.local_time(at, now) == "2026-12-03 06:29:59 +09:00 (3 min ago)", "relative beside, not instead"
    finally:
        monkeypatch.delenv("TZ")
        clock.tzset()
