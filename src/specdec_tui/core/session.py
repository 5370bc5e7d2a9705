"""The session file: every trial of a tuning run (unit, flags, server facts, results), in TOML.

A session is what the operator of the seed kept in their head: step 1, 2, 3, 4 with their figures. It is saved
after every trial (atomically, so a crash never leaves a broken file) and can be reopened, compared and replayed."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import math
import secrets
import tomllib
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.redact import redact_flags, redact_strings, redact_text
from specdec_tui.core.regular_file import read_regular_text
from specdec_tui.core.results import LevelResult, ServerFacts, as_stored
from specdec_tui.core.session_cache import read_cache, write_cache
from specdec_tui.core.session_damage import toml_problem, trial_problem
from specdec_tui.core.session_merge import DiskStamp, disk_stamp, merge_into, same_session, session_lock
from specdec_tui.core.trial_writer import INTERRUPTED, interrupted

SCHEMA_VERSION = 1

TrialStatus = Literal["running", "ok", "failed", "cancelled"]


class SessionError(Exception):
    """A session file could not be read or written; the message names the file and what to do."""


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@functools.cache
def tool_version() -> str:
    """This specdec-tui's version, recorded with each new trial (provenance)."""
    try:
        return importlib.metadata.version("specdec-tui")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass(slots=True)
class Trial:
    """One configuration tried on the host and what it measured."""

    id: int
    unit_text: str
    flags: dict[str, str | None] = field(default_factory=dict)
    started_at: datetime = field(default_factory=utcnow)
    pushed_at: datetime | None = None
    status: TrialStatus = "running"
    failure: str = ""
    facts: ServerFacts | None = None
    profile: BenchProfile = field(default_factory=BenchProfile)
    levels: list[LevelResult] = field(default_factory=list)
    notes: str = ""
    label: str = ""  # short human name, e.g. "steps=3"; derived from the flag change when empty
    replay_of: int | None = None  # id of the trial this one re-ran
    sweep: dict[str, Any] = field(default_factory=dict)  # {"flag": ..., "value": ..., "repeat": n} for sweep trials
    host: str = ""  # the host it ran on ("" in files written before the panel could switch hosts: the session's)
    uid: str = field(default_factory=lambda: secrets.token_hex(8))  # which trial this is across writers ("" before)
    tool_version: str = field(default_factory=tool_version)  # the specdec-tui that measured it ("" in older files)
    file_env: dict[str, str] = field(default_factory=dict)  # behaviour-changing vars of its EnvironmentFile=s, read on the host
    env_files: dict[str, str] = field(default_factory=dict)  # each EnvironmentFile= path → "read" or why it was not
    writer: str = ""  # the process running it (`core.trial_writer`): a running trial whose writer ended is interrupted

    def level(self, concurrency: int) -> LevelResult | None:
        return next((lv for lv in self.levels if lv.concurrency == concurrency), None)

    @property
    def errors(self) -> int:
        return sum(lv.errors for lv in self.levels)


@dataclass(slots=True)
class Session:
    """Ordered trials on one host, with the profile they were measured by."""

    host: str = ""
    unit: str = ""
    profile: BenchProfile = field(default_factory=BenchProfile)
    trials: list[Trial] = field(default_factory=list)
    created: datetime = field(default_factory=utcnow)
    notes: str = ""
    disk_stamp: DiskStamp | None = field(default=None, compare=False, repr=False)  # the file as last read/written
    interrupted: list[int] = field(default_factory=list, compare=False, repr=False)  # read so now (core.trial_writer)

    def next_trial_id(self) -> int:
        return max((t.id for t in self.trials), default=0) + 1

    def trial(self, trial_id: int) -> Trial | None:
        return next((t for t in self.trials if t.id == trial_id), None)

    def add_read(self, trial: Trial, doc: dict[str, Any]) -> None:
        """Append a trial read from `doc`, noting it in `interrupted` when its file says running and it is not."""
        self.trials.append(trial)
        if doc.get("status") == "running" and trial.status != "running":
            self.interrupted.append(trial.id)

    def add(self, trial: Trial) -> Trial:
        """Add or replace (same id) a trial, keeping the order they were started in."""
        for i, existing in enumerate(self.trials):
            if existing.id == trial.id:
                self.trials[i] = trial
                return trial
        self.trials.append(trial)
        return trial


