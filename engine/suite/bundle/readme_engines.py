"""The bundle README's sections on the grammar in each engine's syntax, with each file's proof,
and on the requests in snippets/ and the server each is for.

Every text from the user or an engine that reaches these sections is escaped by the `md`
the caller passes (bundle_readme.md, which imports this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.suite.bundle import snippets
from engine.suite.bundle.grammar_files import (
    GBNF_FILE,
    LARK_FILE,
    XGRAMMAR_FILE,
    GrammarFile,
    GrammarProof,
    grammar_files,
)

if TYPE_CHECKING:
    from engine.suite.bundle.tested import Tested

# Who reads each file: the servers whose requests in snippets/ carry it.
_READERS = {
    GBNF_FILE: "llama-server, llama-cpp-python (its server and `LlamaGrammar`)",
    LARK_FILE: "vLLM's `guidance` backend, SGLang's `llguidance` backend; OpenAI's custom-tool "
    "grammar takes a subset of Lark (not checked here)",
    XGRAMMAR_FILE: "vLLM's and SGLang's `xgrammar` backend",
}
_MADE = {
    "gbnf": "`grammar.lark` is llguidance's own translation of the GBNF (its `gbnf_to_lark`, "
    "after rule names Lark would read as terminals are made distinct), and "
    "`grammar.xgrammar.ebnf` the GBNF with the two rewrites XGrammar needs (a `\\xHH` escape "
    "written `\\u00HH`, since XGrammar's `\\x` takes every hex digit that follows; the "
    "never-matching `ws-never` branch dropped, since XGrammar does not prune it). Each is "
    "exactly the text Maskscope's llguidance and xgrammar backends run.",
    "llguidance": "The llguidance compiler makes no GBNF: its grammar "
    "(`grammar.llguidance.json`) hands the schema to llguidance's own JSON Schema compiler. "
    "`grammar.lark` calls the same compiler from Lark (`%json`), for servers that take Lark. "
    "There is no GBNF or XGrammar file: llama.cpp's and XGrammar's converters would make "
    "other grammars from the schema, not this one.",
    "xgrammar": "The xgrammar compiler writes XGrammar's own EBNF, which only XGrammar reads "
    "(it uses constructs GBNF and Lark lack), so no GBNF or Lark file is made from it.",
    "regex": "The outlines compiler makes a regex, which only Outlines (outlines-core) reads; "
    "it is shipped as it ran and not run again (its index over the vocabulary takes minutes).",
}


Escape = Callable[[object], str]
_SHOWN = 120  # characters of a differing text the README shows


def grammars_section(tested: Tested, escape: Escape) -> str:
    lines = [
        "## The grammar in each engine's syntax",
        "",
        _how_proven(tested),
        "",
        "| file | syntax | read back by | texts judged alike | for |",
        "|---|---|---|---|---|",
    ]
    shipped = {g.path for g in tested.shipped_grammars()}
    left_out: list[str] = []
    for file in grammar_files(tested.compiled):
        proof = tested.proof_of(file)
        if file.path not in shipped:
            left_out.append(_left_out(file, proof, escape))
            continue
        name = f"`{file.path}`" + (" (tested)" if file.tested else "")
        engine = f"{file.engine} ({proof.version})" if proof else file.engine
        lines.append(
            f"| {name} | {file.syntax} | {engine} | {_judged(proof, escape)} | "
            f"{_READERS.get(file.path, 'its own engine only')} |"
        )
    lines += ["", _MADE[tested.compiled.kind]]
    lines += [f"- {line}" for line in left_out]
    lines += _differing(tested, escape)
    return "\n".join(lines)


def _how_proven(tested: Tested) -> str:
    proofs = tested.proofs
    total = proofs[0].total if proofs else 0
    if proofs and not total:
        return (
            "Each file is the tested grammar as one engine reads it. At export each was parsed "
            "back by its own engine, but the suite has no instances and the run no outputs, "
            "so there was no text to judge: give the suite known-good and known-bad "
            "`instances` to have each file proven."
        )
    return (
        "Each file is the tested grammar as one engine reads it. At export each was parsed "
        f"back by its own engine over the model's vocabulary and fed {total} known text(s) "
        "token by token, as `maskscope check` feeds an instance: the suite's known-good and "
        "known-bad instances (each as the grammar orders its keys and as written) and the "
        "outputs the test sampled. A file agrees when it accepts and rejects each text "
        f"exactly as the tested grammar did on the `{tested.suite.backend}` backend. No "
        "decoding is involved, so the proof costs seconds."
    )


def _judged(proof: GrammarProof | None, escape: Escape) -> str:
    if proof is None:
        return "not checked"
    if proof.unchecked:
        return f"not checked: {escape(proof.unchecked)}"
    if proof.error:
        return f"REFUSED: {escape(proof.error)}"
    word = "" if proof.agrees else " (DIFFERS)"
    return f"{proof.agreeing}/{proof.total}{word}"


def _left_out(file: GrammarFile, proof: GrammarProof | None, escape: Escape) -> str:
    why = file.refused or (proof.error if proof else "") or "it judged a text otherwise"
    return f"`{file.path}` ({file.engine}) is not shipped: {escape(why)}."


def _differing(tested: Tested, escape: Escape) -> list[str]:
    """The texts a shipped file judged otherwise than the tested grammar, one line each."""
    out = []
    for proof in tested.proofs:
        for text in proof.differing:
            shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
            out.append(f"- `{proof.path}` on {proof.engine} judged otherwise: {escape(shown)}")
    return out


def requests_section(tested: Tested) -> str:
    grammars = {g.path: g.text for g in tested.shipped_grammars()}
    settings = tested.suite.settings()
    made = snippets.requests("", "", settings, grammars, {}, tested.suite.name, "")
    lines = [
        "## Requests for each server",
        "",
        "`python3 snippets/post.py snippets/REQUEST.json [BASE_URL]` sends one (the base URL "
        "is the argument, else `$MASKSCOPE_BASE_URL`, else the server's usual address below), "
        "checks the HTTP status, reads the text where that endpoint puts it and validates it "
        "against `schema.json` (with the `jsonschema` package where it is installed, else as "
        "JSON only, and says so). It exits 1 on an HTTP error, no server, or an invalid "
        "answer. `snippets/servers.json` holds the table below for it.",
        "",
        "| request | server | endpoint | sends | start one with |",
        "|---|---|---|---|---|",
    ]
    for r in made:
        lines.append(
            f"| `{r.file}` | {r.server} | `{r.path}` at {r.base_url} | `{r.carries}` | "
            f"`{r.start}` |"
        )
    lines += [
        "",
        f"Each sends what the test used: temperature {settings.temperature:g}, seed "
        f"{settings.seed}, at most {settings.max_tokens} tokens, with top-k, top-p, min-p and "
        "the repeat penalty turned off in that server's own spelling. The fields are from "
        "each server's documentation:",
        "",
    ]
    lines += [f"- {r.server}: {r.docs}" for r in _one_per_server(made)]
    lines += [
        "",
        "Maskscope's tests post the llama-server and llama-cpp-python requests to those real "
        "servers. vLLM and SGLang need GPU stacks; their requests carry the files above, "
        "whose proof is the parse and the verdicts of the same engine they run.",
    ]
    return "\n".join(lines)


def _one_per_server(made: list[snippets.Request]) -> list[snippets.Request]:
    seen: dict[str, snippets.Request] = {}
    for r in made:
        seen.setdefault(r.server.split(",")[0], r)
    return list(seen.values())
