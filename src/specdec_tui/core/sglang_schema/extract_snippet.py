# mypy: ignore-errors
# (a script for another interpreter: it imports the sglang of the Python it runs in, which this project has not)
"""Dump an installed SGLang's flag schema as JSON: its version and `ServerArgs.add_cli_args` on an argparse parser.

This file is a self-contained script (standard library only, no import of specdec_tui): `tools/sglang_schema.py`
runs it against a release wheel unpacked on this machine, and the panel sends its text to a host's Python over SSH
(`python3 - < this file`), so both read a release the same way. Heavy modules (torch, CUDA kernels, ...) are
replaced by inert stand-ins before sglang is imported: building the parser needs none of them, and importing them
would take seconds (or a GPU). A module the host does not have at all gets the same stand-in.

Output: one JSON object on stdout (`FORMAT` below; core/sglang_schema/schema.py reads it); on failure, a JSON
object with "error" and exit status 1.
"""

import argparse
import importlib.abc
import importlib.machinery
import json
import sys
import types

FORMAT = 1
HEAVY = ("torch", "torchvision", "torchaudio", "triton", "sgl_kernel", "sglang_kernel", "flashinfer", "flash_attn",
         "vllm", "xformers", "deep_gemm", "deep_ep", "cuda", "pynvml", "nvidia", "tilelang", "mooncake", "aiter",
         "transformers", "tokenizers", "safetensors", "zmq", "uvloop", "ray", "mlx", "habana_frameworks", "torch_npu")


# Attributes that code asks for to learn what an object is (unwrapping, typing, pickling): a stand-in has none.
_NOT_STUBBED = frozenset(("__wrapped__", "__signature__", "__origin__", "__args__", "__parameters__", "__func__",
                          "__self__", "__objclass__", "__isabstractmethod__", "__reduce_ex__", "__reduce__",
                          "__getstate__", "__setstate__", "__deepcopy__", "__copy__", "__fspath__",
                          "__dataclass_fields__", "__annotations__", "__get__", "__set_name__",
                          # torch's optional device modules: `hasattr(torch, "npu")` is how a platform is detected
                          "npu", "hpu", "xpu", "musa", "mlu", "sail"))


class _Stub:
    """Any attribute, call, item or base class of a stubbed module: inert, falsy, empty."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name in _NOT_STUBBED:
            raise AttributeError(name)
        return _Stub()

    def __call__(self, *args, **kwargs):
        return _Stub()

    def __getitem__(self, key):
        return _Stub()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0

    def __index__(self):
        return 0

    def __len__(self):
        return 0

    def __eq__(self, other):
        return other is self

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __mro_entries__(self, bases):
        return (type("StubBase", (), {"__init__": lambda self, *a, **k: None}),)


class _StubModule(types.ModuleType):
    __version__ = "0.0.0"

    def __getattr__(self, name):
        if name in _NOT_STUBBED or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return _Stub()


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        return None


class _StubFinder(importlib.abc.MetaPathFinder):
    """First on the path: the heavy modules. Last on the path (`missing`): whatever the Python does not have."""

    def __init__(self, names):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if self.names is not None and fullname.split(".")[0] not in self.names:
            return None
        if _probing():
            return None  # `importlib.util.find_spec("torch_npu")` asks whether a platform exists: it does not
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)


def _probing():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "find_spec" and frame.f_code.co_filename.endswith("util.py"):
            return True
        frame = frame.f_back
    return False


def _type_name(kind):
    if kind is None:
        return None
    if kind in (int, float, str, bool):
        return kind.__name__
    if kind is json.loads:
        return "json"
    module = getattr(kind, "__module__", "") or ""
    return f"{module}.{getattr(kind, '__qualname__', repr(kind))}"


def _plain(value):
    """A default/const/choice as JSON: plain values as they are, anything else as its repr (marked)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return {"repr": repr(value)}


_KINDS = {
    "_StoreAction": "store", "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const", "_AppendAction": "append", "_AppendConstAction": "append_const",
    "_CountAction": "count", "_HelpAction": "help", "_VersionAction": "version", "_ExtendAction": "extend",
    "BooleanOptionalAction": "boolean_optional",
}


def _option(action):
    kind = type(action).__name__
    extra = {k: _plain(getattr(action, k)) for k in ("new_flag", "const_value", "error_message")
             if getattr(action, k, None) is not None}
    nargs = action.nargs
    return {
        "option_strings": list(action.option_strings),
        "dest": action.dest,
        "action": _KINDS.get(kind, "custom"),
        "action_class": f"{type(action).__module__}.{type(action).__qualname__}",
        "nargs": nargs if nargs is None or isinstance(nargs, (int, str)) else str(nargs),
        "type": _type_name(action.type),
        "choices": None if action.choices is None else _plain(list(action.choices)),
        "default": None if action.default is argparse.SUPPRESS else _plain(action.default),
        "const": _plain(action.const),
        "required": bool(action.required),
        "metavar": _plain(action.metavar),
        "help": None if action.help is argparse.SUPPRESS else action.help,
        "suppressed": action.help is argparse.SUPPRESS,
        **extra,
    }


def dump(prog="sglang serve"):
    """The schema of the sglang importable here, as a dict."""
    sys.meta_path.insert(0, _StubFinder(set(HEAVY)))
    sys.meta_path.append(_StubFinder(None))
    import sglang
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog=prog)
    ServerArgs.add_cli_args(parser)
    options = [_option(a) for a in parser._actions if a.option_strings and type(a).__name__ != "_HelpAction"]
    return {
        "format": FORMAT,
        "version": str(getattr(sglang, "__version__", "unknown")),
        "prog": parser.prog,
        "allow_abbrev": parser.allow_abbrev,
        "prefix_chars": parser.prefix_chars,
        "python": ".".join(str(n) for n in sys.version_info[:3]),
        "options": options,
    }


def main():
    try:
        schema = dump()
    except BaseException as err:  # a parser that does not build is reported, not raised
        print(json.dumps({"format": FORMAT, "error": f"{type(err).__name__}: {err}"}))
        return 1
    print(json.dumps(schema, indent=None, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
