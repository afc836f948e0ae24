"""What-if branches and the unconstrained comparison in the window, on the real model."""

from __future__ import annotations

from app.compare.branches import ORIGINAL

RUN_TIMEOUT_MS = 120_000


def _fork(records):
    """The first step with a valid candidate other than the one chosen, and that token."""
    for i, r in enumerate(records):
        for c in r.top_raw:
            if c.valid and c.id != r.token_id:
                return i, c
    raise AssertionError("no step had a second valid candidate")


def test_forcing_a_valid_candidate_branches_the_run_from_that_step(
    qtbot, window, use_example, run_to_end
):
    use_example(window, "currency", max_tokens=40)
    run_to_end(window)
    original = window.current_run()
    index, other = _fork(original.records)
    branching = window.demo.branching
    with qtbot.waitSignal(branching.sig_branch, timeout=RUN_TIMEOUT_MS) as kept:
        assert branching.force(index, other.id)
    branch = kept.args[0]
    assert branch.fork_step == index and branch.token_id == other.id
    assert branching.branches.original is not None
    assert branching.branches.original.records == original.records
    ids = [r.token_id for r in branch.run.records]
    assert ids[:index] == [r.token_id for r in original.records[:index]]
    assert ids[index] == other.id
    assert branch.run.result.valid  # resampled under the grammar after the fork
    # The main views show the branch, and the schema and prompt were not touched.
    assert [r.token_id for r in window.step_chart.records] == ids
    assert window.schema_editor.text() == original.schema_text
    # The Branches pane lists it against the original, and opens either in the chart.
    view = window.demo.branches_view
    assert view.list.topLevelItemCount() == 2 and view.current_run() == branch.run
    view.select(ORIGINAL)
    with qtbot.waitSignal(view.sig_open):
        view.open_current()
    assert [r.token_id for r in window.step_chart.records] == [r.token_id for r in original.records]


def test_a_new_run_of_the_users_own_starts_a_new_set_of_branches(
    qtbot, window, use_example, run_to_end
):
    use_example(window, "currency", max_tokens=40)
    run_to_end(window)
    index, other = _fork(window.current_run().records)
    branching = window.demo.branching
    with qtbot.waitSignal(branching.sig_branch, timeout=RUN_TIMEOUT_MS):
        window.demo.explanation.sig_force.emit(index, other.id)  # a click on a valid row
    assert len(branching.branches) == 1
    with qtbot.waitSignal(branching.sig_original, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    assert len(branching.branches) == 0


def test_constrained_and_unconstrained_run_side_by_side(qtbot, window, use_example, model):
    use_example(window, "currency", max_tokens=30)
    branching = window.demo.branching
    with qtbot.waitSignal(branching.sig_pair, timeout=2 * RUN_TIMEOUT_MS) as pair:
        window.demo.unconstrained_action.trigger()
    constrained, free = pair.args
    assert constrained.result.valid
    assert all(r.n_valid == model.n_vocab for r in free.records)  # no mask at all
    assert not free.result.valid  # the model alone answers in prose, not JSON
    assert free.records[0].top_raw[0].id == constrained.records[0].top_raw[0].id
    pane = window.demo.side_by_side
    assert window.panes.dock("unconstrained").isVisible()
    assert "valid" in pane.constrained.verdict.text()
    # Afterwards the main views show the grammar's run again.
    qtbot.waitUntil(lambda: not window.controller.running)
    assert [r.token_id for r in window.step_chart.records] == [
        r.token_id for r in constrained.records
    ]
