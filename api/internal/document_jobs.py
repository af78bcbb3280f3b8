"""The worker: POST /api/internal/document-jobs (Vercel function, maxDuration 300 in vercel.json).

Called by pg_net, from the every-minute cron job and from the webhook's kick, with
`Authorization: Bearer <INTERNAL_FUNCTION_SECRET>`. Answers a JSON summary of the jobs it ran.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # Vercel runs this file alone

from lib import log, worker_endpoint
from lib.http_handler import JsonHandler

log.configure()


class handler(JsonHandler):
    def do_POST(self) -> None:
        status, body = worker_endpoint.handle(self.headers.get("Authorization"))
        self.send_json(status, body)
