"""How the admin CLI shows values on a terminal: column widths as the terminal draws them,
times in the operator's own time zone with how long ago, and intervals in words.

Times carry their UTC offset in the operator's zone (TZ), with how long ago beside them
(local_time), the way the admin screen shows them in the browser's zone.

Widths are display columns (wcwidth: East Asian wide and fullwidth characters take two,
combining marks none, ambiguous ones such as ① and ※ one), after NFC normalisation, so that a
decomposed ガイドブック.pdf (13 code points, 16 columns) lines up with a composed one, and long
text is cut by columns, never by code points. Every text from the data goes through
lib/fax/terminal.py: a sender's control sequences are printed as escapes, and a terminal that is not
UTF-8 gets escapes for what it cannot show.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

import wcwidth

from lib.fax.terminal import encoding_of, terminal_text

ELLIPSIS = "..."  # ASCII: "…" is of ambiguous width, two columns on many CJK terminals


def language(environ: Mapping[str, str] | None = None) -> str:
    """The language of the advice printed: ja when the operator's locale is Japanese (the first of
    LC_ALL, LC_MESSAGES and LANG that is set, as POSIX orders them: ja_JP.UTF-8, ja), else en."""
    env = os.environ if environ is None else environ
    locale = next((env[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(name)), "")
    return "ja" if locale.lower().startswith("ja") else "en"


def text(value: Any) -> str:
    """A value as one safe line of NFC text in standard output's encoding ('' for None)."""
    if value is None:
        return ""
    return terminal_text(unicodedata.normalize("NFC", str(value)), encoding_of())


def width(value: str) -> int:
    """Display columns of one safe line (see text())."""
    return max(wcwidth.width(value), 0)


def clip(value: str, columns: int) -> str:
    """`value` cut to at most `columns` display columns, with an ellipsis when cut."""
    if width(value) <= columns:
        return value
    kept = wcwidth.clip(value, 0, max(columns - len(ELLIPSIS), 0), fillchar="")
    return kept + ELLIPSIS


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], limits: Mapping[str, int] | None = None) -> str:
    """Aligned columns with a header; `limits` caps a column's width (in display columns)."""
    limits = limits or {}
    cells = [[clip(text(row.get(column)), limits.get(column, 10**6)) for column in columns] for row in rows]
    widths = [max([width(column)] + [width(line[i]) for line in cells]) for i, column in enumerate(columns)]
    lines = [list(columns), ["-" * w for w in widths], *cells]
    return "\n".join(
        "  ".join(value + " " * (w - width(value)) for value, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def fields(values: Mapping[str, Any], indent: int = 20) -> str:
    """One `key: value` line per field, keys right-aligned; values whole (never cut)."""
    return "\n".join(f"{key:>{indent}}: {text(value)}" for key, value in values.items())


def count(n: int) -> str:
    return f"{n:,}"


def relative(seconds: float) -> str:
    """How long ago (positive) or from now (negative), e.g. '3 min ago', 'in 4 min'."""
    magnitude = abs(seconds)
    if magnitude < 1:
        return "now"
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if magnitude >= size:
            amount = int(magnitude // size)
            words = f"{amount} {unit}{'s' if unit == 'day' and amount != 1 else ''}"
            return f"in {words}" if seconds < 0 else f"{words} ago"
    raise AssertionError("not reached")


def age(timestamp: str | None, now: datetime) -> str:
    """'3 min ago' for a past timestamp, 'in 4 min' for a future one; '' for none."""
    return relative((now - datetime.fromisoformat(timestamp)).total_seconds()) if timestamp else ""


def absolute_time(timestamp: str, zone: tzinfo | None = None) -> str:
    """A timestamp in a zone (the operator's, TZ, by default) with its UTC offset, as the screen
    shows it too (public/admin/i18n.js dateTime): '2026-12-02 06:29:59 +09:00'."""
    at = datetime.fromisoformat(timestamp).astimezone(zone)
    return f"{at:%Y-%m-%d %H:%M:%S} {at:%:z}"


def local_time(timestamp: str | None, now: datetime) -> str:
    """A database timestamp in the operator's time zone (TZ) with its offset, and how long ago
    beside it: '2026-12-01 17:42:37 +09:00 (3 min ago)'. The one way the CLI shows a time; --json
    keeps the database's ISO 8601, offset included."""
    if not timestamp:
        return ""
    return f"{absolute_time(timestamp)} ({age(timestamp, now)})"


# PostgreSQL's interval output (IntervalStyle postgres, PostgREST's): "1 year 2 mons 3 days 04:05:06".
_INTERVAL_PART = re.compile(r"(-?\d+) (year|mon|day)s?")
_INTERVAL_TIME = re.compile(r"(-?)(\d+):(\d\d):(\d\d(?:\.\d+)?)")


def interval(value: str | None) -> str:
    """An interval as an operator writes it: '1 month', '90 days', '1 hour 30 minutes'."""
    if value is None:
        return ""
    words = []
    for amount, unit in _INTERVAL_PART.findall(value):
        name = {"mon": "month"}.get(unit, unit)
        words.append(f"{int(amount)} {name}{'' if abs(int(amount)) == 1 else 's'}")
    time = _INTERVAL_TIME.search(value)
    if time:
        sign = -1 if time.group(1) else 1
        for amount, name in (
            (int(time.group(2)), "hour"),
            (int(time.group(3)), "minute"),
            (float(time.group(4)), "second"),
        ):
            if amount:
                shown = f"{sign * amount:g}"
                words.append(f"{shown} {name}{'' if amount == 1 else 's'}")
    return " ".join(words) or ("0 seconds" if _INTERVAL_TIME.fullmatch(value.strip()) else value)
