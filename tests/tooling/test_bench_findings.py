"""The benchmark's prose follows its figures: what it says of the cap's default depends on how the
two caps' drains compare in the run, not on what was expected of them."""

from __future__ import annotations

import pytest

from bench.findings import cap_comparison


@pytest.mark.parametrize(
    ("default_ratio", "cap8_ratio", "says"),
    [
        (0.98, 0.86, "stood idle"),
        (0.49, 0.86, "drained faster"),
        (0.98, 0.99, "drain alike"),
        (0.90, 0.95, "drain alike"),
    ],
)
def test_the_cap_comparison_says_what_the_run_measured(default_ratio, cap8_ratio, says) -> None:
    assert says in cap_comparison(default_ratio, cap8_ratio)
