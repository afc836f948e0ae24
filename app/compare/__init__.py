"""Comparing runs: with the previous run (previous.py), with the same run unconstrained
(unconstrained.py), and an original with its what-if branches (branches.py); all draw
their valid-mass curves with mass_curves.py."""
