"""Who sent a fax: the sending number (or why it was withheld), the sender's name and the part
numbers of a fax split over several e-mails, read from what a fax-to-mail service or an MFP
writes in the e-mail's subject and From name; and the same reading of a number a clerk types
into the search.

Numbers
-------
A number has two forms (`Number`):

- `canonical`: ASCII digits only, the form that is stored, indexed and matched. "03-1234-5678",
  the same in full-width characters, "(03) 1234 5678" and "+81 3 1234 5678" are one line, so
  they are one canonical number: separators are dropped, and a leading "+81" (Japan's country code) becomes
  the trunk prefix "0" (also in the "+81 (0)3 ..." notation), the way a clerk dials and types it.
  Another country's number keeps its country code without the "+" ("+1 613 ..." -> "1613...").
- `display`: the number as it was written, with its grouping (hyphens, spaces, parentheses), in
  ASCII: a clerk recognises "03-1234-5678" or "(03)1234-5678" as the sender wrote it.

Japanese text writes a number with more characters than NFKC folds, so they are listed here, not
taken from a Unicode category or from NFKC:

- digits: ASCII and full-width (U+FF10-U+FF19). Not NFKC as a whole: it also makes "①" and "¹"
  into "1" and "⑴" into "(1)", which in a subject are list markers, not digits;
- dashes, wherever they stand: "-", U+2010 hyphen, U+2011, U+2012 figure dash, U+2013 en dash,
  U+2014 em dash, U+2015 horizontal bar "―", U+2212 minus, U+FE58, U+FE63 and U+FF0D full-width
  hyphen-minus (NFKC folds only the last two). Not "every dash punctuation": U+301C wave dash "〜" and U+FF5E
  (full-width tilde) mean a range ("03-1234-5678〜9"), and text with one is not a number;
- dashes only between two digits: U+30FC "ー", the prolonged sound mark an IME gives for "-" in
  kana mode (03ー1234), its half-width U+FF70, and U+2500 "─", which IMEs offer when converting
  "-"; elsewhere they are letters and lines ("コーヒー");
- U+FF08/U+FF09 full-width parentheses, U+FF0B full-width plus, and every space (U+3000 included).

The formats
-----------
`FORMATS` is the one table of what is read from a subject, each entry with the pages it follows
(tests/unit/test_sender_numbers.py exercises each with its citation). A subject is read only when
it is, as a whole, one of these formats; anything else is an unknown format: nothing is read
from it (a number in "注文番号 0312345678" or "FAX 03-1234-5678 山田商事" is not taken for the
sender's), and the inbox shows the subject as it is.

A format's fields are of two kinds: the caller ID (the number the telephone network gave) and
the station ID (the TSI/CSI/RTI the sending machine announces, a number or a name its owner
typed). The caller ID's number is preferred; a station ID that is a number (T.30 station IDs are
digits, "+" and spaces) is the sender's number as its machine states it, and any other station
ID is the sender's name. A field that says why there is no number (`WITHHELD`) gives the reason.

What was looked for and not found
---------------------------------
For these, no public page shows the subject (or From) written, so the subject stays unknown and
nothing is read from it; nothing is inferred from how other makers write theirs. What was
searched, so that the next search starts further on:

- InterFAX: interfax.jp's user guide is published for the send service only (its pages on
  result notifications, CSID and options); the receive service's guide is referred to from those
  pages but none of its pages could be found, nor, in Upland's English InterFAX help, the
  subject of an inbound fax's e-mail (its inbound settings list the e-mail formats HTML, plain
  text, "NEC" and plain text with a link, without showing them). The only "inbound" samples
  found ("You have 1 new fax, document NNN" from "Interfax Online") are a malware campaign that
  borrows the name (sent from unrelated servers; a public issue tracker labelled one as spam),
  and carry no sender number anyway.
- eFax in Japanese: efaxcorporate.jp's FAQ says received faxes arrive as PDF or TIFF attachments
  without showing the subject, and eFax Corporate's help lists an e-mail language preference
  without showing the localised subjects. The one Japanese subject seen,
  「eFax メッセージ 送信元 06-1111-2222 - 3 ページ」, is documented nowhere and is an unknown format.
- FUJIFILM Business Innovation (Fuji Xerox): the Apeos/DocuCentre manuals describe forwarding a
  received fax by e-mail (job flows, folders) and the settings, not the subject written. A mail
  split by data size is, per the DocuCentre manuals, a MIME message/partial, not marked in the
  subject; how a split by page is marked is not shown, so no FUJIFILM marker is read.
- Canon: the imageRUNNER (ADVANCE) and Satera manuals and the Universal Send Kit service manuals
  describe the forwarding conditions and the divided-transmission marker (PART_MARKERS), not
  the subject of a forwarded fax.
- Sharp (MX inbound routing, 受信データ転送) and Kyocera (FAX forwarding, RX/Forward
  requirements): no page showing the forwarded e-mail's subject; Sharp's number-display page is
  cited for the withheld vocabulary only.
- Brother, Panasonic, NTT and Japanese fax-to-mail services: Brother's network guides say the
  subject tells that an Internet fax arrived, without its wording; Panasonic's UF job tracking
  notice lists the remote station's ID among its fields without saying which header holds it;
  NTT's ひかり電話 FAXお知らせメール and a fax-to-mail adapter (aFAX, which says it puts the
  sender's FAX-ID in the subject) show no subject either.

Pages behind these notes: FUJIFILM BI's split e-mail,
https://www.easymanua.ls/fuji-xerox/docucentre-iv-c4470/manual?p=640; the "Interfax Online"
samples, https://pastebin.com/UpPAFzqm and https://github.com/ThomasGrund/nwcommands/issues/34;
eFax Corporate's preferences,
https://home.efax.com/corp_user_help/version_1.0/EN/Content/UpdateAccount/UpdatePreferences/AccountPreferences.htm;
aFAX, https://afax.ne.jp/manual/faxid.html.

An open question on the "ricoh" entry: its service manuals say the station ID in a forwarded
fax's subject is the forwarding machine's RTI or CSI (one table: the station designated for the
delivery), which may be the office's own machine rather than the correspondent's; the same
format written by a correspondent's machine for an Internet fax carries that machine's own CSI
and RTI, the sender's. Its number is therefore recorded as a station ID (number_source), never
as a caller ID.

Sender-controlled text
----------------------
Everything returned is inert, as lib/attachment_names.py and document_jobs_internal.one_line
treat a sender's text: one line, no control, format (bidi overrides and isolates, zero-width),
surrogate, private-use or unassigned character, and a bounded length. A subject or From longer
than any service writes is not read at all.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

# --- numbers -------------------------------------------------------------------------------

_TO_ASCII = str.maketrans(
    {
        **{chr(0xFF10 + d): str(d) for d in range(10)},
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        "\uff08": "(",
        "\uff09": ")",
        "\uff0b": "+",
    }
)
_DASH_BETWEEN_DIGITS = re.compile(r"(?<=[0-9])[\u30fc\uff70\u2500](?=[0-9])")
_SPACES = re.compile(r"\s+")
# Groups of digits, a group in parentheses standing alone, single separators (a space, or a
# hyphen with a space either side at most) between them, and an optional leading "+".
_NUMBER = re.compile(r"\+?(?:\([0-9]+\)|[0-9])(?:(?: ?- ?| )?(?:\([0-9]+\)|[0-9]))*")
_FRAGMENT = re.compile(r"\+?[0-9() -]*")
# Fewer digits is no dialable number; more is longer than any number with its international
# prefix, and than the 20 characters of a T.30 station ID.
MIN_DIGITS = 3
MAX_DIGITS = 20


class Number(NamedTuple):
    canonical: str  # ASCII digits only: what is stored, indexed and matched
    display: str  # as written, with its grouping, in ASCII


def _written(text: str) -> str:
    """`text` with the characters a number is written with made ASCII (see the module's
    docstring), hidden characters removed and every run of spaces one space."""
    text = _one_line(text).translate(_TO_ASCII)
    text = _DASH_BETWEEN_DIGITS.sub("-", text)
    return _SPACES.sub(" ", text).strip()


def _digits(display: str) -> str:
    digits = re.sub(r"[^0-9]", "", display)
    if display.startswith("+81"):
        return "0" + digits[2:].removeprefix("0")  # "+81 3 ..." and "+81 (0)3 ..." alike
    return digits


def normalize_number(text: str) -> Number | None:
    """The number `text` is, as a whole, in its canonical and display forms; None when `text` is
    anything else (a word, a range "03〜04", a number inside other text).

    normalize_number("(03)1234-5678" in full-width characters) == Number("0312345678", "(03)1234-5678")
    """
    display = _written(text)
    if not _NUMBER.fullmatch(display):
        return None
    canonical = _digits(display)
    if not MIN_DIGITS <= len(canonical) <= MAX_DIGITS:
        return None
    return Number(canonical, display)


def search_digits(query: str) -> str | None:
    """The canonical digits to look for (as a substring of stored canonical numbers) when a
    clerk's search is a number or the start of one, as typed: "03-1234" (full-width too),
    "03ー12", "(03", "+81 3 1234" (-> "031234"). None when the query is not only a number, so
    the inbox searches it as text instead."""
    written = _written(query)
    if not re.search("[0-9]", written) or not _FRAGMENT.fullmatch(written):
        return None
    digits = _digits(written)
    return digits or None


# --- withheld numbers --------------------------------------------------------------------

Withheld = Literal["withheld", "payphone", "unavailable", "unknown"]

# What a number field says instead of a number, as NTT's number display shows it (Sharp's page
# lists 非通知/ヒツウチ, 公衆電話/コウシュウデンワ, 表示圏外/ヒョウジケンガイ and 受信エラー/ジュシン
# エラー), the wordings 番号非通知, 通知不可 and 通知不可能 phones print for the same states, and
# the English words fax services write. Compared after NFKC (half-width katakana), casefolding
# and without spaces. The one-letter codes (P, C, O, S, E) are not taken: no format found puts
# them in a subject, and a one-letter field is anything.
WITHHELD: dict[str, Withheld] = {
    "非通知": "withheld",
    "ヒツウチ": "withheld",
    "番号非通知": "withheld",
    "anonymous": "withheld",
    "公衆電話": "payphone",
    "コウシュウデンワ": "payphone",
    "表示圏外": "unavailable",
    "ヒョウジケンガイ": "unavailable",
    "通知不可": "unavailable",
    "通知不可能": "unavailable",
    "受信エラー": "unavailable",
    "ジュシンエラー": "unavailable",
    "unknown": "unknown",
}

# Each reason as the screen says it (the inbox and the announcements use these words).
WITHHELD_LABELS: dict[Withheld, dict[str, str]] = {
    "withheld": {"ja": "非通知", "en": "Withheld"},
    "payphone": {"ja": "公衆電話", "en": "Payphone"},
    "unavailable": {"ja": "通知不可", "en": "Not available"},
    "unknown": {"ja": "不明", "en": "Unknown"},
}


def _withheld(field: str) -> Withheld | None:
    key = re.sub(r"\s", "", unicodedata.normalize("NFKC", field)).casefold()
    return WITHHELD.get(key)


# --- inert text -----------------------------------------------------------------------------

# Control (Cc), format (Cf: bidi overrides, isolates and marks, zero-width characters, BOM),
# surrogates (Cs), private use (Co), unassigned (Cn), line and paragraph separators (Zl, Zp).
_HIDDEN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
MAX_NAME = 100  # characters shown of a sender's name (a T.30 name is 20; eFax's is free text)
MAX_INPUT = 1000  # no service writes a longer subject or From; a longer one is not read


def _one_line(text: str) -> str:
    """One line: line breaks and tabs a space, hidden characters (_HIDDEN) removed."""
    text = "".join(" " if char.isspace() and char not in "\u3000" else char for char in text)
    return "".join(char for char in text if unicodedata.category(char) not in _HIDDEN)


def inert(text: str, limit: int = MAX_NAME) -> str:
    """A sender's text made safe to store, show and put in an alert: one line, no hidden
    character, spaces collapsed, at most `limit` characters (the last one "…" when cut)."""
    text = re.sub(" {2,}", " ", _one_line(text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the result -----------------------------------------------------------------------------


class Part(BaseModel):
    """Which e-mail of a fax split over several this is: `number` of `total`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int = Field(ge=1)
    total: int = Field(ge=1)
    format: str  # the PART_MARKERS entry that read it

    @model_validator(mode="after")
    def _within(self) -> Part:
        if self.number > self.total:
            raise ValueError("part number above the total")
        return self


