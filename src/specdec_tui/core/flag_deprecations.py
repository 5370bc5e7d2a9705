"""The rewrites the panel offers (`f`) for flags a release deprecates or no longer has: what the schema cannot say.

The schema says THAT a flag is deprecated and prints upstream's own warning (its action's `new_flag`), and argparse
says that a removed flag is unknown or an ambiguous prefix; neither says how to write the unit now. That is here,
read (not copied) from SGLang's sources:
  - 0.5.23 `srt/server_args.py` "Deprecated argument registrations": `--disable-cuda-graph` → the per-phase
    backends disabled; `--enable-dp-attention` → `--attn-dp-size <dp-size>` (`parallel_hook.py`
    `_handle_deprecated_dp_attention`: with attn_dp_size 1, attn_dp_size takes dp_size and dp_size becomes 1);
    `--monokernel-backend amd` → `--enable-amd-monokernel`.
  - releases before the per-phase CUDA graphs had `--cuda-graph-max-bs` / `--cuda-graph-bs` (the decode phase's,
    later deprecated aliases of `--cuda-graph-{max-bs,bs}-decode`; gone in 0.5.23, where `--cuda-graph-max-bs` is
    an ambiguous prefix), and `--speculative-dflash-draft-window-size` (now `--speculative-draft-window-size`).
A rewrite is offered only when the release has every flag it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

VALUE = "{value}"  # stands for the old flag's value in `replacements`


@dataclass(frozen=True)
class Rewrite:
    """An old flag and the flags that say the same thing in a current release; a replacement value of VALUE
    carries the old flag's value over. `drop`: flags the new spelling makes redundant (removed with the old)."""

    old: str
    replacements: tuple[tuple[str, str | None], ...]
    drop: tuple[str, ...] = ()

    def rewrite(self, value: str | None, present: Mapping[str, str | None]) -> dict[str, str | None]:
        """The new flags for `--old value` in a unit whose flags (canonical names, in command-line order) are
        `present`. A new flag the unit already sets is left alone, except where it shares the old flag's argparse
        destination and comes first: SGLang keeps the later of the two, so the old flag's value is the one to keep."""
        if self.old == "enable-dp-attention":
            return {} if "attn-dp-size" in present else {"attn-dp-size": present.get("dp-size") or "1"}
        order = list(present)
        result: dict[str, str | None] = {}
        for name, new in self.replacements:
            if name not in present:
                result[name] = value if new is VALUE else new
            elif new is VALUE and self.old in present and order.index(self.old) > order.index(name):
                result[name] = value
        return result

    def writes(self) -> tuple[str, ...]:
        return ("attn-dp-size",) if self.old == "enable-dp-attention" else tuple(n for n, _ in self.replacements)


REWRITES: dict[str, Rewrite] = {r.old: r for r in (
    Rewrite("disable-cuda-graph", (("cuda-graph-backend-decode", "disabled"), ("cuda-graph-backend-prefill", "disabled"))),
    Rewrite("enable-dp-attention", (), drop=("dp-size",)),
    Rewrite("monokernel-backend", (("enable-amd-monokernel", None),)),
    Rewrite("cuda-graph-max-bs", (("cuda-graph-max-bs-decode", VALUE),)),
    Rewrite("cuda-graph-bs", (("cuda-graph-bs-decode", VALUE),)),
    Rewrite("speculative-dflash-draft-window-size", (("speculative-draft-window-size", VALUE),)),
)}
