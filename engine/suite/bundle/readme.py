"""The bundle's README.md: what was tested, on which model, with what results, and what each
file is for.

User text (names, descriptions, case ids, messages) goes in three ways only: inline, with
what Markdown or HTML would read as markup escaped where it would be read so (a renderer
passes raw HTML through, so `<script>` must arrive as `&lt;script&gt;`), and nothing else:
`1.00` and `q4_k_m` stay as written; as a code span (file names, versions, settings); or in
a fenced block whose fence is longer than any run of backticks inside, where nothing is
markup.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.suite.bundle.promptfoo import PROMPTFOO_VERSION, SERVER_URL_ENV
from engine.suite.bundle.promptfoo_gate import gate
from engine.suite.bundle.promptfoo_schema import PROMPTFOO_SCHEMA_FILE, promptfoo_schema
from engine.suite.bundle.readme_engines import grammars_section, requests_section
from engine.suite.bundle.report import converter_sentence
from engine.suite.metrics import CaseSummary, Check, Verdict
from engine.suite.verdicts import case_verdict

if TYPE_CHECKING:
    from engine.suite.bundle.tested import Tested

# What inline text may make markup of anywhere in a line (CommonMark and GitHub's
# extensions): escapes, code spans, emphasis with `*`, links and images (`[`), GFM's
# strikethrough and table cells, GitHub's `$math$`. & < > are written as entities instead.
_INLINE = re.compile(r"([\\`*\[\]~|$])")
# `_` opens or closes emphasis only beside something other than a letter or digit (the
# flanking rules, CommonMark 0.31 section 6.2), so q4_k_m and max_tokens stay as written.
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# Liquid (GitHub Pages' Jekyll) runs `{{ }}`, `{% %}` and `{# #}` before Markdown is read.
_LIQUID = re.compile(r"\{(?=[{%#])|(?<=\{)\{|(?<=[}%#])\}|\}(?=\})")
# Where a line starts: a heading, a list item (`-`, `+`, `1.`, `1)`), a setext underline.
_ORDERED = re.compile(r"\d{1,9}(?=[.)])")
_OUTCOME = {0: "PASSED", 1: "FAILED", 2: "NO RESULT (a harness error or bad input)"}


def md(text: object) -> str:
    """`text` as inline Markdown that renders as itself, on one line, at a line's start too."""
    plain = " ".join(str(text).split())
    plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    plain = _LIQUID.sub(r"\\\g<0>", _UNDERSCORE.sub(r"\\_", _INLINE.sub(r"\\\1", plain)))
    if ordered := _ORDERED.match(plain):
        return f"{plain[: ordered.end()]}\\{plain[ordered.end() :]}"
    return f"\\{plain}" if plain[:1] in ("#", "+", "-", "=") else plain


def code(text: object) -> str:
    """`text` as a code span in a table cell: a fence longer than any backtick run inside,
    and `|` escaped, which GitHub's tables read before the span (GFM spec, example 200).
    Text holding backticks is written escaped instead: no span for it to close early."""
    plain = " ".join(str(text).split())
    if "`" in plain:
        return md(plain)
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", plain)), default=0))
    pad = " " if plain[:1] == "`" or plain[-1:] == "`" else ""
    cell = plain.replace("|", "\\|")
    return f"{fence}{pad}{cell}{pad}{fence}"


