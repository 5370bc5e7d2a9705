"""Regenerate a bundled SGLang flag schema from a released wheel: one command, one file.

    python tools/sglang_schema.py 0.5.23            # pip download --no-deps sglang==0.5.23, dump, write the file
    python tools/sglang_schema.py 0.5.23 --wheel /path/to/sglang-0.5.23-....whl

The wheel is unpacked into a temporary directory and `src/specdec_tui/core/sglang_schema/extract_snippet.py` (the
same script the panel runs on a host's Python) builds its real parser, `ServerArgs.add_cli_args` on an
`argparse.ArgumentParser`, with torch, CUDA kernels and the other heavy imports stubbed. The parser needs msgspec
(a small pure dependency of SGLang's argument records): it is installed into the same temporary directory.
The schema is written to `src/specdec_tui/core/sglang_schema/schemas/<version>.json` (shipped in the wheel).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "specdec_tui" / "core" / "sglang_schema"
SNIPPET = PACKAGE / "extract_snippet.py"
LIGHT_DEPS = ("msgspec",)


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def dump(version: str, wheel: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="sglang-schema-") as tmp:
        work = Path(tmp)
        if wheel is None:
            _pip("download", "--no-deps", "--quiet", "-d", str(work / "dl"), f"sglang=={version}")
            wheel = next((work / "dl").glob("sglang-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(work / "site")
        _pip("install", "--quiet", "--no-deps", "--target", str(work / "deps"), *LIGHT_DEPS)
        env_path = f"{work / 'site'}:{work / 'deps'}"
        done = subprocess.run([sys.executable, str(SNIPPET)], capture_output=True, text=True, cwd=tmp,
                              env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    schema: dict[str, object] = json.loads(done.stdout)
    if done.returncode != 0 or "error" in schema:
        sys.exit(f"the parser of sglang {version} did not build: {schema.get('error')}\n{done.stderr[-2000:]}")
    if schema.get("version") != version:
        sys.exit(f"the wheel says it is sglang {schema.get('version')}, not {version}")
    return schema


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("version", help="the SGLang release, e.g. 0.5.23")
    ap.add_argument("--wheel", type=Path, help="a wheel already downloaded (else pip downloads it)")
    ap.add_argument("-o", "--output", type=Path, help="where to write (default: the package's schemas/<version>.json)")
    args = ap.parse_args()
    schema = dump(args.version, args.wheel)
    out = args.output or PACKAGE / "schemas" / f"{args.version}.json"
    out.write_text(json.dumps(schema, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: sglang {schema['version']}, {len(schema['options'])} options "  # type: ignore[arg-type]
          f"(allow_abbrev={schema['allow_abbrev']})")


if __name__ == "__main__":
    main()
