"""Every numeric option is checked as it is parsed: exit 2 and one line, before any model
loads; and the window's spin boxes accept the same values (one definition of each)."""

from __future__ import annotations

import pytest

from engine.cli.main import main

BASE = ["generate", "--schema", "unused.json", "--prompt", "x"]


@pytest.mark.parametrize(
    "option, value",
    [
        ("--top-k", "0"),
        ("--top-k", "-3"),
        ("--top-k", "51"),
        ("--max-tokens", "0"),
        ("--max-tokens", "-5"),
        ("--temperature", "-1"),
        ("--temperature", "nan"),
        ("--temperature", "inf"),
        ("--seed", "-1"),
        ("--n-ctx", "0"),
        ("--n-ctx", "-64"),
        ("--threads", "0"),
        ("--n-gpu-layers", "-2"),
        ("--max-tokens", "1.5"),
    ],
)
def test_out_of_range_option_exits_2_with_one_line(capsys, option, value):
    with pytest.raises(SystemExit) as exit_info:
        main([*BASE, option, value])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and option in err and value in err, err
    assert captured.out == ""


@pytest.mark.parametrize(
    "option, value", [("--top-k", "50"), ("--temperature", "0"), ("--max-tokens", "1")]
)
def test_bounds_themselves_are_accepted(capsys, option, value):
    # The schema file is missing: reaching that message means the option was accepted.
    assert main([*BASE, option, value]) == 2
    assert "schema file not found" in capsys.readouterr().err
