"""The fax viewer (public/admin/viewer.js) in Debian's chromium, headless, mounted by a test page
under exactly the admin page's policy (tests/support/viewer_harness.py; the inbox will mount it),
with the faxes' files on another origin as Storage's signed URLs are.

A PDF (Japanese text in a font it does not embed; an invoice with an embedded font), a G4 TIFF's
viewing PDF and a PNG draw (their canvases are not blank), at a phone's 390 px and at 1280 px, in
Japanese and in English, with no policy violation (the page's, or the worker's own) and no console
error; axe-core finds nothing; pages change by the buttons, the keys and the page number, and the
current page is announced; only the pages in view and their neighbours hold a canvas; rotation
turns every page (the canvas's shape swaps) and tells the page; zoom fits the width, enlarges and
reduces; printing prints the pages drawn for paper and none of the screen; the download fetches
the original.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from lib.screen.page import WORKER_POLICY, content_security_policy
from tests.support import fax_files
from tests.support.admin_page import Watched
from tests.support.viewer_harness import Harness, viewer_harness

pytestmark = pytest.mark.slow  # a browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "devstack" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
TIFF_PAGE_ASPECT = (fax_files.FAX_A4_LINES_STANDARD / 98) / (fax_files.FAX_WIDTH_PX / 204)  # height / width
LABELS = {"ja-JP": ["前のページ", "次のページ", "縮小", "幅に合わせる", "拡大", "右に回転", "印刷",
                    "原本をダウンロード"],
          "en-US": ["Previous page", "Next page", "Zoom out", "Fit to width", "Zoom in", "Rotate right", "Print",
                    "Download the original"]}  # fmt: skip

# What a page's canvas holds: its size, its box's, and the share of its pixels that are not paper,
# in the whole canvas and in each region given (fractions of it: left, top, right, bottom). Read
# from a copy at most 400 pixels wide: the share is the same, and the test reads it often.
DRAWN = """([number, regions]) => {
  const box = document.querySelector(`.viewer-page[data-page="${number}"]`);
  const canvas = box && box.querySelector("canvas");
  if (!canvas || !canvas.width) return null;
  const scale = Math.min(1, 400 / canvas.width);
  const copy = document.createElement("canvas");
  copy.width = Math.max(1, Math.round(canvas.width * scale));
  copy.height = Math.max(1, Math.round(canvas.height * scale));
  const context = copy.getContext("2d");
  context.drawImage(canvas, 0, 0, copy.width, copy.height);
  const { data } = context.getImageData(0, 0, copy.width, copy.height);
  const share = ([left, top, right, bottom]) => {
    let dark = 0, all = 0;
    for (let y = Math.floor(top * copy.height); y < Math.ceil(bottom * copy.height); y++)
      for (let x = Math.floor(left * copy.width); x < Math.ceil(right * copy.width); x++) {
        const i = 4 * (y * copy.width + x);
        all += 1;
        dark += data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200;
      }
    return dark / Math.max(1, all);
  };
  return { width: canvas.width, height: canvas.height, boxWidth: box.clientWidth, boxHeight: box.clientHeight,
           ink: share([0, 0, 1, 1]), regions: regions.map(share) };
}"""
CORNERS = {"top-left": (0, 0, 0.25, 0.2), "top-right": (0.75, 0, 1, 0.2),
           "bottom-right": (0.75, 0.8, 1, 1), "bottom-left": (0, 0.8, 0.25, 1)}  # fmt: skip
SEAL = (420 / 595, (842 - 710) / 842, 530 / 595, (842 - 600) / 842)  # fax_files.invoice_pdf()'s
LIVE_CANVASES = "document.querySelectorAll('.viewer-page canvas').length"


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    with viewer_harness() as serving:
        yield serving


@pytest.fixture(scope="module")
def files(harness: Harness) -> dict[str, str]:
    """Each test file's signed URL on the Storage stand-in."""
    made = {"請求書.pdf": (fax_files.japanese_pdf(), "application/pdf"),
            "invoice.pdf": (fax_files.invoice_pdf(), "application/pdf"),
            "fax.tif.pdf": (fax_files.viewing_pdf(fax_files.g4_tiff(3)), "application/pdf"),
            "photo.png": (fax_files.png(), "image/png"),
            "twelve.pdf": (fax_files.numbered_pdf(12), "application/pdf"),
            "three.pdf": (fax_files.numbered_pdf(3), "application/pdf"),
            "truncated.pdf": (fax_files.not_a_pdf(), "application/pdf")}  # fmt: skip
    return {name: harness.add_file(name, content, kind) for name, (content, kind) in made.items()}


