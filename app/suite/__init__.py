"""Suites in the window: edit a suite in tables, run it off the GUI thread with progress and
Cancel, read its results, and open any sample in the main views."""
