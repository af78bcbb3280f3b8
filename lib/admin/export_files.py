"""What an export of the stored originals is made of (document-jobs-admin export, lib/admin/export.py):
each original's file name, the index CSV's header and rows, and the SHA256SUMS line; no I/O here.

A name is `YYYYMMDD_取引先_金額_<short id>.<ext>`: the date the fax is filed by (its 取引年月日,
or the day it was received in the office's time zone when none is entered), the counterparty and
the amount as entered (取引先未入力 and 金額未入力 when they are not), the fax's short id (with -2,
-3 for its second and third original, by the order they were recorded), and the stored type's
extension; the e-mail itself (the raw message, where one is stored) is the same name with .eml.
The counterparty is the only text in it that people typed (often picked from the
sender's name), so every name is made safe for Windows, which is what offices copy to: no
reserved character (\\ / : * ? " < > |), no control or format character, no trailing dot or
space, never a reserved device name (CON, NUL, COM1...), at most MAX_NAME_CHARS characters and
MAX_NAME_BYTES bytes in UTF-8 (NTFS allows 255 UTF-16 units, most Linux file systems 255 bytes,
and the folder's path counts against Windows' 260 too).

The CSV is for Excel in Japan: UTF-8 with a BOM, CRLF. A cell is inert: control and bidirectional
characters become their escapes (\\x1b, \\u202e) as the CLI prints them, and a cell that begins
with = + - @ gets a leading apostrophe, which Excel reads as "this is text", so a
sender's `=HYPERLINK(...)` is shown, never evaluated (OWASP's advice on CSV injection).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lib.admin.terminal import terminal_text
from lib.attachment_names import extension

SHORT_ID = 8  # the fax's short id: its e-mail row id's first characters, as the screen and the CLI show it
MAX_COUNTERPARTY_CHARS = 40
MAX_NAME_CHARS = 120
MAX_NAME_BYTES = 200  # UTF-8: room left for " (2)" and for the folder's path under Windows' 260
NO_COUNTERPARTY = "取引先未入力"
NO_AMOUNT = "金額未入力"
INDEX_CSV = "index.csv"
SHA256SUMS = "SHA256SUMS"
CSV_ENCODING = "utf-8-sig"  # the BOM: Excel in Japan reads UTF-8 only with it (else as Shift_JIS)

# Control (Cc), format (Cf: bidi overrides, zero-width characters), surrogates, private use,
# unassigned, line and paragraph separators: none of them belongs in a file name.
_HIDDEN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
_RESERVED_CHARACTERS = re.compile(r'[\\/:*?"<>|]')
# Windows' reserved device names, whatever the extension after them (CON.txt is CON too), and the
# superscript digits it counts as digits there.
_DEVICE = re.compile(r"(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9¹²³]|LPT[0-9¹²³])", re.IGNORECASE)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

ATTACHMENT = "attachment"
RAW_MESSAGE = "raw_message"
RAW_EXTENSION = "eml"
KINDS = {ATTACHMENT: "原本（添付ファイル）", RAW_MESSAGE: "受信メール（.eml）"}
CSV_HEADER = (
    "ファイル名", "区分", "取引年月日", "取引金額", "取引先", "書類の種類", "ファイル名の日付", "受信日時", "送信者",
    "件名", "FAX（短縮ID）", "FAXのID", "添付ファイル・受信メールのID", "版", "元のファイル名", "ファイルの種類",
    "サイズ（バイト）", "SHA-256",
)  # fmt: skip
DATED_BY = {"transaction": "取引年月日", "received": "受信日（取引年月日の入力なし）"}


class Document(BaseModel):
    """One stored original as export_documents answers it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    kind: str = ATTACHMENT  # or RAW_MESSAGE: the e-mail itself
    fax_received_email_id: str
    version: int
    filename: str | None = None
    content_type: str | None = None
    size_bytes: int = Field(ge=0)
    sha256: str
    bucket: str
    storage_path: str
    stored_at: str
    received: str  # ISO 8601 with the office's offset
    sender: str | None = None
    subject: str | None = None
    transaction_date: str | None = None
    amount: int | None = None
    counterparty: str | None = None
    doc_type: str | None = None
    filed_on: str  # YYYY-MM-DD
    dated_by: str
    nth: int = Field(ge=1)
    of_fax: int = Field(ge=1)

    @property
    def fax(self) -> str:
        return self.fax_received_email_id[:SHORT_ID]


