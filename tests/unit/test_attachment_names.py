"""The name a stored attachment is shown and downloaded as (lib/attachment_names.py), on the screen
and in the CLI's `download`: the sender's, with no control or bidi character, and the extension of
the type it is stored as."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lib.attachment_names import DOCUMENT_TYPES, download_name, extension
from lib.worker import records


@pytest.mark.parametrize(("filename", "content_type", "expected"), [
    ("scan.pdf.exe", "application/pdf", "scan.pdf.pdf"),
    ("FAX-invoice\u202efdp.exe", "application/pdf", "FAX-invoicefdp.pdf"),
    ("a\u2066b\u2069c\u200f\u061c.pdf", "application/pdf", "abc.pdf"),
    ("注文書 (1).pdf", "application/pdf", "注文書 (1).pdf"),
    ("ガイドブック.tiff", "image/tiff", "ガイドブック.tif"),
    ("report", "image/png", "report.png"),
    ("page.html", "application/octet-stream", "page.bin"),
    ("page.pdf", None, "page.bin"),
    (None, "application/pdf", "attachment.pdf"),
    ("", "image/jpeg", "attachment.jpg"),
    ("\u202e.exe", "application/pdf", "exe.pdf"),
    ("../../etc/passwd", "application/pdf", "_.._etc_passwd.pdf"),
    ("Invoice No. 5 from ACME", "application/pdf", "Invoice No. 5 from ACME.pdf"),
    ("..pdf", "application/pdf", "pdf.pdf"),
    ("C:\\Windows\\x.pdf", "application/pdf", "C__Windows_x.pdf"),
    ("line\r\nbreak\x00.pdf", "application/pdf", "line break.pdf"),
    ("tab\there.pdf", "application/pdf", "tab here.pdf"),
    (".hidden", "application/pdf", "hidden.pdf"),
    ("Application.PDF", "APPLICATION/PDF; name=x", "Application.pdf"),
])  # fmt: skip
def test_the_download_name(filename: str | None, content_type: str | None, expected: str) -> None:
    assert download_name(filename, content_type) == expected


def test_the_extension_is_the_stored_objects() -> None:
    for content_type, suffix in DOCUMENT_TYPES.items():
        key = records.attachment_key(records.UUID(int=1), "att_1", content_type)
        assert key.endswith(f".{suffix}") and extension(content_type) == suffix
    assert extension(records.GENERIC_TYPE) == records.GENERIC_EXTENSION == "bin"


@given(st.text(), st.sampled_from([*DOCUMENT_TYPES, None, "text/html"]))
def test_any_name_is_safe(filename: str, content_type: str | None) -> None:
    name = download_name(filename, content_type)
    assert name.endswith(f".{extension(content_type)}")
    assert not any(unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for char in name)
    assert not set(name) & set('/\\:*?"<>|') and not name.startswith(".")
    assert len(name.encode()) <= 255
