"""The Electronic Bookkeeping Act's documents stay true to each other and to the code: each has its
twin in the other language and the README and the deploy guide link both; the requirements table
has the same requirements with the same status in both languages, each citing a source that the
sources list defines with its page (an NTA mark only for an nta.go.jp page, a third party's page
said to be one); every table, function, code or variable they name in code type exists in the
schema or the code; and a CLI command they call not provided yet is not in the CLI (when it
lands, this fails until the documents say what it now provides)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from lib.admin.cli import parser
from tests.support import documents

ROOT = documents.ROOT
LAW = ("docs/ELECTRONIC_BOOKKEEPING", "docs/OFFICE_RULE", "docs/SYSTEM_OVERVIEW")
LANGUAGES = ("ja", "en")
MAIN = "docs/ELECTRONIC_BOOKKEEPING"
STATUSES = {"対応済み": "provided", "一部": "partly", "未提供": "not yet"}
ROW = re.compile(r"^\| (R\d+) \|(.*)\|\s*$", re.MULTILINE)
MARK = re.compile(r"\[([NGT]\d+)\]")
SOURCE = re.compile(r"^- \[([NGT]\d+)\] (.*?)(?=^- \[|\Z)", re.MULTILINE | re.DOTALL)
URL = re.compile(r"<(https://[^>\s]+)>")
# The marker may list none: every command the documents name is then provided.
NOT_YET = re.compile(r"<!-- CLI commands this document says are not provided yet[^:]*:\s*([\w -]*?)\s*-->")
# Names in code type that stand for a database object, a failure or outage code, a setting or a
# variable (snake case with an underscore, or upper case), and the cron jobs' names.
NAMED = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|document-jobs(?:-[a-z]+)?)`")


def path(base: str, language: str) -> Path:
    return ROOT / f"{base}.{language}.md"


def text(base: str, language: str) -> str:
    return path(base, language).read_text()


def requirements(language: str) -> list[tuple[str, list[str]]]:
    """The requirements table's rows: (id, its cells after the id)."""
    return [(rid, [cell.strip() for cell in rest.split("|")]) for rid, rest in ROW.findall(text(MAIN, language))]


def sources(language: str) -> dict[str, str]:
    return {mark: body for mark, body in SOURCE.findall(text(MAIN, language))}


def cli_commands(root: argparse.ArgumentParser) -> set[str]:
    actions = [action for action in root._actions if isinstance(action, argparse._SubParsersAction)]
    return {name for action in actions for name in action.choices}


def provided_already(marked: list[str], commands: set[str]) -> list[str]:
    return [name for name in marked if name in commands]


def code_text() -> str:
    files = [ROOT / "supabase" / "schema.sql", *sorted((ROOT / "lib").rglob("*.py"))]
    return "\n".join(file.read_text() for file in files)


@pytest.mark.parametrize("base", LAW)
def test_each_document_has_its_twin_and_they_link_each_other(base: str) -> None:
    name = base.removeprefix("docs/")
    for language, other in (("ja", "en"), ("en", "ja")):
        assert f"({name}.{other}.md)" in text(base, language), f"{base}.{language}.md does not link its twin"


@pytest.mark.parametrize("guide", ["README.md", "docs/DEPLOY.md"])
def test_the_readme_and_the_deploy_guide_link_every_law_document(guide: str) -> None:
    body = (ROOT / guide).read_text()
    prefix = "docs/" if guide == "README.md" else ""
    missing = [f"{base}.{language}.md" for base in LAW for language in LANGUAGES
               if f"({prefix}{base.removeprefix('docs/')}.{language}.md)" not in body]  # fmt: skip
    assert not missing, f"{guide} does not link {missing}"


def test_both_languages_list_the_same_requirements_with_the_same_status() -> None:
    ja, en = requirements("ja"), requirements("en")
    assert len(ja) >= 10, "the requirements table was not found"
    assert [rid for rid, _ in ja] == [rid for rid, _ in en]
    for (rid, ja_cells), (_, en_cells) in zip(ja, en, strict=True):
        assert len(ja_cells) == len(en_cells) == 5, rid
        assert ja_cells[3] in STATUSES, f"{rid}: unknown status {ja_cells[3]!r}"
        assert STATUSES[ja_cells[3]] == en_cells[3], f"{rid}: {ja_cells[3]} in Japanese, {en_cells[3]} in English"
        assert MARK.findall(ja_cells[1]) == MARK.findall(en_cells[1]), f"{rid} cites other sources in each language"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_requirement_cites_a_source_and_says_what_the_office_does_when_not_provided(language: str) -> None:
    for rid, cells in requirements(language):
        assert MARK.findall(cells[1]), f"{rid} cites no source"
        if cells[3] not in ("対応済み", "provided"):
            assert cells[4], f"{rid} is {cells[3]} and says nothing the office does meanwhile"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_source_mark_is_defined_with_its_page(language: str) -> None:
    defined = sources(language)
    assert set(defined) == set(sources("en" if language == "ja" else "ja")), "the two sources lists differ"
    used = {mark for base in LAW for mark in MARK.findall(text(base, language))}
    assert used <= set(defined), f"cited but not in the sources list: {sorted(used - set(defined))}"
    for mark, body in defined.items():
        urls = URL.findall(body)
        assert urls, f"[{mark}] gives no page"
        on_nta = [url.startswith("https://www.nta.go.jp/") for url in urls]
        if mark.startswith("N"):
            assert all(on_nta), f"[{mark}] is marked as the NTA's but cites another site: {urls}"
        else:
            assert not any(on_nta), f"[{mark}] cites an NTA page: mark it N"
        if mark.startswith("T"):
            said = "第三者" if language == "ja" else "third part"
            assert said in body, f"[{mark}] does not say it is a third party's"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_name_the_documents_give_in_code_type_exists(language: str) -> None:
    code = code_text()
    named = {name for base in LAW for name in NAMED.findall(text(base, language))}
    assert {"fax_received_emails", "document_jobs_audit", "SUPABASE_SECRET_KEY"} <= named
    missing = sorted(name for name in named if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", code))
    assert not missing, f"named in the law documents, found in neither supabase/schema.sql nor lib/: {missing}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_commands_called_not_provided_yet_are_not_in_the_cli(language: str) -> None:
    marker = NOT_YET.search(text(MAIN, language))
    assert marker, "the marker of commands not provided yet is missing"
    landed = provided_already(marker.group(1).split(), cli_commands(parser()))
    assert not landed, (
        f"the CLI now has {landed}, which {MAIN}.{language}.md calls not provided yet: update what the "
        "documents say it provides (the requirements table, sections 3 and 4, the office rule's checks, "
        "the system overview) and take it off the marker"
    )


def test_the_cli_check_would_catch_a_command_that_landed() -> None:
    commands = cli_commands(parser())
    assert {"download", "health", "list"} <= commands
    assert provided_already(["no-such-command", "download"], commands) == ["download"]
