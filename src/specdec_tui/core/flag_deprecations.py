"""The flags SGLang still accepts but deprecates, what replaces each, and the line SGLang prints for them.

Source read (not copied), sgl-project/sglang:
  - `python/sglang/srt/server_args.py` (add_cli_args, "Deprecated argument registrations"):
    `--cuda-graph-max-bs` stores into `cuda_graph_max_bs_decode` (new_flag "--cuda-graph-max-bs-decode": the
    decode phase only), `--cuda-graph-bs` into `cuda_graph_bs_decode` ("--cuda-graph-bs-decode"),
    `--disable-cuda-graph` stores True with new_flag "--cuda-graph-backend-{decode,prefill}=disabled",
    `--speculative-dflash-draft-window-size` into `speculative_draft_window_size`.
  - `python/sglang/srt/arg_groups/argparse_actions.py`: DeprecatedAliasStoreAction / DeprecatedStoreTrueAction log
    "'{option_string}' is deprecated and will be removed in a future release. Use '{new_flag}' instead."
    through `print_deprecated_warning`, which wraps it in bold yellow (ESC[1;33m ... ESC[0m).
  - `python/sglang/srt/arg_groups/cuda_graph_hook.py` parse_cuda_graph_config: the legacy `disable_cuda_graph`
    has the lowest precedence; an explicit `--cuda-graph-backend-{phase}` wins over it.
Before the per-phase split (v0.5.x) the old names were the only ones, so a rewrite needs a current SGLang.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

VALUE = "{value}"  # stands for the old flag's value in `replacements`


@dataclass(frozen=True)
class Deprecation:
    """An old flag: upstream's `new_flag` text (verbatim, it is what SGLang prints) and the flags that say
    the same thing now; a replacement value of VALUE carries the old flag's value over."""

    old: str
    new_flag: str
    replacements: tuple[tuple[str, str | None], ...]

    def rewrite(self, value: str | None, present: Mapping[str, str | None]) -> dict[str, str | None]:
        """The new flags for `--old value` in a unit whose flags (canonical names, in command-line order) are
        `present`. A new flag the unit already sets is left alone, except where it shares the old flag's argparse
        destination and comes first: SGLang keeps the later of the two, so the old flag's value is the one to keep.
        An explicit per-phase backend always wins over --disable-cuda-graph (it has the higher precedence)."""
        order = list(present)
        result: dict[str, str | None] = {}
        for name, new in self.replacements:
            if name not in present:
                result[name] = value if new is VALUE else new
            elif new is VALUE and self.old in present and order.index(self.old) > order.index(name):
                result[name] = value
        return result


DEPRECATIONS: dict[str, Deprecation] = {d.old: d for d in (
    Deprecation("cuda-graph-max-bs", "--cuda-graph-max-bs-decode", (("cuda-graph-max-bs-decode", VALUE),)),
    Deprecation("cuda-graph-bs", "--cuda-graph-bs-decode", (("cuda-graph-bs-decode", VALUE),)),
    Deprecation("disable-cuda-graph", "--cuda-graph-backend-{decode,prefill}=disabled",
                (("cuda-graph-backend-decode", "disabled"), ("cuda-graph-backend-prefill", "disabled"))),
    Deprecation("speculative-dflash-draft-window-size", "--speculative-draft-window-size",
                (("speculative-draft-window-size", VALUE),)),
)}


def deprecation_message(option_string: str) -> str:
    """SGLang's deprecation warning for a flag as written on the command line (e.g. "--cuda-graph-max-bs")."""
    deprecation = DEPRECATIONS[option_string.removeprefix("--")]
    return (f"'{option_string}' is deprecated and will be removed in a future release. "
            f"Use '{deprecation.new_flag}' instead.")
