"""GoTrue's error answers, and the request bodies it refuses as bad_json. An error is
{"code": <status>, "error_code", "msg"}, or {"code": <error_code>, "message"} for a request naming
X-Supabase-Api-Version 2024-01-01 or later (github.com/supabase/auth internal/api/errors.go)."""

from __future__ import annotations

import json
from typing import Any

from devstack.standins.messages import Request, Response

API_VERSION_HEADER = "X-Supabase-Api-Version"
NEW_ERROR_SHAPE_SINCE = "2024-01-01"


class AuthError(Exception):
    def __init__(self, status: int, error_code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error_code, self.message = status, error_code, message


def error_response(request: Request, error: AuthError) -> Response:
    version = request.headers.get(API_VERSION_HEADER) or ""
    if version >= NEW_ERROR_SHAPE_SINCE:
        body: dict[str, Any] = {"code": error.error_code, "message": error.message}
        return Response.json(error.status, body, {API_VERSION_HEADER: NEW_ERROR_SHAPE_SINCE})
    return Response.json(error.status, {"code": error.status, "error_code": error.error_code, "msg": error.message})


def json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError as error:
        raise AuthError(400, "bad_json", "Could not parse request body as JSON") from error
    if not isinstance(body, dict):
        raise AuthError(400, "bad_json", "Could not parse request body as JSON")
    return body
