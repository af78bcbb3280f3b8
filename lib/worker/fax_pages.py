"""A fax file's pages, for viewing: counted, converted once into a viewing PDF where a browser
cannot show the original at its true shape, and page 1 drawn as a thumbnail. The original is
only read, never changed.

- A PDF is viewed as it is (the screen draws it with PDF.js): its pages are counted and each
  page's size and images checked (page by page, each closed before the next), and page 1 drawn.
- A TIFF (multi-page; CCITT G3 or G4, LZW, JPEG...) shows in no browser: it becomes a viewing PDF
  through img2pdf, which copies a G4 page's data bit for bit and re-encodes any other losslessly
  (Flate), each page at its own resolution. Pillow's PDF writer was measured against it: it
  stores a grayscale or colour page as JPEG, which loses detail, and writes every page at one
  resolution, the first's (docs/BENCHMARKS.md, section The prepare job, says what each costs).
- A JPEG or PNG is one page, viewed as it is, unless its two resolutions differ: a browser draws
  an image's pixels square, so one stored at fax resolutions becomes a viewing PDF too.
- Anything else is listed, with no pages: never a failure.

Fax resolutions are rarely square: standard mode is 204 x 98 dpi, so a page drawn at one
resolution comes out at half its height. Every page is laid out in points from its own pixels
and resolutions, and the thumbnail is drawn from the PDF a viewer shows, so both keep the
paper's shape. A resolution that makes no sense (none, zero, a ratio beyond 4) counts as
DEFAULT_DPI both ways.

A file that cannot be prepared raises JobFailure with a code of its own: damaged (or cut short,
or not what its type says), encrypted, without pages, or a page over the pixel cap (a
decompression bomb: a small file that decodes to gigabytes) or over PDF's largest page. Sizes
are read from the headers (PDFium's page sizes, each image object's pixel size; each TIFF
frame's header) before anything is decoded.

PDFium is not thread-safe, not even across documents (pypdfium2's Python API page,
https://pypdfium2-team.github.io/pypdfium2/python_api.html, "Incompatibility with Threading"),
and the worker's requests are threads of one process under Fluid compute: every PDFium call
here is made holding _PDFIUM, and every document, page and bitmap is closed before the lock is
let go, so that no finalizer runs PDFium later on another thread. Between pages the lock is
released and `step` called (the job's checkpoint: the time budget, the lease).

This module imports pypdfium2, Pillow and img2pdf: only the prepare_fax job imports it
(lib/worker/prepare_fax.py), so the webhook's and fetch_email's cold start do not pay for them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import img2pdf
import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageOps

from lib.failures import FailureCode, JobFailure

# The most pixels one page may decode to. A fax at its finest (A3, superfine, 408 x 391 dpi) is
# about 31 million; an A3 page scanned at 600 dpi about 70 million.
MAX_PAGE_PIXELS = 100_000_000
# PDF's own largest page, 14,400 units (200 inches) a side (ISO 32000-1, Annex C.2).
MAX_PAGE_POINTS = 14_400.0
# A phone's list shows a thumbnail at about 120 x 170 CSS pixels: twice that for its density.
THUMBNAIL_BOX = (240, 340)
THUMBNAIL_QUALITY = 70
DEFAULT_DPI = 200.0  # fine mode's horizontal resolution (204 dpi), rounded
DPI_RANGE = (50.0, 2400.0)
MAX_DPI_RATIO = 4.0

# Pillow's own guard, set once when the module is imported: it warns above the cap and refuses
# at twice it (DecompressionBombError); the frames' sizes are checked against the cap first.
Image.MAX_IMAGE_PIXELS = MAX_PAGE_PIXELS

_PDFIUM = threading.Lock()

Step = Callable[[], None]


class Kind(StrEnum):
    PDF = "pdf"
    TIFF = "tiff"
    IMAGE = "image"  # JPEG or PNG: one page
    OTHER = "other"  # listed, not paged


KINDS = {
    "application/pdf": Kind.PDF,
    "image/tiff": Kind.TIFF,
    "image/jpeg": Kind.IMAGE,
    "image/png": Kind.IMAGE,
}
VIEW_NAME, THUMBNAIL_NAME = "view.pdf", "thumbnail.webp"
VIEW_TYPE, THUMBNAIL_TYPE = "application/pdf", "image/webp"


@dataclass(frozen=True)
class Prepared:
    """What one file gave: its pages (None: not a paged type), the viewing PDF (None: the
    original is viewed as it is) and the thumbnail of page 1, as files in the folder given."""

    page_count: int | None
    view: Path | None
    thumbnail: Path | None


def kind_of(content_type: str | None) -> Kind:
    return KINDS.get((content_type or "").lower(), Kind.OTHER)


def prepare(original: Path, content_type: str | None, folder: Path, step: Step = lambda: None) -> Prepared:
    """Prepares `original` (of the stored `content_type`), writing what it derives into `folder`
    (VIEW_NAME, THUMBNAIL_NAME). JobFailure with a fax_* code when the file cannot be prepared;
    whatever `step` raises, as it is."""
    kind = kind_of(content_type)
    if kind is Kind.OTHER:
        return Prepared(None, None, None)
    thumbnail = folder / THUMBNAIL_NAME
    if kind is Kind.PDF:
        pages = check_pdf(original, step)
        render_thumbnail(original, thumbnail)
        return Prepared(pages, None, thumbnail)
    frames = image_frames(original, step)
    if kind is Kind.IMAGE:
        frames = frames[:1]  # an animated PNG is still one page
        if frames[0].square:
            image_thumbnail(original, thumbnail)
            return Prepared(1, None, thumbnail)
    view = folder / VIEW_NAME
    convert(original, view, frames)
    if check_pdf(view, step) != len(frames):
        raise damaged("the viewing PDF does not have the original's pages")
    render_thumbnail(view, thumbnail)
    return Prepared(len(frames), view, thumbnail)


def damaged(message: str) -> JobFailure:
    return JobFailure(FailureCode.FAX_FILE_DAMAGED, message)


def too_large(message: str) -> JobFailure:
    return JobFailure(FailureCode.FAX_PAGE_TOO_LARGE, message)


# --- PDF ------------------------------------------------------------------------------------------


@contextmanager
def _pdf(path: Path) -> Iterator[pdfium.PdfDocument]:
    """The document, opened and closed holding the lock; JobFailure when it does not open."""
    with _PDFIUM:
        document, error = _open(path)
    if document is None:
        raise _unopened(path, error)
    try:
        yield document
    finally:
        with _PDFIUM:
            document.close()


def _open(path: Path) -> tuple[pdfium.PdfDocument | None, pdfium.PdfiumError | None]:
    try:
        return pdfium.PdfDocument(path), None
    except pdfium.PdfiumError as error:
        return None, error


def _unopened(path: Path, error: pdfium.PdfiumError | None) -> JobFailure:
    """Why PDFium would not open the file. PDFium's own error code does not tell: a document
    without pages fails to load with "success", or with "password" (as a document that needs
    one does), so qpdf (pikepdf, img2pdf's dependency) reads it to say which."""
    try:
        with pikepdf.open(path) as document:
            pages = len(document.pages)
    except pikepdf.PasswordError:
        return JobFailure(FailureCode.FAX_FILE_ENCRYPTED, "the PDF needs a password to open")
    except Exception as qpdf_error:  # qpdf's word for a file it cannot read either: any of its errors
        return damaged(f"the PDF does not open ({error}; qpdf: {type(qpdf_error).__name__})")
    if pages == 0:
        return JobFailure(FailureCode.FAX_FILE_EMPTY, "the PDF has no pages")
    return damaged(f"the PDF does not open ({error})")


def check_pdf(path: Path, step: Step) -> int:
    """The document's page count, once every page's size and images are within the caps (one page
    loaded at a time, `step` between pages)."""
    with _pdf(path) as document:
        with _PDFIUM:
            count = len(document)
        if count == 0:
            raise JobFailure(FailureCode.FAX_FILE_EMPTY, "the PDF has no pages")
        for index in range(count):
            step()
            with _PDFIUM:
                problem = _page_problem(document, index)
            if problem is not None:
                raise problem
    return count


def _page_problem(document: pdfium.PdfDocument, index: int) -> JobFailure | None:
    """What is wrong with a page (its size, an image over the cap, a page that does not load), or
    None. Called holding the lock; the page is closed before it returns."""
    try:
        width, height = document.get_page_size(index)
        page = document[index]
    except pdfium.PdfiumError as error:
        return damaged(f"page {index + 1} does not load ({error})")
    try:
        if not (0 < width <= MAX_PAGE_POINTS and 0 < height <= MAX_PAGE_POINTS):
            return too_large(f"page {index + 1} is {width:.0f} x {height:.0f} pt (at most {MAX_PAGE_POINTS:.0f})")
        for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
            pixels_wide, pixels_high = image.get_px_size()
            if pixels_wide * pixels_high > MAX_PAGE_PIXELS:
                return too_large(f"page {index + 1} has an image of {pixels_wide} x {pixels_high} pixels")
        return None
    finally:
        page.close()


def render_thumbnail(path: Path, thumbnail: Path) -> None:
    """Page 1 of a checked PDF, fitted into THUMBNAIL_BOX at its true shape, as WebP."""
    with _pdf(path) as document, _PDFIUM:
        page = document[0]
        try:
            width, height = page.get_size()
            scale = min(THUMBNAIL_BOX[0] / width, THUMBNAIL_BOX[1] / height)
            bitmap = page.render(scale=scale, may_draw_forms=True)
            try:
                # to_pil may share the bitmap's memory: copied before the bitmap is closed.
                image = bitmap.to_pil().convert("RGB")
            finally:
                bitmap.close()
        except pdfium.PdfiumError as error:
            raise damaged(f"page 1 does not render ({error})") from error
        finally:
            page.close()
    _save_thumbnail(image, thumbnail)


def _save_thumbnail(image: Image.Image, thumbnail: Path) -> None:
    image.save(thumbnail, "WEBP", quality=THUMBNAIL_QUALITY, method=4)


# --- TIFF, JPEG, PNG --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """A page of an image file, from its header: its pixels and its resolution (dots per inch)."""

    width: int
    height: int
    dpi: tuple[float, float]

    @property
    def square(self) -> bool:
        return self.dpi[0] == self.dpi[1]


def sane_dpi(dpi: object) -> tuple[float, float]:
    """The resolution a page is laid out at: the file's, unless it makes no sense."""
    try:
        x, y = (float(value) for value in dpi)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        return (DEFAULT_DPI, DEFAULT_DPI)
    low, high = DPI_RANGE
    if not (low <= x <= high and low <= y <= high) or max(x, y) / min(x, y) > MAX_DPI_RATIO:
        return (DEFAULT_DPI, DEFAULT_DPI)
    return (x, y)


def image_frames(path: Path, step: Step) -> list[Frame]:
    """Every frame of the image file, from its headers (nothing decoded), each within the caps."""
    frames: list[Frame] = []
    try:
        with Image.open(path) as image:
            count = getattr(image, "n_frames", 1)
            for index in range(count):
                step()
                image.seek(index)
                frames.append(_frame(index, image.size, image.info.get("dpi")))
    except JobFailure:
        raise
    except Image.DecompressionBombError as error:
        raise too_large(str(error)) from error
    except MemoryError:
        raise
    except Exception as error:  # Pillow and libtiff say "unreadable" in many ways (OSError, TypeError, ...)
        raise damaged(f"the image does not open ({type(error).__name__}: {error})") from error
    if not frames:
        raise JobFailure(FailureCode.FAX_FILE_EMPTY, "the image has no pages")
    return frames


def _frame(index: int, size: tuple[int, int], dpi: object) -> Frame:
    width, height = size
    if width <= 0 or height <= 0:
        raise JobFailure(FailureCode.FAX_FILE_EMPTY, f"page {index + 1} has no pixels")
    if width * height > MAX_PAGE_PIXELS:
        raise too_large(f"page {index + 1} is {width} x {height} pixels")
    frame = Frame(width, height, sane_dpi(dpi))
    points = (width / frame.dpi[0] * 72, height / frame.dpi[1] * 72)
    if max(points) > MAX_PAGE_POINTS:
        raise too_large(f"page {index + 1} is {points[0]:.0f} x {points[1]:.0f} pt at its resolution")
    return frame


def _layout(width_px: int, height_px: int, dpi: tuple[float, float]) -> tuple[float, float, float, float]:
    """img2pdf's layout function: each page exactly its image, at the image's own resolution."""
    x, y = sane_dpi(dpi)
    width, height = width_px / x * 72, height_px / y * 72
    return width, height, width, height


def convert(original: Path, view: Path, frames: list[Frame]) -> None:
    """The viewing PDF: every frame a page of its own size, its pixels unchanged (a G4 page's data
    copied as it is, others compressed losslessly)."""
    try:
        with open(view, "wb") as output:
            img2pdf.convert(
                str(original),
                outputstream=output,
                layout_fun=_layout,
                rotation=img2pdf.Rotation.ifvalid,
                first_frame_only=len(frames) == 1,
            )
    except MemoryError:
        raise
    except Exception as error:  # img2pdf, Pillow and qpdf's many words for a file they cannot read
        raise damaged(f"the image does not convert ({type(error).__name__}: {error})") from error


def image_thumbnail(path: Path, thumbnail: Path) -> None:
    """A JPEG or PNG viewed as it is: its thumbnail as a browser shows it (square pixels, turned
    as its EXIF says), decoded at the smallest scale JPEG allows."""
    try:
        with Image.open(path) as image:
            image.draft("RGB", THUMBNAIL_BOX)
            turned = ImageOps.exif_transpose(image)
            turned.thumbnail(THUMBNAIL_BOX)
            flat = Image.new("RGB", turned.size, "white")
            flat.paste(turned, mask=turned.getchannel("A") if "A" in turned.getbands() else None)
    except MemoryError:
        raise
    except Exception as error:
        raise damaged(f"the image does not decode ({type(error).__name__}: {error})") from error
    _save_thumbnail(flat, thumbnail)
