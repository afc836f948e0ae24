"""Compare with unconstrained (issue 27, item 5): the run with the grammar is the
demonstration and keeps the chosen speed; the run without it decodes at full speed (at
0.5 s a token, 256 tokens took two minutes), and the run with the grammar is shown as soon
as it ends, not only once both have."""

from __future__ import annotations

RUN_TIMEOUT_MS = 120_000


def test_the_unconstrained_half_runs_unpaced_beside_the_finished_half(qtbot, window, use_example):
    use_example(window, "currency", max_tokens=6)
    pacing = window.demo.pacing
    pacing.set_delay(0.25)
    second_half: list[bool] = []
    seen: list[tuple[float, str]] = []

    def second_half_started(text: str) -> None:
        second_half.append("without the grammar" in text)

    def step_made(_record: object) -> None:  # a step of the run without the grammar
        if second_half and second_half[-1] and not seen:
            seen.append((pacing.pacer.delay_s, window.demo.side_by_side.constrained.text))

    window.demo.branching.sig_pair_state.connect(second_half_started)
    window.controller.sig_step.connect(step_made)
    with qtbot.waitSignal(window.demo.branching.sig_pair, timeout=RUN_TIMEOUT_MS) as pair:
        assert window.demo.branching.compare_unconstrained()
    constrained, _free = pair.args
    assert seen == [(0.0, constrained.result.text)]  # unpaced, and the first half shown
    assert constrained.result.text
    assert pacing.pacer.delay_s == 0.25  # the next run keeps the chosen speed


def test_an_edit_after_the_comparison_marks_it_out_of_date(qtbot, window, use_example):
    # issue 27, item 7: the Unconstrained pane kept an old comparison with no word.
    use_example(window, "currency", max_tokens=4)
    with qtbot.waitSignal(window.demo.branching.sig_pair, timeout=RUN_TIMEOUT_MS):
        assert window.demo.branching.compare_unconstrained()
    view = window.demo.side_by_side
    assert view.stale.isHidden()
    window.prompt_pane.editor.appendPlainText("Answer in French.")
    qtbot.waitUntil(lambda: not view.stale.isHidden(), timeout=3000)
    assert "prompt changed" in view.stale.toolTip()
    window.prompt_pane.editor.undo()
    qtbot.waitUntil(view.stale.isHidden, timeout=3000)
