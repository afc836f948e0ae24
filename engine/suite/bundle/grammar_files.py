"""The tested grammar in each engine's own syntax, and the proof that each is the same language.

A bundle ships the grammar that was tested, and beside it the same grammar as every other
engine reads it. Each translation is exactly the text Maskscope's own backend for that engine
runs (engine/masking/grammar_text.py), so it is the text that was measured there:

- GBNF (`grammar.gbnf`): llama.cpp, llama-server, llama-cpp-python;
- Lark (`grammar.lark`): llguidance, behind vLLM's `guidance` backend, SGLang's `llguidance`
  backend and OpenAI's custom-tool grammar;
- XGrammar's EBNF (`grammar.xgrammar.ebnf`): vLLM's and SGLang's `xgrammar` backend.

The proof needs no decoding: each file is parsed back by its own engine (llama.cpp's grammar
parser, llguidance's Lark parser, XGrammar's EBNF parser) over the model's vocabulary, and
every known text is fed through it token by token as `maskscope check` feeds an instance
(engine/check/feed.py). The texts are the suite's known-good and known-bad instances and the
outputs the test sampled; a file agrees when it accepts and rejects each exactly as the tested
grammar did on the backend the suite ran.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from engine.check.feed import feed_text
from engine.check.run import key_order
from engine.check.write import write
from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compile import CompiledSchema
from engine.masking import make_backend
from engine.masking.llguidance import lark_text
from engine.masking.xgrammar import xgrammar_gbnf
from engine.settings import missing_engine

if TYPE_CHECKING:
    from engine.masking import MaskBackend
    from engine.model.llama import Model
    from engine.suite.format import Suite

GBNF_FILE = "grammar.gbnf"
LARK_FILE = "grammar.lark"
XGRAMMAR_FILE = "grammar.xgrammar.ebnf"
LLGUIDANCE_FILE = "grammar.llguidance.json"
REGEX_FILE = "grammar.outlines.regex"
# The engine that reads each file, and the backend of Maskscope's that stands for it.
LLAMACPP, LLGUIDANCE, XGRAMMAR, OUTLINES = "llama.cpp", "llguidance", "XGrammar", "outlines-core"
_BACKEND = {LLAMACPP: "llamacpp", LLGUIDANCE: "llguidance", XGRAMMAR: "xgrammar"}
_PACKAGE = {LLAMACPP: "llama_cpp_python", LLGUIDANCE: "llguidance", XGRAMMAR: "xgrammar"}
# Differing texts a proof keeps, to name in the README; the count covers them all.
_KEEP_DIFFERING = 3


@dataclass(frozen=True, slots=True)
class GrammarFile:
    """One grammar file of the bundle, in one engine's syntax."""

    path: str
    text: str  # "" when the translation failed: then `refused` says why, and it ships not
    syntax: str
    engine: str
    tested: bool  # the tested grammar itself; the others are translations of it
    refused: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class GrammarProof:
    """How one grammar file, read by its own engine, judged the known texts."""

    path: str
    sha256: str  # of the file's text the proof was made on
    engine: str
    version: str
    agreeing: int
    total: int
    error: str = ""  # the engine refused the file: nothing was judged
    unchecked: str = ""  # why the file was not run (its engine is not installed here)
    differing: tuple[str, ...] = ()  # the first texts it judged otherwise than the tested one

    @property
    def agrees(self) -> bool:
        return not self.error and not self.unchecked and self.agreeing == self.total

    @property
    def differs(self) -> bool:
        """The engine refused the file, or judged a text otherwise than the tested grammar."""
        return not self.unchecked and not self.agrees

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.path,
            "engine": self.engine,
            "engine_version": self.version,
            "agreeing": self.agreeing,
            "texts": self.total,
            "agrees": self.agrees,
        }
        if self.error:
            out["error"] = self.error
        if self.unchecked:
            out["unchecked"] = self.unchecked
        if self.differing:
            out["differing"] = list(self.differing)
        return out


def grammar_files(compiled: CompiledSchema) -> list[GrammarFile]:
    """The tested grammar and each translation of it that an engine reads as the same text
    Maskscope's backend for it runs. Pure text: no model, no engine is loaded."""
    if compiled.kind == "gbnf":
        gbnf = compiled.gbnf
        return [
            GrammarFile(GBNF_FILE, gbnf, "GBNF", LLAMACPP, tested=True),
            _translated(LARK_FILE, "Lark", LLGUIDANCE, lambda: lark_text(gbnf)),
            GrammarFile(XGRAMMAR_FILE, xgrammar_gbnf(gbnf), "XGrammar EBNF", XGRAMMAR, False),
        ]
    native = compiled.grammar_text
    if compiled.kind == "llguidance":
        tested = GrammarFile(LLGUIDANCE_FILE, native, "llguidance JSON", LLGUIDANCE, True)
        return [tested, _translated(LARK_FILE, "Lark", LLGUIDANCE, lambda: _json_lark(native))]
    if compiled.kind == "xgrammar":
        return [GrammarFile(XGRAMMAR_FILE, native, "XGrammar EBNF", XGRAMMAR, tested=True)]
    return [GrammarFile(REGEX_FILE, native, "regex", OUTLINES, tested=True)]


