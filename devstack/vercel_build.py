"""Builds the project with the real Vercel CLI (`vercel build`, pinned in devstack/package.json),
as a deploy does, and lays out each function's bundle the way the platform does at deploy time.

`vercel build` writes the Build Output API tree (`.vercel/output`): per function a `.func` folder
holding Vercel's runtime shim (`vc__handler__python.py`) and a `.vc-config.json` whose
`filePathMap` names the project files and the vendored dependencies (`_vendor/...`) that go
into the bundle. The deploy copies those files in; `materialize` does the same here, so the
local function host runs exactly what Vercel would run.

The build runs with the build environment of the deployed project: its environment variables
for Production (PROJECT_BUILD_ENV, the values docs/DEPLOY.md's deploy steps set with `vercel env
add`), written where `vercel pull --environment=production` writes them
(`.vercel/.env.production.local`, which `vercel build --prod` loads). With
VERCEL_PYTHON_COMPILEALL=1 among them, the pinned Python builder compiles bytecode into each
bundle (`isCompileAllFlagEnabled` in @vercel/python), so what runs here is what deploys.

The build never runs in the working tree: Vercel's Python builder writes a `pyproject.toml` and
a `uv.lock` of its own into the folder it builds, and a stale one there would shadow
`requirements.txt` on the next build. So the files a deploy would upload (.vercelignore applied)
are first copied into a fresh folder, from the working tree or from a `git archive` of a ref.

python -m devstack.vercel_build [--ref REF] [--no-bytecode] [--json]   builds (or reuses) and prints each bundle's size
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "devstack" / "node_modules" / ".bin"
BUILDS = ROOT / ".devstack" / "vercel"
# What `vercel link` would write; `vercel build` reads it and, with it, needs no network or login.
PROJECT_JSON = {"projectId": "prj_local", "orgId": "team_local", "settings": {"framework": None}}
KEEP_BUILDS = 3  # the newest; an older one may still be served by a stack started before an edit
# The project's build-time environment variables (Production and Preview; docs/DEPLOY.md, step 3):
# without VERCEL_PYTHON_COMPILEALL every cold start compiles all it imports on a read-only disk.
PROJECT_BUILD_ENV = {"VERCEL_PYTHON_COMPILEALL": "1"}
PULLED_ENV_FILE = ".env.production.local"  # what `vercel pull --environment=production` writes


@dataclass(frozen=True)
class Bundle:
    """One function as the platform would unpack it."""

    route: str  # /api/internal/document_jobs
    folder: Path  # the bundle's root (the function's task root)
    config: dict  # .vc-config.json: runtime, handler, maxDuration, environment

    @property
    def max_duration_s(self) -> int:
        return int(self.config.get("maxDuration", 300))

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.rglob("*") if p.is_file())

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.files())


@dataclass(frozen=True)
class Build:
    folder: Path  # holds project/ (the copy that was built) and bundles/

    @property
    def output(self) -> Path:
        return self.folder / "project" / ".vercel" / "output"

    @property
    def routes(self) -> list[dict]:
        return json.loads((self.output / "config.json").read_text())["routes"]

    @property
    def static(self) -> Path:
        return self.output / "static"

    def bundles(self) -> dict[str, Bundle]:
        found = {}
        for config_file in sorted((self.output / "functions").rglob("*.func/.vc-config.json")):
            func = config_file.parent
            route = "/" + func.relative_to(self.output / "functions").as_posix().removesuffix(".func")
            folder = self.folder / "bundles" / func.relative_to(self.output / "functions")
            found[route] = Bundle(route, folder, json.loads(config_file.read_text()))
        return found


def working_tree_files(root: Path = ROOT) -> list[str]:
    """What a `vercel deploy` from this folder would upload: git's files, untracked ones included
    (work in progress is what a developer deploys), less what .vercelignore leaves out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return uploaded(root, [name for name in set(listed.split("\0")) if name and (root / name).is_file()])


def uploaded(root: Path, names: list[str]) -> list[str]:
    """`names` less those .vercelignore (gitignore syntax, read by git itself) leaves out."""
    vercelignore = root / ".vercelignore"
    if not vercelignore.exists():
        return sorted(names)
    ignored = subprocess.run(
        ["git", "-c", f"core.excludesFile={vercelignore}", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=ROOT,
        input="\0".join(names).encode(),
        capture_output=True,
    )
    if ignored.returncode not in (0, 1):  # 1: nothing ignored
        raise RuntimeError(f"git check-ignore failed: {ignored.stderr.decode()}")
    return sorted(set(names) - set(ignored.stdout.decode().split("\0")))


def stage(source: Path, names: list[str], project: Path) -> None:
    for name in names:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, project / name)


