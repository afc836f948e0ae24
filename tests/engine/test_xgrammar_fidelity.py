"""XGrammar's report, proven on real MaskBench dev schemas: every invalid instance that
XGrammar's GrammarMatcher lets through is explained by a keyword the report names
(engine/grammar/compilers/xgrammar/coverage.py), as `maskscope check --compiler xgrammar --backend
xgrammar` checks over the whole corpus.

The instances go through a 32,000-token vocabulary (llama-spm without its space prefix, in a
random-weight model: tests/tiny_models.py); XGrammar accepts a text by its bytes, whichever
vocabulary spells them. Skipped where the shared data is not checked out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.check.inputs import load_cases
from engine.check.run import check_case
from engine.settings import ModelSettings
from tests.tiny_models import tiny_model

DEV = Path(__file__).parents[2] / "../shared/data/maskbench-dev"
SUITE = Path(__file__).parents[1] / "data/json-schema-test-suite"
# Each lets through an invalid instance that a rule of the report explains (the keyword).
SAMPLE = {
    "Github_hard---o77264.json": "format",  # no `type`: XGrammar lets any value through
    "Github_medium---o22092.json": "properties",  # beside an anyOf: dropped
    "Handwritten---dep8.json": "maxProperties",  # beside an allOf: dropped
    "Github_hard---o32451.json": "then",
    "Github_ultra---o13020.json": "not",
    "JsonSchemaStore---package-configuration-schema.json": "oneOf",
}
# JSON-Schema-Test-Suite files (checked in) whose groups exercise the other rules: keywords
# with no `type` beside them, $ref by anchor, by `$id` base, $dynamicRef, dependentSchemas,
# a `false` then, a fractional multipleOf on integers, a name both `properties` and a
# pattern cover.
SUITE_FILES = [
    "maxLength.json",
    "patternProperties.json",
    "ref.json",
    "anchor.json",
    "dynamicRef.json",
    "dependentSchemas.json",
    "if-then-else.json",
    "multipleOf.json",
    "properties.json",
]

needs_data = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/data/maskbench-dev is absent")


@pytest.fixture(scope="module")
def bare_model():
    from engine.model.llama import Model

    m = Model.load(ModelSettings(path=str(tiny_model("llama-spm-bare")), n_ctx=64, n_threads=1))
    yield m
    m.close()


@pytest.mark.slow
@needs_data
def test_every_invalid_instance_xgrammar_lets_through_is_explained(bare_model):
    for name, keyword in SAMPLE.items():
        for case in load_cases(str(DEV / name)):
            result = check_case(bare_model, case, "xgrammar", "xgrammar")
            assert result.compiled and result.error is None, (name, result.error)
            unexplained = [(v.text[:80], v.errors) for v in result.verdicts if v.unexplained]
            assert result.unexplained == 0, (name, unexplained)
            gaps = {g.keyword for v in result.verdicts for g in v.explained_by}
            assert keyword in gaps, (name, gaps)


@pytest.mark.slow
def test_every_suite_instance_xgrammar_lets_through_is_explained(bare_model):
    for name in SUITE_FILES:
        for case in load_cases(str(SUITE / name)):
            result = check_case(bare_model, case, "xgrammar", "xgrammar")
            unexplained = [(v.text[:80], v.errors) for v in result.verdicts if v.unexplained]
            assert not result.crashed and result.unexplained == 0, (case.name, unexplained)
