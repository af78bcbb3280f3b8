"""Wheels of the distributions installed here, for a `pip install --no-index --find-links` that
needs no network: this machine's pip cache holds no wheel (`pip cache list` is empty; .venv was
installed with it off), and a virtualenv that saw this one's packages (--system-site-packages)
would hide a requirement that a requirements file forgot.

Each wheel is the installed distribution packed again: its files as its RECORD lists them, under
its own .dist-info (with its WHEEL tags and METADATA), a new RECORD with their hashes. Console
scripts are left out (pip writes them again from entry_points.txt), and so are .pyc files. Only
the distributions the requirement files name, and what those require in turn (their metadata's
Requires-Dist for this Python), go in: the wheelhouse holds exactly what pip must find, and pip
installs only what the files ask for, so a module the CLI imports that no file names is missing
from the new virtualenv.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import re
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DROPPED = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def requirements_of(path: Path) -> list[Requirement]:
    """The requirements of a requirements file, its -r includes followed."""
    found: list[Requirement] = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            found += requirements_of(path.parent / line[3:].strip())
        else:
            found.append(Requirement(line))
    return found


def closure(requirements: list[Requirement]) -> dict[str, importlib.metadata.Distribution]:
    """The installed distributions the requirements need, by canonical name."""
    wanted: dict[str, importlib.metadata.Distribution] = {}
    todo = [(requirement, frozenset(requirement.extras)) for requirement in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        requirement, extras = todo.pop()
        name = canonicalize_name(requirement.name)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        distribution = importlib.metadata.distribution(requirement.name)
        wanted[name] = distribution
        for text in distribution.requires or []:
            child = Requirement(text)
            environments = [{"extra": extra} for extra in extras] or [{"extra": ""}]
            if child.marker is None or any(child.marker.evaluate(env) for env in environments):
                todo.append((child, frozenset(child.extras)))
    return wanted


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(distribution: importlib.metadata.Distribution, into: Path) -> Path:
    """One installed distribution as a wheel in `into`."""
    info = (
        Path(str(distribution.locate_file("")))
        / next(f for f in distribution.files or [] if f.parts[0].endswith(".dist-info")).parts[0]
    )
    tags = [tag.split("-") for tag in re.findall(r"^Tag: (.+)$", (info / "WHEEL").read_text(), re.MULTILINE)]
    # The compressed tag set of a wheel's name (py2.py3-none-any): each part's values, in order.
    compressed = "-".join(".".join(dict.fromkeys(tag[part] for tag in tags)) for part in range(3))
    stem = info.name.removesuffix(".dist-info")
    wheel = into / f"{stem}-{compressed}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in distribution.files or []:
            name = file.as_posix()
            if name.startswith("..") or name.endswith(".pyc") or (file.parts[0] == info.name and file.name in DROPPED):
                continue
            path = Path(str(distribution.locate_file(file)))
            if not path.is_file():
                continue
            data = path.read_bytes()
            archive.writestr(name, data)
            writer.writerow([name, _digest(data), len(data)])
        writer.writerow([f"{info.name}/RECORD", "", ""])
        archive.writestr(f"{info.name}/RECORD", record.getvalue())
    return wheel


def wheelhouse(requirements_file: Path, into: Path) -> list[Path]:
    """Wheels of every distribution a requirements file needs, as installed here."""
    into.mkdir(parents=True, exist_ok=True)
    return [repack(distribution, into) for distribution in closure(requirements_of(requirements_file)).values()]
