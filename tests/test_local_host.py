"""LocalHost behaves like systemd + a unit file: a real supervisor process, real files, real signals."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from specdec_tui.hosts.base import Host, JournalRecord
from specdec_tui.hosts.errors import HostError, UnitRejected
from specdec_tui.hosts.local import journal as local_journal
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.journal import JournalStore
from specdec_tui.hosts.local.state import read_state
from tests.proc_helpers import group_alive, running

pytestmark = pytest.mark.timeout(60)

# A tiny service: prints who it is, then behaves as argv asks (exit code, ignore SIGTERM, fork a helper).
SERVICE = r"""
import os, signal, subprocess, sys, time
tag = sys.argv[1]
print(f"service {tag} up pid={os.getpid()} env={os.environ.get('DEMO_GREETING')} cwd={os.getcwd()}", flush=True)
if "fail" in sys.argv:
    print("RuntimeError: cannot bind port", file=sys.stderr, flush=True)
    sys.exit(3)
if "stubborn" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "helper" in sys.argv:
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print(f"helper pid={helper.pid}", flush=True)
print(f"service {tag} ready", flush=True)
while True:
    time.sleep(0.2)
"""


@pytest.fixture
def service_script(tmp_path: Path) -> Path:
    path = tmp_path / "service.py"
    path.write_text(SERVICE)
    return path


def unit_text(script: Path, *args: str, extra: str = "") -> str:
    return (
        "[Unit]\nDescription=Test server\n\n[Service]\nType=simple\n"
        f"{extra}ExecStart=python {script} {' '.join(args)}\n\n[Install]\nWantedBy=multi-user.target\n"
    )


@pytest.fixture
async def host(tmp_path: Path):
    h = LocalHost(tmp_path / "ws", stop_timeout_s=5)
    await h.connect()
    yield h
    await h.close()


async def wait_for(
    host: Host, predicate: Callable[[JournalRecord], bool], *, after: str | None = None
) -> JournalRecord:
    """The first journal record (after `after`) that matches, following the live journal."""
    async with asyncio.timeout(30):
        async for record in host.journal(after_cursor=after, follow=True):
            if predicate(record):
                return record
    raise AssertionError("journal ended")


def contains(text: str) -> Callable[[JournalRecord], bool]:
    return lambda record: text in record.message


# -- unit file ----------------------------------------------------------------------------------


async def test_push_keeps_history_and_rollback_restores_byte_identical(host: LocalHost, service_script: Path):
    v1 = unit_text(service_script, "v1")
    v2 = unit_text(service_script, "v2").replace("\n", "\r\n") + "# trailing  \t"  # odd bytes survive
    v3 = unit_text(service_script, "v3", extra="Environment=DEMO_GREETING=héllo\n")

    first = await host.push(v1)
    assert first.changed and first.backup is None
    assert (await host.push(v2)).backup == 1
    assert (await host.push(v3)).backup == 2
    assert await host.history() == [1, 2]
    assert (host.units.history_dir / "sglang-demo.service.2").read_bytes() == v2.encode()

    assert await host.rollback() == v2
    assert host.units.unit_path.read_bytes() == v2.encode()
    assert await host.history() == [1]
    assert await host.rollback() == v1
    assert await host.read_unit() == v1
    assert await host.history() == []
    with pytest.raises(HostError, match="no earlier version"):
        await host.rollback()


async def test_a_push_and_a_rollback_write_the_unit_while_the_event_loop_goes_on(
        host: LocalHost, service_script: Path, monkeypatch: pytest.MonkeyPatch):
    """Issue 34: the demo host wrote and fsynced the unit and its backup on the panel's event loop, holding its keys
    at every push of a sweep. Each fsync here waits until the event loop has run on: done on the loop, it never
    could (the push failed after the wait's limit); done in a thread, the loop lets it go."""
    await host.push(unit_text(service_script, "v1"))
    going_on = threading.Event()
    real_fsync = os.fsync

    def fsync_once_the_loop_went_on(fd: int) -> None:
        assert going_on.wait(20), "the unit was written on the event loop: it could not go on"
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_once_the_loop_went_on)
    for action in (lambda: host.push(unit_text(service_script, "v2")), host.rollback):
        going_on.clear()
        task = asyncio.ensure_future(action())
        await asyncio.sleep(0.05)  # the action runs up to its write
        going_on.set()  # the event loop ran while the unit was being written
        await task
    monkeypatch.undo()
    assert await host.read_unit() == unit_text(service_script, "v1") and await host.history() == []


