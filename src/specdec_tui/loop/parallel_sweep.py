"""A sweep on several hosts at once: refuse unless their units run the same server but for the swept flag,
deal the values out, let each host run its share with the sweep's own per-value code, and choose once over
every trial (`loop.sweep.sweep_hosts` does the running and the choosing; this module checks and splits).

What must match: the program, every flag and the Environment= lines — what the server runs. Not compared:
--host and --port (where it listens: hosts sharing a machine, like local demo hosts, must differ there and
it changes nothing measured) and the other unit lines (Description=, WorkingDirectory=…). The units are
compared as the sweep would push them, value by value, so a flag the sweep itself rewrites (draft tokens =
steps + 1 with topk 1) does not count as a difference.

Why round-robin (a: 1,4; b: 2,5; c: 3,6) and not contiguous blocks (a: 1,2; b: 3,4; c: 5,6): the values
then finish in about plan order, so the stop rule — which reads the values in plan order — can judge them as
they come and an early stop spares every host its remaining values; with blocks the last host would run the
largest values first, the very ones a stop would have skipped, and nothing could be judged until the first
host was done. It also spreads the cost: a value's start and benchmark time changes steadily with the value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import ExitStack

from specdec_tui.core.flags import canonical_name
from specdec_tui.core.unit import UnitFile
from specdec_tui.core.words import in_words
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.busy import Refused
from specdec_tui.loop.same_server import SameServer, refuse_same_server
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep import SweepHost, run_sweep, settle_quietly, sweep_hosts
from specdec_tui.loop.sweep_plan import EventSink, SweepError, SweepOutcome, SweepPlan, plan_units
from specdec_tui.loop.trial import TrialLoop

LISTEN_FLAGS = frozenset({"host", "port"})  # canonical names; where the server listens, not what it runs
_ABSENT = object()


class UnitsDiffer(SweepError):
    """The hosts' units differ in more than the swept flag; the message names the first difference."""


def split_values(values: Sequence[str], hosts: int) -> list[tuple[str, ...]]:
    """Round-robin: host i gets values i, i+hosts, i+2·hosts… (see the module's docstring for why)."""
    return [tuple(values[i::hosts]) for i in range(hosts)]


def _program(unit: UnitFile) -> list[str]:
    """ExecStart's words before the first flag: the program and its module (`python -m sglang.launch_server`)."""
    argv = unit.exec_start.argv
    first_flag = next((i for i, word in enumerate(argv) if word.startswith("--")), len(argv))
    return argv[:first_flag]


def _flags(unit: UnitFile) -> dict[str, object]:
    return {canonical_name(k): v for k, v in unit.flags().items() if canonical_name(k) not in LISTEN_FLAGS}


def _shown(value: object) -> str:
    if value is _ABSENT:
        return "absent"
    return "set" if value is None else str(value)


def unit_difference(first: tuple[str, str], other: tuple[str, str]) -> str | None:
    """The first thing the unit of `other` (host name, unit text) runs differently from `first`'s, in words;
    None when they run the same server (listen address aside)."""
    (name_a, text_a), (name_b, text_b) = first, other
    a, b = UnitFile.parse(text_a), UnitFile.parse(text_b)
    if _program(a) != _program(b):
        return f"the program: {' '.join(_program(a))} on {name_a}, {' '.join(_program(b))} on {name_b}"
    flags_a, flags_b = _flags(a), _flags(b)
    for key in list(flags_a) + [k for k in flags_b if k not in flags_a]:
        va, vb = flags_a.get(key, _ABSENT), flags_b.get(key, _ABSENT)
        if va != vb:
            return f"--{key}: {_shown(va)} on {name_a}, {_shown(vb)} on {name_b}"
    env_a, env_b = a.get_all("Service", "Environment"), b.get_all("Service", "Environment")
    if env_a != env_b:
        only_a = [e for e in env_a if e not in env_b]
        only_b = [e for e in env_b if e not in env_a]
        what = only_a[0] if only_a else only_b[0] if only_b else "their order"
        return f"Environment= ({what}): {name_a} has {' '.join(env_a) or 'none'}, {name_b} has {' '.join(env_b) or 'none'}"
    return None


