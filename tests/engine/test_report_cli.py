"""`maskscope report` (no model), and `maskscope generate --save-run / --unconstrained`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine.cli.generate import generation_settings
from engine.cli.main import build_parser, main
from engine.model.paths import default_model_path
from engine.runs.provenance import UNCONSTRAINED
from engine.runs.saved import load_run

RUNS = Path(__file__).parents[1] / "data" / "runs"


def test_report_writes_one_html_page(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(RUNS / "currency-v2.json"), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert capsys.readouterr().out.strip() == f"wrote {out}"


def test_report_defaults_to_the_run_beside_it(tmp_path):
    run = tmp_path / "run.json"
    run.write_bytes((RUNS / "currency-v1.json").read_bytes())
    assert main(["report", str(run)]) == 0
    assert "Invoice currency (enum)" in (tmp_path / "run.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "content, reason",
    [(None, "run file not found"), ("{not json", "{run}: not JSON")],
)
def test_a_missing_or_corrupt_run_file_exits_2_with_one_line(tmp_path, capsys, content, reason):
    run = tmp_path / "run.json"
    if content is not None:
        run.write_text(content)
    out = tmp_path / "report.html"
    assert main(["report", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"maskscope: {reason.format(run=run)}") and err.count("\n") == 1
    assert not out.exists()


def test_unconstrained_sets_constrained_false():
    def settings(*argv: str):
        return generation_settings(build_parser().parse_args(["generate", *argv]), None)

    assert settings("--schema", "s.json").constrained is True
    assert settings("--schema", "s.json", "--unconstrained").constrained is False


@pytest.mark.slow
def test_generate_save_run_then_report(tmp_path, capsys):
    run, page = tmp_path / "run.json", tmp_path / "run.html"
    argv = ["generate", "--example", "currency", "--seed", "0", "--save-run", str(run)]
    assert main(argv) == 0
    assert f"saved the run to {run}" in capsys.readouterr().err
    saved = load_run(run)
    assert json.loads(run.read_text())["version"] == 2
    assert saved.result.valid and len(saved.records) == saved.result.n_tokens > 0
    made = saved.provenance
    model = default_model_path()
    assert made.model_file == model.name and made.model_bytes == model.stat().st_size
    assert made.model_sha256 == hashlib.sha256(model.read_bytes()).hexdigest()
    assert made.n_vocab == 262144 and made.settings["seed"] == 0
    assert main(["report", str(run), "--out", str(page)]) == 0
    assert made.model_sha256 in page.read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_unconstrained_run_has_no_mask_and_is_still_validated(tmp_path, capsys):
    run = tmp_path / "run.json"
    argv = ["generate", "--example", "currency", "--unconstrained", "--max-tokens", "4"]
    assert main([*argv, "--save-run", str(run)]) == 1  # cut off at 4 tokens: invalid
    assert "no grammar (unconstrained)" in capsys.readouterr().out
    saved = load_run(run)
    assert saved.provenance.compiler == saved.provenance.backend == UNCONSTRAINED
    assert all(r.n_valid == 262144 and r.valid_mass == pytest.approx(1) for r in saved.records)
    assert not saved.result.valid
