"""document-jobs-admin export: the stored originals written to a folder with an index CSV and a
SHA256SUMS file, for a tax officer's download request (--from/--to) or as the office's own copy,
run on a schedule (--since-last). Names and cells: lib/admin/export_files.py.

`--from DATE --to DATE -o DIR` writes every original filed on those days (取引年月日, or the day
it was received in the office's time zone when none is entered) into DIR, which must be empty or
new. `--since-last -o DIR` treats DIR as the office's copy: each run adds a folder of its own,
named by the end of its window in the office's time zone (DIR/20261207-091500/), holding the
originals recorded since the previous run's window ended, and then moves the mark on: the file
DIR/document-jobs-export.json, which is written last (replaced whole, never half), so a run that
fails leaves the mark where it was and the next run copies the same originals again into a new
folder. The mark lives beside the copy it describes: two copies (a NAS and a USB disk) each keep
their own, and a copy moved to another machine keeps its place. It names the project it was made
from; a copy of another project's is refused.

Everything streams: the rows come a page at a time (export_documents, a cursor), each original is
read from Storage in chunks straight into its file while its SHA-256 is computed, and the CSV and
SHA256SUMS lines are written as each original is done; the memory used does not grow with the
number or the size of the originals. An original whose bytes are not the recorded ones stops the
export (exit 6, its name printed): its bytes are kept beside it as NAME.not-as-recorded for the
investigation, never under its name nor in SHA256SUMS; `document-jobs-admin verify` records the
finding and opens the outage.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from lib.admin import PROGRAM, commands, display
from lib.admin.export_files import (
    CSV_ENCODING,
    CSV_HEADER,
    INDEX_CSV,
    SHA256SUMS,
    Document,
    csv_row,
    export_name,
    numbered,
    sha256sums_line,
)
from lib.admin.terminal import encoding_of, terminal_text
from lib.budget import Deadline
from lib.errors import Refusal
from lib.supabase.storage import UPLOAD_CHUNK_BYTES, Storage, StorageError

MARK = "document-jobs-export.json"
MARK_FORMAT = 1
SCAN = 500  # rows of the record export_documents reads a call (1 to 1000)
READ_SECONDS = 600.0  # one original's read: the CLI has no invocation budget, only this bound
MISMATCH_SUFFIX = ".not-as-recorded"


def a_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD)") from None


def add_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--from",
        dest="date_from",
        type=a_date,
        metavar="DATE",
        help="filed on or after this day (取引年月日, else the received day): YYYY-MM-DD",
    )
    sub.add_argument("--to", dest="date_to", type=a_date, metavar="DATE", help="filed on or before this day")
    sub.add_argument(
        "--since-last",
        action="store_true",
        help=f"the office's copy: what was recorded since the last run into DIR (its mark: DIR/{MARK}), "
        "in a new folder of DIR",
    )
    sub.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder written to")


@dataclass
class _Written:
    originals: int = 0
    bytes: int = 0


class _Tee:
    """A Storage download sink: each chunk into the file and into the digest, nothing kept."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file, self.digest, self.size = file, hashlib.sha256(), 0

    def write(self, chunk: bytes, /) -> int:
        self.file.write(chunk)
        self.digest.update(chunk)
        self.size += len(chunk)
        return len(chunk)


def run(context: commands.Context, args: argparse.Namespace) -> tuple[Any, str]:
    output = Path(args.output)
    if args.since_last:
        if args.date_from or args.date_to:
            raise Refusal("usage", "--since-last copies what is new since the last run: it takes no --from or --to")
        return _since_last(context, args, output)
    if args.date_from is None or args.date_to is None:
        raise Refusal("usage", "give --from DATE and --to DATE (or --since-last for the office's copy)")
    if args.date_from > args.date_to:
        raise Refusal("invalid_argument", "--from must be on or before --to")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise Refusal("folder_not_empty", f"{output} is not an empty folder: an export writes into a new or empty one")
    output.mkdir(parents=True, exist_ok=True)
    window = {"p_from": args.date_from.isoformat(), "p_to": args.date_to.isoformat()}
    written, answer = _export(context, output, window, progress=not args.json)
    data = {
        "folder": str(output),
        "from": window["p_from"],
        "to": window["p_to"],
        "originals": written.originals,
        "bytes": written.bytes,
        "stored_before": answer["stored_before"],
        "time_zone": answer["time_zone"],
    }
    return data, _shown(data, f"filed {window['p_from']} to {window['p_to']}")