def stamp(root: Path, names: list[str], build_env: dict[str, str]) -> str:
    """Changes whenever a file that goes into the build, its environment, the CLI's pinned version
    or this recipe changes."""
    digest = hashlib.sha256((ROOT / "devstack" / "package-lock.json").read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(json.dumps(build_env, sort_keys=True).encode())
    for name in names:
        path = root / name
        digest.update(f"{name}\0{path.stat().st_mode & 0o111}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Two stacks starting at once (a test starting the demo, say) build once, not twice at the same time."""
    BUILDS.mkdir(parents=True, exist_ok=True)
    with open(BUILDS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_env(bytecode: bool = True) -> dict[str, str]:
    """The project's build environment; without bytecode only for the benchmark that compares."""
    return dict(PROJECT_BUILD_ENV) if bytecode else {}


def build_working_tree(bytecode: bool = True) -> Build:
    """The build of the working tree as it is now; rebuilt only when its files changed."""
    names = working_tree_files()
    env = build_env(bytecode)
    key = stamp(ROOT, names, env)
    with _locked():
        build = Build(BUILDS / key)
        if (build.folder / "complete").exists():
            return build
        shutil.rmtree(build.folder, ignore_errors=True)
        project = build.folder / "project"
        stage(ROOT, names, project)
        run_vercel_build(project, env)
        materialize(build)
        (build.folder / "complete").write_text(key)
        _prune()
        return build


def build_ref(ref: str, folder: Path, bytecode: bool = True) -> Build:
    """A build of `git archive <ref>` in `folder`: exactly what is committed, nothing else."""
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
    checkout = folder / "checkout"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(checkout, filter="data")
    return build_folder(checkout, folder, bytecode)


def build_folder(source: Path, folder: Path, bytecode: bool = True) -> Build:
    """A build, in `folder`, of the project in `source` (a checkout, or a test's own project)."""
    names = [p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()]
    stage(source, uploaded(source, names), folder / "project")
    run_vercel_build(folder / "project", build_env(bytecode))
    build = Build(folder)
    materialize(build)
    return build


def run_vercel_build(project: Path, project_env: dict[str, str]) -> None:
    """`vercel build --prod --yes` in `project`, with `project_env` pulled as the project's
    Production variables; what it printed goes to vercel-build.log beside it."""
    (project / ".vercel").mkdir(exist_ok=True)
    (project / ".vercel" / "project.json").write_text(json.dumps(PROJECT_JSON))
    (project / ".vercel" / PULLED_ENV_FILE).write_text("".join(f'{k}="{v}"\n' for k, v in project_env.items()))
    vercel = NODE_BIN / "vercel"
    if not vercel.exists():
        raise RuntimeError(f"{vercel} is missing: run `npm ci --prefix devstack` (the make targets do)")
    env = {
        **os.environ,
        # The Python builder runs `uv` from PATH; the virtualenv has it (requirements-dev.txt).
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "VERCEL_TELEMETRY_DISABLED": "1",
        "NO_UPDATE_NOTIFIER": "1",
    }
    # Only the pulled file says what the project's build environment is.
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", *PROJECT_BUILD_ENV):
        env.pop(name, None)
    result = subprocess.run(
        [str(vercel), "build", "--prod", "--yes"], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    (project.parent / "vercel-build.log").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"vercel build failed ({result.returncode}):\n{result.stdout}{result.stderr}")


def materialize(build: Build) -> None:
    """Copy into each bundle what the deploy would: the .func folder's files and its filePathMap."""
    project = build.folder / "project"
    for bundle in build.bundles().values():
        func = build.output / "functions" / (bundle.route.lstrip("/") + ".func")
        for source in func.rglob("*"):
            if source.is_file() and source.name != ".vc-config.json":
                _copy(source, bundle.folder / source.relative_to(func))
        for inside, outside in bundle.config.get("filePathMap", {}).items():
            _copy(project / outside, bundle.folder / inside)


def _copy(source: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, destination)


def _prune() -> None:
    builds = sorted(
        (p for p in BUILDS.iterdir() if (p / "complete").exists()), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for old in builds[KEEP_BUILDS:]:
        shutil.rmtree(old, ignore_errors=True)
    for unfinished in (p for p in BUILDS.iterdir() if p.is_dir() and not (p / "complete").exists()):
        shutil.rmtree(unfinished, ignore_errors=True)  # a build interrupted earlier; we hold the lock


def bundle_report(build: Build) -> dict[str, dict[str, int]]:
    return {
        route: {"files": len(bundle.files()), "bytes": bundle.size_bytes()} for route, bundle in build.bundles().items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", help="build `git archive REF` instead of the working tree")
    parser.add_argument("--no-bytecode", action="store_true", help="without the project's VERCEL_PYTHON_COMPILEALL")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bytecode = not args.no_bytecode
    with tempfile.TemporaryDirectory(prefix="document-jobs-build-") as scratch:
        build = build_ref(args.ref, Path(scratch) / "build", bytecode) if args.ref else build_working_tree(bytecode)
        report = bundle_report(build)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for route, size in report.items():
        print(f"{route}: {size['files']} files, {size['bytes'] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