async def test_pushing_the_same_text_changes_nothing(host: LocalHost, service_script: Path):
    text = unit_text(service_script, "same")
    await host.push(text)
    again = await host.push(text)
    assert not again.changed and again.backup is None
    assert await host.history() == []


async def test_a_unit_without_execstart_is_rejected_and_the_old_one_stays(host: LocalHost, service_script: Path):
    good = unit_text(service_script, "good")
    await host.push(good)
    with pytest.raises(UnitRejected, match="ExecStart"):
        await host.push("[Unit]\nDescription=broken\n\n[Service]\nType=simple\n")
    assert await host.read_unit() == good
    assert await host.history() == []


async def test_push_is_atomic_readers_never_see_a_partial_unit(host: LocalHost, service_script: Path):
    big_a = unit_text(service_script, "a") + "# " + "a" * 300_000 + "\n"
    big_b = unit_text(service_script, "b") + "# " + "b" * 300_000 + "\n"
    await host.push(big_a)
    unit_path = host.units.unit_path
    seen: set[str] = set()
    replaced_by_rename: list[bool] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            seen.add(unit_path.read_text())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(30):
            inode_before = unit_path.stat().st_ino
            await host.push(big_b if i % 2 == 0 else big_a)
            replaced_by_rename.append(unit_path.stat().st_ino != inode_before)
    finally:
        stop.set()
        thread.join()
    assert seen <= {big_a, big_b}, "a reader saw a unit that is neither the old nor the new text"
    assert all(replaced_by_rename)  # each push renamed a new file in, none rewrote the unit in place
    assert unit_path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in unit_path.parent.iterdir() if p.name.endswith(".tmp")] == []


# -- the service --------------------------------------------------------------------------------


async def test_push_alone_does_not_change_the_running_service_restart_does(host: LocalHost, service_script: Path):
    await host.push(unit_text(service_script, "first", extra="Environment=\"DEMO_GREETING=hi there\"\n"))
    started = await host.restart()
    assert started.ok and started.status.active_state == "active"
    first_pid = started.status.main_pid
    up = await wait_for(host, contains("service first up"))
    assert up.pid == first_pid and "env=hi there" in up.message

    await host.push(unit_text(service_script, "second"))
    assert (await host.status()).main_pid == first_pid  # the loaded unit still runs

    marker_after = (await wait_for(host, contains("service first ready"))).cursor
    restarted = await host.restart()
    assert restarted.ok and restarted.status.main_pid not in (None, first_pid)
    assert not group_alive(first_pid)

    stopping = await wait_for(host, contains("Stopping sglang-demo.service - Test server..."), after=marker_after)
    started_line = await wait_for(host, contains("Started sglang-demo.service - Test server."), after=stopping.cursor)
    second_up = await wait_for(host, contains("service second up"), after=started_line.cursor)
    assert second_up.pid == restarted.status.main_pid
    assert int(stopping.cursor) < int(started_line.cursor) < int(second_up.cursor)


async def test_working_directory_and_bare_python_are_honoured(host: LocalHost, service_script: Path, tmp_path: Path):
    workdir = tmp_path / "wd"
    workdir.mkdir()
    await host.push(unit_text(service_script, "wd", extra=f"WorkingDirectory={workdir}\n"))
    result = await host.restart()
    up = await wait_for(host, contains("service wd up"))
    assert f"cwd={workdir}" in up.message
    assert os.path.realpath(f"/proc/{result.status.main_pid}/exe") == os.path.realpath(sys.executable)


