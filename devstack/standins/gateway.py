"""The local API gateway: one HTTP server that plays Supabase's API host for the local stack.
/rest/v1/... goes to the PostgREST stand-in, /storage/v1/... to the Storage stand-in, /auth/v1/...
to the Auth stand-in (devstack/standins/auth/). Local stack only; never deployed.

Every request first passes Supabase's API-key rules (docs: guides/api/api-keys, "How API keys
work" and "Known limitations"; guides/getting-started/migrating-to-new-api-keys), on every path:

- The key goes in the `apikey` header; without one: 401 "No API key found in request" (header
  sb-error-code UNAUTHORIZED_MISSING_API_KEY, as Supabase's troubleshooting page shows it). Only
  signed URLs (/storage/v1/object/sign/..., whose token is the credential) need none: a browser's
  link sends no headers; nor does Auth's JWKS (/auth/v1/.well-known/jwks.json), which verifiers
  fetch without a key; nor does the link Auth e-mails (GET /auth/v1/verify: Supabase's gateway
  routes it without key-auth, the "auth-v1-open" service of docker/volumes/api/kong.yml in
  github.com/supabase/supabase).
- A secret key (sb_secret_...) is the service_role, a publishable key (sb_publishable_...) anon;
  any other sb_ key, or a JWT that the project's JWT secret did not sign: 401 "Invalid API key".
- A secret key from a browser (a User-Agent of the Mozilla/5.0 form every browser sends): 401.
  The status is documented; the wording of this and the other refusals is the stand-in's own.
- `Authorization` carries a user's JWT (a publishable key beside it is the normal case of a
  signed-in user), never a publishable or secret key: any other non-JWT value is refused with
  401, except one exactly equal to `apikey`, which the docs say is "forwarded down to your
  project's database, but will be rejected as the value is not a JWT": it is passed on, and
  PostgREST (PGRST301) and Storage ("Invalid Compact JWS") refuse it.
- Without `Authorization`, a publishable or secret key reaches the services as a short-lived JWT
  of its role, which this gateway signs: the services behind it only ever read JWTs.
- A legacy key (the anon or service_role JWT) works as it always has: the `Authorization` JWT,
  if any, is the caller, else anon.
- A CORS preflight needs no key (a browser sends none on it).

python -m devstack.standins.gateway --port-file FILE

Listens on 127.0.0.1 on a port the OS picks and writes that port to FILE once it accepts
connections; serves until SIGTERM. Reads DEVSTACK_AUTHENTICATOR_DATABASE_URL (it connects as
"authenticator", as PostgREST does, and switches to the JWT's role per request),
SUPABASE_JWT_SECRET, SUPABASE_SECRET_KEY, SUPABASE_PUBLISHABLE_KEY and DEVSTACK_STORAGE_DIR, and for
Auth DEVSTACK_AUTH_SIGNING_KEY, DEVSTACK_AUTH_KEY_ID and DEVSTACK_AUTH_DATABASE_URL (as
supabase_auth_admin, GoTrue's role, to its tables in the auth schema). Logs one line per request
to stderr, never headers. GET /_control/requests answers how many requests it has served, by
method and path (for tests and the benchmarks that count round trips); POST /_control/auth
{"access_token_seconds": N, "refresh_reuse_interval_s": N} sets how Auth issues and renews tokens
from then on (tests), and {"site_url", "uri_allow_list", "max_frequency_s", "emails_per_hour"} its
e-mailed links (the stack sets the Site URL to the admin screen's); GET /_control/auth/mail?to=
lists the e-mails Auth has sent (captured, never delivered: devstack/standins/auth/mail.py).
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from urllib.parse import parse_qsl, urlsplit

import jwt

from devstack.standins import postgrest
from devstack.standins.auth import Auth, Keys, cors
from devstack.standins.auth.state import State as AuthState
from devstack.standins.layer import fault_layer
from devstack.standins.messages import Backend, Request, Response
from devstack.standins.postgrest.connections import Connections
from devstack.standins.storage import Storage

REQUIRED_ENV = (
    "DEVSTACK_AUTHENTICATOR_DATABASE_URL",
    "DEVSTACK_AUTH_DATABASE_URL",
    "SUPABASE_JWT_SECRET",
    "SUPABASE_SECRET_KEY",
    "SUPABASE_PUBLISHABLE_KEY",
    "DEVSTACK_STORAGE_DIR",
    "DEVSTACK_AUTH_SIGNING_KEY",
    "DEVSTACK_AUTH_KEY_ID",
    "DEVSTACK_FOLDER",
)
MAX_BODY_BYTES = 64 * 1024 * 1024  # above Storage's 50 MB upload limit, so that limit is the one reported
POOL_MIN, POOL_MAX = 2, 20
POOL_TIMEOUT_S = 10.0  # PostgREST's default db-pool-acquisition-timeout
REST_PREFIX, STORAGE_PREFIX, AUTH_PREFIX = "/rest/v1", "/storage/v1", "/auth/v1"


SECRET_PREFIX, PUBLISHABLE_PREFIX = "sb_secret_", "sb_publishable_"
KEYLESS_PATHS = re.compile(r"/storage/v1/object/sign/|/auth/v1/\.well-known/jwks\.json$|/auth/v1/verify$")
BROWSER_USER_AGENT = re.compile(r"Mozilla/\d")
JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
MINTED_JWT_TTL_S = 60


@dataclass(frozen=True)
class ProjectKeys:
    secret: str  # sb_secret_...: the service_role
    publishable: str  # sb_publishable_...: anon
    jwt_secret: str  # signs the legacy keys, users' tokens and what the gateway hands on


class KeyRefused(Exception):
    def __init__(self, message: str, hint: str | None = None, error_code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.hint, self.error_code = message, hint, error_code

    def response(self) -> Response:
        headers = {"sb-error-code": self.error_code} if self.error_code else {}
        return Response.json(401, {"message": self.message, "hint": self.hint}, headers)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def key_role(apikey: str, keys: ProjectKeys) -> str | None:
    """The role a publishable or secret key stands for; None for a legacy key (a JWT of the project)."""
    if apikey.startswith(SECRET_PREFIX) and _same(apikey, keys.secret):
        return "service_role"
    if apikey.startswith(PUBLISHABLE_PREFIX) and _same(apikey, keys.publishable):
        return "anon"
    if JWT_SHAPE.fullmatch(apikey):
        try:
            jwt.decode(apikey, keys.jwt_secret, algorithms=["HS256"], options={"verify_aud": False})
            return None
        except jwt.InvalidTokenError:
            pass
    raise KeyRefused("Invalid API key", "Double check your Supabase API key.")


def apply_key_rules(headers: Message, path: str, keys: ProjectKeys) -> Message:
    """The headers the services behind the gateway get (see the module's docstring), or KeyRefused."""
    apikey = headers.get("apikey")
    if apikey is None:
        if KEYLESS_PATHS.match(path):
            return headers
        raise KeyRefused("No API key found in request", "No `apikey` request header or url param was found.",
                         "UNAUTHORIZED_MISSING_API_KEY")  # fmt: skip
    role = key_role(apikey, keys)
    if role == "service_role" and BROWSER_USER_AGENT.match(headers.get("User-Agent") or ""):
        raise KeyRefused("Forbidden use of secret API key in browser", "Secret keys are for servers only.")
    authorization = headers.get("Authorization")
    if authorization is not None:
        token = authorization.strip().removeprefix("Bearer").strip()
        if role is not None and not JWT_SHAPE.fullmatch(token) and not _same(token, apikey):
            raise KeyRefused("Invalid authorization header",
                             "Send a publishable or secret key in apikey, a user's JWT in Authorization.")  # fmt: skip
        return headers
    if role is None:
        return headers
    forwarded = Message()
    for name, value in headers.items():
        forwarded[name] = value
    now = int(time.time())
    minted = jwt.encode({"role": role, "iss": "supabase-local-gateway", "iat": now, "exp": now + MINTED_JWT_TTL_S},
                        keys.jwt_secret)  # fmt: skip
    forwarded["Authorization"] = f"Bearer {minted}"
    return forwarded


def is_preflight(method: str, headers: Message) -> bool:
    """A browser's CORS preflight: it never carries the request's own headers (no apikey), and
    Supabase's gateway answers it before any key check (here Auth answers, the only stand-in a
    browser calls across origins)."""
    return method == "OPTIONS" and headers.get("Access-Control-Request-Method") is not None


# What the server answers a request (method, path, query string, headers, body); None: no answer,
# the connection is closed. Gateway.answer is one, chosen once at the start (a fault layer may wrap it).
Answer = Callable[[str, str, str, Message, bytes], Response | None]


class GatewayServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, backend: Backend, storage: Storage, keys: ProjectKeys, auth_keys: Keys, auth_state: AuthState
    ) -> None:
        super().__init__(("127.0.0.1", 0), GatewayHandler)
        self.backend = backend
        self.storage = storage
        self.keys = keys
        # Auth names itself in every token it signs ("iss"): {SUPABASE_URL}/auth/v1, this server's own URL.
        self.auth = Auth(auth_state, auth_keys, f"http://127.0.0.1:{self.server_address[1]}{AUTH_PREFIX}")
        self.answer: Answer = self.respond
        self.requests: Counter[str] = Counter()  # "POST /rest/v1/rpc/claim_document_jobs" -> count
        self.requests_lock = threading.Lock()

    def respond(self, method: str, path: str, query: str, headers: Message, body: bytes) -> Response:
        if path == "/_control/auth" and method == "POST":
            self.auth.configure(json.loads(body))
            return Response.json(200, {})
        if path == "/_control/auth/mail" and method == "GET":
            return Response.json(200, {"mails": self.auth.outbox.mails(dict(parse_qsl(query)).get("to"))})
        if path == "/_control/requests":
            with self.requests_lock:
                return Response.json(200, dict(self.requests))
        with self.requests_lock:
            self.requests[f"{method} {path}"] += 1
        try:
            forwarded = headers if is_preflight(method, headers) else apply_key_rules(headers, path, self.keys)
        except KeyRefused as refused:
            response = refused.response()
            if path.startswith(AUTH_PREFIX + "/"):  # the browser may read the refusal (CORS)
                response = cors.with_cors(response, headers.get("Origin"))
            return response
        return self.dispatch(method, path, parse_qsl(query, keep_blank_values=True), forwarded, body)

    def dispatch(self, method: str, path: str, query: list[tuple[str, str]], headers: Message, body: bytes) -> Response:
        for prefix in (REST_PREFIX, STORAGE_PREFIX, AUTH_PREFIX):
            if path == prefix or path.startswith(prefix + "/"):
                request = Request(method, path[len(prefix) + 1 :], query, headers, body)
                if prefix == REST_PREFIX:
                    return postgrest.handle(self.backend, request)
                if prefix == AUTH_PREFIX:
                    return self.auth.handle(request)
                return self.storage.handle(request)
        return Response.json(404, {"message": "no Route matched with those values"})


