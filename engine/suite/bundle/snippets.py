"""The bundle's requests: one JSON body per server that takes the tested grammar (or, for
`response_format`, the schema), and snippets/servers.json, which says for each what server it
is for, how to start one, its endpoint and where its fields are documented. snippets/post.py
sends any of them and fails loudly (engine/suite/bundle/snippet_scripts.py).

Each request sends what the tested run used: the prompt as the model read it, max_tokens,
temperature and seed, and every sampler Maskscope does not use turned off (top-k, top-p,
min-p, the repeat penalty), each in its server's own spelling. Every field is from the
server's documentation or request type, cited in servers.json and the bundle's README:

- llama-server (llama.cpp's tools/server/README.md, as vendored by llama-cpp-python 0.3.36):
  `/completion` takes `prompt`, `n_predict`, `grammar`, `seed`, `top_k` (0: off), `top_p`,
  `min_p`, `repeat_penalty`; `/v1/chat/completions` takes `response_format`
  `{"type": "json_schema", "json_schema": {"schema": ...}}` and the same sampler fields.
- llama-cpp-python's server (llama_cpp/server/types.py, CreateCompletionRequest):
  `/v1/completions` takes `grammar` and `max_tokens` (it ignores `n_predict`, and it ignores
  `response_format` on this endpoint without an error, so only `grammar` binds there).
- vLLM (docs/features/structured_outputs.md; `guided_grammar` before v0.12):
  `structured_outputs: {"grammar": ...}` on `/v1/completions`, compiled by the backend the
  server was started with (`--structured-outputs-config.backend xgrammar` or `guidance`:
  vllm/v1/structured_output/backend_*.py); `top_k` -1 and `repetition_penalty` 1 are off.
- SGLang (docs basic_usage/sampling_params, sampling_params.py): `/generate` takes `text` and
  `sampling_params` with `ebnf`, `max_new_tokens`, `sampling_seed`, `top_k` (-1: off); its
  xgrammar backend (the default) compiles the EBNF, its llguidance backend reads Lark
  (python/sglang/srt/constrained/llguidance_backend.py: `grammar_from("ebnf", ...)`).
- Any OpenAI-compatible server: `/v1/chat/completions` with `response_format` json_schema,
  OpenAI's own fields only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.settings import GenerationSettings
from engine.suite.bundle.grammar_files import GBNF_FILE, LARK_FILE, XGRAMMAR_FILE
from engine.suite.bundle.snippet_scripts import LLAMA_CPP_PYTHON_PY, POST_PY

if TYPE_CHECKING:
    from engine.suite.bundle.tested import Tested

GRAMMAR_FILE = GBNF_FILE
SCHEMA_FILE = "schema.json"
SERVER_URL = "http://127.0.0.1:8080"  # llama-server's own default
SERVERS_FILE = "snippets/servers.json"
# OpenAI's json_schema name: letters, digits, _ and -, at most 64 characters.
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
_LLAMA_CPP_DOCS = (
    "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (the copy in "
    "llama-cpp-python 0.3.36's vendor/llama.cpp)"
)
_LLAMA_CPP_OFF = {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}
_VLLM_DOCS = (
    "https://docs.vllm.ai/en/latest/features/structured_outputs/ (vLLM before 0.12: "
    "guided_grammar instead of structured_outputs.grammar)"
)
_VLLM_OFF = {"top_k": -1, "top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0}
_SGLANG_DOCS = "https://docs.sglang.io/basic_usage/sampling_params.html"


@dataclass(frozen=True, slots=True)
class Request:
    """One request of the bundle and the server it is for."""

    file: str  # its name in snippets/
    server: str
    start: str  # how to start such a server
    base_url: str  # its usual local address
    path: str
    answer: str  # where the reply holds the text: snippets/post.py's answer_text
    carries: str  # the bundle file whose grammar (or schema) it sends
    docs: str
    body: dict[str, Any]

    def meta(self) -> dict[str, str]:
        return {
            "server": self.server,
            "start": self.start,
            "base_url": self.base_url,
            "path": self.path,
            "answer": self.answer,
            "carries": self.carries,
            "docs": self.docs,
        }


def schema_name(suite_name: str) -> str:
    """The `json_schema.name` an OpenAI-compatible server requires, from the suite's name."""
    name = _NAME_CHARS.sub("_", suite_name).strip("_")[:64]
    return name or "schema"


def requests(
    prompt: str,
    user_prompt: str,
    settings: GenerationSettings,
    grammars: dict[str, str],
    schema: Any,
    suite_name: str,
    model: str,
) -> list[Request]:
    """Every request the bundle ships: `prompt` is the text the model read, `user_prompt`
    the same before any chat template (the chat requests send it as the user's message);
    `grammars` the shipped grammar files by path. A server whose syntax the bundle has no
    file in gets no request."""
    made: list[Request] = []
    if GBNF_FILE in grammars:
        made += _llama_cpp(prompt, settings, grammars[GBNF_FILE])
    if LARK_FILE in grammars:
        made += _guidance(prompt, settings, grammars[LARK_FILE])
    if XGRAMMAR_FILE in grammars:
        made += _xgrammar(prompt, settings, grammars[XGRAMMAR_FILE])
    made += _response_format(user_prompt, settings, schema, suite_name, model)
    return made