def _since_last(context: commands.Context, args: argparse.Namespace, output: Path) -> tuple[Any, str]:
    output.mkdir(parents=True, exist_ok=True)
    mark = _read_mark(context, output / MARK)
    window: dict[str, Any] = {"p_stored_from": mark["stored_before"] if mark else None}
    first = _page(context, window, None)
    window["p_stored_before"] = first["stored_before"]
    if mark and datetime.fromisoformat(str(first["stored_before"])) <= datetime.fromisoformat(mark["stored_before"]):
        # A mark ahead of this window (a clock set back, a mark copied from a later copy): nothing is
        # new, and the mark never moves back, which would copy what the copy holds again.
        data = {"folder": None, "since": mark["stored_before"], "stored_before": mark["stored_before"], "originals": 0,
                "bytes": 0, "mark": str(output / MARK), "time_zone": first["time_zone"]}  # fmt: skip
        return data, _shown(data, f"recorded since {display.local_time(mark['stored_before'], context.now)}")
    folder = output / str(first["stored_before_local"])
    if folder.exists():
        raise Refusal("folder_not_empty", f"{folder} exists: nothing written (is another copy running?)")
    folder.mkdir()
    written, answer = _export(context, folder, window, progress=not args.json, first=first)
    if not written.originals:
        for name in (INDEX_CSV, SHA256SUMS):
            (folder / name).unlink()
        folder.rmdir()
    _write_mark(
        output / MARK,
        {
            "format": MARK_FORMAT,
            "project": context.settings.supabase_url,
            "stored_before": answer["stored_before"],
            "folder": folder.name if written.originals else (mark or {}).get("folder"),
            "originals": written.originals,
        },
    )
    data = {
        "folder": str(folder) if written.originals else None,
        "since": window["p_stored_from"],
        "stored_before": answer["stored_before"],
        "originals": written.originals,
        "bytes": written.bytes,
        "mark": str(output / MARK),
        "time_zone": answer["time_zone"],
    }
    since = f"since {display.local_time(mark['stored_before'], context.now)}" if mark else "since the first fax"
    return data, _shown(data, f"recorded {since}")


