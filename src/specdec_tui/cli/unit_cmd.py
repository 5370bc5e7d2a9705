"""Headless `unit` commands: show, set, check and diff a systemd unit's SGLang flags without the UI.

`unit set` writes the edited unit to stdout (or -o/--in-place); every byte other than the edited flag's words
stays as it was, so `unit set a.service x=1 | diff a.service -` shows one line.
"""

from __future__ import annotations

import argparse
import re
import sys

from specdec_tui.cli.common import add_target_options
from specdec_tui.cli.errors import CliError
from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.flags import Issue, spec_for, validate_unit
from specdec_tui.core.json_out import json_text
from specdec_tui.core.regular_file import open_regular
from specdec_tui.core.sglang_schema.schema import ReleaseSchema
from specdec_tui.core.systemd_quote import join_args
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.core.unit import UnitEditError, UnitFile, UnitSyntaxError
from specdec_tui.core.unit_diff import flag_changes, unified_diff

# A flag name as SGLang spells them (letters, digits, "-", "_", "."), not starting with "-".
FLAG_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")

def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `unit` command group."""
    unit = sub.add_parser("unit", help="show, edit, check or diff a systemd unit's SGLang flags")
    commands = unit.add_subparsers(dest="unit_command", metavar="SUBCOMMAND", required=True)

    show = commands.add_parser("show", help="the program and its flags as a table")
    show.add_argument("file", metavar="FILE")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show.set_defaults(func=run_show)

    edit = commands.add_parser(
        "set",
        help="set or remove flags; prints the new unit (every other byte unchanged)",
        description="NAME=VALUE sets a flag, NAME alone turns a switch on; NAME may start with -- or not.",
    )
    edit.add_argument("file", metavar="FILE")
    edit.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT instead of stdout")
    edit.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically)")
    edit.add_argument("--unset", metavar="NAME", nargs="+", action="extend", default=[], help="flags to remove")
    edit.add_argument("assignments", nargs=argparse.REMAINDER, metavar="NAME=VALUE")
    edit.set_defaults(func=run_set)

    check = commands.add_parser(
        "check", help="errors and warnings about the flags (exit 1 on errors)",
        description="Judges FILE as the SGLang release would parse and start it: the bundled 0.5.23 by default, the "
                    "release a host's unit Python runs with --host NAME, or a bundled or cached release with "
                    "--release VERSION. Exit 1 when that release would refuse the unit, 2 when it cannot be judged.")
    check.add_argument("file", metavar="FILE")
    add_target_options(check)
    check.add_argument("--release", metavar="VERSION",
                       help="judge by this SGLang release (bundled, or cached from a host earlier) without a host")
    check.set_defaults(func=run_check)

    diff = commands.add_parser("diff", help="unified diff of two units, then the flags that changed")
    diff.add_argument("old", metavar="OLD")
    diff.add_argument("new", metavar="NEW")
    diff.set_defaults(func=run_diff)


# ------------------------------------------------------------------------- reading and writing
def read_unit_text(path: str) -> str:
    """The file's text, exactly (no newline translation); CliError in words when it cannot be read."""
    try:
        with open_regular(path) as f:  # a FIFO held `unit show` for ever, /dev/zero was read until memory ran out
            data = f.read()
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not a unit file") from None
    except OSError as err:
        raise CliError(f"{path}: cannot read it ({err.strerror}); give the unit file's path") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CliError(f"{path}: not UTF-8 text (byte {err.start}); systemd units are text files") from None


def load_unit(path: str) -> UnitFile:
    text = read_unit_text(path)
    try:
        unit = UnitFile.parse(text)
        _ = unit.exec_start  # surfaces ExecStart quoting problems with their line number
    except UnitSyntaxError as err:
        raise CliError(f"{path}: {err}") from None
    return unit


def _write_text(text: str, path: str | None) -> None:
    if path is None:
        stream = getattr(sys.stdout, "buffer", None)
        if stream is not None:
            sys.stdout.flush()
            stream.write(text.encode("utf-8"))
            stream.flush()
        else:
            sys.stdout.write(text)
        return
    try:
        write_atomic(path, text)  # through a symlink to its target; the file's mode kept
    except OSError as err:
        raise CliError(f"{path}: cannot write it ({err.strerror})") from None


