"""Build Output API v3 routing (.vercel/output/config.json), the subset this project's config
uses: the filesystem phase, rewrites, statuses, the error phase, and vercel.json's "headers"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from devstack.vercel_build import Build, Bundle


@dataclass(frozen=True)
class Answer:
    """A final status from the routes, or a platform error, answered by the router itself."""

    status: int
    code: str
    static_file: Path | None = None


@dataclass(frozen=True)
class Static:
    file: Path


class Routes:
    """Build Output API v3 routing, the subset this project's config.json uses."""

    def __init__(self, build: Build) -> None:
        self.routes = build.routes
        self.static = build.static
        self.functions = build.bundles()

    def _filesystem(self, path: str) -> Bundle | Static | None:
        if path in self.functions:
            return self.functions[path]
        candidate = (self.static / path.lstrip("/")).resolve()
        if candidate.is_file() and candidate.is_relative_to(self.static.resolve()):
            return Static(candidate)
        return None

    def resolve(self, path: str) -> Bundle | Static | Answer:
        phase: str | None = None
        result: Bundle | Static | Answer | None = None
        for route in self.routes:
            if "handle" in route:
                phase = route["handle"]
                if phase == "filesystem" and (hit := self._filesystem(path)):
                    return hit
                if phase in ("error", "miss"):
                    break
                continue
            match = re.match(route["src"], path)
            if not match:
                continue
            if "dest" in route:
                path = _substitute(route["dest"], match)
                if route.get("check") and (hit := self._filesystem(path)):
                    return hit
            if "status" in route:
                result = Answer(int(route["status"]), "NOT_FOUND" if route["status"] == 404 else "ERROR")
                break
        if result is None:
            result = Answer(404, "NOT_FOUND")
        return self._error_phase(path, result) if isinstance(result, Answer) else result

    def headers(self, path: str) -> dict[str, str]:
        """The headers of the routes before the filesystem phase whose src matches (vercel.json's "headers")."""
        found: dict[str, str] = {}
        for route in self.routes:
            if "handle" in route:
                break
            if "headers" in route and re.match(route["src"], path):
                found.update(route["headers"])
        return found

    def _error_phase(self, path: str, answer: Answer) -> Answer:
        in_error_phase = False
        for route in self.routes:
            if "handle" in route:
                in_error_phase = route["handle"] == "error"
                continue
            if in_error_phase and re.match(route["src"], path) and int(route.get("status", 0)) == answer.status:
                page = self.static / route.get("dest", "").lstrip("/")
                return Answer(answer.status, answer.code, page if page.is_file() else None)
        return answer


def _substitute(dest: str, match: re.Match[str]) -> str:
    """A route's dest with $1, $2... replaced by what its src captured."""
    return re.sub(r"\$(\d+)", lambda group: match.group(int(group.group(1))) or "", dest)
