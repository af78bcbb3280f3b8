"""The guides show the real screen and name it as it names itself: every image a document shows
exists (the screenshots are written by `make screenshots` from the running screen, never by
hand), and every label the clerks' guides quote is a text of the admin screen in that guide's
language, as public/admin/i18n.js has it. The Japanese guide quotes the screen in 「」 (and uses
bold for its own emphasis), the English one in **bold**. A button renamed on the screen fails
here until the guide follows. And the codes they explain are the codes there are: every code a
job can end failed with, and every outage the health check can open, in both languages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lib.explanations import screen_labels
from lib.failures import FAILURES, Action, FailureCode
from tests.support import documents

ROOT = documents.ROOT
I18N = ROOT / "public" / "admin" / "i18n.js"
# What each code means and what to do (written by make explanations), shown beside the code.
EXPLANATIONS = ROOT / "public" / "admin" / "explanations.js"
CLERKS = {"ja": "docs/CLERKS.ja.md", "en": "docs/CLERKS.en.md"}
# The views the clerks' guides walk through, each a screenshot per language: the inbox first.
SCREENSHOTS = ("signin", "inbox", "inbox-today", "fax", "phone-fax", "fax-index", "fax-failed", "job-failed",
               "overview-outage")  # fmt: skip

IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)|<img\b[^>]*\bsrc=\"([^\"]+)\"")
# The language switch names each language in its own words (LANGUAGES in i18n.js).
LANGUAGE_NAMES = re.compile(r"export const LANGUAGES = \{([^}]*)\}")
QUOTED = {"ja": re.compile(r"「([^」]+)」"), "en": re.compile(r"\*\*([^*]+)\*\*")}
PLACEHOLDER = re.compile(r"\{\w+\}")


def screen_texts() -> dict[str, dict[str, str]]:
    """Each language's messages (key: text) from i18n.js's MESSAGES (read as lib/explanations.py reads
    the labels advice names), the language switch's names, and the explanations, as the page shows them."""
    texts = screen_labels()
    source = I18N.read_text()
    names = LANGUAGE_NAMES.search(source)
    assert names, "LANGUAGES not found in i18n.js"
    for code, name in re.findall(r'(\w+): "([^"]+)"', names.group(1)):
        for shown in texts.values():  # the switch offers every language by its own name
            shown[f"language.{code}"] = name
    for language, said in explained_texts().items():
        texts[language].update(said)
    return texts


def sentence(text: str) -> str:
    """As the screen shows a meaning (ui.js sentence): capitalized, with its full stop."""
    capital = text[:1].upper() + text[1:]
    return capital if re.search(r"[.。)）]$", capital) else f"{capital}."


def explained_texts() -> dict[str, dict[str, str]]:
    source = EXPLANATIONS.read_text()
    table = json.loads(source[source.index("export const EXPLANATIONS = ") + 27 : source.rindex(";")])
    texts: dict[str, dict[str, str]] = {"en": {}, "ja": {}}
    for kind, codes in table.items():
        for code, entry in codes.items():
            for language in texts:
                texts[language][f"{kind}.{code}.meaning"] = sentence(entry[language]["meaning"])
                texts[language][f"{kind}.{code}.clerk"] = entry[language]["clerk"]
                if "operator" in entry[language]:
                    texts[language][f"{kind}.{code}.operator"] = entry[language]["operator"]
    return texts


def label_pattern(text: str) -> re.Pattern[str]:
    """A screen text as the guide may quote it: `ジョブ {id}` is 「ジョブ 4f2a91c0」 in the guide."""
    return re.compile("".join(".+?" if PLACEHOLDER.fullmatch(part) else re.escape(part)
                              for part in re.split(r"(\{\w+\})", text)))  # fmt: skip


def unknown_labels(guide: str, language: str, texts: dict[str, dict[str, str]]) -> list[str]:
    patterns = [label_pattern(text) for text in texts[language].values()]
    quoted = [next(group for group in match.groups() if group) for match in QUOTED[language].finditer(guide)]
    return [label for label in quoted if not any(pattern.fullmatch(label) for pattern in patterns)]


def images(doc: str) -> list[tuple[str, Path]]:
    text = (ROOT / doc).read_text()
    found = []
    for match in IMAGE.finditer(text):
        target = match.group(1) or match.group(2)
        if not re.match(r"https?:", target):
            found.append((target, ((ROOT / doc).parent / target).resolve()))
    return found


def test_every_markdown_file_of_the_project_is_checked() -> None:
    assert set(documents.every_markdown_file()) <= set(documents.DOCUMENTS)


