"""The two kinds of "no" the code passes up: a Refusal, which a person or a caller is told as it is,
and a DatabaseError, a failed database call that each caller reads in its own terms (the worker
retries the job, the webhook answers 500, the screen and the CLI turn it into a Refusal)."""

from __future__ import annotations

from typing import Any


class Refusal(Exception):
    """What the caller is told instead of an answer: a stable `code`, a one-line `message`, and the
    HTTP `status` the functions answer it with. The CLI prints it and exits with the status its
    table gives the code (lib/admin/cli.py EXIT_STATUS); `details` go into its JSON only."""

    def __init__(self, code: str, message: str, status: int = 400, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details = details

    def body(self) -> dict[str, Any]:
        """The JSON error body: {"error": code, "message": ..., details...}."""
        return {"error": self.code, "message": self.message, **self.details}


class DatabaseError(Exception):
    """A database call failed. `code` is what PostgREST reported: the SQLSTATE (22023, 23505, ...),
    PostgREST's own code (PGRST202 for an unknown function), or the HTTP status when the answer
    had no error body; None when the database could not be reached (`unreachable`) or when what
    answered gave no code (the API gateway in front: "Invalid API key"). The message carries no
    secret: it is PostgREST's message, or only the name of the network error."""

    def __init__(
        self,
        what: str,
        message: str,
        *,
        code: str | None = None,
        hint: str | None = None,
        details: Any = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(f"{what}: {f'{code} ' if code else ''}{message}" + (f" ({hint})" if hint else ""))
        self.what = what
        self.message = message
        self.code = code
        self.hint = hint
        self.details = details
        self.unreachable = unreachable
