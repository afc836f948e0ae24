"""`format` is asserted when an output is judged, and a format that cannot be checked (its
checker's library is missing) is named in the result, never passed over in silence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import GrammarError
from engine.grammar.compile import compile_schema
from engine.runs.headless import run_to_end
from engine.schema.validate import unchecked_formats, validation_issues
from engine.settings import GenerationSettings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "fmt, good, bad",
    [
        ("email", "ana@example.com", "EUR"),
        ("date", "2024-02-29", "2023-02-29"),
        ("date-time", "2024-05-01T10:00:00Z", "2024-05-01 10:00"),
        ("uuid", "0f8fad5b-d9cb-469f-a165-70867728950e", "0f8fad5b"),
        ("uri", "https://example.com/a", "not a uri"),
        ("ipv4", "192.168.0.1", "300.1.1.1"),
    ],
)
def test_formats_are_checked(fmt: str, good: str, bad: str):
    schema = {"type": "string", "format": fmt}
    assert validation_issues(good, schema) == ()
    (issue,) = validation_issues(bad, schema)
    assert fmt in issue.message


def test_run_that_breaks_a_format_is_invalid(model):
    # The converter's grammar (pinned) enforces the enum and not the format, so the output is
    # always "nobody"; our compiler enforces both and refuses the schema as allowing no value.
    schema = '{"type": "string", "format": "email", "enum": ["nobody"]}'
    with pytest.raises(GrammarError, match="none of its enum/const values meets its other"):
        compile_schema(schema, "maskscope")
    compiled = compile_schema(schema, "llamacpp")
    settings = GenerationSettings(temperature=0.0, max_tokens=8)
    result = run_to_end(model, compiled, "The contact's email address as JSON:", settings)
    assert result.parsed == "nobody", result.text
    assert not result.valid
    (issue,) = result.errors
    assert "email" in issue.message


def test_nothing_unchecked_with_the_format_libraries_installed():
    schema = {"properties": {"a": {"format": "uri"}, "b": {"format": "duration"}}}
    assert unchecked_formats(schema) == ()


@pytest.mark.slow
def test_format_whose_library_is_missing_is_named_in_the_result(tmp_path: Path):
    # The libraries are installed here; a child process that cannot import the ones for
    # `uri` is the real jsonschema without them (the only way to reach the missing case).
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "string", "format": "uri", "maxLength": 8}))
    code = (
        "import sys\n"
        "for name in ('rfc3987', 'rfc3986_validator'):\n"
        "    sys.modules[name] = None\n"
        "from engine.cli.main import main\n"
        f"sys.exit(main(['generate', '--schema', {str(schema)!r}, '--prompt', 'A link: ',"
        " '--jsonl', '--temperature', '0']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    result = json.loads(proc.stdout.splitlines()[-1])["result"]
    assert result["unchecked_formats"] == ["uri"], proc.stderr[-2000:]
