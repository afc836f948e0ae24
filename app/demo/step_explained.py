"""The numbers the explanation panel shows for one step, as text, with no widgets.

Everything comes from the StepRecord and engine.explain.renormalise, never recomputed
from scratch, so what the panel shows is what the decoder used; the panel, its copy button
and its tests all read this one object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.explain.forbidden import output_before
from engine.explain.renormalise import Division, Renormalisation, explain
from engine.records import Candidate, StepRecord

NO_NUMBER = "—"  # a number the record does not hold (logits in runs saved before them)
ROWS = 12  # candidates listed: the top before masking, then valid ones found after it


@dataclass(frozen=True, slots=True)
class Stage:
    """One box of the pipeline: the sampled token's number at that stage."""

    name: str
    plain: str  # the name in presentation mode
    value: str
    tip: str
    tone: str = ""  # "ok", "bad" or "chosen": how the box is coloured
    plain_value: str = ""  # the value in presentation mode, where it needs other words

    def shown(self, plain: bool) -> str:
        return self.plain_value if plain and self.plain_value else self.value


@dataclass(frozen=True, slots=True)
class Row:
    candidate: Candidate
    division: Division | None  # P / ΣP = P' for valid candidates
    chosen: bool

    @property
    def valid(self) -> bool:
        return self.candidate.valid


@dataclass(frozen=True, slots=True)
class StepExplained:
    index: int
    record: StepRecord
    renorm: Renormalisation
    stages: tuple[Stage, ...]
    rows: tuple[Row, ...]
    before: str  # the output before this step
    temperature: float

    @property
    def valid_count(self) -> str:
        r = self.renorm
        n = f"{'at least ' if not self.record.n_valid_exact else ''}{r.n_valid:,}"
        of = f" of {r.n_vocab:,}" if r.n_vocab else ""
        noun = "token is" if r.n_valid == 1 else "tokens are"
        return f"{n}{of} {noun} valid"

    @property
    def chosen_text(self) -> str:
        """Sampled `USD`: the model's 1st choice before masking, 1st of 15 valid after."""
        return self.chosen_words(plain=False)

    def chosen_words(self, plain: bool) -> str:
        r = self.renorm
        verb = "Took" if self.temperature <= 0 else "Sampled"
        masking, valid = ("the rules", "allowed") if plain else ("masking", "valid")
        before = (
            f"the model's {ordinal(r.rank_before)} choice"
            if r.rank_before
            else "not in the model's top list"
        )
        after = (
            f"the {ordinal(r.rank_after)} of {r.n_valid:,} {valid}"
            if r.rank_after
            else f"below the top {valid}"
        )
        return (
            f"{'Picked' if plain else verb} `{r.chosen}`: {before} before {masking}, {after} after"
        )


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def fmt(x: float | None) -> str:
    """P and P' as the mission documents write them: three significant digits."""
    return NO_NUMBER if x is None else f"{x:.3g}"


def fmt_logit(x: float | None) -> str:
    return NO_NUMBER if x is None else f"{x:.2f}"


def explain_step(
    records: Sequence[StepRecord], index: int, n_vocab: int | None, temperature: float
) -> StepExplained:
    record = records[index]
    renorm = explain(record, n_vocab or 0)
    chosen = _find(record, record.token_id)
    return StepExplained(
        index=index,
        record=record,
        renorm=renorm,
        stages=_stages(record, renorm, chosen, temperature),
        rows=_rows(record, renorm),
        before=output_before(records, index),
        temperature=temperature,
    )


def _find(record: StepRecord, token_id: int) -> Candidate | None:
    return next((c for c in (*record.top_raw, *record.top_masked) if c.id == token_id), None)


def _stages(
    record: StepRecord, r: Renormalisation, chosen: Candidate | None, t: float
) -> tuple[Stage, ...]:
    logit = chosen.logit if chosen else None
    greedy = t <= 0
    scaled = None if logit is None else logit / (1.0 if greedy else t)
    p = chosen.p_raw if chosen else None
    p_after = chosen.p_masked if chosen else None
    valid = chosen is None or chosen.valid
    rank = f"rank {r.rank_after} of {r.n_valid:,}" if r.rank_after else f"of {r.n_valid:,}"
    return (
        Stage("logits", "model's score", fmt_logit(logit), "The model's raw score for the token."),
        Stage(
            "÷ T" if not greedy else "÷ T (T = 0)",
            "sharpened" if not greedy else "no sharpening",
            fmt_logit(scaled),
            f"The score divided by the temperature T = {t:g}."
            if not greedy
            else "Greedy decoding: the scores are kept as they are (÷ 1) and the top token wins.",
        ),
        Stage(
            "softmax P",
            "model's preference",
            fmt(p),
            "P: the model's probability over the whole vocabulary, before any rule.",
        ),
        Stage(
            "mask",
            "the rules",
            "valid ✓" if valid else "masked ✗",
            "The grammar keeps the tokens that can continue valid JSON; the rest get P = 0.",
            "ok" if valid else "bad",
            "allowed ✓" if valid else "forbidden ✗",
        ),
        Stage(
            "renormalise",
            "rescaled",
            fmt(p_after),
            f"P′ = P / ΣP: the kept tokens share all the probability; ΣP = {fmt(r.valid_mass)}.",
        ),
        Stage(
            "sample",
            "picked",
            f"{'top' if greedy else 'drawn'}, {rank}",
            "Greedy: the most probable valid token."
            if greedy
            else "A token is drawn at random by P′: this one, by its rank among the valid.",
            "chosen",
            f"{ordinal(r.rank_after)} of {r.n_valid:,} allowed" if r.rank_after else "",
        ),
    )


def _rows(record: StepRecord, r: Renormalisation) -> tuple[Row, ...]:
    """The top candidates before masking, then the valid ones only the masked list names
    (a currency the model barely wanted still gets its share after)."""
    divisions = {d.text: d for d in r.divisions}
    seen = {c.id for c in record.top_raw}
    listed = [*record.top_raw, *(c for c in record.top_masked if c.id not in seen)]
    listed.sort(key=lambda c: -c.p_raw)
    shown = listed[:ROWS]
    if record.token_id not in {c.id for c in shown}:
        shown += [c for c in listed if c.id == record.token_id]
    return tuple(Row(c, _division(c, r, divisions), c.id == record.token_id) for c in shown)


def _division(c: Candidate, r: Renormalisation, divisions: dict[str, Division]) -> Division | None:
    if not c.valid:
        return None
    return divisions.get(c.text) or Division(c.text, c.p_raw, r.valid_mass, c.p_masked)


def plain_text(step: StepExplained, why: str = "") -> str:
    """The explanation as text to paste into notes or a ticket."""
    r = step.renorm
    lines = [
        f"Step {step.record.step + 1}. {step.chosen_text}",
        f"Output so far: {step.before}{step.record.token_piece}",
        "Pipeline: " + " → ".join(f"{s.name} {s.value}" for s in step.stages),
        step.valid_count,
        f"ΣP over the valid set: {r.sum_written()}",
        "Candidates (P before masking, valid, P′ after):",
    ]
    for row in step.rows:
        c = row.candidate
        after = (
            row.division.written() if row.division else ("0" if not c.valid else fmt(c.p_masked))
        )
        mark = "valid" if c.valid else "masked"
        lines.append(
            f"  {c.text}\t{fmt(c.p_raw)}\t{mark}\t{after}{'  ← drawn' if row.chosen else ''}"
        )
    if why:
        lines.append(why)
    return "\n".join(lines)
