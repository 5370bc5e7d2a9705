"""Comma-separated lists typed by the operator (`--concurrency 1,4,16`, `--values 1,2,3`, `--space FLAG=0,1,3`): one
owner for what a typo between the commas means."""

from __future__ import annotations


class EmptyTerm(ValueError):
    """`1,,16`: a term left out between two commas (the caller says which option, in words)."""


def comma_terms(text: str) -> list[str]:
    """The terms of `text`, stripped, in order (none for a text of only commas and blanks). A trailing comma is
    harmless and dropped; an empty term before another (`1,,16`, `,4`) was a value left out, and raises EmptyTerm
    rather than run without it."""
    terms = [term.strip() for term in text.split(",")]
    if not any(terms):
        return []  # nothing given at all: the caller says what to give
    if not terms[-1]:
        terms.pop()
    if "" in terms:
        raise EmptyTerm(text)
    return terms
