"""Where the user writes the schema and the prompt."""
