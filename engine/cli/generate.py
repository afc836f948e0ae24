"""`maskscope generate`: one constrained run, every step printed as a row or a JSON line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from engine.cli.base import EXIT_INVALID, EXIT_VALID
from engine.cli.schema_file import add_root_argument, read_schema_file
from engine.errors import GrammarError, MaskscopeError
from engine.examples import EXAMPLE_ORDER, Example, load_example
from engine.llama_build.verdict import ensure_build_runs
from engine.model.options import add_model_arguments, model_settings
from engine.records import Disagreement, RunResult, StepRecord
from engine.runs.provenance import provenance_of
from engine.runs.saved import SavedRun, save_run
from engine.schema.nesting import read_limited
from engine.settings import (
    BACKENDS,
    COMPILERS,
    DEFAULT_BACKEND,
    DEFAULT_COMPILER,
    MAX_TOKENS,
    SEED,
    TEMPERATURE,
    TOP_K,
    GenerationSettings,
    pairings_text,
)

if TYPE_CHECKING:  # engine.model.llama loads llama.cpp, which waits until the build is proven
    from engine.model.llama import ModelInfo


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="run one constrained generation and print every step")
    _add_input_arguments(p)
    add_model_arguments(p)
    _add_generation_arguments(p)
    _add_output_arguments(p)
    p.set_defaults(func=cmd_generate)


def _add_input_arguments(p: argparse.ArgumentParser) -> None:
    """What to run: a schema file or a bundled example, and the prompt."""
    schema = p.add_mutually_exclusive_group(required=True)
    schema.add_argument("--schema", metavar="FILE", help="JSON Schema file")
    schema.add_argument(
        "--example", choices=EXAMPLE_ORDER, help="a bundled example: its schema, prompt, settings"
    )
    add_root_argument(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--prompt", help="prompt text (required with --schema)")
    src.add_argument("--prompt-file", metavar="FILE", help="file holding the prompt")


def _add_generation_arguments(p: argparse.ArgumentParser) -> None:
    """How to decode: the GenerationSettings, each left out unless given."""
    # No defaults here: a value left out comes from the example, else from GenerationSettings.
    d = GenerationSettings()
    p.add_argument("--max-tokens", type=MAX_TOKENS, help=f"default {d.max_tokens}")
    p.add_argument(
        "--temperature", type=TEMPERATURE, help=f"0 means greedy (default {d.temperature})"
    )
    p.add_argument("--seed", type=SEED, help=f"default {d.seed}")
    p.add_argument("--top-k", type=TOP_K, help=f"candidates shown per step (default {d.top_k})")
    p.add_argument("--backend", choices=BACKENDS, help=f"default {DEFAULT_BACKEND}")
    p.add_argument(
        "--compiler",
        choices=COMPILERS,
        help="what turns the schema into the grammar: maskscope (ours), llamacpp "
        "(llama-cpp-python's converter), llguidance (its own JSON Schema compiler) or "
        f"outlines (outlines-core's regex). Each runs on: {pairings_text()}; "
        f"default {DEFAULT_COMPILER}",
    )
    p.add_argument(
        "--exact-mask",
        action="store_true",
        help="llamacpp: check the full vocabulary every step (exact valid count, slower)",
    )
    p.add_argument(
        "--cross-check",
        action="store_true",
        help="also compute the other backend's mask and report where they disagree",
    )
    p.add_argument(
        "--cross-check-compiler",
        choices=COMPILERS,
        metavar="C",
        help="cross-check against compiler C's grammar on the same backend instead "
        "(implies --cross-check)",
    )
    p.add_argument("--chat-template", action="store_true", help="use the GGUF's chat template")
    p.add_argument(
        "--unconstrained",
        action="store_true",
        help="decode with no grammar at all (the model alone, to compare with a constrained "
        "run); the output is still validated against the schema",
    )


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    """What to write: the saved run, and rows or JSON lines."""
    p.add_argument(
        "--save-run",
        metavar="RUN.json",
        help="also save the run (every step, the result and its provenance) for the window "
        "or `maskscope report`",
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="one JSON object per step, then the result; token_piece is a token's exact text, "
        "token_text its display form (␣ for a space)",
    )


def cmd_generate(args: argparse.Namespace) -> int:
    # A build that crashes would take this process with it, and say nothing: prove it first.
    ensure_build_runs(Path(args.model).expanduser() if args.model else None)
    from engine.decode.loop import generate
    from engine.grammar.compile import compile_schema, cross_grammar
    from engine.masking.base import PLUGINS
    from engine.model.llama import Model
    from engine.model.paths import note_model

    example = load_example(args.example) if args.example else None
    schema_text = example.schema_text if example else read_schema_file(args.schema, args.root)
    prompt = _prompt(args, example)
    settings = generation_settings(args, example)
    if (problem := settings.problem()) is not None:
        raise GrammarError(problem)
    if args.model:  # the grammar judge may need its vocabulary
        note_model(args.model)
    compiled = compile_schema(schema_text, settings.compiler)
    for gap in compiled.unenforced if settings.constrained else ():
        print(f"maskscope: warning: {gap}", file=sys.stderr)
    model = Model.load(model_settings(args))
    if settings.constrained and (preparing := PLUGINS[settings.backend].preparing):
        print(f"maskscope: {preparing}", file=sys.stderr, flush=True)  # may take a while
    out = sys.stdout
    header = "" if args.jsonl else _run_header(model.info, settings)
    gen = generate(model, compiled, prompt, settings, cross=cross_grammar(compiled, settings))
    records: list[StepRecord] = []
    while True:
        try:
            record = next(gen)
        except StopIteration as stop:
            result: RunResult = stop.value
            break
        records.append(record)
        # Only once the run is set up: bad input found there (no chat template, a prompt
        # too long) then gets its one line on stderr and nothing on stdout.
        if header:
            print(header, file=out)
            header = ""
        if args.jsonl:
            print(json.dumps(step_json(record), ensure_ascii=False), file=out, flush=True)
        else:
            print_step_row(record, out)
    if args.jsonl:
        print(json.dumps({"result": result.to_json()}, ensure_ascii=False), file=out)
    else:
        if header:  # a run that ended before its first step
            print(header, file=out)
        print_result(result, out)
    if args.save_run:
        made = provenance_of(model.path, settings, model.info.n_vocab)
        run = SavedRun(schema_text, prompt, model.info.name, tuple(records), result, made)
        save_run(Path(args.save_run).expanduser(), run)
        print(f"maskscope: saved the run to {args.save_run}", file=sys.stderr)
    return EXIT_VALID if result.valid else EXIT_INVALID


def _prompt(args: argparse.Namespace, example: Example | None) -> str:
    if args.prompt is not None:
        return args.prompt
    if args.prompt_file is not None:
        return read_limited(args.prompt_file, "prompt")
    if example is None:
        raise MaskscopeError("--schema needs --prompt or --prompt-file")
    return example.prompt


def generation_settings(args: argparse.Namespace, example: Example | None) -> GenerationSettings:
    """The options given, over the example's own settings, over the defaults."""
    base = example.settings(GenerationSettings()) if example else GenerationSettings()
    given = {
        name: getattr(args, name)
        for name in (
            "max_tokens",
            "temperature",
            "seed",
            "top_k",
            "backend",
            "compiler",
            "cross_check_compiler",
        )
        if getattr(args, name) is not None
    }
    flags = {f: True for f in ("exact_mask", "cross_check", "chat_template") if getattr(args, f)}
    if args.cross_check_compiler is not None:
        flags["cross_check"] = True
    if args.unconstrained:
        flags["constrained"] = False
    return dataclasses.replace(base, **given, **flags)