def every_kind(files: dict[str, str]) -> list[dict[str, Any]]:
    """A fax with each kind of file: 1 + 1 + 3 + 1 pages, and a file that has none to show."""
    return [{"name": "請求書.pdf", "kind": "pdf", "url": files["請求書.pdf"]},
            {"name": "invoice.pdf", "kind": "pdf", "url": files["invoice.pdf"]},
            {"name": "FAX_0612345678_20261201.tif", "kind": "pdf", "url": files["fax.tif.pdf"]},
            {"name": "写真.png", "kind": "picture", "url": files["photo.png"]},
            {"name": "見積書.docx", "kind": "none"}]  # fmt: skip


class Watch:
    """A page under the harness's policy, and everything that must not happen on it: the admin
    page's watch (tests/support/admin_page.py: a violation event, a page error, a dialog, a refusal
    in the console) and, beyond it, any console error, and any violation report, the worker's included."""

    def __init__(self, context: BrowserContext, harness: Harness) -> None:
        self.harness = harness
        self.reports_before = len(harness.reports)
        self.watched = Watched(context.new_page())
        self.page: Page = self.watched.page
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def problems(self) -> list[Any]:
        self.page.wait_for_timeout(300)  # a report is sent by the browser, after the violation
        return [*self.watched.problems, *self.errors, *self.harness.reports[self.reports_before :]]


Region = tuple[float, float, float, float]


def drawn(page: Page, number: int, *regions: Region) -> dict[str, Any]:
    """The page's canvas once it is drawn (the viewer swaps a canvas in when its drawing is done)."""
    page.wait_for_function(f"() => document.querySelector('.viewer-page[data-page=\"{number}\"] canvas')")
    result = page.evaluate(DRAWN, [number, [list(region) for region in regions]])
    assert result, f"page {number} has no canvas"
    return dict(result)


def status(page: Page) -> str:
    return str(page.locator(".viewer-status").text_content())


def open_fax(watch: Watch, documents: list[dict[str, Any]], rotation: int = 0, fax_id: str | None = None) -> Page:
    url = watch.harness.add_fax(fax_id or f"fax-{len(watch.harness.faxes)}", documents, rotation)
    watch.page.goto(url)
    expect(watch.page.locator(".viewer-page").first).to_be_visible()
    return watch.page


def document_width(page: Page) -> tuple[int, int]:
    return tuple(page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))  # type: ignore[return-value]


