"""The fax viewer: how long after opening a fax its first page is drawn, on a phone's 390 px.

Debian's Chromium, headless, driven by Playwright, at 390 x 844 CSS px and a phone's density of 3,
Japanese, signed in to the admin page that the local stack's function host serves (the real
`vercel build`, warm instances after the first open), as a viewer. The faxes are stored and
prepared as the worker leaves them (bench/prepare_job.py: the original in the stack's Storage, the
prepare_fax job run by the worker's own code): the eFax-style 3-page G4 TIFF at standard resolution
(drawn from its viewing PDF) and the one-page PDF invoice whose Japanese text uses a font it does
not embed (PDF.js draws it with the vendored CMaps and standard fonts). A page is drawn when its
canvas is in the page: the viewer puts it there once PDF.js has finished drawing it. Two ways of
opening a fax: from the inbox, the app loaded (the fragment changes to the fax's: its API call,
the signed URLs, PDF.js's document and page 1), timed in the page from the change of fragment to
the canvas; and its link opened in a new tab, the session kept (the page, its scripts, the
session's check, PDF.js and its worker loaded, then the same), timed from the navigation's start
(performance.now()). The first open of each way is a warm-up and is not counted.

python -m devstack run -- .venv/bin/python -m bench.viewer [--quick]
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from playwright.sync_api import Page, sync_playwright

from bench import flow, prepare_job
from bench.common import Section, Table, connect, env, fmt, median, percentile, run_alone
from devstack import browser
from devstack.standins.sample_faxes import EFAX_NUMBER, fax_tiff, invoice_pdf

PHONE = {"width": 390, "height": 844}
DENSITY = 3
WAIT_MS = 60_000  # a bound on waiting for one page, not a timing

# The first page's canvas, with some ink on it (a page swapped in blank would not count).
CANVAS = """() => { const c = document.querySelector('.viewer-page[data-page="1"] canvas');
  return !!c && c.width > 0; }"""
# From the fragment's change to the canvas, timed in the page on animation frames.
FROM_INBOX = """async (id) => {
  const started = performance.now();
  location.hash = `#/faxes/${id}`;
  const limit = started + WAIT_MS;
  for (;;) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const c = document.querySelector('.viewer-page[data-page="1"] canvas');
    if (c && c.width > 0) return performance.now() - started;
    if (performance.now() > limit) return null;
  }
}""".replace("WAIT_MS", str(WAIT_MS))
# In a new tab: noted from the navigation's start, by an observer there from the page's first script.
NOTE_FIRST_CANVAS = """new MutationObserver((_, observer) => {
  const c = document.querySelector('.viewer-page[data-page="1"] canvas');
  if (c && c.width > 0 && window.__firstCanvas === undefined) { window.__firstCanvas = performance.now();
    observer.disconnect(); }
}).observe(document, { childList: true, subtree: true, attributes: true });"""
INK = """() => { const c = document.querySelector('.viewer-page[data-page="1"] canvas');
  const copy = document.createElement("canvas"); copy.width = 200;
  copy.height = Math.max(1, Math.round(c.height * 200 / c.width));
  const x = copy.getContext("2d"); x.drawImage(c, 0, 0, copy.width, copy.height);
  const { data } = x.getImageData(0, 0, copy.width, copy.height); let dark = 0;
  for (let i = 0; i < data.length; i += 4) dark += data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200;
  return dark / (data.length / 4); }"""


@dataclass(frozen=True)
class Settings:
    opens: int


FULL = Settings(opens=9)
QUICK = Settings(opens=1)


def faxes(admin: psycopg.Connection) -> dict[str, str]:
    """The two sample faxes, stored and prepared: label -> e-mail id."""
    made = {}
    for label, content, content_type, email in (
        ("3-page G4 TIFF (eFax-style, standard mode)", fax_tiff(), "image/tiff",
         {"from_address": "eFax <message@inbound.efax.com>",
          "subject": f"eFax メッセージ 送信元 {EFAX_NUMBER} - 3 ページ"}),
        ("1-page PDF invoice (Japanese, font not embedded)", invoice_pdf(), "application/pdf",
         {"from_address": "株式会社山田商事 <fax@yamada.example.jp>", "subject": "請求書の送付"}),
    ):  # fmt: skip
        made[label] = prepare_job.stored_fax(admin, content, content_type, **email)
        prepare_job.prepare()
    return made


def sign_in(page: Page) -> None:
    page.goto(env("ADMIN_URL"))
    page.fill("input[name=email]", env("DEVSTACK_VIEWER_EMAIL"))
    page.fill("input[name=password]", env("DEVSTACK_VIEWER_PASSWORD"))
    page.click("form.sign-in button[type=submit]")
    page.wait_for_selector("table.faxes tbody tr", timeout=WAIT_MS)


def from_inbox(page: Page, fax_id: str) -> float:
    page.evaluate("location.hash = '#/faxes'")
    page.wait_for_selector("table.faxes tbody tr", timeout=WAIT_MS)
    elapsed = page.evaluate(FROM_INBOX, fax_id)
    if elapsed is None:
        raise TimeoutError(f"the fax {fax_id}'s first page was not drawn within {WAIT_MS} ms")
    return float(elapsed)


def in_new_tab(page: Page, fax_id: str) -> float:
    tab = page.context.new_page()
    try:
        tab.add_init_script(NOTE_FIRST_CANVAS)
        tab.goto(f"{env('ADMIN_URL')}#/faxes/{fax_id}")
        tab.wait_for_function(CANVAS, timeout=WAIT_MS)
        tab.wait_for_function("() => window.__firstCanvas !== undefined", timeout=WAIT_MS)
        return float(tab.evaluate("window.__firstCanvas"))
    finally:
        tab.close()


def measure(settings: Settings) -> dict[str, dict[str, list[float]]]:
    """Per fax and way of opening it: the times (ms) of its counted opens."""
    found: dict[str, dict[str, list[float]]] = {}
    with connect() as admin, flow.cron_paused(admin):
        flow.clean_up(admin)
        try:
            ids = faxes(admin)
            with sync_playwright() as playwright:
                chromium = browser.launch(playwright)
                try:
                    zone = admin.execute("select document_jobs_internal.office_time_zone()").fetchone()
                    context = chromium.new_context(viewport=PHONE, device_scale_factor=DENSITY, locale="ja-JP",
                                                   timezone_id=zone[0] if zone else None)  # fmt: skip
                    page = context.new_page()
                    sign_in(page)
                    for label, fax_id in ids.items():
                        from_inbox(page, fax_id)  # warm-ups: the fax's API call, PDF.js's module and worker
                        if page.evaluate(INK) < 0.001:
                            raise RuntimeError(f"{label}: its first page was drawn blank")
                        in_new_tab(page, fax_id)
                        found[label] = {
                            "from the inbox": [from_inbox(page, fax_id) for _ in range(settings.opens)],
                            "its link in a new tab": [in_new_tab(page, fax_id) for _ in range(settings.opens)],
                        }
                    context.close()
                finally:
                    chromium.close()
        finally:
            flow.clean_up(admin)
    return found


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "viewer",
        "The fax viewer: first page drawn after opening a fax (Chromium, 390 px)",
        " ".join(__doc__.split("\n\n", 1)[1].split("\n\npython -m", 1)[0].split()) + f" {settings.opens} "
        "counted opens per row.",
    )
    table = Table(
        f"opening a fax to its first page drawn, ms (headless Chromium, {PHONE['width']} x {PHONE['height']} px at "
        f"{DENSITY}x, {settings.opens} opens each)",
        ["fax", "opened", "median ms", "p95 ms", "min ms", "max ms"],
    )
    for label, ways in measure(settings).items():
        for way, times in ways.items():
            table.add(label, way, fmt(median(times), 0), fmt(percentile(times, 0.95), 0), fmt(min(times), 0),
                      fmt(max(times), 0))  # fmt: skip
            key = f"{'tiff' if 'TIFF' in label else 'pdf'}_{'inbox' if way == 'from the inbox' else 'tab'}"
            section.figures[f"median_ms_{key}"] = median(times)
    table.notes.append(
        "a bench figure, not a timed test: Chromium, the function host, the Storage stand-in and the database share "
        "the machine's cores, and the headless browser draws without a GPU"
    )
    section.tables.append(table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)
