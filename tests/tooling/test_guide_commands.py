"""Every `vercel ...` and `supabase ...` command that the guides (docs/DEPLOY.md, the README and
the others of tests/support/documents.py) give (in code blocks and in inline code) works with the
CLIs pinned in devstack/package.json: each subcommand exists, and takes the flags and the number
of arguments written, as its own `--help` says. Placeholders such as <ref> are arguments. The
CLIs run with their telemetry off and without the network: `--help` needs none (Vercel's CLI
would look up its user after printing the help; a configuration folder of its own, with a user
id, keeps it from asking)."""

from __future__ import annotations

import collections
import json
import os
import re
import shlex
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support import documents

ROOT = Path(__file__).resolve().parents[2]
GUIDES = documents.GUIDES
BIN = ROOT / "devstack" / "node_modules" / ".bin"
PINNED = json.loads((ROOT / "devstack" / "package.json").read_text())["devDependencies"]
CLIS = ("vercel", "supabase")

# A command begins with the CLI's name (or `npx <cli>@<version>`) and a space.
START = re.compile(r"^(?:npx\s+)?(vercel|supabase)(@[\w.-]+)?(?=\s|$)")
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
# A flag in a help text's line: "-y,  --yes", "--timeout <TIME>", "--password, -p string".
FLAG_LINE = re.compile(
    r"^\s*((?:-{1,2}[A-Za-z0-9][\w-]*,?\s+)*-{1,2}[A-Za-z0-9][\w-]*)(?:\s(<[^>]*>|[a-z][A-Za-z]*))?(?=\s{2,}|$)"
)
FLAG_NAME = re.compile(r"-{1,2}[A-Za-z0-9][\w-]*")


@dataclass(frozen=True)
class Written:
    where: str
    cli: str
    version: str | None
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join([self.cli, *self.words])}"


def _placeholders_as_words(text: str) -> str:
    """`<deployment url>` is one argument: no space or shell character inside it."""
    return PLACEHOLDER.sub(lambda m: "<" + re.sub(r"[^\w.-]+", "_", m.group(0)[1:-1]) + ">", text)


