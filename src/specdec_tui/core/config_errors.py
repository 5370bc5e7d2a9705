"""The one error a bad config file raises (kept apart so the reader and the file functions share it)."""

from __future__ import annotations


class ConfigError(Exception):
    """A bad config file, as one line: `<file>:<line>: <key.path>: <what is wrong, what to write>`."""

    def __init__(self, source: str, line: int | None, key: str, what: str) -> None:
        self.source = source
        self.line = line
        self.key = key
        self.what = what
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {key}: {what}" if key else f"{where}: {what}")
