"""`specdec-tui`: starts the panel, or runs a headless subcommand.

Each command group lives in its own module with a `register(subparsers)` function; a handler returns
the process exit code. Errors the user can act on are printed in words (`CliError`), not as tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from specdec_tui import __version__

# Command modules, in the order they appear in --help.
COMMAND_MODULES = (
    "unit_cmd",
    "journal_cmd",
    "host_cmd",
    "bench_cmd",
    "sim_cmd",
    "session_cmd",
    "sweep_cmd",
    "demo_cmd",
)


class CliError(Exception):
    """A failure to report to the user as one message; exit code 1 unless given."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specdec-tui",
        description="Tune SGLang speculative decoding: edit, push, restart, watch, benchmark, compare.",
    )
    parser.add_argument("--version", action="version", version=f"specdec-tui {__version__}")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $SPECDEC_TUI_CONFIG, then the user config dir)")
    parser.add_argument("--demo", action="store_true", help="run on the embedded demo host (simulated SGLang, no GPU, no SSH)")
    parser.add_argument("--headless", action="store_true", help="with --demo: run one full trial and print it, no UI")
    parser.add_argument("--host", metavar="NAME", help="host from the config to open (default: the config's default_host)")
    parser.add_argument("--session", metavar="FILE", help="session file to open or continue")
    parser.add_argument("--profile", metavar="NAME", help="benchmark profile from the config")
    parser.add_argument("--sessions", action="store_true", help="browse the saved sessions offline (no host)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"specdec_tui.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            from specdec_tui.cli import tui_cmd

            return tui_cmd.run(args)
        return int(args.func(args) or 0)
    except CliError as err:
        print(f"specdec-tui: {err}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        print("specdec-tui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
