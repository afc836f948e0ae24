"""The bundle's promptfooconfig.yaml: the suite's cases as promptfoo `vars`, its prompt, an
`is-json` assertion against `file://schema.promptfoo.json` (schema.json as promptfoo's Ajv
takes it: engine/suite/bundle/promptfoo_schema.py) and a `not-finish-reason` `length` on
every test, and each expected field value as a `javascript` assertion, so a team on promptfoo
keeps testing the same schema there.

It passes or fails as `maskscope test` does, as far as promptfoo can say it: one provider per
sample (seed + i), so promptfoo's rows are the suite's samples; `PROMPTFOO_PASS_RATE_THRESHOLD`
in the config's `env`, and the deciding assertions' `weight` with each test's `threshold`, so
that promptfoo's exit code carries the suite's thresholds that one pass rate can hold
(engine/suite/bundle/promptfoo_gate.py says which, and how); and `derivedMetrics` giving the
suite's rates (is-json, truncation, field accuracy) in each sample's column.

It runs unchanged on the server the bundle recommends, llama-server, and on llama-cpp-python's
too: the schema goes as `{"type": "json_object", "schema": ...}`, which both take (llama.cpp's
tools/server/server-common.cpp reads `schema` under json_object as it reads
`json_schema.schema`), where llama-cpp-python's server answers OpenAI's strict `json_schema`
form with HTTP 500. The base URL is `MASKSCOPE_BASE_URL`, by promptfoo's `{{ env.VAR |
default(...) }}` in provider config (src/util/render.ts, renderEnvOnlyInObject), else
llama-server's own default. The sampler is turned off as `maskscope test --server` turns it
off (`passthrough`, added to the request body as is).

It is written without a YAML library, as JSON: YAML 1.2 (js-yaml, which promptfoo reads its
config with) is a superset of JSON. The only care JSON needs to be YAML too is characters
YAML will not take literally (controls, C1, U+2028/9, BOM...): those are written as escapes.

promptfoo reads prompts as Nunjucks templates, whose `{{ name }}` is the suite's placeholder
syntax too. Text around the placeholders that Nunjucks would read as markup (`{{`, `{%`,
`{#`) is wrapped in `{% raw %}`, so the prompt promptfoo sends is the one that was tested.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.suite.bundle.promptfoo_gate import (
    COMPLETE,
    FIELDS,
    PASS_RATE_ENV,
    VALID,
    Gate,
    gate,
    row_threshold,
)
from engine.suite.bundle.promptfoo_schema import PROMPTFOO_SCHEMA_FILE, promptfoo_schema
from engine.suite.bundle.snippets import SERVER_URL, json_text
from engine.suite.format import ABSENT_KINDS, Case, Expectation, Suite
from engine.suite.jsonpath import parse_path
from engine.suite.server.request import _SAMPLER_OFF as SAMPLER_OFF  # what --server sends
from engine.suite.server.request import JSON_OBJECT, response_format
from engine.suite.template import PLACEHOLDER

# The promptfoo `make` installs and the bundle's README names (tools/promptfoo/package.json
# pins the same): the newest that runs on Node 20, which 0.122 no longer does.
PROMPTFOO_VERSION = "0.121.20"
SERVER_URL_ENV = "MASKSCOPE_BASE_URL"  # as snippets/post.py reads it
API_KEY_ENV = "MASKSCOPE_API_KEY"

_NUNJUCKS = re.compile(r"\{[{%#]|[}%#]\}")
_RAW_END = "{% endraw %}"
# What YAML's double-quoted scalars may hold literally: printable characters (YAML 1.2,
# 5.1), less those a parser may still mistake: NEL and the line and paragraph separators,
# line breaks to YAML 1.1 (PyYAML), and the BOM.
_UNPRINTABLE = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)


def nunjucks_prompt(template: str) -> str:
    """The suite's template as a Nunjucks one: the same placeholders, the rest kept raw."""
    parts: list[str] = []
    last = 0
    for m in PLACEHOLDER.finditer(template):
        parts.append(_raw(template[last : m.start()]))
        parts.append("{{ " + m.group(1) + " }}")
        last = m.end()
    parts.append(_raw(template[last:]))
    return "".join(parts)


def _raw(text: str) -> str:
    if not _NUNJUCKS.search(text):
        return text
    # A raw block ends at the first {% endraw %}: one inside the text is written as a
    # string expression between two raw blocks.
    blocks = ["{% raw %}" + piece + _RAW_END for piece in text.split(_RAW_END)]
    return ("{{ '" + _RAW_END + "' }}").join(blocks)


