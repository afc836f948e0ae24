"""The grammar judge: does llama.cpp parse a GBNF, asked in a child process, the verdicts
cached on disk."""
