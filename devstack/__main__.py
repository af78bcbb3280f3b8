"""python -m devstack up | down | run -- COMMAND...

up    start the local stack in the background; its settings go to .devstack/env (source it)
down  stop what "up" started and delete its data
run   start the stack, run COMMAND with the stack's settings in its environment, stop the stack;
      exits with COMMAND's status
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from devstack import stack


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "up":
        if stack.load():
            print("devstack: already up; run 'python -m devstack down' first", file=sys.stderr)
            return 1
        started = stack.start()
        stack.save_for_up(started)
        print(f"devstack: up at {started.env['SUPABASE_URL']}; settings in {stack.ENV_FILE}")
        return 0
    if command == "down":
        running = stack.load()
        if running:
            stack.stop(running)
            stack.forget()
        return 0
    if command == "run":
        if rest[:1] == ["--"]:
            rest = rest[1:]
        if not rest:
            print("devstack: run needs a command", file=sys.stderr)
            return 2
        # A CI timeout or Ctrl-C must still stop the cluster: turn SIGTERM into an exception.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        started = stack.start()
        try:
            return subprocess.run(rest, env={**os.environ, **started.env}).returncode
        finally:
            stack.stop(started)
    print(f"devstack: unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