def promptfoo_config(suite: Suite, model: str) -> dict[str, Any]:
    """The config as data: one test per case, run once per sample by one provider per seed,
    its assertions weighed so that promptfoo's exit code carries what it can of the suite's
    thresholds (engine/suite/bundle/promptfoo_gate.py)."""
    passing = gate(suite)
    others = max(_others(case, passing) for case in suite.cases) if suite.cases else 0
    weight = others + 1  # each deciding assertion: more than all the others of a test together
    default = [
        _weighed(_IS_JSON, VALID in passing.deciding, weight),
        _weighed(_NOT_LENGTH, bool(passing.deciding & {VALID, COMPLETE}), weight),
    ]
    tests = [_test(case, passing, weight, default) for case in suite.cases]
    return {
        "description": f"{suite.name} (exported by Maskscope)",
        # Read by promptfoo's getEnvString before the process's environment (src/envars.ts).
        "env": {PASS_RATE_ENV: passing.env_value()},
        # One request at a time, as the tests run it: batched beside others on llama-server a
        # sample can differ, and its chat grammar let whitespace run on to max_tokens (a
        # cut-off sample). promptfoo's default is 4; its CLI reads this from the config
        # (src/main.js: config.evaluateOptions, then evaluateOptions.maxConcurrency).
        "evaluateOptions": {"maxConcurrency": 1},
        "prompts": [nunjucks_prompt(suite.prompt)],
        "providers": _providers(suite, model),
        "defaultTest": {"assert": [a for a, _ in default]},
        "tests": [t for t, _ in tests],
        "derivedMetrics": _derived(
            len(suite.cases), default, [a for _, asserts in tests for a in asserts]
        ),
    }


def _providers(suite: Suite, model: str) -> list[dict[str, Any]]:
    """One provider per sample: sample i sends the suite's seed + i, as `maskscope test` does
    (engine/suite/run.py). promptfoo runs every test on every provider, so its rows are the
    suite's cases × samples, and its pass rate counts samples."""
    settings = suite.settings()
    providers = []
    for i in range(max(1, suite.samples)):
        seed = settings.seed + i
        config = {
            "apiBaseUrl": f"{{{{ env.{SERVER_URL_ENV} | default('{SERVER_URL}') }}}}/v1",
            "apiKey": f"{{{{ env.{API_KEY_ENV} | default('no-key') }}}}",
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            "seed": seed,
            "response_format": response_format(JSON_OBJECT, suite.schema),
            "passthrough": SAMPLER_OFF,
        }
        providers.append(
            {
                "id": f"openai:chat:{model}",
                "label": f"sample {i + 1} (seed {seed})",
                "config": config,
            }
        )
    return providers


# The sample is valid where both hold: its text is JSON the schema copy accepts, and it was
# not cut off at max_tokens (promptfoo's `not-finish-reason`, src/assertions/finishReason.ts;
# the OpenAI provider normalises the server's finish_reason, src/util/finishReason.ts).
_IS_JSON = {"type": "is-json", "value": f"file://{PROMPTFOO_SCHEMA_FILE}", "metric": "is_json"}
_NOT_LENGTH = {"type": "not-finish-reason", "value": "length", "metric": "complete"}
# A field is checked only on an output that finished, as engine/suite/metrics.field_results
# fails every field of a sample cut off at max_tokens. A `javascript` assertion's `context`
# holds the provider's response (src/assertions/index.ts, runAssertion).
_FINISHED = "context.providerResponse?.finishReason !== 'length'"


def _weighed(assertion: dict[str, Any], deciding: bool, weight: int) -> tuple[dict, bool]:
    return {**assertion, "weight": weight if deciding else 1}, deciding


def _others(case: Case, passing: Gate) -> int:
    """How many of the case's test's assertions decide nothing."""
    fields = 0 if FIELDS in passing.deciding else len(case.expected)
    defaults = (VALID not in passing.deciding) + (not passing.deciding & {VALID, COMPLETE})
    return fields + defaults


def _test(
    case: Case, passing: Gate, weight: int, default: list[tuple[dict, bool]]
) -> tuple[dict[str, Any], list[tuple[dict, bool]]]:
    """The case's test, and its own assertions with whether each decides."""
    test: dict[str, Any] = {"description": case.id, "vars": dict(case.vars)}
    deciding = FIELDS in passing.deciding
    asserts = [
        _weighed(
            {
                "type": "javascript",
                "value": f"{_FINISHED} && {expectation_js(e)}",
                "metric": "field_accuracy",
            },
            deciding,
            weight,
        )
        for e in case.expected
    ]
    if asserts:
        test["assert"] = [a for a, _ in asserts]
    if passing.deciding:
        every = [*default, *asserts]
        n_deciding = sum(d for _, d in every)
        test["threshold"] = row_threshold(n_deciding, len(every) - n_deciding, weight)
    return test, asserts


