"""What a tested suite is, as the bundle states it: the suite, its compiled grammar, the
run's summary and verdict, the provenance and where llama-server's converter departs.

Apart from engine/suite/bundle/export.py so that the bundle's README and report, which read it,
and the bundle, which writes them, do not import each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.grammar.compile import CompiledSchema
from engine.grammar.report import Unenforced
from engine.runs.provenance import Provenance
from engine.runs.saved import SavedRun
from engine.suite.bundle.grammar_files import (
    GBNF_FILE,
    LLGUIDANCE_FILE,
    REGEX_FILE,
    XGRAMMAR_FILE,
    GrammarFile,
    GrammarProof,
    grammar_files,
)
from engine.suite.format import Suite
from engine.suite.metrics import Summary, Verdict

LLGUIDANCE_GRAMMAR = LLGUIDANCE_FILE
# The file a bundle ships the tested grammar in, by kind (engine.settings.GRAMMAR_KINDS): each
# engine's own text under a name that says which engine reads it.
GRAMMAR_FILES = {
    "gbnf": GBNF_FILE,
    "llguidance": LLGUIDANCE_FILE,
    "regex": REGEX_FILE,
    "xgrammar": XGRAMMAR_FILE,
}


@dataclass(frozen=True, slots=True)
class ConverterGap:
    """Where llama-server's own JSON-Schema converter (`json_schema`, `response_format`)
    departs from the tested grammar, for this schema."""

    same_grammar: bool  # the converter's grammar is the tested one, character for character
    skipped: tuple[Unenforced, ...]  # keywords the converter does not enforce
    refused: str = ""  # why the converter cannot make a grammar of the schema at all
    # Read with llama.cpp's C++ converter, the server's own (else llama-cpp-python's Python
    # port stood in for it: engine/grammar/compilers/llamacpp/converter.py).
    native: bool = True


@dataclass(frozen=True, slots=True)
class Decoded:
    """When the tested samples were decoded, and how many the run read back from the run
    cache (engine/suite/cache.py), where a sample keeps the provenance of its decoding: an
    export of cached samples was tested then, not at the export."""

    first: str  # ISO 8601, UTC: the earliest and the latest decoding
    last: str
    n_cached: int
    n_samples: int

    @classmethod
    def of(cls, runs: Sequence[SavedRun], n_cached: int) -> Decoded | None:
        """From the runs' own provenance; None where no run recorded its time."""
        times = sorted(r.provenance.made_at for r in runs if r.provenance is not None)
        return cls(times[0], times[-1], n_cached, len(runs)) if times else None

    @property
    def when(self) -> str:
        return self.first if self.first == self.last else f"{self.first} to {self.last}"

    @property
    def cache_text(self) -> str:
        """`2 of 5 samples read back from the cache`; empty when every one was decoded."""
        if not self.n_cached:
            return ""
        return f"{self.n_cached} of {self.n_samples} samples read back from the cache"


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
    # Each grammar file, read back by its engine, against the tested grammar (made at export;
    # none for a run on a server, which ships no bundle).
    proofs: tuple[GrammarProof, ...] = ()
    decoded: Decoded | None = None  # when the samples were decoded; None: at `provenance`'s

    @property
    def tested_at(self) -> str:
        """When the samples were decoded (a cached one when it was, not now), with how many
        came from the run cache."""
        if self.decoded is None:
            return self.provenance.made_at
        cached = self.decoded.cache_text
        return f"{self.decoded.when} ({cached})" if cached else self.decoded.when

    @property
    def grammar_file(self) -> str:
        return GRAMMAR_FILES[self.compiled.kind]

    @property
    def grammar_text(self) -> str:
        return self.compiled.grammar_text

    def proof_of(self, file: GrammarFile) -> GrammarProof | None:
        """The proof made on exactly this file's text; None when there is none."""
        return next(
            (p for p in self.proofs if p.path == file.path and p.sha256 == file.sha256), None
        )

    def shipped_grammars(self) -> list[GrammarFile]:
        """The grammar files the bundle ships: the tested one always; a translation when it
        was made and no proof found that it differs from the tested grammar (one whose engine
        is not installed here ships, marked unchecked)."""
        shipped = []
        for file in grammar_files(self.compiled):
            proof = self.proof_of(file)
            if file.tested or (file.text and not (proof is not None and proof.differs)):
                shipped.append(file)
        return shipped

    def grammars_json(self) -> list[dict]:
        """report.json's `grammars`: each grammar file made, whether it ships, and its proof."""
        shipped = {g.path for g in self.shipped_grammars()}
        out = []
        for file in grammar_files(self.compiled):
            line = {"file": file.path, "syntax": file.syntax, "engine": file.engine}
            line |= {"tested": file.tested, "shipped": file.path in shipped}
            if file.refused:
                line["refused"] = file.refused
            proof = self.proof_of(file)
            line["proof"] = None if proof is None else proof.to_json()
            out.append(line)
        return out
