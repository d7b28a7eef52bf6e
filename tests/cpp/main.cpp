// Catch2 v2 entry point for the whole suite (native and wasm).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
