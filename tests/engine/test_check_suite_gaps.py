"""`maskscope check` on a suite built to hold each kind of finding, under the suite's own
compiler (llama.cpp's converter): an over-constraining grammar, a gap its report explains and
one it does not. The same instances under Maskscope's compiler (--compiler) all agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.main import main

SUITE = str(Path(__file__).resolve().parents[1] / "data" / "suites" / "three-gaps.suite.json")


@pytest.mark.slow
def test_each_kind_of_finding_under_the_suites_own_compiler(capsys):
    assert main(["check", SUITE]) == 1
    head, *found = capsys.readouterr().out.splitlines()
    assert "[llamacpp on llguidance]" in head and "1 unexplained" in head
    assert "1/2 valid accepted, 0/2 invalid rejected" in head
    over, explained, unexplained = (line.strip() for line in found)
    assert over.startswith("#2 valid, but rejected at character 26")  # the extra property
    assert explained.startswith("#3 invalid, accepted: $.properties.n: `multipleOf`")
    assert "unexplained" not in explained
    assert unexplained == "#4 invalid, accepted, unexplained: '2023-02-30' is not a 'date'"


@pytest.mark.slow
def test_the_command_lines_compiler_overrides_the_suites(capsys):
    assert main(["check", SUITE, "--compiler", "maskscope"]) == 0
    out = capsys.readouterr().out
    assert "[maskscope on llguidance]" in out
    assert "2/2 valid accepted, 2/2 invalid rejected" in out
