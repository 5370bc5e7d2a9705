"""`specdec-tui`: starts the panel, or runs a headless subcommand.

Each command group lives in its own module with a `register(subparsers)` function; a handler returns
the process exit code. Errors the user can act on are printed in words (`CliError`), not as tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from specdec_tui import __version__
from specdec_tui.cli.arg_mistakes import parse_command_line
from specdec_tui.cli.errors import CliError
from specdec_tui.core.terminal_codes import terminal_safe

__all__ = ["CliError", "build_parser", "main", "panel_args"]

# Command modules, in the order they appear in --help.
COMMAND_MODULES = (
    "unit_cmd",
    "journal_cmd",
    "host_cmd",
    "bench_cmd",
    "sim_cmd",
    "session_cmd",
    "sweep_cmd",
    "tune_cmd",
    "fleet_cmd",
    "doctor_cmd",
    "demo_cmd",
    "serve_cmd",
)


PROG = "specdec-tui"
DESCRIPTION = "Tune SGLang speculative decoding: edit, push, restart, watch, benchmark, compare."


class _NotThePanel(Exception):
    """The arguments are not a plain panel start (a command, --help, or an error to report in full)."""


class _PanelParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _NotThePanel(message)


def add_panel_options(parser: argparse.ArgumentParser) -> None:
    """The options of the panel itself (no COMMAND), shared by the full parser and the fast panel parse."""
    parser.add_argument("--version", action="version", version=f"specdec-tui {__version__}")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $SPECDEC_TUI_CONFIG, then the user config dir)")
    parser.add_argument("--demo", action="store_true", help="run on the embedded demo host (simulated SGLang, no GPU, no SSH)")
    parser.add_argument("--headless", action="store_true", help="with --demo: run one full trial and print it, no UI")
    parser.add_argument("--nodes", type=int, default=1, metavar="N",
                        help="with --demo: a cluster of N simulated nodes, 1 to 16 (one multi-node server on loopback)")
    parser.add_argument("--host", metavar="NAME", help="host from the config to open (default: the config's default_host)")
    parser.add_argument("--session", metavar="FILE", help="session file to open or continue")
    parser.add_argument("--new-session", action="store_true",
                        help="start a fresh session (default: continue the host's current session)")
    parser.add_argument("--profile", metavar="NAME", help="benchmark profile from the config")
    parser.add_argument("--sessions", action="store_true", help="browse the saved sessions offline (no host)")


def build_parser() -> argparse.ArgumentParser:
    """The full parser: the panel's options and every command (imports each command module)."""
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    add_panel_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"specdec_tui.cli.{name}")
        module.register(sub)
    return parser


def panel_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The arguments of a plain panel start, parsed without loading any command module (they are not needed
    for the first frame); None for anything else (a command, --help, a mistake), which the full parser handles."""
    parser = _PanelParser(prog=PROG, description=DESCRIPTION, add_help=False)
    add_panel_options(parser)
    try:
        args, rest = parser.parse_known_args(argv)
    except _NotThePanel:
        return None
    if rest:
        return None
    args.command = None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = panel_args(argv) or parse_command_line(build_parser(), argv)
    try:
        if args.command is None:
            from specdec_tui.ui.gc_policy import hold_collections, resume_collections

            if not (args.demo and args.headless):  # the panel, as tui_cmd.run tells it: no collection from its first
                hold_collections()  # import on; tui_cmd.run holds them until the panel has settled
            try:
                from specdec_tui.cli import tui_cmd

                return tui_cmd.run(args)
            finally:
                resume_collections()  # also when the import failed (tui_cmd.run resumes them for a panel that ran)
        from specdec_tui.cli.interrupts import treat_as_interrupt

        treat_as_interrupt()
        return _saved_where_it_belongs(int(args.func(args) or 0))
    except CliError as err:
        print(f"specdec-tui: {terminal_safe(str(err))}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        from specdec_tui.cli.interrupts import interrupted_by

        sig = interrupted_by()
        print(f"specdec-tui: interrupted ({sig.name})", file=sys.stderr)
        return 128 + sig
    except BrokenPipeError:
        return 0
    except Exception as err:
        # A bad config or an unreachable host that a command did not word itself: still one line, no traceback.
        words = _user_error(err)
        if words is None:
            raise
        print(f"specdec-tui: {terminal_safe(words)}", file=sys.stderr)
        return 1


def _saved_where_it_belongs(code: int) -> int:
    """A verb's exit code, 1 if a session it wrote went only to a rescue copy (said on stderr, with its path): a
    script must not read a sweep whose trials are not where it asked as a success."""
    if "specdec_tui.loop.session_saver" not in sys.modules:  # loaded only by verbs that save a session
        return code
    from specdec_tui.loop.session_saver import flush_all

    said = flush_all(30)
    for words in said:
        print(f"specdec-tui: {terminal_safe(words)}", file=sys.stderr)
    return code or (1 if said else 0)


def _user_error(err: Exception) -> str | None:
    """The message of an error the user can act on (ConfigError, HostError, SessionError); None for a bug."""
    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.session import SessionError
    from specdec_tui.hosts.errors import HostError

    return str(err) if isinstance(err, (ConfigError, HostError, SessionError)) else None


if __name__ == "__main__":
    raise SystemExit(main())
