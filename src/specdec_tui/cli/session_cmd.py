"""Headless `session` commands: list the saved sessions, show one, compare two trials, export, replay.

All but `replay` work without a host — a session file is all they need.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.cli.errors import CliError
from specdec_tui.core.session import Session, SessionError, load_session

if TYPE_CHECKING:
    from rich.table import Table

    from specdec_tui.core.config import Config
    from specdec_tui.core.session_index import SessionIndex
    from specdec_tui.hosts.base import Host


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `session` command group."""
    from specdec_tui.cli.common import add_target_options, add_time_scale_option

    p = sub.add_parser("session", help="saved sessions: list, show, compare, export, replay")
    actions = p.add_subparsers(dest="session_command", metavar="ACTION", required=True)

    a = actions.add_parser("list", help="saved sessions in the data dir: date, host, trials, best tok/s")
    a.set_defaults(func=run_list)

    a = actions.add_parser("show", help="every trial of a session with its figures, and the best")
    a.add_argument("file", metavar="FILE", help="session file (a path, or a name in the sessions dir)")
    a.set_defaults(func=run_show)

    a = actions.add_parser("compare", help="two trials side by side: flags diff, figures, delta %%")
    a.add_argument("file", metavar="FILE")
    a.add_argument("a", type=int, metavar="A", help="trial id (the baseline)")
    a.add_argument("b", type=int, metavar="B", help="trial id")
    a.set_defaults(func=run_compare)

    a = actions.add_parser("export", help="write the session as CSV, JSON, a Markdown report or an HTML report with charts")
    a.add_argument("file", metavar="FILE")
    a.add_argument("--format", choices=("csv", "json", "md", "html"), default="md")
    a.add_argument("-o", "--output", metavar="OUT", help="file to write (default: stdout)")
    a.set_defaults(func=run_export)

    a = actions.add_parser("replay", help="run every trial's unit again on a host and record the drift")
    a.add_argument("file", metavar="FILE")
    add_target_options(a)
    add_time_scale_option(a)
    a.add_argument("--keep-best", action="store_true", help="leave the host on the best replayed trial")
    a.add_argument("--trials", metavar="IDS", help="only these trial ids, e.g. 1,3")
    a.add_argument("--tolerance", type=float, default=10.0, metavar="PCT",
                   help="for levels saved without per-request figures (no intervals): drift in %% still counted as "
                        "reproduced (default 10); other levels are judged by their 95 %% intervals")
    a.set_defaults(func=run_replay)


def session_path(name: str) -> Path:
    """A path as given, else a file of that name (with or without .toml) in the sessions dir."""
    from specdec_tui.core.paths import sessions_dir

    candidates = (Path(name), sessions_dir() / name, sessions_dir() / f"{name}.toml")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    if (there := next((c for c in candidates if c.exists()), None)) is not None:  # a FIFO, a device, a directory
        return there  # load_session says what it is instead
    raise CliError(f"no session file {name!r} (looked here and in {sessions_dir()}); "
                   "`specdec-tui session list` shows the saved ones")


def open_session_file(name: str) -> tuple[Session, Path]:
    path = session_path(name)
    try:
        return load_session(path), path
    except SessionError as err:
        raise CliError(str(err)) from None


