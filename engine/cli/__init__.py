"""The `maskscope` command line: one module per subcommand."""
