# The Catch2 suite, built natively (one ctest entry per test case; per file under the sanitizers)
# and to wasm (run under node, one entry per file).
# Every test_*.cpp in tests/cpp is part of the suite on both builds, except those listed as
# native-only below.
file(GLOB ATTN_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.cpp)
# test_alloc.cpp replaces malloc to count heap calls, which only glibc allows; the wasm build
# checks the same property by heap size in tests/js-api. Under any sanitizer the file also leaves
# itself out (flags given without ATTN_SANITIZE).
# test_induction_budget.cpp trains the induction preset for thousands of steps (its
# convergence budget): seconds natively, minutes under node, so the wasm suite leaves it out; the
# wasm build's training is checked against native step by step in tests/js-api/native.test.mjs.
# test_speculative_exactness.cpp draws 60,000 speculative continuations for its chi-square tests:
# a few seconds natively, most of a minute under node; the wasm builds run the same check with
# fewer samples in tests/js-api/speculative.test.mjs.
set(ATTN_NATIVE_ONLY_TESTS ${CMAKE_CURRENT_LIST_DIR}/test_alloc.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_induction_budget.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_speculative_exactness.cpp)
if(EMSCRIPTEN OR ATTN_SANITIZE)
  list(REMOVE_ITEM ATTN_TEST_SOURCES ${ATTN_NATIVE_ONLY_TESTS})
endif()
# The scalar wasm build differs from the SIMD one only in the `#ifdef __wasm_simd128__` parts of
# cpp/attn/kernels/kernels.cpp, and the relaxed-SIMD build only in their madd (fused), so each runs
# the suites of that code and of the layers built on it, and the PyTorch parity of the whole model;
# the rest of the suite runs natively and in the SIMD build. tests/js-api compares the builds'
# training step by step besides. test_gradcheck holds the finite-difference checks of those layers
# (with the others').
set(ATTN_WASM_SCALAR_TESTS test_kernels test_linear test_loss test_ops test_adam test_multihead
    test_tiled_attention test_gradcheck test_reference)
if(EMSCRIPTEN AND (NOT ATTN_SIMD OR ATTN_RELAXED_SIMD))
  list(TRANSFORM ATTN_WASM_SCALAR_TESTS PREPEND ${CMAKE_CURRENT_LIST_DIR}/ OUTPUT_VARIABLE scalar)
  list(TRANSFORM scalar APPEND .cpp)
  set(ATTN_TEST_SOURCES ${scalar})
endif()
# The threads build is the SIMD build's code with pthreads: it runs the pool's suite (loops split
# over 1, 2 and 3 threads give the same numbers, training included) and the kernels' and model's
# suites it splits.
set(ATTN_WASM_THREADS_TESTS test_parallel test_kernels test_multihead test_reference test_bench)
if(EMSCRIPTEN AND ATTN_THREADS)
  list(TRANSFORM ATTN_WASM_THREADS_TESTS PREPEND ${CMAKE_CURRENT_LIST_DIR}/ OUTPUT_VARIABLE threads)
  list(TRANSFORM threads APPEND .cpp)
  set(ATTN_TEST_SOURCES ${threads})
endif()

# One ctest entry per test file (Catch2's file-name tags) as <prefix>_<file>, so `ctest -j` runs
# the files side by side; -w NoTests makes an entry that matches no test case fail instead of
# passing empty. The wasm and sanitizer trees use it; the plain native tree has one entry per test
# case (catch_discover_tests), which names the failing case in ctest's own summary.
function(attn_tests_per_file prefix)
  foreach(source ${ATTN_TEST_SOURCES})
    get_filename_component(name ${source} NAME_WE)
    add_test(NAME ${prefix}_${name} COMMAND ${ARGN} --filenames-as-tags -w NoTests "[#${name}]")
  endforeach()
endfunction()

# main.cpp is Catch2's runner, compiled alone: the slowest file of the suite at -O3 (~3 min under
# em++), and no slower to run at -O0.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/main.cpp PROPERTIES COMPILE_OPTIONS -O0)
# The checkout's absolute path goes on this one small file only, so the other files compile the
# same in any clone (and hit the compiler cache).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/reference_dir.cpp PROPERTIES
  COMPILE_DEFINITIONS ATTN_REFERENCE_DIR="${CMAKE_SOURCE_DIR}/tests/reference/data")
# The test files compile in batches (attn_unity_sources, CMakeLists.txt); each keeps its own
# __FILE__, so the per-file tags and ctest entries are unchanged.
attn_unity_sources(attn_tests_compiled attn_tests ${ATTN_TEST_SOURCES})
add_executable(attn_tests ${CMAKE_CURRENT_LIST_DIR}/main.cpp
               ${CMAKE_CURRENT_LIST_DIR}/reference_dir.cpp ${attn_tests_compiled})