class BodyTooLarge(Exception):
    pass


class BodyCutOff(Exception):
    """The client's connection ended inside the body (fewer bytes than its Content-Length, or a
    chunked body without its last chunk): the request never arrived whole, and a server that
    streams it on (Storage into its object store) aborts it and keeps nothing."""


class GatewayHandler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps connections alive between the clients' requests; every answer has a Content-Length.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm and the client's
    # delayed ACK hold the body ~40 ms on a kept-alive connection. PostgREST and Storage set it too.
    disable_nagle_algorithm = True
    server: GatewayServer

    def do_GET(self) -> None:
        self.serve()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def serve(self) -> None:
        started = time.monotonic()
        url = urlsplit(self.path)
        try:
            # Read the body even for a request no route takes, or it would be parsed as the next request.
            body = self.read_body()
            response = self.server.answer(self.command, url.path, url.query, self.headers, body)
            if response is None:
                self.close_connection = True  # no answer at all
                return
        except BodyCutOff:
            self.close_connection = True  # nobody is left to answer, and nothing was served
            return
        except BodyTooLarge:
            self.close_connection = True  # the unread body would otherwise be taken for the next request
            response = Response.json(413, {"message": "Request Entity Too Large"})
        except Exception:  # a bug in a stand-in: answer, and leave the traceback in the log
            traceback.print_exc(file=sys.stderr)
            response = Response.json(500, {"message": "internal error in the local gateway; see its log"})
        self.send(response)
        elapsed_ms = (time.monotonic() - started) * 1000
        print(f"{self.command} {url.path} {response.status} {elapsed_ms:.1f}ms", file=sys.stderr, flush=True)

    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise BodyTooLarge
        body = self.rfile.read(length)
        if len(body) < length:
            raise BodyCutOff
        return body

    def read_chunked(self) -> bytes:
        chunks = []
        total = 0
        while True:
            line = self.rfile.readline()
            if not line.endswith(b"\n"):
                raise BodyCutOff  # the connection ended before the last chunk
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():  # trailers, up to the blank line
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_BODY_BYTES:
                raise BodyTooLarge
            chunk = self.rfile.read(size)
            if len(chunk) < size:
                raise BodyCutOff
            chunks.append(chunk)
            self.rfile.readline()

    def send(self, response: Response) -> None:
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # serve() logs one line per request, with its duration

    def log_message(self, format: str, *args: object) -> None:
        print(f"gateway: {format % args}", file=sys.stderr, flush=True)


