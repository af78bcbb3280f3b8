"""Text from senders and servers, made safe to print to an operator's terminal.

A subject, a sender, a file name or a server's error message may carry terminal control
sequences: ESC and CSI (clear the screen, move the cursor and fake a status line), OSC 52
(write the operator's clipboard), a bare CR that overwrites what was printed, bidirectional
overrides that reorder what is shown. Every such character is printed as its escape (\\x1b,
\\r, \\u202e), so what the operator reads is what the data holds, on one line. A character the
terminal's encoding cannot show (a Japanese name under PYTHONIOENCODING=ascii) is escaped as
well (\\u8acb), instead of ending the command in a UnicodeEncodeError.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

# C0 and C1 controls and DEL, bidirectional controls, line and paragraph separators, and lone
# surrogates (which no terminal encoding can write).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What json.dumps leaves in its strings of those (it escapes C0 itself; its own newlines indent).
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def encoding_of(stream: TextIO | None = None) -> str:
    return getattr(stream or sys.stdout, "encoding", None) or "utf-8"


def terminal_text(text: str, encoding: str = "utf-8") -> str:
    """`text` as one line a terminal shows as it is, in `encoding`."""
    escaped = _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return escaped.encode(encoding, "backslashreplace").decode(encoding)


def terminal_json(data: Any, encoding: str = "utf-8") -> str:
    """`data` as indented JSON a terminal shows as it is: json escapes C0 controls, but not DEL,
    the C1 controls (U+009B is a CSI to many terminals) or the bidirectional ones; those become
    \\uXXXX escapes here, which keep the JSON the same. ASCII only when `encoding` is not UTF-8."""
    ascii_only = encoding.lower().replace("-", "").replace("_", "") != "utf8"
    text = json.dumps(data, indent=2, ensure_ascii=ascii_only, default=str)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
