"""The panel's garbage-collector policy: freeze the start-up heap after the first frame, collect young objects less
often, and run the full collections when a pause costs the user nothing: right after a key's answer is on screen.

Why (issue 16, measured with `bench/journal_flood.py` at 5,000 lines/s on a 2-core machine): Textual's rendering
makes cyclic garbage on every frame (each `Strip` holds seven FIFO caches, and a crop that changes nothing caches
the strip in itself), so with CPython's thresholds (700, 10, 10) the collector ran a full collection every ~0.7 s
under a flood, each walking the ~140,000 objects the panel built at start-up (widgets, styles, CSS, modules):
70-200 ms with the event loop stopped, which was the whole tail of key-to-screen latency. `gc.freeze()` moves
what exists after the first frame into the permanent generation, never walked again; a young threshold of 2,000
lets most of a frame's temporaries die before a collection instead of being promoted. Left to CPython, full
collections then either came every ~1.5 s at 50-135 ms (old threshold 10) or rarely but huge (100: one of
285 ms after 25 s of flood), and a key pressed meanwhile waited. So the old threshold stays high and
`HeapKeeper` runs a full collection at most every FULL_EVERY_S, after the frame that answered a key (the next
key is rarely sooner than ~100 ms) or when no key came for a while. Garbage is still collected; nothing here
disables the collector.

A full collection walks every object alive since the last freeze, and a panel keeps tens of thousands alive
(widgets' render caches, the journal's lines, a sweep's results): 45-65 ms each during a sweep (issue 34,
bench/sweep_keys.py), and at a key every 100 ms the next key waited for it. So `HeapKeeper` freezes what survives
each of its full collections, and the next one walks only what came since (a few ms). Frozen objects are still
freed by reference counting; only a cycle among them waits — for a *whole* collection, which thaws the frozen heap
(`gc.unfreeze`), collects everything and freezes the survivors again: when no key came for THAW_QUIET_S (at most
every THAW_EVERY_S), and at the latest after THAW_AT_MOST_FULLS frozen collections (~100-300 ms then, rarely).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Net allocations before a young collection (CPython: 700). A frame of the panel allocates tens of thousands;
# at 700 its own temporaries were promoted mid-frame. 5,000 made each middle collection slower (up to 50 ms).
YOUNG_THRESHOLD = 2_000
MIDDLE_THRESHOLD = 10  # young collections per middle one (CPython's default)
OLD_THRESHOLD = 100  # middle collections before CPython considers a full one itself (its default: 10)
FULL_EVERY_S = 3.0  # HeapKeeper: a full collection at most this often (~50 ms each under a 5,000 lines/s flood)
QUIET_AFTER_S = 1.0  # ... and, without keys, once none came for this long
# A key's answer frame drawn later than this after the key was handled (a busy loop under a flood) is too near the
# next key for a full collection: measured under 20,000 lines/s, collections started up to 72 ms after the key and
# the next key (~100 ms after the last, at 10 keys/s) waited for them.
PAUSE_WINDOW_S = 0.03
HEAP_TICK_S = 2.0  # how often the app asks `HeapKeeper.tick`
WORK_BEFORE_FULL = 10  # middle collections since the last full one: less means little was allocated (idle)
THAW_QUIET_S = 5.0  # a whole collection (frozen heap included) once no key came for this long ...
THAW_EVERY_S = 60.0  # ... at most this often (it walks everything: ~100-300 ms, a few ‰ of a core at this rate) ...
THAW_AT_MOST_FULLS = 100  # ... or after this many frozen full collections (~5 min of keys every 3 s), keys or not


START_HOLD_MAX_S = 10.0  # the collector comes back by then even if the panel never got to `settle_heap`


def hold_collections() -> None:
    """The real program, before it imports and builds the panel: no collection until `settle_heap`. Start-up
    creates the ~140,000 objects the panel lives with, and CPython's collector walked them again and again
    meanwhile: 35 ms of a 650 ms start offline, 70 ms (one full collection) on the demo host, measured on a
    2-core machine — time the first frame waited for. `settle_heap` collects once, then freezes what is left."""
    gc.disable()


def settle_heap() -> None:
    """Freeze the objects that exist now and set the thresholds. Call once, after the first frame:
    what start-up built lives as long as the panel, so walking it on every full collection is pure cost."""
    gc.collect()  # start-up's own garbage goes now, not into the permanent generation
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
    gc.freeze()
    gc.enable()  # after `hold_collections`


def freeze_loaded() -> None:
    """A long session's trials, loaded after the first frame (ui.session_load), join the frozen heap: loaded after
    `settle_heap`, a 1,000-trial session's ~100,000 result objects were walked by every full collection for the
    rest of the panel's life, each one longer while keys waited (issue 34). Collected first, so what is garbage
    now is not kept; what is frozen and dies later is freed by reference counting, its cycles are not collected
    (a few MB once, as for the start-up heap). Only for a panel whose heap was settled (the real program)."""
    gc.collect()
    gc.freeze()


def resume_collections() -> None:
    """The collector back on, thresholds untouched: a start that never reached `settle_heap` (START_HOLD_MAX_S)."""
    gc.enable()


@dataclass
class HeapKeeper:
    """Runs the full collections at moments that cost no key its answer (see the module docstring).

    `key_answered` after the frame that shows a key's effect, `tick` from a timer; each collects when the last
    full collection (its own or CPython's) is FULL_EVERY_S old."""

    clock: Callable[[], float] = time.monotonic
    last_full: float = field(default_factory=time.monotonic)
    last_key: float = field(default_factory=time.monotonic)
    collections: int = 0
    handled_at: float = float("-inf")  # when the last key had gone all its way
    middle_since_full: int = WORK_BEFORE_FULL  # middle collections since the last full one (see _collect_if_due)
    frozen_since_thaw: int = 0  # full collections whose survivors were frozen since the last whole collection
    last_whole: float = field(default_factory=time.monotonic)
    whole_collections: int = 0

    def __post_init__(self) -> None:
        gc.callbacks.append(self._noticed)

    def close(self) -> None:
        if self._noticed in gc.callbacks:
            gc.callbacks.remove(self._noticed)

    def _now(self) -> float:
        return self.clock()

    def _noticed(self, phase: str, info: dict[str, int]) -> None:
        if phase != "stop":
            return
        if info.get("generation") == 2:
            self.last_full = self._now()
            self.middle_since_full = 0
        elif info.get("generation") == 1:
            self.middle_since_full += 1

    def key_handled(self) -> None:
        """A key has gone all its way (ui.input_order); its answer's frame is next (`answer_shown`)."""
        self.handled_at = self._now()

    def answer_shown(self, *, more_input: bool = False) -> None:
        """The frame after the key is drawn. A due full collection runs now unless another key is on its way or
        this frame came more than PAUSE_WINDOW_S after the key (the next key is near); a later key's answer or a
        quiet spell collects instead."""
        now = self.last_key = self._now()
        if not more_input and now - self.handled_at <= PAUSE_WINDOW_S:
            self._collect_if_due()

    def key_answered(self) -> None:
        """A key handled and its answer shown at once."""
        self.key_handled()
        self.answer_shown()

    def tick(self) -> None:
        now = self._now()
        quiet_for = now - self.last_key
        if quiet_for >= THAW_QUIET_S and self.frozen_since_thaw and now - self.last_whole >= THAW_EVERY_S:
            self._collect(whole=True)
        elif quiet_for >= QUIET_AFTER_S:
            self._collect_if_due()

    def _collect_if_due(self) -> None:
        """Due when the last full collection is FULL_EVERY_S old and the panel allocated since (an idle panel's
        heap barely changes: a full collection every few seconds was ~1 % of a core for nothing)."""
        if self._now() - self.last_full >= FULL_EVERY_S and self.middle_since_full >= WORK_BEFORE_FULL:
            self._collect(whole=self.frozen_since_thaw >= THAW_AT_MOST_FULLS)

    def _collect(self, *, whole: bool) -> None:
        """A full collection, its survivors frozen; `whole`: the frozen heap is thawed first (its cycles found)."""
        if whole:
            gc.unfreeze()
            self.frozen_since_thaw = 0
            self.last_whole = self._now()
            self.whole_collections += 1
        else:
            self.frozen_since_thaw += 1
        gc.collect()
        gc.freeze()
        self.collections += 1
