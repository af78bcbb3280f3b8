"""The inbound e-mail webhook: POST /api/webhooks/resend (Vercel function).

Resend calls it for every received e-mail (event email.received), signed with Svix headers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # Vercel runs this file alone

from lib import log
from lib.http_shell import Answer, JsonHandler
from lib.webhook import endpoint

log.configure()


class handler(JsonHandler):
    def answer(self) -> Answer:  # JsonHandler.do_POST writes it, and a JSON 500 for any exception
        headers = {name.lower(): value for name, value in self.headers.items()}
        return endpoint.handle(headers, self.read_body)
