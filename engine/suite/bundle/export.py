"""`maskscope export SUITE --out DIR`: the tested schema for production, as a folder.

The export runs the suite itself (through the run cache, so a suite that `maskscope test`
has just run is read back, not decoded again) rather than reading a result file: a result
file holds neither the grammar nor the model's hash, so it could not prove that the bundle
is what was tested. The bundle holds:

- schema.json: the suite's schema text, byte for byte as it was compiled and hashed (a schema
  file as read, its line ends made \n); grammar.gbnf: the compiled grammar
  that was tested (grammar.llguidance.json for the llguidance compiler, which makes no GBNF),
  and beside it grammar.lark and grammar.xgrammar.ebnf, the same grammar in llguidance's and
  XGrammar's syntax, each proven to accept and reject what it did (grammar_files.py);
- suite.json: the suite, self-contained (its cases inline, its schema read from schema.json);
- report.json (`maskscope test --json`'s result) and report.html (self-contained, no script);
- README.md: what was tested, on which model, with what results, and each file's use;
- snippets/: a request for each server that takes one of those grammars (llama-server,
  llama-cpp-python's server, vLLM, SGLang) or the schema (`response_format`), post.py that
  sends one and fails loudly, llama_cpp_python.py (snippets.py); promptfooconfig.yaml
  and the copy of the schema its `is-json` reads (schema.promptfoo.json,
  engine/suite/bundle/promptfoo_schema.py);
- hashes.json: the sha256 of every other file, and of the tested schema, grammar and model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.decode.loop import build_prompt
from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.grammar.compilers.llamacpp.converter import converter_in_use
from engine.grammar.compilers.llamacpp.coverage import unenforced_keywords
from engine.model.llama import Model
from engine.runs.provenance import provenance_of
from engine.runs.saved import write_atomically
from engine.suite.bundle import snippets
from engine.suite.bundle.grammar_files import grammar_files, known_texts, prove
from engine.suite.bundle.promptfoo import promptfoo_files
from engine.suite.bundle.promptfoo_gate import gate
from engine.suite.bundle.readme import bundle_readme
from engine.suite.bundle.report import bundle_report
from engine.suite.bundle.schema_files import record_files
from engine.suite.bundle.tested import ConverterGap, Decoded, Tested
from engine.suite.cache import RunCache
from engine.suite.format import Suite
from engine.suite.load import suite_to_json
from engine.suite.metrics import Summary, Verdict, evaluate, summarise
from engine.suite.run import Progress, SuiteRun, run_suite
from engine.suite.summary import EXIT_ERROR, exit_code, summary_to_json
from engine.suite.template import render_prompt

HASHES = "hashes.json"
SUITE_FILE = "suite.json"
FORMAT = "maskscope-bundle"
VERSION = 1
# What a folder name may keep of a suite's name: no separator, no NUL, nothing Windows bars.
_NOT_IN_FOLDER_NAMES = re.compile(r"[^\w .-]+")


class BundleError(MaskscopeError):
    kind = "export"


@dataclass(frozen=True, slots=True)
class Exported:
    run: SuiteRun
    tested: Tested | None  # None when the run was cancelled and no bundle was written
    hashes: dict[str, str]  # bundle path -> sha256


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def converter_gap(compiled: CompiledSchema) -> ConverterGap:
    """How llama-server's converter (llama.cpp's json-schema-to-grammar, which the
    `llamacpp` compiler runs) compares with the grammar that was tested."""
    skipped = tuple(unenforced_keywords(compiled.schema))
    native = converter_in_use().native
    if compiled.compiler == "llamacpp":
        return ConverterGap(True, skipped, native=native)
    try:
        theirs = compile_schema(compiled.text, "llamacpp")
    except GrammarError as exc:
        return ConverterGap(False, skipped, refused=exc.message, native=native)
    return ConverterGap(theirs.gbnf == compiled.gbnf, skipped, native=native)


def tested_of(model: Model, suite: Suite, run: SuiteRun) -> Tested:
    """What the bundle says of `run`, the suite's finished run on `model`; BundleError when
    a sample of it was decoded under another grammar than the one compiled now."""
    settings = suite.settings()
    compiled = compile_schema(suite.schema_text, settings.compiler)
    # As `maskscope test` sums it: tokens/s over decoding times, the planned samples counted.
    summary = summarise(run.samples, n_planned=run.planned)
    verdict = evaluate(summary, suite.thresholds)
    if not suite.cases:
        raise BundleError("the suite has no cases: there is nothing to export as tested")
    user_prompt = render_prompt(suite.prompt, suite.cases[0].vars)
    code = EXIT_ERROR if run.cancelled else exit_code(verdict)
    tested = tested_with(model, suite, compiled, summary, verdict, user_prompt, code)
    check_samples_tested(run, tested)
    # Each grammar file read back by its engine, on every known text: matching, no decoding.
    texts = known_texts(suite, [sample.result.text for sample in run.samples])
    proofs = prove(model, compiled, suite.backend, grammar_files(compiled), texts)
    # Tested when the samples were decoded: a cached sample keeps the time of its decoding.
    decoded = Decoded.of(run.runs, run.cached)
    return dataclasses.replace(tested, proofs=proofs, decoded=decoded)


def tested_with(
    model: Model,
    suite: Suite,
    compiled: CompiledSchema,
    summary: Summary,
    verdict: Verdict,
    user_prompt: str,
    code: int,
) -> Tested:
    """A Tested for measured results, its provenance and prompts from the local model."""
    settings = suite.settings()
    return Tested(
        suite=suite,
        compiled=compiled,
        summary=summary,
        verdict=verdict,
        provenance=provenance_of(model.info.path, settings, model.n_vocab),
        model_prompt=build_prompt(model, user_prompt, settings),
        user_prompt=user_prompt,
        converter=converter_gap(compiled),
        exit_code=code,
    )


def export_suite(
    model: Model,
    suite: Suite,
    out: Path,
    *,
    samples: int | None = None,
    cache: RunCache | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[Progress], None] | None = None,
) -> Exported:
    """Run the suite, `samples` per case (the suite's own count by default; cached samples
    read back), and write its bundle to `out`. A cancelled run writes nothing: a bundle is
    a statement about a finished test."""
    previous_bundle(out)  # a folder the bundle cannot go to fails before the run, not after
    if samples is not None:  # the shipped suite says how many samples were tested
        suite = dataclasses.replace(suite, samples=samples)
    run = run_suite(model, suite, cache=cache, should_stop=should_stop, on_progress=on_progress)
    if run.cancelled:
        return Exported(run, None, {})
    tested = tested_of(model, suite, run)
    return Exported(run, tested, write_bundle(out, tested))


def check_samples_tested(run: SuiteRun, tested: Tested) -> None:
    """BundleError unless every sample was decoded under the grammar the bundle ships: the
    bundle's results must be that grammar's, not an older one's read from a cache."""
    shipped = sha256_text(tested.grammar_text)
    # A run made of samples alone (no saved runs, as some callers build one) has nothing
    # that says which grammar made it, and nothing to check.
    for sample, saved in zip(run.samples, run.runs, strict=False):
        if saved.grammar_sha256 != shipped:
            made = saved.grammar_sha256 or "an unrecorded grammar"
            raise BundleError(
                f"case {sample.case_id!r}, sample {sample.index + 1} was decoded under "
                f"grammar {made[:12]}, not the grammar this bundle ships ({shipped[:12]}): "
                "run the export again with --no-cache"
            )