class Sender(BaseModel):
    """What the subject and From name say of a fax's sender. Every field is None for a format
    this module does not know (and the inbox shows the subject)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str | None = None  # the FORMATS entry that matched, None for an unknown format
    number: str | None = None  # canonical: ASCII digits (Number.canonical)
    number_display: str | None = None  # as written (Number.display)
    number_source: Literal["caller_id", "station_id"] | None = None
    withheld: Withheld | None = None  # why there is no number, when the format says so
    name: str | None = None  # the sending station's name, when the format carries one
    part: Part | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Sender:
        has_number = (self.number, self.number_display, self.number_source)
        if any(value is None for value in has_number) != all(value is None for value in has_number):
            raise ValueError("number, number_display and number_source go together")
        if self.number is not None:
            if self.withheld is not None:
                raise ValueError("a number is not withheld")
            if normalize_number(self.number_display or "") != Number(self.number, self.number_display or ""):
                raise ValueError("number_display does not give number")
        if self.format is None and (self.number is not None or self.withheld is not None or self.name is not None):
            raise ValueError("only a known format gives a number, a reason or a name")
        if self.name is not None and (not self.name or inert(self.name) != self.name):
            raise ValueError("name is not inert")
        return self


# --- the tables -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectFormat:
    """One way a service or an MFP writes its subject. `subject` must match the whole subject
    (made one line); `from_name`, when set, the whole display name of the From header too.
    `caller` and `station` name the pattern's groups holding those fields. `station_pair`, when
    the whole station field matches it, splits the field into the station's number ("csi") and
    its name ("rti"), for a format whose field may carry both."""

    name: str
    label: str  # as the inbox shows which format was read
    sources: tuple[str, ...]  # the pages that document it
    subject: re.Pattern[str]
    from_name: re.Pattern[str] | None = None
    caller: str | None = None
    station: str | None = None
    station_pair: re.Pattern[str] | None = None


_EFAX_FROM = re.compile(r"eFax\b.*", re.IGNORECASE)

FORMATS: tuple[SubjectFormat, ...] = (
    SubjectFormat(
        # "eFax from [name, if any, configured in sending fax] (en dash) X page(s), caller ID:
        # XXX-XXX-XXXX", From "eFax" (a mail host's support page describing eFax's delivery).
        name="efax",
        label="eFax",
        sources=("https://support.bluetie.com/node/978",),
        subject=re.compile(
            r"eFax(?:®)? from(?: (?P<station>.*?))? ?[-–] [0-9]+ page\(s\), caller[- ]ID: ?(?P<caller>.*)",
            re.IGNORECASE,
        ),
        from_name=_EFAX_FROM,
        caller="caller",
        station="station",
    ),
    SubjectFormat(
        # A delivered message's headers, as posted: From "eFax Corporate" <message@inbound.efax.com>,
        # Subject ' Corporate eFax message from "314 994 7202" - 2 page(s)'; the Caller-ID
        # suffix as the consumer format above writes its caller ID.
        name="efax_message",
        label="eFax",
        sources=("https://pastebin.com/EUDfYDLh", "https://support.bluetie.com/node/978"),
        subject=re.compile(
            r'(?:Corporate )?eFax(?:®)? message from "(?P<station>[^"]*)" [-–] [0-9]+ page\(s\)'
            r"(?:, caller[- ]ID: ?(?P<caller>.*))?",
            re.IGNORECASE,
        ),
        from_name=_EFAX_FROM,
        caller="caller",
        station="station",
    ),
    SubjectFormat(
        # A received fax delivered or forwarded by e-mail: "From RTI (or CSI) (Fax Message
        # No.xxxx)", "From TSI (Fax Message No. xxxx)"; the station ID is the sender's name (RTI)
        # or number (CSI/TSI). The From is the machine's own address: it says nothing of the
        # sender. The pages are Ricoh service manuals as published by third parties; the pages
        # found on manuals.ricoh.com describe the subject of mail the machine sends from its
        # scanner, not of a received fax it forwards. The tables of how the subject differs by
        # mail type give the station field, when both IDs are registered, as "CSI" ("RTI"):
        # the number and the name, read apart (see the module's docstring on whose they are).
        name="ricoh",
        label="RICOH",
        sources=(
            "https://www.easymanua.ls/ricoh/b089/manual?p=773",
            "http://ricoh.marm.pl/html_manuals/mpc6503/english/d3d9/content/16355713.html",
            "https://todaynetnews.com/ricoh/ricoh-mp-4002-5002-service-manual/part643.htm",
            "http://ricoh.marm.pl/html_manuals/mp402/english/fax/content/10109867.html",
            "https://www.easymanua.ls/ricoh/aficio-1515/manual/49529?p=318",
        ),
        subject=re.compile(r"From ?(?P<station>.*?) ?\(Fax Message No\. ?[0-9]+\)", re.IGNORECASE),
        station="station",
        station_pair=re.compile(r'"(?P<csi>[^"]*)" ?\("(?P<rti>[^"]*)"\)'),
    ),
)


@dataclass(frozen=True)
class PartMarker:
    """How a maker marks one e-mail of a fax split over several, at the head of the subject; the
    rest of the subject is then read against FORMATS."""

    name: str
    sources: tuple[str, ...]
    pattern: re.Pattern[str]  # matched at the subject's start, groups "number" and "total"


PART_MARKERS: tuple[PartMarker, ...] = (
    PartMarker(
        # I-fax divided transmission: "a serial number affixed to the head of Subject of each
        # mail (e.g., [1/5], [2/5],..., [5/5])", each part a message/partial.
        name="canon_divided",
        sources=(
            "https://manual.onestart.ai/manuals/Canon-Color-Universal-Send-Kit-Q1-Service-Manual-4943107?page=27",
        ),
        pattern=re.compile(r"\[(?P<number>[0-9]{1,3})/(?P<total>[0-9]{1,3})\] ?"),
    ),
)


# --- parsing ------------------------------------------------------------------------------


def _field(match: re.Match[str], group: str | None) -> str | None:
    if group is None or match.group(group) is None:
        return None
    value = match.group(group).strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].strip()
    return value or None


def _part(line: str) -> tuple[Part | None, str]:
    for marker in PART_MARKERS:
        found = marker.pattern.match(line)
        if found:
            number, total = int(found.group("number")), int(found.group("total"))
            if 1 <= number <= total:
                return Part(number=number, total=total, format=marker.name), line[found.end() :]
    return None, line


def _from_name(from_header: str | None) -> str:
    if not from_header or len(from_header) > MAX_INPUT:
        return ""
    return inert(parseaddr(from_header)[0], MAX_INPUT)


def parse_sender(subject: str | None, from_header: str | None) -> Sender:
    """What `subject` and the display name of `from_header` (the From line as received) say of
    the fax's sender, by the first entry of FORMATS both match; Sender() when none does (and no
    part marker was read)."""
    if subject is None or len(subject) > MAX_INPUT:
        return Sender()
    part, line = _part(re.sub(" {2,}", " ", _one_line(subject)).strip())
    from_name = _from_name(from_header)
    for entry in FORMATS:
        if entry.from_name is not None and not entry.from_name.fullmatch(from_name):
            continue
        found = entry.subject.fullmatch(line)
        if found:
            return _read(entry, found, part)
    return Sender(part=part)


def _station_ids(entry: SubjectFormat, station: str | None) -> list[str]:
    """The station IDs in a station field: the field, or its number and name when the format
    writes both in it (`SubjectFormat.station_pair`)."""
    if station is None:
        return []
    pair = entry.station_pair.fullmatch(station) if entry.station_pair is not None else None
    if pair is None:
        return [station]
    return [value for group in ("csi", "rti") if (value := pair.group(group).strip())]


def _read(entry: SubjectFormat, found: re.Match[str], part: Part | None) -> Sender:
    caller, station = _field(found, entry.caller), _field(found, entry.station)
    station_ids = _station_ids(entry, station)
    fields: list[tuple[Literal["caller_id", "station_id"], str]] = []
    if caller is not None:
        fields.append(("caller_id", caller))
    fields.extend(("station_id", value) for value in station_ids)
    number = next(((source, n) for source, value in fields if (n := normalize_number(value))), None)
    reasons = [reason for _, value in fields if (reason := _withheld(value))]
    # The name is a station ID that is neither a number nor a reason: of a pair, the RTI first.
    names = (inert(value) for value in reversed(station_ids) if normalize_number(value) is None)
    name = next((value for value in names if value and _withheld(value) is None), None)
    if number is not None:
        source, (canonical, display) = number
        return Sender(
            format=entry.name, number=canonical, number_display=display, number_source=source, name=name, part=part
        )
    return Sender(format=entry.name, withheld=reasons[0] if reasons else None, name=name, part=part)
