"""public/admin/vendor/: the third-party files the admin screen loads, copied byte for byte from the
npm packages pinned in devstack/package-lock.json.

Vercel publishes public/ as it is (this project has no build step), so a browser build the page
needs is committed there, and it must be exactly the pinned package's file: a reviewer sees an
upgrade as a change of devstack/package-lock.json plus a new copy, never as edits to a minified file.
The page loads Supabase's own browser client, @supabase/supabase-js's UMD build (the global
`supabase`, whose `AuthClient` is @supabase/auth-js), for its session (public/admin/session.js).
@supabase/auth-js ships no single-file browser build: its ES modules import `tslib` by a bare name,
which a browser cannot resolve without a bundler or an inline import map (which the page's policy
forbids).

    python -m devstack.tools.vendor           copy the files (also: make vendor)
    python -m devstack.tools.vendor --check   exit 1 naming every file that differs

tests/tooling/test_vendored_files.py runs the check in `make test`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "devstack" / "node_modules"
VENDOR = ROOT / "public" / "admin" / "vendor"
REGENERATE = "make vendor"

# The committed file (under public/admin/vendor/) and where it comes from: (package, its file).
VENDORED: dict[str, tuple[str, str]] = {
    "supabase.js": ("@supabase/supabase-js", "dist/umd/supabase.js"),
    # MIT: the copyright notice travels with the copy (the UMD file carries none of its own).
    "supabase.LICENSE": ("@supabase/supabase-js", "LICENSE"),
}


class NotPinned(Exception):
    """The installed package is not the version devstack/package.json pins (run `npm ci`)."""


def pinned_version(package: str) -> str:
    manifest = json.loads((ROOT / "devstack" / "package.json").read_text())
    return str(manifest["devDependencies"][package])


def source(package: str, file: str) -> Path:
    """The package's file in devstack/node_modules, once the installed version is the pinned one."""
    installed = json.loads((NODE_MODULES / package / "package.json").read_text())["version"]
    if installed != pinned_version(package):
        raise NotPinned(f"{package} {installed} is installed, devstack/package.json pins {pinned_version(package)}")
    return NODE_MODULES / package / file


def differing() -> list[str]:
    """The committed files (by name) that are not byte for byte their package's file."""
    return [
        name
        for name, (package, file) in VENDORED.items()
        if not (VENDOR / name).is_file() or (VENDOR / name).read_bytes() != source(package, file).read_bytes()
    ]


def write() -> None:
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name, (package, file) in VENDORED.items():
        (VENDOR / name).write_bytes(source(package, file).read_bytes())


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
