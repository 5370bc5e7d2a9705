"""Workloads: versioned prompt sets with their lengths and sampling, shipped or the operator's JSONL file.

A workload file is JSON lines. An optional first line is a header object with "workload" (its name),
"version", "description", "temperature", "top_p" and "repetitive"; every other line is one request: {"prompt": str}
or {"messages": [{"role", "content"}, ...]}, with an optional "output_len" (tokens) and "kind". The shipped
ones (`SHIPPED`) live beside this file. A file whose requests carry arrival times is a recorded trace
(`workloads.trace`): its requests are sent in time order at those times (`Workload.arrivals`).
A workload's `content_hash` covers every request and its sampling, so
two trials with the same name but different text never pass for the same load.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from specdec_tui.bench.workloads import trace as tr

SHIPPED = ("chat", "code", "long-context", "trap")
MAX_ITEMS = 100_000


class WorkloadError(Exception):
    """A workload that cannot be loaded, in words."""


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One request of a workload: a prompt, or chat messages as (role, content) pairs."""

    prompt: str | None = None
    messages: tuple[tuple[str, str], ...] = ()
    output_len: int | None = None
    kind: str = "prompt"
    input_len: int | None = None  # a trace entry's made-up prompt: the input length it asked (tokens where counted)

    def as_prompt(self) -> str:
        """The text for the completions endpoint: the prompt, or the messages one per line."""
        if self.prompt is not None:
            return self.prompt
        return "\n".join(f"{role}: {content}" for role, content in self.messages) + "\nassistant:"

    def as_messages(self) -> list[dict[str, str]]:
        if self.messages:
            return [{"role": r, "content": c} for r, c in self.messages]
        return [{"role": "user", "content": self.prompt or ""}]


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    items: tuple[WorkItem, ...]
    version: int = 1
    description: str = ""
    temperature: float | None = None  # None: the profile's
    top_p: float | None = None
    repetitive: bool = False  # by design: acceptance on it is inflated
    content_hash: str = ""
    arrivals: tuple[float, ...] = ()  # a trace: each item's send time (s from the first), ascending; () otherwise

    @property
    def is_trace(self) -> bool:
        return bool(self.arrivals)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version} #{self.content_hash}"


def load_workload(name_or_path: str) -> Workload:
    """A shipped workload by name, or the operator's JSONL file by path."""
    if name_or_path in SHIPPED:
        text = resources.files(__package__).joinpath(f"{name_or_path}.jsonl").read_text(encoding="utf-8")
        return parse_workload(text, name_or_path, name_or_path)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise WorkloadError(f"workload {name_or_path!r} is neither one of {', '.join(SHIPPED)} nor a readable file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise WorkloadError(f"{path}: cannot read it: {err}") from None
    return parse_workload(text, path.stem, str(path))


def parse_workload(text: str, default_name: str, where: str) -> Workload:
    header: dict[str, Any] = {}
    items: list[WorkItem] = []
    times: list[float] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise WorkloadError(f"{where} line {n}: not a JSON object ({err.msg})") from None
        if not isinstance(obj, dict):
            raise WorkloadError(f"{where} line {n}: expected a JSON object")
        if not items and not header and "workload" in obj:
            header = obj
            continue
        timed = tr.is_trace_line(obj)
        if items and timed != bool(times):
            raise WorkloadError(f"{where} line {n}: a trace needs an arrival time (timestamp ms or arrival_s) on "
                                f"every request, and a workload on none")
        try:
            if timed:
                times.append(tr.arrival_s(obj, f"{where} line {n}"))
            items.append(_trace_item(obj, len(items), f"{where} line {n}") if timed else _item(obj, f"{where} line {n}"))
        except tr.TraceError as err:
            raise WorkloadError(str(err)) from None
        if len(items) > MAX_ITEMS:
            raise WorkloadError(f"{where}: more than {MAX_ITEMS} requests")
    if not items:
        raise WorkloadError(f"{where}: holds no requests")
    if times:  # sent in time order; lines recorded out of order keep their own time
        order = sorted(range(len(items)), key=times.__getitem__)
        items, times = [items[i] for i in order], [times[i] for i in order]
    temperature, top_p = _opt_float(header, "temperature", where), _opt_float(header, "top_p", where)
    version = header.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise WorkloadError(f"{where}: header version must be a whole number")
    arrivals = tr.offsets(times)
    canon: list[Any] = [temperature, top_p, [_canon(i) for i in items]] + ([[round(a, 6) for a in arrivals]] if times else [])
    digest = hashlib.sha256(json.dumps(canon, sort_keys=True).encode())
    return Workload(
        name=str(header.get("workload") or default_name),
        items=tuple(items),
        version=version,
        description=str(header.get("description", "")),
        temperature=temperature,
        top_p=top_p,
        repetitive=bool(header.get("repetitive", False)),
        content_hash=digest.hexdigest()[:12],
        arrivals=arrivals,
    )


def _item(obj: dict[str, Any], where: str) -> WorkItem:
    out_len = obj.get("output_len")
    if out_len is not None and (not isinstance(out_len, int) or isinstance(out_len, bool) or out_len < 1):
        raise WorkloadError(f"{where}: output_len must be a whole number ≥ 1")
    kind = str(obj.get("kind", "prompt"))
    prompt = obj.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return WorkItem(prompt=prompt, output_len=out_len, kind=kind)
    msgs = obj.get("messages")
    if isinstance(msgs, list) and msgs:
        pairs = []
        for m in msgs:
            if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
                raise WorkloadError(f"{where}: each message must be an object with string 'role' and 'content'")
            pairs.append((m["role"], m["content"]))
        return WorkItem(messages=tuple(pairs), output_len=out_len, kind=kind)
    raise WorkloadError(f"{where}: each request needs a non-empty 'prompt' or a 'messages' list")


def _trace_item(obj: dict[str, Any], index: int, where: str) -> WorkItem:
    """One trace entry: its prompt or messages as given, else `input_len` words made up (`trace.synthetic_prompt`)."""
    out_len = tr.length(obj, ("output_len", "output_length"), where)
    in_len = tr.length(obj, ("input_len", "input_length"), where)
    if obj.get("prompt") is not None or obj.get("messages") is not None:
        item = _item({k: v for k, v in obj.items() if k != "output_len"}, where)
        return WorkItem(item.prompt, item.messages, out_len, "trace")
    if in_len is None:
        raise WorkloadError(f"{where}: a trace entry needs a 'prompt', 'messages' or an input_len")
    return WorkItem(prompt=tr.synthetic_prompt(index, in_len, obj.get("hash_ids")), output_len=out_len, kind="trace",
                    input_len=in_len)


def _opt_float(header: dict[str, Any], key: str, where: str) -> float | None:
    v = header.get(key)
    if v is None:
        return None
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
        raise WorkloadError(f"{where}: header {key} must be a number ≥ 0")
    return float(v)


def _canon(item: WorkItem) -> list[Any]:
    return [item.prompt, [list(m) for m in item.messages], item.output_len]
