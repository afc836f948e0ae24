"""The benchmark's Qt measurements, kept out of the product: `maskscope bench` runs
`python -m tools.bench_probes PROBE INPUT.json` from the checkout (probes.py), and
`python -m tools.bench_probes.chart_timing` times the chart alone while working on it."""
