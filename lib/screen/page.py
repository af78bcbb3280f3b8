"""The admin screen's page (GET /admin): a shell that names its scripts and styles in public/admin/,
and the two values the browser needs, the project's Supabase URL and its publishable key.

The shell comes from the function rather than from public/ for one reason: its
Content-Security-Policy must name the project's Supabase URL in connect-src (the page signs in
with Supabase Auth directly), and only the deployment's environment knows that URL; vercel.json's
headers cannot read it. Everything else the page uses is a static file of the deploy.

The policy: scripts, styles and fonts from this origin only, no inline script or style, no eval
(neither 'unsafe-inline' nor 'unsafe-eval'), connections to this origin and the Supabase URL only,
never framed (frame-ancestors 'none'), and Trusted Types required, so that no string can reach an
HTML sink such as innerHTML even by mistake: the page builds its DOM from text nodes. Supabase's
auth client (public/admin/vendor/supabase.js, the pinned package's browser build) runs under the
same policy: it uses no eval, no HTML sink and no policy of its own. It is a classic script,
deferred, so that it runs before the modules (deferred too), in the page's order.

The fax viewer (public/admin/viewer.js) widens it by two things, and only those:
- One Trusted Types policy, WORKER_POLICY, which vouches for one URL: PDF.js's worker script
  (public/admin/vendor/pdfjs/pdf.worker.min.mjs), which the viewer starts as a Web Worker (a script
  URL sink) and hands to PDF.js as its port. No policy creates HTML, and no other may be created.
  The worker is this origin's (worker-src 'self', written out though script-src would give the same).
- Images from the Supabase URL: Storage's signed URLs of the faxes' thumbnails and of picture
  attachments (JPEG, PNG) are on that origin. A PDF is fetched (connect-src, as before), and its
  CMaps and standard fonts come from this origin, fetched by the page rather than the worker.
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

from lib.http_shell import Reply

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # for browsers that predate frame-ancestors
    "Cross-Origin-Opener-Policy": "same-origin",
}

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="document-jobs-supabase-url" content="{supabase_url}">
<meta name="document-jobs-supabase-key" content="{publishable_key}">
<title>document-jobs</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/admin.css">
<script defer src="/admin/vendor/supabase.js"></script>
<script type="module" src="/admin/app.js"></script>
</head>
<body>
<noscript>This page needs JavaScript. / このページを使うには JavaScript を有効にしてください。</noscript>
<div id="app"></div>
</body>
</html>
"""


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


# The Trusted Types policy the fax viewer creates for PDF.js's worker (public/admin/viewer.js WORKER_POLICY).
WORKER_POLICY = "pdfjs-worker"


def content_security_policy(supabase_url: str) -> str:
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            f"img-src 'self' data: {origin(supabase_url)}",
            "font-src 'self'",
            f"connect-src 'self' {origin(supabase_url)}",
            "worker-src 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
            "require-trusted-types-for 'script'",
            f"trusted-types {WORKER_POLICY}",
        )
    )


def page(supabase_url: str, publishable_key: str) -> Reply:
    body = PAGE.format(
        supabase_url=html.escape(supabase_url, quote=True), publishable_key=html.escape(publishable_key, quote=True)
    )
    headers = {
        **SECURITY_HEADERS,
        "Content-Security-Policy": content_security_policy(supabase_url),
        "Cache-Control": "no-cache",
    }
    return Reply(200, body.encode(), "text/html; charset=utf-8", headers)
