"""The schema as written: parsing with line:column errors, meta-validation, output checks."""
