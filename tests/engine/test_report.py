"""The HTML report of a saved run: every text escaped, nothing that runs or loads, the charts
and the step table with each step's arithmetic, and old runs too."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from engine.explain.marks import Mark, mark
from engine.explain.renormalise import explain
from engine.records import Disagreement, FinishReason, RunResult, ValidationIssue
from engine.report import render_report
from engine.report.charts import PLOT_H, _x_ticks
from engine.report.escape import escape  # html.escape, and { } as references
from engine.runs.saved import SavedRun, load_run

RUNS = Path(__file__).parents[1] / "data" / "runs"
PAYLOAD = "<script>document.body.setAttribute('data-pwned','1')</script></textarea>{{\"x\"}}"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@pytest.fixture(scope="module")
def run() -> SavedRun:
    return load_run(RUNS / "currency-v2.json")


def hostile(run: SavedRun) -> SavedRun:
    """The run with the payload in every text the user or the model wrote."""
    candidate = dataclasses.replace(run.records[6].top_raw[0], text=PAYLOAD)
    step = dataclasses.replace(
        run.records[6], token_text=PAYLOAD, token_piece=PAYLOAD, top_raw=(candidate,)
    )
    records = (*run.records[:6], step, *run.records[7:])
    result = dataclasses.replace(
        run.result,
        text="".join(r.token_piece for r in records),
        errors=(ValidationIssue(f"$.{PAYLOAD}", PAYLOAD),),
        message=PAYLOAD,
    )
    provenance = dataclasses.replace(run.provenance, model_file=PAYLOAD)
    schema = json.dumps({"title": PAYLOAD, "description": PAYLOAD})
    return SavedRun(schema, PAYLOAD, PAYLOAD, records, result, provenance)


def test_user_and_model_text_appears_only_escaped(run):
    page = render_report(hostile(run))
    assert PAYLOAD not in page
    assert "<script" not in page.lower() and "</textarea" not in page.lower()
    # The escaped payload, whole: `{{` and the quotes survive as text, nothing is dropped.
    assert page.count(escape(PAYLOAD)) >= 14  # title, output, prompt, tokens, errors, model
    assert escape(json.dumps(PAYLOAD)) in page  # the schema's text as written


def test_the_page_forbids_scripts_and_loads_nothing(run):
    page = render_report(run)
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP};' in page
    assert re.findall(r'(?:src|href)\s*=\s*"(?!#step-)', page) == []
    assert "<script" not in page.lower() and "@import" not in page and "url(" not in page


def test_each_step_is_a_row_that_opens_on_its_arithmetic(run):
    page = render_report(run)
    rows = re.findall(r'<details class="step" id="step-(\d+)">(.*?)</details>', page, re.S)
    assert [int(n) for n, _ in rows] == list(range(1, len(run.records) + 1))
    for (_, row), record in zip(rows, run.records, strict=True):
        assert f'class="mark {mark(record).value}"' in row
        why = explain(record, 262144)
        assert escape(why.sum_written()) in row
        for d in why.divisions:
            assert escape(d.written()) in row
        assert f"{record.n_valid:,} of 262,144 vocabulary tokens" in row
    usd = rows[6][1]  # the seed's example: after {"currency": " the model's own numbers
    assert "0.598 (USD) + 0.269 (EUR)" in usd and "0.598 / 0.907 = 0.659" in usd


def test_the_marks_are_drawn_and_explained(run):
    page = render_report(run)
    marks = [mark(r) for r in run.records]
    assert Mark.FORCED in marks and Mark.OVERRULED in marks  # the fixture has both
    bars = re.findall(r'<rect class="bar (\w+)"', page)
    dots = re.findall(r'<circle class="dot (\w+)"', page)
    assert bars == dots == [m.value for m in marks]
    for m in (Mark.FORCED, Mark.OVERRULED):
        assert escape(m.label) in page
    assert re.findall(r'<a class="t (\w+)"', page) == [m.value for m in marks]


def test_bar_heights_are_the_valid_mass(run):
    page = render_report(run)
    heights = [float(h) for h in re.findall(r'<rect class="bar \w+"[^>]*height="([\d.]+)"', page)]
    for h, r in zip(heights, run.records, strict=True):
        assert h == pytest.approx(max(3.0, PLOT_H * r.valid_mass), abs=0.06)


def test_a_version_1_run_reports_without_provenance():
    old = load_run(RUNS / "currency-v1.json")
    page = render_report(old)
    assert "saved before Maskscope recorded provenance" in page
    assert "of the vocabulary" in page and "vocabulary tokens" not in page
    assert "<th>top k</th><td>5</td>" in page  # the settings from the result


def test_a_run_with_no_steps_still_reports(run):
    result = RunResult("", FinishReason.ERROR, 0, message="the prompt is too long")
    page = render_report(SavedRun("{}", "p", "m.gguf", (), result))
    assert "ended before its first step" in page and "the prompt is too long" in page
    assert "<svg" not in page


def test_step_labels_thin_out_on_long_runs():
    assert _x_ticks(10) == list(range(1, 11))
    assert _x_ticks(256) == [1, *range(20, 257, 20)]


def test_an_unconstrained_run_shows_no_mass_chart_or_marks(run):
    settings = {**run.result.settings, "constrained": False}
    free = dataclasses.replace(run, result=dataclasses.replace(run.result, settings=settings))
    page = render_report(free)
    assert "no grammar: unconstrained" in page and "every token of the vocabulary" in page
    assert "<rect" not in page and "<circle" in page  # the entropy chart only
    assert "shade: how little" not in page


def test_a_cross_checked_step_says_how_the_masks_disagree(run):
    d = Disagreement("llguidance", "llamacpp", (), (), 3, 0)
    step = dataclasses.replace(run.records[0], disagreement=d)
    page = render_report(dataclasses.replace(run, records=(step, *run.records[1:])))
    row = page[page.index('id="step-1"') : page.index('id="step-2"')]
    assert "Cross-check (backends)" in row
    assert "3 allowed only by llguidance, 0 only by llamacpp" in row


def test_tokens_no_font_is_likely_to_draw_show_their_code_points(run):
    """Private use reads as its code points; other scripts are the browser's to draw, with
    their code points on hover; a leading combining mark gets a dotted circle."""
    cands = (
        dataclasses.replace(run.records[6].top_raw[0], text="\u094d\u092d"),
        dataclasses.replace(run.records[6].top_raw[1], text="\u0301"),
        dataclasses.replace(run.records[6].top_raw[2], text="␣\u092d", piece=" \u092d"),
    )
    step = dataclasses.replace(
        run.records[6], token_text="\ue000", token_piece="\ue000", top_raw=cands
    )
    records = (*run.records[:6], step, *run.records[7:])
    result = dataclasses.replace(run.result, text="".join(r.token_piece for r in records))
    page = render_report(dataclasses.replace(run, records=records, result=result))
    row = re.findall(r'<details class="step" id="step-7">(.*?)</details>', page, re.S)[0]
    assert '<span class="tok">U+E000</span>' in row
    assert '<span class="tok" title="U+094D U+092D">\u25cc\u094d\u092d</span>' in row
    assert '<span class="tok" title="U+0301">\u25cc\u0301</span>' in row
    assert '<span class="tok" title="U+0020 U+092D">␣\u092d</span>' in row  # the piece's
    assert 'title="step 7: U+E000 · valid mass' in page  # the output's hover text
    assert "<title>step 7: U+E000 · " in page  # the charts'
