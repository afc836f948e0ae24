"""The bundle's report.html: the tested suite on one self-contained page.

It follows engine/report's page: the same stylesheet and Content-Security-Policy (no script,
nothing loaded), and every text from the user or the model escaped. Braces are escaped too,
so a page pasted into a wiki or a site with a client-side template engine shows a `{{` in a
prompt as text instead of evaluating it.

`maskscope test --server URL --html FILE` writes the same page for a run on a server
(engine/suite/server/report.py): given `server` (ServerInfo.to_json), it names the server,
its mode and the model the server reported where a local run names its model file and hash.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING

from engine.report.page import CSP
from engine.report.style import CSS
from engine.suite.bundle.promptfoo_gate import gate
from engine.suite.metrics import CaseSummary, Sample, Verdict
from engine.suite.summary import summary_text
from engine.suite.template import render_prompt
from engine.suite.verdicts import case_verdict

if TYPE_CHECKING:
    from engine.suite.bundle.tested import Tested

_EXTRA_CSS = """
table.grid { border-collapse: collapse; width: 100%; font-size: 14px; margin: 6px 0; }
table.grid th, table.grid td {
  padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; overflow-wrap: anywhere;
}
table.grid th { color: var(--muted); font-weight: 600; font-size: 13px; }
details.sample { margin: 8px 0; }
details.sample > summary { cursor: pointer; }
"""
_OUTCOME = {0: ("PASSED", "valid"), 1: ("FAILED", "invalid"), 2: ("NO RESULT", "plain")}


def esc(text: object) -> str:
    """HTML-escaped text, quotes and braces included."""
    return html.escape(str(text), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def bundle_report(
    tested: Tested, hashes: dict[str, str], server: dict[str, str] | None = None
) -> str:
    """The page, given the sha256 of the bundle's other files (listed on it); `server` for
    a run made on a server."""
    suite = tested.suite
    made_by = "maskscope test --server" if server else "maskscope export"
    body = "".join(
        (
            _header(tested, server),
            _thresholds(tested),
            "" if server else _promptfoo(tested),
            _metrics(tested, server),
            _cases(tested),
            _inputs(tested),
            _converter(tested),
            _provenance(tested, hashes, server),
            f"<footer>Made by <code>{made_by}</code>. This page runs no script and "
            "loads nothing.</footer>",
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc('Maskscope suite: ' + suite.name)}</title>"
        f"<style>{CSS}{_EXTRA_CSS}</style></head><body><main>{body}</main></body></html>\n"
    )


def _schema_title(tested: Tested) -> str:
    schema = tested.compiled.schema
    title = schema.get("title") if isinstance(schema, dict) else None
    return title if isinstance(title, str) else ""


def _made_on(tested: Tested, server: dict[str, str] | None) -> list[str]:
    if server is None:
        return [
            f"model {tested.provenance.model_file}",
            f"compiler {tested.compiled.compiler}, backend {tested.suite.backend}",
        ]
    form = f" ({server['response_format']})" if server.get("response_format") else ""
    return [
        f"server {server['url']}, mode {server['mode']}{form}",
        f"model {server.get('model') or 'not named by the server'}",
        f"tested grammar: {tested.compiled.compiler} compiler",
    ]


def _header(tested: Tested, server: dict[str, str] | None = None) -> str:
    word, cls = _OUTCOME[tested.exit_code]
    s = tested.summary
    title = _schema_title(tested)
    sub = [
        f"schema {title}" if title else "",
        *_made_on(tested, server),
        f"{s.n_cases} case(s), {s.n_samples} sample(s)",
        f"tested {tested.tested_at}",
    ]
    reasons = [c.text for c in tested.verdict.failed] + list(tested.verdict.problems)
    listed = "".join(f"<li>{esc(r)}</li>" for r in reasons)
    return (
        f"<header><h1>{esc('Maskscope suite: ' + tested.suite.name)} "
        f'<span class="badge {cls}">{word} · exit {tested.exit_code}</span></h1>'
        f'<p class="sub">{esc(" · ".join(x for x in sub if x))}</p>'
        + (f"<p>{esc(tested.suite.description)}</p>" if tested.suite.description else "")
        + (f'<div class="verdict invalid"><ul>{listed}</ul></div>' if listed else "")
        + "</header>"
    )


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A table of already escaped cells."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="grid"><tr>{th}</tr>{body}</table>'


def _thresholds(tested: Tested) -> str:
    checks = tested.verdict.checks
    if not checks:
        return '<h2>Thresholds</h2><p class="note">The suite sets no thresholds.</p>'
    rows = [
        [
            esc(c.metric),
            esc(f"{c.limit:g}"),
            esc("n/a" if c.measured is None else f"{c.measured:.4g}"),
            '<span class="yes">met</span>' if c.passed else '<span class="no">missed</span>',
            esc(c.text),
        ]
        for c in checks
    ]
    return "<h2>Thresholds</h2>" + _table(["metric", "limit", "measured", "", "in words"], rows)


def _promptfoo(tested: Tested) -> str:
    """What of the thresholds the bundle's promptfooconfig.yaml carries in its exit code."""
    items = "".join(f"<li>{esc(s)}</li>" for s in gate(tested.suite).sentences())
    return f'<h3>In promptfoo</h3><ul class="note">{items}</ul>'