def _commands_in(line: str, where: str) -> list[Written]:
    lexer = shlex.shlex(_placeholders_as_words(line), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words, segments = [], []
    for token in lexer:
        if token and set(token) <= set(";&|()"):
            segments.append(words)
            words = []
        else:
            words.append(token)
    segments.append(words)
    found = []
    for segment in segments:
        if segment[:1] == ["npx"]:
            segment = segment[1:]
        head = START.match(" ".join(segment[:1]))
        if head:
            found.append(Written(where, head.group(1), (head.group(2) or "@")[1:] or None, tuple(segment[1:])))
    return found


def written_commands() -> list[Written]:
    found: list[Written] = []
    for name in GUIDES:
        text = (ROOT / name).read_text()
        prose = []
        in_block = False
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            if in_block:
                if START.search(line.strip()) or re.search(r"(?:^|[;&|]\s*)(?:npx\s+)?(?:vercel|supabase)\s", line):
                    found += _commands_in(line.strip(), f"{name}:{number}")
            else:
                prose.append((number, line))
        # Inline code, which may wrap across lines.
        joined = "\n".join(line for _, line in prose)
        starts = [0]
        for _, line in prose:
            starts.append(starts[-1] + len(line) + 1)
        for span in re.finditer(r"`([^`]+)`", joined):
            code = " ".join(span.group(1).split())
            if START.match(code) and " " in code:
                number = prose[next(i for i, s in enumerate(starts) if s > span.start()) - 1][0]
                found += _commands_in(code, f"{name}:{number}")
    return found


# --- the pinned CLIs' help --------------------------------------------------------------------


def _vercel_config() -> str:
    """A global configuration folder for Vercel's CLI: telemetry off (`vercel telemetry disable`)
    and a user id, so that it never asks Vercel's API who the user is. One per call: a command
    that fails may empty the folder's auth.json."""
    folder = tempfile.mkdtemp(prefix="vercel-config-", dir=_CONFIGS.name)
    (Path(folder) / "config.json").write_text(json.dumps({"telemetry": {"enabled": False}}))
    (Path(folder) / "auth.json").write_text(json.dumps({"userId": "offline"}))
    return folder


_CONFIGS = tempfile.TemporaryDirectory(prefix="guide-commands-")


@dataclass
class Help:
    status: int
    text: str
    usage: str  # the usage line without the CLI's name: "env add name [environment] [options]"
    flags: dict[str, bool] = field(default_factory=dict)  # name -> takes a value
    listed: set[str] = field(default_factory=set)  # subcommands the help lists


_HELP: dict[tuple[str, tuple[str, ...]], Help] = {}
_HELP_LOCKS: dict[tuple[str, tuple[str, ...]], threading.Lock] = collections.defaultdict(threading.Lock)


def help_of(cli: str, path: tuple[str, ...]) -> Help:
    """`<cli> <path> --help`, once per subcommand in a test run (threads asking for the same one wait)."""
    key = (cli, path)
    with _HELP_LOCKS[key]:
        if key not in _HELP:
            _HELP[key] = _read_help(cli, path)
        return _HELP[key]


def _read_help(cli: str, path: tuple[str, ...], options: tuple[str, ...] = ()) -> Help:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/nonexistent"),
        "SUPABASE_TELEMETRY_DISABLED": "1",
        "VERCEL_TELEMETRY_DISABLED": "1",
        "NO_UPDATE_NOTIFIER": "1",
        "NO_COLOR": "1",
    }
    argv = [str(BIN / cli), *path, "--help", *options]
    if cli == "vercel":
        argv += ["--global-config", _vercel_config()]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), timeout=60)
    text = done.stdout + done.stderr
    if cli == "vercel":
        usage = next((line.split("▲", 1)[1].strip() for line in text.splitlines() if "▲ vercel" in line), "")
    else:
        lines = text.splitlines()
        usage = next((lines[i + 1].strip() for i, line in enumerate(lines[:-1]) if line.strip() == "USAGE"), "")
    usage = usage.removeprefix(cli).strip()
    found = Help(done.returncode, text, usage)
    for line in text.splitlines():
        match = FLAG_LINE.match(line)
        if match:
            for name in FLAG_NAME.findall(match.group(1)):
                found.flags[name] = match.group(2) is not None
    section = False
    for line in text.splitlines():
        if re.match(r"^\s*(Commands:|SUBCOMMANDS)\s*$", line):
            section = True
        elif section and re.match(r"^\s*(Options:|Global Options:|GLOBAL FLAGS|FLAGS|Examples:|EXAMPLES)\s*$", line):
            section = False
        elif section:
            entry = re.match(r"^\s+([a-z][\w-]*(?:\s*(?:\||,)\s*[a-z][\w-]*)*)\s", line + " ")
            if entry:
                found.listed |= set(re.split(r"\s*[|,]\s*", entry.group(1)))
    return found


def _slots(help: Help, depth: int) -> list[str]:
    """The usage's argument slots after the subcommand path ([options] and [flags] left out)."""
    tokens = re.findall(r"\[[^\]]*\]|<[^>]*>|\S+", help.usage)[depth:]
    return [t for t in tokens if t.strip("[]").lower() not in ("options", "flags")]


def _is_subcommand_slot(slot: str) -> bool:
    return slot.strip("[]<>").lower() in ("command", "subcommand", "cmd")


