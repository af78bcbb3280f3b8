"""Every admin CLI command the guides give (`document-jobs-admin ...`, in code blocks and in
inline code) is one the CLI's own parser takes: the subcommand exists, and so do its flags and
their values. Placeholders such as <job id> stand for a value of their kind. The parser is the
one `main` runs (lib/admin/cli.py), so a renamed flag fails here until the guides follow."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import pytest

from lib.admin import operators
from lib.admin.cli import parser
from lib.errors import Refusal
from tests.support import documents

PROGRAM = "document-jobs-admin"
# What a placeholder stands for, by the words in it: ids are ids, a folder is a folder, a day a date.
PLACEHOLDERS = (
    (re.compile(r"bulk action id"), "3b1f0c2e-8d4a-4e7b-9c55-0a1b2c3d4e5f"),
    (re.compile(r"\bid\b"), "474a80d5-9346-40f0-a111-be2db8221dfe"),
    (re.compile(r"folder"), "."),
    (re.compile(r"\b(?:day|date)\b|日"), "2026-04-01"),
)


@dataclass(frozen=True)
class Written:
    where: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join([PROGRAM, *self.words])}"


def _value_of(placeholder: str) -> str:
    inner = placeholder[1:-1].split("|")[0]  # <job id | attachment id | ...>: the first
    for pattern, value in PLACEHOLDERS:
        if pattern.search(inner):
            return value
    return "x"


def _command(text: str, where: str) -> Written | None:
    if not text.startswith(PROGRAM + " "):
        return None
    text = re.sub(r"<[^<>\n]+>", lambda m: _value_of(m.group(0)), text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    if not words or words[0] != PROGRAM:
        return None
    return Written(where, tuple(words[1:]))


def written_commands() -> list[Written]:
    found = []
    for name in documents.GUIDES:
        text = (documents.ROOT / name).read_text()
        in_block = False
        prose = []  # (line number, line) outside code blocks: inline code may wrap across lines
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
            elif in_block:
                command = _command(line.strip().removeprefix("$ "), f"{name}:{number}")
                if command:
                    found.append(command)
            else:
                prose.append((number, line))
        joined = "\n".join(line for _, line in prose)
        starts = [0]
        for _, line in prose:
            starts.append(starts[-1] + len(line) + 1)
        for span in re.finditer(r"`([^`]+)`", joined):
            number = prose[next(i for i, start in enumerate(starts) if start > span.start()) - 1][0]
            command = _command(" ".join(span.group(1).split()), f"{name}:{number}")
            if command:
                found.append(command)
    return found


def refusal(command: Written) -> str | None:
    """What the CLI's parser says against the command; None when it takes it. `operators` has a
    parser of its own, as main dispatches it; `--help` prints and exits 0."""
    words = list(command.words)
    try:
        if words[:1] == ["operators"]:
            operators.parser().parse_args(words[1:])
        else:
            parser().parse_args(words)
    except Refusal as refused:
        return refused.message
    except SystemExit as ended:
        return None if ended.code == 0 else f"the parser ended with {ended.code}"
    return None


COMMANDS = written_commands()


def test_the_guides_give_the_commands_an_operator_needs() -> None:
    given = {command.words[0] for command in COMMANDS}
    assert {"health", "stats", "list", "show", "retry", "confirm", "download", "reconcile", "operators"} <= given


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_every_cli_command_of_the_guides_is_one_the_cli_takes(command: Written) -> None:
    assert refusal(command) is None, f"{command}: {refusal(command)}"


@pytest.mark.parametrize(
    "line",
    [
        "document-jobs-admin lsit --state failed",
        "document-jobs-admin list --made-up-flag",
        "document-jobs-admin show",
        "document-jobs-admin confirm --reason why",
        "document-jobs-admin operators add someone@example.com --role owner",
    ],
)
def test_a_command_the_cli_does_not_take_is_caught(line: str) -> None:
    command = _command(line, "example")
    assert command is not None and refusal(command) is not None
