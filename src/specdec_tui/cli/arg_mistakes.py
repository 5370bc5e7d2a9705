"""A typo'd flag is reported by the verb it was typed to, with the flag it was likely meant to be.

argparse hands a subcommand's unknown arguments up to the top parser, which then prints the top usage
("specdec-tui [-h] [--version] … COMMAND ...") for `bench --concurency 1,4`: the words of the wrong command, and
no hint. Here the innermost verb the arguments reached says it, with its own usage and the closest option.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence

__all__ = ["parse_command_line"]


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, but leftover arguments are an error of the verb they were given to (exit 2)."""
    args, rest = parser.parse_known_args(argv)
    if rest:
        owner = _innermost(parser, args)
        owner.error(_unrecognized(owner, rest))
    return args


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest (sub)command parser the parsed arguments chose."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            child = action.choices.get(chosen) if isinstance(chosen, str) else None
            if isinstance(child, argparse.ArgumentParser):
                return _innermost(child, args)
    return parser


def _unrecognized(owner: argparse.ArgumentParser, rest: Sequence[str]) -> str:
    words = f"unrecognized arguments: {' '.join(rest)}"
    known = [opt for action in owner._actions for opt in action.option_strings if opt.startswith("--")]
    for arg in rest:
        if not arg.startswith("--"):
            continue
        close = difflib.get_close_matches(arg.split("=", 1)[0], known, n=1, cutoff=0.75)
        if close:
            return f"{words} (did you mean {close[0]}?)"
    return f"{words} (`{owner.prog} --help` lists its options)"
