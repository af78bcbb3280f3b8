"""What health and a run by hand print of reconciliation beyond its counts: the items it could not
read (with what can be read of them, the sender's text made safe for a terminal), the last run's
finding, the retention window, and the late e-mails of a closed webhooks_missing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lib.admin import display


def unreadable_line(reason: str, shown: dict[str, Any]) -> str:
    """An unreadable item as the terminal shows it: why, then what can be read of it (the
    sender's text made safe for a terminal)."""
    parts = [f"{name} {display.text(str(shown[name]))!r}" for name in ("id", "created_at", "from", "subject")
             if name in shown]  # fmt: skip
    if shown.get("files"):
        parts.append("files " + ", ".join(display.text(str(f)) for f in shown["files"]))
    return f"{reason}: " + ("; ".join(parts) or "nothing readable")


def lines(status: dict[str, Any], now: datetime) -> list[str]:
    """What health adds under its reconciliation line: the last run's finding, the window, the
    unreadable e-mails still open, the late e-mails of a closed outage."""
    said = []
    if status.get("last_finding"):
        said.append(f"  the last run stopped early: {display.text(status['last_finding'])}")
    window = status.get("window")
    if window and float(window["share"]) >= 0.5:
        said.append(
            f"  listed everything only up to {display.local_time(window['watermark'], now)}, more than"
            f" {'three quarters' if float(window['share']) >= 0.75 else 'half'} of retention"
            f" ({display.interval(window['retention'])}): e-mails since then are unrecoverable from"
            f" {display.local_time(window['unrecoverable_from'], now)}; run: {window['command']}"
        )
    if status.get("late_after_close"):
        said.append(f"  {status['late_after_close']} e-mails recorded late after webhooks_missing closed"
                     " (received during it: counted, no new alert)")  # fmt: skip
    for shown in status.get("unreadable") or []:
        said.append(f"  unreadable, listed {display.local_time(shown['first_listed_at'], now)}:"
                     f" {unreadable_line(shown['reason'], shown['item'])}")  # fmt: skip
    return said