def test_the_policy_widens_by_the_workers_trusted_types_policy_and_storage_images_only() -> None:
    supabase = "https://abcdefghijklmnop.supabase.co"
    policy = dict(part.split(" ", 1) for part in content_security_policy(supabase).split("; "))
    assert policy == {
        "default-src": "'none'",
        "script-src": "'self'",
        "style-src": "'self'",
        "img-src": f"'self' data: {supabase}",
        "font-src": "'self'",
        "connect-src": f"'self' {supabase}",
        "worker-src": "'self'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
        "object-src": "'none'",
        "require-trusted-types-for": "'script'",
        "trusted-types": "pdfjs-worker",
    }
    viewer = (ROOT / "public" / "admin" / "viewer.js").read_text()
    assert re.search(r'export const WORKER_POLICY = "([^"]+)";', viewer)[1] == WORKER_POLICY  # type: ignore[index]


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_a_pdf_a_tiff_and_a_picture_draw_under_the_pages_policy_on_a_phone_and_a_desktop(
    chromium, harness, files, locale
) -> None:
    # A phone's pixels: a canvas is drawn at the device's pixel ratio.
    context = chromium.new_context(locale=locale, viewport=PHONE, device_scale_factor=3, has_touch=True)
    watch = Watch(context, harness)
    page = open_fax(watch, every_kind(files))
    viewer = page.locator("section.viewer")
    for label in LABELS[locale]:
        expect(viewer.get_by_role("button", name=label, exact=True).first).to_be_visible()
    expect(page.locator(".viewer-page")).to_have_count(6)
    expect(page.locator(".viewer-page-count")).to_have_text("/ 6" if locale == "ja-JP" else "of 6")
    # The file with nothing to draw: named, said so, and downloadable.
    other = page.locator(".viewer-document", has_text="見積書.docx")
    expect(other.locator(".notice")).to_have_text(
        "このファイルは画面に表示できません。原本をダウンロードして開いてください。" if locale == "ja-JP"
        else "This file cannot be shown on the screen. Download the original to open it.")  # fmt: skip
    expect(other.get_by_role("button", name=LABELS[locale][-1])).to_be_enabled()

    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        page.locator("button.viewer-fit-width").click()
        page.locator(".viewer-pages").press("Home")
        for number in range(1, 7):
            if number > 1:
                page.locator("button.viewer-next").click()
            expect(page.locator(".viewer-page-number")).to_have_value(str(number))
            canvas = drawn(page, number, SEAL)
            assert canvas["ink"] > 0.003, (viewport, number, canvas)  # not blank
            if number == 2:  # the invoice's seal, its spot colour's tint function interpreted (no eval)
                assert canvas["regions"][0] > 0.9, canvas
            assert canvas["boxWidth"] == pytest.approx(page.locator(".viewer-pages").evaluate(
                "e => e.clientWidth - 24"), abs=2), (viewport, number, canvas)  # fmt: skip
            if viewport is PHONE:  # drawn at the device's pixels
                assert canvas["width"] == pytest.approx(3 * canvas["boxWidth"], abs=3), canvas
            if 3 <= number <= 5:  # the TIFF's pages: 204 x 98 dpi drawn at its true height, not half of it
                assert canvas["boxHeight"] / canvas["boxWidth"] == pytest.approx(TIFF_PAGE_ASPECT, rel=0.01)
        width, window = document_width(page)
        assert width <= window, f"the page scrolls sideways at {viewport}"
    assert watch.problems() == []
    context.close()


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_axe_finds_nothing_at_a_phones_width_or_a_desktops(chromium, harness, files, locale) -> None:
    # Outside the page's policy only so that axe-core's script can be added (as
    # tests/screen/test_browser_layout.py does); the policy itself is tested above.
    context = chromium.new_context(locale=locale, viewport=PHONE, bypass_csp=True)
    page = context.new_page()
    page.goto(harness.add_fax(f"axe-{locale}", every_kind(files)))
    drawn(page, 1)
    page.add_script_tag(path=str(AXE))
    found = {}
    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        drawn(page, 1)
        run = page.evaluate("""async () => { const r = await axe.run(document); return { passed: r.passes.length,
            violations: r.violations.map(v => ({ id: v.id, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) }))
        }; }""")
        assert run["passed"] > 10, f"axe-core checked only {run['passed']} rules"
        found[viewport["width"]] = run["violations"]
    assert found == {390: [], 1280: []}
    context.close()


