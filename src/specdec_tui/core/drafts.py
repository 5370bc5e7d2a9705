"""Unpushed unit edits kept on disk so a crash or a quit never loses them.

One file per (host, unit) under `paths.drafts_dir()`, written atomically (temp file + rename) so a
draft is either the old text or the new one, never half of each. No Textual, no network.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from specdec_tui.core import paths

_UNSAFE = r"[^A-Za-z0-9._-]+"  # compiled by `re` on first use (a draft is written after the first frame)


def _safe(part: str) -> str:
    """A file-name-safe form of a host or unit name (never empty, never a path)."""
    cleaned = re.sub(_UNSAFE, "_", part).strip("._")
    return cleaned or "_"


def draft_path(host_name: str, unit_name: str) -> Path:
    return paths.drafts_dir() / f"{_safe(host_name)}__{_safe(unit_name)}.draft"


def save_draft(host_name: str, unit_name: str, text: str) -> Path:
    """Write `text` as the draft for this host's unit, replacing any older draft atomically."""
    target = draft_path(host_name, unit_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".draft-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_draft(host_name: str, unit_name: str) -> str | None:
    """The saved draft text, or None when there is none (or it cannot be read)."""
    try:
        return draft_path(host_name, unit_name).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return None


def clear_draft(host_name: str, unit_name: str) -> None:
    """Forget the draft (after a successful push, or when the user discards it)."""
    draft_path(host_name, unit_name).unlink(missing_ok=True)
