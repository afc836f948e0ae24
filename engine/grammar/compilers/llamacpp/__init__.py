"""llama.cpp's JSON-Schema converter (llama-cpp-python's port) and its coverage report."""
