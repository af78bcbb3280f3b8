"""The project's documents, as the docs tests read them: the guides (which quote the reports and
give commands to paste) and the reports `make bench` and `make chaos` write."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDES = (
    "README.md",
    "docs/DEPLOY.md",
    "docs/OPERATIONS.md",
    "docs/QUEUE.md",
    "docs/ADMIN_SCREEN.md",
    "docs/LOCAL_STACK.md",
    "docs/CLERKS.ja.md",
    "docs/CLERKS.en.md",
    "docs/ELECTRONIC_BOOKKEEPING.ja.md",
    "docs/ELECTRONIC_BOOKKEEPING.en.md",
    "docs/OFFICE_RULE.ja.md",
    "docs/OFFICE_RULE.en.md",
    "docs/SYSTEM_OVERVIEW.ja.md",
    "docs/SYSTEM_OVERVIEW.en.md",
)
REPORTS = ("docs/BENCHMARKS.md", "docs/RELIABILITY.md")
DOCUMENTS = (*GUIDES, *REPORTS)


def every_markdown_file() -> list[str]:
    """Every Markdown file of the project outside the installed packages, relative to the root."""
    found = []
    for path in ROOT.rglob("*.md"):
        parts = path.relative_to(ROOT).parts
        # Hidden folders (.venv, caches, the stack's) and installed packages are not the project's.
        if not any(part.startswith(".") or part == "node_modules" for part in parts):
            found.append(path.relative_to(ROOT).as_posix())
    return sorted(found)
