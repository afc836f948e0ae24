"""Developer tools run from a checkout: never packaged (pyproject includes engine, app and
resources only) and never imported by engine/ or app/."""