# ------------------------------------------------------------------------- set
def parse_assignments(tokens: list[str]) -> tuple[dict[str, str | None], list[str], str | None, bool]:
    """Splits `set`'s free tokens into assignments, --unset names, -o OUT and --in-place."""
    assignments: dict[str, str | None] = {}
    unset: list[str] = []
    output: str | None = None
    in_place = False
    mode = "set"
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("-o", "--output"):
            if i + 1 >= len(tokens):
                raise CliError(f"{token} needs a file name")
            output, i = tokens[i + 1], i + 2
            continue
        if token.startswith("--output="):
            output = token.split("=", 1)[1]
        elif token == "--in-place":
            in_place = True
        elif token == "--unset":
            mode = "unset"
        elif token == "--":
            mode = "set"
        elif mode == "unset" and "=" not in token:
            unset.append(_flag_name(token))
        else:
            name, sep, value = token.partition("=")
            assignments[_flag_name(name)] = value if sep else None
        i += 1
    return assignments, unset, output, in_place


def _flag_name(raw: str) -> str:
    name = raw[2:] if raw.startswith("--") else raw
    if not FLAG_NAME.fullmatch(name):  # a quote or a backslash in a name would break the ExecStart= line
        raise CliError(f"{raw!r} is not a flag name (write NAME=VALUE, e.g. speculative-num-steps=4)")
    return name


def run_set(args: argparse.Namespace) -> int:
    assignments, unset, output, in_place = parse_assignments(list(args.assignments))
    unset = [_flag_name(n) for n in args.unset] + unset
    output = output or args.output
    in_place = in_place or args.in_place
    if not assignments and not unset:
        raise CliError("nothing to change: give NAME=VALUE, NAME (a switch) or --unset NAME")
    if output and in_place:
        raise CliError("give either -o OUT or --in-place, not both")
    unit = load_unit(args.file)
    try:
        edited = unit.set_flags(assignments, unset=unset)
        issues = validate_unit(edited)
    except (UnitSyntaxError, UnitEditError) as err:
        raise CliError(f"{args.file}: {err}") from None
    before = {(i.flag, i.message) for i in validate_unit(unit) if i.level == "error"}
    added = [i for i in issues if i.level == "error" and (i.flag, i.message) not in before]
    for issue in issues:
        print(terminal_safe(f"{issue.level}: {issue.message}"), file=sys.stderr)
    if added:  # errors this edit brings in: nothing is written (errors already in the file do not block it)
        where = args.file if in_place else output or "stdout"
        raise CliError(f"not written ({where} untouched): the edit adds {len(added)} error(s) SGLang would stop on; "
                       "correct the value (`unit check` lists what the file already has)")
    _write_text(edited.text, args.file if in_place else output)
    return 0


# ------------------------------------------------------------------------- show / check / diff
def run_show(args: argparse.Namespace) -> int:
    unit = load_unit(args.file)
    command = unit.exec_start
    flags = unit.flags()
    if args.json:
        payload = {
            "file": args.file,
            "description": unit.get("Unit", "Description"),
            "prefixes": command.prefixes,
            "program": command.program,
            "python_module": command.python_module,
            "argv": command.argv,
            "environment": unit.get_all("Service", "Environment"),
            "flags": flags,
        }
        print(json_text(payload, indent=True))
        return 0
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from specdec_tui.cli.safe_console import SafeConsole

    console = SafeConsole()
    head = []
    for arg in command.argv:
        if arg.startswith("--"):
            break
        head.append(arg)
    console.print(f"[bold]{escape(args.file)}[/]: {escape(command.prefixes + join_args(head))}", highlight=False)
    wide = console.width >= 120
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("flag", no_wrap=True, min_width=max((len(n) + 2 for n in flags), default=4))
    table.add_column("value", overflow="fold")
    table.add_column("group")
    table.add_column("SGLang default", overflow="fold")
    if wide:
        table.add_column("about")
    for name, value in flags.items():
        spec = spec_for(name)
        shown = "(switch)" if value is None else value
        if spec is None:
            row = [f"--{name}", escape(shown), "[yellow]unknown[/]", ""]
        else:
            row = [f"--{name}", escape(shown), spec.group, "set by SGLang" if spec.default is None else str(spec.default)]
        table.add_row(*row, *([spec.help if spec else "not in this tool's flag table"] if wide else []))
    console.print(table)
    return 0


