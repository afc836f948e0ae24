"""Schema -> GBNF: the compilers, GBNF rewrites and llama.cpp's own parser check."""
