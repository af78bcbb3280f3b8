"""What a stored attachment is called outside the database: its extension, from the type it is
stored and served with (the worker's object keys), and the name it downloads as, on the screen
and in the CLI's `download` alike.

The sender's file name is anything the sender chose. `scan.pdf.exe` stored as application/pdf
would download as an .exe, and `FAX-invoice\\u202efdp.exe` is shown as "FAX-invoiceexe.pdf" by
the right-to-left override inside it. So the name a person sees and saves is the sender's with
every control, format (bidi overrides and isolates, zero-width characters) and separator
character removed, path and shell punctuation replaced, and its extension replaced by the
stored type's: a PDF always downloads as .pdf.
"""

from __future__ import annotations

import re
import unicodedata

# What a fax arrives as, and the extension of its stored object (lib/worker/records.py holds every
# other type to application/octet-stream).
DOCUMENT_TYPES = {
    "application/pdf": "pdf",
    "image/tiff": "tif",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
}
GENERIC_TYPE = "application/octet-stream"
GENERIC_EXTENSION = "bin"
FALLBACK_STEM = "attachment"
MAX_STEM = 120  # code points: with the extension, well under the 255 bytes of most file systems' names

# Control (Cc), format (Cf: bidi overrides, isolates and marks, zero-width characters, BOM),
# surrogates (Cs), private use (Co), unassigned (Cn) and line or paragraph separators (Zl, Zp).
_HIDDEN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
# Separators of paths (POSIX, Windows) and what Windows refuses in a name.
_PUNCTUATION = re.compile(r'[/\\:*?"<>|]')
# What is taken for the sender's extension (and replaced): "No. 5 from ACME" has none.
_SUFFIX = re.compile(r"[A-Za-z0-9]{1,10}")


def extension(content_type: str | None) -> str:
    """The extension of the stored type (no dot): one of DOCUMENT_TYPES', else "bin"."""
    base = (content_type or "").split(";", 1)[0].strip().lower()
    return DOCUMENT_TYPES.get(base, GENERIC_EXTENSION)


def download_name(filename: str | None, content_type: str | None) -> str:
    """The name an attachment is shown and downloaded as (see the module's docstring), e.g.
    download_name("scan.pdf.exe", "application/pdf") == "scan.pdf.pdf"."""
    name = unicodedata.normalize("NFC", filename or "")
    name = "".join(" " if char.isspace() else char for char in name)  # tabs and line breaks too
    name = "".join(char for char in name if unicodedata.category(char) not in _HIDDEN)
    name = _PUNCTUATION.sub("_", name)
    name = re.sub(r" {2,}", " ", name).strip(" .")
    stem, dot, suffix = name.rpartition(".")
    stem = stem.rstrip(" .") if dot and _SUFFIX.fullmatch(suffix) else name
    stem = stem[:MAX_STEM].rstrip(" .") or FALLBACK_STEM
    return f"{stem}.{extension(content_type)}"
