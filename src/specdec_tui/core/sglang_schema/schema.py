"""One SGLang release's flag schema (every option of `ServerArgs.add_cli_args`), and the releases bundled here.

The JSON is what `extract_snippet.py` prints; `tools/sglang_schema.py` writes the bundled files into `schemas/`.
0.5.23 is the default: the demo, an offline session and a host whose SGLang version is unknown are judged by it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import overload

DEFAULT_VERSION = "0.5.23"
FORMAT = 1
JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


class SchemaError(ValueError):
    """A schema text that is not one (a host's snippet failed, or printed something else)."""


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: its defaults may be lists
class OptionSpec:
    """One argparse option as the release declares it. `action`: store, store_true, store_const, append, count,
    boolean_optional, or custom (then `action_class` names upstream's class, e.g. DeprecatedStoreTrueAction)."""

    option_strings: tuple[str, ...]
    dest: str
    action: str
    action_class: str
    nargs: int | str | None
    type: str | None
    choices: tuple[JsonValue, ...] | None
    default: JsonValue
    const: JsonValue
    required: bool
    help: str | None
    new_flag: str | None = None
    const_value: JsonValue = None
    error_message: str | None = None

    @property
    def name(self) -> str:
        """The option's first spelling without dashes: the name the panel shows and keys it by."""
        return self.option_strings[0].lstrip("-")

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(s.lstrip("-") for s in self.option_strings[1:])

    @property
    def takes_value(self) -> bool:
        return self.nargs != 0

    @property
    def is_list(self) -> bool:
        return self.nargs in ("+", "*") or (isinstance(self.nargs, int) and self.nargs > 1)

    @property
    def deprecated(self) -> bool:
        """Upstream marks a retired flag by its action (Deprecated*Action) or by its help's first word."""
        return "Deprecated" in self.action_class or (self.help or "").lstrip("(").startswith("Deprecated")


class LazyOptions(Sequence[OptionSpec]):
    """A bundled release's options, each built from its JSON when first asked for: the form's first frame needs
    ~15 of 0.5.23's 531 (a unit's flags, the form's rows), and building them all was ~8 ms of the panel's start
    (issue 34). Its spellings are indexed at once, so a name is looked up, and a prefix resolved, as before."""

    def __init__(self, raw: list[dict[str, JsonValue]]) -> None:
        self._raw = raw
        self._built: list[OptionSpec | None] = [None] * len(raw)
        self.positions = {str(string): k for k, option in enumerate(raw) for string in option["option_strings"]}  # type: ignore[union-attr]

    @overload
    def __getitem__(self, k: int) -> OptionSpec: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[OptionSpec]: ...
    def __getitem__(self, k: int | slice) -> OptionSpec | Sequence[OptionSpec]:
        if isinstance(k, slice):
            return tuple(self[i] for i in range(len(self))[k])
        built = self._built[k]
        if built is None:
            built = self._built[k] = _option(self._raw[k])
        return built

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[OptionSpec]:
        return (self[k] for k in range(len(self._raw)))


class _ByString(Mapping[str, OptionSpec]):
    """A LazyOptions' options by spelling (the release's last option of a spelling, as the dict built of them)."""

    def __init__(self, options: LazyOptions) -> None:
        self._options = options

    def __getitem__(self, string: str) -> OptionSpec:
        return self._options[self._options.positions[string]]

    def __contains__(self, string: object) -> bool:
        return string in self._options.positions

    def __iter__(self) -> Iterator[str]:
        return iter(self._options.positions)

    def __len__(self) -> int:
        return len(self._options.positions)


@dataclass(frozen=True, eq=False)  # one object per release read; kept in caches by identity
class ReleaseSchema:
    """The schema of one release: its options in declaration order and the parser's own settings."""

    version: str
    prog: str
    allow_abbrev: bool
    options: Sequence[OptionSpec]
    source: str = "bundled"  # "bundled", or where it came from ("host gpu-box", "cache")
    by_string: Mapping[str, OptionSpec] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        """`by_string` is always made from `options` (what is passed for it is not read)."""
        if isinstance(self.options, LazyOptions):
            object.__setattr__(self, "by_string", _ByString(self.options))
            return
        by_string: dict[str, OptionSpec] = {}
        for option in self.options:
            for string in option.option_strings:
                by_string[string] = option
        object.__setattr__(self, "by_string", by_string)

    def option(self, name: str) -> OptionSpec | None:
        """The option spelled exactly `name` (with or without "--"); None otherwise (prefixes: argv_parser)."""
        return self.by_string.get(name if name.startswith("-") else f"--{name}")

    def resolve(self, name: str) -> tuple[OptionSpec | None, tuple[str, ...]]:
        """What argparse makes of `--name`: the option (exact, or the one option it is a prefix of when the
        parser allows abbreviations) and, when it matches none or several, the spellings it could mean."""
        string = name if name.startswith("-") else f"--{name}"
        exact = self.by_string.get(string)
        if exact is not None or not self.allow_abbrev:
            return exact, ()
        matches = tuple(s for s in self.by_string if s.startswith(string))
        if len(matches) == 1:  # argparse (3.11) calls two matching spellings ambiguous, even of one option
            return self.by_string[matches[0]], ()
        return None, matches


def _option(raw: dict[str, JsonValue]) -> OptionSpec:
    choices = raw.get("choices")
    nargs = raw.get("nargs")
    return OptionSpec(
        option_strings=tuple(str(s) for s in raw["option_strings"]),  # type: ignore[union-attr]
        dest=str(raw["dest"]),
        action=str(raw.get("action") or "store"),
        action_class=str(raw.get("action_class") or ""),
        nargs=nargs if nargs is None or isinstance(nargs, (int, str)) else str(nargs),
        type=None if raw.get("type") is None else str(raw["type"]),
        choices=None if choices is None else tuple(choices),  # type: ignore[arg-type]
        default=raw.get("default"),
        const=raw.get("const"),
        required=bool(raw.get("required")),
        help=None if raw.get("help") is None else str(raw["help"]),
        new_flag=None if raw.get("new_flag") is None else str(raw["new_flag"]),
        const_value=raw.get("const_value"),
        error_message=None if raw.get("error_message") is None else str(raw["error_message"]),
    )


def parse_schema(text: str, source: str = "bundled", *, lazy: bool = False) -> ReleaseSchema:
    """The schema in a JSON text (the snippet's output); SchemaError when it is not one, with the snippet's error.
    `lazy`: each option built when first asked for (a bundled schema, checked by the tests; one read from a host
    is checked whole here)."""
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise SchemaError(f"the schema is not JSON: {err}") from None
    if not isinstance(raw, dict):
        raise SchemaError("the schema is not a JSON object")
    if raw.get("error"):
        raise SchemaError(f"SGLang's parser could not be built: {raw['error']}")
    if raw.get("format") != FORMAT or not isinstance(raw.get("options"), list):
        raise SchemaError(f"the schema's format is {raw.get('format')!r}, this panel reads format {FORMAT}")
    try:
        options: Sequence[OptionSpec] = LazyOptions(raw["options"]) if lazy else tuple(_option(o) for o in raw["options"])
    except (KeyError, TypeError) as err:
        raise SchemaError(f"an option of the schema lacks {err}") from None
    return ReleaseSchema(version=str(raw.get("version") or "unknown"), prog=str(raw.get("prog") or "sglang serve"),
                         allow_abbrev=bool(raw.get("allow_abbrev", True)), options=options, source=source)


def bundled_versions() -> tuple[str, ...]:
    files = resources.files("specdec_tui.core.sglang_schema").joinpath("schemas").iterdir()
    return tuple(sorted(f.name.removesuffix(".json") for f in files if f.name.endswith(".json")))


@cache
def bundled_schema(version: str = DEFAULT_VERSION) -> ReleaseSchema:
    """A bundled release's schema (read once); KeyError for a release not bundled."""
    path = resources.files("specdec_tui.core.sglang_schema").joinpath("schemas", f"{version}.json")
    if not path.is_file():
        raise KeyError(version)
    return parse_schema(path.read_text(encoding="utf-8"), lazy=True)


def default_schema() -> ReleaseSchema:
    return bundled_schema(DEFAULT_VERSION)