def step_json(record: StepRecord) -> dict:
    """The --jsonl shape of one step. `token_piece` and each candidate's `piece` are the
    exact text a token adds to the output; `token_text` and `text` are the display form,
    where a space is `␣` and a newline the two characters `\\n`."""
    top = {c.id: c for c in record.top_raw}
    for c in record.top_masked:
        top.setdefault(c.id, c)
    data = {
        "step": record.step,
        "token_id": record.token_id,
        "token_piece": record.token_piece,
        "token_text": record.token_text,
        "valid_mass": record.valid_mass,
        "n_valid": record.n_valid,
        "top": [
            {
                "id": c.id,
                "piece": c.piece,
                "text": c.text,
                "p_raw": c.p_raw,
                "p_masked": c.p_masked,
                "valid": c.valid,
            }
            for c in top.values()
        ],
        "forward_ms": round(record.forward_ms, 3),
        "mask_ms": round(record.mask_ms, 3),
    }
    if not record.n_valid_exact:
        data["n_valid_is_lower_bound"] = True
        data["valid_mass_bound"] = record.valid_mass_bound
    if record.disagreement is not None:
        d = record.disagreement
        data["disagreement"] = {
            "between": d.between,
            f"only_{d.primary}": [c.text for c in d.only_primary],
            f"only_{d.secondary}": [c.text for c in d.only_secondary],
            f"n_only_{d.primary}": d.n_only_primary,
            f"n_only_{d.secondary}": d.n_only_secondary,
        }
    return data


