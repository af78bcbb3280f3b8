"""A throwaway PostgreSQL 15 cluster shaped like a Supabase project's database.

Own data folder and socket in a fresh temporary folder (never the system's default cluster),
real pg_cron and pgTAP from Debian's packages (installed here when missing), the pg_net and
Vault stand-ins from devstack/extensions, Supabase's roles and default privileges
(bootstrap.sql), then the project's migrations applied as "postgres", which, as on hosted
Supabase, is not a superuser.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
DEBIAN_PACKAGES = (
    "postgresql-15",
    "postgresql-15-cron",
    "postgresql-15-pgtap",
    "libtap-parser-sourcehandler-pgtap-perl",
)
PORT = 54322  # names the socket file only: the cluster listens on no TCP port.
SUPERUSER = "supabase_admin"
DATABASE = "postgres"

SERVER_SETTINGS = {
    "listen_addresses": "''",
    "port": str(PORT),
    "shared_preload_libraries": "'pg_cron'",
    "cron.database_name": f"'{DATABASE}'",
    "cron.use_background_workers": "on",
    "max_worker_processes": "32",
    "max_connections": "200",
    "timezone": "'UTC'",
    # A test cluster thrown away after each run: durability buys nothing here.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


def _sharedir() -> Path:
    return Path(
        subprocess.run([PG_BIN / "pg_config", "--sharedir"], check=True, capture_output=True, text=True).stdout.strip()
    )


def ensure_debian_packages() -> None:
    """Install PostgreSQL 15, pg_cron and pgTAP from Debian when any of them is missing."""
    have_server = (PG_BIN / "postgres").exists()
    have_extensions = have_server and all(
        (_sharedir() / "extension" / f"{name}.control").exists() for name in ("pg_cron", "pgtap")
    )
    if have_server and have_extensions and shutil.which("pg_prove"):
        return
    if os.geteuid() != 0:
        raise SystemExit(f"devstack: missing Debian packages; run: sudo apt-get install -y {' '.join(DEBIAN_PACKAGES)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *DEBIAN_PACKAGES], check=True, env=env)


def install_standin_extensions() -> None:
    """Put the pg_net and Vault stand-ins where "create extension" finds them."""
    target = _sharedir() / "extension"
    for source in (ROOT / "devstack" / "extensions").iterdir():
        destination = target / source.name
        if destination.exists() and destination.read_bytes() == source.read_bytes():
            continue
        if os.geteuid() != 0:
            raise SystemExit(f"devstack: cannot install {source.name} into {target}; run once as root")
        shutil.copyfile(source, destination)


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its folder holds the data, the socket and the server log."""

    folder: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    def conninfo(self, user: str = "postgres") -> str:
        return f"host={self.folder} port={PORT} dbname={DATABASE} user={user}"

    def libpq_env(self, user: str = "postgres") -> dict[str, str]:
        return {"PGHOST": str(self.folder), "PGPORT": str(PORT), "PGDATABASE": DATABASE, "PGUSER": user}

    def psql(self, *args: str, user: str = "postgres", input: str | None = None) -> str:
        result = subprocess.run(
            [PG_BIN / "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *args],
            env={**os.environ, **self.libpq_env(user)},
            input=input,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql {' '.join(args)} failed:\n{result.stderr}")
        return result.stdout

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server and keep its data: the database "goes down"."""
        if (self.data / "postmaster.pid").exists():
            _as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def start_server(self) -> None:
        _as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "start"])

    def stop(self) -> None:
        """Stop the server and delete everything."""
        self.stop_server("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


def _server_user() -> pwd.struct_passwd | None:
    """PostgreSQL refuses to run as root; as root we run it as the "postgres" system user."""
    return pwd.getpwnam("postgres") if os.geteuid() == 0 else None


def _as_server_user(command: list[str]) -> None:
    user = _server_user()
    prefix = ["runuser", "-u", user.pw_name, "--"] if user else []
    result = subprocess.run(prefix + command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")


def migrations() -> list[Path]:
    return sorted((ROOT / "supabase" / "migrations").glob("*.sql"))


def start(on_folder: Callable[[Path], None] = lambda folder: None) -> Cluster:
    """Create, start and bootstrap a new cluster, then apply every migration. `on_folder` learns
    the cluster's folder before anything is in it, so that an interrupted start can be cleaned up."""
    ensure_debian_packages()
    install_standin_extensions()
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="document-jobs-pg-")))
    on_folder(cluster.folder)
    user = _server_user()
    if user:
        os.chown(cluster.folder, user.pw_uid, user.pw_gid)
    _as_server_user(
        [
            str(PG_BIN / "initdb"),
            "-D",
            str(cluster.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]
    )
    settings = "".join(f"{key} = {value}\n" for key, value in SERVER_SETTINGS.items())
    settings += f"unix_socket_directories = '{cluster.folder}'\n"
    with open(cluster.data / "postgresql.conf", "a") as conf:
        conf.write(settings)
    cluster.start_server()
    cluster.psql("-f", str(ROOT / "devstack" / "bootstrap.sql"), user=SUPERUSER)
    apply_migrations(cluster)
    return cluster


def apply_migrations(cluster: Cluster) -> None:
    """As the Supabase CLI does: each file in its own transaction, as "postgres"."""
    for migration in migrations():
        cluster.psql("--single-transaction", "-f", str(migration))
