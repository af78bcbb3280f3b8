"""The admin page in the browser tests: a watched page (what must never happen on it) and signing in."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.sync_api import Page

# How long an expectation waits for the page by default. Every API call here starts a cold instance
# of Vercel's runtime on the function host (a second or two, more on a busy machine), so a view can
# take several seconds to appear; a bound on waiting, not a timing.
EXPECT_MS = 30_000

# Reports every Content-Security-Policy violation (Trusted Types' included) to the test, from before
# the page's first script runs (Playwright adds it outside the page's policy).
REPORT_VIOLATIONS = """document.addEventListener("securitypolicyviolation", (e) => window.__violation(
  `${e.effectiveDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`), true);"""


class Watched:
    """A page, and what must never happen on it: a script error, a dialog, a CSP refusal (as the
    securitypolicyviolation event and as the console's error); and every request it sends (where
    to, and all it carries)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        self.sent: list[tuple[str, str]] = []  # (origin, everything the request carried)
        page.expose_function("__violation", lambda text: self.problems.append(f"policy violation: {text}"))
        page.add_init_script(REPORT_VIOLATIONS)
        page.on("request", lambda r: self.sent.append(
            (urlsplit(r.url)._replace(path="", query="", fragment="").geturl(),
             f"{r.url}\n{r.all_headers()}\n{r.post_data or ''}")))  # fmt: skip
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.on("console", lambda m: self.problems.append(f"console: {m.text}")
                if m.type == "error" and re.search("Content Security Policy|Trusted", m.text) else None)  # fmt: skip


def sign_in(page: Page, env: dict[str, str], who: str, password: str | None = None) -> None:
    page.goto(env["ADMIN_URL"])
    page.fill("input[name=email]", env[f"DEVSTACK_{who}_EMAIL"])
    page.fill("input[name=password]", password or env[f"DEVSTACK_{who}_PASSWORD"])
    page.click("form.sign-in button[type=submit]")
