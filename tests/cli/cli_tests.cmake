# Command-line tests of `attn forward`, `attn attend`, `attn selftest`, the ablation flags and
# the text task of `attn train` / `attn sample` / `attn eval`, `attn inspect`, `attn fill`, and `attn demo` / `attn demo self-attention`
# (native only): each case runs
# tests/cli/cli_tests.sh in its own scratch directory and checks the exit code, the stderr line,
# that no output file is left behind on failure, and on success compares the output with the
# committed PyTorch reference (tests/reference/data) using attn_st_compare.
add_executable(attn_st_compare ${CMAKE_CURRENT_LIST_DIR}/st_compare.cpp)
target_link_libraries(attn_st_compare PRIVATE attn)

# The cases are the labels of cli_tests.sh's `case $CASE in` (one `name)` a line): the script is
# the only list, so a case written there is registered here.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/cli_tests.sh ATTN_CLI_CASES REGEX "^[a-z0-9_]+\\)$")
list(TRANSFORM ATTN_CLI_CASES REPLACE "\\)$" "")
# Any other label at the start of a line (`a|b)`, `name) cmd`, `Name)`) would run in the script but
# not be registered: refuse to configure.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/cli_tests.sh cli_labels REGEX "^[^ \t#*(][^ \t(]*\\)")
list(FILTER cli_labels EXCLUDE REGEX "^[a-z0-9_]+\\)$")
if(cli_labels)
  message(FATAL_ERROR "tests/cli/cli_tests.sh: write each case label alone on its line as "
                      "name) (lower case, digits, _): ${cli_labels}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cli_tests.sh)
foreach(case IN LISTS ATTN_CLI_CASES)
  add_test(NAME cli.${case}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_tests.sh ${case} $<TARGET_FILE:attn_cli>
                   $<TARGET_FILE:attn_st_compare> ${CMAKE_SOURCE_DIR}/tests/reference/data
                   ${CMAKE_CURRENT_BINARY_DIR}/cli_scratch/${case})
endforeach()
# The cases that take longest under ASan (5 to 20 s: they train, or run a dozen commands) start
# first under `ctest -j`, so that none of them is the last one running alone (a fresh build tree
# has no timing data yet).
set_tests_properties(cli.demo_epoch_means cli.train_ablation cli.layers_flags cli.block_flags
                     cli.text_sample cli.text_sample_bad cli.text_sample_speculative cli.text_bad_input cli.text_eval
                     cli.inspect_reference cli.inspect_bad cli.mlm_train_fill cli.attention_flags
                     PROPERTIES COST 1000)
