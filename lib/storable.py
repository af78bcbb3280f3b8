"""Text that PostgreSQL can store, whatever the provider sent.

A UTF-8 database cannot hold U+0000 in `text`, and `jsonb` refuses the escape `\\u0000` and any
lone surrogate (U+D800..U+DFFF, which JSON can spell as `\\ud800` and Python parses into a str).
JavaScript, which produces Resend's JSON, emits both readily. Refusing them would lose the e-mail
(the webhook would answer 500 on every redelivery) or poison a job (its attachment row retried
until the job fails), so the rule is: every such character is replaced by U+FFFD, the Unicode
replacement character, and the places where that happened are reported so they can be recorded.

An identifier is different: replacing its characters would make two ids one (`a\\u0000b` and
`a\\ufffdb` would both be `a\\ufffdb`, and the second e-mail a duplicate of the first). An id is
therefore made storable by `storable_id`, which keeps distinct ids distinct by the id's digest,
the rule the worker's storage keys already follow for attachment ids (lib/worker/records.py).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

REPLACEMENT = "\ufffd"
# The webhook stores, under this key of the e-mail's `data`, where it replaced characters.
REPLACED_KEY = "_document_jobs_replaced_text"

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    return _UNSTORABLE.sub(REPLACEMENT, text)


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None


def digest(text: str) -> str:
    """The SHA-256 of the text's UTF-8, in hex. surrogatepass: text with a lone surrogate (JSON
    allows "\\ud800") still has a digest, and one no other text has."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_DIGEST_MARK = REPLACEMENT + "sha256:"
_DIGESTED = re.compile(re.escape(_DIGEST_MARK) + r"[0-9a-f]{64}\Z")  # \Z: the very end, not before a newline


def storable_id(text: str) -> str:
    """An identifier PostgreSQL can store, a different one for each different id: the id itself
    when it is storable, else its storable text followed by U+FFFD, "sha256:" and the id's digest.

    A storable id that already ends in that form is given it too (its own digest), so that no id
    kept as it is can equal another's replacement: two ids share a stored form only if they share
    a digest. The form stays readable where an operator sees it (the screen, the CLI).
    """
    if is_storable(text) and not _DIGESTED.search(text):
        return text
    return f"{storable_text(text)}{_DIGEST_MARK}{digest(text)}"


def _pointer_token(key: str) -> str:
    # RFC 6901: "~" and "/" inside a member name are escaped.
    return key.replace("~", "~0").replace("/", "~1")


def storable_json(document: Any) -> tuple[Any, list[str]]:
    """The document with every string and member name made storable, and the JSON Pointers
    (RFC 6901, in document order, to the replaced value or renamed member) of what changed.

    Containers are changed in place (the document is the caller's own parse). A renamed member
    that would collide with another member gets further U+FFFD until it is unique, so that no
    value is ever dropped. Iterative, so that any depth json.loads accepted is handled.
    """
    root = [document]
    replaced: dict[str, None] = {}  # an ordered set: a member may be renamed and its value replaced
    stack: list[tuple[list[Any] | dict[str, Any], Any, str]] = [(root, 0, "")]
    while stack:
        parent, slot, pointer = stack.pop()
        value = parent[slot]
        if isinstance(value, str):
            if not is_storable(value):
                parent[slot] = storable_text(value)
                replaced[pointer] = None
        elif isinstance(value, list):
            stack.extend((value, index, f"{pointer}/{index}") for index in reversed(range(len(value))))
        elif isinstance(value, dict):
            if not all(is_storable(key) for key in value):
                renamed: dict[str, Any] = {}
                for key, item in value.items():
                    new_key = storable_text(key)
                    if new_key != key:
                        while new_key in value or new_key in renamed:
                            new_key += REPLACEMENT
                        replaced[f"{pointer}/{_pointer_token(new_key)}"] = None
                    renamed[new_key] = item
                value.clear()
                value.update(renamed)
            stack.extend((value, key, f"{pointer}/{_pointer_token(key)}") for key in reversed(list(value)))
    return root[0], list(replaced)


def pointers_to(document: Any, kind: type) -> list[str]:
    """The JSON Pointers (RFC 6901, in document order) of the values of type `kind` in the document."""
    found = []
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, pointer = stack.pop()
        if isinstance(value, kind):
            found.append(pointer)
        elif isinstance(value, list):
            stack.extend((item, f"{pointer}/{index}") for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            stack.extend((item, f"{pointer}/{_pointer_token(key)}") for key, item in reversed(list(value.items())))
    return found
