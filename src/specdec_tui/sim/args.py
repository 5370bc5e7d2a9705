"""Command line of the simulated server: `sglang serve`'s flags, judged by the release's own parser, plus a few
sim-only ones.

The parser is built from the release's schema (core/sglang_schema; the bundled 0.5.23 by default): what the
release refuses at argument parsing (unknown or ambiguous options, bad values, removed choices), the simulator
refuses with the same words and exit status 2; what it takes, the simulator takes, deprecation warnings included
(upstream's `print_deprecated_warning`: bold yellow, logged while argparse runs, before logging is configured, so
it reaches stderr bare). The speculative rules SGLang applies after parsing are applied here with SGLang's own log
messages (sim/spec_resolve.py). The sim-only flags (--time-scale, --load-seconds, --sim-seed, --gpu-mem-gb,
--sim-fail, --sim-fault) are added to that parser; no 0.5.23 option starts with their names, so prefixes mean the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from specdec_tui.core.flag_rules_capacity import graph_phase_settings
from specdec_tui.core.sglang_schema.argv_parser import ArgvError, new_parser, parse_argv
from specdec_tui.core.sglang_schema.schema import ReleaseSchema, default_schema
from specdec_tui.core.sglang_schema.sim_options import with_simulator
from specdec_tui.sim.profiles import profile_for
from specdec_tui.sim.spec_resolve import resolve_speculative

# The flags whose values make up the CUDA-graph settings (core's precedence reads them in a unit's words).
_GRAPH_FLAGS = ("cuda-graph-config", "cuda-graph-backend-decode", "cuda-graph-backend-prefill",
                "cuda-graph-max-bs-decode", "cuda-graph-max-bs-prefill", "cuda-graph-bs-decode",
                "cuda-graph-bs-prefill", "disable-decode-cuda-graph", "disable-prefill-cuda-graph",
                "disable-cuda-graph")
DEPRECATION_COLOR = ("\033[1;33m", "\033[0m")  # upstream's print_deprecated_warning
_SIM_KEYS = ("time_scale", "load_seconds", "sim_seed", "gpu_mem_gb", "sim_fail", "sim_fault")


@dataclass(slots=True)
class SimArgs:
    """Resolved arguments: SGLang's server args (as SGLang would report them) and the simulator's own knobs."""

    server: dict[str, Any]
    time_scale: float
    load_seconds: float
    sim_seed: int
    gpu_mem_gb: float | None  # None: the model profile's GPU (sim/profiles.py)
    sim_fail: str | None
    sim_fault: str | None = None  # a running fault (corrupt-drafts), unlike sim_fail's start-up failures
    warnings: list[str] = field(default_factory=list)
    deprecated_options: list[str] = field(default_factory=list)  # SGLang's deprecation lines, in order

    @property
    def spec_steps(self) -> int:
        """Draft steps per round, 0 when speculative decoding is off."""
        if not self.server.get("speculative_algorithm"):
            return 0
        return int(self.server.get("speculative_num_steps") or 0)

    @property
    def decode_graph_disabled(self) -> bool:
        """No decode CUDA graph, by SGLang's precedence of --cuda-graph-config, the per-phase flags and the
        deprecated --disable-cuda-graph."""
        return bool(self.server["cuda_graph_config"]["decode"].get("backend") == "disabled")

    @property
    def decode_graph_max_bs(self) -> int | None:
        """The largest decode batch captured in a CUDA graph (None = SGLang's default)."""
        value = self.server["cuda_graph_config"]["decode"].get("max_bs")
        return int(value) if value is not None else None


def deprecation_warnings(a: SimArgs) -> list[str]:
    """The lines SGLang prints for the deprecated flags of this command line, in its words and colour."""
    start, end = DEPRECATION_COLOR
    return [f"{start}{text}{end}" for text in a.deprecated_options]


def build_parser(schema: ReleaseSchema | None = None) -> argparse.ArgumentParser:
    """The release's parser with the simulator's own flags (raises ArgvError where SGLang exits 2)."""
    return new_parser(with_simulator(schema or default_schema()))


def _exit_refused(prog: str, message: str) -> NoReturn:
    """argparse's way out: usage line, `prog: error: message`, status 2."""
    sys.stderr.write(f"usage: {prog} [-h] ...\n{prog}: error: {message}\n")
    raise SystemExit(2)


def parse_sim_args(argv: Sequence[str] | None = None, prog: str = "python -m specdec_tui.sim") -> SimArgs:
    """Parses and resolves; argparse exits 2 on unknown flags or bad values, as SGLang's launcher does."""
    parser = build_parser()
    parser.prog = prog
    parser.description = ("The simulated SGLang server (no GPU): SGLang's `sglang serve` flags, judged by that "
                          "release's own parser, and the simulator's own (--time-scale … --sim-fault, at the end).")
    try:
        parsed = parse_argv(default_schema(), sys.argv[1:] if argv is None else argv, parser)
    except ArgvError as err:
        _exit_refused(prog, err.message)
    ns = parsed.namespace
    if ns.time_scale <= 0:
        _exit_refused(prog, "argument --time-scale: must be > 0")
    _check_nodes(prog, ns)
    warnings: list[str] = []
    failure = resolve_speculative(ns, warnings) or startup_refusal(sys.argv[1:] if argv is None else argv)
    if failure is not None:
        sys.stderr.write(f"{failure}\n")
        raise SystemExit(1)
    ns.cuda_graph_config = graph_phase_settings(_as_unit_flags(ns, _GRAPH_FLAGS))
    if ns.served_model_name is None:
        ns.served_model_name = ns.model_path
    if ns.tokenizer_path is None:
        ns.tokenizer_path = ns.model_path
    if ns.mem_fraction_static is None:
        ns.mem_fraction_static = 0.85 if ns.tp_size >= 4 else 0.88
    if ns.chunked_prefill_size is None:
        ns.chunked_prefill_size = 8192
    if ns.page_size is None:
        ns.page_size = 1
    if ns.context_length is None:
        ns.context_length = profile_for(ns.model_path).profile.context_len
    if ns.random_seed is None:
        ns.random_seed = ns.sim_seed
    server = {k: v for k, v in vars(ns).items() if k not in _SIM_KEYS}
    return SimArgs(
        server=server,
        time_scale=ns.time_scale,
        load_seconds=ns.load_seconds,
        sim_seed=ns.sim_seed,
        gpu_mem_gb=ns.gpu_mem_gb,
        sim_fail=ns.sim_fail,
        sim_fault=ns.sim_fault,
        warnings=warnings,
        deprecated_options=parsed.deprecations,
    )


def startup_refusal(argv: Sequence[str]) -> str | None:
    """The first of the release's start-up checks (core/flag_rules*) this command line fails, as the last line of
    SGLang's traceback; the simulator stops there like SGLang (the panel refuses such a unit before a push)."""
    from specdec_tui.core.flag_rules import speculative_rules
    from specdec_tui.core.flag_rules_capacity import capacity_rules
    from specdec_tui.core.flag_table import canonical_name

    flags: dict[str, str | None] = {}
    name: str | None = None
    for word in argv:
        if word.startswith("--"):
            name, _, inline = word[2:].partition("=")
            name = canonical_name(name)
            flags[name] = inline or None
        elif name is not None:
            flags[name] = word if flags[name] is None else f"{flags[name]} {word}"
    for issue in (*speculative_rules(flags), *capacity_rules(flags)):
        if issue.level == "error" and " stops at start-up: " in issue.message:
            return "ValueError: " + issue.message.split(" stops at start-up: ", 1)[1]
    return None


def _check_nodes(prog: str, ns: argparse.Namespace) -> None:
    """The multi-node flags must describe one node of a world (sim/cluster.py runs the rendezvous)."""
    from specdec_tui.sim.cluster import DistAddr

    if ns.nnodes < 1:
        _exit_refused(prog, "argument --nnodes: must be >= 1")
    if not 0 <= ns.node_rank < ns.nnodes:
        _exit_refused(prog, f"argument --node-rank: must be in [0, {ns.nnodes}) for --nnodes {ns.nnodes}")
    if ns.nnodes > 1 and ns.dist_init_addr is None:
        _exit_refused(prog, "argument --dist-init-addr: required when --nnodes > 1 (node 0's HOST:PORT)")
    if ns.dist_init_addr is not None:
        try:
            DistAddr.parse(ns.dist_init_addr)
        except ValueError as err:
            _exit_refused(prog, f"argument --dist-init-addr: {err}")


def _as_unit_flags(ns: argparse.Namespace, names: Sequence[str]) -> dict[str, str | None]:
    """The parsed values of `names` in a unit's words (a set switch is a bare None, a list is space-separated),
    leaving out what the command line did not set; core's CUDA-graph precedence reads this shape."""
    flags: dict[str, str | None] = {}
    for name in names:
        value = getattr(ns, name.replace("-", "_"), None)
        if value is None or value is False:
            continue
        if value is True:
            flags[name] = None
        elif isinstance(value, dict):
            flags[name] = json.dumps(value)
        elif isinstance(value, list):
            flags[name] = " ".join(str(v) for v in value)
        else:
            flags[name] = str(value)
    return flags


def server_args_repr(server: dict[str, Any]) -> str:
    """`ServerArgs(model_path='...', ...)` as SGLang prints it in its startup line."""
    return "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in server.items()) + ")"