def bundle_files(tested: Tested) -> dict[str, str]:
    """Every file of the bundle but README.md and hashes.json, path -> text."""
    suite, model = tested.suite, tested.provenance.model_file
    files = {
        snippets.SCHEMA_FILE: suite.schema_text,
        SUITE_FILE: snippets.json_text(suite_to_json(self_contained(suite))),
        "report.json": snippets.json_text(report_json(tested)),
    }
    files.update(record_files(suite))  # a schema of several files: which went where, proven
    files.update(snippets.snippet_files(tested))  # grammars, requests, scripts
    files.update(promptfoo_files(suite, model))
    files["report.html"] = bundle_report(tested, _hashes(files))
    return files


def self_contained(suite: Suite) -> Suite:
    """The suite as the bundle ships it: its schema read from schema.json beside it (the
    same bytes), its cases inline rather than in a cases file."""
    cases = tuple(dataclasses.replace(case, line=None) for case in suite.cases)
    return dataclasses.replace(
        suite, schema_file=snippets.SCHEMA_FILE, cases_file=None, cases=cases, path=None
    )


def report_json(tested: Tested) -> dict:
    result = summary_to_json(tested.summary, tested.verdict, tested.suite.name)
    result["exit_code"] = tested.exit_code
    result["grammars"] = tested.grammars_json()
    # Which thresholds promptfooconfig.yaml's exit code carries, and why not the others.
    result["promptfoo"] = gate(tested.suite).to_json()
    return result