def _metrics(tested: Tested, server: dict[str, str] | None = None) -> str:
    # The terminal's table says it all, aligned; on the page it reads as preformatted text.
    # A server run's table shows n/a for what only local decoding measures.
    text = summary_text(tested.summary, tested.verdict, tested.suite.name, server)
    return f'<h2>Metrics</h2><pre class="scroll">{esc(text)}</pre>'


def _cases(tested: Tested) -> str:
    by_id = {case.id: case for case in tested.suite.cases}
    parts = ["<h2>Cases</h2>"]
    rows = [_case_row(c, tested.verdict) for c in tested.summary.cases]
    parts.append(_table(["case", "valid", "fields", "verdict"], rows))
    for c in tested.summary.cases:
        case = by_id.get(c.case_id)
        prompt = render_prompt(tested.suite.prompt, case.vars) if case else ""
        parts.append(f'<h3 id="case-{esc(c.case_id)}">{esc(c.case_id)}</h3>')
        if case is not None and case.description:
            parts.append(f"<p>{esc(case.description)}</p>")
        parts.append(
            f'<details class="sample"><summary>Prompt</summary><pre>{esc(prompt)}</pre></details>'
        )
        parts.extend(_sample(s) for s in c.samples)
    return "".join(parts)


def _case_row(c: CaseSummary, verdict: Verdict) -> list[str]:
    fields = f"{c.fields_ok}/{c.fields_checked}" if c.fields_checked else "-"
    return [
        esc(c.case_id),
        esc(f"{c.n_valid}/{len(c.samples)}"),
        esc(fields),
        case_cell(c, verdict),
    ]


def case_cell(c: CaseSummary, verdict: Verdict) -> str:
    """The case's verdict by the rule JUnit, the JSON result and the exit code follow
    (engine/suite/verdicts.py): a sample that missed a field expectation no missed threshold
    counts is a miss of a passed case, not a failure."""
    judged = case_verdict(c, verdict)
    if judged.kind is not None:
        return f'<span class="no">{judged.kind}</span>: {esc(judged.message)}'
    if judged.missed:
        first = judged.missed[0]
        return f'<span class="yes">passed</span>, missed: {esc(first.failures[0])}'
    return '<span class="yes">passed</span>'


def _sample(s: Sample) -> str:
    badge = (
        '<span class="badge valid">valid</span>'
        if s.valid
        else '<span class="badge invalid">invalid</span>'
    )
    facts = (
        f"sample {s.index + 1} · seed {s.seed} · {s.n_tokens} tokens · "
        f"{s.result.finish_reason.label} · {s.latency_ms:.0f} ms"
    )
    if s.queue_ms is not None:  # the server timed itself: its share and the wait apart
        facts += f" (served in {s.service_ms:.0f} ms, queued {s.queue_ms:.0f} ms)"
    if s.server is not None and s.server.mean_logprob is not None:
        facts += f" · token logprob mean {s.server.mean_logprob:.3f} (from the server)"
    why = "".join(f"<li>{esc(f)}</li>" for f in s.failures)
    return (
        f'<div class="sample"><p>{badge} <span class="sub">{esc(facts)}</span></p>'
        f'<pre class="output">{esc(s.result.text)}</pre>'
        + (f"<ul>{why}</ul>" if why else "")
        + "</div>"
    )


