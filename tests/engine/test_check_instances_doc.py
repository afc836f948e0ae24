"""The `--instances` file format as docs/workbench.md documents it: `check --help` points
there, and the page's example, run as written, gives the result the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.cli.main import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "workbench.md"
SECTION = "Reading maskscope check"  # the heading, without its backticks


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("### Reading `maskscope check`")
    end = re.search(r"\n#{1,3} ", text[start + 1 :])  # the next heading of its level or above
    return text[start : start + 1 + end.start()] if end else text[start:]


def test_check_help_points_to_the_docs_section_that_documents_the_format(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f'docs/workbench.md, "{SECTION}"' in help_text
    assert "**The `--instances` file**" in _section()


def test_the_docs_example_reads_as_the_docs_say(capsys, tmp_path):
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
