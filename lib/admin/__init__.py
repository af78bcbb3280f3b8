"""The admin CLI (lib/admin/cli.py): `document-jobs-admin`, the launcher `make cli` installs, or
python -m lib.admin. Run by an operator from a clone of the repository; never part of a deployed
function (vercel.json excludes lib/admin/ from every bundle)."""

from __future__ import annotations

import shlex

# The program's name as every command printed for pasting spells it (the bulk confirmation, the
# failure alert's Retry and History lines, the guides): the launcher `make cli` installs
# (lib/admin/install.py). The failure alert's SQL spells it too; tests/flow/test_alerts.py holds it to this.
PROGRAM = "document-jobs-admin"


def command_line(*args: str) -> str:
    """A command as an operator pastes it into a shell."""
    return shlex.join([PROGRAM, *args])
