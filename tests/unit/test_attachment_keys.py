"""Storage keys and content types: whatever the provider sends, keys are ASCII within Supabase's
allowed characters with no traversal, and the stored type is a document type or
application/octet-stream, with the key's extension following it."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lib.worker.records import VIEWS_PREFIX, attachment_key, raw_message_key, stored_content_type, view_key
from tests.unit.fake_supabase import STORAGE_KEY_CHARACTERS

EMAIL = UUID("6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10")
# The allow-list, written out here rather than imported: type -> extension.
DOCUMENT_TYPES = {"application/pdf": "pdf", "image/tiff": "tif", "image/png": "png", "image/jpeg": "jpg",
                  "image/gif": "gif", "application/octet-stream": "bin"}  # fmt: skip


def stored(attachment_id: str, filename: str | None, declared: str | None) -> tuple[str, str]:
    content_type = stored_content_type(declared, filename)
    return content_type, attachment_key(EMAIL, attachment_id, content_type)


def assert_safe(key: str) -> None:
    assert set(key) <= STORAGE_KEY_CHARACTERS, f"{key!r} has characters Storage refuses"
    assert ".." not in key.split("/")
    assert key.startswith(f"fax_received_emails/{EMAIL}/")
    assert key.count("/") == 2


any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
declared_types = st.none() | any_text | st.sampled_from(["text/html", "image/svg+xml", "application/pdf\r\nX: 1"])


@given(attachment_id=any_text.filter(bool), filename=st.none() | any_text, declared=declared_types)
@example(attachment_id="att_1\n", filename="scan.pdf", declared="application/pdf")
@example(attachment_id="att_1", filename="scan.pdf\n", declared=None)
@example(attachment_id="att_\ud800", filename=None, declared=None)
def test_every_key_is_safe_and_every_type_a_document_type(
    attachment_id: str, filename: str | None, declared: str | None
) -> None:
    content_type, key = stored(attachment_id, filename, declared)
    assert_safe(key)
    assert content_type in DOCUMENT_TYPES
    assert key.rsplit(".", 1)[1] == DOCUMENT_TYPES[content_type], "the extension follows the stored type"


@pytest.mark.parametrize(
    ("filename", "declared", "content_type"),
    [("請求書.pdf", "application/pdf", "application/pdf"),
     ("fax.tiff", "application/pdf; charset=binary", "application/pdf"),  # the declared type wins
     ("scan", "IMAGE/TIFF", "image/tiff"),
     ("scan", "image/jpg", "image/jpeg"),
     ("x.pdf", 'application/pdf; name="a\r\nX-Injected: 1"', "application/pdf"),  # parameters never passed on
     ("scan.TIF", "application/octet-stream", "image/tiff"),  # a generic type: the suffix may tell
     ("scan.jpeg", None, "image/jpeg"),
     ("page.html", "text/html", "application/octet-stream"),
     ("x.pdf", "text/html", "application/octet-stream"),  # a refused type is not rescued by the name
     ("page.html", "application/octet-stream", "application/octet-stream"),
     ("logo.svg", "image/svg+xml", "application/octet-stream"),
     ("x.pdf", "application/pdf\r\nX-Injected: 1", "application/octet-stream"),
     ("note.txt", "text/plain", "application/octet-stream"),
     ("ファクス.ＰＤＦ", None, "application/octet-stream"),
     ("", None, "application/octet-stream"),
     (None, None, "application/octet-stream")],
)  # fmt: skip
def test_stored_content_types(filename: str | None, declared: str | None, content_type: str) -> None:
    assert stored("att_1", filename, declared) == (
        content_type,
        f"fax_received_emails/{EMAIL}/att_1.{DOCUMENT_TYPES[content_type]}",
    )


def test_ids_that_are_not_plain_tokens_are_digested() -> None:
    assert attachment_key(EMAIL, "att_5\n", "application/pdf") != attachment_key(EMAIL, "att_5", "application/pdf")
    traversal = attachment_key(EMAIL, "../x", "application/octet-stream")
    assert_safe(traversal)
    assert "/../" not in traversal


def test_the_same_attachment_always_gets_the_same_key() -> None:
    assert attachment_key(EMAIL, "../x", "application/pdf") == attachment_key(EMAIL, "../x", "application/pdf")


@given(attachment_id=any_text.filter(bool), other_id=any_text.filter(bool), declared=declared_types,
       version=st.integers(1, 10), other_version=st.integers(1, 10))  # fmt: skip
def test_no_version_of_an_original_has_another_originals_key(attachment_id, other_id, declared, version,
                                                             other_version) -> None:  # fmt: skip
    content_type = stored_content_type(declared, None)
    key = attachment_key(EMAIL, attachment_id, content_type, version)
    assert_safe(key)
    if (attachment_id, version) != (other_id, other_version):
        assert key != attachment_key(EMAIL, other_id, content_type, other_version)
    assert key not in {raw_message_key(EMAIL, n) for n in range(1, 11)}, "nor the raw message's"
    assert not key.startswith(VIEWS_PREFIX), "nor a derived file's"


def test_a_version_sits_beside_the_original_and_the_raw_message_in_its_own_folder() -> None:
    assert attachment_key(EMAIL, "att_1", "application/pdf", 1) == f"fax_received_emails/{EMAIL}/att_1.pdf"
    assert attachment_key(EMAIL, "att_1", "application/pdf", 2) == f"fax_received_emails/{EMAIL}/att_1.v2.pdf"
    assert raw_message_key(EMAIL) == f"fax_received_emails/{EMAIL}/raw/message.eml"
    assert raw_message_key(EMAIL, 3) == f"fax_received_emails/{EMAIL}/raw/message.v3.eml"
    assert set(raw_message_key(EMAIL, 3)) <= STORAGE_KEY_CHARACTERS
    derived = view_key(EMAIL, UUID("00000000-0000-0000-0000-000000000001"), "view.pdf")
    assert derived.startswith("fax_views/") and not derived.startswith("fax_received_emails/")
