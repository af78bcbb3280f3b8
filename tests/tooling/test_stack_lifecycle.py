"""Whatever ends a command that started a local stack stops every process of that stack and
removes its folder: normal exit, Ctrl-C during start-up or mid-run, SIGTERM, SIGHUP, a reader
that closes the pipe; and after a SIGKILL, the next start or `down` clears what was left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from devstack import lifecycle

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]  # each case starts a whole stack of its own

RUN_SLEEP = [sys.executable, "-m", "devstack", "run", "--", "sleep", "600"]
DEMO = [sys.executable, "-m", "devstack.tools.demo", "--emails", "2", "--seed", "3"]


def start(command: list[str], **options: Any) -> subprocess.Popen[str]:
    # A session of its own: only the signals the test sends reach it.
    return subprocess.Popen(command, text=True, start_new_session=True, **options)


def record_of(process: subprocess.Popen[str], ready, timeout_s: float = 120) -> lifecycle.Record:
    """The stack record `process` owns, once `ready(record)` holds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for record in lifecycle.records():
            if record.owner_pid == process.pid and ready(record):
                return record
        assert process.poll() is None, f"exited early with {process.returncode}"
        time.sleep(0.02)
    raise AssertionError("the stack did not reach the expected state")


def starting(record: lifecycle.Record) -> bool:
    return record.folder is not None and "function_host" not in record.process_groups


def running(record: lifecycle.Record) -> bool:
    return "function_host" in record.process_groups


def postmaster(record: lifecycle.Record) -> int | None:
    pid_file = Path(record.folder or "/nonexistent") / "data" / "postmaster.pid"
    try:
        return int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def processes_in_groups(groups: set[int]) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) in groups:
            found.append(int(stat.parent.name))
    return found


def assert_nothing_left(record: lifecycle.Record, server_pid: int | None) -> None:
    groups = set(record.process_groups.values())
    assert processes_in_groups(groups) == [], "processes of the stack are still running"
    if server_pid:
        assert lifecycle.wait_gone(server_pid, 10), "PostgreSQL is still running"
    assert record.folder and not Path(record.folder).exists(), "the stack's folder is still there"
    assert not record.path.exists(), "the stack's record is still there"


@pytest.mark.parametrize(
    ("when", "signum"),
    [("starting", signal.SIGINT), ("running", signal.SIGINT), ("running", signal.SIGTERM), ("running", signal.SIGHUP)],
)
def test_a_signal_stops_the_stack_it_started(stack_env, when, signum) -> None:
    process = start(RUN_SLEEP, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    record = record_of(process, starting if when == "starting" else running)
    server_pid = postmaster(record)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum
    assert stderr.count("stopping the local stack") == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert_nothing_left(record, server_pid)


def test_a_command_that_ends_normally_leaves_nothing(stack_env) -> None:
    process = start([sys.executable, "-m", "devstack", "run", "--", "sh", "-c", "sleep 2"])
    record = record_of(process, running)
    server_pid = postmaster(record)
    assert process.wait(timeout=60) == 0
    assert_nothing_left(record, server_pid)


def test_a_reader_that_closes_the_pipe_mid_demo_leaves_nothing(stack_env) -> None:
    process = start(DEMO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    record = record_of(process, running)
    server_pid = postmaster(record)
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()  # as `make demo | head -1` does
    process.wait(timeout=120)
    stderr = process.stderr.read() if process.stderr else ""
    assert "Traceback" not in stderr, stderr
    assert_nothing_left(record, server_pid)


@pytest.mark.parametrize("cleaner", [["down"], ["run", "--", "true"]])
def test_after_a_sigkill_the_next_start_or_down_clears_the_leftovers(stack_env, tmp_path, cleaner) -> None:
    child_pid = tmp_path / "child.pid"
    command = f"echo $$ > {child_pid}; exec sleep 600"
    process = start([sys.executable, "-m", "devstack", "run", "--", "sh", "-c", command])
    record = record_of(process, lambda record: running(record) and child_pid.exists())
    server_pid = postmaster(record)
    process.kill()
    process.wait()
    os.kill(int(child_pid.read_text()), signal.SIGKILL)  # the command's own child is not the stack's
    assert processes_in_groups(set(record.process_groups.values())), "SIGKILL should have left the stack running"
    cleaned = subprocess.run([sys.executable, "-m", "devstack", *cleaner], capture_output=True, text=True, timeout=180)
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stderr.count("stopped a stack left behind") == 1, cleaned.stderr
    assert_nothing_left(record, server_pid)
