"""The bundle's ready-to-run snippets: llama-cpp-python with the tested GBNF, llama-server's
`/completion` with `grammar` or `json_schema`, and an OpenAI-compatible `response_format`
request.

Every user text (prompt, schema, names) reaches a snippet as a JSON or Python literal written
by json.dumps or repr, never spliced into code, so a prompt holding quotes or triple quotes
cannot change what a snippet does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.settings import GenerationSettings

GRAMMAR_FILE = "grammar.gbnf"
SCHEMA_FILE = "schema.json"
SERVER_URL = "http://127.0.0.1:8080"
# OpenAI's json_schema name: letters, digits, _ and -, at most 64 characters.
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def schema_name(suite_name: str) -> str:
    """The `json_schema.name` an OpenAI-compatible server requires, from the suite's name."""
    name = _NAME_CHARS.sub("_", suite_name).strip("_")[:64]
    return name or "schema"


def llama_cpp_python(prompt: str, settings: GenerationSettings) -> str:
    """A script that loads a GGUF and writes one object under grammar.gbnf, exactly the
    grammar that was tested. `prompt` is the text the model read (with the chat template
    already applied when the suite asked for it), so it goes to create_completion as is."""
    return f'''"""Generate one object with the grammar that was tested.

    python snippets/llama_cpp_python.py MODEL.gguf [PROMPT]

Made by `maskscope export`. The prompt below is the suite's first case, as the model read
it. Sampling is llama.cpp's (top-k, top-p, min-p), not Maskscope's, so an output can differ
from the tested sample of the same seed; every output still follows the grammar.
"""

import sys
from pathlib import Path

from llama_cpp import Llama, LlamaGrammar

BUNDLE = Path(__file__).resolve().parent.parent
PROMPT = {prompt!r}


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python snippets/llama_cpp_python.py MODEL.gguf [PROMPT]")
    prompt = sys.argv[2] if len(sys.argv) > 2 else PROMPT
    grammar = LlamaGrammar.from_string(
        (BUNDLE / {GRAMMAR_FILE!r}).read_text(encoding="utf-8"), verbose=False
    )
    llm = Llama(
        model_path=sys.argv[1], n_ctx={_n_ctx(settings)}, seed={settings.seed}, verbose=False
    )
    out = llm.create_completion(
        prompt,
        grammar=grammar,
        max_tokens={settings.max_tokens},
        temperature={settings.temperature!r},
        seed={settings.seed},
    )
    print(out["choices"][0]["text"])


if __name__ == "__main__":
    main()
'''


def _n_ctx(settings: GenerationSettings) -> int:
    # Room for a prompt of a few pages and the longest output the suite allows.
    return max(2048, settings.max_tokens + 1024)


def server_grammar_request(prompt: str, gbnf: str, settings: GenerationSettings) -> dict:
    """llama-server's `/completion` body with the tested GBNF in `grammar`."""
    return {**_completion(prompt, settings), "grammar": gbnf}


def server_schema_request(prompt: str, schema: Any, settings: GenerationSettings) -> dict:
    """llama-server's `/completion` body with `json_schema`: the server's own converter makes
    the grammar, which is not the one that was tested (the README says where they differ)."""
    return {**_completion(prompt, settings), "json_schema": schema}


def _completion(prompt: str, settings: GenerationSettings) -> dict[str, Any]:
    return {
        "prompt": prompt,
        "n_predict": settings.max_tokens,
        "temperature": settings.temperature,
        "seed": settings.seed,
    }


def openai_request(
    user_prompt: str, schema: Any, suite_name: str, settings: GenerationSettings, model: str
) -> dict:
    """An OpenAI-compatible chat request with `response_format` json_schema, strict."""
    return {
        "model": model,
        "messages": [{"role": "user", "content": user_prompt}],
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": schema_name(suite_name), "schema": schema, "strict": True},
        },
    }


def curl_script(request_file: str, endpoint: str = "/completion") -> str:
    """A shell script that posts a request file of the bundle to a running server."""
    return f"""#!/bin/sh
# Post {request_file} to a llama-server (made by `maskscope export`).
#   sh snippets/{request_file.removesuffix(".json")}.sh [SERVER_URL]
# Start one with: llama-server -m MODEL.gguf --port 8080
set -eu
cd "$(dirname "$0")"
curl -sS "${{1:-{SERVER_URL}}}{endpoint}" \\
  -H 'Content-Type: application/json' \\
  --data-binary @{request_file}
echo
"""


def json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
