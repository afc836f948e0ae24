"""The Engines pane: what each production engine does with the schema in the editor."""
