"""Walks parsed config TOML into the `config` dataclasses; every mistake becomes a `ConfigError` naming the
file, the line and the key, and saying what to write instead."""

from __future__ import annotations

import difflib
import re
import typing
from dataclasses import MISSING, replace
from dataclasses import fields as dataclass_fields
from typing import Any, TypeVar

from specdec_tui.core.config import SCHEMA_VERSION, BenchProfile, ClusterConfig, Config, HostConfig, UIConfig
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_toml_keys import find_line
from specdec_tui.core.config_unit_path import check_unit_path
from specdec_tui.core.config_values import EXAMPLES, RULES, SECRET_KEY, BadValue, convert, toml_text

DataclassT = TypeVar("DataclassT", HostConfig, ClusterConfig, BenchProfile, UIConfig)


class ConfigReader:
    """Walks the unwrapped TOML data; knows the text so errors can name their line."""

    TOP_KEYS = ("schema_version", "default_host", "default_profile", "hosts", "clusters", "profiles", "ui")

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def fail(self, path: tuple[str, ...], what: str) -> ConfigError:
        return ConfigError(self.source, find_line(self.text, path), ".".join(path), what)

    def read(self, data: dict[str, Any]) -> Config:
        self.check_keys(data, (), self.TOP_KEYS)
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.fail(("schema_version",),
                            f"expected a whole number, got {toml_text(version)}; write schema_version = {SCHEMA_VERSION}")
        if version < 1:
            raise self.fail(("schema_version",), f"schema_version {version} does not exist (versions start at 1); "
                                                 f"write schema_version = {SCHEMA_VERSION}")
        if version > SCHEMA_VERSION:
            raise self.fail(
                ("schema_version",),
                f"this file is schema_version {version}, written by a newer specdec-tui; this version reads "
                f"schema_version {SCHEMA_VERSION}: upgrade specdec-tui or use an older config",
            )
        hosts = {
            name: self.read_dataclass(HostConfig, table, ("hosts", name), name=name)
            for name, table in self.tables(data, "hosts").items()
        }
        for name, host in hosts.items():
            bad = check_unit_path(host)
            if bad is not None:
                raise self.fail(("hosts", name, bad[0]), bad[1])
        clusters = {
            name: self.read_cluster(table, name, hosts) for name, table in self.tables(data, "clusters").items()
        }
        profiles: dict[str, BenchProfile] = {"default": BenchProfile()}
        for name, table in self.tables(data, "profiles").items():
            profiles[name] = self.read_profile(table, name)
        ui_table = data.get("ui", {})
        if not isinstance(ui_table, dict):
            raise self.fail(("ui",), "must be a table: write a [ui] section")
        ui = self.read_dataclass(UIConfig, ui_table, ("ui",))
        default_host = self.optional_str(data, "default_host")
        if default_host is not None and default_host not in hosts and default_host not in clusters:
            raise self.fail(("default_host",), self.no_such("host", default_host, {**hosts, **clusters}))
        default_profile = self.optional_str(data, "default_profile") or "default"
        if default_profile not in profiles:
            raise self.fail(("default_profile",), self.no_such("profile", default_profile, profiles))
        return Config(
            hosts=hosts,
            clusters=clusters,
            profiles=profiles,
            ui=ui,
            default_host=default_host,
            default_profile=default_profile,
            source=self.source,
        )

    def no_such(self, what: str, name: str, known: dict[str, Any]) -> str:
        choices = ", ".join(f'"{k}"' for k in known) or f"none defined; add a [{what}s.{name}] table"
        return f'names no {what} "{name}"; defined: {choices}'

    def optional_str(self, data: dict[str, Any], key: str) -> str | None:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail((key,), f'expected a quoted string, got {toml_text(value)}; write {key} = "name"')
        return value

    def tables(self, data: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
        section = data.get(key, {})
        if not isinstance(section, dict):
            raise self.fail((key,), f"must be tables, one per name: write [{key}.NAME] sections")
        for name, table in section.items():
            if not isinstance(table, dict):
                raise self.fail((key, name), f"must be a table: write a [{key}.{name}] section with its settings")
        return section

    def check_keys(self, table: dict[str, Any], path: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        for key in table:
            if key in allowed:
                continue
            if re.fullmatch(SECRET_KEY, key.lower()):
                raise self.fail(
                    path + (key,),
                    "an API key or secret never goes in the config file; put it in an environment variable "
                    'and name that variable here instead: api_key_env = "SGLANG_API_KEY"',
                )
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise self.fail(path + (key,), f"unknown setting; {hint}allowed here: {', '.join(allowed)}")

    def read_dataclass(self, cls: type[DataclassT], table: dict[str, Any], path: tuple[str, ...], **fixed: object) -> DataclassT:
        hints = typing.get_type_hints(cls)
        allowed = tuple(f.name for f in dataclass_fields(cls) if f.name not in fixed)
        self.check_keys(table, path, allowed)
        values: dict[str, Any] = dict(fixed)
        defaults = {f.name: f.default for f in dataclass_fields(cls)}
        for key, raw in table.items():
            if isinstance(raw, dict) and typing.get_origin(hints[key]) is dict:
                self.check_string_table(raw, path + (key,))
            try:
                value = convert(raw, hints[key])
            except BadValue as bad:
                example = EXAMPLES.get(key, defaults.get(key))
                sample = f"; write {key} = {toml_text(example)}" if example not in (None, MISSING) else ""
                raise self.fail(path + (key,), f"{bad}{sample}") from None
            rule = RULES.get(key)
            problem = rule(value) if rule else None
            if problem:
                raise self.fail(path + (key,), f"{problem} (got {toml_text(value)})")
            values[key] = value
        return cls(**values)

    def check_string_table(self, table: dict[str, Any], path: tuple[str, ...]) -> None:
        sample = "ctrl+t" if path[-1:] == ("keymap",) else "text"  # not "ctrl+q": that key is quit's
        for key, value in table.items():
            if not isinstance(value, str):
                raise self.fail(path + (key,), f'expected a quoted string, got {toml_text(value)}; write {key} = "{sample}"')

    def read_cluster(self, table: dict[str, Any], name: str, hosts: dict[str, HostConfig]) -> ClusterConfig:
        """A [clusters.NAME] table: at least two distinct [hosts.*] names, and a name no host has."""
        path = ("clusters", name)
        if name in hosts:
            raise self.fail(path, f'a host is already named "{name}"; --host could not tell them apart, '
                                  "rename the cluster or the host")
        if "nodes" not in table:
            raise self.fail(path, 'needs its nodes, node 0 first: write nodes = ["gpu-0", "gpu-1"]')
        cluster = self.read_dataclass(ClusterConfig, table, path, name=name)
        nodes_path = path + ("nodes",)
        if len(cluster.nodes) < 2:
            raise self.fail(nodes_path, f"a cluster needs at least 2 nodes, got {len(cluster.nodes)}; "
                                        'list every node, node 0 first: nodes = ["gpu-0", "gpu-1"]')
        for node in cluster.nodes:
            if node not in hosts:
                raise self.fail(nodes_path, self.no_such("host", node, hosts))
            if cluster.nodes.count(node) > 1:
                raise self.fail(nodes_path, f'lists the host "{node}" twice; each node runs one rank, list it once')
        return cluster

    def read_profile(self, table: dict[str, Any], name: str) -> BenchProfile:
        path = ("profiles", name)
        if "requests" in table and "duration_s" in table:
            raise self.fail(
                path + ("duration_s",),
                "give exactly one of requests (measured requests per level) or duration_s (seconds per level), not both",
            )
        profile = self.read_dataclass(BenchProfile, table, path, name=name)
        if "duration_s" in table:
            profile = replace(profile, requests=None)
        if "requests" in table or "duration_s" in table:  # named, not defaulted: they cut a trace workload too
            profile = replace(profile, cut_trace=True)
        return profile
