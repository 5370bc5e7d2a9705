"""A simulated SGLang server: same flags, logs, endpoints and speculative-decoding timing, no GPU.

`python -m specdec_tui.sim …` or `specdec-tui sim …`; see `server.run`.
"""

from specdec_tui.sim.server import run

__all__ = ["run"]
