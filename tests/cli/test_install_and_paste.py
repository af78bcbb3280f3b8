"""The CLI where an operator is: `make cli` installs it alone (requirements-cli.txt, into a
virtualenv of its own, without the network: pip --no-index from wheels of the packages installed
here, tests/support/wheelhouse.py), and every command the product prints for pasting runs, as
printed, from a folder outside the repository: the failure alert's Retry and History lines, the
bulk dry run's confirmation, the live-job refusal's cancel, and the guides' commands.

The folder it runs from holds a lib/ package of its own, which must not stand in for the CLI's
(the launcher runs python -P). The shell's PATH has the launcher's folder and the system's, not
.venv: a module the CLI imports that requirements-cli.txt does not name fails here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from devstack import cluster
from lib.admin import PROGRAM
from lib.admin import cli as admin_cli
from lib.admin import operators as operators_cli
from lib.errors import Refusal
from tests.support.database import cron_paused, reset
from tests.support.emails import failed_email, stored_job
from tests.support.vault import store_secrets
from tests.support.wheelhouse import wheelhouse

pytestmark = pytest.mark.slow  # builds a virtualenv and installs 30-odd wheels: about half a minute

ROOT = cluster.ROOT
GUIDES = ("README.md", "docs/DEPLOY.md")
# Guide commands that only read (or count: a dry run) are run as written; the others (they change
# the project, ask for a password, or need a bulk action counted a moment before) are parsed by the
# CLI's own parser, which refuses an unknown command, flag or value as the launcher would.
READS = {"list", "show", "stats", "health", "download", "retention", "--help", "-h"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The launcher's folder, after `make cli` into a temporary virtualenv."""
    root = tmp_path_factory.mktemp("cli-install")
    wheels = wheelhouse(ROOT / "requirements-cli.txt", root / "wheels")
    assert wheels and not any(w.name.startswith(("psycopg", "pytest", "playwright")) for w in wheels)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "VIRTUAL_ENV", "PYTHON"))}
    result = subprocess.run(
        ["make", "--no-print-directory", "cli", f"CLI_VENV={root / 'venv'}", f"BINDIR={root / 'bin'}",
         f"CLI_PIP_OPTIONS=--no-index --find-links {root / 'wheels'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"installed {root / 'bin' / PROGRAM}" in result.stdout
    yield root / "bin"


@pytest.fixture
def shell(installed: Path, stack_env: dict[str, str], tmp_path: Path, db):
    """Runs a line as an operator's shell would, in a folder outside the repository."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "lib").mkdir(parents=True)
    (elsewhere / "lib" / "__init__.py").write_text("raise SystemExit('the folder lib/ was imported')\n")
    assert not elsewhere.is_relative_to(ROOT)
    operator = stack_env["DEVSTACK_OPERATOR_EMAIL"]
    env = {
        "PATH": f"{installed}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "SUPABASE_URL": stack_env["SUPABASE_URL"],
        "SUPABASE_SECRET_KEY": stack_env["SUPABASE_SECRET_KEY"],
        "DOCUMENT_JOBS_OPERATOR": operator,
        "RESEND_API_KEY": stack_env["RESEND_API_KEY"],
        "RESEND_API_URL": stack_env["RESEND_API_URL"],
    }
    ran: list[str] = []

    def run(line: str) -> subprocess.CompletedProcess[str]:
        ran.append(line)
        return subprocess.run(["sh", "-c", line], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)

    run.ran = ran  # type: ignore[attr-defined]
    run.operator = operator  # type: ignore[attr-defined]
    return run


def test_the_alerts_retry_and_history_lines_run_as_printed(shell, admin, db) -> None:
    job_id, _ = failed_email(db, "alerted", "resend_not_found")
    alert = admin.execute(
        "select document_jobs_internal.job_failed_alert(j) as a from document_jobs j where j.id = %s", (job_id,)
    ).fetchone()["a"]
    assert alert["history_command"] in alert["text"] and alert["retry_command"] in alert["text"]

    history = shell(alert["history_command"])
    assert (history.returncode, history.stderr) == (0, ""), history.stderr
    assert job_id in history.stdout and "attempts (" in history.stdout
    retried = shell(alert["retry_command"])
    assert (retried.returncode, retried.stderr) == (0, ""), retried.stderr
    assert "a worker was started for it; recorded in the audit as" in retried.stdout
    assert db.execute("select status from document_jobs where id = %s", (job_id,)).fetchone()["status"] == "queued"
    print("ran:", *shell.ran, sep="\n  ")


def test_the_bulk_confirmation_and_the_live_jobs_cancel_run_as_printed(shell, db) -> None:
    store_secrets(db)
    counted = {failed_email(db, f"bulk {i}", "resend_unauthorized")[0] for i in range(2)}
    dry_run = shell(f"{PROGRAM} retry --error-code resend_unauthorized --dry-run --reason 'key rotated'")
    assert dry_run.returncode == 0, dry_run.stderr
    confirm = dry_run.stdout.splitlines()[-1].strip()
    assert confirm.startswith(f"{PROGRAM} confirm ")
    confirmed = shell(confirm)
    assert (confirmed.returncode, confirmed.stderr) == (0, ""), confirmed.stderr
    assert confirmed.stdout.startswith("retried 2 of 2 jobs")
    rows = db.execute("select status from document_jobs where id = any(%s::uuid[])", (list(counted),)).fetchall()
    assert {row["status"] for row in rows} == {"queued"}

    failed, email_id = failed_email(db, "a live one beside it")
    live = db.execute("select job_id from enqueue_document_job('fetch_email', %s)", (email_id,)).fetchone()["job_id"]
    refused = shell(f"{PROGRAM} retry {failed}")
    assert refused.returncode == 1
    [hint] = re.findall(rf"\(({PROGRAM} cancel [^)]*)\)", refused.stderr)
    # Pasted as printed, its placeholder is refused, not recorded as the reason; with the operator's words it runs.
    assert hint.endswith(" --reason WHY")
    unchanged = shell(hint)
    assert (unchanged.returncode, "reason_placeholder" in shell(f"{hint} --json").stderr) == (2, True), unchanged.stderr
    assert db.execute("select status from document_jobs where id = %s", (live,)).fetchone()["status"] == "queued"
    cancelled = shell(hint.removesuffix("WHY") + "'sent twice'")
    assert (cancelled.returncode, cancelled.stderr) == (0, ""), cancelled.stderr
    assert db.execute("select status from document_jobs where id = %s", (live,)).fetchone()["status"] == "failed"
    print("ran:", *shell.ran, sep="\n  ")


def guide_commands() -> list[tuple[str, str]]:
    """Every command of the CLI the guides print: (guide, line), code blocks and inline code."""
    found = []
    for guide in GUIDES:
        text = (ROOT / guide).read_text()
        lines = re.findall(rf"^\s*(?:\$ |#   )?({PROGRAM}\b[^\n`]*)$", text, re.MULTILINE)
        lines += re.findall(rf"`({PROGRAM}\b[^`\n]*)`", text)
        found += [(guide, line.strip()) for line in dict.fromkeys(lines)]
    return found


def test_the_guides_print_the_cli_in_its_installed_form() -> None:
    commands = guide_commands()
    assert len(commands) >= 20, commands
    for guide in GUIDES:
        text = (ROOT / guide).read_text()
        assert "-m lib.admin" not in text, f"{guide}: the CLI as `make cli` installs it, {PROGRAM}"
    assert "make cli" in (ROOT / "docs" / "DEPLOY.md").read_text()


def test_every_guide_command_runs_or_parses_as_written(shell, db, admin, stack_env, tmp_path: Path) -> None:
    # health exits 0 only with no open outage and no missing secret: the every-minute health check
    # is off meanwhile (on a loaded machine it could open an outage for a slow kick), from a queue
    # with no outage open.
    with cron_paused(stack_env["DEVSTACK_ADMIN_DATABASE_URL"], "document-jobs-health"):
        reset(admin)
        store_secrets(db)
        run_every_guide_command(shell, db, stack_env, tmp_path)


def run_every_guide_command(shell, db, stack_env, tmp_path: Path) -> None:
    job_id, _ = stored_job(db, stack_env, b"%PDF-1.4 a fax from the guide")
    folders = [tmp_path / "folder", tmp_path / "tmp"]
    for folder in folders:
        folder.mkdir()
    substitutes = {
        r"<job id[^>]*>": job_id,
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b": job_id,  # a sample's job
        r"<bulk action id>": "00000000-0000-0000-0000-000000000000",
        r"-o /tmp(?=\s|$)": f"-o {folders[1]}",
        r"<folder>": str(folders[0]),
        r"you@example\.com": shell.operator,
    }
    checked, parsed = [], []
    for guide, line in guide_commands():
        for pattern, value in substitutes.items():
            line = re.sub(pattern, value, line)
        if "<" in line or "..." in line:  # a placeholder the guide explains in words
            continue
        words = shlex.split(line, comments=True)
        assert words[0] == PROGRAM, (guide, line)
        args = [word for word in words[1:] if word != "[--dry-run]"]
        if not args:  # the program's name in a sentence
            continue
        reads = args[0] in READS and "--set" not in args
        dry = ("--dry-run" in args and args[0] in ("retry", "cancel", "purge")) or args[:2] == ["operators", "list"]
        if reads or dry:
            result = shell(shlex.join([PROGRAM, *args]))
            assert result.returncode == 0, (guide, line, result.stderr)
        else:
            parse(args)
            parsed.append(shlex.join([PROGRAM, *args]))
        checked.append(line)
    assert len(checked) >= 15, checked
    print("ran:", *shell.ran, "parsed:", *parsed, sep="\n  ")


def parse(args: list[str]) -> None:
    """The CLI's own parsers, as main() uses them: an unknown command, flag or value is refused."""
    try:
        if args[0] == "operators":
            operators_cli.parser().parse_args(args[1:])
        else:
            admin_cli.parser().parse_args(args)
    except Refusal as refusal:
        raise AssertionError(f"{shlex.join(args)}: {refusal.message}") from None
    except SystemExit as exit:
        assert exit.code == 0, shlex.join(args)
