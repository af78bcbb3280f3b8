"""Sender text on an operator's terminal (lib/fax/terminal.py): no control sequence gets through, a
line stays one line, and a terminal that cannot show a character gets its escape."""

from __future__ import annotations

import json

import pytest

from lib.fax.terminal import terminal_json, terminal_text

HOSTILE = {
    "clear the screen": ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
    "write the clipboard (OSC 52)": ("\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", "\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07"),
    "an 8-bit CSI": ("\x9b2J", "\\x9b2J"),
    "a fake status line": ("ok\rstatus: completed", "ok\\rstatus: completed"),
    "a forged line": ("FAX\nstatus: completed", "FAX\\nstatus: completed"),
    "reordered (bidi override)": ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
    "a line separator": ("a\u2028b", "a\\u2028b"),
    "DEL and a bell": ("a\x7f\x07", "a\\x7f\\x07"),
}


@pytest.mark.parametrize(("text", "shown"), HOSTILE.values(), ids=HOSTILE.keys())
def test_control_characters_are_shown_as_their_escapes(text, shown) -> None:
    assert terminal_text(text) == shown
    assert all(c.isprintable() for c in terminal_text(text))


def test_ordinary_text_is_left_as_it_is() -> None:
    assert (
        terminal_text("ABC商事 <fax@abc-shoji.example.jp> 注文書 (3枚)")
        == "ABC商事 <fax@abc-shoji.example.jp> 注文書 (3枚)"
    )


def test_a_terminal_that_cannot_show_a_character_gets_its_escape() -> None:
    assert terminal_text("請求書.pdf", "ascii") == "\\u8acb\\u6c42\\u66f8.pdf"
    assert terminal_text("caf\u00e9 \x1b", "latin-1") == "caf\u00e9 \\x1b"


def test_json_stays_json_with_every_control_character_escaped() -> None:
    data = {"subject": "\x1b]52;c;x\x07 \x9b2J \u202e 請求書"}
    for encoding in ("utf-8", "ascii"):
        text = terminal_json(data, encoding)
        assert json.loads(text) == data
        assert all(c.isprintable() or c in "\n " for c in text)
        text.encode(encoding)
    assert "請求書" in terminal_json(data, "utf-8")