def _bounded(text: str, max_chars: int, max_bytes: int) -> str:
    text = text[:max_chars]
    while len(text.encode("utf-8")) > max_bytes:
        text = text[:-1]
    return text


def safe_part(
    text: str | None, max_chars: int = MAX_COUNTERPARTY_CHARS, max_bytes: int = 3 * MAX_COUNTERPARTY_CHARS
) -> str:
    """A piece of a file name from anyone's text: NFC, white space made one space, hidden
    characters dropped, Windows' reserved characters made _, length-bounded, no dot or space at
    either end ("" when nothing is left)."""
    name = unicodedata.normalize("NFC", text or "")
    name = "".join(" " if char.isspace() else char for char in name)
    name = "".join(char for char in name if unicodedata.category(char) not in _HIDDEN)
    name = _RESERVED_CHARACTERS.sub("_", name)
    name = re.sub(r" {2,}", " ", name).strip(" .")
    return _bounded(name, max_chars, max_bytes).strip(" .")


def windows_safe(name: str) -> str:
    """A whole file name as Windows takes it: one that is (or begins, before its first dot, with) a
    reserved device name gets a leading _, no trailing dot or space, bounded in characters and
    bytes with its extension kept."""
    name = safe_part(name, MAX_NAME_CHARS * 2, MAX_NAME_BYTES * 2)
    if _DEVICE.fullmatch(name.split(".", 1)[0].rstrip(" ")):
        name = "_" + name
    stem, dot, suffix = name.rpartition(".")
    if not dot or len(suffix) > 10:
        stem, dot, suffix = name, "", ""
    room_chars = MAX_NAME_CHARS - len(dot + suffix)
    room_bytes = MAX_NAME_BYTES - len((dot + suffix).encode("utf-8"))
    stem = _bounded(stem, room_chars, room_bytes).rstrip(" .") or "_"
    return f"{stem}{dot}{suffix}"


def export_name(document: Document) -> str:
    """The name an original is exported under: YYYYMMDD_取引先_金額_<short id>.<ext>."""
    counterparty = safe_part(document.counterparty) or NO_COUNTERPARTY
    amount = str(document.amount) if document.amount is not None else NO_AMOUNT
    number = f"-{document.nth}" if document.nth > 1 else ""
    day = document.filed_on.replace("-", "")
    suffix = RAW_EXTENSION if document.kind == RAW_MESSAGE else extension(document.content_type)
    return windows_safe(f"{day}_{counterparty}_{amount}_{document.fax}{number}.{suffix}")


def numbered(name: str, number: int) -> str:
    """`name` with " (number)" before its extension: a name another original took already (two
    faxes' short ids can begin alike; a case-insensitive file system sees more names as one)."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem} ({number}){dot}{suffix}" if dot else f"{name} ({number})"


def cell(value: Any) -> str | int:
    """A CSV cell that Excel shows as it is and never evaluates."""
    if value is None:
        return ""
    if isinstance(value, int):
        return value
    text = terminal_text(str(value))
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_row(document: Document, name: str) -> list[str | int]:
    return [
        cell(value)
        for value in (
            name,
            KINDS.get(document.kind, document.kind),
            document.transaction_date,
            document.amount,
            document.counterparty,
            document.doc_type,
            DATED_BY.get(document.dated_by, document.dated_by),
            document.received,
            document.sender,
            document.subject,
            document.fax,
            document.fax_received_email_id,
            document.id,
            document.version,
            document.filename,
            document.content_type,
            document.size_bytes,
            document.sha256,
        )
    ]


def sha256sums_line(sha256: str, name: str) -> str:
    """A line of SHA256SUMS as `sha256sum -c` reads it: the digest, two spaces (text mode: no
    "*", which changes nothing on POSIX), the name. A name here never holds a backslash or a line
    break, which GNU's format would need escaped."""
    return f"{sha256}  {name}\n"
