"""The production engines a schema may end up on, as data: one row per target.

Each local target names the Maskscope compiler that stands for it (looked up in
engine.settings.COMPILERS at report time, so a compiler that a later Maskscope adds, such
as xgrammar, is used as soon as it is there), the distribution whose installed version the
report shows, and the mask backend that runs its grammar as production does (a suite's known
instances are fed through it: engine/engines/wrong.py). OpenAI's strict mode has no local
engine: its row is a documented profile (engine/engines/openai_profile.py), dated by the
documentation it was read from.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.settings import DEFAULT_BACKEND


@dataclass(frozen=True, slots=True)
class Target:
    """A production engine. `compiler` is None for a profile that Maskscope cannot run."""

    id: str
    label: str
    engine: str
    compiler: str | None
    package: str | None  # the distribution whose version is reported
    # The mask backend its grammar runs on in production: llama.cpp's sampler for the
    # converter, XGrammar's GrammarMatcher, llguidance, outlines-core's Index; Maskscope's
    # GBNF on the backend the window runs it on by default. None: nothing runs here.
    backend: str | None = None


TARGETS: tuple[Target, ...] = (
    Target(
        "llamacpp",
        "llama.cpp / llama-server / Ollama",
        "llama.cpp's JSON-Schema converter",
        "llamacpp",
        "llama-cpp-python",
        "llamacpp",
    ),
    Target(
        "vllm-xgrammar", "vLLM / SGLang (XGrammar)", "XGrammar", "xgrammar", "xgrammar",
        "xgrammar",
    ),
    Target(
        "vllm-guidance", "vLLM / SGLang (llguidance)", "llguidance", "llguidance", "llguidance",
        "llguidance",
    ),
    Target("outlines", "Outlines", "outlines-core", "outlines", "outlines-core", "outlines"),
    Target("openai", "OpenAI Structured Outputs (strict)", "OpenAI API", None, None),
    Target(
        "maskscope", "Maskscope", "Maskscope's own compiler", "maskscope", "maskscope",
        DEFAULT_BACKEND,
    ),
)  # fmt: skip
TARGET_IDS = tuple(t.id for t in TARGETS)


def target(target_id: str) -> Target:
    for row in TARGETS:
        if row.id == target_id:
            return row
    raise KeyError(target_id)
