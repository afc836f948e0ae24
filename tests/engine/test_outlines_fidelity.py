"""The outlines compiler's report, proven on real MaskBench dev schemas: every invalid
instance that outlines-core's real Index and Guide let through is explained by a keyword the
report names (engine/grammar/compilers/outlines/compiler.py), as `make fidelity` checks over
the whole corpus.

The instances go through a 32,000-token vocabulary (llama-spm without its space prefix, in a
random-weight model: tests/tiny_models.py), where outlines-core's Index takes about a tenth of
the time it takes over Gemma's 262,144 tokens. A token sequence passes the Guide exactly when
its bytes match the regex, whichever vocabulary spells them; one test holds the two
vocabularies' verdicts side by side. Skipped where the shared data is not checked out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.check.inputs import SchemaCase, load_cases
from engine.check.pool import HUNG
from engine.check.run import check_case, lost_task
from engine.settings import ModelSettings
from tests.tiny_models import tiny_model

DEV = Path(__file__).parents[2] / "../shared/data/maskbench-dev"
# Each lets through an invalid instance that a rule of the report explains (the keyword).
SAMPLE = {
    "Github_easy---o48548.json": "minimum",
    "Github_easy---o25191.json": "maximum",
    "Github_easy---o39437.json": "format",  # date-time without a time zone
}
# Small regexes: an Index over Gemma's vocabulary takes a second or two each.
SIDE_BY_SIDE = ["Github_easy---o25191.json", "Github_easy---o48548.json"]

needs_data = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/data/maskbench-dev is absent")


@pytest.fixture(scope="module")
def bare_model():
    from engine.model.llama import Model

    m = Model.load(ModelSettings(path=str(tiny_model("llama-spm-bare")), n_ctx=64, n_threads=1))
    yield m
    m.close()


def _cases(name: str) -> list[SchemaCase]:
    return load_cases(str(DEV / name), None)


@pytest.mark.slow
@needs_data
def test_every_invalid_instance_let_through_is_explained_by_the_report(bare_model):
    used: set[str] = set()
    for name, keyword in SAMPLE.items():
        for case in _cases(name):
            result = check_case(bare_model, case, "outlines", "outlines")
            assert result.compiled and result.error is None, (name, result.error)
            assert result.unexplained == 0, (name, [v.errors for v in result.verdicts])
            gaps = {g.keyword for v in result.verdicts for g in v.explained_by}
            assert keyword in gaps, (name, gaps)
            used |= gaps
    assert set(SAMPLE.values()) <= used


@pytest.mark.slow
@needs_data
def test_the_small_vocabulary_gives_gemmas_verdicts(bare_model, model):
    for name in SIDE_BY_SIDE:
        for case in _cases(name):
            small = check_case(bare_model, case, "outlines", "outlines")
            gemma = check_case(model, case, "outlines", "outlines")
            assert small.compiled and gemma.compiled, (small.error, gemma.error)
            assert [v.accepted for v in small.verdicts] == [v.accepted for v in gemma.verdicts]


def test_a_bare_vocabulary_adds_no_space_before_the_text(bare_model):
    text = '{"a": 1}'
    tokens = bare_model.tokenize(text, add_special=False, parse_special=False)
    assert b"".join(bare_model.piece(t) for t in tokens) == text.encode()


def test_an_outlines_schema_past_the_time_limit_did_not_compile_and_did_not_crash():
    case = SchemaCase("slow.json", None, {"type": "integer"}, ())
    result = lost_task((case, "outlines", "outlines"), f"{HUNG}no verdict after 120 s")
    assert not result.compiled and not result.crashed
    assert result.error == "outlines-core did not compile the schema: no verdict after 120 s"
    other = lost_task((case, "llamacpp", "llamacpp"), f"{HUNG}no verdict after 120 s")
    assert other.crashed


def _regex_accepts(schema: object, text: str) -> bool:
    """outlines-core's own Guide over a vocabulary of single bytes, on the compiler's regex."""
    import outlines_core

    from engine.grammar.compilers.outlines.compiler import compile_outlines

    regex, _ = compile_outlines(schema)
    vocabulary = outlines_core.Vocabulary(256, {bytes([b]): [b] for b in range(256)})
    guide = outlines_core.Guide(outlines_core.Index(regex, vocabulary))
    for byte in text.encode():
        if not guide.accepts_tokens([byte]):
            return False
        guide.advance(byte, return_tokens=False)
    return guide.is_finished() or guide.accepts_tokens([256])


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        ("date-time", "2022-01-01T12:00:00"),  # no time zone
        ("date-time", "2022-02-31T12:00:00Z"),
        ("date", "2022-02-31"),
        ("time", "12:00:00"),
        ("uri", "http://a.com/<x>"),
    ],
)
def test_a_loose_format_regex_is_reported_and_truly_loose(fmt, value):
    import json

    from engine.check.verdict import schema_errors
    from engine.grammar.compilers.outlines.compiler import outlines_unenforced

    schema = {"type": "string", "format": fmt}
    assert _regex_accepts(schema, json.dumps(value))
    assert [e.validator for e in schema_errors(value, schema)] == ["format"]
    assert [g.keyword for g in outlines_unenforced(schema)] == ["format"]


@pytest.mark.parametrize(("fmt", "value"), [("uuid", "123e4567-e89b-12d3-a456-426614174000")])
def test_a_format_outlines_core_holds_is_not_reported(fmt, value):
    import json

    from engine.grammar.compilers.outlines.compiler import outlines_unenforced

    schema = {"type": "string", "format": fmt}
    assert _regex_accepts(schema, json.dumps(value))
    assert outlines_unenforced(schema) == []
