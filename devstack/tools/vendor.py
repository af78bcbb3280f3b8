"""public/admin/vendor/: the third-party files the admin screen loads, copied byte for byte from the
npm packages pinned in devstack/package-lock.json.

Vercel publishes public/ as it is (this project has no build step), so a browser build the page
needs is committed there, and it must be exactly the pinned package's file: a reviewer sees an
upgrade as a change of devstack/package-lock.json plus a new copy, never as edits to a minified file.

- Supabase's browser client: @supabase/supabase-js's UMD build (the global `supabase`, whose
  `AuthClient` is @supabase/auth-js), for the page's session (public/admin/session.js).
  @supabase/auth-js ships no single-file browser build: its ES modules import `tslib` by a bare
  name, which a browser cannot resolve without a bundler or an inline import map (which the page's
  policy forbids).
- Mozilla's PDF.js (pdfjs-dist), for the fax viewer (public/admin/viewer.js): its module build and
  its worker (minified, without their source maps), the CMaps (a PDF whose Japanese text uses a
  font it does not embed names one, such as UniJIS-UCS2-H, and PDF.js draws it with the system's
  font through Adobe-Japan1-UCS2) and the standard fonts (the PDF standard 14 fonts' metrics-
  compatible replacements, for a PDF that names one without embedding it), each folder whole, with
  its licence. Not its viewer application (web/), its WebAssembly decoders (wasm/: the viewer turns
  them off, see viewer.js) nor its colour profiles (iccs/, which only those decoders read).

    python -m devstack.tools.vendor           copy the files (also: make vendor)
    python -m devstack.tools.vendor --check   exit 1 naming every file that differs

tests/tooling/test_vendored_files.py runs the check in `make test`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "devstack" / "node_modules"
VENDOR = ROOT / "public" / "admin" / "vendor"
REGENERATE = "make vendor"

# What is committed under public/admin/vendor/ and where it comes from: (package, its file). A name
# ending in "/" is a folder that holds exactly the package folder's files (not its subfolders').
VENDORED: dict[str, tuple[str, str]] = {
    "supabase.js": ("@supabase/supabase-js", "dist/umd/supabase.js"),
    # MIT: the copyright notice travels with the copy (the UMD file carries none of its own).
    "supabase.LICENSE": ("@supabase/supabase-js", "LICENSE"),
    "pdfjs/pdf.min.mjs": ("pdfjs-dist", "build/pdf.min.mjs"),
    "pdfjs/pdf.worker.min.mjs": ("pdfjs-dist", "build/pdf.worker.min.mjs"),
    # Apache-2.0; the CMaps' (Adobe's, BSD-3-Clause) and the fonts' (Foxit's, Liberation's under the
    # SIL Open Font License) are files of their folders.
    "pdfjs/LICENSE": ("pdfjs-dist", "LICENSE"),
    "pdfjs/cmaps/": ("pdfjs-dist", "cmaps"),
    "pdfjs/standard_fonts/": ("pdfjs-dist", "standard_fonts"),
}


class NotPinned(Exception):
    """The installed package is not the version devstack/package.json pins (run `npm ci`)."""


def pinned_version(package: str) -> str:
    manifest = json.loads((ROOT / "devstack" / "package.json").read_text())
    return str(manifest["devDependencies"][package])


def source(package: str, file: str) -> Path:
    """The package's file (or folder) in devstack/node_modules, once the installed version is the pinned one."""
    installed = json.loads((NODE_MODULES / package / "package.json").read_text())["version"]
    if installed != pinned_version(package):
        raise NotPinned(f"{package} {installed} is installed, devstack/package.json pins {pinned_version(package)}")
    return NODE_MODULES / package / file


def expected() -> dict[str, Path]:
    """Every file that belongs under public/admin/vendor/ (its path there, with "/"): its source."""
    files: dict[str, Path] = {}
    for name, (package, file) in VENDORED.items():
        if name.endswith("/"):
            folder = source(package, file)
            files.update({name + path.name: path for path in sorted(folder.iterdir()) if path.is_file()})
        else:
            files[name] = source(package, file)
    return files


def committed() -> list[str]:
    """The files under public/admin/vendor/ now (paths with "/")."""
    return sorted(path.relative_to(VENDOR).as_posix() for path in VENDOR.rglob("*") if path.is_file())


def differing() -> list[str]:
    """The committed files (by path under vendor/) that are not byte for byte their package's file,
    those that are missing, and those that are there but belong to no package."""
    files = expected()
    stale = [name for name, path in files.items()
             if not (VENDOR / name).is_file() or (VENDOR / name).read_bytes() != path.read_bytes()]  # fmt: skip
    return stale + [name for name in committed() if name not in files]


def write() -> None:
    """The files copied in, anything else under vendor/ removed (a file an older version had)."""
    files = expected()
    for name in committed():
        if name not in files:
            (VENDOR / name).unlink()
    for name, path in files.items():
        (VENDOR / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, VENDOR / name)
    for folder in sorted((p for p in VENDOR.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        stale = differing()
        for name in stale:
            print(f"public/admin/vendor/{name} differs from its pinned package: run `{REGENERATE}`")
        return 1 if stale else 0
    if argv:
        print(__doc__)
        return 2
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
