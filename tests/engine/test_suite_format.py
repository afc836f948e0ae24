"""The suite file format (docs/suite-format.md): loading, its one-line errors, cases files,
expectations, templates and the round trip. No model needed."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from engine.errors import MaskscopeError, SuiteError
from engine.schema.validate import validation_issues
from engine.settings import GenerationSettings
from engine.suite.bundled import BUNDLED_SUITES, bundled_suite_path, load_bundled_suite
from engine.suite.format import Case, Expectation, Instance, Thresholds
from engine.suite.instances import check_case
from engine.suite.load import load_suite, suite_from_json, suite_to_json, suite_warnings
from engine.suite.template import placeholders, render_prompt, unused_values

DATA = Path(__file__).parent.parent / "data" / "suites"

MINIMAL: dict[str, Any] = {
    "format": "maskscope-suite",
    "version": 1,
    "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
    "prompt": "Say {{word}}.\nJSON:\n",
    "cases": [{"id": "one", "vars": {"word": "hi"}, "expected": {"$.a": "hi"}}],
}


def write_suite(folder: Path, data: Any, name: str = "s.suite.json") -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load_error(folder: Path, data: Any, names: Path | None = None) -> str:
    """The one-line message loading `data` gives; it starts with the file it names (the
    suite unless `names` says otherwise)."""
    path = write_suite(folder, data)
    with pytest.raises(SuiteError) as caught:
        load_suite(str(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{names or path}:") or message.startswith(f"{names or path},")
    return message


def changed(**top: Any) -> dict[str, Any]:
    data = copy.deepcopy(MINIMAL)
    for key, value in top.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


# -- the bundled suites -----------------------------------------------------------------------


@pytest.mark.parametrize("name", BUNDLED_SUITES)
def test_bundled_suite_loads_with_cases_instances_and_small_settings(name: str) -> None:
    suite = load_bundled_suite(name)
    assert suite.name == name
    assert suite.path == str(bundled_suite_path(name))
    assert len(suite.cases) >= 3
    assert all(case.expected for case in suite.cases)
    assert {i.valid for i in suite.instances} == {True, False}
    assert suite.settings().max_tokens <= 256 and suite.samples <= 2
    assert suite_warnings(suite) == []
    for case in suite.cases:
        assert "{{" not in render_prompt(suite.prompt, case.vars)
    # Each label is what jsonschema says, so `check` is judged against the truth.
    for instance in suite.instances:
        if instance.text is None:
            assert (not validation_issues(instance.data, suite.schema)) == instance.valid


def test_currency_suite_expects_unknown_where_the_invoice_names_no_enum_currency() -> None:
    suite = load_bundled_suite("currency")
    expected = {case.id: [(e.path, e.value) for e in case.expected] for case in suite.cases}
    assert {v[0][1] for v in expected.values()} == {"USD", "EUR", "GBP", "UNKNOWN"}
    assert expected["no-currency"] == [("$.currency", "UNKNOWN")]
    assert suite.schema == json.loads(
        (Path("resources/examples/currency.schema.json")).read_text(encoding="utf-8")
    )


def test_invoice_suite_checks_totals_within_a_tolerance() -> None:
    suite = load_bundled_suite("invoice")
    totals = [e for case in suite.cases for e in case.expected if e.path == "$.total"]
    assert len(totals) == len(suite.cases)
    assert all(e.kind == "tolerance" and e.tolerance for e in totals)


def test_the_documented_example_loads_with_its_csv_cases(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "suite-format.md").read_text(encoding="utf-8")
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    (tmp_path / "more-invoices.csv").write_text(
        doc.split("```csv\n", 1)[1].split("```", 1)[0], encoding="utf-8"
    )
    suite = load_suite(str(write_suite(tmp_path, example)))
    assert [case.id for case in suite.cases] == ["usd", "none", "usd-2", "none-2"]
    assert suite.cases[3].expected == (Expectation("$.currency", "equals", "UNKNOWN"),)
    assert suite.thresholds.max_p95_latency_ms == 15000


# -- files beside the suite -----------------------------------------------------------------


def test_schema_file_text_is_kept_exactly_as_read() -> None:
    suite = load_suite(str(DATA / "csv.suite.json"))
    assert suite.schema_text == (DATA / "schema.json").read_text(encoding="utf-8")
    assert suite.schema_file == "schema.json"
    assert suite.schema["required"] == ["city"]


def test_csv_cases_take_ids_variables_and_exact_expectations_with_their_lines() -> None:
    suite = load_suite(str(DATA / "csv.suite.json"))
    by_id = {case.id: case for case in suite.cases}
    assert list(by_id) == ["inline", "paris", "cities line 3", "nice"]
    paris = by_id["paris"]
    assert paris.vars == {"text": "Paris, France, 2.1 million people", "note": "capital"}
    assert [(e.path, e.kind, e.value) for e in paris.expected] == [
        ("$.city", "equals", "Paris"),
        ("$.population", "equals", 2100000),  # a cell that reads as JSON is that value
    ]
    lyon = by_id["cities line 3"]
    assert lyon.vars["text"] == "Lyon\nsecond line"
    assert [e.path for e in lyon.expected] == ["$.city"]  # an empty cell expects nothing
    assert by_id["nice"].line == 6  # the quoted cell spanning lines 3-4 and a blank line
    assert by_id["nice"].expected[0].value == "Nice"
    assert by_id["inline"].line is None


def test_unused_csv_columns_are_warnings_not_errors() -> None:
    warnings = suite_warnings(load_suite(str(DATA / "csv.suite.json")))
    assert len(warnings) == 3 and all("'note'" in w for w in warnings)


def test_jsonl_cases_full_or_flat() -> None:
    suite = load_suite(str(DATA / "jsonl.suite.json"))
    rome, oslo = suite.cases
    assert rome.id == "rome" and rome.line == 1
    assert rome.expected[1] == Expectation("$.population", "tolerance", 2800000, 100000)
    assert oslo.id == "cities line 3" and oslo.vars == {"text": "Oslo", "year": "2024"}
    assert suite.name == "jsonl"  # from the file name
    assert suite.settings().temperature == 0.0 and suite.thresholds.min_validity == 1.0


def test_csv_with_a_byte_order_mark_reads_its_first_column(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("\ufeffword\nhi\n", encoding="utf-8")
    suite = load_suite(str(write_suite(tmp_path, changed(cases=None, cases_file="c.csv"))))
    assert suite.cases[0].vars == {"word": "hi"}


# -- errors: one line, naming the file and the place -------------------------------------------


ERRORS = [
    (changed(format="promptfoo"), '$.format: not a Maskscope suite: format is "promptfoo"'),
    (changed(format=None), 'not a Maskscope suite: it has no "format"'),
    (changed(version=2), "$.version: version 2 is not one this Maskscope reads"),
    (changed(vesion=1), "$: unknown key 'vesion'"),
    (changed(prompt=None), "$: missing 'prompt'"),
    (changed(prompt=7), "$.prompt: the prompt is a string, not 7"),
    (changed(prompt=None) | {"prompt": None}, "$.prompt: the prompt is a string, not null"),
    (changed(samples=0), "$.samples: must be from 1 to 10000, not 0"),
    (changed(samples="2"), '$.samples: "2" is not a whole number'),
    (changed(compiler="vllm"), '$.compiler: "vllm" is not a compiler'),
    (changed(generation={"max_token": 5}), "$.generation: unknown key 'max_token'"),
    (changed(generation={"compiler": "llamacpp"}), "$.generation.compiler: compiler is set at"),
    (changed(generation={"max_tokens": 0}), "$.generation.max_tokens: must be from 1 to 8192"),
    (changed(generation={"temperature": "hot"}), '$.generation.temperature: "hot" is not a number'),
    (changed(generation={"chat_template": 1}), "$.generation.chat_template: chat_template is true"),
    (
        changed(compiler="llguidance", backend="llamacpp"),
        "$.generation: the llguidance compiler's grammar runs on the llguidance backend only",
    ),
    (changed(thresholds={"min_validity": 1.5}), "$.thresholds.min_validity: a rate is from 0 to 1"),
    (changed(thresholds={"max_p95_latency_ms": 0}), "$.thresholds.max_p95_latency_ms: a latency"),
    (changed(thresholds={"min_validty": 0.5}), "$.thresholds: unknown key 'min_validty'"),
    (changed(thresholds={"max_truncation": True}), "a threshold is a number, not true"),
    (changed(schema=None), 'give the schema inline ("schema") or by path ("schema_file")'),
    (changed(schema_file="x.json"), 'give the schema inline ("schema") or by path'),
    (changed(schema={"type": 12}), "$.schema: the schema: "),
    (changed(schema="{}"), "$.schema: the schema is a JSON object"),
    (changed(cases={"id": "one"}), "$.cases: cases is a list"),
    (changed(cases=[{"id": "a", "vars": {"word": ["x"]}}]), "$.cases[0].vars.word: a variable"),
    (changed(cases=[{"id": "a"}]), "$.cases[0]: missing 'vars'"),
    (
        changed(cases=[{"vars": {"word": "x"}}, {"id": "case 1", "vars": {"word": "y"}}]),
        "$.cases[1]: the case id 'case 1' is used twice",
    ),
    (changed(cases=[{"vars": {}}]), "$.cases[0]: no value for the prompt's {{word}}"),
    (
        changed(cases=[{"vars": {"word": "x"}, "expected": {"currency": "USD"}}]),
        '$.cases[0].expected["currency"]: a JSON path starts with $',
    ),
    (
        changed(cases=[{"vars": {"word": "x"}, "expected": {"$.a": {"regex": "("}}}]),
        '$.cases[0].expected["$.a"]: not a regular expression',
    ),
    (
        changed(cases=[{"vars": {"word": "x"}, "expected": {"$.a": {"value": 1}}}]),
        "an expectation is a value",
    ),
    (
        changed(
            cases=[{"vars": {"word": "x"}, "expected": {"$.a": {"value": 1, "tolerance": -1}}}]
        ),
        "tolerance 0 or more",
    ),
    (changed(instances=[{"data": 1}]), "$.instances[0]: missing 'valid'"),
    (changed(instances=[{"data": 1, "valid": "yes"}]), "$.instances[0].valid: valid is true"),
    (changed(instances=[{"valid": True}]), '$.instances[0]: an instance has "data" (JSON) or'),
    (changed(instances=[{"data": 1, "text": "1", "valid": True}]), "not both"),
]


@pytest.mark.parametrize(("data", "expected"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_each_problem_is_one_line_naming_file_and_place(
    tmp_path: Path, data: dict[str, Any], expected: str
) -> None:
    assert expected in load_error(tmp_path, data)


def test_missing_file_and_not_json(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"suite file not found: .*nowhere\.suite\.json$"):
        load_suite(str(tmp_path / "nowhere.suite.json"))
    message = load_error(tmp_path, '{"format": "maskscope-suite",\n  "version": 1,,}')
    assert message.endswith(
        "s.suite.json, line 2, column 16: not JSON (Expecting property name "
        "enclosed in double quotes)"
    )


def test_suite_error_is_a_maskscope_error_of_kind_suite() -> None:
    error = SuiteError("bad", "a.suite.json", "$.x")
    assert isinstance(error, MaskscopeError) and error.kind == "suite"
    assert str(error) == "a.suite.json, $.x: bad"


@pytest.mark.parametrize("key", ["schema_file", "cases_file"])
def test_paths_that_leave_the_suites_folder_are_refused(tmp_path: Path, key: str) -> None:
    inside = tmp_path / "suite"
    inside.mkdir()
    (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
    (inside / "link.json").symlink_to(tmp_path / "outside.json")
    escapes = (
        "../outside.json",
        str(tmp_path / "outside.json"),
        "sub/../../outside.json",
        "link.json",
    )
    for escape in escapes:
        data = (
            changed(schema=None, schema_file=escape)
            if key == "schema_file"
            else changed(cases=None, cases_file=escape)
        )
        message = load_error(inside, data)
        assert f"$.{key}: suite paths must stay inside the suite's folder: {escape}" in message


def test_an_absolute_path_inside_the_folder_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text('{"type": "object"}', encoding="utf-8")
    data = changed(schema=None, schema_file=str(tmp_path / "schema.json"))
    assert load_suite(str(write_suite(tmp_path, data))).schema == {"type": "object"}


def test_a_missing_or_broken_schema_file_names_it(tmp_path: Path) -> None:
    missing = load_error(tmp_path, changed(schema=None, schema_file="gone.json"))
    assert "$.schema_file: schema file not found: " in missing and "gone.json" in missing
    (tmp_path / "bad.json").write_text('{"type": ', encoding="utf-8")
    broken = load_error(tmp_path, changed(schema=None, schema_file="bad.json"))
    assert "$.schema_file: the schema: line 1, column 10" in broken


CASES_FILE_ERRORS = [
    ("c.csv", "word,expected.a\nhi\n", "c.csv, line 2: 1 cells, but the header has 2 columns"),
    ("c.csv", "word,word\nhi,ho\n", "c.csv, line 1: the column 'word' appears twice"),
    ("c.csv", "", "c.csv, line 1: the CSV file has no header row"),
    ("c.csv", "word,id\nhi,x\nho,x\n", "c.csv, line 3: the case id 'x' is used twice"),
    ("c.csv", "text\nhi\n", "c.csv, line 2: no value for the prompt's {{word}}"),
    ("c.csv", "word,expected.a[x]\nhi,1\n", 'c.csv, line 2, expected["$.a[x]"]: cannot read'),
    ("c.jsonl", '{"word": "hi"}\n{"word": \n', "c.jsonl, line 2: not JSON (Expecting value)"),
    ("c.jsonl", "[1]\n", "c.jsonl, line 1: each line is a JSON object"),
    ("c.jsonl", '{"vars": {"word": "x"}, "expect": {}}\n', "c.jsonl, line 1: unknown key 'expect'"),
    ("c.txt", "word\nhi\n", "c.txt: a cases file is .csv or .jsonl"),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES_FILE_ERRORS)
def test_cases_file_problems_name_the_file_and_line(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    message = load_error(tmp_path, changed(cases=None, cases_file=name), tmp_path / name)
    assert expected in message


def test_a_case_id_in_the_suite_and_its_cases_file_clash(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("id,word\none,hi\n", encoding="utf-8")
    message = load_error(tmp_path, changed(cases_file="c.csv"), tmp_path / "c.csv")
    assert message.endswith("c.csv, line 2: the case id 'one' is used twice")


# -- expectations ---------------------------------------------------------------------------

OUTPUT = {"currency": "EUR", "items": [{"total": 12.5, "paid": True}], "code": 42, "n": 1}


@pytest.mark.parametrize(
    ("expectation", "ok", "why"),
    [
        (Expectation("$.currency", "equals", "EUR"), True, ""),
        (Expectation("$.currency", "equals", "USD"), False, '$.currency is "EUR", expected "USD"'),
        (Expectation("$.items[0].total", "equals", 12.5), True, ""),
        (Expectation("$.n", "equals", 1.0), True, ""),  # JSON numbers: 1 is 1.0
        (Expectation("$.n", "equals", True), False, "$.n is 1, expected true"),
        (Expectation("$.items[0].paid", "equals", 1), False, "$.items[0].paid is true, expected 1"),
        (Expectation("$.items", "equals", [{"total": 12.5, "paid": True}]), True, ""),
        (Expectation("$.items[1].total", "equals", 1), False, "$.items[1].total is missing"),
        (Expectation("$.total", "equals", None), False, "$.total is missing"),
        (Expectation("$.currency", "regex", "EU."), True, ""),
        (
            Expectation("$.currency", "regex", "E"),
            False,
            '$.currency is "EUR", which does not match /E/',
        ),  # a full match, not a search
        (Expectation("$.code", "regex", r"\d{2}"), True, ""),  # the string form of 42
        (Expectation("$.items[0].total", "tolerance", 12.0, 0.5), True, ""),  # bound included
        (
            Expectation("$.items[0].total", "tolerance", 12.0, 0.49),
            False,
            "$.items[0].total is 12.5, not within 0.49 of 12.0",
        ),
        (Expectation("$.currency", "tolerance", 1, 1), False, '$.currency is "EUR", not a number'),
        (Expectation("$.items[0].paid", "tolerance", 1, 1), False, "is true, not a number"),
        (Expectation("$", "equals", OUTPUT), True, ""),
    ],
)
def test_expectation_check_says_why_not(expectation: Expectation, ok: bool, why: str) -> None:
    result, reason = expectation.check(OUTPUT)
    assert result is ok
    assert (reason == why) if ok else (why in reason)


def test_quoted_keys_in_paths() -> None:
    expectation = Expectation('$["unit price"][0]', "equals", 3)
    assert expectation.check({"unit price": [3]}) == (True, "")
    assert expectation.check({"unit price": {"0": 3}}) == (False, '$["unit price"][0] is missing')


def test_expected_spec_forms_read_from_the_suite(tmp_path: Path) -> None:
    spec = {
        "$.a": "hi",
        "$.b": {"equals": {"regex": "x"}},  # an object value is spelt with "equals"
        "$.c": {"regex": "h."},
        "$.d": {"value": 2, "tolerance": 0.5},
    }
    data = changed(cases=[{"id": "x", "vars": {"word": "hi"}, "expected": spec}])
    suite = load_suite(str(write_suite(tmp_path, data)))
    assert [(e.kind, e.value, e.tolerance) for e in suite.cases[0].expected] == [
        ("equals", "hi", None),
        ("equals", {"regex": "x"}, None),
        ("regex", "h.", None),
        ("tolerance", 2, 0.5),
    ]


# -- templates ------------------------------------------------------------------------------


def test_render_prompt_fills_placeholders_and_leaves_other_braces() -> None:
    template = 'Text: {{ text }} / {{text}} as {"a": {{kind}}} {{ not-a-name }}'
    assert placeholders(template) == ("text", "kind")
    rendered = render_prompt(template, {"text": "{{kind}}", "kind": "K"})
    # Values are inserted as they are: the {{kind}} inside a value stays.
    assert rendered == 'Text: {{kind}} / {{kind}} as {"a": K} {{ not-a-name }}'


def test_render_prompt_names_every_missing_placeholder() -> None:
    with pytest.raises(SuiteError, match=r"^no value for the prompt's \{\{b\}\}, \{\{c\}\}$"):
        render_prompt("{{a}} {{b}} {{c}} {{b}}", {"a": "1"})


def test_unused_values_are_listed() -> None:
    assert unused_values("{{a}}", {"a": "1", "b": "2", "c": "3"}) == ["b", "c"]
    assert unused_values("{{a}}", {"a": "1"}) == []


# -- settings, round trip, check ------------------------------------------------------------


def test_settings_map_generation_compiler_and_backend_onto_generation_settings(
    tmp_path: Path,
) -> None:
    data = changed(
        compiler="llamacpp",
        backend="llamacpp",
        generation={"max_tokens": 40, "temperature": 1, "exact_mask": True},
    )
    suite = load_suite(str(write_suite(tmp_path, data)))
    settings = suite.settings(GenerationSettings(seed=9))
    assert settings == GenerationSettings(
        max_tokens=40,
        temperature=1.0,
        seed=9,
        compiler="llamacpp",
        backend="llamacpp",
        exact_mask=True,
    )
    assert isinstance(settings.temperature, float)


@pytest.mark.parametrize(
    "path",
    [
        *(bundled_suite_path(n) for n in BUNDLED_SUITES),
        DATA / "csv.suite.json",
        DATA / "jsonl.suite.json",
    ],
    ids=lambda p: p.name,
)
def test_round_trip_through_json(path: Path) -> None:
    suite = load_suite(str(path))
    written = json.loads(json.dumps(suite_to_json(suite)))  # plain JSON all the way
    again = suite_from_json(written, path.parent, file=str(path))
    assert again == suite
    assert suite_to_json(again) == written
    # Cases from the cases file stay there: only the suite's own are written inline.
    assert len(written["cases"]) == sum(case.line is None for case in suite.cases)


def test_round_trip_keeps_a_suite_built_in_code(tmp_path: Path) -> None:
    base = suite_from_json(changed(), tmp_path)
    case = Case(
        "built",
        {"word": "w"},
        (
            Expectation("$.a", "equals", {"k": [1, None]}),
            Expectation("$.b", "regex", "x+"),
            Expectation("$.c", "tolerance", 2.5, 0.25),
        ),
        description="every kind",
    )
    built = dataclasses.replace(
        base,
        description="built",
        samples=3,
        generation={"seed": 4, "top_k": 5},
        cases=(*base.cases, case),
        instances=(Instance(True, data=None), Instance(False, text="{", description="cut")),
        thresholds=Thresholds(min_validity=0.5, max_p95_latency_ms=900.0),
    )
    assert base.path is None
    assert suite_from_json(suite_to_json(built), tmp_path) == built


def test_instances_feed_check_with_raw_text_that_is_not_json_as_written() -> None:
    suite = load_bundled_suite("currency")
    case = check_case(suite)
    assert case.schema == suite.schema and case.file == suite.path
    assert [i.valid for i in case.instances] == [i.valid for i in suite.instances]
    assert [i.text for i in case.instances if i.text is not None] == ['{"currency": "EU']
