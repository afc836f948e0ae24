"""The RFC 3987 parser behind jsonschema's iri formats is built on first use, not at every
process start, and the formats are checked as before."""

from __future__ import annotations

import subprocess
import sys

from jsonschema import Draft202012Validator

CHECKER = Draft202012Validator.FORMAT_CHECKER


def test_importing_the_engine_and_jsonschema_builds_no_iri_parser() -> None:
    code = (
        "import sys, engine, jsonschema\n"
        "sys.exit(1 if 'rfc3987_syntax.syntax_helpers' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_iri_formats_are_still_checked() -> None:
    iri = Draft202012Validator({"format": "iri"}, format_checker=CHECKER)
    assert iri.is_valid("https://example.com/caf\u00e9?q=\u00fc#frag")
    assert not iri.is_valid("http://[not-an-ip")
    assert not iri.is_valid("no scheme")  # an IRI needs one; an IRI reference does not
    reference = Draft202012Validator({"format": "iri-reference"}, format_checker=CHECKER)
    assert reference.is_valid("//example.com/caf\u00e9")
    assert not reference.is_valid("http://[not-an-ip")
