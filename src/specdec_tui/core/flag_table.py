"""The flags the panel groups and shows, with their type, choices, default and help taken from a release's schema.

What a flag is (its spellings, type, nargs, choices, default, help, whether it is deprecated) comes from the SGLang
release's own parser (core/sglang_schema; 0.5.23 bundled and the default). What the schema cannot say is kept here:
  - which flags the panel shows, and in which group (speculative / capacity / server): the panel's layout;
  - the speculative algorithms SGLang builds in: `--speculative-algorithm` is a free string in the parser (plugins
    register names), and its builtins are in the help text and in `speculative/spec_info.py`'s enum
    (0.5.23: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO; `from_string` also takes FROZEN_KV_MTP).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from specdec_tui.core.sglang_schema.schema import OptionSpec, ReleaseSchema, default_schema

FlagType = Literal["int", "float", "str", "bool", "choice", "int_list", "list", "json"]
Group = Literal["speculative", "capacity", "server", "other"]

# The builtins SGLang's help names, in its order; the dropdown offers these.
SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
# Names `from_string` also accepts without a plugin (an enum member the help does not list).
BUILTIN_ALGORITHMS = (*SPEC_ALGORITHMS, "FROZEN_KV_MTP")
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
TREE_FLAGS = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")
ALGORITHM_FLAG = "speculative-algorithm"

# The panel's groups: every `--speculative-*` flag of the release is "speculative"; these others are named.
_CAPACITY = ("mem-fraction-static", "max-running-requests", "max-total-tokens", "max-prefill-tokens",
             "chunked-prefill-size", "context-length", "cuda-graph-config", "cuda-graph-backend-decode",
             "cuda-graph-backend-prefill", "cuda-graph-max-bs-decode", "cuda-graph-max-bs-prefill",
             "cuda-graph-bs-decode", "cuda-graph-bs-prefill", "disable-decode-cuda-graph",
             "disable-prefill-cuda-graph", "disable-cuda-graph", "page-size", "attention-backend",
             "prefill-attention-backend", "decode-attention-backend", "tp-size", "dp-size", "attn-dp-size",
             "enable-dp-attention", "disable-overlap-schedule", "enable-mixed-chunk", "enable-deterministic-inference")
_SERVER = ("model-path", "served-model-name", "host", "port", "enable-metrics", "decode-log-interval", "log-level",
           "trust-remote-code")
_EXTRA_SPECULATIVE = ("enable-multi-layer-eagle", "uno-lora-path")


@dataclass(frozen=True)
class FlagSpec:
    """One SGLang flag as the panel shows it: the schema's facts in the panel's terms.

    `open_choices`: the choices are what SGLang ships, but other values are legal (plugins register more).
    `deprecated`: the release still accepts the flag but warns (its deprecation action or help says so)."""

    name: str
    type: FlagType
    group: Group
    help: str
    default: str | int | float | bool | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    open_choices: bool = False
    deprecated: bool = False
    option: OptionSpec | None = field(default=None, compare=False, repr=False)

    @property
    def is_switch(self) -> bool:
        return self.type == "bool"

    def describe_range(self) -> str:
        return "one of " + ", ".join(self.choices) if self.choices else ""


def _group(name: str) -> Group:
    if name.startswith("speculative-") or name in _EXTRA_SPECULATIVE:
        return "speculative"
    if name in _CAPACITY:
        return "capacity"
    return "server" if name in _SERVER else "other"


def _type(option: OptionSpec) -> FlagType:
    if not option.takes_value:
        return "bool"
    if option.choices:
        return "choice"
    if option.is_list:
        return "int_list" if option.type == "int" else "list"
    if option.type in ("int", "float"):
        return option.type  # type: ignore[return-value]
    if option.type is not None and option.type.endswith("human_readable_int"):
        return "int"
    if option.type is not None and ("json" in option.type or option.type.endswith("config_arg")):
        return "json"
    return "str"


def flag_spec(option: OptionSpec) -> FlagSpec:
    default = option.default if isinstance(option.default, (str, int, float, bool)) else None
    if option.name == ALGORITHM_FLAG:
        return FlagSpec(option.name, "choice", "speculative", option.help or "", None, SPEC_ALGORITHMS,
                        option.aliases, open_choices=True, option=option)
    return FlagSpec(option.name, _type(option), _group(option.name), option.help or "", default,
                    tuple(str(c) for c in option.choices or ()), option.aliases, deprecated=option.deprecated,
                    option=option)


@cache
def _spec_of(option: OptionSpec) -> FlagSpec:
    """One FlagSpec per option (an option is hashed by identity): a name looked up and the whole table agree."""
    return flag_spec(option)


@cache
def release_flags(schema: ReleaseSchema) -> dict[str, FlagSpec]:
    """Every option of a release as a FlagSpec, by name, in the release's declaration order."""
    return {option.name: _spec_of(option) for option in schema.options}


class _DefaultFlags(Mapping[str, FlagSpec]):
    """The default release's flags, read from its schema on first use (not at import: the panel's start). A flag
    looked up by name builds that flag alone (the form's rows, issue 34); iterating builds the whole table."""

    def _flags(self) -> dict[str, FlagSpec]:
        return release_flags(default_schema())

    def __getitem__(self, key: str) -> FlagSpec:
        option = default_schema().option(key) if isinstance(key, str) and not key.startswith("-") else None
        if option is None or option.name != key:  # keyed by the release's name: an alias or `--name` is not a key
            raise KeyError(key)
        return _spec_of(option)

    def __iter__(self) -> Iterator[str]:
        return iter(self._flags())

    def __len__(self) -> int:
        return len(self._flags())


FLAGS: Mapping[str, FlagSpec] = _DefaultFlags()


def bare(name: str) -> str:
    """`--name` without its dashes."""
    return name[2:] if name.startswith("--") else name


def canonical_name(name: str, schema: ReleaseSchema | None = None) -> str:
    """The release's name for a flag as written (an alias or a prefix argparse takes: tp -> tp-size); a name the
    release does not know, or an ambiguous prefix, comes back bare."""
    option, _ = (schema or default_schema()).resolve(bare(name))
    return option.name if option is not None else bare(name)


def spec_for(name: str, schema: ReleaseSchema | None = None) -> FlagSpec | None:
    """The FlagSpec for a name, alias, prefix or `--name`; None when the release does not know it."""
    release = schema or default_schema()
    option, _ = release.resolve(bare(name))
    return _spec_of(option) if option is not None else None


def groups(schema: ReleaseSchema | None = None) -> dict[str, list[FlagSpec]]:
    """The panel's groups of the release's flags (for forms and `unit show`); the rest of the release is "other"."""
    result: dict[str, list[FlagSpec]] = {}
    for spec in release_flags(schema or default_schema()).values():
        if spec.group != "other":
            result.setdefault(spec.group, []).append(spec)
    return result


def takes_list(name: str, schema: ReleaseSchema | None = None) -> bool:
    """Whether the flag's value is several words (nargs "+"): its option's, or for an ambiguous prefix (an old
    name like --cuda-graph-bs) every option it could mean."""
    release = schema or default_schema()
    option, candidates = release.resolve(bare(name))
    if option is not None:
        return option.is_list
    owners = [release.by_string[c] for c in candidates]
    return bool(owners) and all(o.is_list for o in owners)
