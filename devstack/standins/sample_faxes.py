"""Sample fax attachments: small but real files (they open in any viewer), with the Japanese file
names faxes tend to carry, and two faxes as Japanese offices really receive them:

- an eFax-style fax-to-mail delivery: a multi-page TIFF, CCITT Group 4, at fax standard resolution
  (204 x 98 dpi, so each page's pixels are twice as wide as tall), the sender's number only in the
  subject (EFAX_SUBJECT: 「eFax メッセージ 送信元 06-1111-2222 - 3 ページ」);
- a PDF invoice (請求書) from 株式会社山田商事, its Japanese text in a CID font it does not embed
  (HeiseiKakuGo-W5, UniJIS-UCS2-H), as many office systems write them: a viewer needs the
  CMaps to draw it.
"""

from __future__ import annotations

import io

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
    return _pdf_file(objects)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


# Fax standard mode: 204 dpi across, 98 lines an inch down; an A4 page is 1728 dots by 1145 lines.
STANDARD_DPI = (204, 98)
A4_STANDARD = (1728, 1145)
EFAX_SENDER = "eFax <message@efax.example.jp>"
EFAX_NUMBER = "06-1111-2222"
EFAX_PAGES = 3
EFAX_SUBJECT = f"eFax メッセージ 送信元 {EFAX_NUMBER} - {EFAX_PAGES} ページ"
EFAX_FILENAME = "FAX_20261204_0611112222.tif"
INVOICE_SENDER = "株式会社山田商事 <seikyu@yamada-shoji.example.jp>"
INVOICE_SUBJECT = "【請求書】2026年11月分のご請求（株式会社山田商事）"
INVOICE_FILENAME = "請求書_2026年11月_株式会社山田商事.pdf"


def fax_tiff(pages: int = EFAX_PAGES, number: str = EFAX_NUMBER, dpi: tuple[int, int] = STANDARD_DPI,
             size: tuple[int, int] = A4_STANDARD, compression: str = "group4") -> bytes:  # fmt: skip
    """A multi-page bilevel TIFF as a fax machine sends it: each page a header line (the sender's
    number, the page), a frame and lines of "text", at `dpi` (fax standard resolution unless told)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=28)
    images = []
    for n in range(1, pages + 1):
        page = Image.new("1", size, 1)
        draw = ImageDraw.Draw(page)
        draw.text((40, 12), f"FROM {number}   2026-12-04 09:15   P.{n}/{pages}", fill=0, font=font)
        draw.rectangle((40, 60, size[0] - 40, size[1] - 40), outline=0, width=4)
        draw.text((80, 90), "ORDER SHEET" if n == 1 else f"ORDER SHEET (cont. {n})", fill=0, font=font)
        for row in range(8):
            y = 160 + row * 100
            if y + 40 > size[1] - 60:
                break
            draw.line((80, y + 40, size[0] - 80, y + 40), fill=0, width=2)
            draw.text((90, y), f"item {row + 1}    qty {row + 2}    JPY {(row + 1) * 1200:,}", fill=0, font=font)
        images.append(page)
    out = io.BytesIO()
    images[0].save(out, "TIFF", save_all=True, append_images=images[1:], compression=compression, dpi=dpi)
    return out.getvalue()


def invoice_pdf() -> bytes:
    """A one-page A4 invoice from 株式会社山田商事 whose Japanese text uses a CID font it does not
    embed (Adobe-Japan1, HeiseiKakuGo-W5, UniJIS-UCS2-H: each character its UTF-16 code), with a
    drawn table, so that a renderer without the font still draws the lines."""
    lines = [
        (72, 770, 20, "請求書"),
        (72, 730, 11, "株式会社サンプル 御中"),
        (360, 730, 11, "株式会社山田商事"),
        (360, 714, 9, "大阪府大阪市北区梅田1-1-1"),
        (360, 700, 9, "TEL 06-1111-2222 FAX 06-1111-2223"),
        (72, 660, 11, "請求番号 INV-2026-1104　請求日 2026年11月30日"),
        (72, 620, 14, "ご請求金額 ¥132,000（税込）"),
        (80, 560, 10, "品名"),
        (340, 560, 10, "数量"),
        (440, 560, 10, "金額"),
        (80, 536, 10, "コピー用紙 A4 500枚"),
        (340, 536, 10, "40"),
        (440, 536, 10, "¥120,000"),
        (80, 512, 10, "消費税（10%）"),
        (440, 512, 10, "¥12,000"),
        (72, 440, 9, "お支払期限 2026年12月31日　振込先 サンプル銀行 梅田支店 普通 1234567"),
    ]
    table = b"0.8 w 72 576 m 523 576 l S 72 550 m 523 550 l S 72 526 m 523 526 l S 72 502 m 523 502 l S " \
            b"72 502 m 72 576 l S 330 502 m 330 576 l S 430 502 m 430 576 l S 523 502 m 523 576 l S\n"  # fmt: skip
    return japanese_pdf(lines, table)


def japanese_pdf(lines: list[tuple[int, int, int, str]], drawing: bytes = b"") -> bytes:
    """One A4 page: `drawing` (PDF path operators: rules, frames), then each line (x, y, size in
    points, text) in a CID font the file does not embed (HeiseiKakuGo-W5, UniJIS-UCS2-H: each
    character its UTF-16 code), as many office systems write Japanese documents."""
    text = b"".join(
        f"BT /F1 {size} Tf {x} {y} Td <{line.encode('utf-16-be').hex().upper()}> Tj ET\n".encode()
        for x, y, size, line in lines
    )
    content = drawing + text
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiKakuGo-W5 /Encoding /UniJIS-UCS2-H "
        b"/DescendantFonts [6 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiKakuGo-W5 /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 >>",
        b"<< /Type /FontDescriptor /FontName /HeiseiKakuGo-W5 /Flags 4 /FontBBox [-92 -250 1010 922] "
        b"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 737 /StemV 69 >>",
    ]
    return _pdf_file(objects)


def _pdf_file(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog), with a correct xref table."""
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
