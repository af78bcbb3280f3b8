"""Storage keys: whatever the provider sends, ASCII, within Supabase's allowed characters, no traversal."""

from __future__ import annotations

import string
from uuid import UUID

from hypothesis import example, given
from hypothesis import strategies as st

from lib.attachment_storage import attachment_key, extension

EMAIL = UUID("6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10")
# Storage's documented key rule, ^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$ (a JavaScript regex: "$" is
# the end of the input), written out as a set of characters so that it shares nothing with the code.
STORAGE_KEY_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_/!.*'() &$=@;:+,?-")


def assert_safe(key: str) -> None:
    assert set(key) <= STORAGE_KEY_CHARACTERS, f"{key!r} has characters Storage refuses"
    assert ".." not in key.split("/")
    assert key.startswith(f"fax_received_emails/{EMAIL}/")
    assert key.count("/") == 2


any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()))


@given(attachment_id=any_text.filter(bool), filename=st.none() | any_text, content_type=st.none() | any_text)
@example(attachment_id="att_1\n", filename="scan.pdf", content_type="application/pdf")
@example(attachment_id="att_1", filename="scan.pdf\n", content_type=None)
@example(attachment_id="att_\ud800", filename=None, content_type=None)
def test_every_key_is_safe(attachment_id: str, filename: str | None, content_type: str | None) -> None:
    assert_safe(attachment_key(EMAIL, attachment_id, filename, content_type))


def test_examples() -> None:
    assert attachment_key(EMAIL, "att_1", "請求書.pdf", "application/pdf").endswith("/att_1.pdf")
    assert attachment_key(EMAIL, "att_2", "", None).endswith("/att_2.bin")
    assert attachment_key(EMAIL, "att_3", None, "application/x-unknown").endswith("/att_3.bin")
    assert attachment_key(EMAIL, "att_4", "scan.TIF", "application/octet-stream").endswith("/att_4.tif")
    assert attachment_key(EMAIL, "att_5\n", "a.pdf", "application/pdf") != attachment_key(
        EMAIL, "att_5", "a.pdf", "application/pdf"
    )
    traversal = attachment_key(EMAIL, "../x", "../../etc/passwd", None)
    assert_safe(traversal)
    assert "/../" not in traversal


def test_the_same_attachment_always_gets_the_same_key() -> None:
    assert attachment_key(EMAIL, "../x", "a.pdf", None) == attachment_key(EMAIL, "../x", "b.pdf", None)


def test_extension_prefers_the_content_type() -> None:
    assert extension("fax.tiff", "application/pdf; charset=binary") == "pdf"
    assert extension("ファクス.ＰＤＦ", None) == "bin"
