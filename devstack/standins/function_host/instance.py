"""One running copy of Vercel's Python runtime serving one function, and the log lines it tags."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from devstack.vercel_build import Bundle


def base_interpreter(runtime: str) -> str:
    """The interpreter a bundle's runtime names (python3.12), without this virtualenv's packages."""
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if runtime != here:
        raise RuntimeError(f"the build asks for {runtime}; this stack runs {here} (see .python-version)")
    return getattr(sys, "_base_executable", sys.executable)


@dataclass(eq=False)  # compared and hashed by identity: each is one process
class Instance:
    """One running copy of Vercel's Python runtime serving one function (a Lambda instance)."""

    bundle: Bundle
    process: subprocess.Popen[bytes] | None = None  # None while it starts
    ipc: socket.socket | None = None
    port: int = 0
    ready: threading.Event = field(default_factory=threading.Event)  # set once it serves, or is gone
    in_flight: int = 0  # requests routed to it and not finished (the host's lock guards it)
    peak: int = 0  # the most it served at once

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def gone(self) -> bool:
        """Started and ended (or never got going): it takes no more requests."""
        return self.ready.is_set() and not (self.alive and self.port)

    def kill(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()


@dataclass(frozen=True)
class FunctionLog:
    """One line a function wrote, with the request it belongs to, as Vercel's runtime tags it."""

    route: str
    pid: int
    invocation_id: str  # "0" for a line written outside any request (at import)
    request_id: int
    text: str
