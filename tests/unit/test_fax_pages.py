"""lib/worker/fax_pages.py on real files: pages counted, a TIFF turned into a viewing PDF whose pages keep
the paper's shape and every pixel, a non-blank thumbnail at the right aspect, and each kind of
file that cannot be prepared failing with its own code (never another exception)."""

from __future__ import annotations

import ctypes
import gc
import io
from pathlib import Path
from typing import Any

import pikepdf
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image

from lib.failures import FailureCode, JobFailure
from lib.worker import fax_pages
from tests.support import prepare_files

TIFF = "image/tiff"
PDF = "application/pdf"


def prepared(tmp_path: Path, data: bytes, content_type: str) -> fax_pages.Prepared:
    tmp_path.mkdir(exist_ok=True)
    original = tmp_path / "original"
    original.write_bytes(data)
    folder = tmp_path / "derived"
    folder.mkdir(exist_ok=True)
    return fax_pages.prepare(original, content_type, folder)


def failure(tmp_path: Path, data: bytes, content_type: str) -> FailureCode:
    with pytest.raises(JobFailure) as raised:
        prepared(tmp_path, data, content_type)
    return raised.value.code


def page_sizes(view: Path) -> list[tuple[float, float]]:
    with pikepdf.open(view) as document:
        return [(float(p.mediabox[2] - p.mediabox[0]), float(p.mediabox[3] - p.mediabox[1])) for p in document.pages]


def page_images(view: Path) -> list[tuple[str, Image.Image]]:
    """Each page's one image: its filter, and its pixels as a viewer decodes them."""
    found = []
    with pikepdf.open(view) as document:
        for page in document.pages:
            [image] = page.get_images().values()
            pdf_image = pikepdf.PdfImage(image)
            found.append((str(image.Filter), pdf_image.as_pil_image().copy()))
    return found


def frames(data: bytes) -> list[Image.Image]:
    with Image.open(io.BytesIO(data)) as image:
        out = []
        for n in range(image.n_frames):
            image.seek(n)
            out.append(image.copy())
        return out


def assert_thumbnail(path: Path | None, aspect: float) -> None:
    """A WebP within the box, at the page's aspect (height / width) to a pixel, and not blank."""
    assert path is not None
    with Image.open(path) as thumbnail:
        assert thumbnail.format == "WEBP"
        width, height = thumbnail.size
        assert width <= fax_pages.THUMBNAIL_BOX[0] and height <= fax_pages.THUMBNAIL_BOX[1]
        assert max(width, height) >= min(fax_pages.THUMBNAIL_BOX) - 1, "fills the box one way"
        assert abs(height - width * aspect) <= 1.5, (thumbnail.size, aspect)
        darkest, lightest = thumbnail.convert("L").getextrema()
        assert darkest < 128 < lightest, "the page's ink shows"


def test_a_pdf_is_counted_and_viewed_as_it_is(tmp_path) -> None:
    result = prepared(tmp_path, prepare_files.pdf("INVOICE", page_count=3), PDF)
    assert (result.page_count, result.view) == (3, None)
    assert_thumbnail(result.thumbnail, 842 / 595)


def test_the_invoice_without_its_font_is_prepared(tmp_path) -> None:
    result = prepared(tmp_path, prepare_files.invoice_pdf(), PDF)
    assert (result.page_count, result.view) == (1, None)
    assert_thumbnail(result.thumbnail, 842 / 595)


def test_a_g4_fax_at_standard_resolution_keeps_its_paper_and_every_bit(tmp_path) -> None:
    # 204 x 98 dpi: 1728 x 1145 pixels are 8.47 x 11.68 inches (A4). Drawn at one resolution the
    # page would be 0.66 as tall as wide instead of 1.38.
    data = prepare_files.fax_tiff(pages=3)
    result = prepared(tmp_path, data, TIFF)
    assert result.page_count == 3 and result.view is not None
    paper = (1728 / 204 * 72, 1145 / 98 * 72)
    for width, height in page_sizes(result.view):
        assert (width, height) == pytest.approx(paper, abs=0.01)
    for (filter_name, pixels), frame in zip(page_images(result.view), frames(data), strict=True):
        assert "CCITTFaxDecode" in filter_name, "G4 data copied, not re-encoded"
        assert pixels.convert("L").tobytes() == frame.convert("L").tobytes()
    assert_thumbnail(result.thumbnail, paper[1] / paper[0])


