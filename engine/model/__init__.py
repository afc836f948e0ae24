"""The llama.cpp model: loading, tokens, native log capture, the default model's path."""
