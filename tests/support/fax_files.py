"""Fax files for the viewer's tests, made here: PDFs written by hand (so that each says exactly what
it tests, e.g. Japanese text in a font it does not embed), a CCITT G4 TIFF as fax services send
it and the viewing PDF the server makes of it (img2pdf, lossless), and a PNG.

Every page carries a black square in its top left corner, so that a test can tell where the page's
top left ended up once it is rotated."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import img2pdf
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[2]
A4 = (595, 842)  # points
# Standard resolution of a G3/G4 fax: 204 dpi across, 98 lines per inch (half the fine mode's 196).
FAX_STANDARD_DPI = (204, 98)
HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
FAX_WIDTH_PX = 1728  # an A4 fax line
FAX_A4_LINES_STANDARD = 1143  # 297 mm at 98 lines per inch

# "株式会社山田商事 請求書" in UTF-16BE, as /Encoding /UniJIS-UCS2-H reads a string.
JAPANESE_TEXT = "株式会社山田商事 請求書"
JAPANESE_TEXT_POSITION = (60, 700)  # points from the bottom left: where its baseline starts
JAPANESE_TEXT_SIZE = 40  # points


def pdf(pages: list[bytes], resources: bytes = b"", extra_objects: list[bytes] | None = None,
        size: tuple[int, int] = A4) -> bytes:  # fmt: skip
    """A PDF whose pages have these content streams. Objects 1-2 are the catalog and the page tree;
    `extra_objects` are numbered from 3 (resources refer to them), the pages and their contents after."""
    extra = extra_objects or []
    first_page = 3 + len(extra)
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    objects.extend(extra)
    kids = []
    for index, content in enumerate(pages):
        page_number = first_page + 2 * index
        kids.append(f"{page_number} 0 R".encode())
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << %s >> /Contents %d 0 R >>"
                       % (size[0], size[1], resources, page_number + 1))  # fmt: skip
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(pages))
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def corner_mark(size: tuple[int, int] = A4) -> bytes:
    """A black square of 60 points in the page's top left corner, 20 points in."""
    return b"0 g 20 %d 60 60 re f" % (size[1] - 80)


def numbered_pdf(count: int) -> bytes:
    """`count` A4 pages, each with its corner mark, a frame, and bars as many as its number (up to 10)."""
    pages = []
    for number in range(1, count + 1):
        bars = b" ".join(b"%d 300 20 300 re f" % (100 + 30 * bar) for bar in range(min(number, 10)))
        pages.append(b"%s 4 w 40 40 515 762 re S %s BT /F1 36 Tf 100 700 Td (Page %d) Tj ET"
                     % (corner_mark(), bars, number))  # fmt: skip
    return pdf(pages, resources=b"/Font << /F1 3 0 R >>", extra_objects=[HELVETICA])


def invoice_pdf() -> bytes:
    """An invoice's page as accounting software writes it: text in a TrueType font the file embeds
    (under a name no system has, so that only the embedded program can draw it), which PDF.js hands
    to the page as a FontFace made from bytes; a line in Helvetica, which it does not embed; and a
    seal (印) in a spot colour whose tint is a PostScript calculator function, the one thing PDF.js
    would compile with eval."""
    font_path = ROOT / "public" / "admin" / "vendor" / "pdfjs" / "standard_fonts" / "LiberationSans-Regular.ttf"
    font_file = font_path.read_bytes()
    widths = ImageFont.truetype(str(font_path), 1000)  # a glyph's advance in thousandths of an em
    content = (b"%s BT /F1 36 Tf 60 700 Td (INVOICE 2026-11) Tj ET BT /F2 18 Tf 60 640 Td (Total JPY 123,456) Tj ET"
               b" /Seal cs 1 scn 420 600 110 110 re f" % corner_mark())  # fmt: skip
    font = (b"<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+InvoiceSans /Encoding /WinAnsiEncoding"
            b" /FirstChar 32 /LastChar 126 /Widths [%s] /FontDescriptor 4 0 R >>"
            % b" ".join(b"%d" % round(widths.getlength(chr(code))) for code in range(32, 127)))  # fmt: skip
    descriptor = (b"<< /Type /FontDescriptor /FontName /ABCDEF+InvoiceSans /Flags 32 /FontBBox [-203 -303 1050 910]"
                  b" /ItalicAngle 0 /Ascent 905 /Descent -212 /CapHeight 716 /StemV 80"
                  b" /FontFile2 5 0 R >>")  # fmt: skip
    stream = b"<< /Length %d /Length1 %d >>\nstream\n%s\nendstream" % (len(font_file), len(font_file), font_file)
    # The tint t as red: (1, 1 - t, 1 - t).
    tint = b"{ 1 exch sub dup 1 3 1 roll }"
    function = (b"<< /FunctionType 4 /Domain [0 1] /Range [0 1 0 1 0 1] /Length %d >>\nstream\n%s\nendstream"
                % (len(tint), tint))  # fmt: skip
    resources = b"/Font << /F1 3 0 R /F2 6 0 R >> /ColorSpace << /Seal [/Separation /Shuniku /DeviceRGB 7 0 R] >>"
    return pdf([content], resources=resources, extra_objects=[font, descriptor, stream, HELVETICA, function])


