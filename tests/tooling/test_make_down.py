"""`make down` says what it did even when there was nothing to do (the stopping itself is
test_make_up.py's, on a real stack)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack import __main__ as devstack_main
from devstack import lifecycle, stack


def test_down_with_no_stack_up_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # A registry of its own: this checkout's stacks, if any, are left alone.
    monkeypatch.setattr(lifecycle, "REGISTRY", tmp_path / "stacks")
    monkeypatch.setattr(stack, "ENV_FILE", tmp_path / "env")
    assert devstack_main.main(["down"]) == 0
    assert capsys.readouterr().out == "devstack: no stack was up; nothing to stop\n"
