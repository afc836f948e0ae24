"""The report's one stylesheet: plain, readable, light and dark, and printable."""

from __future__ import annotations

CSS = """
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --panel: #f5f7fa;
  --code: #f0f2f6; --accent: #2f6fdb; --free: #3b7be0; --forced: #8a5cd6;
  --overruled: #e0661f; --ok: #1f8a4c; --bad: #c73535; --grid: #e4e8ef;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #16191f; --fg: #e4e7ee; --muted: #9aa3b4; --line: #343a46; --panel: #1e222a;
    --code: #232832; --accent: #6ea0f5; --free: #5b93ee; --forced: #b08cf0;
    --overruled: #f08a4b; --ok: #4cc47f; --bad: #f07070; --grid: #2c323d;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
main { max-width: 1100px; margin: 0 auto; padding: 28px 28px 56px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 {
  font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px;
  border-bottom: 1px solid var(--line);
}
h3 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 6px 0; }
.sub, .note { color: var(--muted); }
.note { font-size: 13px; }
code, pre, .tok, .mono {
  font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px;
}
pre.output { font-size: 17px; line-height: 1.7; padding: 14px 18px; }
pre {
  margin: 0; padding: 12px 14px; background: var(--code); border: 1px solid var(--line);
  border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere;
}
pre.scroll { max-height: 340px; overflow: auto; }
.badge {
  display: inline-block; padding: 2px 10px; border-radius: 999px; font-weight: 600;
  font-size: 13px; color: #fff; vertical-align: middle;
}
.badge.valid { background: var(--ok); }
.badge.invalid { background: var(--bad); }
.badge.plain { background: var(--muted); }
.verdict { margin-top: 14px; padding: 12px 16px; border-radius: 8px; background: var(--panel);
  border-left: 4px solid var(--ok); }
.verdict.invalid { border-left-color: var(--bad); }
.verdict ul { margin: 6px 0 0; padding-left: 20px; }
.inputs { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
.inputs h3 { margin-top: 0; }
@media (max-width: 800px) { .inputs { grid-template-columns: 1fr; } }
.output .t { border-radius: 2px; color: inherit; text-decoration: none; }
.output .t.forced { box-shadow: inset 0 -3px 0 var(--forced); }
.output .t.overruled { box-shadow: inset 0 -3px 0 var(--overruled); }
.output .t:hover { outline: 1px solid var(--accent); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 20px; margin: 8px 0 0; padding: 0;
  list-style: none; font-size: 13px; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; }
.swatch.free { background: var(--free); }
.swatch.forced { background: var(--forced); }
.swatch.overruled { background: var(--overruled); }
.swatch.shade {
  width: 36px; background: linear-gradient(90deg, rgba(224,102,31,0), rgba(224,102,31,.55));
}
figure { margin: 14px 0 4px; }
figcaption { font-weight: 600; }
figcaption span { font-weight: normal; color: var(--muted); }
svg.chart { width: 100%; height: auto; display: block; margin-top: 4px; }
svg.chart text { fill: var(--muted); font-size: 11px; font-family: inherit; }
svg.chart .grid { stroke: var(--grid); stroke-width: 1; }
svg.chart .axis { stroke: var(--line); stroke-width: 1; }
svg.chart .bar.free { fill: var(--free); }
svg.chart .bar.forced { fill: var(--forced); }
svg.chart .bar.overruled { fill: var(--overruled); }
svg.chart .line { fill: none; stroke: var(--accent); stroke-width: 1.6; }
svg.chart .dot.free { fill: var(--free); }
svg.chart .dot.forced { fill: var(--forced); }
svg.chart .dot.overruled { fill: var(--overruled); }
svg.chart .dip {
  fill: var(--fg); font-size: 11px; paint-order: stroke; stroke: var(--bg);
  stroke-width: 3px; stroke-linejoin: round;
}
.stats { margin: 4px 0 10px; }
.stats b { font-variant-numeric: tabular-nums; }
svg.chart a:hover .bar, svg.chart a:hover .dot { opacity: .75; }
.steps { border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.row {
  display: grid; align-items: center; gap: 10px; padding: 6px 12px;
  grid-template-columns: 52px minmax(70px, 1fr) 84px 116px 56px 2.6fr 2.2fr;
}
.head { background: var(--panel); font-size: 12px; font-weight: 600; color: var(--muted);
  text-transform: uppercase; letter-spacing: .03em; }
details.step { border-top: 1px solid var(--line); }
details.step > summary { list-style: none; cursor: pointer; }
details.step > summary::-webkit-details-marker { display: none; }
details.step > summary:hover { background: var(--panel); }
details.step[open] > summary { background: var(--panel); }
details.step:target > summary { outline: 2px solid var(--accent); outline-offset: -2px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.stepno::before { content: "▸ "; color: var(--muted); }
details[open] .stepno::before { content: "▾ "; }
.tok { background: var(--code); border: 1px solid var(--line); border-radius: 4px;
  padding: 0 4px; white-space: pre; }
.mark { font-size: 12px; font-weight: 600; }
.mark.forced { color: var(--forced); }
.mark.overruled { color: var(--overruled); }
.mark.free { color: var(--muted); font-weight: normal; }
.massbar { display: flex; align-items: center; gap: 6px; }
.massbar i {
  display: inline-block; height: 8px; border-radius: 4px; background: var(--free);
  min-width: 2px;
}
.cands { display: flex; flex-wrap: wrap; gap: 4px; font-size: 12px; }
.cand { white-space: nowrap; }
.cand.masked .tok { text-decoration: line-through; color: var(--muted); }
.cand b { font-weight: normal; color: var(--muted); font-variant-numeric: tabular-nums; }
.why { padding: 4px 16px 16px 56px; display: grid; grid-template-columns: 1fr 1fr; gap: 8px 28px; }
.why .sum, .why .facts { grid-column: 1 / -1; }
.why ol { margin: 4px 0; padding-left: 22px; }
.why li { font-variant-numeric: tabular-nums; }
table.cands-table { border-collapse: collapse; width: 100%; font-size: 13px; }
table.cands-table th, table.cands-table td {
  padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: left;
}
table.cands-table th { color: var(--muted); font-weight: 600; font-size: 12px; }
table.cands-table td.num, table.cands-table th.num { text-align: right; }
tr.masked td { color: var(--muted); }
tr.chosen td { font-weight: 600; }
.yes { color: var(--ok); }
.no { color: var(--bad); }
table.facts { border-collapse: collapse; font-size: 14px; }
table.facts th {
  text-align: left; font-weight: 600; padding: 4px 18px 4px 0; vertical-align: top;
  white-space: nowrap;
}
table.facts td { padding: 4px 0; overflow-wrap: anywhere; }
.columns { display: grid; grid-template-columns: 3fr 2fr; gap: 28px; }
@media (max-width: 800px) {
  .columns { grid-template-columns: 1fr; }
  .why { grid-template-columns: 1fr; padding-left: 16px; }
}
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print {
  :root {
    --bg: #fff; --fg: #000; --muted: #444; --line: #bbb; --panel: #f3f3f3; --code: #f6f6f6;
  }
  main { max-width: none; padding: 0; }
  pre.scroll { max-height: none; overflow: visible; }
  @page { margin: 14mm; }
  /* A page is narrower than a screen: the step rows lose the bar and the arrow. */
  .row { grid-template-columns: 36px minmax(60px, 1fr) 66px 56px 52px 2.2fr 2fr; gap: 6px;
    font-size: 12px; }
  .massbar i, .stepno::before, details[open] .stepno::before { display: none; }
  details.step > summary, figure, .verdict, .why > div, pre.output { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
}
"""