def test_pages_change_by_buttons_keys_and_number_and_the_current_one_is_announced(chromium, harness, files) -> None:
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    watch = Watch(context, harness)
    page = open_fax(watch, [{"name": "twelve.pdf", "kind": "pdf", "url": files["twelve.pdf"]}])
    expect(page.locator(".viewer-status")).to_have_text("Page 1 of 12")
    expect(page.locator(".viewer-status")).to_have_attribute("aria-live", "polite")
    expect(page.locator("button.viewer-previous")).to_be_disabled()
    number = page.locator(".viewer-page-number")

    page.locator("button.viewer-next").click()
    expect(page.locator(".viewer-status")).to_have_text("Page 2 of 12")
    # The keys, wherever the focus is in the viewer: a button, the pages themselves.
    for key, expected in (("ArrowRight", 3), ("PageDown", 4), ("PageUp", 3), ("ArrowLeft", 2), ("End", 12)):
        page.keyboard.press(key)
        expect(number).to_have_value(str(expected))
        expect(page.locator(".viewer-status")).to_have_text(f"Page {expected} of 12")
    expect(page.locator("button.viewer-next")).to_be_disabled()
    page.locator(".viewer-pages").focus()
    page.keyboard.press("Home")
    expect(number).to_have_value("1")
    # The page number: typed (full-width digits too, as a Japanese keyboard gives them), then Enter;
    # a scroll's refresh while it is typed leaves it alone.
    for typed, expected in (("7", "7"), ("１０", "10")):
        number.fill(typed)
        page.locator(".viewer-pages").evaluate("e => new Promise(r => { e.scrollTop += 1; setTimeout(r, 100); })")
        expect(number).to_have_value(typed)
        number.press("Enter")
        expect(page.locator(".viewer-status")).to_have_text(f"Page {expected} of 12")
        assert drawn(page, int(expected))["ink"] > 0.003
    # Scrolling makes the page in view the current one.
    page.locator(".viewer-pages").evaluate(
        "(e) => { e.scrollTop = document.querySelector('[data-page=\"5\"]').offsetTop; }"
    )
    expect(number).to_have_value("5")

    # Every control is a tab stop with a name, in order, and the pages' box is one too (a disabled
    # button is none: on page 2 none is).
    page.evaluate("window.viewer.goTo(2)")
    page.locator("button.viewer-previous").focus()
    stops = []
    for _ in range(11):
        stops.append(
            page.evaluate("""(() => { const e = document.activeElement;
            return [e.className, e.getAttribute("aria-label") || e.textContent.trim()]; })()""")
        )
        page.keyboard.press("Tab")
    assert [name for _, name in stops] == ["Previous page", "Page number", "Next page", "Zoom out", "Fit to width",
                                           "Zoom in", "Rotate right", "Print", "Download the original",
                                           "The fax's pages", stops[10][1]]  # fmt: skip
    assert stops[0][0] == "viewer-previous" and stops[9][0] == "viewer-pages", stops
    assert watch.problems() == []
    context.close()


def test_only_the_pages_in_view_and_their_neighbours_keep_a_canvas(chromium, harness, files) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=PHONE)
    watch = Watch(context, harness)
    page = open_fax(watch, [{"name": "twelve.pdf", "kind": "pdf", "url": files["twelve.pdf"]}])
    most = 0
    for number in range(1, 13):
        page.evaluate(f"window.viewer.goTo({number})")
        drawn(page, number)
        page.wait_for_timeout(100)  # the neighbours' drawing, and the releases, after it
        live = page.evaluate(LIVE_CANVASES)
        most = max(most, live)
        assert live <= 4, f"{live} canvases at page {number}"
    assert most >= 2, "the neighbours are drawn ahead"
    # Page 1 gave its bitmap back: no canvas in its box, none anywhere with its pixels.
    assert page.locator('.viewer-page[data-page="1"] canvas').count() == 0
    expect(page.locator(".viewer-status")).to_have_text("12ページ中 12ページ目")
    assert watch.problems() == []
    context.close()