def _read_mark(context: commands.Context, path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        mark = json.loads(path.read_text(encoding="utf-8"))
        datetime.fromisoformat(str(mark["stored_before"]))
        project, version = mark["project"], mark["format"]
    except (ValueError, KeyError, TypeError) as error:
        raise Refusal("export_mark_invalid", f"{path} is not an export's mark ({error}): nothing written") from None
    if version != MARK_FORMAT:
        raise Refusal("export_mark_invalid", f"{path} is of another format ({version!r}): nothing written")
    if project != context.settings.supabase_url:
        raise Refusal(
            "export_mark_invalid",
            f"{path} marks a copy of {project}, not of {context.settings.supabase_url} (SUPABASE_URL): nothing written",
        )
    return dict(mark)


def _write_mark(path: Path, mark: dict[str, Any]) -> None:
    # Written beside it and renamed over it: a crash leaves the old mark or the new, never half of one.
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(mark, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)


def _page(context: commands.Context, window: dict[str, Any], after: dict[str, Any] | None) -> dict[str, Any]:
    params = {
        **window,
        "p_after_at": after["at"] if after else None,
        "p_after_id": after["id"] if after else None,
        "p_scan": SCAN,
    }
    answer: dict[str, Any] = commands.rpc(
        context, "export_documents", params, dict, {"p_from": "--from", "p_to": "--to"}
    )
    return answer


def _export(
    context: commands.Context,
    folder: Path,
    window: dict[str, Any],
    *,
    progress: bool,
    first: dict[str, Any] | None = None,
) -> tuple[_Written, dict[str, Any]]:
    """Every original of the window into `folder`, with index.csv and SHA256SUMS; page by page."""
    answer = first or _page(context, window, None)
    window = {**window, "p_stored_before": answer["stored_before"]}
    shown = _Progress(int(answer.get("total") or 0), enabled=progress and sys.stderr.isatty())
    written = _Written()
    with (
        (folder / INDEX_CSV).open("w", encoding=CSV_ENCODING, newline="") as index,
        (folder / SHA256SUMS).open("w", encoding="utf-8", newline="\n") as sums,
    ):
        rows = csv.writer(index, lineterminator="\r\n")
        rows.writerow(CSV_HEADER)
        while True:
            for item in answer["rows"]:
                document = Document.model_validate(item)
                name = _write_original(context, folder, document)
                rows.writerow(csv_row(document, name))
                sums.write(sha256sums_line(document.sha256, name))
                written.originals += 1
                written.bytes += document.size_bytes
                shown.show(written.originals, written.bytes)
            if answer["next"] is None:
                break
            answer = _page(context, window, answer["next"])
        index.flush()
        # The index's own digest last: the whole export checks with one `sha256sum -c SHA256SUMS`.
        index.close()
        sums.write(sha256sums_line(_sha256_of(folder / INDEX_CSV), INDEX_CSV))
    shown.done()
    return written, answer


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(UPLOAD_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _write_original(context: commands.Context, folder: Path, document: Document) -> str:
    """The original streamed from Storage into a file of its own name (a name taken already gets
    " (2)": exclusive creation, so the file system's own idea of "the same name" decides); its
    name. A Refusal, exit 6, when its bytes are not the recorded ones."""
    base = export_name(document)
    name, number = base, 1
    while True:
        try:
            file = (folder / name).open("xb")
            break
        except FileExistsError:
            number += 1
            name = numbered(base, number)
    settings = context.settings
    storage = Storage(context.http, settings.supabase_url, settings.server_key, document.bucket)
    with file:
        tee = _Tee(file)
        try:
            storage.download_to(
                document.storage_path,
                tee,
                Deadline(time.monotonic() + READ_SECONDS),
                document.size_bytes + UPLOAD_CHUNK_BYTES,
            )
            found = (
                None
                if tee.size == document.size_bytes and tee.digest.hexdigest() == document.sha256
                else (f"{tee.size:,} bytes and SHA-256 {tee.digest.hexdigest()}")
            )
        except StorageError as error:
            if error.status is None:
                raise Refusal(
                    "storage_unreachable",
                    f"cannot reach Storage at {settings.supabase_url} "
                    f"(SUPABASE_URL): {error.network}; {folder} is incomplete",
                    status=503,
                ) from error
            if error.status not in (404, 413):
                raise Refusal(
                    "storage_error",
                    f"Storage refused {document.bucket}/{document.storage_path}: "
                    f"{error.status} {error.message or ''}; {folder} is incomplete",
                ) from error
            found = "missing from Storage" if error.status == 404 else "larger than recorded"
    if found is not None:
        os.replace(folder / name, folder / (name + MISMATCH_SUFFIX))
        raise Refusal(
            "export_mismatch",
            f"{terminal_text(name)} (fax {document.fax}, {document.bucket}/{document.storage_path}) is not as "
            f"recorded: "
            f"{found}, {document.size_bytes:,} bytes and SHA-256 {document.sha256} recorded. The export stopped "
            f"and {folder} is incomplete; run {PROGRAM} verify to record the finding",
            fax=document.fax,
            attachment_id=document.id,
            file=name,
        )
    return name


def _shown(data: dict[str, Any], what: str) -> str:
    if not data["originals"]:
        return f"no original {what}: nothing written" + (f" (mark: {data['mark']})" if "mark" in data else "")
    lines = [
        f"wrote {display.count(data['originals'])} originals {what} ({display.count(data['bytes'])} bytes, "
        f"each as recorded) into {display.text(data['folder'])}",
        f"  {INDEX_CSV}: one row per original (UTF-8 with BOM, for Excel); {SHA256SUMS}: check with "
        f"`sha256sum -c {SHA256SUMS}` in that folder",
        f"  times in {data['time_zone']}; originals recorded until {data['stored_before']} "
        "(five minutes before the export: a later one is in the next)",
    ]
    if "mark" in data:
        lines.append(f"  the next --since-last continues from there (mark: {display.text(data['mark'])})")
    return "\n".join(lines)


class _Progress:
    """How far the export got, on standard error, rewritten in place: only on a terminal."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._total, self._enabled, self._shown_at = total, enabled, 0.0

    def show(self, written: int, size: int) -> None:
        now = time.monotonic()
        if not self._enabled or (now - self._shown_at < 0.2 and written < self._total):
            return
        self._shown_at = now
        line = f"export: {written:,} of {self._total:,} originals written, {size / 1_000_000:,.1f} MB"
        print("\r" + terminal_text(line, encoding_of(sys.stderr)), end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self._enabled and self._shown_at:
            print(file=sys.stderr, flush=True)