def _llama_cpp(prompt: str, s: GenerationSettings, gbnf: str) -> list[Request]:
    sampler = {"temperature": s.temperature, "seed": s.seed, **_LLAMA_CPP_OFF}
    server = Request(
        "llama_server_grammar.json", "llama-server", "llama-server -m MODEL.gguf --port 8080",
        "http://127.0.0.1:8080", "/completion", "content", GBNF_FILE, _LLAMA_CPP_DOCS,
        {"prompt": prompt, "n_predict": s.max_tokens, **sampler, "grammar": gbnf},
    )  # fmt: skip
    python = Request(
        "llama_cpp_python_server.json", "llama-cpp-python's server",
        "python -m llama_cpp.server --model MODEL.gguf --port 8000", "http://127.0.0.1:8000",
        "/v1/completions", "choices.text", GBNF_FILE,
        "https://llama-cpp-python.readthedocs.io/en/latest/server/ (CreateCompletionRequest "
        "in llama_cpp/server/types.py: grammar, max_tokens, top_k, min_p, repeat_penalty)",
        {"prompt": prompt, "max_tokens": s.max_tokens, **sampler, "grammar": gbnf},
    )  # fmt: skip
    return [server, python]


def _guidance(prompt: str, s: GenerationSettings, lark: str) -> list[Request]:
    return [
        _vllm("vllm_guidance.json", "guidance", prompt, s, lark),
        _sglang("sglang_llguidance.json", "llguidance", prompt, s, lark, LARK_FILE),
    ]


def _xgrammar(prompt: str, s: GenerationSettings, ebnf: str) -> list[Request]:
    return [
        _vllm("vllm_xgrammar.json", "xgrammar", prompt, s, ebnf),
        _sglang("sglang_xgrammar.json", "xgrammar", prompt, s, ebnf, XGRAMMAR_FILE),
    ]


def _vllm(file: str, backend: str, prompt: str, s: GenerationSettings, grammar: str) -> Request:
    carries = LARK_FILE if backend == "guidance" else XGRAMMAR_FILE
    return Request(
        file, f"vLLM, structured-outputs backend {backend}",
        f"vllm serve MODEL --structured-outputs-config.backend {backend}",
        "http://127.0.0.1:8000", "/v1/completions", "choices.text", carries, _VLLM_DOCS,
        {
            "prompt": prompt, "max_tokens": s.max_tokens, "temperature": s.temperature,
            "seed": s.seed, **_VLLM_OFF, "structured_outputs": {"grammar": grammar},
        },
    )  # fmt: skip


def _sglang(
    file: str, backend: str, prompt: str, s: GenerationSettings, grammar: str, carries: str
) -> Request:
    sampling = {
        "max_new_tokens": s.max_tokens, "temperature": s.temperature, "sampling_seed": s.seed,
        "top_k": -1, "top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0, "ebnf": grammar,
    }  # fmt: skip
    return Request(
        file, f"SGLang, grammar backend {backend}",
        f"python -m sglang.launch_server --model-path MODEL --grammar-backend {backend}",
        "http://127.0.0.1:30000", "/generate", "text", carries, _SGLANG_DOCS,
        {"text": prompt, "sampling_params": sampling},
    )  # fmt: skip


def openai_request(
    user_prompt: str, schema: Any, suite_name: str, s: GenerationSettings, model: str
) -> dict[str, Any]:
    """An OpenAI-compatible chat request with `response_format` json_schema, strict: OpenAI's
    own fields only."""
    form = {
        "type": "json_schema",
        "json_schema": {"name": schema_name(suite_name), "schema": schema, "strict": True},
    }
    chat = {"messages": [{"role": "user", "content": user_prompt}], "max_tokens": s.max_tokens}
    return {"model": model, **chat, "temperature": s.temperature, "seed": s.seed, "top_p": 1.0,
            "response_format": form}  # fmt: skip


def _response_format(
    user_prompt: str, s: GenerationSettings, schema: Any, suite_name: str, model: str
) -> list[Request]:
    body = openai_request(user_prompt, schema, suite_name, s, model)
    chat = {k: v for k, v in body.items() if k not in ("model", "top_p")}
    llama = Request(
        "llama_server_response_format.json", "llama-server",
        "llama-server -m MODEL.gguf --port 8080", "http://127.0.0.1:8080",
        "/v1/chat/completions", "choices.message.content", SCHEMA_FILE, _LLAMA_CPP_DOCS,
        {**chat, **_LLAMA_CPP_OFF},
    )  # fmt: skip
    openai = Request(
        "openai_response_format.json", "any OpenAI-compatible server",
        "(any: give its URL; MASKSCOPE_API_KEY is sent as a bearer token)",
        "http://127.0.0.1:8000", "/v1/chat/completions", "choices.message.content",
        SCHEMA_FILE,
        "https://platform.openai.com/docs/api-reference/chat/create (response_format)",
        body,
    )  # fmt: skip
    return [llama, openai]


def servers_json(made: list[Request]) -> dict[str, dict[str, str]]:
    return {r.file: r.meta() for r in made}


def json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def snippet_files(tested: Tested) -> dict[str, str]:
    """The bundle's grammar files (engine/suite/bundle/grammar_files.py: the tested one and each
    translation no proof found to differ) and its snippets/, path -> text."""
    files = {g.path: g.text for g in tested.shipped_grammars()}
    made = requests(
        tested.model_prompt,
        tested.user_prompt,
        tested.suite.settings(),
        files,
        tested.compiled.schema,
        tested.suite.name,
        tested.provenance.model_file,
    )
    files |= {f"snippets/{r.file}": json_text(r.body) for r in made}
    files[SERVERS_FILE] = json_text(servers_json(made))
    files["snippets/post.py"] = POST_PY
    if GBNF_FILE in files:
        files["snippets/llama_cpp_python.py"] = LLAMA_CPP_PYTHON_PY
    return files