# ---------------------------------------------------------------------------------------------- writing


def _tidy(value: Any) -> Any:
    """Round floats to 6 significant digits and drop None (TOML has no null), recursively."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return as_stored(value)
    if isinstance(value, dict):
        return {str(k): _tidy(v) for k, v in value.items() if v is not None and _tidy(v) is not None}
    if isinstance(value, (list, tuple)):
        return [_tidy(v) for v in value if v is not None]
    return value


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """Tidied, with empty tables and lists left out: nested dicts are written inline, so a level reads as a row."""
    return {k: v for k, v in _tidy(data).items() if not (isinstance(v, (dict, list)) and not v)}


def _flags_value(flags: dict[str, str | None]) -> dict[str, Any]:
    return {name: True if value is None else str(value) for name, value in flags.items()}


def _trial_doc(trial: Trial) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": trial.id}
    if trial.uid:
        doc["uid"] = trial.uid
    if trial.label:
        doc["label"] = trial.label
    doc["status"] = trial.status
    if trial.writer and trial.status == "running":
        doc["writer"] = trial.writer
    if trial.host:
        doc["host"] = trial.host
    doc["started_at"] = trial.started_at
    if trial.pushed_at is not None:
        doc["pushed_at"] = trial.pushed_at
    if trial.failure:
        doc["failure"] = redact_text(trial.failure)
    if trial.notes:
        doc["notes"] = trial.notes
    if trial.replay_of is not None:
        doc["replay_of"] = trial.replay_of
    doc["unit_text"] = redact_text(trial.unit_text)
    if trial.levels:  # one inline table per level: a level reads as a row
        doc["levels"] = [_compact(lv.to_dict()) for lv in trial.levels]
    doc["flags"] = _flags_value(redact_flags(trial.flags))  # API keys never reach the file
    if trial.sweep:  # a tune's tag holds the unit that ran before it: its keys are masked as unit_text's are
        doc["sweep"] = _tidy(redact_strings(trial.sweep))
    doc["profile"] = _tidy(asdict(trial.profile))
    if trial.facts is not None:
        doc["facts"] = _compact(trial.facts.to_dict())
    if trial.tool_version:
        doc["tool_version"] = trial.tool_version
    if trial.env_files:
        doc["env_files"], doc["file_env"] = dict(trial.env_files), redact_strings(dict(trial.file_env))
    return doc


def session_doc(session: Session) -> dict[str, Any]:
    """The document the TOML holds (and its cache, `core.session_cache`)."""
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "created": session.created,
                           "host": session.host, "unit": session.unit}
    if session.notes:
        doc["notes"] = session.notes
    doc["profile"] = _tidy(asdict(session.profile))
    doc["trials"] = [_trial_doc(trial) for trial in session.trials]
    return doc


def dumps_session(session: Session, doc: dict[str, Any] | None = None) -> str:
    """TOML with tomli-w (fast, correct quoting); read back with the stdlib's tomllib."""
    import tomli_w  # the first save comes after the panel's first frame; a start only reads sessions

    doc = doc if doc is not None else session_doc(session)
    header = "# specdec-tui session: one [[trials]] entry per configuration tried\n"
    # Multi-line strings keep a unit readable in the file, but tomli-w writes the CR of a CRLF there raw and a
    # TOML reader turns a raw CRLF into LF (hukkin/tomli-w#81): a text with a CR is written escaped instead.
    return header + tomli_w.dumps(doc, multiline_strings=not _has_carriage_return(doc))