def _translated(path: str, syntax: str, engine: str, make: Any) -> GrammarFile:
    try:
        return GrammarFile(path, make(), syntax, engine, tested=False)
    except GrammarError as exc:
        return GrammarFile(path, "", syntax, engine, tested=False, refused=exc.message)


def _json_lark(native: str) -> str:
    """llguidance's compiled-schema grammar as Lark: its JSON Schema compiler, called from
    Lark's `%json` with the same schema and llguidance's defaults."""
    grammars = json.loads(native).get("grammars") or [{}]
    schema = grammars[0].get("json_schema")
    if len(grammars) != 1 or schema is None:
        raise GrammarError("llguidance's grammar is not one JSON schema: no Lark form")
    return "%llguidance {}\n\nstart: %json " + json.dumps(schema, indent=2) + "\n"


def known_texts(suite: Suite, outputs: list[str]) -> list[str]:
    """What the proof feeds: each instance as the tested grammar orders its keys and as it
    is written (as `maskscope check` tries them), each raw instance as is, and every sampled
    output; no text twice."""
    arrange = key_order(suite.compiler)
    texts: list[str] = []
    for instance in suite.instances:
        if instance.text is not None:
            texts.append(instance.text)
            continue
        # A schema too deep to walk: the instance's own order it is.
        with contextlib.suppress(RecursionError):
            texts.append(write(arrange(suite.schema, instance.data)))
        texts.append(write(instance.data))
    return list(dict.fromkeys([*texts, *outputs]))


def prove(
    model: Model, compiled: CompiledSchema, backend: str, files: list[GrammarFile], texts: list[str]
) -> tuple[GrammarProof, ...]:
    """Each file (that was made) against the tested grammar on `backend`, over `texts`. The
    tested grammar is run only when some file's engine can be: an outlines suite's regex is
    not run again (its index over the vocabulary takes minutes)."""
    made = [f for f in files if f.text]
    if not any(f.engine in _BACKEND for f in made):
        return tuple(_prove_one(model, f, texts, []) for f in made)
    reference = _verdicts(model, make_backend(backend, model, compiled), texts)
    return tuple(_prove_one(model, f, texts, reference) for f in made)


def _prove_one(
    model: Model, file: GrammarFile, texts: list[str], reference: list[bool]
) -> GrammarProof:
    engine = file.engine
    made = GrammarProof(file.path, file.sha256, engine, _version(engine), 0, len(texts))
    if engine not in _BACKEND:  # outlines-core: its Index over the vocabulary takes minutes
        return replace(made, unchecked="not run again: the tested regex ships as it ran")
    if (missing := missing_engine(_BACKEND[engine])) is not None:
        return replace(made, unchecked=missing)
    try:
        backend = _engine_backend(model, file)
    except MaskscopeError as exc:
        return replace(made, error=f"{engine} refused the file: {exc}")
    verdicts = _verdicts(model, backend, texts)
    differing = [t for t, mine, ref in zip(texts, verdicts, reference, strict=True) if mine != ref]
    return replace(
        made, agreeing=len(texts) - len(differing), differing=tuple(differing[:_KEEP_DIFFERING])
    )


def _engine_backend(model: Model, file: GrammarFile) -> MaskBackend:
    """The engine's backend reading the file's text exactly, as the compiler's output would
    reach it: GBNF as a GBNF compiler's, Lark and llguidance JSON as llguidance's own
    grammar, XGrammar's EBNF as the xgrammar compiler's."""
    if file.engine == LLAMACPP:
        compiled = CompiledSchema(True, file.text, "", compiler="llamacpp")
    elif file.engine == LLGUIDANCE:
        import llguidance

        native = file.text
        if file.syntax == "Lark":
            native = llguidance.LLMatcher.grammar_from_lark(file.text)
        compiled = CompiledSchema(True, "", "", compiler="llguidance", native=native)
    else:
        compiled = CompiledSchema(True, "", "", compiler="xgrammar", native=file.text)
    return make_backend(_BACKEND[file.engine], model, compiled)


def _verdicts(model: Model, backend: MaskBackend, texts: list[str]) -> list[bool]:
    try:
        return [_accepts(model, backend, text) for text in texts]
    finally:
        backend.close()


def _accepts(model: Model, backend: MaskBackend, text: str) -> bool:
    try:
        return feed_text(model, backend, text).accepted
    except GrammarError:  # llguidance refusing a token its own mask allowed
        return False


def _version(engine: str) -> str:
    """The package that carries the engine here, and its version."""
    package = _PACKAGE.get(engine, "outlines_core")
    try:
        return f"{package.replace('_', '-')} {version(package)}"
    except PackageNotFoundError:
        return f"{package.replace('_', '-')}: not installed"
