"""A real argparse parser built from a release's schema: a command line is judged exactly as that release's
`sglang serve` parser judges it (unknown and ambiguous options, prefixes, missing values, types, choices), with
argparse's and upstream's own words. The simulator parses its command line with it too.

Upstream's custom actions are stood in for by what they do (0.5.23 `srt/arg_groups/argparse_actions.py`): the
Deprecated*Action family stores and logs "'{option}' is deprecated and will be removed in a future release. Use
'{new_flag}' instead." (bold yellow), DeprecatedAction with an error_message stops the parser with it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from specdec_tui.core.sglang_schema.arg_types import type_function
from specdec_tui.core.sglang_schema.schema import OptionSpec, ReleaseSchema

DEPRECATIONS_KEY = "_specdec_deprecations"


class ArgvError(Exception):
    """argparse's error: `message` is what follows "{prog}: error: "; SGLang exits with status 2."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message

    def __str__(self) -> str:
        return f"{self.prog}: error: {self.message}"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgvError(self.prog, message)


def deprecation_text(option_string: str | None, new_flag: str | None) -> str:
    replacement = f" Use '{new_flag}' instead." if new_flag else ""
    return f"'{option_string}' is deprecated and will be removed in a future release.{replacement}"


def _note(namespace: argparse.Namespace, text: str) -> None:
    setattr(namespace, DEPRECATIONS_KEY, [*(getattr(namespace, DEPRECATIONS_KEY, None) or []), text])


class _Deprecated(argparse.Action):
    """DeprecatedStoreTrueAction / DeprecatedStoreConstAction / DeprecatedAliasStoreAction / DeprecatedAction."""

    def __init__(self, option_strings: Sequence[str], dest: str, spec: OptionSpec, **kwargs: Any) -> None:
        self.spec = spec
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        kind = self.spec.action_class.rsplit(".", 1)[-1]
        if kind == "DeprecatedAction":
            if self.spec.error_message is not None:
                parser.error(self.spec.error_message)
            _note(namespace, f"The command line argument '{option_string}' is deprecated and will be removed in "
                  "future versions.")
            return
        _note(namespace, deprecation_text(option_string, self.spec.new_flag))
        if kind == "DeprecatedStoreTrueAction":
            setattr(namespace, self.dest, True)
        elif kind == "DeprecatedStoreConstAction":
            setattr(namespace, self.dest, self.spec.const_value)
        else:
            setattr(namespace, self.dest, values)


class _Store(argparse.Action):
    """Any other custom action (e.g. LoRAPathAction): the values are kept as given."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


def _add(parser: argparse.ArgumentParser, spec: OptionSpec, require: bool) -> None:
    # upstream's help text, for `specdec-tui sim --help` (an option upstream hides has none)
    common: dict[str, Any] = {"dest": spec.dest, "help": argparse.SUPPRESS if spec.help is None else spec.help,
                              "default": spec.default}
    typed: dict[str, Any] = {"nargs": spec.nargs, "type": type_function(spec.type)}
    if spec.required and require:
        common["required"] = True
    choices = list(spec.choices) if spec.choices is not None else None
    kind = spec.action
    if kind in ("store_true", "store_false", "count"):
        parser.add_argument(*spec.option_strings, action=kind, **common)
    elif kind in ("store_const", "append_const"):
        parser.add_argument(*spec.option_strings, action=kind, const=spec.const, **common)
    elif kind == "boolean_optional":
        positive = [s for s in spec.option_strings if not s.startswith("--no-")]
        parser.add_argument(*positive, action=argparse.BooleanOptionalAction, **common)
    elif kind in ("store", "append", "extend"):
        const: dict[str, Any] = {"const": spec.const} if spec.nargs == "?" else {}
        parser.add_argument(*spec.option_strings, action=kind, choices=choices, **typed, **const, **common)
    elif "Deprecated" in spec.action_class:
        parser.add_argument(*spec.option_strings, action=_Deprecated, spec=spec, choices=choices, **typed, **common)
    else:
        parser.add_argument(*spec.option_strings, action=_Store, choices=choices, **typed, **common)


_PARSERS: dict[tuple[int, bool], tuple[ReleaseSchema, argparse.ArgumentParser]] = {}


def build_parser(schema: ReleaseSchema, require: bool = True) -> argparse.ArgumentParser:
    """The release's parser (kept per schema): raises ArgvError where SGLang's would print usage and exit 2.
    `require=False` leaves out required options (to judge one flag on its own)."""
    key = (id(schema), require)
    kept = _PARSERS.get(key)
    if kept is not None and kept[0] is schema:
        return kept[1]
    parser = new_parser(schema, require)
    _PARSERS[key] = (schema, parser)
    return parser


def new_parser(schema: ReleaseSchema, require: bool = True) -> argparse.ArgumentParser:
    """A fresh parser of the release (for a caller that adds options of its own, like the simulator)."""
    parser = _Parser(prog=schema.prog, allow_abbrev=schema.allow_abbrev)  # -h/--help: upstream has them
    for spec in schema.options:
        _add(parser, spec, require)
    return parser


@dataclass
class Parsed:
    namespace: argparse.Namespace
    deprecations: list[str] = field(default_factory=list)  # SGLang's warnings, in its words, in order


def parse_argv(schema: ReleaseSchema, argv: Sequence[str], parser: argparse.ArgumentParser | None = None) -> Parsed:
    """The command line as the release parses it; ArgvError with argparse's words when it refuses it."""
    namespace = (parser or build_parser(schema)).parse_args(list(argv))
    deprecations = vars(namespace).pop(DEPRECATIONS_KEY, None) or []
    return Parsed(namespace, deprecations)


def flag_words(schema: ReleaseSchema, written: str, value: str | None) -> list[str]:
    """A unit's `--flag value` as command-line words (a list option's value is split at spaces)."""
    option, _ = schema.resolve(written)
    words = [f"--{written}"]
    if value is not None:
        words.extend(value.split() if option is not None and option.is_list else [value])
    return words


_CHECKED: dict[tuple[int, str, str | None], tuple[str | None, tuple[str, ...]]] = {}


def check_flag(schema: ReleaseSchema, written: str, value: str | None) -> tuple[str | None, list[str]]:
    """One flag of a unit on its own: argparse's error for it (None when the release takes it) and the
    deprecation lines SGLang would print for it. Kept per (release, flag, value): the form asks on every key."""
    key = (id(schema), written, value)
    known = _CHECKED.get(key)
    if known is None or _PARSERS.get((id(schema), False), (None,))[0] is not schema:
        try:
            parsed = parse_argv(schema, flag_words(schema, written, value), build_parser(schema, require=False))
            known = (None, tuple(parsed.deprecations))
        except ArgvError as err:
            known = (err.message, ())
        if len(_CHECKED) > 4096:
            _CHECKED.clear()
        _CHECKED[key] = known
    return known[0], list(known[1])
