"""What Resend's receiving API answers about an e-mail's attachments, for unit tests of the worker
(respx routes them)."""

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
