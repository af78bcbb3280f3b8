"""The worker: POST /api/internal/document-jobs (Vercel function, maxDuration 300 in vercel.json).

Called by pg_net, from the every-minute cron job and from the webhook's kick, with
`Authorization: Bearer <INTERNAL_FUNCTION_SECRET>`. Answers a JSON summary of the jobs it ran.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # Vercel runs this file alone

from lib import log
from lib.http_shell import Answer, JsonHandler
from lib.worker import endpoint

log.configure()


class handler(JsonHandler):
    def answer(self) -> Answer:  # JsonHandler.do_POST writes it, and a JSON 500 for any exception
        return endpoint.handle(self.headers.get("Authorization"), request_id=self.headers.get("x-vercel-id"))