def fenced(text: str, lang: str = "") -> str:
    """`text` in a fenced block that no backtick run inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _cell(text: object) -> str:
    return md(text) or " "


def bundle_readme(tested: Tested, hashes: dict[str, str]) -> str:
    parts = [
        _head(tested),
        _results(tested),
        _cases(tested),
        _model(tested),
        grammars_section(tested, md),
        requests_section(tested),
        _files(tested, hashes),
        _converter(tested),
        _use(tested),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def _head(tested: Tested) -> str:
    s = tested.suite
    lines = [
        f"# Tested schema: {md(s.name)}",
        "",
        f"**{_OUTCOME[tested.exit_code]}** (`maskscope test` exit code {tested.exit_code}): "
        f"{tested.summary.n_cases} case(s), {tested.summary.n_samples} sample(s) in all, on "
        "the model below, under "
        f"the grammar in `{tested.grammar_file}` (compiler `{tested.compiled.compiler}`, mask "
        f"backend `{s.backend}`).",
    ]
    if s.description:
        lines += ["", md(s.description)]
    lines += [
        "",
        "Everything here is byte for byte what was tested: `hashes.json` holds the sha256 of "
        "each file, of the tested schema and grammar, and of the model file.",
    ]
    return "\n".join(lines)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _results(tested: Tested) -> str:
    s = tested.summary
    rows = [
        ("validity rate", _rate(s.validity_rate)),
        ("truncation rate (cut at max_tokens)", _rate(s.truncation_rate)),
        ("valid mass, mean / min", f"{_rate(s.mean_valid_mass)} / {_rate(s.min_valid_mass)}"),
        ("overruled / forced steps", f"{s.n_overruled} / {s.n_forced} of {s.n_steps}"),
        ("field accuracy", f"{_rate(s.field_accuracy)} ({s.fields_ok}/{s.fields_checked})"),
        (
            "latency per object, p50 / p95 (ms)",
            f"{_ms(s.latency_ms_p50)} / {_ms(s.latency_ms_p95)}",
        ),
        ("runaway samples", str(s.n_runaway)),
    ]
    lines = ["## Results", "", "| metric | measured |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    lines += ["", "### Thresholds (exit 0 when all hold, 1 when one fails, 2 for no result)", ""]
    if tested.verdict.checks:
        lines += [f"- {_check(c)}" for c in tested.verdict.checks]
    else:
        lines.append("The suite sets no thresholds.")
    lines += [f"- problem: {md(p)}" for p in tested.verdict.problems]
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def _check(c: Check) -> str:
    return f"{'met' if c.passed else 'MISSED'}: {md(c.text)}"


def _cases(tested: Tested) -> str:
    lines = ["## Cases", "", "| case | valid | fields | verdict |", "|---|---|---|---|"]
    for c in tested.summary.cases:
        fields = f"{c.fields_ok}/{c.fields_checked}" if c.fields_checked else "-"
        failure = _case_outcome(c, tested.verdict)
        lines.append(
            f"| {_cell(c.case_id)} | {c.n_valid}/{len(c.samples)} | {fields} | {_cell(failure)} |"
        )
    return "\n".join(lines)


def _case_outcome(c: CaseSummary, verdict: Verdict) -> str:
    """As the report and JUnit judge the case (engine/suite/verdicts.py)."""
    judged = case_verdict(c, verdict)
    if judged.kind is not None:
        return f"{judged.kind}: {judged.message}"
    return f"passed, missed: {judged.missed[0].failures[0]}" if judged.missed else "passed"


def _model(tested: Tested) -> str:
    p = tested.provenance
    rows = [
        ("model file", code(p.model_file)),
        ("model size", f"{p.model_bytes:,} bytes"),
        ("model sha256", f"`{p.model_sha256}`"),
        ("llama-cpp-python", code(p.llama_cpp_python)),
        ("llama.cpp build", md(p.llama_cpp_build or "not recorded")),
        ("Maskscope", code(p.maskscope)),
        ("settings", code(", ".join(f"{k}={v}" for k, v in p.settings.items()))),
        ("tested at", md(tested.tested_at)),
    ]
    if tested.decoded is not None and tested.decoded.when != p.made_at:
        rows.append(("exported at", md(p.made_at)))
    lines = ["## Model and versions", "", "| | |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


_USES = {
    "schema.json": "the JSON Schema, exactly the text that was compiled and tested",
    "grammar.gbnf": "the GBNF grammar that was tested; llama.cpp's `grammar` takes it as is",
    "grammar.llguidance.json": "llguidance's own grammar (its JSON form, not GBNF): the "
    "llguidance compiler makes no GBNF, so only an llguidance-enabled engine runs it",
    "grammar.outlines.regex": "the regex outlines-core built from the schema (not GBNF): "
    "Outlines runs it, as `outlines_core.Index(regex, vocabulary)`",
    "grammar.xgrammar.ebnf": "XGrammar's EBNF (not GBNF): the xgrammar compiler's own "
    "grammar, or the tested grammar translated (see above); `GrammarCompiler.compile_grammar` "
    "takes it as is",
    "suite.json": "the suite, self-contained: `maskscope test suite.json` runs it again",
    "report.json": "the result of `maskscope test --json`: every metric and sample",
    "report.html": "the same result as a page (no script, opens offline)",
    "README.md": "this file",
    "grammar.lark": "the tested grammar in llguidance's Lark (see above)",
    "snippets/llama_cpp_python.py": "`python3 snippets/llama_cpp_python.py MODEL.gguf`: one "
    "object under grammar.gbnf with llama-cpp-python, validated against schema.json",
    "snippets/post.py": "sends a request of snippets/ to its server and checks the answer "
    "(see above); Python's standard library only",
    "snippets/servers.json": "for each request: its server, endpoint, how to start one, and "
    "the documentation its fields come from",
    "promptfooconfig.yaml": "the cases as promptfoo `vars`, one provider per sample's seed, "
    "with `is-json` against `file://schema.promptfoo.json`, `not-finish-reason` `length` "
    "and each expected field value as a `javascript` assertion, weighed so that promptfoo's "
    "exit code carries the thresholds it can (see below): "
    f"`{SERVER_URL_ENV}=http://HOST:PORT npx promptfoo@{PROMPTFOO_VERSION} eval` "
    "on llama-server or llama-cpp-python's server, unchanged",
    PROMPTFOO_SCHEMA_FILE: "schema.json as promptfoo's `is-json` validator (Ajv in draft-07 "
    "strict mode) takes it: it refuses draft 2020-12's `$schema` (see below)",
}


# README.md is hashed in hashes.json; hashes.json, the list itself, is not.
_UNLISTED = {"README.md": "(in hashes.json)", "hashes.json": "(the list: not in itself)"}


def _request_use(path: str) -> str:
    if path.startswith("snippets/") and path.endswith(".json"):
        return "a request for the server named above: `python3 snippets/post.py " + path + "`"
    return "the sha256 of every other file and of what was tested"


def _files(tested: Tested, hashes: dict[str, str]) -> str:
    lines = ["## Files", "", "| file | use | sha256 |", "|---|---|---|"]
    for path in [*hashes, "README.md", "hashes.json"]:
        use = _USES.get(path) or _request_use(path)
        sha = f"`{hashes[path][:16]}…`" if path in hashes else _UNLISTED[path]
        lines.append(f"| `{path}` | {use} | {sha} |")
    return "\n".join(lines)


def _converter(tested: Tested) -> str:
    lines = [
        "## llama-server's own converter against the tested grammar",
        "",
        md(converter_sentence(tested)),
    ]
    lines += [f"- {md(str(gap))}" for gap in tested.converter.skipped]
    lines += [
        "",
        "So `json_schema` and `response_format` are not what was tested. To run the tested "
        "grammar on a llama.cpp server, send `grammar.gbnf` in `grammar` "
        "(`snippets/llama_server_grammar.json`). llama-cpp-python's own server "
        "(`python -m llama_cpp.server`) takes the same `grammar` on `/v1/completions` "
        "(`snippets/llama_cpp_python_server.json`, with `max_tokens`: it ignores "
        "`n_predict`), but there it ignores `response_format` without an error. Whatever the "
        "server, check that its outputs follow the schema: `snippets/post.py` does.",
    ]
    return "\n".join(lines)


def _use(tested: Tested) -> str:
    commands = ["maskscope test suite.json   # run the suite again (exit 0/1/2)"]
    if tested.compiled.gbnf:
        commands[:0] = [
            "python3 snippets/llama_cpp_python.py MODEL.gguf",
            "python3 snippets/post.py snippets/llama_server_grammar.json http://127.0.0.1:8080",
        ]
    else:
        commands.append(
            "python3 snippets/post.py snippets/llama_server_response_format.json "
            "http://127.0.0.1:8080"
        )
    commands.append(f"npx promptfoo@{PROMPTFOO_VERSION} eval   # the same cases in promptfoo")
    return "\n".join(
        [
            "## Using it",
            "",
            "The first case's prompt, as the model read it:",
            "",
            fenced(tested.model_prompt),
            "",
            fenced("\n".join(commands), "sh"),
            "",
            _chat_note(tested),
            "",
            _promptfoo_note(tested),
            "",
            "The snippets turn off the samplers Maskscope does not use, but each engine draws "
            "its own random numbers, so their outputs can differ from the tested samples of "
            "the same seed; every output still follows the grammar.",
        ]
    )


def _promptfoo_note(tested: Tested) -> str:
    _, notes = promptfoo_schema(tested.suite.schema)
    lines = [
        f"promptfoo takes the server's base URL from `{SERVER_URL_ENV}` (llama-server's "
        "`http://127.0.0.1:8080` when unset) and sends the schema as "
        '`{"type": "json_object", "schema": ...}`, the form both llama-server and '
        "llama-cpp-python's server take (the latter answers OpenAI's strict `json_schema` "
        f"with HTTP 500). Its `is-json` reads `{PROMPTFOO_SCHEMA_FILE}`, not `schema.json`: "
        "promptfoo validates with Ajv's draft-07 class in strict mode, which refuses draft "
        "2020-12's `$schema`, its newer keywords and formats it does not know. The copy:",
        "",
    ]
    lines += [f"- {md(note)}" for note in notes or ("is the same schema",)]
    lines += ["", "promptfoo's verdict against the suite's thresholds:", ""]
    # Our own words about fixed threshold names, no user text: written as Markdown, not escaped.
    lines += [f"- {sentence}" for sentence in gate(tested.suite).sentences()]
    return "\n".join(lines)


def _chat_note(tested: Tested) -> str:
    if tested.suite.settings().chat_template:
        return (
            "The suite was tested with the model's chat template, so the chat requests "
            "(`openai_response_format.json`, promptfoo) send the prompt as a user message."
        )
    return (
        "The suite was tested on the raw prompt (no chat template), as the `/completion` "
        "snippets send it; the chat requests (`openai_response_format.json`, promptfoo) put "
        "it in the server's chat template, so there the model reads a different prompt."
    )
