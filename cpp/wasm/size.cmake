# Included from CMakeLists.txt under emcmake before the core's sources are batched
# (attn_unity_sources), as a file with its own compile options compiles alone.
# Size, in the SIMD build (the one the page downloads). Code that runs once per request rather
# than once per training step is optimised for size: the lesson's functions, weights files and
# JSON, the self-test, the circuit measurements, looking inside (its eigenvalue solver is the
# largest code of all), the text task's corpus, the sampler, speculative decoding, the block's stages
# and its tiled step, the length evaluation, filling blanks, the receptive field, and the bindings
# with their conversions. The per-step code (model, attention layers, our SIMD kernels, loss, Adam, batches) keeps -O3. This
# keeps the page's download within its budget (README.md, "Benchmarks") at no measured cost to the
# training speed. Not in the scalar build: there the products are Eigen's templates, and the
# linker may keep the copy instantiated in a -Os file for the hot path too (measured: 8x slower).
set(ATTN_WASM_SIZE_SOURCES
    ${CMAKE_SOURCE_DIR}/cpp/attn/nn/attention.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/train/bench.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/interp/circuits.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/base/error.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/base/json.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/io/safetensors.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/teach/selftest.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/io/weights.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/interp/inspect.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/data/text.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/model/sampling.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/teach/block_stages.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/interp/length_eval.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/teach/lesson.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/model/speculative.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/base/stats.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/train/draft.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/teach/tiled_trace.cpp
    ${CMAKE_SOURCE_DIR}/cpp/attn/model/fill.cpp ${CMAKE_SOURCE_DIR}/cpp/attn/interp/receptive_field.cpp
    ${CMAKE_SOURCE_DIR}/cpp/wasm/bindings.cpp ${CMAKE_SOURCE_DIR}/cpp/wasm/convert.cpp)
if(ATTN_SIMD)
  set_source_files_properties(${ATTN_WASM_SIZE_SOURCES} PROPERTIES COMPILE_OPTIONS -Os)
endif()