def write_port_file(path: Path, port: int) -> None:
    # Written whole, then renamed: the stack polls this file and must never read half a number.
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{port}\n")
    os.replace(temporary, path)


def stop_on_signals(server: GatewayServer) -> None:
    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever() to return, which runs in this very thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.standins.gateway", description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", type=Path, required=True, help="where to write the port once listening")
    args = parser.parse_args(argv)
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        print(f"gateway: missing environment variables: {', '.join(missing)}", file=sys.stderr)
        return 2
    storage_dir = Path(os.environ["DEVSTACK_STORAGE_DIR"])
    storage_dir.mkdir(parents=True, exist_ok=True)
    # Replaced rather than waited on when the database restarts, as PostgREST does (connections.py).
    pool = Connections(os.environ["DEVSTACK_AUTHENTICATOR_DATABASE_URL"], min_size=POOL_MIN, max_size=POOL_MAX,
                       timeout=POOL_TIMEOUT_S, name="gateway")  # fmt: skip
    pool.open(timeout=15.0)  # fail here, before announcing a port, if the database is unreachable
    try:
        backend = Backend(pool, os.environ["SUPABASE_JWT_SECRET"])
        keys = ProjectKeys(
            os.environ["SUPABASE_SECRET_KEY"], os.environ["SUPABASE_PUBLISHABLE_KEY"], os.environ["SUPABASE_JWT_SECRET"]
        )
        auth_keys = Keys(
            signing_key_pem=os.environ["DEVSTACK_AUTH_SIGNING_KEY"],
            key_id=os.environ["DEVSTACK_AUTH_KEY_ID"],
            jwt_secret=keys.jwt_secret,
        )
        # Auth reaches its tables as its own role, as GoTrue does.
        auth_state = AuthState(os.environ["DEVSTACK_AUTH_DATABASE_URL"])
        auth_state.open(timeout=15.0)
        server = GatewayServer(backend, Storage(backend, storage_dir), keys, auth_keys, auth_state)
        layer = fault_layer("gateway")
        if layer:
            server.answer = layer.wrap(server.answer)
        stop_on_signals(server)
        port = server.server_address[1]
        write_port_file(args.port_file, port)
        print(f"gateway: listening on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
            auth_state.close()
    finally:
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
