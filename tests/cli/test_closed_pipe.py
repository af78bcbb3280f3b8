"""A reader that closes the pipe early (`python -m lib.admin list | head -1`) gets no traceback:
the CLI runs in processes of its own, with a real pipe, many times, since whether the write or the
interpreter's last flush meets the closed pipe depends on timing."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.emails import failed_email

ROOT = Path(__file__).resolve().parents[2]
TRIES = 16


def test_a_pipe_into_head_ends_without_a_traceback(db, stack_env) -> None:
    for i in range(40):
        failed_email(db, f"piped {i}")
    command = f"{sys.executable} -m lib.admin list | head -1"

    def once(_: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", command], cwd=ROOT, env=stack_env, capture_output=True, text=True,
                              timeout=60)  # fmt: skip

    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(once, range(TRIES)))
    for run in runs:
        assert run.stderr == "" and run.returncode == 0, run.stderr
        assert run.stdout.count("\n") == 1, "head printed the list's first line"


def test_a_pipe_closed_before_anything_is_written_exits_as_sigpipe_does(db, stack_env) -> None:
    failed_email(db, "piped")

    def once(argv: tuple[str, ...]) -> tuple[int, str]:
        process = subprocess.Popen([sys.executable, "-m", "lib.admin", *argv], cwd=ROOT, env=stack_env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # long before the interpreter has started
        err = process.stderr.read()
        return process.wait(timeout=60), err

    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(once, [("list",), ("stats",)] * 4))
        helps = list(pool.map(once, [("--help",), ("list", "--help")] * 2))
    assert runs == [(141, "")] * len(runs)
    # argparse itself ignores a failed write of its help (and exits 0): no traceback either.
    assert {err for _, err in helps} == {""}
