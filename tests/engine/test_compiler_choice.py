"""The compiler as a run setting: which combinations run, cross-checking two compilers on one
backend, and the command line and saved runs that carry the choice."""

from __future__ import annotations

import json

import pytest

from engine.cli.generate import generation_settings
from engine.cli.main import build_parser, main
from engine.grammar.compile import compile_schema
from engine.runs.headless import run_to_end
from engine.runs.saved import SavedRun, load_run, run_settings, run_to_json, save_run
from engine.settings import GenerationSettings

MULTIPLE_OF_3 = '{"type": "integer", "multipleOf": 3}'


@pytest.mark.parametrize(
    "settings, problem",
    [
        (GenerationSettings(compiler="llamacpp", backend="llamacpp"), None),
        (GenerationSettings(compiler="llguidance", backend="llguidance"), None),
        (GenerationSettings(compiler="llguidance", backend="llamacpp"), "llguidance backend only"),
        (GenerationSettings(compiler="vllm"), "unknown compiler 'vllm'"),
        # Cross-checking the backends needs a GBNF grammar both can run.
        (GenerationSettings(compiler="llguidance", cross_check=True), "cross-check another"),
        (GenerationSettings(cross_check=True, cross_check_compiler="llguidance"), None),
        (
            GenerationSettings(
                backend="llamacpp", cross_check=True, cross_check_compiler="llguidance"
            ),
            "llguidance backend only",
        ),
        (
            GenerationSettings(
                compiler="llamacpp", cross_check=True, cross_check_compiler="llamacpp"
            ),
            "other than the run's own",
        ),
        # Without cross_check the compiler to cross-check is not used, so not judged.
        (GenerationSettings(backend="llamacpp", cross_check_compiler="llguidance"), None),
    ],
)
def test_settings_say_why_they_cannot_run(settings: GenerationSettings, problem: str | None):
    found = settings.problem()
    assert found == problem if problem is None else problem in (found or ""), found


def _settings(*argv: str) -> GenerationSettings:
    return generation_settings(build_parser().parse_args(["generate", *argv]), None)


def test_command_line_options_reach_the_settings():
    base = ("--schema", "s.json", "--prompt", "x")
    assert _settings(*base, "--compiler", "llguidance").compiler == "llguidance"
    crossed = _settings(*base, "--cross-check-compiler", "llguidance")
    assert (crossed.cross_check, crossed.cross_check_compiler) == (True, "llguidance")
    assert _settings(*base).cross_check_compiler is None


def test_generate_refuses_the_llguidance_compiler_on_llamacpp_before_loading(capsys):
    argv = ["generate", "--example", "currency", "--compiler", "llguidance", "--backend"]
    assert main([*argv, "llamacpp"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "runs on the llguidance backend only" in err, err


def _cross_checked(model, text: str, max_tokens: int):
    records = []
    # The converter, pinned: it skips multipleOf, so its mask differs from llguidance's.
    settings = GenerationSettings(
        backend="llguidance",
        compiler="llamacpp",
        temperature=0.0,
        max_tokens=max_tokens,
        cross_check=True,
        cross_check_compiler="llguidance",
    )
    result = run_to_end(
        model, compile_schema(text, "llamacpp"), "A number:", settings, records.append
    )
    return records, result


def test_cross_check_names_where_two_compilers_masks_differ(model):
    # llama.cpp's converter skips multipleOf, so after a first digit it lets the number end;
    # llguidance's compiler knows 1, 2, 4, ... are no multiples of 3 and does not.
    records, _ = _cross_checked(model, MULTIPLE_OF_3, 3)
    first = next(r for r in records if r.disagreement is not None)
    d = first.disagreement
    assert (d.between, d.primary, d.secondary) == ("compilers", "llamacpp", "llguidance")
    so_far = "".join(r.token_piece for r in records[: first.step])
    assert so_far and int(so_far) % 3 != 0  # where an end is wrong, and only llamacpp allows it
    assert d.n_only_secondary == 0
    assert set(model.eog_ids.tolist()) & {c.id for c in d.only_primary}


def test_cross_checked_run_round_trips_and_keeps_its_compilers(model, tmp_path):
    records, result = _cross_checked(model, MULTIPLE_OF_3, 3)
    run = SavedRun(MULTIPLE_OF_3, "A number:", model.info.name, tuple(records), result)
    save_run(tmp_path / "run.json", run)
    loaded = load_run(tmp_path / "run.json")
    assert loaded == run
    assert (run_settings(loaded).compiler, run_settings(loaded).cross_check_compiler) == (
        "llamacpp",
        "llguidance",
    )


def test_runs_saved_before_compilers_still_load(model, tmp_path):
    records, result = _cross_checked(model, MULTIPLE_OF_3, 3)
    data = run_to_json(SavedRun(MULTIPLE_OF_3, "A number:", "m.gguf", tuple(records), result))
    for key in ("compiler", "cross_check_compiler"):
        del data["result"]["settings"][key]
    for step in data["steps"]:
        if step.get("disagreement"):
            del step["disagreement"]["between"]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    old = load_run(tmp_path / "old.json")
    assert run_settings(old).compiler == "llamacpp"  # the only compiler there was
    assert all(r.disagreement.between == "backends" for r in old.records if r.disagreement)
    assert any(r.disagreement for r in old.records)  # the premise: there was one to read


@pytest.mark.slow
def test_generate_jsonl_says_which_compilers_disagree(capsys):
    argv = ["generate", "--example", "currency", "--temperature", "0", "--jsonl"]
    argv += ["--compiler", "llamacpp"]  # the converter's mask differs from llguidance's early
    assert main([*argv, "--cross-check-compiler", "llguidance", "--max-tokens", "4"]) in (0, 1)
    steps = [json.loads(line) for line in capsys.readouterr().out.splitlines()[:-1]]
    disagreements = [s["disagreement"] for s in steps if "disagreement" in s]
    assert disagreements and all(d["between"] == "compilers" for d in disagreements)
    assert all("n_only_llguidance" in d and "n_only_llamacpp" in d for d in disagreements)
