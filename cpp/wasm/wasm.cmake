# The JS module `attention-core` (Embind), included from CMakeLists.txt under emcmake.
# One build directory per variant (ATTN_SIMD ON/OFF, ATTN_THREADS); scripts/build-wasm drives them.
#   attention-core-<variant>.js/.wasm  the ES module for the page and its worker; the node tests,
#                                      benchmarks and soak load the same files (tests/js-api/load-core.mjs)
#   attention-core-threads.worker.js   the threads variant's pthread worker (a classic script that
#                                      imports the module)
if(ATTN_THREADS)
  set(ATTN_WASM_VARIANT threads)
elseif(ATTN_RELAXED_SIMD)
  set(ATTN_WASM_VARIANT relaxed)
elseif(ATTN_SIMD)
  set(ATTN_WASM_VARIANT simd)
else()
  set(ATTN_WASM_VARIANT scalar)
endif()

# The per-request sources of the SIMD build compile at -Os: cpp/wasm/size.cmake.

# -O3 also at link time: emcc runs binaryen's optimiser there.
# DYNAMIC_EXECUTION=0: Embind's glue builds its invokers without eval / new Function, so the core
# runs under a strict CSP without 'unsafe-eval' (script-src 'self' 'wasm-unsafe-eval'), in the
# worker and on the main thread alike (tests/e2e/csp.test.mjs; measured with Emscripten 3.1.6).
# The relaxed-SIMD build links at -O1 (CMakeLists.txt, ATTN_RELAXED_SIMD) and runs the npm
# package's wasm-opt -O3 afterwards.
if(ATTN_RELAXED_SIMD)
  set(attn_link_opt -O1)
else()
  set(attn_link_opt -O3)
endif()
set(ATTN_WASM_LINK_OPTIONS --bind ${attn_link_opt} -sMODULARIZE=1 -sEXPORT_NAME=createAttentionCore
    -sALLOW_MEMORY_GROWTH=1 -sTOTAL_STACK=8MB -sDYNAMIC_EXECUTION=0)

# The threads variant (SIMD + pthreads): its pool of pthread workers is started with the module,
# Module.threadPoolSize of them (the loader sets it from navigator.hardwareConcurrency), so that
# base/parallel.cpp creates its threads without waiting for the browser; a thread past the pool is
# an EAGAIN (STRICT=2), which set_thread_count reports, never a deadlock.
if(ATTN_THREADS)
  list(APPEND ATTN_WASM_LINK_OPTIONS -sPTHREAD_POOL_SIZE=Module.threadPoolSize
       -sPTHREAD_POOL_SIZE_STRICT=2)
endif()

add_executable(attention_core_web ${CMAKE_CURRENT_LIST_DIR}/bindings.cpp
               ${CMAKE_CURRENT_LIST_DIR}/convert.cpp)
target_link_libraries(attention_core_web PRIVATE attn)
target_link_options(attention_core_web PRIVATE ${ATTN_WASM_LINK_OPTIONS} -sEXPORT_ES6=1
                    -sENVIRONMENT=web,worker)
set_target_properties(attention_core_web PROPERTIES
  OUTPUT_NAME attention-core-${ATTN_WASM_VARIANT} SUFFIX .js)
if(ATTN_RELAXED_SIMD)
  find_program(ATTN_WASM_OPT wasm-opt PATHS ${CMAKE_SOURCE_DIR}/node_modules/binaryen/bin
               NO_DEFAULT_PATH REQUIRED)
  add_custom_command(TARGET attention_core_web POST_BUILD
    COMMAND ${ATTN_WASM_OPT} -O3 --enable-simd --enable-relaxed-simd --enable-exception-handling
            --enable-bulk-memory --enable-sign-ext --enable-mutable-globals
            --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue
            attention-core-relaxed.wasm -o attention-core-relaxed.wasm
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR} VERBATIM)
endif()

# The field tables of structs.h with their doc comments, printed as JSON by a node program
# (core_structs.cpp) for scripts/core-structs.mjs, which writes web/src/core/core-structs.ts; the
# module above keeps none of the docs (JS_DOC in fields.h).
add_executable(attention_core_structs ${CMAKE_CURRENT_LIST_DIR}/core_structs.cpp)
target_link_libraries(attention_core_structs PRIVATE attn)
target_compile_definitions(attention_core_structs PRIVATE ATTN_JS_DOCS)
target_link_options(attention_core_structs PRIVATE -sENVIRONMENT=node -sSINGLE_FILE=1)  # trap 5

# The repository's package.json says "type": "module", so node would read the CommonJS test
# executables built here (attn_tests.js) as ES modules and fail; this marks the build dir.
file(WRITE ${CMAKE_BINARY_DIR}/package.json "{\"type\": \"commonjs\"}\n")
