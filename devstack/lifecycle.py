"""A local stack never outlives the command that started it.

Every stack is recorded in .devstack/stacks/<id>.json from its first moment (before its folder
holds anything) with its folder, the process groups it started and the command that owns it
(pid and start time, so a reused pid is not taken for the owner). Then:

- A command that starts stacks runs under `guarded()`: SIGINT, SIGTERM and SIGHUP become an
  exception that unwinds it (one line on stderr, no traceback, exit 128 + signal), a closed
  stdout (BrokenPipeError) ends it quietly, and whatever way it ends, every stack it still owns
  is stopped and its folder removed.
- SIGKILL cannot be caught: the next start, and `python -m devstack down`, find stacks whose
  owner is gone, stop them and say so in one line (`reap_stale`).

Stacks started by `python -m devstack up` belong to nobody until `down`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType

REGISTRY = Path(__file__).resolve().parent.parent / ".devstack" / "stacks"
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
UP = "up"  # the owner of a stack that `devstack up` leaves running


class Interrupted(BaseException):
    """A signal asked the command to stop; BaseException so that `except Exception` lets it pass."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.exit_code = 128 + signum


def _started_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else int(fields[19])


@dataclass
class Record:
    id: str
    owner_pid: int | None  # None: a stack of `devstack up`
    owner_started: int | None
    folder: str | None = None
    process_groups: dict[str, int] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return REGISTRY / f"{self.id}.json"

    def save(self) -> None:
        REGISTRY.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(self)))
        temporary.replace(self.path)

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)

    def owned_by_me(self) -> bool:
        return self.owner_pid == os.getpid()

    def stale(self) -> bool:
        if self.owner_pid is None:
            return False
        return _started_ticks(self.owner_pid) != self.owner_started


def new_record() -> Record:
    record = Record(uuid.uuid4().hex[:12], os.getpid(), _started_ticks(os.getpid()))
    record.save()
    return record


def records() -> list[Record]:
    found = []
    for path in sorted(REGISTRY.glob("*.json")) if REGISTRY.exists() else []:
        with contextlib.suppress(OSError, ValueError, TypeError):
            found.append(Record(**json.loads(path.read_text())))
    return found


def reap_stale(stop: Callable[[Record], None]) -> int:
    """Stop every stack whose owner died without stopping it; one line each. Returns how many."""
    reaped = 0
    for record in records():
        if record.stale():
            stop(record)
            record.forget()
            print(
                f"devstack: stopped a stack left behind by a command that was killed (pid {record.owner_pid}, "
                f"folder {record.folder or 'not yet made'})",
                file=sys.stderr,
            )
            reaped += 1
    return reaped


@contextlib.contextmanager
def guarded(stop: Callable[[Record], None]) -> Iterator[None]:
    """Run a command that starts stacks; see the module's docstring. Exits the process on a signal."""
    interrupted: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if interrupted:
            return  # already stopping: a second Ctrl-C must not cut the clean-up short
        interrupted.append(signum)
        for other in HANDLED:
            signal.signal(other, signal.SIG_IGN)
        with contextlib.suppress(OSError):
            print("devstack: stopping the local stack…", file=sys.stderr, flush=True)
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, on_signal) for signum in HANDLED}
    exit_code: int | None = None
    try:
        yield
        sys.stdout.flush()  # a reader that left early shows here at the latest, while we can still handle it
    except Interrupted as interruption:
        exit_code = interruption.exit_code
    except BrokenPipeError:
        # Whoever read our output has gone (`make demo | head`): nothing more can be said.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        exit_code = 128 + signal.SIGPIPE
    finally:
        for signum in HANDLED:
            signal.signal(signum, signal.SIG_IGN)
        for record in records():
            if record.owned_by_me():
                stop(record)
                record.forget()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if exit_code is not None:
        sys.exit(exit_code)


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP back while a process is started and its pid recorded: an
    interruption between the fork and the record would leave a process nobody knows of. Signals
    that arrive meanwhile are delivered, and handled, as the block ends. Start children with
    `preexec_fn=unblock_signals`: a blocked mask survives exec."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)


def unblock_signals() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    """Wait for `pid` to end (reaping it if it is our child); True when it did within the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            if _started_ticks(pid) is None:
                return True
        time.sleep(0.05)
    return False


def stop_group(pgid: int) -> None:
    """SIGTERM the process group, then SIGKILL whatever of it is left after a few seconds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if not wait_gone(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        wait_gone(pgid, 2.0)
    # Members of the group other than its leader (a function host's runtime instances) too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
