"""What Vercel would deploy from the committed tree: a real `vercel build` of `git archive HEAD`
(DEPLOY_TEST_REF picks another commit) with the project's build environment
(VERCEL_PYTHON_COMPILEALL=1, as docs/DEPLOY.md's deploy steps set it), its bundles laid out as the
deploy lays them out, and both functions probed through Vercel's own Python runtime inside them."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from devstack import stack, vercel_build
from devstack.standins.function_host import FunctionHost, base_interpreter
from devstack.tools import inbound

pytestmark = pytest.mark.slow  # a real `vercel build` of the committed tree, of its own

ROOT = Path(__file__).resolve().parents[2]
WORKER, WEBHOOK, ADMIN = "/api/internal/document_jobs", "/api/webhooks/resend", "/api/admin"
OWN_SOURCE = {WORKER: "api/internal/document_jobs.py", WEBHOOK: "api/webhooks/resend.py", ADMIN: "api/admin.py"}
ENDPOINT = {WORKER: "lib.worker.endpoint", WEBHOOK: "lib.webhook.endpoint", ADMIN: "lib.screen.endpoint"}


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> vercel_build.Build:
    return vercel_build.build_ref(os.environ.get("DEPLOY_TEST_REF", "HEAD"), tmp_path_factory.mktemp("deploy"))


def requirements(build: vercel_build.Build) -> dict[str, str]:
    """name -> pinned version, from the requirements.txt that was built."""
    pins = {}
    for line in (build.folder / "project" / "requirements.txt").read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9_.\[\]-]+)==(\S+)", line.strip()):
            pins[re.sub(r"\[.*\]", "", match.group(1))] = match.group(2)
    return pins


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def test_the_functions_are_built_for_the_python_vercel_runs(build) -> None:
    bundles = build.bundles()
    assert set(bundles) == {WORKER, WEBHOOK, ADMIN}
    assert {bundle.config["runtime"] for bundle in bundles.values()} == {"python3.12"}
    assert (ROOT / ".python-version").read_text().strip() == "3.12"


def test_every_requirement_is_installed_at_its_pinned_version(build) -> None:
    pins = requirements(build)
    assert {"supabase", "httpx", "pydantic", "pydantic-settings", "standardwebhooks", "pyjwt"} <= set(pins)
    for bundle in build.bundles().values():
        dists = [info.name.removesuffix(".dist-info") for info in (bundle.folder / "_vendor").glob("*.dist-info")]
        installed = {normalized(dist.rsplit("-", 1)[0]): dist.rsplit("-", 1)[1] for dist in dists}
        for name, version in pins.items():
            assert installed.get(normalized(name)) == version, f"{bundle.route}: {name}=={version} not installed"


def in_bundle(bundle: vercel_build.Bundle, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The base interpreter in the bundle, as the runtime starts it (PYTHONPATH=_vendor, no virtualenv)."""
    return subprocess.run(
        [base_interpreter(bundle.config["runtime"]), *arguments],
        cwd=bundle.folder,
        env={"PATH": os.environ["PATH"], **bundle.config["environment"]},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_requirement_imports_inside_the_bundle(build) -> None:
    """Imported as the runtime would (PYTHONPATH=_vendor, the base interpreter, no virtualenv):
    the worker imports supabase only after authenticating, so a probe alone would not show it."""
    script = (
        "import importlib, importlib.metadata as md, json, sys\n"
        "wanted = {n.lower().replace('_', '-') for n in json.loads(sys.argv[1])}\n"
        "for module, dists in md.packages_distributions().items():\n"
        "    if module.isidentifier() and not module.startswith('_') and\\\n"
        "       {d.lower().replace('_', '-') for d in dists} & wanted:\n"
        "        importlib.import_module(module)\n"
        "        wanted -= {d.lower().replace('_', '-') for d in dists}\n"
        "print(json.dumps(sorted(wanted)))\n"
    )
    for bundle in build.bundles().values():
        result = in_bundle(bundle, "-c", script, json.dumps(list(requirements(build))))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == [], f"{bundle.route}: not importable: {result.stdout}"


def _imported_modules(source: Path) -> set[str]:
    """Every module `source` imports, at the top or inside a function (`import a.b`, `from a import
    b` naming a module or a name); not those imported only for the type checker."""
    found: set[str] = set()

    def visit(nodes: Iterator[ast.AST] | list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            visit(ast.iter_child_nodes(node))

    visit(ast.parse(source.read_text()).body)
    return found


def lib_files_loaded(function: str) -> set[str]:
    """The lib/ files the function's file loads, followed through lib/ (each package's __init__.py
    with the modules below it)."""
    loaded: set[str] = set()
    todo = [function]
    while todo:
        for module in _imported_modules(ROOT / todo.pop()):
            parts = module.split(".")
            for depth in range(1, len(parts) + 1) if parts[0] == "lib" else ():
                base = Path(*parts[:depth])
                for candidate in (base / "__init__.py", base.with_suffix(".py")):
                    if (ROOT / candidate).is_file() and candidate.as_posix() not in loaded:
                        loaded.add(candidate.as_posix())
                        todo.append(candidate.as_posix())
    return loaded


def bytecode(source: str) -> str:
    path = Path(source)
    return (path.parent / "__pycache__" / f"{path.stem}.cpython-312.pyc").as_posix()


def test_each_bundle_holds_only_its_own_function_and_lib(build) -> None:
    """A bundle holds its function and exactly the lib/ modules that function imports (vercel.json's
    excludeFiles per package): another function's module, or a shared one it never loads, is junk."""
    for route, bundle in build.bundles().items():
        own = {
            path.relative_to(bundle.folder).as_posix()
            for path in bundle.files()
            if not path.relative_to(bundle.folder).as_posix().startswith("_vendor/")
        }
        loaded = lib_files_loaded(OWN_SOURCE[route])
        allowed = {"vc__handler__python.py", OWN_SOURCE[route], bytecode(OWN_SOURCE[route])}
        allowed |= loaded | {bytecode(source) for source in loaded}
        assert own - allowed == set(), f"{route} bundles what its function never imports: {sorted(own - allowed)}"
        assert loaded - own == set(), f"{route} misses what its function imports: {sorted(loaded - own)}"
        assert {OWN_SOURCE[route], ENDPOINT[route].replace(".", "/") + ".py"} <= own


def cached(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.cpython-312.pyc"


def test_both_bundles_carry_bytecode_for_lib_and_vendor(build) -> None:
    """Else every cold start compiles all it imports: the runtime's disk is read-only and it sets
    PYTHONDONTWRITEBYTECODE (docs/BENCHMARKS.md, cold start with and without)."""
    assert "Compiling Python bytecode..." in (build.folder / "vercel-build.log").read_text()
    for route, bundle in build.bundles().items():
        sources = [p for p in bundle.files() if p.suffix == ".py" and p.name != "vc__handler__python.py"]
        for folder in ("lib", "_vendor"):
            inside = [p for p in sources if p.relative_to(bundle.folder).as_posix().startswith(f"{folder}/")]
            missing = [p.relative_to(bundle.folder).as_posix() for p in inside if not cached(p).is_file()]
            assert inside and missing == [], f"{route}: no bytecode for {missing[:5]} ({len(missing)})"
        # Unchecked-hash bytecode (the flags word is 1): valid whatever the unpacked files' times are.
        assert cached(bundle.folder / "lib" / "settings.py").read_bytes()[4:8] == (1).to_bytes(4, "little")
        # And the runtime reads it: -v names every code object it loads from a .pyc.
        loaded = in_bundle(bundle, "-v", "-c", f"import {ENDPOINT[route]}, supabase")
        assert loaded.returncode == 0, loaded.stderr
        for module in (ENDPOINT[route].replace(".", "/"), "_vendor/supabase/_sync/client", "_vendor/pydantic/main"):
            source = bundle.folder / f"{module}.py"
            assert f"# code object from '{cached(source)}'" in loaded.stderr, f"{route}: {module} compiled at start"


def test_the_deploy_steps_set_the_bytecode_variable_and_nothing_switches_it_off(build) -> None:
    """The builder skips bytecode when the project has an install or pre-deploy command."""
    guide = (ROOT / "docs" / "DEPLOY.md").read_text()  # the deploy steps live there
    for name, value in vercel_build.PROJECT_BUILD_ENV.items():
        for target in ("production", "preview"):
            assert f"vercel env add {name} {target} --value {value} --yes" in guide
    configured = json.loads((ROOT / "vercel.json").read_text())
    assert {"installCommand", "buildCommand", "builds"} & set(configured) == set()
    assert not (ROOT / "pyproject.toml").exists()  # nor a [tool.vercel] install script there


def test_nothing_but_public_is_published_as_static_files(build) -> None:
    published = {p.relative_to(build.static).as_posix() for p in build.static.rglob("*") if p.is_file()}
    public = {p.relative_to(ROOT / "public").as_posix() for p in (ROOT / "public").rglob("*") if p.is_file()}
    assert published == public
    assert {"robots.txt", "admin/app.js", "admin/admin.css"} <= published
    assert {name.split("/")[0] for name in published} == {"robots.txt", "admin"}


def test_the_rewrites_headers_and_max_durations_are_in_the_output(build) -> None:
    rewrites = [r for r in build.routes if r.get("src") == "^/api/internal/document-jobs$"]
    assert [r["dest"] for r in rewrites] == [WORKER]
    admin = [r["dest"] for r in build.routes if r.get("dest") == ADMIN]
    assert len(admin) == 2, "/admin and /api/admin/... reach the admin function"
    [assets] = [r for r in build.routes if "headers" in r]
    assert re.match(assets["src"], "/admin/app.js") and not re.match(assets["src"], "/admin")
    assert assets["headers"]["X-Content-Type-Options"] == "nosniff"
    configured = json.loads((ROOT / "vercel.json").read_text())["functions"]
    bundles = build.bundles()
    assert bundles[WORKER].max_duration_s == configured["api/internal/document_jobs.py"]["maxDuration"] == 300
    assert bundles[WEBHOOK].max_duration_s == configured["api/webhooks/resend.py"]["maxDuration"]


@pytest.fixture(scope="module")
def deployed(build, tmp_path_factory, stack_env) -> Iterator[str]:
    """The build served through Vercel's runtime, with the local stack's Supabase and secrets."""
    host = FunctionHost(build, stack_env, tmp_path_factory.mktemp("host"))
    threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{host.server_address[1]}"
    host.shutdown()
    host.stop_instances()


def test_the_worker_refuses_callers_without_the_secret(deployed) -> None:
    url = deployed + "/api/internal/document-jobs"
    assert httpx.post(url, timeout=60).status_code == 401
    wrong = httpx.post(url, headers={"Authorization": "Bearer not-the-secret"}, timeout=60)
    assert (wrong.status_code, wrong.json()) == (401, {"error": "unauthorized"})
    assert httpx.get(url, timeout=60).status_code == 405


def test_the_worker_runs_an_invocation_when_called_with_the_secret(deployed, stack_env, db) -> None:
    answer = httpx.post(
        deployed + "/api/internal/document-jobs",
        headers={"Authorization": f"Bearer {stack_env['INTERNAL_FUNCTION_SECRET']}"},
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["claimed"] == 0  # the queue is empty: it imported supabase and asked the database


def test_the_admin_function_serves_its_page_and_refuses_an_api_call_without_a_token(deployed) -> None:
    page = httpx.get(deployed + "/admin", timeout=60)
    assert page.status_code == 200 and "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert '<script type="module" src="/admin/app.js"></script>' in page.text
    assert httpx.get(deployed + "/admin/app.js", timeout=60).headers["Content-Type"].startswith("text/javascript")
    answer = httpx.get(deployed + "/api/admin/overview", timeout=60)
    assert (answer.status_code, answer.json()["error"]) == (401, "missing_token")


def test_the_webhook_refuses_unsigned_and_badly_signed_deliveries(deployed, stack_env) -> None:
    body = inbound.event({"email_id": "deploy-probe"})
    assert httpx.post(deployed + "/api/webhooks/resend", content=body, timeout=60).status_code == 401
    headers = inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body)
    headers["svix-signature"] = "v1," + "A" * 44
    assert httpx.post(deployed + "/api/webhooks/resend", content=body, headers=headers, timeout=60).status_code == 401


def test_a_signed_webhook_while_the_database_is_down_gets_5xx_and_records_nothing(deployed, stack_env, db) -> None:
    database = stack.attach(stack_env["DEVSTACK_FOLDER"]).database
    body = inbound.event({"email_id": "deploy-probe-db-down", "from": "fax@example.jp", "to": ["in@example.com"]})
    database.stop_server()
    try:
        answer = httpx.post(
            deployed + "/api/webhooks/resend",
            content=body,
            headers=inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body),
            timeout=60,
        )
    finally:
        database.start_server()
    assert answer.status_code >= 500, answer.text
    # A new connection: the fixture's died with the server.
    with psycopg.connect(stack_env["DATABASE_URL"]) as conn:
        count = conn.execute(
            "select count(*) from fax_received_emails where provider_email_id = 'deploy-probe-db-down'"
        ).fetchone()
    assert count == (0,)
