"""Debian's chromium, driven headless by Playwright (the Python package): the browser test and the
demo's screenshot of the admin screen.

`playwright install` downloads its own browser builds from a host these machines cannot reach, so
the browser is Debian's, installed here with apt-get when missing (like the PostgreSQL packages,
devstack/cluster.py), with a Japanese font (the page shows Japanese file names and subjects), and
launched with executable_path.

python -m devstack.browser install    installs them when missing (make test and make demo run it)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM = Path("/usr/bin/chromium")
DEBIAN_PACKAGES = ("chromium", "fonts-ipafont-gothic")
FONT = Path("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf")
# What a headless Debian chromium needs here: no sandbox (it runs as root in CI), no GPU, no
# background traffic of its own (the machine reaches nothing but package registries).
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
               "--disable-dev-shm-usage"]  # fmt: skip


def ensure_chromium() -> None:
    if CHROMIUM.exists() and FONT.exists():
        return
    if os.geteuid() != 0:
        raise SystemExit(f"devstack: chromium is missing; run: sudo apt-get install -y {' '.join(DEBIAN_PACKAGES)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES]
    subprocess.run(install, check=True, env=env)


def launch(playwright: Playwright) -> Browser:
    ensure_chromium()
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)


def main(argv: list[str]) -> int:
    if argv != ["install"]:
        print(__doc__, file=sys.stderr)
        return 2
    ensure_chromium()
    version = subprocess.run([str(CHROMIUM), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"devstack: {version or 'chromium'} at {CHROMIUM}; font {FONT.name}")
    return 0 if shutil.which(str(CHROMIUM)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