async def test_failing_execstart_marks_the_unit_failed_with_exit_code_and_stderr(host: LocalHost, service_script: Path):
    await host.push(unit_text(service_script, "doomed", "fail"))
    await host.restart()
    failed_line = await wait_for(host, contains("Failed with result 'exit-code'."))
    status = await host.status()
    assert status.is_failed and status.exec_main_status == 3 and status.result == "exit-code"
    backlog = [r async for r in host.journal(follow=False)]
    stderr_line = next(r for r in backlog if "cannot bind port" in r.message)
    assert stderr_line.priority == 3
    exited = next(r for r in backlog if "Main process exited" in r.message)
    assert exited.message.endswith("code=exited, status=3/NOTIMPLEMENTED")
    assert int(stderr_line.cursor) < int(exited.cursor) < int(failed_line.cursor)


async def test_missing_executable_fails_the_restart_job(host: LocalHost, tmp_path: Path):
    await host.push(unit_text(tmp_path / "x.py", extra="").replace("python ", "/nonexistent/sglang-server "))
    result = await host.restart()
    assert result.job_result == "failed" and not result.ok
    assert result.status.is_failed and result.status.exec_main_status == 203
    messages = [r.message async for r in host.journal(follow=False)]
    assert any("Failed to locate executable /nonexistent/sglang-server" in m for m in messages)


async def test_restart_on_failure_counts_restarts_until_the_start_limit(host: LocalHost, service_script: Path):
    extra = "Restart=on-failure\nRestartSec=50ms\nStartLimitBurst=2\n"
    await host.push(unit_text(service_script, "flaky", "fail", extra=extra))
    await host.restart()
    await wait_for(host, contains("Failed with result 'start-limit-hit'."))
    status = await host.status()
    assert status.is_failed and status.n_restarts == 2
    messages = [r.message async for r in host.journal(follow=False)]
    assert sum("service flaky up" in m for m in messages) == 3
    assert any("Scheduled restart job, restart counter is at 2." in m for m in messages)


async def test_stop_and_close_leave_no_process_group(host: LocalHost, service_script: Path):
    await host.push(unit_text(service_script, "family", "helper"))
    pid = (await host.restart()).status.main_pid
    helper = await wait_for(host, contains("helper pid="))
    helper_pid = int(helper.message.split("=")[1])
    await host.stop()
    assert not group_alive(pid)
    assert not running(helper_pid)
    status = await host.status()
    assert status.active_state == "inactive" and status.result == "success"

    pid = (await host.restart()).status.main_pid
    await host.close()
    assert not group_alive(pid)


async def test_a_service_ignoring_sigterm_is_killed_after_the_timeout(tmp_path: Path, service_script: Path):
    host = LocalHost(tmp_path / "ws", stop_timeout_s=0.5)
    await host.push(unit_text(service_script, "stubborn", "stubborn"))
    pid = (await host.restart()).status.main_pid
    await wait_for(host, contains("service stubborn ready"))
    await host.stop()
    assert not group_alive(pid)
    status = await host.status()
    assert status.is_failed and status.result == "timeout"
    messages = [r.message async for r in host.journal(follow=False)]
    assert any("State 'stop-sigterm' timed out. Killing." in m for m in messages)


