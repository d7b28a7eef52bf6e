# The JS module `attention-core` (Embind), included from CMakeLists.txt under emcmake.
# One build directory per variant (ATTN_SIMD ON/OFF); scripts/build-wasm drives both.
#   attention-core-<variant>.js/.wasm  the ES module for the page and its worker; the node tests,
#                                      benchmarks and soak load the same files (tests/web/load-core.mjs)
if(ATTN_SIMD)
  set(ATTN_WASM_VARIANT simd)
else()
  set(ATTN_WASM_VARIANT scalar)
endif()

# Size, in the SIMD build (the one the page downloads). Code that runs once per request rather
# than once per training step is optimised for size: the lesson's functions, weights files and
# JSON, the self-test, the circuit measurements, looking inside (its eigenvalue solver is the
# largest code of all), the text task's corpus, the sampler, the block's stages, the length
# evaluation, and the bindings with their conversions. The
# per-step code (model, attention layers, our SIMD kernels, loss, Adam, batches) keeps -O3. This
# keeps the page's download within its budget (README, Benchmarks) at no measured cost to the
# training speed. Not in the scalar build: there the products are Eigen's templates, and the
# linker may keep the copy instantiated in a -Os file for the hot path too (measured: 8x slower).
set(ATTN_WASM_SIZE_SOURCES
    ${CMAKE_SOURCE_DIR}/cpp/attn/attention.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/bench.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/circuits.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/error.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/json.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/safetensors.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/selftest.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/weights.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/inspect.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/text.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/sampling.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/block_stages.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/length_eval.cpp
    ${CMAKE_CURRENT_LIST_DIR}/bindings.cpp ${CMAKE_CURRENT_LIST_DIR}/convert.cpp)
if(ATTN_SIMD)
  set_source_files_properties(${ATTN_WASM_SIZE_SOURCES} PROPERTIES COMPILE_OPTIONS -Os)
endif()

# -O3 also at link time: emcc runs binaryen's optimiser there.
# DYNAMIC_EXECUTION=0: Embind's glue builds its invokers without eval / new Function, so the core
# runs under a strict CSP without 'unsafe-eval' (script-src 'self' 'wasm-unsafe-eval'), in the
# worker and on the main thread alike (tests/e2e/csp.test.mjs; measured with Emscripten 3.1.6).
set(ATTN_WASM_LINK_OPTIONS --bind -O3 -sMODULARIZE=1 -sEXPORT_NAME=createAttentionCore
    -sALLOW_MEMORY_GROWTH=1 -sTOTAL_STACK=8MB -sDYNAMIC_EXECUTION=0)

add_executable(attention_core_web ${CMAKE_CURRENT_LIST_DIR}/bindings.cpp
               ${CMAKE_CURRENT_LIST_DIR}/convert.cpp)
target_link_libraries(attention_core_web PRIVATE attn)
target_link_options(attention_core_web PRIVATE ${ATTN_WASM_LINK_OPTIONS} -sEXPORT_ES6=1
                    -sENVIRONMENT=web,worker)
set_target_properties(attention_core_web PROPERTIES
  OUTPUT_NAME attention-core-${ATTN_WASM_VARIANT} SUFFIX .js)

# The repository's package.json says "type": "module", so node would read the CommonJS test
# executables built here (attn_tests.js) as ES modules and fail; this marks the build dir.
file(WRITE ${CMAKE_BINARY_DIR}/package.json "{\"type\": \"commonjs\"}\n")
