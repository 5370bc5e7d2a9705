"""Headless `journal` commands: `journal parse [FILE|-] [--json]` shows what the panel reads
from SGLang's log, one record per input line, so a parser gap is easy to see and report."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # loaded by the command itself: registering it for --help must stay cheap
    from rich.console import Console
    from rich.table import Table

    from specdec_tui.core.sglang.records import LogRecord
    from specdec_tui.core.sglang.stats import LogStats

# What `host journal` prints before each message: its local time, a cluster node's tag, a gap's mark. SGLang's own
# lines never start this way (they start with `[YYYY-MM-DD`, or journald's `Dec 04` / ISO stamp), so a log piped
# from `host journal` parses like the journal it came from: `host journal --host X | journal parse`.
_HOST_JOURNAL_STAMP = re.compile(r"^\d{2}:\d{2}:\d{2} (?:\[[^\]\s]+\] )?(?:~~ )?")

KIND_STYLES = {
    "decode": "cyan",
    "prefill": "blue",
    "startup_summary": "bold magenta",
    "load_weight": "magenta",
    "kv_cache": "magenta",
    "cuda_graph": "magenta",
    "ready": "bold green",
    "error": "bold red",
    "adjust": "yellow",
    "access": "dim",
    "text": "dim",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `journal` command group."""
    journal = sub.add_parser("journal", help="read SGLang log lines the way the panel does")
    journal_sub = journal.add_subparsers(dest="journal_command", metavar="SUBCOMMAND", required=True)
    parse = journal_sub.add_parser(
        "parse",
        help="parse a log (file, or - for stdin) into records, one per line",
        description="Parse SGLang log lines (journalctl output, a log file, or pasted lines) into records.",
    )
    parse.add_argument("file", nargs="?", default="-", metavar="FILE", help="log file, or - for stdin (default)")
    parse.add_argument("--json", action="store_true", help="print one JSON object per line (JSON lines)")
    parse.set_defaults(func=run_parse)


def _open_lines(name: str) -> Iterator[str]:
    from specdec_tui.cli.errors import CliError

    if name == "-":
        yield from map(_without_host_stamp, sys.stdin)
        return
    path = Path(name).expanduser()
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            yield from map(_without_host_stamp, handle)
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except OSError as err:
        raise CliError(f"cannot read {path}: {err.strerror or err}") from None


def _without_host_stamp(line: str) -> str:
    return _HOST_JOURNAL_STAMP.sub("", line, count=1)


def _record_json(record: LogRecord) -> bytes:
    from specdec_tui.core.json_out import json_bytes

    return json_bytes(record, non_str_keys=True)


def _print_json(lines: Iterator[str], out: IO[bytes]) -> None:
    from specdec_tui.core.sglang.parse import parse_line

    for line in lines:
        out.write(_record_json(parse_line(line)) + b"\n")


def _print_human(lines: Iterator[str], console: Console) -> LogStats:
    from rich.text import Text

    from specdec_tui.core.sglang.parse import parse_line
    from specdec_tui.core.sglang.stats import LogStats

    stats = LogStats()
    for line in lines:
        if not line.strip():
            continue
        record = parse_line(line)
        stats.update(record)
        when = record.timestamp.strftime("%H:%M:%S") if record.timestamp else "--:--:--"
        text = Text(f"{when} ")
        text.append(f"{record.kind:<15}", style=KIND_STYLES.get(record.kind, ""))
        text.append(" " + record.summary())
        console.print(text, soft_wrap=True)
    return stats


def _stats_table(stats: LogStats) -> Table:
    from rich.table import Table

    table = Table(title="latest", show_header=False, box=None)
    rows = [
        ("accept len", stats.accept_len),
        ("accept rate", stats.accept_rate),
        ("gen throughput (tok/s)", stats.gen_throughput),
        ("running requests", stats.running_req),
        ("queued requests", stats.queue_req),
        ("max_running_requests", stats.max_running_requests),
        ("max_total_num_tokens", stats.max_total_num_tokens),
        ("ready", stats.ready),
        ("decode lines", stats.decode_lines),
        ("errors", stats.error_lines),
        ("last error", stats.last_error.summary() if stats.last_error else "-"),
    ]
    for name, label in (("gen_throughput", "gen throughput (tok/s)"), ("running_req", "running requests")):
        for rank, figure in stats.per_rank(name):  # each DP rank logs its own; the row above is their sum
            rows.append((f"  DP{rank} {label}", figure))
    for label, value in rows:
        shown = f"{value:.2f}" if isinstance(value, float) else ("-" if value is None else str(value))
        table.add_row(label, shown)
    return table


def run_parse(args: argparse.Namespace) -> int:
    lines = _open_lines(args.file)
    if args.json:
        _print_json(lines, sys.stdout.buffer)
        sys.stdout.flush()
        return 0
    from specdec_tui.cli.safe_console import SafeConsole

    console = SafeConsole(highlight=False)
    stats = _print_human(lines, console)
    console.print(_stats_table(stats))
    return 0
