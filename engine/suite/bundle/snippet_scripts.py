"""The two scripts a bundle ships in snippets/, as text: `post.py`, which sends any of the
bundle's requests to the server it is for and checks the answer, and `llama_cpp_python.py`,
which runs the tested grammar in llama-cpp-python itself.

Both are the same in every bundle: what differs (the prompt, the grammar, the sampler, each
request's server and endpoint) they read from the bundle's files, so no user text is ever
spliced into code. They need only the standard library (and llama-cpp-python for the second),
and run on Python 3.8 and later. The tests run them for real (tests/engine/test_bundle_*).
"""

POST_PY = '''"""Send one of this bundle's requests to the server it is for, and check the answer.

    python3 snippets/post.py snippets/REQUEST.json [BASE_URL]

Made by `maskscope export`. snippets/servers.json names, for each request file, the server it
is for, how to start one, its endpoint, and the documentation its fields come from. The base
URL is BASE_URL, else $MASKSCOPE_BASE_URL, else that server's usual local address; when
$MASKSCOPE_API_KEY is set it is sent as a bearer token.

Exit 0: the answer is JSON and valid against schema.json; it is printed. Exit 1: an HTTP
error, no server, or an answer that is not valid (said on stderr). Exit 2: a usage error.
The answer is validated with the `jsonschema` package when it is installed; without it the
answer is only parsed as JSON, and the script says so.
"""

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent / "schema.json"
TIMEOUT_S = 600


class Failed(Exception):
    """The server did not give a usable answer."""


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: python3 snippets/post.py snippets/REQUEST.json [BASE_URL]", file=sys.stderr)
        return 2
    request = Path(argv[1])
    servers = json.loads((HERE / "servers.json").read_text(encoding="utf-8"))
    meta = servers.get(request.name)
    if meta is None:
        print(f"{request.name} is none of: {', '.join(servers)}", file=sys.stderr)
        return 2
    base = argv[2] if len(argv) == 3 else os.environ.get("MASKSCOPE_BASE_URL") or meta["base_url"]
    url = base.rstrip("/") + meta["path"]
    try:
        reply = post(url, request.read_bytes())
        text = answer_text(reply, meta["answer"])
    except Failed as exc:
        print(f"{request.name} ({meta['server']}): {exc}", file=sys.stderr)
        return 1
    print(text)
    problem = check(text)
    if problem:
        print(f"{request.name} ({meta['server']}): invalid answer: {problem}", file=sys.stderr)
        return 1
    return 0


def post(url, body):
    headers = {"Content-Type": "application/json"}
    if os.environ.get("MASKSCOPE_API_KEY"):
        headers["Authorization"] = "Bearer " + os.environ["MASKSCOPE_API_KEY"]
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        said = exc.read()[:500].decode("utf-8", "replace")
        raise Failed(f"HTTP {exc.code} from {url}: {said}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise Failed(f"no answer from {url}: {getattr(exc, 'reason', exc)}") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise Failed(f"{url} answered something that is not JSON") from None


def answer_text(reply, where):
    """The generated text, from where this endpoint puts it."""
    try:
        if where == "content":  # llama-server's /completion
            text = reply["content"]
        elif where == "text":  # SGLang's /generate
            text = reply["text"]
        elif where == "choices.text":  # OpenAI-style /v1/completions
            text = reply["choices"][0]["text"]
        else:  # OpenAI-style /v1/chat/completions
            text = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise Failed(f"the reply holds no generated text at {where}") from None
    if not isinstance(text, str):
        raise Failed(f"the reply's {where} is not text")
    return text


def check(text):
    """Why `text` is not a valid answer; "" when it is."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"not JSON ({exc})"
    try:
        import jsonschema
    except ImportError:
        print("note: jsonschema is not installed: the answer was only parsed as JSON",
              file=sys.stderr)
        return ""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return errors[0].message if errors else ""


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

LLAMA_CPP_PYTHON_PY = '''"""One object from llama-cpp-python under the grammar that was tested.

    python3 snippets/llama_cpp_python.py MODEL.gguf [PROMPT]

Made by `maskscope export`. It gives llama-cpp-python what the request
snippets/llama_cpp_python_server.json gives its server: the suite's first prompt as the
model read it, max_tokens, temperature and seed, and top-k, top-p, min-p and the repeat
penalty turned off, as Maskscope samples; and grammar.gbnf. The engines' samplers still
differ in detail, so an output can differ from the tested sample of the same seed. Exit 0:
the output is valid against schema.json (checked as snippets/post.py checks an answer); 1:
it is not; 2: a usage error.
"""

import json
import sys
from pathlib import Path

from llama_cpp import Llama, LlamaGrammar
from post import check  # snippets/post.py, beside this file

HERE = Path(__file__).resolve().parent
SAMPLER = ("max_tokens", "temperature", "seed", "top_k", "top_p", "min_p", "repeat_penalty")


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: python3 snippets/llama_cpp_python.py MODEL.gguf [PROMPT]", file=sys.stderr)
        return 2
    request = json.loads((HERE / "llama_cpp_python_server.json").read_text(encoding="utf-8"))
    prompt = argv[2] if len(argv) == 3 else request["prompt"]
    gbnf = (HERE.parent / "grammar.gbnf").read_text(encoding="utf-8")
    llm = Llama(
        model_path=argv[1],
        n_ctx=max(2048, request["max_tokens"] + 1024),
        seed=request["seed"],
        verbose=False,
    )
    out = llm.create_completion(
        prompt,
        grammar=LlamaGrammar.from_string(gbnf, verbose=False),
        **{key: request[key] for key in SAMPLER},
    )
    text = out["choices"][0]["text"]
    print(text)
    problem = check(text)
    if problem:
        print(f"llama_cpp_python.py: invalid output: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''
