"""What a tested suite is, as the bundle states it: the suite, its compiled grammar, the
run's summary and verdict, the provenance and where llama-server's converter departs.

Apart from engine/suite/bundle.py so that the bundle's README and report, which read it,
and the bundle, which writes them, do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.grammar.compile import CompiledSchema
from engine.grammar.report import Unenforced
from engine.runs.provenance import Provenance
from engine.suite import snippets
from engine.suite.format import Suite
from engine.suite.metrics import Summary, Verdict

LLGUIDANCE_GRAMMAR = "grammar.llguidance.json"
# The file a bundle ships the tested grammar in, by kind (engine.settings.GRAMMAR_KINDS): each
# engine's own text under a name that says which engine reads it.
GRAMMAR_FILES = {
    "gbnf": snippets.GRAMMAR_FILE,
    "llguidance": LLGUIDANCE_GRAMMAR,
    "regex": "grammar.outlines.regex",
    "xgrammar": "grammar.xgrammar.ebnf",
}


@dataclass(frozen=True, slots=True)
class ConverterGap:
    """Where llama-server's own JSON-Schema converter (`json_schema`, `response_format`)
    departs from the tested grammar, for this schema."""

    same_grammar: bool  # the converter's grammar is the tested one, character for character
    skipped: tuple[Unenforced, ...]  # keywords the converter does not enforce
    refused: str = ""  # why the converter cannot make a grammar of the schema at all


@dataclass(frozen=True, slots=True)
class Tested:
    """Everything the bundle states about one tested suite."""

    suite: Suite
    compiled: CompiledSchema
    summary: Summary
    verdict: Verdict
    provenance: Provenance
    model_prompt: str  # the first case's prompt as the model read it (chat template applied)
    user_prompt: str  # the same before any chat template
    converter: ConverterGap
    exit_code: int

    @property
    def grammar_file(self) -> str:
        return GRAMMAR_FILES[self.compiled.kind]

    @property
    def grammar_text(self) -> str:
        return self.compiled.grammar_text
