"""An idle panel stays idle: the journal follower polls slowly once nothing comes (yet still delivers a line
another process writes after a long quiet), the health pane redraws nothing when a journal line or a health
probe changes nothing it shows (each redraw of a Static reflows the whole screen); a quiet journal wakes the
journal worker once, not 5 times a second."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Static

from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import JournalRecord, ServiceStatus
from specdec_tui.hosts.local.journal import JournalStore
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.loop.journal_feed import batched
from specdec_tui.ui.widgets.health_pane import SECTIONS, HealthPane

APPEND = "import sys; from specdec_tui.hosts.local.journal import JournalStore; JournalStore(sys.argv[1]).append(sys.argv[2])"


def append_from_another_process(path: Path, message: str) -> None:
    """The supervisor's way in: another process appends, so no in-process wake-up reaches the follower."""
    subprocess.run([sys.executable, "-c", APPEND, str(path), message], check=True, timeout=30)


async def follow_into(store: JournalStore, got: asyncio.Queue[JournalRecord]) -> None:
    async for record in store.iterate(lines=0):
        await got.put(record)


async def following(store: JournalStore, got: asyncio.Queue[JournalRecord]) -> asyncio.Task[None]:
    """A follower of new lines only, once it has looked at the file (so a line written next is new to it)."""
    task = asyncio.create_task(follow_into(store, got))
    async with asyncio.timeout(10):
        while store.polls == 0:
            await asyncio.sleep(0.01)
    return task


async def test_a_quiet_follower_polls_slowly_and_still_gets_the_next_line_within_its_slow_poll(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    store = JournalStore(path, poll_s=0.01, quiet_after_s=0.2, idle_poll_s=0.4)
    got: asyncio.Queue[JournalRecord] = asyncio.Queue()
    follower = await following(store, got)
    try:
        append_from_another_process(path, "before the quiet")
        assert (await asyncio.wait_for(got.get(), 5)).message == "before the quiet"
        polls_at_quiet = store.polls
        await asyncio.sleep(1.6)  # quiet: 0.2 s of fast polls, then about 3 slow ones
        quiet_polls = store.polls - polls_at_quiet
        # At the fast poll alone this would be ~160; the bound leaves room for a slow machine.
        assert quiet_polls < 60, quiet_polls

        append_from_another_process(path, "after the quiet")
        record = await asyncio.wait_for(got.get(), 0.4 + 5)  # the slow poll, plus room for a busy machine
        assert record.message == "after the quiet"
    finally:
        follower.cancel()


async def test_lines_that_keep_coming_are_polled_at_the_fast_interval(tmp_path: Path) -> None:
    """A journal that never goes quiet for `quiet_after_s` never waits the slow poll: every line comes
    well within it."""
    path = tmp_path / "journal.jsonl"
    store = JournalStore(path, poll_s=0.01, quiet_after_s=0.5, idle_poll_s=30.0)
    writer = JournalStore(path)  # a second store on the file: its appends do not wake `store`'s follower
    got: asyncio.Queue[JournalRecord] = asyncio.Queue()
    follower = await following(store, got)
    try:
        for i in range(5):
            writer.append(f"line {i}")
            assert (await asyncio.wait_for(got.get(), 10)).message == f"line {i}"  # far below the 30 s slow poll
            await asyncio.sleep(0.1)
    finally:
        follower.cancel()


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield HealthPane()


# upstream: python/sglang/srt/utils/common.py set_uvicorn_logging_configs (the access formatter,
# '[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'): what each health probe
# leaves in the server's journal
ACCESS = '[2026-12-03 11:31:{:02d}] INFO:     127.0.0.1:48120 - "GET /health HTTP/1.1" 200 OK'


async def test_the_health_pane_redraws_nothing_when_a_probe_or_an_access_line_changes_nothing_shown() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        status = ServiceStatus(unit="sglang-demo.service", active_state="active", sub_state="running", main_pid=4242)
        pane.update_health(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, detail="serving",
                                          checked_at=1.0))
        first = LogStats().feed([ACCESS.format(0)])
        assert first.last_timestamp is not None
        pane.update_log_stats(first)
        await pilot.pause(0.3)
        shown = {name: pane.section_text(name) for name in SECTIONS}

        refreshed: list[str] = []
        for name in SECTIONS:
            static = pane.query_one(f"#health-{name}", Static)
            real = static.refresh
            static.refresh = lambda *a, _real=real, _name=name, **k: (refreshed.append(_name), _real(*a, **k))[1]  # type: ignore[method-assign]

        for second in range(1, 4):  # three probes, each the same view, each leaving an access line
            pane.update_health(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, detail="serving",
                                              checked_at=1.0 + 5 * second))
            stats = LogStats().feed([ACCESS.format(5 * second)])
            assert stats != first  # the stats did change (the last line's time), just nothing the pane shows
            pane.update_log_stats(stats)
            await pilot.pause(0.3)
        assert refreshed == []
        assert {name: pane.section_text(name) for name in SECTIONS} == shown

        pane.update_health(HealthSnapshot(state=HealthState.FAILING, status=None, http_ok=False, detail="exit 1"))
        await pilot.pause()
        assert "FAILING — exit 1" in pane.section_text("badge") and "badge" in refreshed


async def test_a_quiet_journal_gets_one_idle_tick_per_quiet_spell_not_one_every_tick_interval() -> None:
    """The tick carries stats held back for the rate limit; once sent, a journal that stays quiet has nothing to
    carry, and ticking on would wake the panel's journal worker five times a second for nothing."""
    more = asyncio.Event()

    async def two_spells():
        yield JournalRecord("1", datetime(2026, 12, 3, 11, 31, 42), ACCESS.format(42))
        await more.wait()
        yield JournalRecord("2", datetime(2026, 12, 3, 11, 31, 47), ACCESS.format(47))
        await asyncio.Event().wait()  # and stays open, as a followed journal does

    seen: list[list[str]] = []

    async def consume() -> None:
        async for batch in batched(two_spells(), idle_s=0.01, window_s=0.01):
            seen.append([r.cursor for r in batch])

    task = asyncio.create_task(consume())
    try:
        await asyncio.sleep(0.5)  # 50 tick intervals of quiet
        assert seen == [["1"], []]
        more.set()
        await asyncio.sleep(0.5)
        assert seen == [["1"], [], ["2"], []]  # the next line still comes, and its quiet spell ticks once
    finally:
        task.cancel()
