"""The schema workbench, headless: every problem of a schema text, located, with lint fixes."""
