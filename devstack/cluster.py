"""A throwaway PostgreSQL 15 cluster shaped like a Supabase project's database.

Own data folder and socket in a fresh temporary folder (never the system's default cluster),
real pg_cron, pgTAP and plpgsql_check from Debian's packages (installed here when missing), the
pg_net and Vault stand-ins from devstack/extensions, Supabase's roles and privileges
(bootstrap.sql), then the project's migrations applied by the real Supabase CLI
(`supabase db push --db-url`) as "postgres", which, as on hosted Supabase, is not a superuser.
The CLI records them in supabase_migrations.schema_migrations exactly as on a linked project.

The CLI only speaks TCP, so the cluster also listens on a free loopback port (several stacks
run side by side on one machine), where postgres needs a password (in a passfile); the Unix
socket, in a folder only the server's user can enter, stays the way in for everything else.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
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
    "postgresql-15-plpgsql-check",
    "libtap-parser-sourcehandler-pgtap-perl",
)
DEBIAN_EXTENSIONS = ("pg_cron", "pgtap", "plpgsql_check")
SUPERUSER = "supabase_admin"
DATABASE = "postgres"
# The Supabase CLI, pinned in devstack/package-lock.json (`make` installs it).
SUPABASE_CLI = ROOT / "devstack" / "node_modules" / ".bin" / "supabase"
PORT_ATTEMPTS = 5

SERVER_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "shared_preload_libraries": "'pg_cron'",
    "cron.database_name": f"'{DATABASE}'",
    "cron.use_background_workers": "on",
    "max_worker_processes": "32",
    "max_connections": "200",
    "timezone": "'UTC'",
}
# The settings that make a commit durable. A test cluster is thrown away after each run:
# durability buys nothing there ("off"). Hosted Supabase runs with them on ("on"): make bench
# measures throughput both ways (all three may be changed with a reload, no restart).
DURABILITY = {
    "off": {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"},
    "on": {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"},
}
SERVER_SETTINGS |= DURABILITY["off"]


def _sharedir() -> Path:
    return Path(
        subprocess.run([PG_BIN / "pg_config", "--sharedir"], check=True, capture_output=True, text=True).stdout.strip()
    )


def ensure_debian_packages() -> None:
    """Install PostgreSQL 15, pg_cron, pgTAP and plpgsql_check from Debian when any of them is missing."""
    have_server = (PG_BIN / "postgres").exists()
    have_extensions = have_server and all(
        (_sharedir() / "extension" / f"{name}.control").exists() for name in DEBIAN_EXTENSIONS
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

    @property
    def port(self) -> int:
        """The loopback TCP port; the Unix socket's file is named after it too."""
        return int((self.folder / "port").read_text())

    @property
    def passfile(self) -> Path:
        """postgres's password for TCP, as libpq and the Supabase CLI read it (PGPASSFILE)."""
        return self.folder / "pgpass"

    def conninfo(self, user: str = "postgres") -> str:
        return f"host={self.folder} port={self.port} dbname={DATABASE} user={user}"

    def url(self) -> str:
        """postgres over loopback TCP, for the Supabase CLI's --db-url: no TLS on this server, and
        the password in the passfile rather than in the URL, which would show in the process list."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}?sslmode=disable"

    def libpq_env(self, user: str = "postgres") -> dict[str, str]:
        return {"PGHOST": str(self.folder), "PGPORT": str(self.port), "PGDATABASE": DATABASE, "PGUSER": user}

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
        if (self.data / "postmaster.pid").exists() and self.running():
            _as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def running(self) -> bool:
        """Whether its server runs: a server killed with its command leaves postmaster.pid behind,
        naming a process that is gone (pg_ctl status answers 3), and stopping it would fail."""
        command = _for_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "status"])
        return subprocess.run(command, capture_output=True).returncode == 0

    def start_server(self) -> None:
        _as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "start"])

    def stop(self) -> None:
        """Stop the server and delete everything."""
        self.stop_server("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


def _server_user() -> pwd.struct_passwd | None:
    """PostgreSQL refuses to run as root; as root we run it as the "postgres" system user."""
    return pwd.getpwnam("postgres") if os.geteuid() == 0 else None


def _for_server_user(command: list[str]) -> list[str]:
    user = _server_user()
    return (["runuser", "-u", user.pw_name, "--"] if user else []) + command


def _as_server_user(command: list[str]) -> None:
    result = subprocess.run(_for_server_user(command), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")


def migrations() -> list[Path]:
    return sorted((ROOT / "supabase" / "migrations").glob("*.sql"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(on_folder: Callable[[Path], None] = lambda folder: None, project: Path = ROOT) -> Cluster:
    """Create, start and bootstrap a new cluster, then apply every migration of `project` (a folder
    with supabase/config.toml and supabase/migrations: this repository, or an older commit's copy).
    `on_folder` learns the cluster's folder before anything is in it, so that an interrupted start
    can be cleaned up."""
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
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]
    )
    settings = "".join(f"{key} = {value}\n" for key, value in SERVER_SETTINGS.items())
    settings += f"unix_socket_directories = '{cluster.folder}'\n"
    with open(cluster.data / "postgresql.conf", "a") as conf:
        conf.write(settings)
    _start_on_a_free_port(cluster)
    try:
        cluster.psql("-f", str(ROOT / "devstack" / "bootstrap.sql"), user=SUPERUSER)
        _set_postgres_password(cluster)
        apply_migrations(cluster, project)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _start_on_a_free_port(cluster: Cluster) -> None:
    """Another stack may take the port between our probe and the server's bind: then try another."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        port = _free_port()
        (cluster.folder / "port").write_text(str(port))
        with open(cluster.data / "postgresql.conf", "a") as conf:
            conf.write(f"port = {port}\n")  # the last setting in the file wins
        log_size = cluster.log.stat().st_size if cluster.log.exists() else 0
        try:
            cluster.start_server()
            return
        except RuntimeError:
            with open(cluster.log, errors="replace") as log:
                log.seek(log_size)
                port_taken = "Address already in use" in log.read()
            if attempt == PORT_ATTEMPTS or not port_taken:
                raise


def _set_postgres_password(cluster: Cluster) -> None:
    """TCP asks for a password (any user of the machine can reach a loopback port)."""
    password = secrets.token_urlsafe(24)
    cluster.passfile.touch(mode=0o600)
    cluster.passfile.write_text(f"127.0.0.1:{cluster.port}:{DATABASE}:postgres:{password}\n")
    # Through stdin: a command line can be read by every user of the machine.
    cluster.psql(input=f"alter role postgres password '{password}';", user=SUPERUSER)


def supabase(cluster: Cluster, *args: str, project: Path = ROOT) -> str:
    """The Supabase CLI on a project folder, against `cluster`: its output, or RuntimeError with it."""
    if not SUPABASE_CLI.exists():
        raise SystemExit("devstack: the Supabase CLI is not installed; run: npm ci --prefix devstack")
    result = subprocess.run(
        [SUPABASE_CLI, *args, "--db-url", cluster.url(), "--workdir", str(project)],
        # A tool the tests run on every machine and in CI sends no usage data.
        env={**os.environ, "PGPASSFILE": str(cluster.passfile), "SUPABASE_TELEMETRY_DISABLED": "1"},
        capture_output=True,
        text=True,
        cwd=project,
    )
    if result.returncode != 0:
        raise RuntimeError(f"supabase {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def apply_migrations(cluster: Cluster, project: Path = ROOT) -> None:
    """As on a linked project: `supabase db push`, each migration in its own transaction, as "postgres",
    recorded in supabase_migrations.schema_migrations."""
    supabase(cluster, "db", "push", "--yes", project=project)
