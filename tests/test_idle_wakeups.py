"""An idle panel stays idle: the health pane redraws nothing when a journal line or a health probe changes
nothing it shows (each redraw of a Static reflows the whole screen)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import ServiceStatus
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.ui.widgets.health_pane import SECTIONS, HealthPane


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield HealthPane()


# upstream: python/sglang/srt/utils/common.py set_uvicorn_logging_configs (the access formatter,
# '[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'): what each health probe
# leaves in the server's journal
ACCESS = '[2026-12-03 11:31:{:02d}] INFO:     127.0.0.1:48120 - "GET /health HTTP/1.1" 200 OK'


async def test_the_health_pane_redraws_nothing_when_a_probe_or_an_access_line_changes_nothing_shown() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        status = ServiceStatus(unit="sglang-demo.service", active_state="active", sub_state="running", main_pid=4242)
        pane.update_health(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, detail="serving",
                                          checked_at=1.0))
        first = LogStats().feed([ACCESS.format(0)])
        assert first.last_timestamp is not None
        pane.update_log_stats(first)
        await pilot.pause(0.3)
        shown = {name: pane.section_text(name) for name in SECTIONS}

        refreshed: list[str] = []
        for name in SECTIONS:
            static = pane.query_one(f"#health-{name}", Static)
            real = static.refresh
            static.refresh = lambda *a, _real=real, _name=name, **k: (refreshed.append(_name), _real(*a, **k))[1]  # type: ignore[method-assign]

        for second in range(1, 4):  # three probes, each the same view, each leaving an access line
            pane.update_health(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, detail="serving",
                                              checked_at=1.0 + 5 * second))
            stats = LogStats().feed([ACCESS.format(5 * second)])
            assert stats != first  # the stats did change (the last line's time), just nothing the pane shows
            pane.update_log_stats(stats)
            await pilot.pause(0.3)
        assert refreshed == []
        assert {name: pane.section_text(name) for name in SECTIONS} == shown

        pane.update_health(HealthSnapshot(state=HealthState.FAILING, status=None, http_ok=False, detail="exit 1"))
        await pilot.pause()
        assert "FAILING — exit 1" in pane.section_text("badge") and "badge" in refreshed
