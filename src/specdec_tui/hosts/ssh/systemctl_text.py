"""What `systemctl show`, `systemctl restart` and `nvidia-smi` print on the remote host, read into the host's
types (pure functions: no connection, tested on their own and fuzzed)."""

from __future__ import annotations

from datetime import UTC, datetime

from specdec_tui.hosts.base import GpuFact, ServiceStatus


def parse_show(unit: str, text: str) -> ServiceStatus:
    """`systemctl show -p …` (key=value lines, --timestamp=unix gives '@<seconds>') → ServiceStatus."""
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def as_int(key: str) -> int | None:
        try:
            return int(props.get(key, ""))
        except ValueError:
            return None

    main_pid = as_int("MainPID")
    return ServiceStatus(
        unit=unit,
        active_state=props.get("ActiveState", "unknown"),
        sub_state=props.get("SubState", ""),
        main_pid=main_pid or None,
        exec_main_status=as_int("ExecMainStatus"),
        n_restarts=as_int("NRestarts") or 0,
        active_enter=_parse_timestamp(props.get("ActiveEnterTimestamp", "")),
        result=props.get("Result", ""),
    )


def _parse_timestamp(value: str) -> datetime | None:
    value = value.strip()
    if value.startswith("@"):
        try:
            return datetime.fromtimestamp(float(value[1:]), tz=UTC)
        except ValueError:
            return None
    return None


def job_result_from(stderr: str) -> str:
    """systemctl prints 'Job for X failed because …'; map it to systemd's job result words."""
    lowered = stderr.lower()
    for word in ("timeout", "canceled", "dependency"):
        if word in lowered:
            return word
    return "failed"


def parse_gpu_csv(text: str) -> list[GpuFact]:
    facts = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 5:
            continue
        try:
            facts.append(GpuFact(int(parts[0]), parts[1], float(parts[2]), float(parts[3]), float(parts[4])))
        except ValueError:
            continue
    return facts