def tested_hashes(tested: Tested) -> dict[str, str]:
    """The sha256 of what was tested, whatever file names it ships under."""
    return {
        "schema_sha256": sha256_text(tested.suite.schema_text),
        "grammar_sha256": sha256_text(tested.grammar_text),
        "model_sha256": tested.provenance.model_sha256,
    }


def _hashes(files: dict[str, str]) -> dict[str, str]:
    return {path: sha256_text(text) for path, text in sorted(files.items())}


def bundle_folder_name(suite_name: str) -> str:
    """The folder a bundle gets inside a folder the user chose: one path part whatever the
    suite's name holds (`../x`, `a/b`, a NUL), so the bundle cannot land anywhere else."""
    safe = _NOT_IN_FOLDER_NAMES.sub("_", suite_name).strip(" .")
    return f"{safe or 'suite'}-bundle"


def write_bundle(out: Path, tested: Tested) -> dict[str, str]:
    """Write the bundle into `out` (created if missing) and return each file's sha256."""
    files = bundle_files(tested)
    files["README.md"] = bundle_readme(tested, _hashes(files))
    hashes = _hashes(files)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "suite": tested.suite.name,
        "compiler": tested.compiled.compiler,
        "backend": tested.suite.backend,
        "model_file": tested.provenance.model_file,
        "grammar_file": tested.grammar_file,
        "tested": tested_hashes(tested),
        "files": hashes,
    }
    files[HASHES] = json.dumps(manifest, indent=2) + "\n"
    previous_bundle(out)  # again: the folder may have changed during the run
    temp = _beside(out, "partial")
    try:
        for path, text in files.items():
            _write(temp / path, text)
        _swap_in(temp, out)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)  # ours: made just above
        raise
    return {**hashes, HASHES: sha256_text(files[HASHES])}


def _beside(out: Path, what: str) -> Path:
    """A new name beside `out`, on the same file system, so that a rename is atomic."""
    return out.with_name(f".{out.name}.{secrets.token_hex(4)}.{what}")


def _swap_in(temp: Path, out: Path) -> None:
    """Put the finished bundle in `temp` where `out` is, in whole: the old bundle (or empty
    folder) is moved aside, the new one renamed in, and the old one removed only then. A
    failure leaves the old bundle where it was."""
    try:
        if not out.exists() and not out.is_symlink():
            os.rename(temp, out)
            return
        aside = _beside(out, "old")
        os.rename(out, aside)
        try:
            os.rename(temp, out)
        except OSError:
            os.rename(aside, out)
            raise
    except OSError as exc:
        raise BundleError(f"cannot replace {out}: {exc.strerror or exc}") from None
    # Only files the old manifest listed are in it (previous_bundle refuses anything else).
    shutil.rmtree(aside, ignore_errors=True)


def previous_bundle(out: Path) -> list[Path]:
    """The files of an earlier bundle in `out`, which a new one replaces in whole: those its
    hashes.json lists, and hashes.json. A missing or empty folder has none. Any other folder,
    and a bundle folder holding anything its hashes.json does not list, is refused
    (BundleError): it is not ours to replace, and a file left there unlisted would pass for
    part of the bundle."""
    if not out.exists():
        return []
    if not out.is_dir():
        raise BundleError(f"{out} is a file, not a folder for the bundle")
    manifest = out / HASHES
    if not manifest.is_file():
        if any(out.iterdir()):
            raise BundleError(f"{out} is not empty and holds no bundle: choose a new folder")
        return []
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        names = [*listed, HASHES]
    except (OSError, ValueError, KeyError, TypeError):
        raise BundleError(f"{manifest} is damaged: remove the old bundle first") from None
    root = out.resolve()
    found = [(out / name).resolve() for name in names if isinstance(name, str)]
    _refuse_unlisted(out, {name for name in names if isinstance(name, str)})
    return [path for path in found if path.is_relative_to(root) and path.is_file()]


def _refuse_unlisted(out: Path, listed: set[str]) -> None:
    """BundleError when `out` holds a file or link its old bundle does not list: the new
    bundle replaces the folder in whole, and that file is the user's."""
    for folder, dirs, names in os.walk(out):  # links to folders are listed, not followed
        here = Path(folder)
        for name in names + [d for d in dirs if (here / d).is_symlink()]:
            relative = (here / name).relative_to(out).as_posix()
            if relative not in listed:
                raise BundleError(
                    f"{out} holds {relative}, which its old bundle does not list: move it "
                    "out, or choose a new folder"
                )


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text)
    except OSError as exc:
        raise BundleError(f"cannot write {path}: {exc.strerror or exc}") from None
