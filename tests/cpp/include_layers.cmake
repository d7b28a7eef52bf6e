# The core's layers, from its include graph: every #include "attn/<floor>/..." in cpp/attn goes
# to the same floor or a lower one, never up; cpp/attn includes nothing of cpp/cli or cpp/wasm; and
# every folder of cpp/attn is a floor below. The order is declared once, here; `ls cpp/attn`
# shows the same folders. Run by ctest: cmake -DROOT=<checkout> -P include_layers.cmake (and on
# tests/cpp/include_layers_fixture, a tree with one upward include, which must fail).
#
#   base     errors, the tensor types, the Rng, JSON, numeric comparisons
#   kernels  the GEMM and SIMD kernels, softmax and the other row operations
#   nn       layers with hand-written backward passes: linear, embeddings, positions, norms, FFN,
#            attention, multi-head attention (its KV cache, one head's row), cross-entropy
#   data     the tasks' batches and the text corpus
#   model    the model seam (family.h) and the lm family: the language model, decoding
#   interp   read-outs over a model: circuits and head scores, looking inside, length evaluation
#   train    the config and its schema, Adam, the Trainer, the benchmarks' work counts
#   io       safetensors and weights files
#   teach    the self-test and the block view's stages
cmake_minimum_required(VERSION 3.16)
set(floors base kernels nn data model interp train io teach)

if(NOT ROOT)
  message(FATAL_ERROR "include_layers.cmake: pass -DROOT=<checkout>")
endif()
set(core ${ROOT}/cpp/attn)
set(violations)

file(GLOB folders RELATIVE ${core} ${core}/*)
foreach(folder IN LISTS folders)
  if(folder STREQUAL "README.md")
    # the core's own docs (what it computes) sit beside its floors
  elseif(NOT IS_DIRECTORY ${core}/${folder})
    list(APPEND violations "cpp/attn/${folder}: a file outside the floors (move it into one)")
  elseif(NOT folder IN_LIST floors)
    list(APPEND violations "cpp/attn/${folder}/: a folder in no floor (add it to tests/cpp/include_layers.cmake)")
  endif()
endforeach()

file(GLOB_RECURSE sources RELATIVE ${core} ${core}/*.h ${core}/*.cpp)
foreach(rel IN LISTS sources)
  string(REGEX MATCH "^[^/]+" from ${rel})
  list(FIND floors ${from} from_rank)
  if(from_rank LESS 0)
    continue()  # reported above
  endif()
  file(STRINGS ${core}/${rel} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
    if(target MATCHES "^(cli|wasm)/")
      list(APPEND violations "cpp/attn/${rel} -> ${target}: the core includes nothing of the CLI or the bindings")
    elseif(target MATCHES "^attn/([^/]+)/")
      set(to ${CMAKE_MATCH_1})
      list(FIND floors ${to} to_rank)
      if(to_rank LESS 0)
        list(APPEND violations "cpp/attn/${rel} -> ${target}: ${to} is no floor")
      elseif(to_rank GREATER from_rank)
        list(APPEND violations "cpp/attn/${rel} -> ${target}: ${from} may not include ${to}, a higher floor")
      endif()
    elseif(target MATCHES "^attn/")
      list(APPEND violations "cpp/attn/${rel} -> ${target}: every core header is in a floor's folder")
    endif()
  endforeach()
endforeach()

list(LENGTH sources n)
if(NOT MIN_FILES)
  set(MIN_FILES 20)
endif()
if(n LESS MIN_FILES)
  message(FATAL_ERROR "include_layers.cmake: found only ${n} files under ${core}")
endif()
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "upward or misplaced includes:\n  ${text}")
endif()
message(STATUS "${n} files of cpp/attn include only their own floor or lower ones")
