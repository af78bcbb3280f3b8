"""The documents stay true: every file and test they cite exists; every figure the README (or
another guide) quotes from a report (docs/BENCHMARKS.md, written by `make bench`;
docs/RELIABILITY.md, by `make chaos`) appears in that report; and the variables table names
every environment variable the deployed code reads."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from lib import settings
from tests.support import documents

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = list(documents.DOCUMENTS)
QUOTING = list(documents.GUIDES)
REPORTS = {
    "docs/BENCHMARKS.md": ("BENCHMARKS.md", "make bench", "python -m bench"),
    "docs/RELIABILITY.md": ("RELIABILITY.md", "make chaos"),
}
CITED_FILE = re.compile(
    r"(?<![\w/.-])((?:tests|lib|api|devstack|bench|chaos|supabase|docs|public)/[\w./-]*\w\.(?:py|sql|md|json|txt|js|css|html))(?:::(\w+))?"
)
# A measured figure: a number with a unit of time, size, share or ratio.
FIGURE = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)\s?(ms|s|MiB|MB|GB|%|x)(?![\w])")


def read(name: str) -> str:
    return (ROOT / name).read_text()


def citations() -> list[tuple[str, str, str | None]]:
    return [(doc, path, test) for doc in DOCUMENTS for path, test in CITED_FILE.findall(read(doc))
            if (ROOT / doc).exists()]  # fmt: skip


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_the_document_exists(doc: str) -> None:
    assert (ROOT / doc).is_file()


def test_every_cited_file_and_test_exists() -> None:
    missing = []
    for doc, path, test in citations():
        if not (ROOT / path).exists():
            missing.append(f"{doc}: {path}")
        elif test:
            names = {node.name for node in ast.walk(ast.parse(read(path))) if isinstance(node, ast.FunctionDef)}
            if test not in names:
                missing.append(f"{doc}: {path}::{test}")
    assert not missing, missing


def paragraphs(text: str) -> list[str]:
    """Paragraphs and list items: the unit a figure and its source are quoted in."""
    return [block for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )|\n(?=\s*\|)", text) if block.strip()]


def quoted_figures() -> list[tuple[str, str, str, str]]:
    """(document, report, figure, its paragraph) for each figure in a paragraph that cites a report."""
    found = []
    for doc in QUOTING:
        for block in paragraphs(read(doc)):
            cited = [report for report, names in REPORTS.items() if any(name in block for name in names)]
            for report in cited:
                for number, unit in FIGURE.findall(block):
                    found.append((doc, report, f"{number} {unit}", block))
    return found


def appears(number: str, unit: str, text: str) -> bool:
    return re.search(rf"(?<![\d.,]){re.escape(number)}\s?{re.escape(unit)}(?![\w])", text) is not None


def test_figures_quoted_from_a_report_appear_in_it() -> None:
    drifted = []
    for doc, report, figure, block in quoted_figures():
        number, unit = figure.split(" ")
        in_report = read(report)
        others = [r for r in REPORTS if r != report and any(n in block for n in REPORTS[r])]
        sources = [in_report, *(read(r) for r in others)]
        if not any(appears(number, unit, source) for source in sources):
            drifted.append(f"{doc}: {figure!r} not in {report}: {block.strip()[:100]!r}")
    assert not drifted, "\n".join(drifted)


def test_the_figure_check_would_catch_a_drifted_figure() -> None:
    assert FIGURE.findall("a claim at 1.06 ms, 451 MiB, 0.36x, ~20 ms") == [
        ("1.06", "ms"), ("451", "MiB"), ("0.36", "x"), ("20", "ms")
    ]  # fmt: skip
    assert appears("1.06", "ms", "a claim takes 1.06 ms") and appears("1.06", "ms", "(1.06ms)")
    assert not appears("1.06", "ms", "a claim takes 11.06 ms, 1.061 ms or 1.06 s")


def variables_read_by_the_code() -> set[str]:
    names = set()
    for value in vars(settings).values():
        if isinstance(value, type) and issubclass(value, BaseSettings):
            names |= {field.upper() for field in value.model_fields}
    for path in [*ROOT.glob("lib/**/*.py"), *ROOT.glob("api/**/*.py")]:
        if "lib/admin/" in path.as_posix():
            continue  # the CLI is not deployed; it reads what SupabaseSettings reads
        for node in ast.walk(ast.parse(path.read_text())):
            call = isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv")
            if call and node.args and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value)
            item = isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ"
            if item and isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
    return names


def test_the_variables_table_names_every_variable_the_code_reads() -> None:
    table = read("docs/DEPLOY.md").split("## Variables", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()
                                                              if line.startswith("| `"))))  # fmt: skip
    read_by_code = variables_read_by_the_code()
    assert "INTERNAL_FUNCTION_SECRET_PREVIOUS" in read_by_code and "SUPABASE_SECRET_KEY" in read_by_code
    assert read_by_code - listed == set()
