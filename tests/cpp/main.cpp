// Catch2 v2 entry point for the whole suite (native and wasm).
#ifdef __wasm_relaxed_simd__
// clang 19 renames a wasm main(int, char**) to __main_argc_argv, which Emscripten 3.1.6 neither
// exports nor calls (the suite would exit 0 having run nothing): the relaxed-SIMD build defines the
// symbol `main` itself, under another C++ name, and runs Catch2's session from it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
extern "C" int attn_test_main(int argc, char** argv) __asm__("main");
extern "C" int attn_test_main(int argc, char** argv) { return Catch::Session().run(argc, argv); }
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
