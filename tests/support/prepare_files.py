"""Fax files the prepare_fax job meets, good and bad, made here with Pillow, pikepdf and by hand:
the samples of devstack/standins/sample_faxes.py in other encodings and resolutions, and each
kind of file it cannot prepare (damaged, cut short, encrypted, without pages, a page over the
pixel cap or over PDF's largest page)."""

from __future__ import annotations

import io
import struct
import zlib

import pikepdf
from PIL import Image, ImageDraw, TiffImagePlugin

from devstack.standins.sample_faxes import _pdf_file, fax_tiff, invoice_pdf, pdf


def drawn_pages(count: int, size: tuple[int, int], mode: str = "1") -> list[Image.Image]:
    """Pages with a frame and a diagonal, in `mode` (1, L, RGB)."""
    pages = []
    for n in range(count):
        page = Image.new(mode, size, "white")
        draw = ImageDraw.Draw(page)
        draw.rectangle((20, 20, size[0] - 20, size[1] - 20), outline="black", width=3)
        draw.line((0, 0, size[0], size[1]), fill="black", width=2 + n)
        pages.append(page)
    return pages


def tiff(pages: list[Image.Image], compression: str, dpi: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    pages[0].save(out, "TIFF", save_all=True, append_images=pages[1:], compression=compression, dpi=dpi)
    return out.getvalue()


def mixed_resolution_tiff() -> bytes:
    """A fax whose first page came in standard mode (204 x 98) and second in fine mode (204 x 196):
    the same A4 paper, twice as many lines. Each frame carries its own resolution (Pillow's
    save_all would write the first's for all)."""
    out = io.BytesIO()
    standard, fine = drawn_pages(1, (1728, 1145))[0], drawn_pages(1, (1728, 2290))[0]
    with TiffImagePlugin.AppendingTiffWriter(out, True) as writer:
        for page, dpi in ((standard, (204, 98)), (fine, (204, 196))):
            page.encoderinfo = {}
            page.save(writer, "TIFF", compression="group4", dpi=dpi)
            writer.newFrame()
    return out.getvalue()


def image(kind: str, size: tuple[int, int] = (800, 1100), dpi: tuple[int, int] = (200, 200)) -> bytes:
    """A one-page JPEG or PNG."""
    out = io.BytesIO()
    drawn_pages(1, size, "RGB")[0].save(out, kind, dpi=dpi)
    return out.getvalue()


def encrypted_pdf(user_password: str) -> bytes:
    """The invoice, encrypted: with a user password it does not open without it; with an empty one
    (an owner password only, restrictions on printing and copying) it opens as any PDF."""
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(invoice_pdf())) as document:
        document.save(out, encryption=pikepdf.Encryption(owner="owner-secret", user=user_password, R=6))
    return out.getvalue()


def empty_pdf() -> bytes:
    return _pdf_file([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"])


def oversized_page_pdf(points: int = 20_000) -> bytes:
    """A page beyond PDF's largest, 14,400 units a side."""
    return _pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {points} {points}] >>".encode(),
    ])  # fmt: skip


def image_bomb_pdf(pixels: int = 12_000) -> bytes:
    """An A4 page drawing one bilevel image of pixels x pixels (144 million by default), which
    Flate squeezes into a few kilobytes: a decompression bomb."""
    compressor = zlib.compressobj(9)
    row = bytes(pixels // 8)
    data = b"".join(compressor.compress(row) for _ in range(pixels)) + compressor.flush()
    content = b"q 595 0 0 842 0 0 cm /Im0 Do Q"
    return _pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im0 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /BitsPerComponent 1 /ColorSpace /DeviceGray "
        b"/Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream" % (pixels, pixels, len(data), data),
    ])  # fmt: skip


def tiff_bomb(width: int, height: int) -> bytes:
    """A bilevel G4 TIFF whose header says width x height and whose strip is a few bytes: what a
    decoder would allocate is in the header, not in the file's size."""
    strip = b"\x00" * 16
    tags = [
        (256, 4, 1, width),  # ImageWidth, LONG
        (257, 4, 1, height),  # ImageLength
        (258, 3, 1, 1),  # BitsPerSample
        (259, 3, 1, 4),  # Compression: CCITT Group 4
        (262, 3, 1, 0),  # PhotometricInterpretation: white is zero
        (273, 4, 1, 0),  # StripOffsets (filled in below)
        (277, 3, 1, 1),  # SamplesPerPixel
        (278, 4, 1, height),  # RowsPerStrip
        (279, 4, 1, len(strip)),  # StripByteCounts
    ]
    ifd_offset = 8
    ifd_size = 2 + 12 * len(tags) + 4
    strip_offset = ifd_offset + ifd_size
    entries = b"".join(
        struct.pack("<HHII", tag, kind, count, strip_offset if tag == 273 else value)
        if kind == 4 else struct.pack("<HHIHH", tag, kind, count, value, 0)
        for tag, kind, count, value in tags
    )  # fmt: skip
    return b"II*\x00" + struct.pack("<I", ifd_offset) + struct.pack("<H", len(tags)) + entries + b"\x00" * 4 + strip


def cut_short(data: bytes) -> bytes:
    """A file whose transfer stopped half-way."""
    return data[: len(data) // 2]


__all__ = ["fax_tiff", "invoice_pdf", "pdf"]
