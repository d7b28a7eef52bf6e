# Run after attn_tests is linked (tests.cmake): fails the build unless the executable lists at
# least one test. Catch2's discovery only warns, or registers nothing at all, when the
# executable cannot list its tests (say it crashes before main, as a malloc replacement does
# under a sanitizer); ctest would then quietly run none of the suite.
# Usage: cmake -D TEST_EXECUTABLE=<path> -P check_listed.cmake
execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-names-only
                OUTPUT_VARIABLE listed ERROR_VARIABLE errors RESULT_VARIABLE result)
string(STRIP "${listed}" listed)
if(listed STREQUAL "" OR NOT result MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no tests (exit status: ${result}), so Catch2's "
                      "discovery registers none and ctest would run none of the suite.\n${errors}")
endif()