def format_issue(issue: Issue) -> str:
    fix = ""
    if issue.fixable:
        parts = [f"--{k}" + ("" if v is None else f" {v}") for k, v in (issue.fix or {}).items()]
        parts += [f"remove --{n}" for n in issue.remove]
        fix = f"  (fix: {', '.join(parts)})"
    return f"{issue.level}: {issue.message}{fix}"


def run_check(args: argparse.Namespace) -> int:
    unit = load_unit(args.file)
    schema, source, note = judging_release(args, unit)
    print(terminal_safe(f"judged by SGLang {schema.version} ({source})"))
    if note:
        print(terminal_safe(f"note: {note}"))
    issues = validate_unit(unit, schema)
    for issue in issues:
        print(terminal_safe(format_issue(issue)))
    errors = sum(1 for i in issues if i.level == "error")
    warnings = len(issues) - errors
    print(f"{args.file}: {errors} error(s), {warnings} warning(s)" if issues else f"{args.file}: no problems found")
    return 1 if errors else 0


def judging_release(args: argparse.Namespace, unit: UnitFile) -> tuple[ReleaseSchema, str, str]:
    """The schema that judges `unit check`, words for where it came from, and the fallback note (or "")."""
    from specdec_tui.core.sglang_schema.schema import DEFAULT_VERSION, bundled_versions, default_schema

    host_name: str | None = getattr(args, "host", None)
    if args.release and host_name:
        raise CliError("give either --host NAME (the host's own release) or --release VERSION, not both", code=2)
    if args.release:
        return named_release(args.release), "bundled" if args.release in bundled_versions() else "cached", ""
    if host_name is None:
        return default_schema(), "bundled", ""
    import asyncio

    from specdec_tui.cli.common import load_cli_config, open_cli_host
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.sglang_release import learn_release

    config, name = load_cli_config(args)
    host = open_cli_host(config, name)

    async def learn() -> tuple[ReleaseSchema, str, str]:
        await host.connect()
        try:
            release = await learn_release(host, unit.exec_start)
        finally:
            await host.close()
        where = {"host": f"the release {name} runs; its flags read from the host now",
                 "cache": f"the release {name} runs; its flags cached from the host",
                 "bundled": f"the release {name} runs; bundled",
                 "default": f"bundled; {name}'s own release is not known"}[release.source]
        return release.schema, where, release.note

    try:
        return asyncio.run(learn())
    except HostError as err:
        raise CliError(f"{args.file} not judged: {err} (without --host it is judged by the bundled SGLang "
                       f"{DEFAULT_VERSION})", code=2) from None


def named_release(version: str) -> ReleaseSchema:
    """A bundled release, or one a host's schema was cached for; a CliError naming those there are otherwise."""
    from specdec_tui.core.paths import schema_cache_dir
    from specdec_tui.core.sglang_schema.schema import SchemaError, bundled_schema, bundled_versions, parse_schema

    if version in bundled_versions():
        return bundled_schema(version)
    cache = schema_cache_dir()
    try:
        return parse_schema((cache / f"{version}.json").read_text(encoding="utf-8"), source="cache")
    except FileNotFoundError:
        pass
    except (OSError, SchemaError) as err:
        raise CliError(f"SGLang {version}'s cached schema in {cache} cannot be read ({err}); `unit check --host "
                       "NAME` on a host that runs it reads it again", code=2) from None
    cached = sorted(p.stem for p in cache.glob("*.json")) if cache.is_dir() else []
    raise CliError(f"SGLang {version} is neither bundled ({', '.join(bundled_versions())}) nor cached from a host "
                   f"({', '.join(cached) or 'none yet'}); `unit check --host NAME` learns the release a host runs",
                   code=2)


def run_diff(args: argparse.Namespace) -> int:
    old_text, new_text = read_unit_text(args.old), read_unit_text(args.new)
    sys.stdout.write(unified_diff(old_text, new_text, args.old, args.new))
    try:
        changes = flag_changes(UnitFile.parse(old_text), UnitFile.parse(new_text))
    except UnitSyntaxError as err:
        print(terminal_safe(f"(flags not compared: {err})"), file=sys.stderr)
        return 0
    for change in changes:
        old = "absent" if change.old is None else change.old or "(switch)"
        new = "absent" if change.new is None else change.new or "(switch)"
        print(terminal_safe(f"# --{change.name}: {old} -> {new}"))
    if old_text == new_text:
        print("the files are identical", file=sys.stderr)
    return 0