def _inputs(tested: Tested) -> str:
    return (
        '<h2>Prompt template and schema</h2><div class="inputs">'
        f'<div><h3>Prompt template</h3><pre class="scroll">{esc(tested.suite.prompt)}</pre></div>'
        f'<div><h3>JSON Schema</h3><pre class="scroll">{esc(tested.suite.schema_text)}</pre>'
        "</div></div>"
    )


def _converter(tested: Tested) -> str:
    gaps = tested.compiled.unenforced
    own = "".join(f"<li>{esc(str(g))}</li>" for g in gaps)
    lines = [
        "<h2>What the grammar enforces</h2>",
        f"<p>The tested grammar ({esc(tested.compiled.compiler)} compiler) "
        + ("enforces every keyword of the schema.</p>" if not gaps else "skips:</p>")
        + (f"<ul>{own}</ul>" if own else ""),
        f"<p>{esc(converter_sentence(tested))}</p>",
    ]
    skipped = "".join(f"<li>{esc(str(g))}</li>" for g in tested.converter.skipped)
    if skipped:
        lines.append(f"<ul>{skipped}</ul>")
    return "".join(lines)


def converter_sentence(tested: Tested) -> str:
    """One sentence on llama-server's own converter against the tested grammar."""
    conv = tested.converter
    if conv.refused and conv.native:
        return f"llama-server's own converter (json_schema) refuses this schema: {conv.refused}"
    if conv.refused:
        return (
            "llama-cpp-python's Python port of llama-server's converter refuses this schema "
            f"(the C++ converter was not built here, `make llama-converter`): {conv.refused}"
        )
    same = (
        "makes the same grammar as the one tested"
        if conv.same_grammar
        else "makes a different grammar from the one tested (send grammar.gbnf to get the "
        "tested one)"
    )
    skipped = (
        f"; it does not enforce {len(conv.skipped)} keyword(s), listed below"
        if conv.skipped
        else "; it enforces every keyword of this schema"
    )
    port = (
        ""
        if conv.native
        else " (as read by llama-cpp-python's Python port of it: the C++ converter llama-server "
        "runs was not built where this bundle was made, `make llama-converter`, and may differ)"
    )
    return f"llama-server's own converter (json_schema, response_format){port} {same}{skipped}."


def _provenance(
    tested: Tested, hashes: dict[str, str], server: dict[str, str] | None = None
) -> str:
    """What made the numbers, with what settings, and the sha256 of what was tested. For a
    server run, the server, not a local model (the local model only read the outputs back
    through the tested grammar, for the fail-open check)."""
    p = tested.provenance
    settings = [(k.replace("_", " "), json.dumps(v)) for k, v in p.settings.items()]
    files = [
        [f"<code>{esc(path)}</code>", f"<code>{esc(sha)}</code>"] for path, sha in hashes.items()
    ]
    if server:
        made, sent = _server_rows(tested, server), " (sent to the server)"
        files_title, files_head, after = "What was tested", "", ""
    else:
        made, sent = [*p.rows(), ("Tested", tested.tested_at)], ""
        files_title, files_head = "Files", "file"
        after = (
            '<p class="note">README.md is hashed in hashes.json too; hashes.json, the list '
            "itself, is not.</p>"
        )
    return (
        '<h2>Provenance</h2><div class="columns">'
        f"<div><h3>What made it</h3>{_facts(made)}</div>"
        f"<div><h3>Generation settings{sent}</h3>{_facts(settings)}</div></div>"
        f"<h3>{files_title} (sha256)</h3>" + _table([files_head, "sha256"], files) + after
    )


def _server_rows(tested: Tested, server: dict[str, str]) -> list[tuple[str, str]]:
    """What made a server run, as rows of facts."""
    p = tested.provenance
    return [
        ("Server", server["url"]),
        ("Mode", server["mode"]),
        ("response_format form", server.get("response_format") or "not sent"),
        ("Model (as the server names it)", server.get("model") or "not named"),
        ("Tested grammar", f"{tested.compiled.compiler} compiler"),
        ("Maskscope", p.maskscope),
        ("Made", p.made_at),
    ]


def _facts(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'
