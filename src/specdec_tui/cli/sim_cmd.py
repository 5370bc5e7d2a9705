"""`specdec-tui sim [sglang flags…]`: run the simulated SGLang server (same entry as `python -m specdec_tui.sim`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `sim` command; every argument after it goes to the simulator untouched."""
    p = sub.add_parser(
        "sim",
        help="run a simulated SGLang server (no GPU); takes python -m sglang.launch_server's flags",
        add_help=False,
        prefix_chars="\x00",  # nothing is an option here: pass --flags through verbatim
    )
    p.add_argument("sim_args", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from specdec_tui.sim.server import run as run_sim

    return run_sim(list(args.sim_args), prog="specdec-tui sim")
