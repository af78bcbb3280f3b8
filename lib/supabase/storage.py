"""Supabase Storage, the one client of its API for the worker's uploads, the admin screen's signed
URLs and the CLI's downloads; its error bodies are read here only.

The object goes up as a raw body (Storage's POST /object/{bucket}/{key} takes one, as
supabase-js sends it), not as storage3's form: the body is streamed in chunks under the
invocation's deadline, and there is no part header that a sender's text could reach.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx

from lib.budget import Deadline, DeadlinePassed
from lib.supabase.client import TIMEOUT
from lib.supabase.keys import api_headers

UPLOAD_CHUNK_BYTES = 64 * 1024
# A signed URL is asked for while an operator waits on the screen.
SIGN_TIMEOUT = httpx.Timeout(10.0, connect=5.0)


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


class Storage:
    """One bucket, as the server key. Uploads upsert: a repeated upload overwrites."""

    def __init__(self, http: httpx.Client, supabase_url: str, server_key: str, bucket: str) -> None:
        self._http = http
        self._api = f"{supabase_url.rstrip('/')}/storage/v1"
        self._headers = api_headers(server_key)
        self.bucket = bucket

    def _path(self, key: str) -> str:
        return f"{quote(self.bucket, safe='')}/{quote(key, safe='/')}"

    def upload(self, key: str, data: bytes, content_type: str, deadline: Deadline | None = None) -> None:
        """StorageError when Storage refuses or cannot be reached; DeadlinePassed when the
        invocation's time ran out first."""
        deadline = deadline or Deadline(float("inf"))  # the configured timeouts alone
        deadline.check("upload")
        headers = {
            **self._headers,
            "Content-Type": content_type,
            "Content-Length": str(len(data)),  # stated, so that the body is not sent chunked
            "Cache-Control": "max-age=3600",
            "x-upsert": "true",
        }
        try:
            response = self._http.post(
                f"{self._api}/object/{self._path(key)}",
                content=_chunks(data, deadline),
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

    def download(self, key: str) -> bytes:
        try:
            response = self._http.get(f"{self._api}/object/{self._path(key)}", headers=self._headers)
        except httpx.HTTPError as error:
            raise _unreachable("download", error) from error
        if not response.is_success:
            raise refusal("download", response)
        return response.content


def _chunks(data: bytes, deadline: Deadline) -> Iterator[bytes]:
    # A slow reader on the other end blocks each send for at most one (capped) write timeout;
    # between sends, the deadline is checked.
    for start in range(0, len(data), UPLOAD_CHUNK_BYTES):
        deadline.check("upload")
        yield data[start : start + UPLOAD_CHUNK_BYTES]


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
