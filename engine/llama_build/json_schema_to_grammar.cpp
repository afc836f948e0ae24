// llama.cpp's own JSON-Schema converter (common/json-schema-to-grammar.cpp), the one
// llama-server runs for `json_schema` and `response_format`, as a command: a schema on
// stdin, its GBNF on stdout. Compiled by engine/llama_build/converter.py against the
// llama.cpp sources inside llama-cpp-python's sdist, so it is the server's code, unchanged.
//
// Exit 0: the grammar, and on stderr the converter's own warnings (a pattern it cannot
// convert, which it lets match any string). Exit 1: the converter refused the schema; its
// message is on stderr. Exit 2: the input is not JSON. An assertion in llama.cpp aborts.

#include "json-schema-to-grammar.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>

// llama.cpp's asserts end in ggml_abort, which lives in ggml; only this much of it is needed.
extern "C" [[noreturn]] void ggml_abort(const char * file, int line, const char * fmt, ...) {
    std::fprintf(stderr, "%s:%d: ", file, line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fprintf(stderr, "\n");
    std::abort();
}

int main() {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    common_json schema;
    try {
        schema = common_json::parse(text);
    } catch (const std::exception & e) {
        std::cerr << "not JSON: " << e.what() << "\n";
        return 2;
    }
    try {
        std::cout << json_schema_to_grammar(schema);
    } catch (const std::exception & e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
