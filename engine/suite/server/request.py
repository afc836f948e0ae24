"""What `maskscope test --server URL` sends an OpenAI-compatible server, and how it reads the
reply. Three modes, each testing something else:

- "grammar": POST /v1/completions with llama.cpp's `grammar` field holding exactly the GBNF
  Maskscope compiled and tested. The prompt is the text the local run feeds the model: the
  rendered template, wrapped in the model's chat template when the suite asks for it (done
  here with the local model, so both sides see the same text; /v1/completions adds no
  template of its own). This tests Maskscope's grammar on the server's model.
- "response_format": POST /v1/chat/completions with the schema in `response_format`: the
  server's own schema converter is tested. The rendered prompt is the user message, so the
  server wraps it in its chat template (the local run does so only with chat_template).
  OpenAI's {"type": "json_schema", "json_schema": {...}} is tried first; a server that refuses
  it gets {"type": "json_object", "schema": ...} (llama-cpp-python's form), and the form that
  worked is kept for the rest of the run. llama-server takes the OpenAI form as sent.
- "completions+response_format": `response_format` on /v1/completions. Some servers honour
  it there; llama-cpp-python's silently ignores it, which the fail-open check catches, and so
  does llama-server 0.3.36's (tools/server/server-common.cpp, oaicompat_completion_params_parse
  copies the field and nothing reads it), where its own `json_schema` field binds.

The suite's sampler is sent in full: Maskscope samples from softmax(logits / T) over the whole
vocabulary, so top_k, top_p, min_p and the repeat penalty are turned off, where servers would
otherwise apply their own defaults (llama-cpp-python: top_k 40, top_p 0.95, min_p 0.05,
repeat_penalty 1.1). Sample i of a case sends seed = the suite's seed + i, as locally.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import SuiteError
from engine.settings import GenerationSettings
from engine.suite.server.client import HttpRefusal

if TYPE_CHECKING:  # the command line reads MODES: building it must not load llama.cpp
    from engine.grammar.compile import CompiledSchema

GRAMMAR = "grammar"
RESPONSE_FORMAT = "response_format"
COMPLETIONS_RESPONSE_FORMAT = "completions+response_format"
MODES = (GRAMMAR, RESPONSE_FORMAT, COMPLETIONS_RESPONSE_FORMAT)

# The forms of response_format, in the order they are tried.
JSON_SCHEMA = "json_schema"  # OpenAI's
JSON_OBJECT = "json_object"  # {"type": "json_object", "schema": ...}: llama-cpp-python's
FORMS = (JSON_SCHEMA, JSON_OBJECT)

_SAMPLER_OFF = {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}
# The chosen token's logprob comes with one alternative: llama-server returns logprobs only
# when it computes top-N probabilities with N > 0 (tools/server/server-context.cpp: `n_probs >
# 0`; /v1/completions reads `logprobs` as n_probs, chat reads `top_logprobs`), where
# llama-cpp-python's server gives the chosen token's with 0 too.
_TOP_LOGPROBS = 1


@dataclass(frozen=True, slots=True)
class ServerOptions:
    url: str
    mode: str = GRAMMAR
    concurrency: int = 4  # requests in flight
    timeout_s: float = 120.0  # per request
    # Token logprobs cost llama-cpp-python's server about 0.5 s a token (it scores the whole
    # vocabulary in Python); llama-server returns them almost free.
    logprobs: bool = True


@dataclass(frozen=True, slots=True)
class Answer:
    """One reply, read back."""

    text: str
    finish_reason: str  # the server's: "stop", "length", ...
    completion_tokens: int | None
    tokens: tuple[str, ...] = ()
    logprobs: tuple[float, ...] = ()


def check_mode(mode: str, compiled: CompiledSchema) -> None:
    if mode not in MODES:
        raise SuiteError(f"unknown server mode {mode!r}; choose one of {', '.join(MODES)}")
    if mode == GRAMMAR and not compiled.gbnf:
        raise SuiteError(
            f"the {compiled.compiler} compiler makes no GBNF for the server's `grammar` field: "
            "choose another compiler in the suite, or --server-mode response_format"
        )


def response_format(form: str, schema: Any) -> dict[str, Any]:
    if form == JSON_SCHEMA:
        named = {"name": "maskscope_suite", "schema": schema, "strict": True}
        return {"type": "json_schema", "json_schema": named}
    return {"type": "json_object", "schema": schema}


def request_for(
    mode: str,
    form: str,
    prompt: str,
    settings: GenerationSettings,
    compiled: CompiledSchema,
    *,
    model: str | None,
    logprobs: bool,
) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of one sample's request; `prompt` is the text the model reads
    (templated already for the completions modes)."""
    body: dict[str, Any] = {
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
        "seed": settings.seed,
        **_SAMPLER_OFF,
    }
    if model:
        body["model"] = model
    if mode == RESPONSE_FORMAT:
        body |= {
            "messages": [{"role": "user", "content": prompt}],
            "response_format": response_format(form, compiled.schema),
        }
        if logprobs:
            body |= {"logprobs": True, "top_logprobs": _TOP_LOGPROBS}
        return "/v1/chat/completions", body
    body["prompt"] = prompt
    if mode == GRAMMAR:
        body["grammar"] = compiled.gbnf
    else:
        body["response_format"] = response_format(form, compiled.schema)
    if logprobs:
        body["logprobs"] = _TOP_LOGPROBS
    return "/v1/completions", body


