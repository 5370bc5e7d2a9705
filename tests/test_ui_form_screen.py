"""The panel's two forms share one shape (issue 34): `ui.screens.form_screen.FormScreen` composes the heading,
the rows, the error line and the buttons, reads every field of the form's dataclass by its widget's id, says a
refusal on the error line and keeps what the form held when it was left. Each form only names its fields and
the loop's rule that turns them into a result."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input, Select, Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.bench_form import BenchLoadForm
from specdec_tui.loop.sweep_form import SweepForm
from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
from specdec_tui.ui.screens.form_screen import FormScreen
from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen


class Host(App[None]):
    def __init__(self, form: FormScreen[object, object]) -> None:
        super().__init__()
        self.form = form
        self.results: list[object] = []

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.push_screen(self.form, self.results.append)


async def test_the_load_form_reads_each_field_refuses_in_words_and_keeps_what_was_left() -> None:
    form = BenchFormScreen(BenchProfile(workload="code", seed=3))
    app = Host(form)  # type: ignore[arg-type]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.focused is form.query_one("#bench-rate")
        form.query_one("#bench-arrivals", Select).value = "poisson"
        await pilot.press(*"fast", "enter")
        await pilot.pause()
        assert "Rate: requests per second" in str(form.query_one("#bench-form-error", Static).render())
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]
    shown = BenchLoadForm.of(form.profile)  # what the form opened with; the user changed arrivals and rate
    assert form.left == BenchLoadForm(workload="code", seed="3", arrivals="poisson", rate="fast",
                                      requests=shown.requests, slo=shown.slo)


async def test_the_sweep_form_reads_a_field_it_does_not_show_from_the_active_host() -> None:
    form = SweepFormScreen(BenchProfile(concurrency=(1, 4)), values="1..3", repeats=1, active="demo")
    app = Host(form)  # type: ignore[arg-type]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not form.query("#sweep-hosts")  # one host configured: no hosts row
        form.query_one("#sweep-repeats", Input).value = "2"
        form.submit()
        await pilot.pause()
    assert form.left == SweepForm("speculative-num-steps", "1..3", "2", "c1", "demo")
    (plan,) = app.results
    assert plan is not None and getattr(plan, "repeats", None) == 2


async def test_a_pasted_screenful_is_named_in_short_and_the_buttons_stay_on_screen() -> None:
    """168 KB of numbers pasted into Runs per value: the refusal quoted all of it, a screen of digits that pushed
    the form's buttons out of sight. The value is cut in the words; what to write is still said, whole."""
    from textual.widgets import Button

    from specdec_tui.ui.textual_compat import full_frame_text

    form = SweepFormScreen(BenchProfile(concurrency=(1, 4)), values="1..3", repeats=1, active="demo")
    app = Host(form)  # type: ignore[arg-type]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form.query_one("#sweep-repeats", Input).value = ",".join(str(i) for i in range(30_000))
        form.submit()
        await pilot.pause()
        error = str(form.query_one("#sweep-form-error", Static).render())
        assert "is not a whole number of runs per value" in error and "…" in error and len(error) < 300, error
        assert form.query_one("#start", Button).region.bottom <= 24
        assert "Start" in full_frame_text(app)
