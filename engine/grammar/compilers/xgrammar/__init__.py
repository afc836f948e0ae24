"""XGrammar's own JSON Schema compiler and its coverage report."""
