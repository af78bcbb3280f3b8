"""What an export is made of (lib/admin/export_files.py): names safe on Windows whatever text goes
into them (no reserved character, no control or format character, no trailing dot or space, no
reserved device name, bounded in characters and in UTF-8 bytes), and CSV cells that Excel shows
and never evaluates."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lib.admin.export_files import (
    MAX_NAME_BYTES,
    MAX_NAME_CHARS,
    Document,
    cell,
    export_name,
    numbered,
    sha256sums_line,
    windows_safe,
)

DEVICE = re.compile(r"(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9¹²³]|LPT[0-9¹²³])", re.IGNORECASE)


def document(**values: object) -> Document:
    return Document.model_validate({
        "id": "0b6f4a52-6d0e-4e8e-9f0e-1c2d3e4f5a6b", "fax_received_email_id": "5e1f0c2a-1111-4222-8333-944455556666",
        "version": 1, "filename": "請求書.pdf", "content_type": "application/pdf", "size_bytes": 10,
        "sha256": "a" * 64, "bucket": "fax-attachments", "storage_path": "k", "stored_at": "2026-12-01T00:00:00+00:00",
        "received": "2026-12-01T09:00:00+09:00", "filed_on": "2026-11-30", "dated_by": "transaction", "nth": 1,
        "of_fax": 1, **values,
    })  # fmt: skip


def is_windows_safe(name: str) -> bool:
    return (
        not set('\\/:*?"<>|') & set(name)
        and not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for c in name)
        and not name.endswith((".", " "))
        and not DEVICE.fullmatch(name.split(".", 1)[0].rstrip(" "))
        and 0 < len(name) <= MAX_NAME_CHARS
        and len(name.encode("utf-8")) <= MAX_NAME_BYTES
    )


@pytest.mark.parametrize(("given_name", "expected"), [
    ("CON", "_CON"), ("con.pdf", "_con.pdf"), ("NUL .txt", "_NUL.txt"), ("COM¹.pdf", "_COM¹.pdf"),
    ("LPT9", "_LPT9"), ("CONSOLE.pdf", "CONSOLE.pdf"), ("report. . ", "report"), ("a:b|c.pdf", "a_b_c.pdf"),
])  # fmt: skip
def test_reserved_names_and_characters(given_name: str, expected: str) -> None:
    assert windows_safe(given_name) == expected


def test_a_name_is_date_counterparty_amount_short_id_and_the_stored_types_extension() -> None:
    assert export_name(document(counterparty="ヤマダ商事", amount=108000)) == "20261130_ヤマダ商事_108000_5e1f0c2a.pdf"
    assert export_name(document(nth=3, of_fax=3)) == "20261130_取引先未入力_金額未入力_5e1f0c2a-3.pdf"
    assert export_name(document(content_type="image/tiff", amount=0)) == "20261130_取引先未入力_0_5e1f0c2a.tif"
    assert export_name(document(counterparty="a\u202eb\x1b[2J\nc", content_type="text/html")).endswith(
        "_ab[2J c_金額未入力_5e1f0c2a.bin"
    )
    assert numbered("20261130_a_1_5e1f0c2a.pdf", 2) == "20261130_a_1_5e1f0c2a (2).pdf"
    assert export_name(document(kind="raw_message", content_type="message/rfc822")) == (
        "20261130_取引先未入力_金額未入力_5e1f0c2a.eml"
    )


@given(st.text(max_size=300), st.integers(min_value=0, max_value=999_999_999_999) | st.none())
def test_every_name_is_safe_on_windows_and_bounded(counterparty: str, amount: int | None) -> None:
    name = export_name(document(counterparty=counterparty, amount=amount))
    assert is_windows_safe(name), name
    assert name.endswith("_5e1f0c2a.pdf")


@given(st.text(max_size=400))
def test_windows_safe_of_any_text(text: str) -> None:
    assert is_windows_safe(windows_safe(text + ".pdf"))


@pytest.mark.parametrize(("value", "expected"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "\\tx"), ("ヤマダ=1", "ヤマダ=1"), ("a\x1b[2Jb\u202e", "a\\x1b[2Jb\\u202e"), (None, ""), (108000, 108000),
])  # fmt: skip
def test_cells_are_inert(value: object, expected: object) -> None:
    assert cell(value) == expected


def test_a_sha256sums_line_is_what_sha256sum_reads() -> None:
    assert sha256sums_line("ab" * 32, "20261130_x_1_5e1f0c2a.pdf") == "ab" * 32 + "  20261130_x_1_5e1f0c2a.pdf\n"
