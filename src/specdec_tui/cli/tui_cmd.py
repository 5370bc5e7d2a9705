"""Starting the panel (the default command)."""

from __future__ import annotations

import argparse

from specdec_tui.cli.main import CliError


def run(args: argparse.Namespace) -> int:
    if args.demo:
        raise CliError("the embedded demo is not built yet (issue 3); try `specdec-tui unit show FILE` meanwhile", code=2)
    raise CliError("the panel UI is not built yet (issue 6)", code=2)
