"""PostgREST's error answer: {"code", "message", "details", "hint"} with its HTTP status."""

from __future__ import annotations

from collections.abc import Mapping

from devstack.standins.messages import Response


class ApiError(Exception):
    """An answer in PostgREST's error shape."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: str | None = None,
        hint: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details, self.hint = status, code, message, details, hint
        self.headers = dict(headers or {})

    def response(self) -> Response:
        body = {"code": self.code, "message": self.message, "details": self.details, "hint": self.hint}
        return Response.json(self.status, body, self.headers)


def bad_request(message: str, details: str | None = None) -> ApiError:
    """What this stand-in answers to query syntax it does not take (PostgREST's parse error)."""
    return ApiError(400, "PGRST100", message, details)
