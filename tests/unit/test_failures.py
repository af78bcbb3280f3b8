"""The failure table (lib/failures.py): one rule for every code, and no code outside it."""

from __future__ import annotations

import pytest

from lib.failures import FAILURES, FailureCode, JobFailure


def test_every_code_has_exactly_one_rule() -> None:
    assert list(FAILURES) == list(FailureCode)


def test_a_code_outside_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="not_a_code"):
        JobFailure("not_a_code", "message")  # type: ignore[arg-type]  # what mypy stops in lib/