def _has_carriage_return(value: object) -> bool:
    if isinstance(value, str):
        return "\r" in value
    if isinstance(value, dict):
        return any(_has_carriage_return(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_carriage_return(v) for v in value)
    return False


def save_session(session: Session, path: Path | str) -> None:
    """Write the session atomically (temp file + fsync + rename), under the file's lock, first merging the
    trials other writers saved since this one last read or wrote it (`core.session_merge`)."""
    path = Path(path)
    try:
        with session_lock(path):
            merged_from_disk(session, path)
            doc = session_doc(session)
            write_atomic(path, dumps_session(session, doc))
            session.disk_stamp = disk_stamp(path)
            write_cache(path, doc, session.disk_stamp)
    except OSError as err:
        raise SessionError(f"could not save session {path}: {err.strerror or err} — check the directory exists and is writable") from err


def merge_from_disk(session: Session, path: Path) -> bool:
    """Under the file's lock (`session_merge.session_lock`): take in what other writers saved to `path` since
    `session` last read or wrote it; True when the file held trials this writer did not have."""
    return merged_from_disk(session, path)[0]


def merged_from_disk(session: Session, path: Path) -> tuple[bool, Session | None]:
    """`merge_from_disk`, and the session the file held (None: not read, or not a session this one can take in)."""
    stamp = disk_stamp(path)
    if stamp is None or stamp == session.disk_stamp:
        return False, None
    before = {(t.uid, t.id) for t in session.trials}
    try:
        disk = load_session(path)
    except SessionError:
        return False, None
    if not same_session(session, disk):
        return False, None
    merge_into(session, disk)
    return any((t.uid, t.id) not in before for t in session.trials), disk


# ---------------------------------------------------------------------------------------------- reading


_PROFILE_FIELDS = frozenset(f.name for f in fields(BenchProfile))


def profile_from_doc(d: Any, where: str, last: list[tuple[dict[str, Any], BenchProfile]] | None = None) -> BenchProfile:
    """The profile a table holds. `last`: the previous table read and its profile (frozen, so shared): the
    trials of a session mostly ran with one profile, and 10,000 of them were 10,000 profiles built."""
    if not isinstance(d, dict):
        return BenchProfile()
    if last and last[0][0] == d:
        return last[0][1]
    profile = _build_profile(d, where)
    if last is not None:
        last[:] = [(d, profile)]
    return profile


def _build_profile(d: dict[str, Any], where: str) -> BenchProfile:
    known = _PROFILE_FIELDS
    kw = {k: v for k, v in d.items() if k in known}
    if "concurrency" in kw:
        kw["concurrency"] = tuple(int(c) for c in kw["concurrency"])
    if "slo" in kw:
        kw["slo"] = tuple(str(s) for s in kw["slo"] or ())
    try:
        return BenchProfile(**kw)
    except TypeError as err:
        raise SessionError(f"{where}: bad profile: {err}") from err


def _as_datetime(value: Any, where: str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    raise SessionError(f"{where}: expected a date-time, found {value!r}")


def trial_from_doc(d: Any, where: str, last_profile: list[tuple[dict[str, Any], BenchProfile]] | None = None) -> Trial:
    if not isinstance(d, dict):
        raise SessionError(f"{where}: a [[trials]] entry must be a table")
    try:
        trial = _built_trial(d, where, last_profile)
    except (KeyError, TypeError, ValueError, AttributeError) as err:  # said as the part at fault, never Python's words
        raise SessionError(f"{where}: malformed trial: {trial_problem(d, lambda part: _built_trial(part, where, None))}") from err
    if trial.status not in ("running", "ok", "failed", "cancelled"):
        raise SessionError(f"{where}: unknown status {trial.status!r}")
    if interrupted(trial.status, writer := str(d.get("writer", ""))):  # its process ended: its levels are kept
        trial.status, trial.failure = "cancelled", INTERRUPTED
    elif trial.status == "running":
        trial.writer = writer
    return trial


def _built_trial(d: dict[str, Any], where: str, last_profile: list[tuple[dict[str, Any], BenchProfile]] | None) -> Trial:
    return Trial(
        id=int(d["id"]),
        unit_text=str(d.get("unit_text", "")),
        flags={str(k): (None if v is True else str(v)) for k, v in dict(d.get("flags", {})).items()},
        started_at=_as_datetime(d.get("started_at", utcnow()), where),
        pushed_at=_as_datetime(d["pushed_at"], where) if "pushed_at" in d else None,
        status=str(d.get("status", "ok")),  # type: ignore[arg-type]
        failure=str(d.get("failure", "")),
        facts=ServerFacts.from_dict(dict(d["facts"])) if isinstance(d.get("facts"), dict) else None,
        profile=profile_from_doc(d.get("profile"), where, last_profile),
        levels=[LevelResult.from_dict(dict(lv)) for lv in d.get("levels", [])],
        notes=str(d.get("notes", "")),
        label=str(d.get("label", "")),
        replay_of=int(d["replay_of"]) if "replay_of" in d else None,
        sweep=dict(d.get("sweep", {})),
        host=str(d.get("host", "")),
        uid=str(d.get("uid", "")),
        tool_version=str(d.get("tool_version", "")),
        file_env={str(k): str(v) for k, v in dict(d.get("file_env", {})).items()},
        env_files={str(k): str(v) for k, v in dict(d.get("env_files", {})).items()},
    )


def loads_session(text: str, source: str = "<session>") -> Session:
    """Parse session TOML. Raises SessionError (only) with the file name and what is wrong."""
    return session_from_doc(parse_toml(text, source), source)


def parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)  # stdlib: ~10x faster than tomlkit on a long session
    except Exception as err:  # hostile input raises more than TOMLDecodeError (RecursionError, long numbers)
        raise SessionError(f"{source}: {toml_problem(err, text)}") from err


def session_from_doc(doc: dict[str, Any], source: str) -> Session:
    """The session a parsed document holds (from the TOML or its cache), checked the same way."""
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError(f"{source}: not a specdec-tui session (no integer schema_version)")
    if version > SCHEMA_VERSION:
        raise SessionError(
            f"{source}: written by a newer specdec-tui (session schema {version}, this one reads up to "
            f"{SCHEMA_VERSION}) — upgrade specdec-tui to open it"
        )
    if version < 1:
        raise SessionError(
            f"{source}: session schema_version {version} was never written by specdec-tui (versions start at 1) "
            "— the file is damaged or not a session; restore it from a backup"
        )
    trials_raw = doc.get("trials", [])
    if not isinstance(trials_raw, list):
        raise SessionError(f"{source}: `trials` must be an array of tables")
    try:
        created = _as_datetime(doc.get("created", utcnow()), source)
        session = Session(
            host=str(doc.get("host", "")),
            unit=str(doc.get("unit", "")),
            profile=profile_from_doc(doc.get("profile"), source),
            created=created,
            notes=str(doc.get("notes", "")),
        )
    except (TypeError, ValueError) as err:
        raise SessionError(f"{source}: malformed session header: {err}") from err
    last_profile: list[tuple[dict[str, Any], BenchProfile]] = []
    for i, raw in enumerate(trials_raw, start=1):
        session.add_read(trial_from_doc(raw, f"{source}: trial #{i}", last_profile), raw)
    return session


def load_session(path: Path | str) -> Session:
    path = Path(path)
    stamp = disk_stamp(path)  # before the read: a file replaced meanwhile is merged at the next save
    if (cached := read_cache(path, stamp)) is not None:
        with contextlib.suppress(SessionError):  # a cache that does not read as a session: the TOML decides
            session = session_from_doc(cached, str(path))
            session.disk_stamp = stamp
            return session
    try:
        text = read_regular_text(path)
    except FileNotFoundError as err:
        raise SessionError(f"{path}: no such session file") from err
    except UnicodeDecodeError as err:
        raise SessionError(f"{path}: not a text file") from err
    except OSError as err:
        raise SessionError(f"{path}: cannot read: {err.strerror or err}") from err
    doc = parse_toml(text, str(path))
    session = session_from_doc(doc, str(path))
    session.disk_stamp = stamp
    write_cache(path, doc, stamp)  # the next read of this file is fast
    return session
