"""Keys and pastes reach the panel one at a time: the next goes out once the one before has been handled.

Why: Textual's App hands each key to the widget focused *at that moment* and goes on to the next key at once,
while the bindings of the focused widget's containers (Tab and Shift+Tab moving the focus, a number key
switching tabs, a key opening a screen) run only when the key has bubbled back up to the App. In a burst —
a fast typist, a paste of keys, keys read together behind a busy frame, tmux `send-keys Tab End BSpace 4` —
the keys behind a Tab went to the field the Tab was leaving: typed into the wrong field or lost (seen in the
demo under tmux: the steps field emptied, the `4` and `3` typed after it gone, the unit unchanged). Here a key
is followed along the way it bubbles (the focused widget, its containers, the screen, the App) by a callback
queued behind it at each stop, twice (the second time behind the messages the key made there: an edit on its
way to the Config pane); when the callback has reached the App, the key has been handled and the next one goes
to whatever then has the focus.

A stop that never runs the callback (its widget removed meanwhile) cannot hold input for ever: after
HOLD_MAX_S the held input goes out anyway.

Background work that runs in slices on the event loop (parsing a journal flood) waits in `quiet()` between two
slices while a key is on its way: each stop of the way is a turn of the event loop, and with a slice run in every
turn a key's trip through a dozen widgets took 30-90 ms under 5,000 journal lines a second (measured on a
2-core machine: the key waited for the parser, not for its own work).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from textual import events
from textual.message_pump import MessagePump
from textual.timer import Timer

LAPS_PER_STOP = 2
HOLD_MAX_S = 2.0  # a key not seen handled after this long no longer holds back the keys behind it

# Where the app hands an input event on (Textual's own routing: the focused widget, else the screen).
Deliver = Callable[[events.Event], Awaitable[None]]
Schedule = Callable[[float, Callable[[], Awaitable[None]]], Timer]
# Queues a callback on the App's own message queue (`App.call_later`): input goes out from the App's task only.
CallLater = Callable[[Callable[[], Awaitable[None]]], bool]


def is_typed(event: events.Event) -> bool:
    """A key or a paste from the terminal that the app has not yet handed to a widget."""
    return isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded


def is_click(event: events.Event) -> bool:
    """A mouse button going down or up (a click moves the focus): it waits behind held keys too, so keys typed
    before it land where the focus was, not in what was clicked."""
    return isinstance(event, (events.MouseDown, events.MouseUp)) and not event.is_forwarded


class InputInOrder:
    """One key (or paste) on its way at a time; the rest wait here, in the order they came."""

    def __init__(self, deliver: Deliver, schedule: Schedule, call_later: CallLater, *,
                 handled: Callable[[events.Event], None] | None = None) -> None:
        self._deliver = deliver
        self._schedule = schedule
        self._call_later = call_later
        self._on_handled = handled  # told of each input once it has been handled (before the next goes out)
        self._held: deque[events.Event] = deque()
        self._on_its_way: events.Event | None = None
        self._watchdog: Timer | None = None
        self._quiet = asyncio.Event()  # set while no input is on its way or waiting
        self._quiet.set()

    async def quiet(self) -> None:
        """Let the event loop turn once, and then return when no key is on its way (at once, usually).
        What runs in slices calls this between two of them: input goes first."""
        await asyncio.sleep(0)
        await self._quiet.wait()

    @property
    def idle(self) -> bool:
        """No input on its way and none waiting."""
        return self._quiet.is_set()

    def _mark(self, event: events.Event | None) -> None:
        self._on_its_way = event
        if event is None and not self._held:
            self._quiet.set()
        else:
            self._quiet.clear()

    def hold(self, event: events.Event) -> bool:
        """True when `event` must wait (another is still on its way): it is kept and sent later."""
        if self._on_its_way is None and not self._held:
            return False
        self._held.append(event)
        self._quiet.clear()
        if self._watchdog is None:
            self._watchdog = self._schedule(HOLD_MAX_S, self._give_up_waiting)
        return True

    async def sent(self, event: events.Event, way: Sequence[MessagePump]) -> None:
        """`event` was handed to `way[0]`; it bubbles through the rest of `way` (its containers, the App last).
        The next input goes out once it has been handled. An empty `way`: it was handled where it arrived."""
        self._mark(event)
        await self._follow(event, way, 0, 1)

    async def _follow(self, event: events.Event, way: Sequence[MessagePump], stop: int, lap: int) -> None:
        """Queue a check behind `event` at `way[stop]`: it runs once that stop has handled what is queued there.
        A stop that takes no more messages (closing: a dismissed dialog's button) is passed; the key may have
        bubbled on from it already."""
        if stop >= len(way):
            await self._handled(event)
        elif not way[stop].call_later(self._reached, event, way, stop, lap):
            await self._follow(event, way, stop + 1, 1)

    async def _reached(self, event: events.Event, way: Sequence[MessagePump], stop: int, lap: int) -> None:
        """Each stop is passed twice: the second time behind what the key made there (a field's Changed, the
        form's FlagEdited), so the next key goes out once the key's edit has reached the unit. The way is walked
        to the App even when a widget stopped the key: its edit travels up the same containers."""
        if stop == len(way) - 1:
            await self._handled(event)  # the App has run the key's bindings
        elif lap < LAPS_PER_STOP:
            await self._follow(event, way, stop, lap + 1)
        else:
            await self._follow(event, way, stop + 1, 1)

    async def _handled(self, event: events.Event) -> None:
        """Runs in the task of the stop that saw the key handled (a field, say); the next input goes out from the
        App's task, as Textual sends every input (a binding it runs belongs to the App, not to that field)."""
        if event is self._on_its_way:  # else the watchdog let the next one go meanwhile
            self._mark(None)
            if self._on_handled is not None:
                self._on_handled(event)
            if not self._call_later(self._send_next):
                self._held.clear()  # the App is closing: nothing will handle them
                self._mark(None)

    async def _send_next(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None
        if self._held and self._on_its_way is None:
            await self._deliver(self._held.popleft())
        if self._held and self._watchdog is None:
            self._watchdog = self._schedule(HOLD_MAX_S, self._give_up_waiting)

    async def _give_up_waiting(self) -> None:
        self._watchdog = None
        self._mark(None)
        await self._send_next()
