"""llama.cpp's JSON-Schema converter (the C++ one llama-server runs; llama-cpp-python's Python
port where that is not built) and its coverage report."""
