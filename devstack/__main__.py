"""python -m devstack up | down | run -- COMMAND...

up    start the local stack in the background, with the Vault secrets stored (it processes
      faxes: python -m devstack.tools.send_faxes); its settings go to .devstack/env (source it);
      when one is already up, says so and prints its URLs again (exit 0)
down  stop what "up" started and delete its data; also stops any stack a killed command left;
      says which it stopped, or that none was up
run   start the stack, run COMMAND with the stack's settings in its environment, stop the stack;
      exits with COMMAND's status (130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP)
"""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg

from devstack import lifecycle, stack


def admin_screen_line(env: dict[str, str]) -> str:
    """Where the admin screen is, and its accounts (one per role; their passwords in the env file)."""
    accounts = ", ".join(env[f"DEVSTACK_{name}_EMAIL"] for name in stack.OPERATORS)
    return f"devstack: admin screen at {env['ADMIN_URL']} (sign in as {accounts}; passwords in {stack.ENV_FILE})"


def run(command: list[str]) -> int:
    with lifecycle.guarded(stack.stop_record):
        started = stack.start()
        child = None
        try:
            with lifecycle.signals_blocked():
                # Its own process group, so that a signal to us stops the command's whole tree first.
                child = subprocess.Popen(
                    command,
                    env={**os.environ, **started.env},
                    process_group=0,
                    preexec_fn=lifecycle.unblock_signals,
                )
            return child.wait()
        finally:
            if child is not None and child.poll() is None:
                lifecycle.stop_group(child.pid)
            stack.stop(started)
    return 1  # not reached: guarded() exits on a signal


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "up":
        if running := stack.up_stacks():
            # Already what `up` asks for: say so, with what the first `up` printed to use it.
            env = running[0].env
            print(f"devstack: a stack is already up at {env['SUPABASE_URL']}; settings in {stack.ENV_FILE}")
            print(admin_screen_line(env))
            print("devstack: to start afresh, run 'make down' first (or python -m devstack down)")
            return 0
        with lifecycle.guarded(stack.stop_record):
            started = stack.start()
            # As an operator does after a deploy: without them no worker is ever called.
            with psycopg.connect(started.env["DATABASE_URL"], autocommit=True) as conn:
                stack.store_vault_secrets(conn, started.env)
            stack.save_for_up(started)
        print(f"devstack: up at {started.env['SUPABASE_URL']}; settings in {stack.ENV_FILE}")
        env = started.env
        print(admin_screen_line(env))
        print(f"devstack: logs in {started.env['DEVSTACK_FOLDER']}/*.log (postgres.log, function_host.log, ...)")
        return 0
    if command == "down":
        stopped, reaped = stack.down()
        for gone in stopped:
            print(f"devstack: stopped the stack of 'make up' at {gone.env['SUPABASE_URL']} and deleted its data")
        if not stopped and not reaped:
            print("devstack: no stack was up; nothing to stop")
        return 0
    if command == "run":
        if rest[:1] == ["--"]:
            rest = rest[1:]
        if not rest:
            print("devstack: run needs a command", file=sys.stderr)
            return 2
        return run(rest)
    print(f"devstack: unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
