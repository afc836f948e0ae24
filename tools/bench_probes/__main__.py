"""`python -m tools.bench_probes PROBE INPUT.json`: one probe of probes.py, one JSON line."""

import sys

from tools.bench_probes.probes import main

sys.exit(main(sys.argv[1:]))
