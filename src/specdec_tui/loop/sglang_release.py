"""Which SGLang release judges a host's unit: the host's own, learned over the same connection and cached.

The host's SGLang is the authority. Its version comes from the unit's Python (`import sglang`), or from
`/server_info`'s `version` when the caller already has it; the release's flag schema from the same Python
(core/sglang_schema/extract_snippet.py), cached per version in the panel's cache dir, so a release is dumped once.
A release bundled with the panel needs no dump. An unknown version, a host that cannot be asked, or a dump that
fails leaves the bundled 0.5.23 in charge, and the note says so.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from specdec_tui.core.exec_start import ExecStart
from specdec_tui.core.paths import schema_cache_dir
from specdec_tui.core.sglang_schema.host_probe import VERSION_SOURCE, read_version, schema_source, unit_python
from specdec_tui.core.sglang_schema.schema import (
    DEFAULT_VERSION,
    ReleaseSchema,
    SchemaError,
    bundled_schema,
    bundled_versions,
    default_schema,
    parse_schema,
)
from specdec_tui.hosts.base import PythonProbe
from specdec_tui.hosts.errors import HostError


@dataclass(frozen=True)
class Release:
    """The schema that judges a host's unit, where it came from, and (when it is not the host's own) why."""

    schema: ReleaseSchema
    source: str  # "bundled", "cache", "host" or "default"
    note: str = ""

    @property
    def version(self) -> str:
        return self.schema.version


def _fallback(why: str) -> Release:
    return Release(default_schema(), "default", f"{why}: judged by the bundled SGLang {DEFAULT_VERSION}")


def _cached(cache: Path, version: str) -> ReleaseSchema | None:
    try:
        return parse_schema((cache / f"{version}.json").read_text(encoding="utf-8"), source="cache")
    except (OSError, SchemaError):
        return None  # absent or damaged: dumped again


def _store(cache: Path, version: str, text: str) -> None:
    """Written whole or not at all (a panel killed mid-write leaves no half schema behind)."""
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{version}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, cache / f"{version}.json")


async def host_version(host: object, exec_start: ExecStart) -> str | None:
    """The SGLang version the unit's Python imports, or None when it cannot be learned."""
    if not isinstance(host, PythonProbe):
        return None
    try:
        run = await host.run_python(unit_python(exec_start), VERSION_SOURCE)
    except HostError:
        return None
    return read_version(run.stdout) if run.returncode == 0 else None


async def learn_release(host: object, exec_start: ExecStart, *, version: str | None = None,
                        cache: Path | None = None) -> Release:
    """The release that judges the unit on `host` (see the module's note). `version`: already known (e.g. from
    `/server_info`), so only the schema is asked for."""
    where = cache or schema_cache_dir()
    if not isinstance(host, PythonProbe):  # the demo: it runs the simulator, whose default is 0.5.23
        return Release(default_schema(), "bundled")
    version = version or await host_version(host, exec_start)
    if version is None:
        return _fallback(f"the SGLang version of {unit_python(exec_start)} on the host is unknown")
    if version in bundled_versions():
        return Release(bundled_schema(version), "bundled")
    cached = _cached(where, version)
    if cached is not None:
        return Release(cached, "cache")
    try:
        run = await host.run_python(unit_python(exec_start), schema_source())
        schema = parse_schema(run.stdout, source="host")
    except (HostError, SchemaError) as err:
        return _fallback(f"SGLang {version}'s flags could not be read from the host ({err})")
    if schema.version != version:
        return _fallback(f"the host's Python said SGLang {version}, then {schema.version}")
    _store(where, version, run.stdout)
    return Release(schema, "host")
