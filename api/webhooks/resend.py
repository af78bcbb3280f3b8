"""The inbound e-mail webhook: POST /api/webhooks/resend (Vercel function).

Resend calls it for every received e-mail (event email.received), signed with Svix headers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # Vercel runs this file alone

from lib import log, webhook
from lib.http_handler import JsonHandler

log.configure()


class handler(JsonHandler):
    def do_POST(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.send_json(*webhook.handle(headers, self.read_body))
