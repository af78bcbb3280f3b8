"""The CLI's launcher, as `make cli` installs it: run by the CLI's own virtualenv's Python (the one
`make cli` made from requirements-cli.txt), it points that virtualenv at this clone and writes
BINDIR/document-jobs-admin, which runs the CLI from any folder.

    python -m lib.admin.install --bin ~/.local/bin

The clone is put on the virtualenv's path with a .pth file, not on PYTHONPATH: nothing leaks into
the operator's shell. The launcher runs Python with -P, so that a folder of the operator's own
named lib/ (the current directory would come first on the path) cannot stand in for this one.
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
import sysconfig
from pathlib import Path

from lib.admin import PROGRAM

ROOT = Path(__file__).resolve().parents[2]
PTH = "document_jobs_admin.pth"
MARK = "# written by make cli (lib/admin/install.py)"


def launcher(python: Path) -> str:
    return f'#!/bin/sh\n{MARK}: the operator CLI of {ROOT}\nexec {shlex.quote(str(python))} -P -m lib.admin "$@"\n'


def install(bindir: Path) -> Path:
    if sys.prefix == sys.base_prefix:
        raise SystemExit("run this with the CLI's virtualenv's Python (make cli)")
    (Path(sysconfig.get_path("purelib")) / PTH).write_text(f"{ROOT}\n")
    # The virtualenv's own python (a link into it), not the interpreter it links to: that one
    # would not see the virtualenv's packages.
    python = Path(sys.prefix) / "bin" / "python"
    target = bindir / PROGRAM
    if target.exists() and MARK not in target.read_text(errors="replace"):
        raise SystemExit(f"{target} exists and is not this CLI's launcher: nothing written")
    bindir.mkdir(parents=True, exist_ok=True)
    target.write_text(launcher(python))
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m lib.admin.install", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bin", type=Path, required=True, help="the folder of the launcher, e.g. ~/.local/bin")
    target = install(parser.parse_args().bin.expanduser().absolute())
    print(f"installed {target}")
    folders = [
        Path(folder).expanduser().absolute() for folder in os.environ.get("PATH", "").split(os.pathsep) if folder
    ]
    if target.parent not in folders:
        print(f'{target.parent} is not on PATH: add it (e.g. in ~/.profile: export PATH="{target.parent}:$PATH")')
    print(f"then, with SUPABASE_URL, SUPABASE_SECRET_KEY and DOCUMENT_JOBS_OPERATOR set: {PROGRAM} --help")


if __name__ == "__main__":
    main()
