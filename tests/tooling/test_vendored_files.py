"""public/admin/vendor/ holds exactly the pinned packages' files (devstack/tools/vendor.py): Vercel
publishes them as committed, so a copy that drifted from devstack/package-lock.json, or was edited
by hand, would be what operators run; and a file no package has (a leftover of an older version)
would be published too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from devstack.tools import vendor

PACKAGES = ("@supabase/supabase-js", "pdfjs-dist")


def test_every_vendored_file_is_its_pinned_packages_file() -> None:
    stale = vendor.differing()
    if stale:
        pytest.fail(f"public/admin/vendor/{', '.join(stale)} differ from the pinned package: run "
                    f"`{vendor.REGENERATE}`", pytrace=False)  # fmt: skip
    lock = json.loads((vendor.ROOT / "devstack" / "package-lock.json").read_text())
    assert sorted({package for package, _ in vendor.VENDORED.values()}) == sorted(PACKAGES)
    for package in PACKAGES:
        assert lock["packages"][f"node_modules/{package}"]["version"] == vendor.pinned_version(package)
    assert vendor.committed() == sorted(vendor.expected())


def test_pdfjs_is_vendored_with_what_the_viewer_loads_and_nothing_of_its_viewer_app() -> None:
    files = vendor.committed()
    for needed in ("pdfjs/pdf.min.mjs", "pdfjs/pdf.worker.min.mjs", "pdfjs/LICENSE", "pdfjs/cmaps/LICENSE",
                   "pdfjs/cmaps/UniJIS-UCS2-H.bcmap", "pdfjs/cmaps/Adobe-Japan1-UCS2.bcmap",
                   "pdfjs/standard_fonts/LiberationSans-Regular.ttf", "pdfjs/standard_fonts/LICENSE_LIBERATION",
                   "pdfjs/standard_fonts/LICENSE_FOXIT"):  # fmt: skip
        assert needed in files
    assert not [name for name in files if name.endswith(".map") or "/web/" in name or name.endswith(".wasm")]


def test_a_changed_copy_a_stray_file_or_another_installed_version_is_caught(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "vendor"
    shutil.copytree(vendor.VENDOR, copy)
    monkeypatch.setattr(vendor, "VENDOR", copy)
    assert vendor.differing() == []
    script = copy / "supabase.js"
    script.write_bytes(script.read_bytes().replace(b"supabase", b"sUpabase", 1))
    assert vendor.differing() == ["supabase.js"]
    (copy / "supabase.LICENSE").unlink()
    assert vendor.differing() == ["supabase.js", "supabase.LICENSE"]
    cmap = copy / "pdfjs" / "cmaps" / "UniJIS-UCS2-H.bcmap"
    cmap.write_bytes(cmap.read_bytes()[:-1])
    (copy / "pdfjs" / "cmaps" / "Old-H.bcmap").write_bytes(b"\0")
    assert vendor.differing() == ["supabase.js", "supabase.LICENSE", "pdfjs/cmaps/UniJIS-UCS2-H.bcmap",
                                  "pdfjs/cmaps/Old-H.bcmap"]  # fmt: skip
    vendor.write()
    assert vendor.differing() == []
    assert not (copy / "pdfjs" / "cmaps" / "Old-H.bcmap").exists()

    modules = tmp_path / "node_modules"
    for package in PACKAGES:
        unused = shutil.ignore_patterns("src", "types", "legacy", "web", "*.map", "*.cjs", "*.d.*")
        shutil.copytree(vendor.NODE_MODULES / package, modules / package, ignore=unused)
    monkeypatch.setattr(vendor, "NODE_MODULES", modules)
    assert vendor.differing() == []
    for package in PACKAGES:
        manifest = modules / package / "package.json"
        pinned = manifest.read_text()
        manifest.write_text(json.dumps({**json.loads(pinned), "version": "2.0.0"}))
        with pytest.raises(vendor.NotPinned, match=rf"{package} 2\.0\.0 is installed"):
            vendor.differing()
        manifest.write_text(pinned)
