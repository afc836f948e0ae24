"""Whatever run is on screen is named in the chart's title, over the output and in the
status bar (issue 27, item 2: after a what-if both showed Branch 1 with no sign of it)."""

from __future__ import annotations

RUN_TIMEOUT_MS = 120_000


def _named(window) -> list[str]:
    return [
        window.step_chart.bars_title.text(),
        window.output_view.subject.text(),
        window.status.subject_label.text(),
    ]


def _second_valid(records):
    for i, r in enumerate(records):
        for c in r.top_raw:
            if c.valid and c.id != r.token_id:
                return i, c
    raise AssertionError("no step had a second valid candidate")


def test_your_run_a_branch_and_the_original_are_each_named(qtbot, window, use_example, run_to_end):
    use_example(window, "currency", max_tokens=40)
    run_to_end(window)
    assert all("your run" in text for text in _named(window))

    index, other = _second_valid(window.current_run().records)
    branching = window.demo.branching
    with qtbot.waitSignal(branching.sig_branch, timeout=RUN_TIMEOUT_MS) as kept:
        assert branching.force(index, other.id)
    branch = kept.args[0]
    assert branch.name.startswith("Branch 1: step")
    assert all(branch.name in text for text in _named(window))

    window.demo.branches_view.sig_open.emit(branching.branches.original)  # "Open" on it
    assert all("the original run" in text for text in _named(window))
    window.demo.branches_view.sig_open.emit(branch.run)
    assert all(branch.name in text for text in _named(window))


def test_a_replayed_run_is_named_by_its_file(qtbot, window, use_example, run_to_end, tmp_path):
    use_example(window, "currency", max_tokens=10)
    run_to_end(window)
    path = tmp_path / "kept.json"
    assert window.save_run(str(path))
    assert window.open_run(str(path))
    assert all("the saved run kept.json" in text for text in _named(window))