def problems_of(command: Written) -> list[str]:
    cli, path, problems = command.cli, (), []
    if command.version is not None and command.version != PINNED[cli]:
        problems.append(f"{cli}@{command.version} is not the pinned {PINNED[cli]}")
    words = list(command.words)
    positionals: list[str] = []
    flags: list[tuple[str, str | None]] = []
    # First the subcommand path: each word a subcommand whose help differs from its parent's.
    while words and re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):  # not a flag, a placeholder or a value
        parent = help_of(cli, path)
        if not parent.listed:
            break
        child = help_of(cli, (*path, words[0]))
        if child.status == 1 or child.usage == parent.usage or not child.usage:
            break
        path = (*path, words.pop(0))
    current = help_of(cli, path)
    while words:
        word = words.pop(0)
        if word.startswith("-") and word != "-":
            name, _, value = word.partition("=")
            flags.append((name, value or None))
            if name in current.flags and current.flags[name] and not value and words and not words[0].startswith("-"):
                words.pop(0)  # the flag's value
        else:
            positionals.append(word)
    for name, _ in flags:
        if name not in current.flags:
            problems.append(f"{shlex.join([cli, *path])} has no flag {name}")
    slots = _slots(current, len(path))
    if not path:
        if positionals:
            problems.append(f"{cli} has no subcommand {positionals[0]!r}")
    elif positionals and slots and _is_subcommand_slot(slots[0]) and positionals[0] not in current.listed:
        problems.append(f"{shlex.join([cli, *path])} has no subcommand {positionals[0]!r}")
    else:
        arguments = [s for s in slots if not _is_subcommand_slot(s)]
        required = [s for s in arguments if not s.startswith("[")]
        variadic = any("..." in s for s in arguments)
        if len(positionals) < len(required):
            problems.append(f"{shlex.join([cli, *path])} needs {' '.join(required)} (usage: {current.usage})")
        if not variadic and len(positionals) > len(arguments):
            problems.append(f"{shlex.join([cli, *path])} takes {len(arguments)} arguments, not "
                            f"{len(positionals)} (usage: {current.usage})")  # fmt: skip
    return problems


COMMANDS = written_commands()


@pytest.fixture(scope="module", autouse=True)
def _clis_installed() -> None:
    for cli in CLIS:
        if not (BIN / cli).exists():
            pytest.fail(f"{BIN / cli} is missing: npm ci --prefix devstack (make test does it)")


def test_the_guides_give_the_commands_a_deployer_needs() -> None:
    text = {" ".join([c.cli, *c.words]) for c in COMMANDS}
    for needed in ("supabase link --project-ref <ref>", "supabase db push", "vercel link", "vercel deploy --prod",
                   "vercel rollback <deployment-url-or-id>"):  # fmt: skip
        assert needed in text, needed


def test_every_vercel_and_supabase_command_of_the_guides_works_with_the_pinned_clis() -> None:
    # The help calls are cached per subcommand; independent commands are checked side by side.
    with ThreadPoolExecutor(4) as pool:
        found = dict(zip(COMMANDS, pool.map(problems_of, COMMANDS), strict=True))
    wrong = [f"{command}: {'; '.join(problems)}" for command, problems in found.items() if problems]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("vercel deploy --prod --made-up-flag", "has no flag --made-up-flag"),
        ("vercel rollback", "needs url|deploymentId"),
        ("vercel rollbak <deployment>", "has no subcommand 'rollbak'"),
        ("vercel env add NAME production extra", "takes 2 arguments, not 3"),
        ("supabase link --project-ref <ref> --pasword x", "has no flag --pasword"),
        ("supabase db pusj", "has no subcommand 'pusj'"),
        ("npx supabase@1.0.0 db push", "is not the pinned"),
    ],
)
def test_a_command_the_pinned_clis_do_not_take_is_caught(line: str, says: str) -> None:
    [command] = _commands_in(line, "example")
    assert any(says in problem for problem in problems_of(command)), problems_of(command)


def test_the_help_is_read_without_the_network() -> None:
    # Vercel's CLI, left to itself, asks its API who the user is after printing a help, and
    # retries for seconds when it cannot reach it. Its --api points it at a listener here: what the
    # help's configuration lets through is seen, not timed (a config with a token alone asks /v2/user).
    asked: list[str] = []

    class Api(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(403)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = f"http://127.0.0.1:{server.server_address[1]}"
        assert "--prod" in _read_help("vercel", ("deploy",), ("--api", api)).flags
    finally:
        server.shutdown()
    assert asked == []
