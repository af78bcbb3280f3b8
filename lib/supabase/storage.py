"""Supabase Storage, the one client of its API for the worker's uploads, the admin screen's signed
URLs and the CLI's downloads; its error bodies are read here only.

The object goes up as a raw body (Storage's POST /object/{bucket}/{key} takes one, as
supabase-js sends it), not as storage3's form: the body is streamed in chunks under the
invocation's deadline, and there is no part header that a sender's text could reach. A body can
be an iterator of chunks (the worker streams a download through): with its length stated, a body
that ends short or runs long fails as a request (httpx refuses to send it, and Storage never sees
a whole object); without, it goes chunked.

An upload never replaces an object unless its caller asks (`upsert`, for files derived again from
an original): without x-upsert Storage refuses a key that holds an object, 409 Duplicate in its
error shape (StorageError.duplicate), and an original once stored stays as it was stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Protocol
from urllib.parse import quote

import httpx

from lib.budget import Deadline, DeadlinePassed
from lib.supabase.client import TIMEOUT
from lib.supabase.keys import api_headers

UPLOAD_CHUNK_BYTES = 64 * 1024
# A signed URL is asked for while an operator waits on the screen.
SIGN_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
# Deleting an object found wrong after its upload: it may run just past the invocation's deadline
# (that is what it cleans up after), so it has a short limit of its own.
DELETE_TIMEOUT = httpx.Timeout(5.0, connect=2.0)


class Sink(Protocol):
    """Where a download goes, chunk by chunk (a file, or one that hashes what it is given)."""

    def write(self, chunk: bytes, /) -> object: ...


class Digest:
    """A Sink that keeps only the SHA-256 and the size of what it is given: an object read back to
    be compared with a download, never held whole."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes, /) -> int:
        self._digest.update(chunk)
        self.size += len(chunk)
        return len(chunk)

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()


class BodyLengthMismatch(ValueError):
    """An iterated body ended short of its stated length, or ran past it: the request was cut off
    before its end, so Storage never received a whole object."""


class StorageError(Exception):
    """A Storage call failed. `status` is the real status (Storage answers most errors with HTTP
    400 and puts the status in its body), `code`, `error` and `message` its words (each one short
    printable line, or None); `status` is None when Storage could not be reached, and then
    `network` names httpx's error and `timed_out` says whether it was a timeout."""

    def __init__(
        self,
        what: str,
        status: int | None,
        code: str | None = None,
        error: str | None = None,
        message: str | None = None,
        *,
        network: str | None = None,
        timed_out: bool = False,
    ) -> None:
        said = " ".join(part for part in (code, error or message) if part)
        super().__init__(f"{what}: Storage {status if status is not None else network} {said}".rstrip())
        self.status = status
        self.code = code
        self.error = error
        self.message = message
        self.network = network
        self.timed_out = timed_out

    @property
    def name(self) -> str | None:
        """The error's name: Storage's `error`, else the `message` (all the API gateway in front says)."""
        return self.error or self.message

    @property
    def duplicate(self) -> bool:
        """An upload without upsert to a key that holds an object: {"statusCode": "409", "code":
        "KeyAlreadyExists", "error": "Duplicate"} under HTTP 400 (older bodies: the status and the
        error only)."""
        return self.code == "KeyAlreadyExists" or (self.status == 409 and self.error == "Duplicate")