target_link_libraries(attn_tests PRIVATE attn)
# The test code itself compiles at -O1: it checks the core, which keeps the build type's flags
# (the objects the page and the CLI ship); -O3 took 60% longer to compile it. GCC 12 at -O1 flags
# its own AVX-512 headers (`__m512 __Y = __Y;`, GCC bug 105593) when Eigen's packet transposes
# inline into a test; the clang trees still warn on our own code.
target_compile_options(attn_tests PRIVATE -O1 $<$<CXX_COMPILER_ID:GNU>:-Wno-uninitialized>)

if(EMSCRIPTEN)
  # Only the catch2/ folder goes on the include path, never /usr/include (scripts/README.md,
  # Emscripten trap 3).
  find_path(CATCH2_INCLUDE_PARENT catch2/catch.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH
            REQUIRED)
  set(catch_dir ${CMAKE_BINARY_DIR}/catch2_include)
  file(MAKE_DIRECTORY ${catch_dir}/catch2)
  file(CREATE_LINK ${CATCH2_INCLUDE_PARENT}/catch2/catch.hpp ${catch_dir}/catch2/catch.hpp SYMBOLIC)
  target_include_directories(attn_tests PRIVATE ${catch_dir})
  target_compile_definitions(attn_tests PRIVATE CATCH_CONFIG_NO_POSIX_SIGNALS)
  target_link_options(attn_tests PRIVATE -sENVIRONMENT=node -sNODERAWFS=1 -sEXIT_RUNTIME=1
                      -sALLOW_MEMORY_GROWTH=1 -sTOTAL_STACK=8MB -sSINGLE_FILE=1
                      # binaryen's link-time passes at -O1, not the build type's -O3: the objects
                      # are the -O3 code the page ships; -O3 here only re-optimised the test
                      # runner, at ~40 s of CPU per link (scripts/README.md, the suite's time).
                      -O1)
  if(ATTN_THREADS)
    set(variant threads)
    # node's worker_threads run the pthreads; three start with the program.
    target_link_options(attn_tests PRIVATE -sPTHREAD_POOL_SIZE=3)
  elseif(ATTN_RELAXED_SIMD)
    set(variant relaxed)
  elseif(ATTN_SIMD)
    set(variant simd)
  else()
    set(variant scalar)
  endif()
  attn_tests_per_file(wasm_${variant} ${CMAKE_CROSSCOMPILING_EMULATOR}
                      ${CMAKE_CURRENT_BINARY_DIR}/attn_tests.js)
elseif(ATTN_SANITIZE)
  find_package(Catch2 2 REQUIRED)
  target_link_libraries(attn_tests PRIVATE Catch2::Catch2)
  # Under the sanitizers a process start costs ~0.2 s (the shadow memory, the interceptors):
  # one process per test case spent a minute of the run on starts alone.
  attn_tests_per_file(san $<TARGET_FILE:attn_tests>)
else()
  find_package(Catch2 2 REQUIRED)
  target_link_libraries(attn_tests PRIVATE Catch2::Catch2)
  include(Catch)
  catch_discover_tests(attn_tests)
  # A discovery that registers no test fails twice over: the build, when the freshly linked
  # executable lists none (check_listed.cmake; runs after Catch2's own POST_BUILD step), and
  # ctest, which then has a failing test in place of the suite (e.g. after a failed build was
  # not redone). attn_tests_TESTS is the list catch_discover_tests registered.
  add_custom_command(TARGET attn_tests POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D TEST_EXECUTABLE=$<TARGET_FILE:attn_tests>
            -P ${CMAKE_CURRENT_LIST_DIR}/check_listed.cmake
    VERBATIM)
  set(discovered_check ${CMAKE_CURRENT_BINARY_DIR}/attn_tests_discovered.cmake)
  file(WRITE ${discovered_check}
    "if(NOT attn_tests_TESTS)\n"
    "  add_test(attn_tests_registered_no_tests \"${CMAKE_COMMAND}\" -E false)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${discovered_check})
endif()

# The core's include floors (include_layers.cmake): the real tree passes, and a fixture with one
# upward include fails, so the check itself is checked.
if(NOT EMSCRIPTEN)
  add_test(NAME include_layers COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_SOURCE_DIR}
           -P ${CMAKE_CURRENT_LIST_DIR}/include_layers.cmake)
  add_test(NAME include_layers_refuses_upward COMMAND ${CMAKE_COMMAND}
           -DROOT=${CMAKE_CURRENT_LIST_DIR}/include_layers_fixture -DMIN_FILES=2
           -P ${CMAKE_CURRENT_LIST_DIR}/include_layers.cmake)
  set_tests_properties(include_layers_refuses_upward PROPERTIES
    PASS_REGULAR_EXPRESSION "base may not include nn, a higher floor")
endif()