def test_rotation_turns_every_page_from_the_one_given_and_tells_the_page(chromium, harness, files) -> None:
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    watch = Watch(context, harness)
    documents = [{"name": "写真.png", "kind": "picture", "url": files["photo.png"]},
                 {"name": "three.pdf", "kind": "pdf", "url": files["three.pdf"]}]  # fmt: skip
    page = open_fax(watch, documents)

    def corner(number: int) -> str:
        """Which corner holds the page's top left corner mark."""
        inks = dict(zip(CORNERS, drawn(page, number, *CORNERS.values())["regions"], strict=True))
        return max(inks, key=lambda name: inks[name])

    picture, pdf_page = drawn(page, 1), drawn(page, 2)
    assert picture["width"] > picture["height"] and pdf_page["height"] > pdf_page["width"]
    assert corner(1) == "top-left" and corner(2) == "top-left"
    turns = [(90, "top-right"), (180, "bottom-right"), (270, "bottom-left"), (0, "top-left")]
    for index, (degrees, where) in enumerate(turns):
        before = {1: drawn(page, 1), 2: drawn(page, 2)}
        page.locator("button.viewer-rotate").click()
        expect(page.locator(".viewer-status")).to_have_text(f"Rotated {degrees}°")
        page.wait_for_function(f"() => window.viewerRotations.length === {index + 1}")
        for number in (1, 2):
            landscape_before = "true" if before[number]["width"] > before[number]["height"] else "false"
            page.wait_for_function(f"""() => {{
                const c = document.querySelector('.viewer-page[data-page="{number}"] canvas');
                return c && (c.width > c.height) !== {landscape_before}; }}""")
            after = drawn(page, number)
            assert (after["width"] > after["height"]) != (before[number]["width"] > before[number]["height"]), degrees
            assert corner(number) == where, (degrees, number)
    assert page.evaluate("window.viewerRotations") == [90, 180, 270, 0]

    # Opened with the rotation the page remembered: drawn so from the start, and nothing reported.
    page.goto(harness.add_fax("remembered", documents, rotation=270))
    picture = drawn(page, 1)
    assert picture["height"] > picture["width"] and corner(1) == "bottom-left"
    page.wait_for_timeout(200)
    assert page.evaluate("window.viewerRotations") == []
    assert watch.problems() == []
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_zoom_fits_the_width_enlarges_and_reduces_inside_the_viewer(chromium, harness, files, viewport) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=viewport)
    watch = Watch(context, harness)
    page = open_fax(watch, [{"name": "three.pdf", "kind": "pdf", "url": files["three.pdf"]}])
    room = page.locator(".viewer-pages").evaluate("e => e.clientWidth - 24")
    fitted = drawn(page, 1)
    assert fitted["boxWidth"] == pytest.approx(room, abs=2)
    level = page.locator(".viewer-zoom-level")
    fitted_level = level.text_content()

    page.locator("button.viewer-zoom-in").click()
    page.wait_for_function(f"() => document.querySelector('.viewer-page canvas').width > {fitted['width']}")
    larger = drawn(page, 1)
    assert larger["boxWidth"] == pytest.approx(1.25 * fitted["boxWidth"], abs=2)
    assert larger["width"] > fitted["width"] and larger["ink"] > 0.003, "drawn again, sharper"
    assert level.text_content() != fitted_level
    expect(page.locator(".viewer-status")).to_contain_text("表示倍率")
    # Wider than the viewer: it scrolls inside the viewer, never the page, and all of it is reachable.
    assert page.locator(".viewer-pages").evaluate("e => e.scrollWidth > e.clientWidth")
    edges = page.locator(".viewer-pages").evaluate("""e => {
        const box = e.querySelector(".viewer-page");
        e.scrollLeft = e.scrollWidth;
        const right = box.getBoundingClientRect().right - e.getBoundingClientRect().right;
        e.scrollLeft = 0; return [box.getBoundingClientRect().left - e.getBoundingClientRect().left, right]; }""")
    assert edges[0] >= 0 and edges[1] <= 0, f"the page's left and right edges from the viewer's: {edges}"
    width, window = document_width(page)
    assert width <= window

    for _ in range(3):
        page.locator("button.viewer-zoom-out").click()
    page.wait_for_function(f"() => document.querySelector('.viewer-page canvas').width < {fitted['width']}")
    smaller = drawn(page, 1)
    assert smaller["boxWidth"] == pytest.approx(0.75 * fitted["boxWidth"], abs=2)

    page.locator("button.viewer-fit-width").click()
    page.wait_for_function(f"() => document.querySelector('.viewer-page canvas').width === {fitted['width']}")
    assert drawn(page, 1)["boxWidth"] == pytest.approx(room, abs=2)
    assert level.text_content() == fitted_level
    assert watch.problems() == []
    context.close()


