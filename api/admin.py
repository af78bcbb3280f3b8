"""The admin screen: GET /admin (the page) and /api/admin/... (its JSON API), one Vercel function.

vercel.json rewrites /admin and /api/admin/<anything> here; the path the browser asked for is
kept, and lib/screen/endpoint.py routes by it. The page's scripts and styles are static files
(public/admin/).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # Vercel runs this file alone

from lib import log
from lib.http_shell import JsonHandler
from lib.screen import endpoint

log.configure()


class handler(JsonHandler):
    def do_GET(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.respond(lambda: endpoint.handle(self.command, self.path, headers, self.read_body))

    do_POST = do_GET