class Storage:
    """One bucket, as the server key. An upload replaces nothing unless told to (`upsert`)."""

    def __init__(self, http: httpx.Client, supabase_url: str, server_key: str, bucket: str) -> None:
        self._http = http
        self._api = f"{supabase_url.rstrip('/')}/storage/v1"
        self._headers = api_headers(server_key)
        self.bucket = bucket

    def _path(self, key: str) -> str:
        return f"{quote(self.bucket, safe='')}/{quote(key, safe='/')}"

    def upload(
        self,
        key: str,
        body: bytes | Iterable[bytes],
        content_type: str,
        deadline: Deadline | None = None,
        length: int | None = None,
        *,
        upsert: bool = False,
    ) -> None:
        """Stores `body` (bytes, or chunks of them: `length` then states their total, else they go
        chunked) at a key that holds no object, or with `upsert` at any key, replacing what is there.
        StorageError when Storage refuses (`duplicate`: the key holds an object) or cannot be
        reached; DeadlinePassed when the invocation's time ran out first; BodyLengthMismatch when
        the chunks do not add up to `length`; whatever iterating `body` raises, as it is."""
        deadline = deadline or Deadline(float("inf"))  # the configured timeouts alone
        deadline.check("upload")
        if isinstance(body, bytes):
            body, length = (body,), len(body)
        headers = {
            **self._headers,
            "Content-Type": content_type,
            "Cache-Control": "max-age=3600",
            "x-upsert": "true" if upsert else "false",
        }
        if length is not None:
            headers["Content-Length"] = str(length)  # stated, so that the body is not sent chunked
        try:
            response = self._http.post(
                f"{self._api}/object/{self._path(key)}",
                content=_chunks(body, deadline, length),
                headers=headers,
                timeout=deadline.timeout(TIMEOUT.read or 20.0, connect=TIMEOUT.connect or 5.0),
            )
        except httpx.TimeoutException as error:
            if deadline.remaining() <= 0:
                raise DeadlinePassed("upload: the invocation's time budget ran out") from error
            raise _unreachable("upload", error) from error
        except httpx.HTTPError as error:
            raise _unreachable("upload", error) from error
        if not response.is_success:
            raise refusal("upload", response)

    def delete(self, key: str) -> None:
        """Removes the object (DELETE /object/{bucket}/{key}); one that is not there counts as
        removed. StorageError otherwise."""
        try:
            response = self._http.delete(
                f"{self._api}/object/{self._path(key)}", headers=self._headers, timeout=DELETE_TIMEOUT
            )
        except httpx.HTTPError as error:
            raise _unreachable("delete", error) from error
        if not response.is_success:
            refused = refusal("delete", response)
            if refused.status != 404:
                raise refused

    def signed_url(self, key: str, expires_in: int, download_as: str) -> str:
        """A URL that downloads the object as `download_as`, valid for `expires_in` seconds."""
        try:
            response = self._http.post(
                f"{self._api}/object/sign/{self._path(key)}",
                json={"expiresIn": expires_in},
                headers=self._headers,
                timeout=SIGN_TIMEOUT,
            )
        except httpx.HTTPError as error:
            raise _unreachable("sign", error) from error
        if not response.is_success:
            raise refusal("sign", response)
        return f"{self._api}{response.json()['signedURL']}&download={quote(download_as, safe='')}"

    def signed_urls(self, keys: list[str], expires_in: int) -> dict[str, str]:
        """URLs that show the objects (no download name), valid for `expires_in` seconds, in one
        request (Storage's POST /object/sign/{bucket} with "paths"): {key: url}, leaving out an
        object that is not there."""
        if not keys:
            return {}
        try:
            response = self._http.post(
                f"{self._api}/object/sign/{quote(self.bucket, safe='')}",
                json={"expiresIn": expires_in, "paths": keys},
                headers=self._headers,
                timeout=SIGN_TIMEOUT,
            )
        except httpx.HTTPError as error:
            raise _unreachable("sign", error) from error
        if not response.is_success:
            raise refusal("sign", response)
        signed: dict[str, str] = {}
        for item in response.json():
            if isinstance(item, dict) and isinstance(item.get("signedURL"), str) and item.get("path") in keys:
                signed[item["path"]] = f"{self._api}{item['signedURL']}"
        return signed

    def download(self, key: str) -> bytes:
        # Storage's "Retrieve an object" (GET /object/authenticated/...; the bare /object/... route
        # is its deprecated alias).
        try:
            response = self._http.get(f"{self._api}/object/authenticated/{self._path(key)}", headers=self._headers)
        except httpx.HTTPError as error:
            raise _unreachable("download", error) from error
        if not response.is_success:
            raise refusal("download", response)
        return response.content

    def download_to(self, key: str, output: Sink, deadline: Deadline, max_bytes: int) -> int:
        """Streams the object into `output` in chunks (never whole in memory) under the
        invocation's deadline; answers how many bytes it wrote. StorageError when Storage refuses
        (a missing object: status 404) or cannot be reached, or the object runs past `max_bytes`
        (status 413); DeadlinePassed when the invocation's time ran out first."""
        deadline.check("download")
        written = 0
        try:
            with self._http.stream(
                "GET",
                f"{self._api}/object/authenticated/{self._path(key)}",
                headers=self._headers,
                timeout=deadline.timeout(TIMEOUT.read or 20.0, connect=TIMEOUT.connect or 5.0),
            ) as response:
                if not response.is_success:
                    response.read()
                    raise refusal("download", response)
                for chunk in response.iter_bytes(UPLOAD_CHUNK_BYTES):
                    deadline.check("download")
                    written += len(chunk)
                    if written > max_bytes:
                        raise StorageError("download", 413, message=f"the object is larger than {max_bytes} bytes")
                    output.write(chunk)
        except httpx.TimeoutException as error:
            if deadline.remaining() <= 0:
                raise DeadlinePassed("download: the invocation's time budget ran out") from error
            raise _unreachable("download", error) from error
        except httpx.HTTPError as error:
            raise _unreachable("download", error) from error
        return written


def _chunks(body: Iterable[bytes], deadline: Deadline, length: int | None) -> Iterator[bytes]:
    # A slow reader on the other end blocks each send for at most one (capped) write timeout;
    # between sends, the deadline is checked. A body that does not add up to its stated length
    # raises before its last byte would go: the request never ends, and the connection closes.
    sent = 0
    for piece in body:
        for start in range(0, len(piece), UPLOAD_CHUNK_BYTES):
            deadline.check("upload")
            chunk = piece[start : start + UPLOAD_CHUNK_BYTES]
            sent += len(chunk)
            if length is not None and sent > length:
                raise BodyLengthMismatch(f"upload: more than the {length} bytes stated")
            yield chunk
    if length is not None and sent != length:
        raise BodyLengthMismatch(f"upload: {sent} bytes, {length} stated")


def _unreachable(what: str, error: httpx.HTTPError) -> StorageError:
    return StorageError(what, None, network=type(error).__name__, timed_out=isinstance(error, httpx.TimeoutException))


def refusal(what: str, response: httpx.Response) -> StorageError:
    """Storage's refusal as storage3 reads it: {"statusCode": "409", "code": "KeyAlreadyExists",
    "error": "Duplicate", "message": ...} under HTTP 400 for most errors; the API gateway in front
    answers {"message": ...}, and a proxy anything at all."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return StorageError(what, response.status_code)
    status = str(body.get("statusCode", ""))

    def text(field: str) -> str | None:  # the server's text, as one short printable line
        value = body.get(field)
        if not isinstance(value, str):
            return None
        return "".join(c for c in value if c.isprintable())[:100] or None

    return StorageError(
        what,
        int(status) if status.isascii() and status.isdigit() else response.status_code,
        text("code"),
        text("error"),
        text("message"),
    )
