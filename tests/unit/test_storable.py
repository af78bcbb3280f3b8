"""The storable-text rule (lib/storable.py): what PostgreSQL refuses in text and jsonb (U+0000 and
lone surrogates) is replaced by U+FFFD, nothing else changes, nothing is dropped, and every
replacement is reported by a JSON Pointer that leads to it."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from lib.storable import REPLACEMENT, storable_id, storable_json, storable_text


# Written from PostgreSQL's rules, not from the code: a UTF-8 database stores every Unicode
# scalar value except U+0000; a lone surrogate is not a scalar value, so it cannot be UTF-8.
def postgres_stores(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *strings(item))]
    return []


def resolve(document: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        document = document[int(token)] if isinstance(document, list) else document[token]
    return document


def shape(value: Any) -> Any:
    """The document with every string blanked: what must not change."""
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, dict):
        return sorted((shape(item) for item in value.values()), key=repr)
    return "" if isinstance(value, str) else value


any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8) | st.sampled_from(
    ["\x00", "\ud800", "a\udfffb", "~/\x00", "a\x00", "a\ufffd"]
)
documents = st.recursive(
    st.none() | st.booleans() | st.integers() | any_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=20,
)


@given(documents)
@example({"a\x00": 1, "a\ufffd": 2})
@example({"subject": "x\x00", "a/b~\x00": ["\ud83d", "\ud83d\ude00"]})
def test_every_string_becomes_storable_and_nothing_else_changes(document: Any) -> None:
    original = copy.deepcopy(document)

    result, replaced = storable_json(document)

    assert all(postgres_stores(s) for s in strings(result))
    assert shape(result) == shape(original), "no value dropped or changed but text"
    if all(postgres_stores(s) for s in strings(original)):
        assert (result, replaced) == (original, [])
    else:
        assert replaced, "a replacement is always reported"
    assert len(replaced) == len(set(replaced))
    for pointer in replaced:
        found = resolve(result, pointer)  # every pointer leads somewhere in the result
        name = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        assert REPLACEMENT in name or (isinstance(found, str) and REPLACEMENT in found)


def test_examples() -> None:
    data = {"email_id": "em_\x00", "subject": "FAX\x00 \ud800受信", "to": ["ok@example.jp"],
            "headers": {"x-fax\x00id": "a\udfff", "a/b": "\x00"},
            "attachments": [{"id": "att_1", "filename": "請求書\x00.pdf"}]}  # fmt: skip

    result, replaced = storable_json(data)

    assert result == {"email_id": "em_\ufffd", "subject": "FAX\ufffd \ufffd受信", "to": ["ok@example.jp"],
                      "headers": {"x-fax\ufffdid": "a\ufffd", "a/b": "\ufffd"},
                      "attachments": [{"id": "att_1", "filename": "請求書\ufffd.pdf"}]}  # fmt: skip
    assert replaced == ["/email_id", "/subject", "/headers/x-fax\ufffdid", "/headers/a~1b",
                        "/attachments/0/filename"]  # fmt: skip


def test_a_renamed_member_never_overwrites_another() -> None:
    result, replaced = storable_json({"a\x00": 1, "a\ufffd": 2})
    assert result == {"a\ufffd\ufffd": 1, "a\ufffd": 2}
    assert replaced == ["/a\ufffd\ufffd"]


def test_a_paired_surrogate_is_a_character_and_stays() -> None:
    assert storable_text("\U0001f4e0") == "\U0001f4e0"
    assert storable_text("\ud83d") == REPLACEMENT


def test_any_depth_json_accepts() -> None:
    deep: Any = "\x00"
    for _ in range(5000):
        deep = [deep]
    result, replaced = storable_json(deep)
    assert replaced == ["/0" * 5000]
    assert resolve(result, replaced[0]) == REPLACEMENT


# The ids of an e-mail and of its delivery: what tells two e-mails apart must stay apart.
@given(any_text, any_text)
@example("a\x00b", "a\ufffdb")
@example("a\ud800b", "a\ufffdb")
@example("a\x00b", "a\ud800b")
@example("a\x00", "a\ufffd" + "\ufffdsha256:" + hashlib.sha256(b"a\x00").hexdigest())
def test_distinct_ids_are_stored_as_distinct_storable_ids(first: str, second: str) -> None:
    assert postgres_stores(storable_id(first))
    assert (storable_id(first) == storable_id(second)) == (first == second)


@given(any_text)
def test_an_id_and_its_text_made_storable_are_two_ids(text: str) -> None:
    # The collision that random pairs would seldom draw: the id, and the id storable_text makes of it.
    assert (storable_id(text) == storable_id(storable_text(text))) == postgres_stores(text)


@given(any_text)
def test_an_id_postgres_can_store_is_kept_as_it_is(text: str) -> None:
    if postgres_stores(text):
        assert storable_id(text) == text


def test_an_id_postgres_cannot_store_is_kept_readable_with_its_digest() -> None:
    assert storable_id("a\x00b") == "a\ufffdb\ufffdsha256:" + hashlib.sha256(b"a\x00b").hexdigest()
    assert storable_id("a\ud800b") == "a\ufffdb\ufffdsha256:" + hashlib.sha256(b"a\xed\xa0\x80b").hexdigest()
    assert storable_id("a\ufffdb") == "a\ufffdb"


def test_a_storable_id_that_looks_like_a_replacement_is_digested_too() -> None:
    # Else the provider's id "a\ufffd\ufffdsha256:<digest of a\x00>" and "a\x00" would be one row.
    lookalike = "a\ufffd\ufffdsha256:" + hashlib.sha256(b"a\x00").hexdigest()
    assert storable_id(lookalike) != lookalike
    assert storable_id(lookalike) != storable_id("a\x00")
    assert storable_id(lookalike + "\n") == lookalike + "\n", "only the form itself, at the very end"