@pytest.mark.parametrize(("compression", "mode"), [("group3", "1"), ("tiff_lzw", "L"), ("jpeg", "RGB")])
def test_other_tiff_encodings_are_converted_losslessly(tmp_path, compression, mode) -> None:
    data = prepare_files.tiff(prepare_files.drawn_pages(2, (1000, 1400), mode), compression, (200, 200))
    result = prepared(tmp_path, data, TIFF)
    assert result.page_count == 2 and result.view is not None
    for (filter_name, pixels), frame in zip(page_images(result.view), frames(data), strict=True):
        assert "DCTDecode" not in filter_name, "never stored as JPEG (lossy)"
        assert pixels.convert(frame.mode).tobytes() == frame.tobytes(), "every pixel as decoded from the TIFF"
    assert_thumbnail(result.thumbnail, 1400 / 1000)


def test_each_page_keeps_its_own_resolution(tmp_path) -> None:
    # Standard then fine mode: the same A4 paper, 1145 then 2290 lines.
    result = prepared(tmp_path, prepare_files.mixed_resolution_tiff(), TIFF)
    assert result.view is not None
    a4 = (1728 / 204 * 72, 1145 / 98 * 72)
    assert page_sizes(result.view) == [pytest.approx(a4, abs=0.01), pytest.approx(a4, abs=0.01)]


def test_a_jpeg_or_png_is_one_page_viewed_as_it_is(tmp_path) -> None:
    for kind, content_type in (("JPEG", "image/jpeg"), ("PNG", "image/png")):
        result = prepared(tmp_path, prepare_files.image(kind, (800, 1100)), content_type)
        assert (result.page_count, result.view) == (1, None), kind
        assert_thumbnail(result.thumbnail, 1100 / 800)


def test_an_image_at_fax_resolution_gets_a_viewing_pdf_of_its_true_shape(tmp_path) -> None:
    # A browser draws an image's pixels square: 1728 x 1145 at 204 x 98 dpi would show half height.
    result = prepared(tmp_path, prepare_files.image("PNG", (1728, 1145), dpi=(204, 98)), "image/png")
    assert result.page_count == 1 and result.view is not None
    [(width, height)] = page_sizes(result.view)
    assert height / width == pytest.approx((1145 / 98) / (1728 / 204), rel=0.001)
    assert_thumbnail(result.thumbnail, height / width)


@pytest.mark.parametrize("content_type", ["application/octet-stream", "image/gif", None])
def test_any_other_type_is_listed_with_no_pages(tmp_path, content_type) -> None:
    assert prepared(tmp_path, b"GIF89a whatever", content_type) == fax_pages.Prepared(None, None, None)


