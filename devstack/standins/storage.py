"""Stand-in for Supabase Storage's object API. Local stack only: never deployed, and nothing in
lib/ or api/ imports it. It serves the requests the product sends (lib/supabase/storage.py,
lib/screen/endpoint.py, and the admin page following a signed URL), with the real service's rules and
error shape where the code under test depends on them:

- POST /storage/v1/object/<bucket>/<key> with a raw body, its Content-Type the object's;
  "x-upsert: true" overwrites, otherwise (no header, or "false") an existing key is refused and
  the object stays as it was: HTTP 400 {"statusCode": "409", "code": "KeyAlreadyExists", "error":
  "Duplicate", "message": "The resource already exists"} (supabase.com/docs/guides/storage/debugging/
  error-codes: KeyAlreadyExists, 409; supabase/storage's ERRORS.Duplicate answers it in the older
  shape, the real status as a string under HTTP 400). The stand-in reads the body before it
  answers; the worker does not depend on it (it reads the rest of its download itself).
- Signed URLs (supabase/storage src/http/routes/object/getSignedURL.ts, getSignedObject.ts):
  POST /storage/v1/object/sign/<bucket>/<key> {"expiresIn": seconds} answers {"signedURL":
  "/object/sign/<bucket>/<key>?token=<JWT>"}, the token an HS256 JWT with the project's JWT secret
  and claims url ("<bucket>/<key>"), iat, exp; GET .../object/sign/<bucket>/<key>?token=...
  [&download=<name>] serves the object to anyone holding it until exp (400 "Invalid JWT" after,
  400 "InvalidSignature" for another object), with Expires, and with download
  Content-Disposition: attachment; filename=<encoded>; filename*=UTF-8''<encoded>; (the
  renderer's handleDownload), and with Access-Control-Allow-Origin: * as Storage answers object
  downloads (its CORS plugin allows every origin). text/html is served as text/plain, as
  Storage's renderer does.
- Signed URLs of several objects at once (src/http/routes/object/getSignedURLs.ts; supabase-js's
  createSignedUrls): POST /storage/v1/object/sign/<bucket> {"expiresIn": seconds, "paths": [keys]}
  answers a list, one item per path in its order, {"path", "signedURL", "error": null}, or for an
  object that is not there {"path", "signedURL": null, "error": "Either the object does not exist
  or you do not have access to it"}; the URLs are those of the single route.
- Buckets are the rows of storage.buckets (migrations insert them); file_size_limit and
  allowed_mime_types are enforced. Keys must match Supabase's key rule (ASCII only).
- Errors are mostly HTTP 400 with the real status as a string in the body:
  {"statusCode": "409", "code": "KeyAlreadyExists", "error": "Duplicate", "message": ...}.

- GET /storage/v1/object/authenticated/<bucket>/<key> ("Retrieve an object", supabase/storage
  src/http/routes/object/getObject.ts; https://supabase.github.io/storage/, tag object): the
  object's bytes with its Content-Type, ETag and Last-Modified, to a request whose JWT is valid
  (else 403 InvalidJWT, as every authenticated route); the bucket is looked up as the super user
  (404 NoSuchBucket), the object under the caller's row-level security, so that any role but
  service_role, with no storage policies here, finds nothing: 404 NoSuchKey, as the product
  answers, not AccessDenied. The same file serves GET /storage/v1/object/<bucket>/<key>, which
  Storage keeps as a deprecated alias; the stand-in answers it as before (the service role only).
- DELETE /storage/v1/object/<bucket>/<key> (Storage's "Delete an object"; the worker's clean-up of
  an object found wrong after its upload) answers {"message": "Successfully deleted"}, or 404
  NoSuchKey in the error shape.
- A body is taken with a Content-Length or chunked, as Storage streams either on to its object
  store; one cut off before its end (the client's connection closed inside it) stores nothing, as
  Storage aborts the upload (the gateway drops such a request, devstack/standins/gateway.py).

What nothing in the product sends is not served: multipart (storage3's form) uploads, PUT, and
the public read route.

There are no storage policies (RLS on storage.objects) in this project, so only service_role may
read or write objects; any other role is refused as the real service refuses it. Which role a
request has is the gateway's to say (devstack/standins/gateway.py, Supabase's API-key rules): the JWT in
its Authorization header, which for a secret key is one the gateway signed.

Objects live as files under DEVSTACK_STORAGE_DIR/<bucket>/<key>, each with a JSON sidecar
"<key>#meta.json" ("#" cannot occur in a key, so a sidecar never collides with an object).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import jwt
import psycopg

from devstack.standins.messages import Backend, Request, Response
from devstack.standins.postgrest.jwt_auth import AuthError, authenticate

WRITER_ROLE = "service_role"
# Used with fullmatch, as Storage (JavaScript, where "$" is the end of input) applies them:
# Python's "$" with match would let a key ending in a newline through.
KEY_PATTERN = re.compile(r"[A-Za-z0-9_/!.*'() &$=@;:+,?-]*")
BUCKET_PATTERN = re.compile(r"[A-Za-z0-9_!.*'() &$@=;:+,?-]+")
MAX_KEY_BYTES = 1024
GLOBAL_FILE_SIZE_LIMIT = 50 * 1024 * 1024  # Supabase's default upload limit; a bucket's limit can only lower it
SIDECAR_SUFFIX = "#meta.json"


class StorageError(Exception):
    """An answer in Storage's error shape: HTTP 400 unless told otherwise, the real status in the body."""

    def __init__(self, status: str, code: str, error: str, message: str, http_status: int = 400) -> None:
        super().__init__(message)
        self.status, self.code, self.error, self.message, self.http_status = status, code, error, message, http_status

    def response(self) -> Response:
        body = {"statusCode": self.status, "code": self.code, "error": self.error, "message": self.message}
        return Response.json(self.http_status, body)