def check_same_units(plan: SweepPlan, units: Sequence[tuple[str, dict[str, str]]]) -> None:
    """Raise UnitsDiffer naming the flag and the host when a host would run a value differently from the
    first host (its units as `plan_units` made them, value by value)."""
    first_name, first_units = units[0]
    for name, host_units in units[1:]:
        for value in plan.values:
            difference = unit_difference((first_name, first_units[value]), (name, host_units[value]))
            if difference is not None:
                raise UnitsDiffer(f"host {name}'s unit differs from {first_name}'s in {difference}; a sweep on "
                                  f"several hosts needs units that are the same but for "
                                  f"--{canonical_name(plan.flag)} (and --host/--port)")


async def _read_unit(runner: TrialLoop) -> str:
    try:
        return await runner.read_running()
    except HostError as err:
        raise SweepError(f"{runner.host.info.name}: its unit could not be read: {in_words(err)}") from None


async def run_parallel_sweep(runners: Sequence[TrialLoop], plan: SweepPlan, *,
                             on_event: EventSink | None = None) -> SweepOutcome:
    """Sweep `plan` over the hosts of `runners` at once, each editing the unit it runs now. Raises SweepError
    (UnitsDiffer when the units differ) before anything is pushed. The runners may share one session:
    every trial records its host."""
    names = [r.host.info.name for r in runners]
    if len(set(names)) != len(names):
        repeated = next(n for n in names if names.count(n) > 1)
        raise SweepError(f"host {repeated} is named twice; give each host once")
    try:
        refuse_same_server([(r.host.info.name, r.host.info) for r in runners])
    except SameServer as err:
        raise SweepError(str(err)) from None
    with ExitStack() as held:  # every host held from before its unit is read (loop.busy, loop.host_hold)
        for runner in runners:
            held.enter_context(runner.task(Busy.SWEEP))
        return await _sweep_held(runners, names, plan, on_event)


async def _sweep_held(runners: Sequence[TrialLoop], names: list[str], plan: SweepPlan,
                      on_event: EventSink | None) -> SweepOutcome:
    bases = await asyncio.gather(*(_read_unit(r) for r in runners))
    units: list[tuple[str, dict[str, str]]] = []
    for name, base in zip(names, bases, strict=True):
        try:
            units.append((name, plan_units(base, plan)))
        except SweepError as err:
            raise SweepError(f"{name}: {err}") from None
    check_same_units(plan, units)
    shares = split_values(plan.values, len(runners))
    hosts = [SweepHost(runner, host_units, share)
             for runner, (_, host_units), share in zip(runners, units, shares, strict=True)]
    return await sweep_hosts(hosts, plan, on_event=on_event)


async def sweep_running_units(runners: Sequence[TrialLoop], plan: SweepPlan, *,
                              on_event: EventSink | None = None) -> SweepOutcome:
    """The sweep the panel's screen and `specdec-tui sweep` both run: on one host from the unit it runs now
    (`loop.sweep.run_sweep`), on several at once (`run_parallel_sweep`)."""
    if len(runners) == 1:
        with runners[0].task(Busy.SWEEP):  # held before its unit is read: nothing slips in between
            return await run_sweep(runners[0], await runners[0].read_running(), plan, on_event=on_event)
    return await run_parallel_sweep(runners, plan, on_event=on_event)


async def apply_winner(runners: Sequence[TrialLoop], value: str, units_by_host: dict[str, dict[str, str]],
                       on_event: Callable[[str, object], None]) -> list[tuple[str, str]]:
    """Every host of a sweep onto the winner's unit (its own edit of it: its own port), at once, each held as by the
    sweep until it runs it (the sweep let go when it ended). Each host's name and what failed there in words (""
    when it runs the winner); `on_event(host, event)` gets its steps."""

    async def settle(runner: TrialLoop) -> tuple[str, str]:
        name = runner.host.info.name
        try:
            with runner.task(Busy.SWEEP):  # held until it runs the winner: the push goes to the host, not a step
                problem = await settle_quietly(runner, units_by_host[name][value], lambda e: on_event(name, e),
                                               f"applying the winner {value}")
        except Refused as err:
            problem = f"not applied: {err}"
        return name, problem

    return list(await asyncio.gather(*(settle(runner) for runner in runners)))
