"""What the panel asks a host's Python to learn the SGLang release its unit runs: the version, and that release's
flag schema (extract_snippet.py, the same script tools/sglang_schema.py runs on a wheel), both read from stdout.
Pure: the hosts run the source (`PythonProbe.run_python`), loop/sglang_release.py caches the answers."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from specdec_tui.core.exec_start import ExecStart

# Reads the version without building anything; `import sglang` is what the unit's own Python does first.
VERSION_SOURCE = b"import sglang\nprint(sglang.__version__)\n"
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,40}$")
_PYTHON = re.compile(r"^python[0-9.]*$")


def unit_python(exec_start: ExecStart) -> str:
    """The Python the unit runs (ExecStart's program when it is a python), else the host's `python3`."""
    program = exec_start.program
    return program if _PYTHON.match(program.rsplit("/", 1)[-1]) else "python3"


@cache
def schema_source() -> bytes:
    """extract_snippet.py, as sent to a host's Python on stdin."""
    return resources.files("specdec_tui.core.sglang_schema").joinpath("extract_snippet.py").read_bytes()


def read_version(stdout: str) -> str | None:
    """The version a probe printed (its last line), or None when it is not one."""
    lines = stdout.strip().splitlines()
    text = lines[-1].strip() if lines else ""
    return text if _VERSION.match(text) else None
