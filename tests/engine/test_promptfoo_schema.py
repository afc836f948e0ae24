"""schema.promptfoo.json held to promptfoo's own validator: the copy is compiled by the Ajv that
`make promptfoo` installed, as promptfoo's getAjv builds it (`new Ajv({strictSchema: true})`
plus ajv-formats), and its verdicts on instances are jsonschema's on the original 2020-12
schema, except where the copy names a keyword it had to drop."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from engine.suite.bundle.promptfoo import PROMPTFOO_VERSION
from engine.suite.bundle.promptfoo_schema import promptfoo_schema

NODE_MODULES = Path(__file__).resolve().parents[2] / "build" / "node" / "node_modules"
# promptfoo's getAjv (src/assertions/json.ts in 0.121): one strict Ajv with ajv-formats.
_AJV_RUN = """
const Ajv = require(process.argv[1] + '/ajv').default;
const addFormats = require(process.argv[1] + '/ajv-formats');
const {schema, instances} = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const ajv = new Ajv({strictSchema: true, logger: false});
(addFormats.default || addFormats)(ajv);
const check = ajv.compile(schema);
console.log(JSON.stringify(instances.map((x) => check(x))));
"""

TUPLES = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/pair.json",
    "type": "object",
    "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                 "items": False},
        "card": {"type": "string"},
        "zip": {"type": "string"},
        "mail": {"type": "string", "format": "idn-email"},
        "when": {"type": "string", "format": "date"},
    },
    "dependentRequired": {"card": ["zip"]},
    "dependentSchemas": {"zip": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}}},
    "unevaluatedProperties": False,
    "x-note": "an extension keyword",
}  # fmt: skip
SAME = [
    {"pair": ["a", 1]},
    {"pair": ["a", 1, 2]},  # items: false after the prefix
    {"pair": [1, "a"]},
    {"card": "4111"},  # card needs zip
    {"card": "4111", "zip": "12345"},
    {"zip": "1234"},  # dependentSchemas' pattern
    {"when": "2024-02-30"},
    {"when": "2024-02-29"},
]
# What the copy no longer checks, because Ajv's draft-07 mode cannot say it.
LOOSER = [{"other": 1}, {"mail": "not an address"}]


def _ajv(schema: object, instances: list) -> list[bool]:
    if not (NODE_MODULES / "ajv").is_dir():
        pytest.fail("promptfoo is not installed: run `make promptfoo`", pytrace=False)
    done = subprocess.run(
        ["node", "-e", _AJV_RUN, str(NODE_MODULES)],
        input=json.dumps({"schema": schema, "instances": instances}),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_copy_compiles_in_promptfoos_ajv_and_judges_as_the_schema():
    ready, notes = promptfoo_schema(TUPLES)
    original = Draft202012Validator(TUPLES, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert _ajv(ready, SAME) == [original.is_valid(x) for x in SAME]
    assert [original.is_valid(x) for x in LOOSER] == [False, False]
    assert _ajv(ready, LOOSER) == [True, True]
    said = "\n".join(notes)
    for dropped in ("`unevaluatedProperties` dropped", "`x-note` dropped", "format `idn-email`"):
        assert dropped in said
    assert "$schema removed" in said and "$id removed" in said
    assert "prefixItems" in TUPLES["properties"]["pair"]  # the original is left as it was


def test_the_schema_as_written_is_what_promptfoos_ajv_refuses():
    """Why the copy exists: the tested schema itself does not compile there."""
    with pytest.raises(AssertionError, match="no schema with key or ref"):
        _ajv({"$schema": TUPLES["$schema"], "type": "object"}, [{}])


def test_a_property_named_like_a_keyword_is_kept():
    schema = {"type": "object", "properties": {"$schema": {"type": "string"},
                                               "format": {"const": "x"}}}  # fmt: skip
    ready, notes = promptfoo_schema(schema)
    assert ready == schema and notes == ()
    assert _ajv(ready, [{"$schema": "a", "format": "x"}, {"format": "y"}]) == [True, False]


def test_the_installed_promptfoo_is_the_one_the_bundle_names():
    """The bundle's README says `npx promptfoo@PROMPTFOO_VERSION`: the tested one."""
    pinned = json.loads((NODE_MODULES.parents[2] / "tools/promptfoo/package.json").read_text())
    installed = json.loads((NODE_MODULES / "promptfoo/package.json").read_text())
    assert pinned["dependencies"]["promptfoo"] == installed["version"] == PROMPTFOO_VERSION
