"""Supabase project folders of the tests' own, for databases built from a chosen set of migrations
(an upgrade from an older release, the future drop on top of today's)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from devstack import cluster


def project_with(folder: Path, migrations: Iterable[Path]) -> Path:
    """`folder` as a Supabase project: the repository's config.toml and these migrations."""
    (folder / "supabase" / "migrations").mkdir(parents=True)
    shutil.copy(cluster.ROOT / "supabase" / "config.toml", folder / "supabase")
    for path in migrations:
        shutil.copy(path, folder / "supabase" / "migrations")
    return folder


@contextlib.contextmanager
def started(project: Path) -> Iterator[cluster.Cluster]:
    """A cluster of its own with the project's migrations pushed, stopped afterwards."""
    database = cluster.start(project=project)
    try:
        yield database
    finally:
        database.stop()
