"""Maskscope's engine: schema -> grammar -> mask backend -> step records. Never imports Qt."""

import os

# llama.cpp's CPU backend runs on OpenMP, whose idle workers spin for ~300,000 rounds (a few
# milliseconds) after every forward pass, holding the cores the step's own work then needs:
# with the default, a grammar check split over two cores ran no faster than on one. A short
# spin left the forward pass as fast (measured 1,000 to 300,000 alike; 0 doubles it). It
# must be set before llama.cpp loads; a value the user sets wins.
os.environ.setdefault("GOMP_SPINCOUNT", "1000")