def japanese_pdf() -> bytes:
    """One page of Japanese text in a font the file does not embed: a CID-keyed font named only by
    its PostScript name (HeiseiKakuGo-W5, one of the fonts Acrobat's Asian font packs supply), whose
    strings are UCS-2 read through the predefined CMap UniJIS-UCS2-H. PDF.js needs its CMaps to read
    the string (UniJIS-UCS2-H) and to find each CID's character for the system's font (Adobe-Japan1-UCS2)."""
    text = JAPANESE_TEXT.encode("utf-16-be").hex().upper().encode()
    x, y = JAPANESE_TEXT_POSITION
    content = b"%s BT /F1 %d Tf %d %d Td <%s> Tj ET" % (corner_mark(), JAPANESE_TEXT_SIZE, x, y, text)
    font = (b"<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiKakuGo-W5 /Encoding /UniJIS-UCS2-H"
            b" /DescendantFonts [4 0 R] >>")  # fmt: skip
    cid_font = (b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiKakuGo-W5"
                b" /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 5 >>"
                b" /FontDescriptor 5 0 R /DW 1000 >>")  # fmt: skip
    descriptor = (b"<< /Type /FontDescriptor /FontName /HeiseiKakuGo-W5 /Flags 4 /FontBBox [-92 -250 1010 922]"
                  b" /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>")  # fmt: skip
    return pdf([content], resources=b"/Font << /F1 3 0 R >>", extra_objects=[font, cid_font, descriptor])


def japanese_text_box() -> tuple[float, float, float, float]:
    """Where the Japanese text's glyphs are, as fractions of the page (left, top, right, bottom):
    full-width characters are one em wide, and a glyph stands between the baseline and about 0.9 em above it."""
    x, y = JAPANESE_TEXT_POSITION
    em = JAPANESE_TEXT_SIZE
    width = em * len(JAPANESE_TEXT)
    return (x / A4[0], (A4[1] - y - 0.9 * em) / A4[1], (x + width) / A4[0], (A4[1] - y + 0.1 * em) / A4[1])


def g4_tiff(pages: int = 3) -> bytes:
    """A multi-page CCITT Group 4 TIFF at the standard fax resolution (204 x 98 dpi), as an
    eFax-style service sends it: A4 lines, the corner mark, a frame and a bar per page number."""
    images = []
    for number in range(1, pages + 1):
        image = Image.new("1", (FAX_WIDTH_PX, FAX_A4_LINES_STANDARD), 1)
        draw = ImageDraw.Draw(image)
        draw.rectangle((56, 27, 56 + 170, 27 + 82), fill=0)  # about 60 points square at 204 x 98 dpi
        draw.rectangle((100, 100, FAX_WIDTH_PX - 100, FAX_A4_LINES_STANDARD - 100), outline=0, width=6)
        for bar in range(number):
            draw.rectangle((300 + 80 * bar, 400, 340 + 80 * bar, 800), fill=0)
        images.append(image)
    out = io.BytesIO()
    images[0].save(out, format="TIFF", compression="group4", dpi=FAX_STANDARD_DPI, save_all=True,
                   append_images=images[1:])  # fmt: skip
    return out.getvalue()


def viewing_pdf(tiff: bytes) -> bytes:
    """The viewing PDF of a TIFF, as the server makes it: img2pdf embeds each G4 page as it is
    (CCITTFaxDecode) at the page size its resolution gives."""
    converted = img2pdf.convert(tiff)
    assert isinstance(converted, bytes)
    assert b"/CCITTFaxDecode" in converted, "lossless: the G4 data embedded as it is"
    return converted


def png(width: int = 800, height: int = 500) -> bytes:
    """A landscape photo-like picture: a pale ground, a coloured band, and the corner mark."""
    image = Image.new("RGB", (width, height), (246, 242, 230))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, height // 2 - 40, width, height // 2 + 40), fill=(30, 90, 190))
    draw.rectangle((20, 20, 100, 100), fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def not_a_pdf() -> bytes:
    """What a truncated download would leave: a PDF's header and nothing usable."""
    return b"%PDF-1.4\n" + zlib.compress(b"truncated")[:8]