def refuses_format(refusal: HttpRefusal) -> bool:
    """Whether an error status says the server does not take this form of response_format."""
    said = refusal.message.lower()
    return refusal.status >= 400 and any(w in said for w in ("response_format", "json_schema"))


def read_answer(mode: str, data: Any) -> Answer:
    """The output, the server's finish reason, its token count and logprobs, from a reply;
    SuiteError for a reply that is no completion at all, or one with a field of the wrong
    type (named, as `$.usage`)."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] if mode == RESPONSE_FORMAT else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise SuiteError(f"the server's reply is no completion: {str(data)[:200]}") from None
    field = "$.choices[0].message.content" if mode == RESPONSE_FORMAT else "$.choices[0].text"
    _typed(text, str | None, field, "text")
    _typed(choice, dict, "$.choices[0]", "an object")
    _typed(choice.get("finish_reason"), str | None, "$.choices[0].finish_reason", "text")
    usage = _typed(data.get("usage"), dict | None, "$.usage", "an object") or {}
    used = usage.get("completion_tokens")
    if used is not None and (isinstance(used, bool) or not isinstance(used, int) or used < 0):
        _wrong("$.usage.completion_tokens", "a count", used)
    tokens, logprobs = _logprobs(choice.get("logprobs"))
    return Answer(text or "", str(choice.get("finish_reason") or ""), used, tokens, logprobs)


def _typed(value: Any, kind: Any, field: str, what: str) -> Any:
    """`value` when it is of `kind`; a SuiteError naming the field otherwise."""
    if not isinstance(value, kind):
        _wrong(field, what, value)
    return value


def _wrong(field: str, what: str, value: Any) -> None:
    raise SuiteError(
        f"the server's reply has {field} = {json.dumps(value, default=str)[:80]}: not {what}"
    )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e308


def _logprobs(found: Any) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Tokens and their logprobs from either endpoint's shape: completions give
    {"tokens", "token_logprobs"}, chat gives {"content": [{"token", "logprob"}]}."""
    if not isinstance(found, dict):
        return (), ()
    where = "$.choices[0].logprobs"
    if isinstance(found.get("content"), list):
        for i, t in enumerate(found["content"]):
            _typed(t, dict, f"{where}.content[{i}]", "an object")
        pairs = [(str(t.get("token", "")), t.get("logprob")) for t in found["content"]]
    else:
        tokens = _typed(found.get("tokens") or [], list, f"{where}.tokens", "a list")
        lps = _typed(found.get("token_logprobs") or [], list, f"{where}.token_logprobs", "a list")
        pairs = list(zip(tokens, lps, strict=False))
    # A JSON number may be an integer no float holds: such a logprob is no logprob.
    pairs = [(str(t), float(lp)) for t, lp in pairs if _finite(lp)]
    return tuple(t for t, _ in pairs), tuple(lp for _, lp in pairs)
