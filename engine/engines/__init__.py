"""One schema, every production engine: what each would do with it (issue 23)."""