def _run_header(info: ModelInfo, settings: GenerationSettings) -> str:
    return f"model: {info.name} · {info.offload_label}\n{_mask_line(settings)}\n{_TABLE_HEADER}"


def _mask_line(settings: GenerationSettings) -> str:
    if not settings.constrained:
        return "no grammar (unconstrained): every token allowed, the output validated after"
    cross = ""
    if settings.cross_check:
        against = settings.cross_check_compiler
        cross = f" (cross-check: the {against} compiler)" if against else " (cross-check)"
    return f"backend: {settings.backend} · compiler: {settings.compiler}{cross}"


_TABLE_HEADER = (
    f"{'step':>4}  {'token':<16} {'P raw':>7} {'P masked':>8} {'valid mass':>10} "
    f"{'n valid':>8}  {'fwd ms':>6} {'mask ms':>7}  top before masking (✗ = masked out)"
)


def print_step_row(record: StepRecord, out: TextIO) -> None:
    chosen = next((c for c in record.top_masked if c.id == record.token_id), None)
    p_raw = chosen.p_raw if chosen else 0.0
    p_masked = chosen.p_masked if chosen else 0.0
    n_valid = f"{'≥' if not record.n_valid_exact else ''}{record.n_valid}"
    top = " ".join(f"{c.text}{'' if c.valid else '✗'}:{c.p_raw:.2f}" for c in record.top_raw[:5])
    print(
        f"{record.step:>4}  {record.token_text[:16]:<16} {p_raw:>7.3f} {p_masked:>8.3f} "
        f"{record.valid_mass:>10.4g} {n_valid:>8}  {record.forward_ms:>6.1f} "
        f"{record.mask_ms:>7.2f}  {top}",
        file=out,
    )
    if record.disagreement is not None:
        d = record.disagreement
        print(f"      {d.between} disagree: {_disagreement_text(d)}", file=out)


def _disagreement_text(d: Disagreement, shown: int = 4) -> str:
    """Each side that allows tokens the other forbids: how many, and the likeliest."""
    sides = (
        (d.primary, d.n_only_primary, d.only_primary),
        (d.secondary, d.n_only_secondary, d.only_secondary),
    )
    parts = []
    for name, n, tokens in sides:
        if n:
            more = " …" if n > shown else ""
            parts.append(f"{n} only {name} ({' '.join(c.text for c in tokens[:shown])}{more})")
    return "; ".join(parts)


def print_result(result: RunResult, out: TextIO) -> None:
    print(f"\noutput: {result.text}", file=out)
    print(
        f"finish: {result.finish_reason.label} · {result.n_tokens} tokens · "
        f"{result.tokens_per_s:.1f} tokens/s",
        file=out,
    )
    for note in (result.message, result.unchecked_note):
        if note:
            print(f"note: {note}", file=out)
    if result.parse_error:
        print(f"INVALID: not JSON ({result.parse_error})", file=out)
    elif result.errors:
        print("INVALID against the schema:", file=out)
        for issue in result.errors:
            print(f"  {issue.path}: {issue.message}", file=out)
    elif result.valid:
        print("VALID against the schema", file=out)
    else:
        print("INVALID: the run did not finish", file=out)
