"""The fidelity table and --compare, on fixed lines and results."""

from __future__ import annotations

from engine.check.compare import differences
from engine.check.run import SchemaResult
from engine.check.summary import OTHER, SUITE, rows, table
from engine.check.verdict import InstanceVerdict


def _line(file, compiler="maskscope", backend="llguidance", group=None, **over):
    line = {"file": file, "compiler": compiler, "backend": backend, "compiled": True}
    line |= {"valid_ok": 2, "valid_n": 2, "invalid_rej": 1, "invalid_n": 1, "unexplained": 0}
    line |= {"ms": 10.0}
    if group is not None:
        line["group"] = group
    return line | over


LINES = [
    _line("a.json"),
    _line("b.json", valid_ok=1, ms=30.0),  # a valid instance refused
    _line("c.json", invalid_rej=0, unexplained=1, ms=20.0),
    _line("d.json", compiled=False, error="crashed: killed by SIGSEGV", valid_ok=0, ms=None),
    _line("e.json", compiled=False, error="no grammar", valid_ok=0, invalid_rej=0, ms=1.0),
    _line("s/type.json", group="g1"),
    _line("s/type.json", group="g2"),
    _line("s/enum.json", group="g1"),
    _line("s/enum.json", group="g2", invalid_rej=0),
    _line("a.json", compiler="llamacpp", backend="llamacpp", compiled=False, error="x", ms=2.0),
    _line("a.json", compiler="llamacpp", backend="llguidance"),
]


def test_rows_count_each_column():
    tables = rows(LINES)
    assert list(tables) == [OTHER, SUITE]
    ours, *theirs = tables[OTHER]
    # COMPILERS order, then BACKENDS order (llguidance first), not the alphabet
    assert [(r.compiler, r.backend) for r in theirs] == [
        ("llamacpp", "llguidance"),
        ("llamacpp", "llamacpp"),
    ]
    assert ours.compiler == "maskscope"
    assert (ours.schemas, ours.compiled, ours.passed) == (5, 3, 1)
    assert (ours.valid_ok, ours.valid_n) == (5, 6)  # compiled schemas only
    assert (ours.invalid_rej, ours.invalid_n) == (2, 3)
    assert (ours.unexplained, ours.crashes, ours.median_ms) == (1, 1, 20.0)
    assert ours.categories is None
    [suite] = tables[SUITE]
    assert suite.categories == (1, 2)  # type's groups all pass; one of enum's does not


def test_table_is_markdown_with_percentages():
    text = table(LINES)
    assert "| maskscope | llguidance | 5 | 60.0% (3/5) | 20.0% (1/5) |" in text
    assert "| 1 of 2 |" in text and text.index(OTHER) < text.index(SUITE)


def _result(compiler, backend, accepted, compiled=True):
    verdicts = tuple(
        InstanceVerdict(i, f"case {i}", "", valid, ok, "")
        for i, (valid, ok) in enumerate(zip((True, False), accepted, strict=True))
    )
    return SchemaResult("x.json", None, compiler, backend, compiled, None, 1.0, verdicts)


def test_compare_names_the_instances_where_verdicts_differ():
    text = differences(
        [
            _result("maskscope", "llguidance", (True, False)),
            _result("llamacpp", "llguidance", (True, True)),
            _result("llguidance", "llguidance", (True, False)),
        ]
    )
    assert "#2 invalid (case 1): accepted by llamacpp/llguidance; rejected by " in text
    assert "#1" not in text and "differ on 1 of 1" in text


def test_compare_says_when_all_agree():
    same = [_result("maskscope", "llguidance", (True, False))] * 2
    assert differences(same).startswith("Every compiler and backend gave the same verdicts")