@pytest.mark.parametrize(
    ("make", "content_type", "code"),
    [
        (lambda: prepare_files.cut_short(prepare_files.invoice_pdf()), PDF, FailureCode.FAX_FILE_DAMAGED),
        (lambda: b"%PDF-1.7\n" + bytes(range(256)) * 8, PDF, FailureCode.FAX_FILE_DAMAGED),
        (lambda: prepare_files.fax_tiff(), PDF, FailureCode.FAX_FILE_DAMAGED),  # a TIFF sent as a PDF
        (lambda: prepare_files.encrypted_pdf("secret"), PDF, FailureCode.FAX_FILE_ENCRYPTED),
        (prepare_files.empty_pdf, PDF, FailureCode.FAX_FILE_EMPTY),
        (prepare_files.oversized_page_pdf, PDF, FailureCode.FAX_PAGE_TOO_LARGE),
        (prepare_files.image_bomb_pdf, PDF, FailureCode.FAX_PAGE_TOO_LARGE),
        (lambda: prepare_files.cut_short(prepare_files.fax_tiff()), TIFF, FailureCode.FAX_FILE_DAMAGED),
        (lambda: b"II*\x00" + b"\xff" * 64, TIFF, FailureCode.FAX_FILE_DAMAGED),
        (lambda: prepare_files.tiff_bomb(20_000, 20_000), TIFF, FailureCode.FAX_PAGE_TOO_LARGE),  # Pillow's guard
        (lambda: prepare_files.tiff_bomb(11_000, 10_000), TIFF, FailureCode.FAX_PAGE_TOO_LARGE),  # the cap, below it
        (lambda: prepare_files.cut_short(prepare_files.image("JPEG")), "image/jpeg", FailureCode.FAX_FILE_DAMAGED),
    ],
    ids=["pdf cut short", "pdf garbage", "tiff as pdf", "pdf with a password", "pdf without pages",
         "pdf page over 14400 pt", "pdf image bomb", "tiff cut short", "tiff garbage", "tiff bomb",
         "tiff over the cap", "jpeg cut short"],
)  # fmt: skip
def test_a_file_that_cannot_be_prepared_fails_with_its_own_code(tmp_path, make, content_type, code) -> None:
    assert failure(tmp_path, make(), content_type) is code
    assert not (tmp_path / "derived" / fax_pages.THUMBNAIL_NAME).exists() or code is FailureCode.FAX_PAGE_TOO_LARGE


def test_a_pdf_with_an_owner_password_only_opens_as_any(tmp_path) -> None:
    # Restrictions on printing or copying, no password to open: PDF viewers open it, and so does PDFium.
    result = prepared(tmp_path, prepare_files.encrypted_pdf(""), PDF)
    assert result.page_count == 1
    assert_thumbnail(result.thumbnail, 842 / 595)


def test_the_step_runs_between_pages_and_what_it_raises_stops_the_work(tmp_path) -> None:
    original = tmp_path / "original.tif"
    original.write_bytes(prepare_files.fax_tiff(pages=3))
    steps: list[int] = []
    fax_pages.prepare(original, TIFF, tmp_path, lambda: steps.append(1))
    assert len(steps) >= 3, "once a page at least"

    def out_of_time() -> None:
        raise JobFailure(FailureCode.TIME_BUDGET, "out of time")

    with pytest.raises(JobFailure) as raised:
        fax_pages.prepare(original, TIFF, tmp_path, out_of_time)
    assert raised.value.code is FailureCode.TIME_BUDGET, "not mistaken for a damaged file"


def test_every_pdfium_call_is_made_holding_the_lock(tmp_path, monkeypatch) -> None:
    # PDFium is not thread-safe, not even across documents, and Fluid compute runs the worker's
    # requests as threads of one process: every call into it (finalizers included) must be made
    # holding lib/worker/fax_pages.py's lock. Each entry point of the library is watched while a PDF, a
    # TIFF and a file that fails are prepared, and the garbage collected afterwards.
    outside: list[str] = []

    def watched(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if not fax_pages._PDFIUM.locked():
                outside.append(name)
            return function(*args, **kwargs)

        return call

    for name in dir(pdfium_c):
        if name.startswith("FPDF") and isinstance(getattr(pdfium_c, name), ctypes._CFuncPtr):
            monkeypatch.setattr(pdfium_c, name, watched(name, getattr(pdfium_c, name)))
    calls_before = len(outside)
    prepared(tmp_path / "a", prepare_files.pdf("A", page_count=3), PDF)
    prepared(tmp_path / "b", prepare_files.fax_tiff(pages=2), TIFF)
    assert failure(tmp_path / "c", prepare_files.image_bomb_pdf(), PDF) is FailureCode.FAX_PAGE_TOO_LARGE
    gc.collect()
    assert outside[calls_before:] == []
