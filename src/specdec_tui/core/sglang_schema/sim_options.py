"""The simulator's own options (the demo's unit and the lab's run `python -m specdec_tui.sim`): a release's schema
plus these is what the simulator's parser takes, so a unit that runs the simulator is judged with them.
sim/args.py declares them from here (one owner); no 0.5.23 option starts with their names."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from specdec_tui.core.sglang_schema.schema import OptionSpec, ReleaseSchema

SIM_MODULE = "specdec_tui.sim"
SIM_FAILURES = ("not-enough-memory", "cuda-graph-oom", "hang-loading", "crash-after-ready")
SIM_FAULTS = ("corrupt-drafts", "acceptance-drift")


def _option(name: str, type_: str, default: float | int | None, help_: str,
            choices: tuple[str, ...] | None = None) -> OptionSpec:
    return OptionSpec(option_strings=(f"--{name}",), dest=name.replace("-", "_"), action="store",
                      action_class="argparse._StoreAction", nargs=None, type=type_, choices=choices,
                      default=default, const=None, required=False, help=help_)


SIM_OPTIONS = (
    _option("time-scale", "float", 1.0, "run startup and decoding X times faster"),
    _option("load-seconds", "float", 4.0, "simulated model loading time (before scaling)"),
    _option("sim-seed", "int", 0, "seed for generated text and acceptance draws"),
    _option("gpu-mem-gb", "float", None, "memory per simulated GPU (default: the model profile's GPU)"),
    _option("sim-fail", "str", None, "force a failure mode for rehearsal", SIM_FAILURES),
    _option("sim-fault", "str", None, "a running fault: corrupt-drafts makes every draft wrong (accept length 1) "
            "and a speculative server's text garbage after its opening, as a broken draft model does; acceptance-drift "
            "makes the draft lose the context: acceptance falls as a request's context grows (sglang#30763)",
            SIM_FAULTS),
)


@cache
def with_simulator(schema: ReleaseSchema) -> ReleaseSchema:
    """The release's schema and the simulator's options: what `python -m specdec_tui.sim` takes."""
    return replace(schema, options=(*schema.options, *SIM_OPTIONS), by_string={},
                   source=f"{schema.source} + simulator")
