"""public/admin/vendor/ holds exactly the pinned packages' files (devstack/tools/vendor.py): Vercel
publishes them as committed, so a copy that drifted from devstack/package-lock.json, or was edited
by hand, would be what operators run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from devstack.tools import vendor


def test_every_vendored_file_is_its_pinned_packages_file() -> None:
    stale = vendor.differing()
    if stale:
        pytest.fail(f"public/admin/vendor/{', '.join(stale)} differ from the pinned package: run "
                    f"`{vendor.REGENERATE}`", pytrace=False)  # fmt: skip
    lock = json.loads((vendor.ROOT / "devstack" / "package-lock.json").read_text())
    for package, _ in vendor.VENDORED.values():
        assert lock["packages"][f"node_modules/{package}"]["version"] == vendor.pinned_version(package)
    assert sorted(path.name for path in vendor.VENDOR.iterdir()) == sorted(vendor.VENDORED)


def test_a_changed_copy_or_another_installed_version_is_caught(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "vendor"
    shutil.copytree(vendor.VENDOR, copy)
    monkeypatch.setattr(vendor, "VENDOR", copy)
    assert vendor.differing() == []
    script = copy / "supabase.js"
    script.write_bytes(script.read_bytes().replace(b"supabase", b"sUpabase", 1))
    assert vendor.differing() == ["supabase.js"]
    (copy / "supabase.LICENSE").unlink()
    assert vendor.differing() == ["supabase.js", "supabase.LICENSE"]
    vendor.write()
    assert vendor.differing() == []

    modules = tmp_path / "node_modules"
    shutil.copytree(vendor.NODE_MODULES / "@supabase" / "supabase-js", modules / "@supabase" / "supabase-js",
                    ignore=shutil.ignore_patterns("src", "*.map", "*.cjs", "*.mjs", "*.d.*"))  # fmt: skip
    manifest = modules / "@supabase" / "supabase-js" / "package.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": "2.0.0"}))
    monkeypatch.setattr(vendor, "NODE_MODULES", modules)
    with pytest.raises(vendor.NotPinned, match=r"@supabase/supabase-js 2\.0\.0 is installed"):
        vendor.differing()
