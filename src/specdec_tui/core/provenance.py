"""What a trial's figures were measured on, beyond its flags: the SGLang version and /server_info's setup, the
unit's hash and the environment variables in it that change behaviour, the workload and seed, the tool's version.
`provenance_differences` lists what differs between two trials, so a comparison says it before its numbers."""

from __future__ import annotations

import functools
import hashlib
import re
import shlex
from collections.abc import Sequence

from specdec_tui.core.session import Trial

# environment variables of a unit that change what SGLang (or the GPU stack under it) does
BEHAVIOUR_ENV = re.compile(r"^(SGLANG_|SGL_|CUDA_|NCCL_|TORCH_|PYTORCH_|TRITON_|FLASHINFER_|NVIDIA_|HF_HUB_OFFLINE$)")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)


def unit_env(unit_text: str) -> dict[str, str]:
    """The unit's Environment= assignments that change behaviour (secret-looking names left out)."""
    env: dict[str, str] = {}
    for line in unit_text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or key.strip() != "Environment":
            continue
        for word in _env_words(value):
            name, eq, val = word.partition("=")
            if eq and BEHAVIOUR_ENV.match(name) and not SECRET_NAME.search(name):
                env[name] = val
    return env


def behaviour_vars(pairs: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in pairs.items() if BEHAVIOUR_ENV.match(k) and not SECRET_NAME.search(k)}


def env_file_paths(unit_text: str) -> list[tuple[str, bool]]:
    """The unit's EnvironmentFile= paths in order, each with whether it is optional (a leading "-"); an empty
    assignment resets the list, as systemd does."""
    out: list[tuple[str, bool]] = []
    for line in unit_text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or key.strip() != "EnvironmentFile":
            continue
        value = value.strip()
        if not value:
            out.clear()
            continue
        out.append((value.lstrip("-"), value.startswith("-")))
    return out


def env_file_vars(text: str) -> dict[str, str]:
    """An environment file's assignments (systemd's format: KEY=VALUE lines, # and ; comments, shell quoting), the
    later winning; lines that are not assignments are skipped, as systemd skips them."""
    env: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        name, eq, value = line.partition("=")
        name = name.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        try:
            words = shlex.split(value.strip())
        except ValueError:
            words = [value.strip()]
        env[name] = " ".join(words)
    return env


@functools.lru_cache(maxsize=256)
def _env_words(value: str) -> tuple[str, ...]:
    """An Environment= line's words, once per distinct line (a 10,000-trial report split the same few lines with
    shlex 10,000 times, ~1.5 s of its export)."""
    try:
        return tuple(shlex.split(value))
    except ValueError:
        return tuple(value.split())


def unit_hash(unit_text: str) -> str:
    return hashlib.sha256(unit_text.encode()).hexdigest()[:12]


def provenance(trial: Trial) -> dict[str, str]:
    """Ordered name → value; absent facts are left out (older files, a server that did not say)."""
    out: dict[str, str] = {}
    if trial.facts is not None:
        if trial.facts.version:
            out["sglang"] = trial.facts.version
        if trial.facts.model:
            out["model"] = trial.facts.model
        out.update(trial.facts.setup)
    out["unit"] = f"#{unit_hash(trial.unit_text)}"
    # what the server ran with: the unit's Environment=, overridden by its EnvironmentFile= as read on the host
    for name, value in {**unit_env(trial.unit_text), **trial.file_env}.items():
        out[name] = value
    for path, state in trial.env_files.items():
        out[f"EnvironmentFile {path}"] = state
    wl = next((lv.workload for lv in trial.levels if lv.workload), None)
    p = trial.profile
    if wl:
        out["workload"] = f"{wl.get('name')} v{wl.get('version')} #{wl.get('hash')}"
        out["seed"] = str(wl.get("seed"))
    else:
        out["workload"] = p.workload or f"prompts {p.prompts}"
        out["seed"] = str(p.seed)
    if wl and wl.get("lengths"):  # input_len asked: counted in the server's tokens, or words and why
        out["lengths"] = str(wl["lengths"])
    if wl and wl.get("arrivals") == "trace":
        out["load"] = "trace replay" + (f" scaled to {p.rate:g}/s" if p.rate else " at its own times") + \
            (f", cut to its {wl['cut']}" if wl.get("cut") else ", whole")
    else:
        out["load"] = (f"{p.arrivals} {p.rate:g}/s" + (f" burst {p.burst:g}" if p.burst != 1 else "")) if p.rate else "closed loop"
    if trial.tool_version:
        out["specdec-tui"] = trial.tool_version
    return out


def provenance_line(trial: Trial) -> str:
    return " · ".join(f"{k} {v}" if not k.isupper() else f"{k}={v}" for k, v in provenance(trial).items())


def provenance_differences(a: Trial, b: Trial) -> list[str]:
    """"SGLANG_ENABLE_SPEC_V2: A 1, B unset" for each fact that differs; [] when they were measured alike."""
    pa, pb = provenance(a), provenance(b)
    names = list(dict.fromkeys([*pa, *pb]))
    return [f"{n}: A {pa.get(n, 'unset')}, B {pb.get(n, 'unset')}" for n in names if pa.get(n) != pb.get(n)]


def _ids_text(ids: list[int]) -> str:
    """"trial 4" or "trials 1–3, 7": runs of consecutive ids joined."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = [f"{r[0]}" if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs]
    return f"trial {ids[0]}" if len(ids) == 1 else "trials " + ", ".join(parts)


def provenance_groups(trials: Sequence[Trial]) -> list[str]:
    """"trials 1–5, 8 measured on: …" — one line per distinct provenance, in the order first seen: a session of
    many trials on one server read one long line a trial, each the same."""
    groups: dict[str, list[int]] = {}
    for t in trials:
        groups.setdefault(provenance_line(t), []).append(t.id)
    return [f"{_ids_text(ids)} measured on: {line}" for line, ids in groups.items()]