def run_list(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from specdec_tui.cli.render import make_console
    from specdec_tui.core.compare import best_of
    from specdec_tui.core.number_format import fmt_fixed
    from specdec_tui.core.paths import sessions_dir
    from specdec_tui.core.session_index import load_listing

    files = sorted(sessions_dir().glob("*.toml")) if sessions_dir().is_dir() else []
    console = make_console()
    if not files:
        console.print(f"no saved sessions in {sessions_dir()}", markup=False)
        return 0
    table = Table(title=f"sessions in {sessions_dir()}")
    for name, justify in (("file", "left"), ("date (UTC)", "left"), ("host", "left"), ("trials", "right"),
                          ("best low-c tok/s", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for path in files:
        try:
            index = load_listing(path)  # the session's fields and trial headlines only: no trial read whole
        except SessionError as err:
            table.add_row(escape(path.name), "[red]unreadable[/]", "", "", escape(str(err).removeprefix(f"{path}: ")))
            continue
        cs = sorted({lv.concurrency for h in index.headlines for lv in h.levels})
        best = best_of(index.headlines, cs[0]) if cs else None
        figure = f"{fmt_fixed(lv.output_tok_s)} (c={cs[0]}, trial {best.id})" if best and (lv := best.level(cs[0])) else "–"
        session = index.header
        table.add_row(escape(path.name), f"{session.created:%Y-%m-%d %H:%M}", escape(session.host),
                      str(len(index.headlines)), figure)
    console.print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Every trial summarised from the session's index, the newest `SHOW_TRIALS` listed whole (issue 36: 10,000
    trials built ~300,000 result objects to list 200 of them)."""
    from specdec_tui.cli.render import best_lines, make_console, session_table, settings_lines
    from specdec_tui.core.profile_words import trials_settings
    from specdec_tui.core.provenance import provenance_groups
    from specdec_tui.core.session_index import load_index
    from specdec_tui.core.terminal_codes import terminal_safe

    path = session_path(args.file)
    try:
        index = load_index(path)
        heads = index.headlines
        listed = index.trials(range(max(0, len(heads) - SHOW_TRIALS), len(heads)))
        sweeps = _sweep_tables(index, {t.id for t in listed})
    except SessionError as err:
        raise CliError(str(err)) from None
    session = index.header
    console = make_console()
    console.print(f"{path}: host {session.host or '?'}, unit {session.unit or '?'}, {len(heads)} trial(s); "
                  f"{trials_settings(heads, session.profile)}", markup=False)  # the trials' own, not the default
    for line in settings_lines(heads):
        console.print(line, markup=False)
    console.print(session_table(dataclasses.replace(session, trials=listed)))
    if len(listed) < len(heads):
        console.print(f"{len(heads) - len(listed)} earlier trial(s) not listed; "
                      f"`specdec-tui session export {path} --format csv` lists every one", markup=False)
    for line in best_lines(heads):
        console.print(line, markup=False)
    for t in listed:
        if t.failure:
            console.print(f"trial {t.id} {t.status}: {t.failure}", markup=False)
    for line in provenance_groups(listed):  # trials measured alike share one line
        console.print(terminal_safe(line), markup=False)
    tables, earlier = sweeps
    for table in tables:
        console.print(table)
    if earlier:
        console.print(f"{earlier} earlier sweep(s) not shown (none of their trials is listed above); "
                      f"`specdec-tui session export {path} --format md` reports every trial", markup=False)
    return 0


SHOW_TRIALS = 200  # `show` lists the newest this many: a 10,000-row table took Rich 20 s and no one reads it


def _sweep_tables(index: SessionIndex, listed: set[int]) -> tuple[list[Table], int]:
    """A table for each sweep that has a trial among the `listed` ones (built from all its trials), numbered when
    the session holds several; and how many earlier sweeps are left out."""
    from specdec_tui.cli.render import sweep_table
    from specdec_tui.core.session import Trial
    from specdec_tui.core.sweep_rules import choose, curve
    from specdec_tui.core.sweep_runs import SweepRun, separate_sweeps

    tagged = [(i, h) for i, h in enumerate(index.headlines) if h.replay_of is None and h.sweep]
    stubs = [Trial(id=h.id, unit_text="", flags=h.flags, sweep=h.sweep, uid="", tool_version="") for _, h in tagged]
    position = {id(stub): i for stub, (i, _) in zip(stubs, tagged, strict=True)}
    runs = separate_sweeps(stubs)  # which trials each sweep ran, told apart as the whole trials would be
    shown = [run for run in runs if any(t.id in listed for ts in run.by_value.values() for t in ts)]
    wanted = sorted({position[id(t)] for run in shown for ts in run.by_value.values() for t in ts})
    whole = dict(zip(wanted, index.trials(wanted), strict=True))
    tables = []
    for run in shown:
        full = SweepRun(run.flag, run.number, {value: [whole[position[id(t)]] for t in ts]
                                               for value, ts in run.by_value.items()})
        tables.append(sweep_table(full.flag, curve(full.by_value), choose(full.by_value),
                                  number=full.number if len(runs) > 1 else 0, levels=full.concurrency))
    return tables, len(runs) - len(shown)


def run_compare(args: argparse.Namespace) -> int:
    from specdec_tui.cli.render import comparison_lines, comparison_table, make_console
    from specdec_tui.core.compare import compare_trials

    session, _path = open_session_file(args.file)
    trials = [session.trial(args.a), session.trial(args.b)]
    missing = [str(i) for i, t in zip((args.a, args.b), trials, strict=True) if t is None]
    if missing:
        known = ", ".join(str(t.id) for t in session.trials) or "none"
        raise CliError(f"no trial {' or '.join(missing)} in {args.file} (trials: {known})")
    cmp = compare_trials(trials[0], trials[1])  # type: ignore[arg-type]
    console = make_console()
    console.print(f"{_path}: trial {args.a} (A) against trial {args.b} (B)", markup=False, soft_wrap=True)
    for line in cmp.header():
        console.print(line, markup=False, soft_wrap=True)
    from specdec_tui.core.provenance import provenance_differences
    from specdec_tui.core.terminal_codes import terminal_safe

    differs = provenance_differences(cmp.a, cmp.b)
    if differs:  # before any number: figures measured on different ground are not a like-for-like comparison
        console.print("measured differently (read the numbers with this in mind):", markup=False)
        for line in differs:
            console.print(terminal_safe(f"  {line}"), markup=False)
    for line in comparison_lines(cmp):
        console.print(line, markup=False)
    console.print(comparison_table(cmp))
    for line in cmp.confidence_lines():
        console.print(line, markup=False)
    return 0


def run_export(args: argparse.Namespace) -> int:
    import sys

    from specdec_tui.core.atomic_file import write_atomic
    from specdec_tui.core.session_export import export_session
    from specdec_tui.core.terminal_codes import terminal_safe

    session, _path = open_session_file(args.file)
    text = export_session(session, args.format)
    if not args.output:  # a terminal would run a label's escape codes (csv and md keep them): words there, data piped
        sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
        return 0
    try:
        write_atomic(args.output, text)
    except OSError as err:
        raise CliError(f"cannot write {args.output}: {err.strerror or err}") from None
    print(f"wrote {args.output} ({args.format}, {len(session.trials)} trial(s))", file=sys.stderr)
    return 0


def parse_ids(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CliError(f"--trials takes trial ids like 1,3, not {text!r}") from None


def run_replay(args: argparse.Namespace) -> int:
    from specdec_tui.cli.common import load_cli_config, open_cli_host

    session, path = open_session_file(args.file)
    config, host_name = load_cli_config(args)
    host = open_cli_host(config, host_name)
    return asyncio.run(_replay(args, session, path, config, host_name, host))


async def _replay(args: argparse.Namespace, session: Session, path: Path, config: Config, host_name: str, host: Host) -> int:
    from specdec_tui.cli.common import StepClock, progress
    from specdec_tui.cli.render import make_console, replay_table
    from specdec_tui.cli.sweep_cmd import phase_line, trial_line
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.events import Phase
    from specdec_tui.loop.health import NotHealthy
    from specdec_tui.loop.replay import ReplayStarted, replay_session
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.loop.unit_checks import WorkflowError

    runner = TrialLoop.for_host(host, config, session, host_name=host_name, session_path=path,
                                  profile=session.profile)

    clock = StepClock()

    def on_event(event: object) -> None:
        if isinstance(event, ReplayStarted):
            progress(clock.line(event.index, event.total, f"replaying trial {event.original.id} {event.original.label}"))
        elif isinstance(event, Phase) and event.name == "done":
            progress(f"  {trial_line(session.trials[-1])}")
        elif (line := phase_line(event)) is not None:
            progress(line)

    if session.host and session.host != host_name:
        progress(f"note: the session was recorded on {session.host}; replaying it on {host_name}")
    try:
        await host.connect()
        outcome = await replay_session(runner, session, keep_best=args.keep_best, trial_ids=parse_ids(args.trials),
                                       on_event=on_event)
    except WorkflowError as err:
        raise CliError(str(err)) from None
    except (HostError, NotHealthy) as err:
        raise CliError(f"{host_name}: {err}") from None
    finally:
        await host.close()
    console = make_console()
    console.print(replay_table(outcome, args.tolerance))
    for line in filter(None, (p.confidence_line() for p in outcome.pairs)):  # the drift against the noise (issue 33)
        console.print(line, markup=False)
    again = sum(1 for p in outcome.pairs if p.failed_again)
    console.print(outcome.held_words(args.tolerance)  # by intervals where the levels kept per-request figures
                  + (f"; {again} failed again, as they did then (no figures to compare)" if again else ""),
                  markup=False)
    if outcome.left_on == "best" and outcome.kept is not None:
        console.print(f"the host runs the best replayed trial {outcome.kept.id} ({outcome.kept.label})", markup=False)
    elif outcome.left_on == "original":
        console.print("the host runs the unit it ran before the replay", markup=False)
    else:
        console.print(outcome.left_on, markup=False)
    console.print(f"replayed trials added to {path}", markup=False)
    return 0 if outcome.left_on in ("best", "original") else 1
