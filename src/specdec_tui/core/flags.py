"""SGLang's speculative-decoding and capacity flags, and the rules SGLang applies to them at startup.

Source read (not copied): sgl-project/sglang `python/sglang/srt/server_args.py`
  - commit 001067fffe33427bee0ed2f007fb7551a1d76b44 (2026 main: ServerArgs dataclass with Arg(...) metadata;
    help texts, defaults, the --speculative-algorithm builtins incl. DFLASH/DSPARK, --tp-size/--dp-size aliases);
  - a v0.5.x copy of the same file (argparse `add_cli_args` and `_handle_speculative_decoding`): choices
    ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"], NEXTN rewritten to EAGLE, DeepSeek/GLM-style MTP
    models get the target model as draft, steps unset => topk and draft tokens must be unset too (assert),
    topk == 1 => num_draft_tokens is *adjusted* to steps + 1 with a logged warning, NGRAM takes
    eagle-topk from --speculative-ngram-max-bfs-breadth, --cuda-graph-max-bs/--cuda-graph-bs/--disable-cuda-graph.
  - `python/sglang/srt/speculative/eagle_utils.py` organize_draft_results: draft tokens are the top
    (num_draft_tokens - 1) of topk + (steps - 1) * topk**2 tree candidates, so more is impossible.
`--tp` and `--dp` are not declared by SGLang; argparse's prefix matching accepts them for --tp-size/--dp-size.

Errors: nothing here raises on user input; `validate` reports problems as Issue records. `spec_for` returns
None for an unknown name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, Self, TypeVar

FlagType = Literal["int", "float", "str", "bool", "choice", "int_list"]
Group = Literal["speculative", "capacity", "server"]
Level = Literal["error", "warning"]

SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK")
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
NEEDS_DRAFT_MODEL = ("EAGLE3", "STANDALONE", "DFLASH", "DSPARK")
TREE_FLAGS = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")


@dataclass(frozen=True)
class FlagSpec:
    """One SGLang flag: its type and limits, SGLang's default (None = decided by SGLang at startup)."""

    name: str
    type: FlagType
    group: Group
    help: str
    default: str | int | float | bool | None = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    exclusive_max: bool = False
    aliases: tuple[str, ...] = ()
    special: tuple[str, ...] = ()  # values allowed outside the range, e.g. "-1" for "disabled"

    @property
    def is_switch(self) -> bool:
        return self.type == "bool"

    def describe_range(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.minimum is None and self.maximum is None:
            return ""
        lo = "" if self.minimum is None else f"{'>' if self.exclusive_min else '>='} {self.minimum:g}"
        hi = "" if self.maximum is None else f"{'<' if self.exclusive_max else '<='} {self.maximum:g}"
        text = " and ".join(part for part in (lo, hi) if part)
        return text + ("" if not self.special else " (or " + ", ".join(self.special) + ")")


def _spec(name: str, type_: FlagType, group: Group, help_: str, **kw: object) -> FlagSpec:
    return FlagSpec(name, type_, group, help_, **kw)  # type: ignore[arg-type]


_TABLE = [
    # --- speculative decoding
    _spec("speculative-algorithm", "choice", "speculative",
          "Speculative algorithm. NEXTN is an alias of EAGLE (the model's own MTP head drafts).",
          choices=SPEC_ALGORITHMS),
    _spec("speculative-draft-model-path", "str", "speculative",
          "The path of the draft model weights: a local folder or a Hugging Face repo ID.",
          aliases=("speculative-draft-model",)),
    _spec("speculative-draft-model-revision", "str", "speculative",
          "The draft model version to use: a branch name, a tag name, or a commit id."),
    _spec("speculative-num-steps", "int", "speculative",
          "The number of steps sampled from the draft model in speculative decoding.", minimum=1),
    _spec("speculative-eagle-topk", "int", "speculative",
          "The number of tokens sampled from the draft model in EAGLE-2 each step.", minimum=1),
    _spec("speculative-num-draft-tokens", "int", "speculative",
          "The number of draft tokens verified per step (with topk 1 SGLang forces steps + 1).", minimum=1),
    _spec("speculative-accept-threshold-single", "float", "speculative",
          "Accept a draft token if its probability in the target model is greater than this threshold.",
          default=1.0, minimum=0.0, maximum=1.0),
    _spec("speculative-accept-threshold-acc", "float", "speculative",
          "The accept probability of a draft token is raised from p to min(1, p / threshold_acc).",
          default=1.0, minimum=0.0, maximum=1.0, exclusive_min=True),
    _spec("speculative-token-map", "str", "speculative", "The path of the draft model's small vocab table."),
    _spec("speculative-attention-mode", "choice", "speculative",
          "Attention backend mode for target verify and draft extend.", default="prefill",
          choices=("prefill", "decode")),
    _spec("speculative-draft-attention-backend", "str", "speculative",
          "Attention backend for speculative decoding drafting."),
    # --- capacity
    _spec("mem-fraction-static", "float", "capacity",
          "The fraction of GPU memory for static allocation (weights and KV cache pool). Lower it on OOM.",
          minimum=0.0, maximum=1.0, exclusive_min=True, exclusive_max=True),
    _spec("max-running-requests", "int", "capacity",
          "The maximum number of running requests (SGLang derives it from the KV pool when unset).", minimum=1),
    _spec("max-total-tokens", "int", "capacity",
          "The maximum number of tokens in the memory pool (computed from the memory fraction when unset).",
          minimum=1),
    _spec("max-prefill-tokens", "int", "capacity", "The maximum number of tokens in a prefill batch.",
          default=16384, minimum=1),
    _spec("chunked-prefill-size", "int", "capacity",
          "The maximum number of tokens in a chunk for chunked prefill; -1 disables chunked prefill.",
          minimum=1, special=("-1",)),
    _spec("context-length", "int", "capacity",
          "The model's maximum context length (defaults to the model's config.json).", minimum=1),
    _spec("cuda-graph-max-bs", "int", "capacity",
          "The maximum batch size captured in CUDA graphs.", minimum=1),
    _spec("cuda-graph-bs", "int_list", "capacity", "The list of batch sizes captured in CUDA graphs."),
    _spec("disable-cuda-graph", "bool", "capacity", "Disable CUDA graphs.", default=False),
    _spec("page-size", "int", "capacity", "The number of tokens in a KV cache page.", minimum=1),
    _spec("tp-size", "int", "capacity", "The tensor parallelism size.", default=1, minimum=1,
          aliases=("tp", "tensor-parallel-size")),
    _spec("dp-size", "int", "capacity", "The data parallelism size.", default=1, minimum=1,
          aliases=("dp", "data-parallel-size")),
    _spec("disable-overlap-schedule", "bool", "capacity",
          "Disable the overlap scheduler (CPU scheduling overlapped with the GPU worker).", default=False),
    # --- server
    _spec("model-path", "str", "server",
          "The path of the model weights: a local folder or a Hugging Face repo ID.", aliases=("model",)),
    _spec("served-model-name", "str", "server", "The model name returned by /v1/models."),
    _spec("host", "str", "server", "The host of the HTTP server.", default="127.0.0.1"),
    _spec("port", "int", "server", "The port of the HTTP server.", default=30000, minimum=1, maximum=65535),
    _spec("enable-metrics", "bool", "server", "Enable Prometheus metrics.", default=False),
    _spec("decode-log-interval", "int", "server",
          "The log and metrics interval (in decode iterations) for decode batches.", default=40, minimum=1),
    _spec("log-level", "str", "server", "The logging level of all loggers.", default="info"),
    _spec("trust-remote-code", "bool", "server", "Allow custom model code from the Hub.", default=False),
]

FLAGS: dict[str, FlagSpec] = {spec.name: spec for spec in _TABLE}
_ALIASES: dict[str, str] = {alias: spec.name for spec in _TABLE for alias in spec.aliases}


def _bare(name: str) -> str:
    return name[2:] if name.startswith("--") else name


def canonical_name(name: str) -> str:
    """The table's name for a flag written as an alias (tp -> tp-size); unknown names come back bare."""
    bare = _bare(name)
    return _ALIASES.get(bare, bare)


def spec_for(name: str) -> FlagSpec | None:
    """The FlagSpec for a name, alias or `--name`; None when the table does not know it."""
    return FLAGS.get(canonical_name(name))


@dataclass(frozen=True)
class Issue:
    """A problem found in a flag set, in words. `fix` holds flag -> value to set (None = bare switch);
    `remove` the flags to delete; both empty when no automatic fix makes sense."""

    level: Level
    flag: str | None
    message: str
    fix: dict[str, str | None] | None = None
    remove: tuple[str, ...] = field(default=())

    @property
    def fixable(self) -> bool:
        return bool(self.fix) or bool(self.remove)


def _check_value(name: str, spec: FlagSpec, value: str | None) -> Issue | None:
    flag = f"--{name}"
    if spec.is_switch:
        if value is not None:
            return Issue("error", name, f"{flag} is a switch and takes no value; SGLang would stop with "
                         f"'unrecognized arguments: {value}'. Write it bare to turn it on, or remove it.",
                         fix={name: None})
        return None
    if value is None:
        return Issue("error", name, f"{flag} needs a value; SGLang would stop at startup.")
    if spec.type == "choice":
        if value in spec.choices:
            return None
        if value.upper() in spec.choices:
            return Issue("warning", name, f"{flag} {value}: SGLang spells it {value.upper()}; older versions "
                         "reject other spellings.", fix={name: value.upper()})
        return Issue("error", name, f"{flag} {value} is not a choice SGLang knows; use {spec.describe_range()}.")
    if spec.type == "int_list":
        bad = [part for part in value.split() if not part.lstrip("-").isdigit()]
        return Issue("error", name, f"{flag} takes whole numbers separated by spaces, not {bad[0]!r}.") if bad else None
    if spec.type not in ("int", "float"):
        return None
    try:
        number = int(value) if spec.type == "int" else float(value)
    except ValueError:
        kind = "a whole number" if spec.type == "int" else "a number"
        return Issue("error", name, f"{flag} needs {kind}, not {value!r}.")
    if value in spec.special:
        return None
    too_low = spec.minimum is not None and (number <= spec.minimum if spec.exclusive_min else number < spec.minimum)
    too_high = spec.maximum is not None and (number >= spec.maximum if spec.exclusive_max else number > spec.maximum)
    if too_low or too_high:
        return Issue("error", name, f"{flag} {value} is out of range: it must be {spec.describe_range()}.")
    return None


def _int(flags: Mapping[str, str | None], name: str) -> int | None:
    value = flags.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _speculative_rules(flags: Mapping[str, str | None]) -> list[Issue]:
    issues: list[Issue] = []
    algorithm = (flags.get("speculative-algorithm") or "").upper() or None
    spec_flags = [n for n in flags if n.startswith("speculative-") and n != "speculative-algorithm"]
    if algorithm is None:
        if spec_flags:
            names = ", ".join(f"--{n}" for n in spec_flags)
            issues.append(Issue("warning", spec_flags[0], f"{names} do nothing without --speculative-algorithm; "
                                "set an algorithm or remove them.", remove=tuple(spec_flags)))
        return issues
    steps, topk, draft = (_int(flags, n) for n in TREE_FLAGS)
    has = {n: n in flags for n in TREE_FLAGS}
    if algorithm == "NGRAM":
        if flags.get("speculative-draft-model-path"):
            issues.append(Issue("warning", "speculative-draft-model-path", "NGRAM drafts from earlier text, not "
                                "from a model; --speculative-draft-model-path is ignored.",
                                remove=("speculative-draft-model-path",)))
        if has["speculative-eagle-topk"]:
            issues.append(Issue("warning", "speculative-eagle-topk", "with NGRAM, SGLang replaces "
                                "--speculative-eagle-topk by --speculative-ngram-max-bfs-breadth.",
                                remove=("speculative-eagle-topk",)))
        return issues
    if algorithm in NEEDS_DRAFT_MODEL and not flags.get("speculative-draft-model-path"):
        issues.append(Issue("error", "speculative-draft-model-path", f"{algorithm} needs a separate draft model: "
                            "set --speculative-draft-model-path."))
    if algorithm == "EAGLE" and not flags.get("speculative-draft-model-path"):
        issues.append(Issue("warning", "speculative-draft-model-path", "EAGLE without "
                            "--speculative-draft-model-path works only when the model carries its own MTP/NextN "
                            "head (SGLang then drafts with the target model); write NEXTN to say so, or set a "
                            "draft model.", fix={"speculative-algorithm": "NEXTN"}))
    if algorithm not in EAGLE_FAMILY:
        return issues
    if not has["speculative-num-steps"]:
        if has["speculative-eagle-topk"] or has["speculative-num-draft-tokens"]:
            present = tuple(n for n in TREE_FLAGS[1:] if has[n])
            issues.append(Issue("error", present[0], "without --speculative-num-steps SGLang chooses steps, topk "
                                "and draft tokens itself and refuses to start when only some are given; set "
                                "--speculative-num-steps too, or remove " + " and ".join(f"--{n}" for n in present)
                                + ".", remove=present))
        return issues
    if steps is None or (has["speculative-eagle-topk"] and topk is None):
        return issues  # a type error was already reported
    if topk is None:
        issues.append(Issue("error", "speculative-eagle-topk", "with --speculative-num-steps set, SGLang skips "
                            "its automatic choice and needs --speculative-eagle-topk as well (1 drafts a single "
                            "chain).", fix={"speculative-eagle-topk": "1",
                                            "speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    if topk == 1:
        if draft != steps + 1:
            given = f"--speculative-num-draft-tokens {draft}" if draft is not None else "no --speculative-num-draft-tokens"
            issues.append(Issue("warning", "speculative-num-draft-tokens", f"with topk 1 the draft is one chain "
                                f"of {steps} tokens plus the root, so SGLang overrides {given} with {steps + 1} "
                                "at startup (it logs 'speculative_num_draft_tokens is adjusted'); write "
                                f"{steps + 1} so the unit says what runs.",
                                fix={"speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    limit = topk + (steps - 1) * topk * topk + 1
    if draft is None:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"with topk {topk} SGLang needs "
                            f"--speculative-num-draft-tokens (at most {limit} for {steps} steps)."))
    elif draft > limit:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{draft} draft tokens are impossible: "
                            f"{steps} steps with topk {topk} build a tree of only {limit - 1} candidates plus "
                            f"the root, so at most {limit}.", fix={"speculative-num-draft-tokens": str(limit)}))
    return issues


def _capacity_rules(flags: Mapping[str, str | None]) -> list[Issue]:
    issues: list[Issue] = []
    try:
        fraction = float(flags["mem-fraction-static"] or "")
    except (KeyError, ValueError):
        fraction = None
    if fraction is not None and 0.95 < fraction < 1:
        issues.append(Issue("warning", "mem-fraction-static", f"--mem-fraction-static {fraction:g} leaves little "
                            "memory for activations and CUDA graphs; startup or the first large batch may run "
                            "out of memory."))
    if "disable-cuda-graph" in flags and ("cuda-graph-max-bs" in flags or "cuda-graph-bs" in flags):
        issues.append(Issue("warning", "cuda-graph-max-bs", "CUDA graph batch sizes do nothing while "
                            "--disable-cuda-graph is set.",
                            remove=tuple(n for n in ("cuda-graph-max-bs", "cuda-graph-bs") if n in flags)))
    if "model-path" not in flags:
        issues.append(Issue("error", "model-path", "SGLang needs --model-path (or --model) to start."))
    return issues


def validate(flags: Mapping[str, str | None]) -> list[Issue]:
    """Checks a flag set (names with or without "--", aliases allowed) against the table and SGLang's rules.

    Unknown flags are kept and reported as warnings; value errors come first, then cross-flag rules.
    """
    issues: list[Issue] = []
    canonical: dict[str, str | None] = {}
    written_as: dict[str, str] = {}
    for written, value in flags.items():
        name = canonical_name(written)
        if name in canonical:
            issues.append(Issue("warning", name, f"--{written_as[name]} and --{_bare(written)} set the same "
                                "thing; SGLang keeps the last one.", remove=(written_as[name],)))
        canonical[name], written_as[name] = value, _bare(written)
    for name, value in canonical.items():
        spec = FLAGS.get(name)
        if spec is None:
            issues.append(Issue("warning", name, f"--{name} is not in this tool's SGLang flag table; it is kept "
                                "as written and not checked."))
            continue
        problem = _check_value(name, spec, value)
        if problem:
            issues.append(problem)
    issues.extend(_speculative_rules(canonical))
    issues.extend(_capacity_rules(canonical))
    return issues


class FlagEditable(Protocol):
    """What `apply_fix` needs of a unit (`unit.UnitFile` is one); a protocol, so this module does not
    import the unit model, which imports this one for flag names."""

    def set_flags(self, mapping: Mapping[str, str | None], unset: Iterable[str] = ()) -> Self: ...


EditableT = TypeVar("EditableT", bound=FlagEditable)


def apply_fix(unit: EditableT, issue: Issue) -> EditableT:
    """Returns the unit with the issue's fix applied (unchanged when the issue has none)."""
    return unit.set_flags(issue.fix or {}, unset=issue.remove)


def groups() -> dict[str, list[FlagSpec]]:
    """The table by group, in table order (for forms and `unit show`)."""
    result: dict[str, list[FlagSpec]] = {}
    for spec in _TABLE:
        result.setdefault(spec.group, []).append(spec)
    return result