async def test_a_service_whose_supervisor_was_killed_is_ended_by_the_next_host(tmp_path: Path, service_script: Path):
    """SIGKILL the supervisor: the kernel kills the main process with it, and the next host reaps the
    helper left in the service's group and reports the unit failed instead of running."""
    starter = LocalHost(tmp_path / "ws", keep_running=True)
    await starter.push(unit_text(service_script, "orphan", "helper"))
    started = (await starter.restart()).status
    helper_pid = int((await wait_for(starter, contains("helper pid="))).message.split("=")[1])
    state = read_state(starter.state_file)
    assert state is not None and state.supervisor_pid
    os.kill(state.supervisor_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while running(state.supervisor_pid) and time.monotonic() < deadline:  # the kill lands asynchronously
        await asyncio.sleep(0.01)
    assert group_alive(started.main_pid)  # the helper still runs in the group nobody supervises

    status = await LocalHost(tmp_path / "ws").status()
    assert status.is_failed and status.result == "supervisor-lost" and status.main_pid is None
    assert not group_alive(started.main_pid)
    assert not running(helper_pid)
    messages = [r.message async for r in starter.journal(follow=False)]
    assert any(f"Killing process group {started.main_pid}" in m for m in messages)


async def test_keep_running_hosts_leave_the_service_running_for_any_other_host_to_stop(
    tmp_path: Path, service_script: Path
):
    script = LocalHost(tmp_path / "ws", keep_running=True)
    await script.push(unit_text(service_script, "kept"))
    pid = (await script.restart()).status.main_pid
    await script.close()
    assert group_alive(pid)

    other = LocalHost(tmp_path / "ws")  # another process's host on the same workspace
    status = await other.status()
    assert status.is_running and status.main_pid == pid
    await other.close()  # it did not start the service, so closing it stops nothing
    assert group_alive(pid)
    await other.stop()
    assert not group_alive(pid)
    assert (await script.status()).active_state == "inactive"


# -- journal cursors ----------------------------------------------------------------------------


async def test_journal_resumes_from_a_cursor_without_loss_or_repeat_across_host_instances(
    tmp_path: Path, service_script: Path
):
    workspace = tmp_path / "ws"
    first = LocalHost(workspace)
    await first.push(unit_text(service_script, "one"))
    await first.restart()
    await wait_for(first, contains("service one ready"))
    seen = [r async for r in first.journal(follow=False)]
    resume_at = seen[1].cursor  # resume from the middle of what was read
    await first.close()

    second = LocalHost(workspace)  # a new panel process on the same workspace
    await second.push(unit_text(service_script, "two"))
    await second.restart()
    await wait_for(second, contains("service two ready"))
    await second.close()

    resumed = [r async for r in second.journal(after_cursor=resume_at, follow=False)]
    everything = [r async for r in LocalHost(workspace).journal(follow=False)]
    assert resumed == everything[2:]
    sequence = [int(r.cursor) for r in everything]
    assert sequence == list(range(1, len(everything) + 1))
    messages = [r.message for r in resumed]
    assert messages.index("Stopped sglang-demo.service - Test server.") < next(
        i for i, m in enumerate(messages) if "service two up" in m
    )


async def test_a_follower_gets_live_lines_exactly_once(host: LocalHost, service_script: Path):
    await host.push(unit_text(service_script, "live"))
    got: list[JournalRecord] = []

    async def follow() -> None:
        async for record in host.journal(follow=True, lines=5):
            got.append(record)
            if "service live ready" in record.message:
                return

    follower = asyncio.create_task(follow())
    await host.restart()
    async with asyncio.timeout(30):
        await follower
    cursors = [int(r.cursor) for r in got]
    assert cursors == sorted(set(cursors))
    assert any(r.message.startswith("Started sglang-demo.service") for r in got)


async def test_a_bad_cursor_is_reported_in_words(host: LocalHost):
    with pytest.raises(HostError, match="not a local-host cursor"):
        [r async for r in host.journal(after_cursor="s=abc;i=1", follow=False)]


# -- the panel going away -----------------------------------------------------------------------

PANEL = r"""
import asyncio, os, signal, sys
from pathlib import Path
from specdec_tui.hosts.local.host import LocalHost

async def main():
    host = LocalHost(Path(sys.argv[1]))
    await host.push(open(sys.argv[2]).read())
    status = (await host.restart()).status
    print(status.main_pid, flush=True)
    async for record in host.journal():
        if "ready" in record.message:
            break
    if sys.argv[3] == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise KeyboardInterrupt  # no close(): the supervisor's watchdog must clean up

asyncio.run(main())
"""


@pytest.mark.parametrize("ending", ["interrupt", "sigkill"])
def test_no_service_outlives_the_panel_process(tmp_path: Path, service_script: Path, ending: str):
    unit = tmp_path / "unit.service"
    unit.write_text(unit_text(service_script, "panel"))
    panel = subprocess.run(
        [sys.executable, "-c", PANEL, str(tmp_path / "ws"), str(unit), ending],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    main_pid = int(panel.stdout.split()[0])
    # The supervisor notices its owner's exit within its tick and stops the service: poll the kernel
    # (bounded) instead of asserting at once.
    deadline = time.monotonic() + 10
    while group_alive(main_pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not group_alive(main_pid)


# -- journal across processes -------------------------------------------------------------------

TICKER = r"""
import sys, time
for i in range(400):  # about 2 s of output: the readers meet both backlog and live lines
    print(f"tick {i}", flush=True)
    time.sleep(0.005)
time.sleep(600)
"""

READER = r"""
import asyncio, sys
from pathlib import Path
from specdec_tui.hosts.local.host import LocalHost

async def main():
    after = sys.argv[2] if sys.argv[2] != "-" else None
    stop_at = sys.argv[3]
    async for record in LocalHost(Path(sys.argv[1])).journal(after_cursor=after, follow=True):
        print(record.cursor, record.message, flush=True)
        if record.message == stop_at:
            return

asyncio.run(main())
"""


def test_journal_resume_from_a_cursor_across_processes_loses_and_repeats_nothing(tmp_path: Path):
    """One process follows the live journal and quits mid-stream; another resumes from its last cursor
    while the service keeps writing. Together they saw every tick once, in order."""
    ticker = tmp_path / "ticker.py"
    ticker.write_text(TICKER)
    workspace = tmp_path / "ws"
    host = LocalHost(workspace, keep_running=True)
    asyncio.run(host.push(unit_text(ticker)))
    asyncio.run(host.restart())
    try:
        first = subprocess.run([sys.executable, "-c", READER, str(workspace), "-", "tick 120"],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        first_lines = first.stdout.splitlines()
        resume_at = first_lines[-1].split()[0]
        second = subprocess.run([sys.executable, "-c", READER, str(workspace), resume_at, "tick 399"],
                                capture_output=True, text=True, timeout=30)  # fmt: skip
    finally:
        asyncio.run(host.stop())
    ticks = [line.split(" ", 1)[1] for line in first_lines + second.stdout.splitlines() if " tick " in line]
    assert ticks == [f"tick {i}" for i in range(400)]
    cursors = [int(line.split()[0]) for line in first_lines + second.stdout.splitlines()]
    assert cursors == sorted(set(cursors))


async def test_a_follower_reports_a_gap_for_rotated_entries(tmp_path: Path):
    store = JournalStore(tmp_path / "journal.jsonl", max_bytes=2_000)
    first = store.append("line 0")
    for i in range(1, 200):
        store.append(f"line {i}")
    got = [r async for r in JournalStore(store.path).iterate(after_cursor=first.cursor, follow=False)]
    assert got[0].kind == "gap" and "rotated away" in got[0].message
    numbers = [int(r.message.split()[1]) for r in got[1:]]
    assert numbers[0] > 1 and numbers == list(range(numbers[0], 200))  # the rest, none lost in between


async def test_a_follower_behind_a_flood_gets_every_line_across_a_rotation_in_bounded_reads(tmp_path: Path,
                                                                                           monkeypatch) -> None:
    """Issue 16: a follower far behind reads the backlog a chunk at a time (it read a 32 MB file whole: the panel
    grew past 300 MB under a 20,000 lines/s flood) and still gets every line, across the rotation too."""
    monkeypatch.setattr(local_journal, "READ_CHUNK_BYTES", 4096)
    writer = JournalStore(tmp_path / "journal.jsonl", max_bytes=150_000)
    writer.append("start")
    follower = JournalStore(writer.path)
    lines = follower.iterate(lines=1, follow=True)
    assert (await anext(lines)).message == "start"
    for i in range(2000):  # ~110 bytes each: one rotation while the follower reads nothing
        writer.append(f"line {i}")
    assert writer.rotated_path.exists()
    biggest = 0
    read_new = follower._read_new

    def measured(ino, offset):
        nonlocal biggest
        records, *rest = read_new(ino, offset)
        biggest = max(biggest, len(records))
        return (records, *rest)

    monkeypatch.setattr(follower, "_read_new", measured)
    got = [(await anext(lines)).message for _ in range(2000)]
    assert got == [f"line {i}" for i in range(2000)]
    assert 0 < biggest <= 4096 // 100  # a chunk's worth of records at a time, not the whole backlog


async def test_a_follower_catching_up_on_a_backlog_lets_the_event_loop_run_between_chunks(tmp_path: Path) -> None:
    """Issue 16: a reader behind a flood decoded its backlog chunk after chunk without giving the loop back (1 MB,
    ~5,000 lines, 35-50 ms a chunk on a 2-core machine): the panel's keys and frames waited behind it. Between two
    chunks, what else is due on the loop runs."""
    writer = JournalStore(tmp_path / "journal.jsonl")
    writer.append("start")
    lines = JournalStore(writer.path).iterate(lines=1, follow=True)
    assert (await anext(lines)).message == "start"
    writer.append_many(f"line {i} " + "x" * 200 for i in range(10_000))  # ~2.5 MB behind
    turns = 0

    async def other_work() -> None:  # a key, a frame: anything else that wants the loop meanwhile
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other_work())
    try:
        got = [(await anext(lines)).message.split()[1] for _ in range(10_000)]
    finally:
        ticker.cancel()
    assert got == [str(i) for i in range(10_000)]
    assert turns >= (10_000 * 210) // local_journal.READ_CHUNK_BYTES  # the loop turned at least once per chunk


async def test_a_follower_behind_by_two_rotations_says_how_many_entries_it_missed(tmp_path: Path) -> None:
    """It skipped them silently: the pane counted 350,473 of 599,932 flooded lines and said nothing."""
    writer = JournalStore(tmp_path / "journal.jsonl", max_bytes=40_000)
    writer.append("start")
    lines = JournalStore(writer.path).iterate(lines=1, follow=True)
    assert (await anext(lines)).message == "start"
    for i in range(2000):
        writer.append(f"line {i}")
    gap = await anext(lines)
    assert gap.kind == "gap" and "rotated away" in gap.message
    missed = int(gap.message.split()[1])
    rest = [(await anext(lines)).message for _ in range(2000 - missed)]
    assert rest == [f"line {i}" for i in range(missed, 2000)]  # the gap says exactly what is not there


async def test_lines_limits_the_backlog_from_memory_and_from_disk(tmp_path: Path):
    store = JournalStore(tmp_path / "journal.jsonl")
    for i in range(10):
        store.append(f"line {i}")
    for reader in (store, JournalStore(store.path)):  # the writer's ring, then a second process's disk read
        assert [r.message async for r in reader.iterate(lines=3, follow=False)] == ["line 7", "line 8", "line 9"]
        assert [r async for r in reader.iterate(lines=0, follow=False)] == []


async def test_a_restart_cancelled_as_it_launches_is_stopped_by_the_next_stop(tmp_path: Path, service_script: Path):
    """As systemd's start job, a start once launched goes on when its caller is cancelled; a stop issued next
    must find it. (A cancelled sweep left a demo server running: its stop saw the old state and did nothing.)"""
    host = LocalHost(tmp_path / "ws", keep_running=True)
    await host.push(unit_text(service_script, "cancelled"))
    restart = asyncio.create_task(host.restart())
    async with asyncio.timeout(30):
        while not host._launched:  # the supervisor is spawned; it has not written its state yet
            await asyncio.sleep(0)
    supervisor = host._launched[-1]
    try:
        restart.cancel()
        with pytest.raises(asyncio.CancelledError):
            await restart
        await host.stop()
        async with asyncio.timeout(30):
            while supervisor.poll() is None:  # stopped: the supervisor ends the service, then exits
                await asyncio.sleep(0.05)
        assert not (await host.status()).is_running
    finally:
        supervisor.kill()  # on failure: the service dies with its supervisor
