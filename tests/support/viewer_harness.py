"""A page that mounts the fax viewer (public/admin/viewer.js) on its own, until the inbox does,
under exactly the admin page's policy, and a stand-in for Storage's signed URLs on another origin.

Two servers over loopback:
- the screen's origin: /admin/* is public/admin/ served as Vercel serves the deployment's static
  files (with the headers vercel.json gives "/admin/(.*)", its own Content-Security-Policy among
  them, which PDF.js's worker script is served with too); /viewer-harness is a shell like
  lib/screen/page.py's, with its SECURITY_HEADERS and content_security_policy() for a Supabase URL
  that is the Storage stand-in's origin; its one script (tests/support/viewer_harness.js) mounts
  the viewer with the fax the test named;
- the Storage stand-in: each file at a signed-URL-like path, answered with
  `Access-Control-Allow-Origin: *` as Supabase Storage answers object downloads, and with
  `Content-Disposition: attachment` for the download URL (Storage's `download` query parameter),
  https://supabase.com/docs/reference/javascript/storage-from-createsignedurl
"""

from __future__ import annotations

import json
import mimetypes
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from lib.screen.page import SECURITY_HEADERS, content_security_policy
from tests.support.serve import serve

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "public"
HARNESS_SCRIPT = Path(__file__).with_name("viewer_harness.js")
REPORT_PATH = "/viewer-harness/csp-report"
SHELL = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>document-jobs viewer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/admin.css">
<script type="module" src="/viewer-harness/harness.js"></script>
</head>
<body>
<header class="top"><h1>document-jobs</h1></header>
<main id="app"></main>
</body>
</html>
"""


def reported(policy: str) -> str:
    """The policy, enforced as it is, that also reports each violation to the harness: a dedicated
    worker runs under its script's own policy (here vercel.json's for static files), and its
    violations reach neither the page's securitypolicyviolation event nor Playwright's console
    messages; reports reach the harness from the page and the worker alike."""
    return f"{policy}; report-uri {REPORT_PATH}"


def static_headers(path: str) -> dict[str, str]:
    """The headers vercel.json's "headers" give a path (their sources are regular expressions here)."""
    found: dict[str, str] = {}
    for rule in json.loads((ROOT / "vercel.json").read_text())["headers"]:
        if re.fullmatch(rule["source"], path):
            found.update({header["key"]: header["value"] for header in rule["headers"]})
    if "Content-Security-Policy" in found:
        found["Content-Security-Policy"] = reported(found["Content-Security-Policy"])
    return found


@dataclass
class Harness:
    url: str  # the screen's origin
    storage: str  # the Storage stand-in's origin (the page's "Supabase URL")
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # name: (content, type)
    faxes: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # every path either server was asked for
    reports: list[dict[str, Any]] = field(default_factory=list)  # CSP violation reports, the worker's included
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_file(self, name: str, content: bytes, content_type: str) -> str:
        """The file's signed URL."""
        self.files[name] = (content, content_type)
        return f"{self.storage}/storage/v1/object/sign/fax-attachments/{quote(name)}?token=signed"

    def download_url(self, name: str) -> str:
        return (
            f"{self.storage}/storage/v1/object/sign/fax-attachments/{quote(name)}?token=signed&download={quote(name)}"
        )

    def add_fax(self, fax_id: str, documents: list[dict[str, Any]], rotation: int = 0, label: str | None = None) -> str:
        """The harness page's URL showing the fax. Each document: name, kind, and url or note."""
        self.faxes[fax_id] = {"documents": [{**d, "downloadUrl": self.download_url(d["name"])} for d in documents],
                              "rotation": rotation, "label": label}  # fmt: skip
        return f"{self.url}/viewer-harness?fax={quote(fax_id)}"


def _handler(harness: Harness, storage: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            with harness.lock:
                harness.requests.append(parts.path)
            if storage:
                self.storage_file(parts.path, parts.query)
            else:
                self.screen_file(parts.path, parts.query)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if storage or urlsplit(self.path).path != REPORT_PATH:
                self.answer(404, b"", "text/plain", {})
                return
            with harness.lock:
                harness.reports.append(json.loads(body).get("csp-report", {}))
            self.answer(204, b"", "text/plain", {})

        def storage_file(self, path: str, query: str) -> None:
            name = unquote(path.rsplit("/", 1)[-1])
            cors = {"Access-Control-Allow-Origin": "*"}
            if name not in harness.files:
                self.answer(404, b'{"error":"not_found"}', "application/json", cors)
                return
            content, content_type = harness.files[name]
            if "download=" in query:
                cors["Content-Disposition"] = f"attachment; filename*=UTF-8''{quote(name)}"
            self.answer(200, content, content_type, cors)

        def screen_file(self, path: str, query: str) -> None:
            if path == "/viewer-harness":
                policy = reported(content_security_policy(harness.storage))
                headers = {**SECURITY_HEADERS, "Content-Security-Policy": policy, "Cache-Control": "no-cache"}
                self.answer(200, SHELL.encode(), "text/html; charset=utf-8", headers)
            elif path == "/viewer-harness/harness.js":
                self.answer(200, HARNESS_SCRIPT.read_bytes(), "text/javascript; charset=utf-8", static_headers(path))
            elif path.startswith("/viewer-harness/fax/"):
                fax = harness.faxes.get(unquote(path.rsplit("/", 1)[-1]))
                self.answer(200 if fax else 404, json.dumps(fax).encode(), "application/json", {})
            else:
                file = (PUBLIC / path.lstrip("/")).resolve()
                if not path.startswith("/admin/") or not file.is_file() or not file.is_relative_to(PUBLIC):
                    self.answer(404, b"not found", "text/plain", static_headers(path))
                    return
                content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                if content_type.startswith("text/"):
                    content_type += "; charset=utf-8"
                self.answer(200, file.read_bytes(), content_type, static_headers(path))

    return Handler


@contextmanager
def viewer_harness() -> Iterator[Harness]:
    """Both servers, for the block's length."""
    harness = Harness(url="", storage="")
    with ExitStack() as stack:
        harness.url = stack.enter_context(serve(_handler(harness, storage=False)))
        # "localhost": another origin than the screen's 127.0.0.1, as Supabase's is.
        harness.storage = stack.enter_context(serve(_handler(harness, storage=True))).replace("127.0.0.1", "localhost")
        yield harness
