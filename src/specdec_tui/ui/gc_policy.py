"""The panel's garbage-collector policy: freeze the start-up heap after the first frame, collect young
objects less often, and full collections rarely.

Why (issue 16, measured with `bench/journal_flood.py` at 5,000 lines/s on a 2-core machine): Textual's
rendering makes cyclic garbage on every frame (each `Strip` holds seven FIFO caches, and a crop that changes
nothing caches the strip in itself), so with CPython's thresholds (700, 10, 10) the collector ran a full
collection every ~0.7 s under a flood, each walking the ~140,000 objects the panel built at start-up (widgets,
styles, CSS, modules): 70-200 ms with the event loop stopped, which was the whole tail of key-to-screen latency.
`gc.freeze()` moves what exists after the first frame into the permanent generation, never walked again; a
young threshold of 2,000 lets most of a frame's temporaries die before a collection instead of being promoted;
a full collection waits for 100 middle ones (CPython's 25 % growth rule still applies), so the render caches'
churn no longer triggers one every few seconds. Garbage is still collected; nothing here disables the collector.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

# Net allocations before a young collection (CPython: 700). A frame of the panel allocates tens of thousands;
# at 700 its own temporaries were promoted mid-frame. 5,000 made each middle collection slower (up to 50 ms).
YOUNG_THRESHOLD = 2_000
MIDDLE_THRESHOLD = 10  # young collections per middle one (CPython's default)
OLD_THRESHOLD = 100  # middle collections before a full one is considered (CPython: 10)


@dataclass(frozen=True, slots=True)
class HeapState:
    """What `settle_heap` did: objects frozen and the thresholds now in force (for the bench and tests)."""

    frozen: int
    thresholds: tuple[int, int, int]


def settle_heap() -> HeapState:
    """Freeze the objects that exist now and raise the young threshold. Call once, after the first frame:
    what start-up built lives as long as the panel, so walking it on every full collection is pure cost."""
    gc.collect()  # start-up's own garbage goes now, not into the permanent generation
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
    gc.freeze()
    return HeapState(frozen=gc.get_freeze_count(), thresholds=gc.get_threshold())