def test_both_languages_of_the_screen_are_read_whole() -> None:
    texts = screen_texts()
    assert set(texts) == {"en", "ja"}
    assert len(texts["en"]) > 150 and texts["en"].keys() == texts["ja"].keys()
    assert texts["ja"]["job.retry"] == "再実行" and texts["en"]["job.retry"] == "Retry"


@pytest.mark.parametrize("doc", documents.DOCUMENTS)
def test_every_image_a_document_shows_exists(doc: str) -> None:
    missing = [target for target, path in images(doc) if not path.is_file()]
    assert not missing, f"{doc} shows images that are not in the repository (make screenshots): {missing}"


@pytest.mark.parametrize("language", CLERKS)
def test_the_clerks_guide_shows_each_view_in_its_language(language: str) -> None:
    shown = {target for target, _ in images(CLERKS[language])}
    assert {f"images/{view}-{language}.png" for view in SCREENSHOTS} <= shown


def test_the_readme_shows_the_inbox_on_a_phone_in_both_languages() -> None:
    shown = {target for target, _ in images("README.md")}
    assert {"docs/images/phone-inbox-ja.png", "docs/images/phone-inbox-en.png"} <= shown


@pytest.mark.parametrize("language", CLERKS)
def test_every_label_the_clerks_guide_quotes_is_on_the_screen(language: str) -> None:
    guide = (ROOT / CLERKS[language]).read_text()
    texts = screen_texts()
    assert len(QUOTED[language].findall(guide)) >= 20, "the guide names the screen's labels as it shows them"
    unknown = unknown_labels(guide, language, texts)
    assert not unknown, f"{CLERKS[language]} quotes labels the screen does not show in {language}: {unknown}"


def test_the_label_check_would_catch_a_label_the_screen_does_not_have() -> None:
    texts = {"ja": {"job.retry": "再実行", "job.heading": "ジョブ {id}"}, "en": {"job.retry": "Retry"}}
    assert unknown_labels("「再実行」を押し、「ジョブ 4f2a91c0」を開きます。", "ja", texts) == []
    assert unknown_labels("「再試行」を押します。**ここは強調**", "ja", texts) == ["再試行"]
    assert unknown_labels("Press **Retry**, then **Retry now**.", "en", texts) == ["Retry now"]


def test_the_image_check_finds_markdown_and_html_images() -> None:
    assert IMAGE.findall('![a](images/x.png) <img src="y.png" alt="">') == [("images/x.png", ""), ("", "y.png")]


# --- the codes the clerks read on the screen ------------------------------------------------

CODE = re.compile(r"`([a-z]+(?:_[a-z]+)*)`")
# A job ends failed with a code the worker fails or retries with (after its attempts), with the
# time budget's (counted from the fourth release in a row), or with one only the database writes.
ENDS_FAILED = {FailureCode.TIME_BUDGET.value, "lease_expired", "cancelled"}


def section(guide: str, number: int) -> str:
    """The guide's numbered section (`## 4. ...`) up to the next one."""
    return guide.split(f"\n## {number}. ", 1)[1].split("\n## ", 1)[0]


def outage_causes() -> set[str]:
    """Every cause the health check can open: the rows seeded in document_jobs_internal.outages."""
    schema = (ROOT / "supabase" / "schema.sql").read_text()
    return set(re.findall(r"INSERT INTO document_jobs_internal\.outages \(cause[^)]*\) VALUES \('(\w+)'", schema))


@pytest.mark.parametrize("language", CLERKS)
def test_the_clerks_guide_says_what_every_code_of_a_failed_job_means(language: str) -> None:
    ends_failed = {code.value for code, rule in FAILURES.items() if rule.action is not Action.RELEASE} | ENDS_FAILED
    explained = set(CODE.findall(section((ROOT / CLERKS[language]).read_text(), 4)))
    assert ends_failed - explained == set()


@pytest.mark.parametrize("language", CLERKS)
def test_the_clerks_guide_says_what_every_outage_means_and_whom_to_call(language: str) -> None:
    causes = outage_causes()
    assert {"queue_stalled", "webhooks_missing", "worker_unauthorized"} <= causes
    explained = set(CODE.findall(section((ROOT / CLERKS[language]).read_text(), 7)))
    assert causes - explained == set()


@pytest.mark.parametrize("language", CLERKS)
def test_every_code_the_clerks_guide_names_is_one_the_screen_can_show(language: str) -> None:
    known = {code.value for code in FailureCode} | ENDS_FAILED | outage_causes()
    named = set(CODE.findall((ROOT / CLERKS[language]).read_text()))
    assert named - known == set()