def test_japanese_text_in_a_font_the_pdf_does_not_embed_draws_through_the_vendored_cmaps(
    chromium, harness, files
) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=DESKTOP)
    watch = Watch(context, harness)
    page = open_fax(watch, [{"name": "請求書.pdf", "kind": "pdf", "url": files["請求書.pdf"]}])
    text = fax_files.japanese_text_box()
    below = (text[0], text[3] + 0.05, text[2], text[3] + 0.2)
    canvas = drawn(page, 1, text, below)
    assert canvas["regions"][0] > 0.04, f"the glyphs' ink: {canvas}"
    assert canvas["regions"][1] < 0.001, "ink where the text is, not elsewhere"
    # From this origin, fetched by the page (the worker may fetch nothing).
    fetched = [path for path in harness.requests if "/cmaps/" in path]
    assert "/admin/vendor/pdfjs/cmaps/UniJIS-UCS2-H.bcmap" in fetched
    assert "/admin/vendor/pdfjs/cmaps/Adobe-Japan1-UCS2.bcmap" in fetched
    assert watch.problems() == []
    context.close()

    # Without the CMaps the same page draws no text: they are what makes it readable.
    context = chromium.new_context(locale="ja-JP", viewport=DESKTOP)
    page = context.new_page()
    page.route("**/vendor/pdfjs/cmaps/**", lambda route: route.abort())
    page.goto(harness.add_fax("no-cmaps", [{"name": "請求書.pdf", "kind": "pdf", "url": files["請求書.pdf"]}]))
    assert drawn(page, 1, text)["regions"][0] < 0.005
    context.close()


def test_print_shows_the_pages_drawn_for_paper_and_none_of_the_screen(chromium, harness, files, tmp_path) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=PHONE)
    # The browser's print dialog, counted instead of shown.
    context.add_init_script("window.printed = 0; window.print = () => { window.printed += 1; };")
    watch = Watch(context, harness)
    documents = [{"name": "three.pdf", "kind": "pdf", "url": files["three.pdf"]},
                 {"name": "写真.png", "kind": "picture", "url": files["photo.png"]}]  # fmt: skip
    page = open_fax(watch, documents)
    drawn(page, 1)
    page.locator("button.viewer-rotate").click()  # printed as it is shown
    page.locator("button.viewer-print").click()
    page.wait_for_function("() => window.printed === 1")
    sheet = page.locator(".viewer-print-sheet img")
    expect(sheet).to_have_count(4)
    sizes = sheet.evaluate_all("images => images.map(i => [i.naturalWidth, i.naturalHeight])")
    # A4 at 150 dpi, turned: 1754 x 1240; the picture at its own pixels, turned.
    assert sizes == [[1754, 1239], [1754, 1239], [1754, 1239], [500, 800]], sizes
    expect(page.locator(".viewer-status")).to_have_text("印刷の準備ができました。")

    # On the screen the sheet is not shown; printed, only the sheet is.
    expect(page.locator(".viewer-print-sheet")).to_be_hidden()
    page.emulate_media(media="print")
    expect(page.locator(".viewer-print-sheet")).to_be_visible()
    for chrome in ("section.viewer", ".viewer-toolbar", "main"):
        expect(page.locator(chrome)).to_be_hidden()
    printed = tmp_path / "printed.pdf"
    page.pdf(path=str(printed), format="A4")
    document = pypdfium2.PdfDocument(printed)
    assert len(document) == 4, "one sheet a page"
    for index in range(len(document)):
        bitmap = document[index].render(scale=0.5).to_pil().convert("L")
        histogram = bitmap.histogram()
        assert sum(histogram[:128]) / sum(histogram) > 0.003, f"sheet {index + 1} is blank"
    document.close()
    page.emulate_media(media="screen")

    # Ctrl+P prints the fax too, not the screen.
    page.locator(".viewer-pages").focus()
    page.keyboard.press("Control+p")
    page.wait_for_function("() => window.printed === 2")
    expect(sheet).to_have_count(4)
    assert watch.problems() == []
    context.close()


