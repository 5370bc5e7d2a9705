"""`python -m specdec_tui.sim [sglang flags…]`."""

from specdec_tui.sim.server import run

if __name__ == "__main__":
    raise SystemExit(run())
