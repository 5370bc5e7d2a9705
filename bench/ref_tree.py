"""A git ref's package in a directory of its own, for the benches' `--before REF` (the code before a change, run
beside this checkout's in one run): its src/ exported with `git archive`, so no checkout and no worktree is left."""

from __future__ import annotations

import subprocess
from pathlib import Path


def export_tree(ref: str, root: Path) -> Path:
    """`ref`'s src/ under `root` (put its `src` first on PYTHONPATH to run it)."""
    repo = Path(__file__).resolve().parent.parent
    tree = root / f"tree-{ref.replace('/', '_')}"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", ref, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree
