"""The lines SGLang 0.5.23 logs when one of its processes dies or hangs, read as error records with their cause.

upstream: python/sglang/srt/utils/watchdog.py (`SubprocessWatchdog._check_processes`: `Subprocess {name}
(pid={pid}) crashed with exit code {exitcode}. Triggering SIGQUIT for cleanup...`; `WatchdogRaw`: `{debug_name}
watchdog timeout (self.watchdog_timeout=…, self.soft=…)`, and `… watchdog thread crashed: …`),
entrypoints/engine.py (`Scheduler or DataParallelController {pid} terminated with {exitcode}`),
ray/scheduler_actor.py (`Scheduler PP{p} TP{t} crashed: {e}`).
A process killed by a signal has a negative exit code (multiprocessing's `exitcode`), which says how it died.
"""

from __future__ import annotations

import re

from specdec_tui.core.sglang.records import ErrorRecord, LineBase, Value

__all__ = ["CRASH_HINTS", "exit_code_words", "parse_crash"]

CRASH_HINTS = ("crashed", "watchdog timeout", "terminated with")  # each pattern below holds one (lower-cased)

_SUBPROCESS = re.compile(
    r"^Subprocess (?P<name>\S+) \(pid=(?P<pid>\d+)\) crashed with exit code (?P<code>-?\d+)\.(?P<sigquit> Triggering SIGQUIT)?"
)
_TERMINATED = re.compile(r"^Scheduler or DataParallelController (?P<pid>\d+) terminated with (?P<code>-?\d+)\b")
_WATCHDOG = re.compile(r"^(?P<name>\S+) watchdog timeout \(self\.watchdog_timeout=(?P<timeout>[\d.]+), self\.soft=(?P<soft>True|False)\)")
_THREAD_CRASHED = re.compile(r"^(?P<name>\S+) (?:watchdog )?thread crashed: ")
_RAY_SCHEDULER = re.compile(r"^Scheduler (?P<ranks>(?:[A-Z]+\d+ ?)+)crashed: ")

# signal number → what a child killed by it usually means on a GPU server (Linux numbering)
_SIGNALS: dict[int, tuple[str, str]] = {
    9: ("SIGKILL", "killed outright, most often by the kernel's out-of-memory killer (see `dmesg` for oom-kill)"),
    6: ("SIGABRT", "aborted, e.g. a C++ std::terminate after an NCCL error or timeout"),
    11: ("SIGSEGV", "a segmentation fault in native code"),
    7: ("SIGBUS", "a bus error, often a /dev/shm too small for the server's shared memory"),
    15: ("SIGTERM", "terminated from outside"),
    2: ("SIGINT", "interrupted"),
}


def exit_code_words(code: int) -> str:
    """`-9` → "killed by SIGKILL: …"; a positive code is the process's own error, told in the lines before."""
    if code < 0:
        name, meaning = _SIGNALS.get(-code, (f"signal {-code}", "killed by a signal"))
        return f"killed by {name}: {meaning}"
    return f"exited with code {code}: its own error (see the lines before this one)"


def _crash(base: LineBase, category: str, cause: str, extra: dict[str, Value]) -> ErrorRecord:
    return ErrorRecord(**base, category=category, detail=base["message"], cause=cause, extra=extra)


def parse_crash(message: str, base: LineBase) -> ErrorRecord | None:
    """A dying or stuck process's line as an error record with its cause; None for any other line."""
    if match := _SUBPROCESS.match(message):
        code = int(match["code"])
        extra: dict[str, Value] = {"process": match["name"], "pid": int(match["pid"]), "exit_code": code}
        return _crash(base, "subprocess_crashed", f"{match['name']} {exit_code_words(code)}", extra)
    if match := _TERMINATED.match(message):
        code = int(match["code"])
        cause = f"scheduler (pid {match['pid']}) {exit_code_words(code)}"
        return _crash(base, "subprocess_crashed", cause, {"pid": int(match["pid"]), "exit_code": code})
    if match := _WATCHDOG.match(message):
        timeout = float(match["timeout"])
        extra = {"process": match["name"], "timeout_s": timeout, "soft": match["soft"] == "True"}
        if match["soft"] == "True":  # a soft watchdog only reports; the server keeps running
            return _crash(base, "watchdog_warning", f"{match['name']} made no progress for {timeout:g} s", extra)
        cause = f"{match['name']} made no progress for {timeout:g} s (a hung collective or kernel); the server stops"
        return _crash(base, "watchdog_timeout", cause, extra)
    if match := _RAY_SCHEDULER.match(message):
        return _crash(base, "scheduler_exception", "", {"ranks": match["ranks"].strip()})
    if match := _THREAD_CRASHED.match(message):  # the monitor itself failed; the server may still be fine
        return _crash(base, "exception", f"{match['name']}'s monitoring thread failed", {"process": match["name"]})
    return None
