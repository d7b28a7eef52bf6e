# libFuzzer targets (clang only), built with -DATTN_FUZZ=ON in build/san (scripts/test-sanitize):
#   fuzz_safetensors   the safetensors reader (and the JSON reader under it)
#   fuzz_model_loader  the reader + config inference + load_model / save_model
#   fuzz_cli_args      attn::cli::Args and trainer_config_from
#   fuzz_trainer       TrainerConfig::validate, Trainer, step() and attention() on fuzzed ids
# Seed corpora: tests/fuzz/corpus/<target>/. The core is compiled with coverage
# instrumentation (fuzzer-no-link) and the same sanitizers, so a finding inside it is caught.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "ATTN_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()

# With ATTN_SANITIZE (scripts/test-sanitize's tree, build/san) every target already has these, and
# the same tree builds the sanitized test suite; on their own, the fuzz targets add them here.
if(ATTN_SANITIZE)
  set(ATTN_FUZZ_SANITIZERS)
else()
  set(ATTN_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer -g)
endif()
target_compile_options(attn PRIVATE -fsanitize=fuzzer-no-link ${ATTN_FUZZ_SANITIZERS})

add_library(attn_fuzz_cli STATIC cpp/cli/args.cpp cpp/cli/config_flags.cpp)
target_include_directories(attn_fuzz_cli PUBLIC cpp)
target_link_libraries(attn_fuzz_cli PUBLIC attn)
target_compile_options(attn_fuzz_cli PRIVATE -fsanitize=fuzzer-no-link ${ATTN_FUZZ_SANITIZERS})

foreach(name safetensors model_loader cli_args trainer)
  add_executable(fuzz_${name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.cpp)
  target_link_libraries(fuzz_${name} PRIVATE attn attn_fuzz_cli)
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${ATTN_FUZZ_SANITIZERS})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${ATTN_FUZZ_SANITIZERS})
endforeach()
