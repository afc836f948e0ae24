"""Maskscope's engine: schema -> grammar -> mask backend -> step records. Never imports Qt."""

import os

from engine.lazy_iri import defer_iri_parser

# llama.cpp's CPU backend runs on OpenMP, whose idle workers spin for ~300,000 rounds (a few
# milliseconds) after every forward pass, holding the cores the step's own work then needs:
# with the default, a grammar check split over two cores ran no faster than on one. A short
# spin left the forward pass as fast (measured 1,000 to 300,000 alike; 0 doubles it). It
# must be set before llama.cpp loads; a value the user sets wins.
if "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = "1000"
    # Each thread that runs llama.cpp keeps its own OpenMP team. Once two have, libgomp sees
    # more threads than cores and cuts the spin to 100 rounds, which made the forward pass
    # 50% slower; ACTIVE keeps it at the 1,000 above.
    os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")

defer_iri_parser()  # before anything imports jsonschema
