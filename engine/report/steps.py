"""The report's step table: a row a step, each opening (a plain <details>, no script) on
the step's arithmetic as engine.explain writes it, and its candidates before and after."""

from __future__ import annotations

from collections.abc import Sequence

from engine.explain.marks import Mark, mark
from engine.explain.renormalise import Renormalisation, explain
from engine.records import Candidate, StepRecord
from engine.report.escape import escape, shown_token, token_title

SHOWN = 3  # candidates shown in a closed row, before and after masking
_MARK_WORD = {Mark.FREE: "–", Mark.FORCED: "forced", Mark.OVERRULED: "overruled"}
HEAD = (
    '<div class="row head"><span>Step</span><span>Token</span><span>Mark</span>'
    '<span>Valid mass</span><span class="num">Valid</span><span>Top before masking (P)</span>'
    "<span>Top after masking (P′)</span></div>"
)


def step_table(records: Sequence[StepRecord], n_vocab: int | None) -> str:
    rows = "".join(_step(r, n_vocab) for r in records)
    return f'<div class="steps">{HEAD}{rows}</div>'


def token(text: str, piece: str | None = None) -> str:
    """A token as a chip; `piece`, its exact text, gives the true code points (U+0020 for
    the ␣ that shows a space)."""
    return f'<span class="tok"{token_title(text, piece)}>{escape(shown_token(text, piece))}</span>'


def _step(r: StepRecord, n_vocab: int | None) -> str:
    m = mark(r)
    valid = f"{'≥' if not r.n_valid_exact else ''}{r.n_valid:,}"
    width = max(0.0, min(1.0, r.valid_mass)) * 60
    summary = (
        f'<summary class="row"><span class="stepno num">{r.step + 1}</span>'
        f"<span>{token(r.token_text, r.token_piece)}</span>"
        f'<span class="mark {m.value}" title="{escape(m.label)}">{_MARK_WORD[m]}</span>'
        f'<span class="massbar"><i style="width:{width:.0f}px"></i>'
        f'<span class="num">{r.valid_mass:.3g}</span></span>'
        f'<span class="num">{valid}</span>'
        f"<span>{_chips(r.top_raw[:SHOWN], raw=True)}</span>"
        f"<span>{_chips(r.top_masked[:SHOWN], raw=False)}</span></summary>"
    )
    why = _arithmetic(explain(r, n_vocab or 0), r, n_vocab)
    return f'<details class="step" id="step-{r.step + 1}">{summary}{why}</details>'


def _chips(candidates: Sequence[Candidate], raw: bool) -> str:
    chips = []
    for c in candidates:
        p = c.p_raw if raw else c.p_masked
        masked = raw and not c.valid
        cls = "cand masked" if masked else "cand"
        tip = ' title="masked out by the grammar"' if masked else ""
        chips.append(f'<span class="{cls}"{tip}>{token(c.text, c.piece)} <b>{p:.3f}</b></span>')
    return f'<span class="cands">{"".join(chips)}</span>'


def _arithmetic(why: Renormalisation, r: StepRecord, n_vocab: int | None) -> str:
    qualifier = (
        "" if why.exact else " (a lower bound: the mask was checked on the likeliest tokens)"
    )
    divisions = (
        "".join(f"<li>{token(d.text)} {escape(d.written())}</li>" for d in why.divisions)
        or "<li>no valid candidate in the top K</li>"
    )
    return (
        '<div class="why">'
        f'<div class="sum"><h3>ΣP over the valid set: what the rules kept{qualifier}</h3>'
        f'<p class="mono">{escape(why.sum_written())}</p></div>'
        f"<div><h3>Renormalised: P ÷ ΣP for each valid token</h3><ol>{divisions}</ol></div>"
        f"<div><h3>Facts</h3>{_facts(why, r, n_vocab)}</div>"
        f"<div>{_candidates_table('Before masking', r.top_raw, r.token_id, raw=True)}</div>"
        f"<div>{_candidates_table('After masking', r.top_masked, r.token_id, raw=False)}</div>"
        "</div>"
    )


def _facts(why: Renormalisation, r: StepRecord, n_vocab: int | None) -> str:
    at_least = "" if r.n_valid_exact else "at least "
    if n_vocab:
        share = f"{at_least}{why.n_valid:,} of {n_vocab:,} vocabulary tokens"
        share += f" ({why.n_valid / n_vocab:.3%})"
    else:
        share = f"{at_least}{why.n_valid:,} of the vocabulary"
    rows = [
        ("Valid tokens", share),
        ("Chosen", f"{why.chosen} ({mark(r).label})"),
        ("Rank before masking", _rank(why.rank_before)),
        ("Rank after masking", _rank(why.rank_after)),
        ("Raw entropy", f"{r.entropy:.3g} nats"),
    ]
    if (d := r.disagreement) is not None:
        rows.append(
            (
                f"Cross-check ({d.between})",
                f"{d.n_only_primary:,} allowed only by {d.primary}, "
                f"{d.n_only_secondary:,} only by {d.secondary}",
            )
        )
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'


def _rank(rank: int | None) -> str:
    return f"#{rank}" if rank is not None else "below the top K recorded"


def _candidates_table(title: str, candidates: Sequence[Candidate], chosen: int, raw: bool) -> str:
    logits = raw and any(c.logit is not None for c in candidates)
    head = "<th>#</th><th>Token</th>" + ('<th class="num">Logit</th>' if logits else "")
    head += '<th class="num">P</th><th>Valid</th>' if raw else '<th class="num">P′</th>'
    rows = []
    for i, c in enumerate(candidates, 1):
        cls = " ".join(k for k, on in (("masked", not c.valid), ("chosen", c.id == chosen)) if on)
        cells = f"<td>{i}</td><td>{token(c.text, c.piece)}</td>"
        if logits:
            cells += f'<td class="num">{"" if c.logit is None else f"{c.logit:.2f}"}</td>'
        if raw:
            ok = (
                '<span class="yes">✓ valid</span>'
                if c.valid
                else '<span class="no">✗ masked</span>'
            )
            cells += f'<td class="num">{c.p_raw:.4f}</td><td>{ok}</td>'
        else:
            cells += f'<td class="num">{c.p_masked:.4f}</td>'
        rows.append(f'<tr class="{cls}">{cells}</tr>')
    return (
        f'<h3>{escape(title)}</h3><table class="cands-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
