"""One saved run as one self-contained HTML page: it opens in any browser, offline.

Nothing in the page runs or loads: its Content-Security-Policy forbids scripts and every
remote load, the charts are inline SVG, and every text that came from the user or the model
(schema, prompt, output, tokens, messages, file names) is escaped.
"""

from __future__ import annotations

import json

from engine.explain.marks import Mark, mark
from engine.records import RunResult
from engine.report.charts import entropy_chart, mass_chart
from engine.report.escape import escape
from engine.report.output import LEGEND, output_tokens
from engine.report.steps import step_table, token
from engine.report.style import CSS
from engine.runs.saved import SavedRun, run_settings

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
MASS_TITLE = "Valid mass per step"
MASS_PLAIN = "the share of the model's preference that the rules allowed"
ENTROPY_TITLE = "Raw entropy per step"
ENTROPY_PLAIN = "how unsure the model was before the rules applied, in nats"
UNMASKED = (
    '<p class="stats">No grammar: every token of the vocabulary was allowed at every step, '
    "so the model alone chose each one (valid mass 1 throughout).</p>"
)


def render_report(run: SavedRun) -> str:
    """The run as a complete HTML document."""
    title = f"Maskscope run: {_schema_title(run.schema_text) or run.model}"
    body = "".join(
        (
            _header(run),
            _inputs(run),
            _output(run),
            _charts(run),
            _steps(run),
            _provenance(run),
            "<footer>Made by Maskscope from a saved run. This page runs no script and loads "
            "nothing: it reads the same offline.</footer>",
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def _schema_title(schema_text: str) -> str:
    try:
        schema = json.loads(schema_text)
    except ValueError:
        return ""
    title = schema.get("title") if isinstance(schema, dict) else None
    return title if isinstance(title, str) else ""


def _header(run: SavedRun) -> str:
    result = run.result
    badge = (
        '<span class="badge valid">valid</span>'
        if result.valid
        else '<span class="badge invalid">invalid</span>'
    )
    unconstrained = (
        ' <span class="badge plain">no grammar: unconstrained</span>'
        if not run_settings(run).constrained
        else ""
    )
    title = _schema_title(run.schema_text)
    sub = [f"model {run.model}", f"{result.n_tokens} tokens", result.finish_reason.label]
    if run.provenance is not None:
        sub.append(f"made {run.provenance.made_at}")
    heading = f"Maskscope run: {title}" if title else "Maskscope run"
    return (
        f"<header><h1>{escape(heading)} {badge}{unconstrained}</h1>"
        f'<p class="sub">{escape(" · ".join(sub))}</p>{_verdict(result)}</header>'
    )


def _verdict(result: RunResult) -> str:
    if result.valid:
        lines = ["<p><strong>Valid against the schema.</strong></p>"]
    elif result.parse_error:
        lines = [f"<p><strong>Invalid: not JSON</strong> ({escape(result.parse_error)})</p>"]
    elif result.errors:
        issues = "".join(
            f"<li><code>{escape(e.path)}</code>: {escape(e.message)}</li>" for e in result.errors
        )
        lines = [f"<p><strong>Invalid against the schema:</strong></p><ul>{issues}</ul>"]
    else:
        lines = ["<p><strong>Invalid: the run did not finish.</strong></p>"]
    lines.append(f"<p>Finished: {escape(result.finish_reason.label)}.</p>")
    for note in (result.message, result.unchecked_note):
        if note:
            lines.append(f'<p class="note">{escape(note)}</p>')
    cls = "verdict" if result.valid else "verdict invalid"
    return f'<div class="{cls}">{"".join(lines)}</div>'


def _inputs(run: SavedRun) -> str:
    return (
        '<h2>Prompt and schema</h2><div class="inputs">'
        f'<div><h3>Prompt</h3><pre class="scroll">{escape(run.prompt)}</pre></div>'
        f'<div><h3>JSON Schema</h3><pre class="scroll">{escape(run.schema_text)}</pre></div>'
        "</div>"
    )


def _output(run: SavedRun) -> str:
    return (
        "<h2>Output</h2>"
        '<p class="sub">Each token links to its step below; hover for its numbers.</p>'
        f"{output_tokens(run.records, run.result.text)}{LEGEND if _masked(run) else ''}"
    )


def _masked(run: SavedRun) -> bool:
    """Whether a grammar masked the run: an unconstrained one has no marks or dips."""
    return run_settings(run).constrained


def _charts(run: SavedRun) -> str:
    if not run.records:
        return '<h2>Charts</h2><p class="note">The run ended before its first step.</p>'
    legend = (
        '<ul class="legend">'
        '<li><span class="swatch free"></span>chosen by the model</li>'
        f'<li><span class="swatch forced"></span>{escape(Mark.FORCED.label)}</li>'
        f'<li><span class="swatch overruled"></span>{escape(Mark.OVERRULED.label)}</li>'
        "<li>labels: the deepest dips, with the token written (and the one the model wanted)"
        "</li></ul>"
    )
    entropy = (
        f"<figure><figcaption>{ENTROPY_TITLE} <span>· {escape(ENTROPY_PLAIN)}</span>"
        f"</figcaption>{entropy_chart(run.records)}</figure>"
    )
    if not _masked(run):
        return f"<h2>Step by step</h2>{UNMASKED}{entropy}"
    return (
        f"<h2>Step by step</h2>{_stats(run)}"
        f"<figure><figcaption>{MASS_TITLE} <span>· {escape(MASS_PLAIN)}</span></figcaption>"
        f"{mass_chart(run.records)}</figure>{entropy}{legend}"
    )


def _stats(run: SavedRun) -> str:
    """What a presenter says first: how often the grammar wrote or overruled, and the
    lowest point."""
    marks = [mark(r) for r in run.records]
    low = min(run.records, key=lambda r: r.valid_mass)
    return (
        f'<p class="stats">{len(marks)} steps: <b>{marks.count(Mark.FORCED)}</b> forced by the '
        f"grammar, <b>{marks.count(Mark.OVERRULED)}</b> where it overruled the model's top "
        f"choice; the lowest valid mass is <b>{low.valid_mass:.3g}</b> at step {low.step + 1} "
        f"({token(low.token_text, low.token_piece)}).</p>"
    )


def _steps(run: SavedRun) -> str:
    if not run.records:
        return ""
    n_vocab = run.provenance.n_vocab if run.provenance else None
    return (
        "<h2>Every step</h2>"
        '<p class="sub">P: the model\'s probability before masking. P′: after masking, '
        "P ÷ ΣP over the valid set. Open a step for its arithmetic.</p>"
        f"{step_table(run.records, n_vocab)}"
    )


def _provenance(run: SavedRun) -> str:
    p = run.provenance
    if p is None:
        facts = [("Model file", run.model)]
        note = (
            '<p class="note">This run was saved before Maskscope recorded provenance (a '
            "version 1 run file): the model's hash and the versions are not known.</p>"
        )
    else:
        facts = p.rows()
        note = ""
    settings = p.settings if p is not None else run.result.settings
    return (
        '<h2>Provenance</h2><div class="columns">'
        f"<div><h3>What made it</h3>{_facts(facts)}{note}</div>"
        f"<div><h3>Generation settings</h3>{_facts(_setting_rows(settings))}</div></div>"
    )


def _setting_rows(settings: dict) -> list[tuple[str, str]]:
    return [
        (k.replace("_", " "), v if isinstance(v, str) else json.dumps(v))
        for k, v in settings.items()
    ]


def _facts(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'
