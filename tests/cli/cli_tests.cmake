# Command-line tests of `attn forward`, `attn attend`, `attn selftest`, the ablation flags and
# the text task of `attn train` / `attn sample` / `attn eval`, `attn inspect`, `attn fill`, and `attn demo` / `attn demo self-attention`
# (native only): each case runs
# tests/cli/cli_tests.sh in its own scratch directory and checks the exit code, the stderr line,
# that no output file is left behind on failure, and on success compares the output with the
# committed PyTorch reference (tests/reference/data) using attn_st_compare.
add_executable(attn_st_compare ${CMAKE_CURRENT_LIST_DIR}/st_compare.cpp)
target_link_libraries(attn_st_compare PRIVATE attn)

set(ATTN_CLI_CASES
  help
  forward_reference
  forward_no_targets
  forward_ids
  forward_i32_ids
  train_save_forward
  attend_reference
  attend_causal_reference
  bad_flags
  missing_files
  empty_file
  truncated_file
  header_past_end
  header_too_big
  invalid_json
  wrong_dtype
  unknown_dtype
  missing_tensor
  extra_tensor
  wrong_shape
  bad_offsets
  overlapping_offsets
  nonfinite_weights
  ids_out_of_range
  targets_out_of_range
  ids_too_long
  attend_bad_shapes
  attend_nonfinite
  unwritable_output
  selftest
  selftest_bad_reference
  train_ablation
  train_induction
  ablation_bad_flags
  demo_verdict
  demo_check_fails
  demo_epoch_means
  demo_self_attention
  # Depth
  layers_flags
  demo_layers
  # The transformer block
  block_flags
  block_eval
  # The text task
  text_train
  text_bad_input
  train_threads
  text_sample
  text_sample_bad
  text_sample_speculative
  text_eval
  # Masked language modelling and the attention variants
  mlm_train_fill
  mlm_fill_bad
  attention_flags
  # Looking inside
  inspect_reference
  inspect_bad
)
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
