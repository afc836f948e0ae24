"""Time the chart alone, as `make bench` does, at a chosen Top-K:
`python -m tools.bench_probes.chart_timing --top-k 50 [--steps 300] [--records FILE]`.

It decodes the bench's memory run (its long-string schema and prompt, T and seed) once,
keeping Top-K candidates per step, caches the records in FILE, and prints the median chart
update of the bench's chart probe (probes.py) over them. `make bench` itself runs far more;
this is the one number to check while working on the chart.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from engine.bench.measure import LONG_PROMPT, LONG_SCHEMA, RSS_STEPS, SEED, TARGETS, TEMPERATURE
from engine.decode.loop import generate
from engine.grammar.compile import compile_schema
from engine.model.llama import Model
from engine.records import StepRecord
from engine.runs.saved import step_from_json
from engine.settings import GenerationSettings, ModelSettings
from tools.bench_probes.probes import chart_update_ms


def decode_records(top_k: int, steps: int) -> list[StepRecord]:
    model = Model.load(ModelSettings())
    settings = GenerationSettings(max_tokens=steps, temperature=TEMPERATURE, seed=SEED, top_k=top_k)
    return list(generate(model, compile_schema(json.dumps(LONG_SCHEMA)), LONG_PROMPT, settings))


def cached_records(path: Path, top_k: int, steps: int) -> list[StepRecord]:
    if path.is_file():
        return [step_from_json(s) for s in json.loads(path.read_text(encoding="utf-8"))]
    records = decode_records(top_k, steps)
    path.write_text(json.dumps([r.to_json() for r in records]), encoding="utf-8")
    return records


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--steps", type=int, default=RSS_STEPS, help="the bench runs 500")
    p.add_argument("--records", type=Path, help="cache of decoded records (JSON)")
    p.add_argument("--log", action="store_true", help="bars on the log scale")
    args = p.parse_args(argv)
    path = args.records or Path(f"/tmp/maskscope-chart-records-k{args.top_k}-{args.steps}.json")
    records = cached_records(path, args.top_k, args.steps)
    app = QApplication.instance() or QApplication([])
    median = chart_update_ms(app, records, bar_log=args.log)
    target = dict(TARGETS)["chart_update_ms_p50"]
    verdict = "met" if median <= target else "missed"
    print(
        f"top-k {args.top_k}{' log' if args.log else ''}: {len(records)} updates, "
        f"median {median:.2f} ms (target ≤ {target:g}: {verdict})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
