"""The advice of an outage alert is lib/failures.py's operator's advice, word for word, as shown (the
screen's labels put in: lib/explanations.py): the database cannot import Python, so migration
20261203150200 copied lib's texts into release_causes (advice, advice_ja) and outage_advice /
outage_advice_ja, and 20261207120000 the findings' into finding_advice / finding_advice_ja. These
tests fail when one side's text changes alone (copy lib's new text into a new migration), and
when a cause is in one side and not the other."""

from __future__ import annotations

import pytest

from lib.explanations import finding_codes, outage_codes
from lib.failures import FAILURES, OUTAGES


def _release_causes(admin) -> dict[str, dict[str, str]]:
    rows = admin.execute("select code, advice, advice_ja from document_jobs_internal.release_causes").fetchall()
    return {row["code"]: row for row in rows}


def _outage_causes(admin) -> set[str]:
    return {row["cause"] for row in admin.execute("select cause from document_jobs_internal.outages").fetchall()}


def test_every_cause_of_sql_has_its_advice_in_lib_and_every_cause_of_lib_is_in_sql(admin) -> None:
    releases = set(_release_causes(admin))
    assert releases == {code.value for code, rule in FAILURES.items() if rule.check}, "release causes"
    assert releases <= _outage_causes(admin), "every release cause is an outage cause"
    assert _outage_causes(admin) - releases == set(OUTAGES), "the outages that are no release cause"
    assert _outage_causes(admin) == set(outage_codes()), "the causes the screen and the CLI explain"


def test_release_causes_advice_is_lib_advice(admin) -> None:
    shown = outage_codes()
    for code, row in _release_causes(admin).items():
        said = shown[code]
        assert (row["advice"], row["advice_ja"]) == (said.operator_en, said.operator_ja), code


@pytest.mark.parametrize("cause", sorted(outage_codes()))
def test_outage_advice_is_lib_advice_in_english_and_japanese(admin, cause) -> None:
    said = outage_codes()[cause]
    row = admin.execute(
        "select document_jobs_internal.outage_advice(%s) as en, document_jobs_internal.outage_advice_ja(%s) as ja",
        (cause, cause),
    ).fetchone()
    assert (row["en"], row["ja"]) == (said.operator_en, said.operator_ja)


@pytest.mark.parametrize("code", sorted(finding_codes()))
def test_finding_advice_is_lib_advice_in_english_and_japanese(admin, code) -> None:
    said = finding_codes()[code]
    row = admin.execute(
        "select document_jobs_internal.finding_advice(%s) as en, document_jobs_internal.finding_advice_ja(%s) as ja",
        (code, code),
    ).fetchone()
    assert (row["en"], row["ja"]) == (said.operator_en, said.operator_ja)


def test_the_database_has_no_finding_lib_does_not_explain(admin) -> None:
    unknown = admin.execute("select document_jobs_internal.finding_advice('no_such_finding') as en").fetchone()
    assert unknown["en"] is None, "a finding lib does not know has no advice in the database either"
