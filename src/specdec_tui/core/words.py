"""An exception as a sentence for the user: what failed and, where the error carries it, what to do."""

from __future__ import annotations


def in_words(err: BaseException) -> str:
    """The error's own message (HostError already says what to do), else its type's name."""
    text = str(err).strip()
    return text or type(err).__name__