def _derived(
    n_cases: int, default: list[tuple[dict, bool]], fields: list[tuple[dict, bool]]
) -> list[dict[str, str]]:
    """promptfoo's derivedMetrics (src/evaluator.ts updateDerivedMetrics: a mathjs expression
    over one prompt and provider's sums of score × weight): the suite's rates in each
    sample's column, each sum over the most it can reach."""
    totals: dict[str, int] = {}
    for assertion, _ in default:
        totals[assertion["metric"]] = assertion["weight"] * n_cases
    for assertion, _ in fields:
        totals["field_accuracy"] = totals.get("field_accuracy", 0) + assertion["weight"]
    rates = {
        "is_json_rate": ("is_json", "{m} / {t}"),
        "truncation_rate": ("complete", "1 - {m} / {t}"),
        "field_accuracy_rate": ("field_accuracy", "{m} / {t}"),
    }
    return [
        {"name": name, "value": form.format(m=metric, t=totals[metric])}
        for name, (metric, form) in rates.items()
        if totals.get(metric)
    ]


# JSON equality, as engine/suite/format.same_json: 1 equals 1.0, key order does not count.
_SAME_JSON = (
    "(function same(a, b) { if (a === b) return true; "
    "if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null "
    "|| Array.isArray(a) !== Array.isArray(b)) return false; "
    "const ka = Object.keys(a), kb = Object.keys(b); "
    "return ka.length === kb.length && ka.every((k) => "
    "Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k])); })"
)


# The value at a path's steps, or undefined where a step is missing: own keys only, unlike
# `?.[k]`, which finds `constructor` in any object and `length` in any array. JSON.parse
# never gives undefined, so undefined means absent.
_OWN_AT = (
    "((v, steps) => { for (const s of steps) { "
    "if (typeof s === 'number' ? !(Array.isArray(v) && s < v.length) "
    ": (v === null || typeof v !== 'object' || Array.isArray(v) "
    "|| !Object.prototype.hasOwnProperty.call(v, s))) return undefined; "
    "v = v[s]; } return v; })"
)


def expectation_js(e: Expectation) -> str:
    """A promptfoo `javascript` assertion (one expression over `output`) that holds where the
    expectation does. Values and keys are JSON literals, which JavaScript reads as written;
    a regex is the suite's pattern, anchored, read by JavaScript's RegExp; an absent key is
    one the path's own keys do not reach (null too, for absent_or_null). `output` is text,
    or the parsed value where promptfoo's provider parsed it (OpenAI's for json_schema)."""
    parsed = "(typeof output === 'string' ? JSON.parse(output) : output)"
    if e.kind in ABSENT_KINDS:
        steps = json.dumps(list(parse_path(e.path)), ensure_ascii=False)
        null_ok = " || v === null" if e.kind == "absent_or_null" else ""
        return f"((v) => v === undefined{null_ok})({_OWN_AT}({parsed}, {steps}))"
    found = parsed + "".join(
        f"?.[{json.dumps(step, ensure_ascii=False)}]" for step in parse_path(e.path)
    )
    value = json.dumps(e.value, ensure_ascii=False)
    if e.kind == "equals":
        return f"{_SAME_JSON}({found}, {value})"
    if e.kind == "regex":
        return (
            f"((v) => v !== undefined && new RegExp('^(?:' + {value} + ')$')"
            f".test(typeof v === 'string' ? v : JSON.stringify(v)))({found})"
        )
    tolerance = json.dumps(e.tolerance or 0.0)
    return f"((v) => typeof v === 'number' && Math.abs(v - {value}) <= {tolerance})({found})"


def yaml_text(config: dict[str, Any], header: str) -> str:
    """`config` as JSON-compatible YAML, after `header`'s lines as YAML comments."""
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    body = json.dumps(config, indent=2, ensure_ascii=False)
    return comments + _UNPRINTABLE.sub(_escape, body) + "\n"


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def promptfoo_files(suite: Suite, model: str) -> dict[str, str]:
    """promptfooconfig.yaml and the schema copy its `is-json` reads, path -> text."""
    header = (
        f"promptfoo config for the suite {suite.name!r}, exported by Maskscope.\n"
        f"Run: {SERVER_URL_ENV}=http://HOST:PORT npx promptfoo@{PROMPTFOO_VERSION} eval\n"
        f"(llama-server or llama-cpp-python's server; {SERVER_URL} when the variable is unset).\n"
        f"Its exit code carries the suite's thresholds {', '.join(gate(suite).carried) or 'none'};"
        " README.md says how, and what it leaves to `maskscope test`."
    )
    ready, _ = promptfoo_schema(suite.schema)
    return {
        "promptfooconfig.yaml": yaml_text(promptfoo_config(suite, model), header),
        PROMPTFOO_SCHEMA_FILE: json_text(ready),
    }
