"""A stand-in `sglang` for tests: a release the panel does not bundle, with a small parser of its own."""

__version__ = "0.6.0.dev1"
