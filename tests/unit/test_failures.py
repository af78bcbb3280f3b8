"""The failure table (lib/failures.py): one rule for every code, no code outside it, and the
README's two tables of codes saying the same."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from lib.failures import FAILURES, FailureCode, JobFailure


def test_every_code_has_exactly_one_rule() -> None:
    assert list(FAILURES) == list(FailureCode)


def test_a_code_outside_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="not_a_code"):
        JobFailure("not_a_code", "message")  # type: ignore[arg-type]  # what mypy stops in lib/


README = Path(__file__).parents[2] / "README.md"
# Codes only the database writes (the expired-lease sweep, an operator's cancel), not the worker.
DATABASE_CODES = {"lease_expired", "cancelled"}


def readme_table(after: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after the line starting with `after`."""
    lines = README.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # without the header and the |---| line


def codes(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def delay(action: str) -> timedelta:
    if action.endswith("no delay") or "," not in action:
        return timedelta(0)
    amount, unit = action.split(",", 1)[1].split()
    return timedelta(**{{"h": "hours", "min": "minutes", "s": "seconds"}[unit]: int(amount)})


def test_the_readmes_failure_table_is_the_one_in_lib() -> None:
    rows = readme_table("Each failure has a stable code")
    described = {code: action for _, cell, action in rows for code in codes(cell)}
    assert sorted(described) == sorted(FailureCode)
    for code, action in described.items():
        rule = FAILURES[FailureCode(code)]
        assert (action.split(",")[0], delay(action)) == (rule.action.value, rule.delay), code


def test_the_readmes_error_codes_are_every_code_a_job_can_end_with() -> None:
    rows = readme_table("`last_error_code` of a job")
    assert sorted(code for cell, *_ in rows for code in codes(cell)) == sorted({*FailureCode, *DATABASE_CODES})
