"""The `--instances` file format as README.md documents it: `check --help` points there, and
the README's example, run as written, gives the result the README says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.cli.main import main

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "Reading maskscope check"  # the heading, without its backticks


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### Reading `maskscope check`")
    return text[start : text.index("\n### ", start + 1)]


def test_check_help_points_to_the_readme_section_that_documents_the_format(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f'README.md, "{SECTION}"' in help_text
    assert "**The `--instances` file**" in _section()


def test_the_readme_example_reads_as_the_readme_says(capsys, tmp_path):
    section = _section()
    example = re.search(r"```jsonl\n(.*?)```", section, re.S)
    schema = re.search(r"Against `(.*?)` this\nreads `(PASS .*?)`", section, re.S)
    assert example and schema
    (tmp_path / "known.jsonl").write_text(example[1], encoding="utf-8")
    (tmp_path / "schema.json").write_text(" ".join(schema[1].split()), encoding="utf-8")
    code = main(["check", str(tmp_path / "schema.json"), "--instances",
                 str(tmp_path / "known.jsonl"), "--json"])  # fmt: skip
    line = json.loads(capsys.readouterr().out)
    assert code == 0
    said = re.search(r"(\d)/(\d) valid accepted, (\d)/(\d) invalid rejected", schema[2])
    assert said is not None
    measured = (line["valid_ok"], line["valid_n"], line["invalid_rej"], line["invalid_n"])
    assert measured == tuple(int(n) for n in said.groups())
