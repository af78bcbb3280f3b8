"""CORS as GoTrue's handler answers it (rs/cors, github.com/supabase/auth internal/api/api.go):
the page signs in across origins, as it does with the real Auth."""

from __future__ import annotations

from devstack.standins.messages import Request, Response

CORS_METHODS = ("GET", "POST", "PUT", "DELETE")
CORS_HEADERS = frozenset(
    h.lower()
    for h in (
        "Accept", "Authorization", "Content-Type", "X-Client-IP", "X-Client-Info", "X-JWT-AUD", "X-Use-Cookie",
        "X-Supabase-Api-Version", "Origin", "apikey",
    )
)  # fmt: skip
EXPOSED_HEADERS = "X-Total-Count, Link, X-Supabase-Api-Version"


def preflight(request: Request, origin: str | None) -> Response:
    headers = {"Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}
    method = (request.headers.get("Access-Control-Request-Method") or "").upper()
    asked = [h.strip() for h in (request.headers.get("Access-Control-Request-Headers") or "").split(",") if h.strip()]
    if origin and method in (*CORS_METHODS, "OPTIONS") and all(h.lower() in CORS_HEADERS for h in asked):
        headers |= {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": method,
            "Access-Control-Allow-Credentials": "true",
        }
        if asked:
            headers["Access-Control-Allow-Headers"] = ", ".join(asked)
    return Response(200, b"", headers)


def with_cors(response: Response, origin: str | None) -> Response:
    response.headers["Vary"] = "Origin"
    if origin:
        response.headers |= {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Credentials": "true",
            "Access-Control-Expose-Headers": EXPOSED_HEADERS,
        }
    return response
