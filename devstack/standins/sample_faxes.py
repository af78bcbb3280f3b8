"""Sample fax attachments: small but real PDF files (they open in any viewer), with the Japanese
file names faxes tend to carry."""

from __future__ import annotations

FILENAMES = (
    "請求書_2026年11月.pdf",
    "注文書（第2版）.pdf",
    "見積書 株式会社サンプル.pdf",
    "納品書.pdf",
    "FAX送付状.pdf",
)


def pdf(title: str, page_count: int = 1) -> bytes:
    """A valid PDF whose pages show `title` (ASCII) and the page number, with a correct xref table."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * n for n in range(page_count)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids).encode()
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(page_count).encode() + b" >>")
    font_id = 3 + 2 * page_count
    for n, pid in enumerate(page_ids, start=1):
        text = f"BT /F1 18 Tf 72 720 Td ({_escape(title)}) Tj 0 -28 Td (page {n} of {page_count}) Tj ET".encode()
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 "
            + str(font_id).encode() + b" 0 R >> >> /Contents " + str(pid + 1).encode() + b" 0 R >>"
        )  # fmt: skip
        objects.append(b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