def invalid_key(key: str) -> StorageError:
    return StorageError("400", "InvalidKey", "InvalidKey", f"Invalid key: {key}")


def bucket_not_found() -> StorageError:
    return StorageError("404", "NoSuchBucket", "Bucket not found", "Bucket not found")


def object_not_found() -> StorageError:
    return StorageError("404", "NoSuchKey", "not_found", "Object not found")


def access_denied() -> StorageError:
    return StorageError("403", "AccessDenied", "Unauthorized", "new row violates row-level security policy")


@dataclass(frozen=True)
class Bucket:
    id: str
    file_size_limit: int | None
    allowed_mime_types: list[str] | None


@dataclass(frozen=True)
class Upload:
    data: bytes
    content_type: str


class Storage:
    def __init__(self, backend: Backend, root: Path) -> None:
        self.backend = backend
        self.root = root
        # One process serves every request, so one lock makes "exists? then write" atomic and
        # keeps readers from seeing an object's bytes and sidecar from two different uploads.
        self.lock = threading.Lock()

    def handle(self, request: Request) -> Response:
        try:
            return self.route(request)
        except StorageError as error:
            return error.response()

    def route(self, request: Request) -> Response:
        segments = request.path.split("/")
        if segments[:2] == ["object", "sign"] and len(segments) == 3 and request.method == "POST":
            return self.sign_many(request, segments[2])
        if segments[:2] == ["object", "sign"] and len(segments) >= 4:
            bucket, key = segments[2], "/".join(segments[3:])
            if request.method == "POST":
                return self.sign(request, bucket, key)
            if request.method in ("GET", "HEAD"):
                return self.signed_download(request, bucket, key)
        if segments[0] == "object" and len(segments) >= 3 and request.method == "POST":
            return self.upload(request, segments[1], "/".join(segments[2:]))
        if segments[:2] == ["object", "authenticated"] and len(segments) >= 4 and request.method == "GET":
            return self.authenticated_download(request, segments[2], "/".join(segments[3:]))
        if segments[0] == "object" and len(segments) >= 3 and request.method == "GET":
            return self.download(request, segments[1], "/".join(segments[2:]))
        if segments[0] == "object" and len(segments) >= 3 and request.method == "DELETE":
            return self.delete(request, segments[1], "/".join(segments[2:]))
        message = f"Route {request.method}:/storage/v1/{request.path} not found"
        return Response.json(404, {"statusCode": 404, "error": "Not Found", "message": message})

    # --- the operations -------------------------------------------------------------------

    def upload(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        key = decode_key(raw_key)
        self.require_writer(request)
        bucket = self.bucket(unquote(raw_bucket))
        upload = parse_upload(request)
        check_limits(bucket, upload)
        overwrite = (request.headers.get("x-upsert") or "").lower() == "true"
        object_id = self.store(bucket, key, upload, overwrite)
        return Response.json(200, {"Key": f"{bucket.id}/{key}", "Id": object_id})

    def download(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        key = decode_key(raw_key)
        self.require_writer(request)  # no storage policies here: only service_role may read objects
        data, meta = self.load(self.bucket(unquote(raw_bucket)), key)
        return Response(200, data, {"Content-Type": meta["content_type"], "ETag": f'"{meta["etag"]}"'})

    def authenticated_download(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        key = decode_key(raw_key)
        role = self.role(request)
        bucket = self.bucket(unquote(raw_bucket))
        if role != WRITER_ROLE:
            raise object_not_found()  # row-level security hides every object: no storage policies here
        data, meta = self.load(bucket, key)
        headers = {"Content-Type": meta["content_type"], "ETag": f'"{meta["etag"]}"',
                   "Last-Modified": meta["last_modified"]}  # fmt: skip
        return Response(200, data, headers)

    def delete(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        key = decode_key(raw_key)
        self.require_writer(request)
        data_path, meta_path = self.paths(self.bucket(unquote(raw_bucket)), key)
        with self.lock:
            if read_meta(meta_path) is None:
                raise object_not_found()
            meta_path.unlink()  # the sidecar first: an object exists only while its sidecar does
            data_path.unlink(missing_ok=True)
        return Response.json(200, {"message": "Successfully deleted"})

    def sign(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        key = decode_key(raw_key)
        self.require_writer(request)  # no storage policies here: only service_role may read objects
        bucket = self.bucket(unquote(raw_bucket))
        try:
            expires_in = json.loads(request.body or b"{}").get("expiresIn")
        except (ValueError, AttributeError):
            expires_in = None
        if not isinstance(expires_in, int) or isinstance(expires_in, bool) or expires_in < 1:
            raise StorageError("400", "InvalidRequest", "Bad Request", "body/expiresIn must be >= 1")
        self.load(bucket, key)  # 404 for an object that is not there
        issued = int(time.time())
        url = f"{bucket.id}/{key}"
        token = jwt.encode({"url": url, "iat": issued, "exp": issued + expires_in}, self.backend.jwt_secret)
        return Response.json(200, {"signedURL": f"/object/sign/{quote(url)}?token={token}"})

    def sign_many(self, request: Request, raw_bucket: str) -> Response:
        self.require_writer(request)
        bucket = self.bucket(unquote(raw_bucket))
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = None
        expires_in = body.get("expiresIn") if isinstance(body, dict) else None
        paths = body.get("paths") if isinstance(body, dict) else None
        if not isinstance(expires_in, int) or isinstance(expires_in, bool) or expires_in < 1:
            raise StorageError("400", "InvalidRequest", "Bad Request", "body/expiresIn must be >= 1")
        if not isinstance(paths, list) or not paths or not all(isinstance(path, str) for path in paths):
            raise StorageError("400", "InvalidRequest", "Bad Request", "body/paths must NOT have fewer than 1 items")
        issued = int(time.time())
        items = []
        for path in paths:
            try:
                self.load(bucket, decode_key(path))
            except StorageError:
                items.append({"path": path, "signedURL": None,
                              "error": "Either the object does not exist or you do not have access to it"})  # fmt: skip
                continue
            url = f"{bucket.id}/{path}"
            token = jwt.encode({"url": url, "iat": issued, "exp": issued + expires_in}, self.backend.jwt_secret)
            items.append({"path": path, "signedURL": f"/object/sign/{quote(url)}?token={token}", "error": None})
        return Response.json(200, items)

    def signed_download(self, request: Request, raw_bucket: str, raw_key: str) -> Response:
        query = dict(request.query)
        try:
            payload = jwt.decode(query.get("token", ""), self.backend.jwt_secret, algorithms=["HS256"])
        except jwt.InvalidTokenError as error:
            message = "jwt expired" if isinstance(error, jwt.ExpiredSignatureError) else str(error)
            raise StorageError("400", "InvalidJWT", "Invalid JWT", message) from error
        if payload.get("url") != f"{unquote(raw_bucket)}/{decode_key(raw_key)}":
            raise StorageError("400", "InvalidSignature", "InvalidSignature", "The url do not match the signature")
        bucket = self.bucket(unquote(raw_bucket))
        data, meta = self.load(bucket, decode_key(raw_key))
        content_type = "text/plain" if "text/html" in meta["content_type"] else meta["content_type"]
        headers = {
            "Content-Type": content_type,
            "ETag": f'"{meta["etag"]}"',
            "Last-Modified": meta["last_modified"],
            "Expires": datetime.fromtimestamp(payload["exp"], UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
            # Storage answers object downloads to any origin (the fax viewer fetches a signed URL
            # from the screen's origin: PDF.js, and a picture drawn into a canvas, need it).
            "Access-Control-Allow-Origin": "*",
        }
        if "download" in query:
            name = quote(query["download"], safe="!~*'()")  # as encodeURIComponent
            headers["Content-Disposition"] = f"attachment; filename={name}; filename*=UTF-8''{name};" if name else (
                "attachment;")  # fmt: skip
        return Response(200, data, headers)

    # --- checks -------------------------------------------------------------------------------

    def role(self, request: Request) -> str:
        """The role of the request's JWT; 403 InvalidJWT when it has none that verifies."""
        try:
            claims = authenticate(request.headers, self.backend.jwt_secret)
        except AuthError as error:
            # Storage verifies with jose, whose word for a token that is not three parts is this; it
            # is what a secret key sent as Bearer gets (public reports of raw uploads, and the gateway
            # docstring: the gateway passes on an Authorization equal to apikey).
            message = "Invalid Compact JWS" if str(error).startswith("Expected 3 parts") else str(error)
            raise StorageError("403", "InvalidJWT", "Unauthorized", message) from error
        return str(claims["role"])

    def require_writer(self, request: Request) -> None:
        if self.role(request) != WRITER_ROLE:
            raise access_denied()

    def bucket(self, bucket_id: str) -> Bucket:
        # The id becomes a folder name: never let "." or ".." or a slash through.
        if not BUCKET_PATTERN.fullmatch(bucket_id) or bucket_id in (".", ".."):
            raise bucket_not_found()
        try:
            with self.backend.pool.connection() as conn, conn.transaction():
                conn.execute("set local role service_role")
                row = conn.execute(
                    "select id, file_size_limit, allowed_mime_types from storage.buckets where id = %s",
                    (bucket_id,),
                ).fetchone()
        except psycopg.Error as error:
            raise database_error(error) from error
        if row is None:
            raise bucket_not_found()
        return Bucket(*row)

    # --- files --------------------------------------------------------------------------------

    def paths(self, bucket: Bucket, key: str) -> tuple[Path, Path]:
        data_path = self.root / bucket.id / key
        return data_path, data_path.with_name(data_path.name + SIDECAR_SUFFIX)

    def store(self, bucket: Bucket, key: str, upload: Upload, overwrite: bool) -> str:
        data_path, meta_path = self.paths(bucket, key)
        try:
            data_path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as error:
            raise folder_clash(key) from error
        temporaries = [write_temp(data_path.parent, upload.data)]
        try:
            with self.lock:
                existing = read_meta(meta_path)
                if existing is not None and not overwrite:
                    raise StorageError("409", "KeyAlreadyExists", "Duplicate", "The resource already exists")
                if data_path.is_dir():
                    raise folder_clash(key)
                meta = {
                    "id": existing["id"] if existing else str(uuid.uuid4()),  # an overwrite keeps the object's id
                    "content_type": upload.content_type,
                    "size": len(upload.data),
                    "etag": uuid.uuid4().hex,
                    "last_modified": datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
                }
                temporaries.append(write_temp(meta_path.parent, json.dumps(meta).encode()))
                # Bytes first, sidecar last: an object exists once its sidecar does.
                os.replace(temporaries[0], data_path)
                os.replace(temporaries[1], meta_path)
                return meta["id"]
        finally:
            for temporary in temporaries:
                Path(temporary).unlink(missing_ok=True)

    def load(self, bucket: Bucket, key: str) -> tuple[bytes, dict[str, Any]]:
        data_path, meta_path = self.paths(bucket, key)
        with self.lock:
            meta = read_meta(meta_path)
            if meta is None or not data_path.is_file():
                raise object_not_found()
            return data_path.read_bytes(), meta


def folder_clash(key: str) -> StorageError:
    return StorageError(
        "500",
        "InternalError",
        "internal",
        f"The local Storage stand-in cannot hold both an object and a folder at {key!r}",
        http_status=500,
    )


def database_error(error: psycopg.Error) -> StorageError:
    if error.sqlstate is None or error.sqlstate.startswith(("08", "57")):
        # Supabase Storage answers 544 when its database does not answer in time.
        return StorageError("544", "DatabaseTimeout", "DatabaseTimeout", f"database unavailable: {error}", 544)
    return StorageError("500", "DatabaseError", "internal", f"database error: {error.sqlstate}", http_status=500)


def write_temp(folder: Path, data: bytes) -> str:
    # "#" cannot occur in a key, so a temporary file never shadows an object.
    handle, name = tempfile.mkstemp(dir=folder, prefix="#tmp-")
    with os.fdopen(handle, "wb") as file:
        file.write(data)
    return name


def read_meta(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def decode_key(raw_key: str) -> str:
    """The object key from the URL path, held to Supabase's key rule."""
    try:
        key = unquote(raw_key, errors="strict")
    except UnicodeDecodeError as error:
        raise invalid_key(raw_key) from error
    segments = key.split("/")
    if (
        not key
        or not KEY_PATTERN.fullmatch(key)
        or len(key.encode()) > MAX_KEY_BYTES
        # Empty, "." and ".." segments would leave the bucket's folder or alias another key.
        or any(segment in ("", ".", "..") for segment in segments)
    ):
        raise invalid_key(key)
    return key


def check_limits(bucket: Bucket, upload: Upload) -> None:
    limit = min(bucket.file_size_limit or GLOBAL_FILE_SIZE_LIMIT, GLOBAL_FILE_SIZE_LIMIT)
    if len(upload.data) > limit:
        raise StorageError("413", "EntityTooLarge", "Payload too large", "The object exceeded the maximum allowed size")
    if bucket.allowed_mime_types and not mime_allowed(upload.content_type, bucket.allowed_mime_types):
        raise StorageError(
            "415", "InvalidMimeType", "invalid_mime_type", f"mime type {upload.content_type} is not supported"
        )


def mime_allowed(content_type: str, allowed: list[str]) -> bool:
    base = content_type.split(";")[0].strip().lower()
    for pattern in allowed:
        pattern = pattern.strip().lower()
        if pattern == base or (pattern.endswith("/*") and base.startswith(pattern[:-1])):
            return True
    return False


# --- request bodies ---------------------------------------------------------------------------


def parse_upload(request: Request) -> Upload:
    content_type = request.headers.get("Content-Type") or "application/octet-stream"
    if content_type.lower().startswith("multipart/form-data"):
        raise StorageError("400", "InvalidRequest", "Bad Request", "This stand-in takes the object as a raw body")
    return Upload(request.body, content_type)
