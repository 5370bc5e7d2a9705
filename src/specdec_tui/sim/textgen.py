"""Plausible token text for the simulated model, deterministic from the seed and the prompt.

When the seed's trap holds (greedy + ignore_eos) the text falls into a loop after a short opening, the way a real
model degenerates past its natural end, so a client can notice the degeneracy.
"""

from __future__ import annotations

import random

from specdec_tui.sim.tokenizer import count_tokens

_WORDS = (
    "the a of to and in that is for it with as on was by this be are from at or an have not which but they "
    "their more can one has all were its we if would about when there been into other some only also these "
    "system model memory request token cache server decode draft step batch kernel layer expert weight graph "
    "latency throughput budget queue schedule verify accept speculative parallel tensor pipeline bandwidth "
    "quickly carefully simply however therefore because although while since after before during between "
    "engineer measure tune compare restart observe record improve reduce increase change keep check explain "
    "small large fast slow stable early late higher lower better worse clear simple useful careful "
    "river mountain garden window morning evening story letter journey harbor lantern meadow village"
).split()
_PUNCT = (",", ".", ",", ".", ";", ":")
EOS_TOKEN_ID = 248044  # Qwen3.5 <|im_end|>; reported as matched_stop when the simulated model stops


class TextStream:
    """Yields one token string at a time for one request."""

    def __init__(self, seed: int, prompt: str, index: int, degenerate: bool) -> None:
        self.rng = random.Random(f"{seed}|{index}|{prompt}")
        self.degenerate = degenerate
        self.count = 0
        self.repeated_phrase: list[str] = []
        self.opening = self.rng.randint(12, 40)
        self.capitalize = True
        self.last_punct = False

    def _fresh(self) -> str:
        if self.count > 0 and not self.capitalize and not self.last_punct and self.rng.random() < 0.12:
            self.last_punct = True
            tok = self.rng.choice(_PUNCT)
            self.capitalize = tok in (".",)
            return tok
        self.last_punct = False
        word = self.rng.choice(_WORDS)
        if self.capitalize:
            word = word.capitalize()
            self.capitalize = False
        return (" " if self.count > 0 else "") + word

    def next_token(self) -> str:
        if self.degenerate and self.count >= self.opening:
            if not self.repeated_phrase:
                self.repeated_phrase = [" " + w for w in self.rng.sample(_WORDS, 7)] + ["."]
            tok = self.repeated_phrase[(self.count - self.opening) % len(self.repeated_phrase)]
        else:
            tok = self._fresh()
        self.count += 1
        return tok

    def take(self, n: int) -> str:
        return "".join(self.next_token() for _ in range(n))


def count_prompt_tokens(text: str) -> int:
    """The simulated tokenizer's count (sim/tokenizer.py: a word's 5-character pieces), at least one."""
    return count_tokens(text)
