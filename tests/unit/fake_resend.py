"""What Resend's receiving API answers about an e-mail (its attachments, and the e-mail itself with
its raw message's URL), for unit tests of the worker (respx routes them)."""

from __future__ import annotations

from typing import Any

RESEND = "https://resend.test"
PDF = b"%PDF-1.4 fake fax page\n" * 10


def attachment(n: int, **overrides: Any) -> dict[str, Any]:
    """One item of the attachment listing, its download_url signed."""
    return {
        "id": f"att_{n}",
        "filename": f"請求書_{n}.pdf",
        "content_type": "application/pdf",
        "size": len(PDF),
        "download_url": f"https://cdn.resend.test/att_{n}?sig=first",
        "expires_at": "2026-11-29T18:00:00Z",
        **overrides,
    }


def page(*items: dict[str, Any], has_more: bool = False) -> dict[str, Any]:
    """One page of the listing."""
    return {"object": "list", "has_more": has_more, "data": list(items)}


# The e-mail as Resend received it, served from a host of its own (the attachments' routes never match it).
RAW = b"From: fax@example.jp\r\nSubject: FAX\r\nMIME-Version: 1.0\r\n\r\nfake raw message\r\n" * 4
RAW_URL = "https://inbound.resend.test/em_123/raw?sig=first"


def received(raw_url: str | None = RAW_URL) -> dict[str, Any]:
    """GET /emails/receiving/{id}: the e-mail, its `raw` the message's URL, or null."""
    raw = None if raw_url is None else {"download_url": raw_url, "expires_at": "2026-11-29T18:00:00Z"}
    return {"object": "email", "id": "em_123", "from": "fax@example.jp", "subject": "FAX", "raw": raw}