def test_the_original_downloads_and_a_refused_download_is_said(chromium, harness, files) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=PHONE, accept_downloads=True)
    watch = Watch(context, harness)
    documents = [{"name": "請求書.pdf", "kind": "pdf", "url": files["請求書.pdf"]},
                 {"name": "見積書.docx", "kind": "none", "downloadFails": True}]  # fmt: skip
    harness.add_file(
        "見積書.docx", b"PK\x03\x04", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    page = open_fax(watch, documents)
    drawn(page, 1)
    with page.expect_download() as download:
        page.locator("button.viewer-download").click()
    assert download.value.suggested_filename == "請求書.pdf"
    page.locator(".viewer-download-original").click()
    expect(page.get_by_role("alert")).to_have_text("原本をダウンロードできませんでした。もう一度お試しください。")
    assert watch.problems() == []
    context.close()


def test_a_file_that_cannot_be_read_is_said_and_downloadable_and_the_others_still_draw(
    chromium, harness, files
) -> None:
    context = chromium.new_context(locale="ja-JP", viewport=PHONE)
    watch = Watch(context, harness)
    documents = [{"name": "truncated.pdf", "kind": "pdf", "url": files["truncated.pdf"]},
                 {"name": "写真.png", "kind": "picture", "url": files["photo.png"]}]  # fmt: skip
    page = open_fax(watch, documents)
    broken = page.locator(".viewer-document", has_text="truncated.pdf")
    expect(broken.locator(".notice")).to_have_text(
        "このファイルを表示できませんでした。原本をダウンロードして開いてください。"
    )
    expect(broken.get_by_role("button", name="原本をダウンロード")).to_be_enabled()
    assert drawn(page, 1)["ink"] > 0.003
    assert watch.problems() == []
    context.close()


def test_trusted_types_hold_for_script_urls_and_the_workers_policy_is_the_only_one(chromium, harness, files) -> None:
    """The watch sees what the policy refuses: a worker from a plain string, another policy."""
    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    watch = Watch(context, harness)
    page = open_fax(watch, [{"name": "three.pdf", "kind": "pdf", "url": files["three.pdf"]}])
    drawn(page, 1)
    assert watch.problems() == []
    refused = page.evaluate("""() => {
        const tried = [];
        try { new Worker("/admin/vendor/pdfjs/pdf.worker.min.mjs", { type: "module" }); tried.push("worker started"); }
        catch (e) { tried.push(e.name); }
        try { trustedTypes.createPolicy("another", { createHTML: (s) => s }); tried.push("policy created"); }
        catch (e) { tried.push(e.name); }
        try { trustedTypes.createPolicy("pdfjs-worker", { createScriptURL: (s) => s }); tried.push("policy created"); }
        catch (e) { tried.push(e.name); }
        return tried; }""")
    assert refused == ["TypeError", "TypeError", "TypeError"]
    problems = " ".join(map(str, watch.problems()))
    assert "require-trusted-types-for" in problems and "trusted-types" in problems
    context.close()
