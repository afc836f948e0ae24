"""Two `maskscope test --json` results compared: per case what changed, regressions first."""

from __future__ import annotations

import json

from engine.cli.main import main
from engine.suite.compare import Change, compare_results, comparison_text


def _result(cases: dict[str, tuple[int, int, str, float]]) -> dict:
    """cases: id -> (valid samples of 2, fields ok of 2, the first sample's text, its mass)."""
    out = {"format": "maskscope-test-result", "version": 1, "metrics": {}, "cases": [],
           "samples": []}  # fmt: skip
    for case_id, (n_valid, ok, text, mass) in cases.items():
        out["cases"].append({
            "id": case_id, "n_samples": 2, "n_valid": n_valid, "validity_rate": n_valid / 2,
            "fields_ok": ok, "fields_checked": 2, "passed": n_valid == 2 and ok == 2,
        })  # fmt: skip
        for i in range(2):
            out["samples"].append({"case": case_id, "index": i, "text": text if i == 0 else "x",
                                   "metrics": {"mean_valid_mass": mass}})  # fmt: skip
    out["metrics"]["validity_rate"] = sum(c[0] for c in cases.values()) / (2 * len(cases))
    return out


V1 = _result({"usd": (2, 2, '{"currency": "USD"}', 0.9), "eur": (2, 1, '{"currency": "USD"}', 0.8),
              "gbp": (2, 2, '{"currency": "GBP"}', 0.7), "old": (2, 2, "{}", 0.5)})  # fmt: skip
V2 = _result({"usd": (1, 1, '{"currency": "UNKNOWN"}', 0.6),
              "eur": (2, 2, '{"currency": "EUR"}', 0.85),
              "gbp": (2, 2, '{"currency": "GBP"}', 0.7), "new": (2, 2, "{}", 0.5)})  # fmt: skip


def test_regressions_come_first_and_each_case_says_what_changed():
    c = compare_results(V1, V2, ("v1.json", "v2.json"))
    order = [(x.case_id, x.change) for x in c.cases]
    assert order[:2] == [("usd", Change.REGRESSED), ("old", Change.REMOVED)]
    assert ("eur", Change.IMPROVED) in order and ("new", Change.ADDED) in order
    assert ("gbp", Change.SAME) in order and c.regressed
    usd = c.cases[0]
    assert usd.validity == (1.0, 0.5) and usd.fields == ("2/2", "1/2")
    assert usd.outputs[0].before == '{"currency": "USD"}'
    assert usd.outputs[0].after == '{"currency": "UNKNOWN"}'
    text = comparison_text(c)
    assert text.index("REGRESSED  usd") < text.index("IMPROVED   eur")
    assert "1 case(s) unchanged" in text and text.endswith("REGRESSED")


def test_the_command_line_exits_1_on_a_regression_and_0_without(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(V1), encoding="utf-8")
    b.write_text(json.dumps(V2), encoding="utf-8")
    assert main(["test", "--compare", str(a), str(b)]) == 1
    assert "REGRESSED" in capsys.readouterr().out
    assert main(["test", "--compare", str(a), str(a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["regressed"] is False
    assert main(["test", "--compare", str(a), str(tmp_path / "missing.json")]) == 2
    assert "result file not found" in capsys.readouterr().err
