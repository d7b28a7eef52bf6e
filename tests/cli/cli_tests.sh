#!/usr/bin/env bash
# CLI tests of `attn forward` / `attn attend` / `attn selftest` / `attn train`'s ablation flags /
# `attn demo` and `attn demo self-attention`. cli_tests.cmake registers every `name)` label of the
# case below as the ctest case cli.name.
# usage: cli_tests.sh CASE ATTN ST_COMPARE REFERENCE_DIR SCRATCH_DIR
# Success cases compare the output with the committed PyTorch reference; failure cases check
# exit code 2, exactly one line on stderr naming the problem, and that no output file (nor a
# temporary file) is left behind. Hostile files are made here with printf/od/dd/head/tail.
set -u
export LC_ALL=C

CASE=$1 ATTN=$2 CMP=$3 REF=$4 S=$5
rm -rf "$S" && mkdir -p "$S" || exit 1
OUT=$S/out.safetensors
W=$REF/demo.weights.safetensors   # V=64 D=32 H=4 C=12
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# le64 N: N as 8 little-endian bytes.
le64() {
  local n=$1 i
  for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(((n >> (8 * i)) & 255)))"; done
}

# mkst FILE HEADER [DATA as a printf format]: a safetensors file with the given header text.
mkst() {
  { le64 ${#2}; printf '%s' "$2"; printf "${3:-}"; } > "$1"
}

# header_len FILE / header FILE: the JSON header of a safetensors file.
header_len() { od -An -t u8 -N 8 "$1" | tr -d ' '; }
header() { head -c $((8 + $(header_len "$1"))) "$1" | tail -c "$(header_len "$1")"; }

# patch FILE OUT FROM TO: OUT is FILE with the header text FROM replaced by TO (data kept).
patch() {
  local h n
  h=$(header "$1")
  n=$(header_len "$1")
  [[ $h == *"$3"* ]] || { fail "patch: '$3' not in the header of $1"; return; }
  h=${h/"$3"/"$4"}
  { le64 ${#h}; printf '%s' "$h"; tail -c +$((9 + n)) "$1"; } > "$2"
}

# ok CMD...: must exit 0.
ok() {
  "$@" > "$S/stdout" 2> "$S/stderr"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "exit $rc from: $* -- $(cat "$S/stderr")"
}

# bad SUBSTRING CMD...: exit 2, one stderr line containing SUBSTRING, no output left behind.
bad() {
  local want=$1
  shift
  rm -f "$OUT"
  "$@" > "$S/stdout" 2> "$S/stderr"
  local rc=$? lines
  lines=$(wc -l < "$S/stderr")
  [[ $rc -eq 2 ]] || fail "exit $rc (want 2) from: $*"
  [[ $lines -eq 1 ]] || fail "$lines stderr lines (want 1) from: $* -- $(cat "$S/stderr")"
  grep -qF -- "$want" "$S/stderr" || fail "stderr lacks '$want': $(cat "$S/stderr")"
  [[ ! -e $OUT ]] || fail "output file left behind by: $*"
  local tmp
  tmp=$(ls "$S" | grep -c '\.tmp-')
  [[ $tmp -eq 0 ]] || fail "temporary file left behind by: $*"
  echo "ok: $(cat "$S/stderr")"
}

# fwd WEIGHTS INPUT: attn forward writing $OUT.
fwd() { "$ATTN" forward --weights "$1" --input "$2" --output "$OUT"; }

# ids (1,2) I64 file: ids A B
ids64() {
  mkst "$1" '{"ids":{"dtype":"I64","shape":[1,2],"data_offsets":[0,16]}}' \
    "$(printf '\\x%02x\\0\\0\\0\\0\\0\\0\\0\\x%02x\\0\\0\\0\\0\\0\\0\\0' "$2" "$3")"
}

case $CASE in
help)
  ok "$ATTN" forward --help
  grep -q -- "--weights" "$S/stdout" || fail "forward --help lacks --weights"
  ok "$ATTN" attend --help
  grep -q -- "--causal" "$S/stdout" || fail "attend --help lacks --causal"
  ok "$ATTN" demo --help
  grep -q -- "--steps-per-epoch" "$S/stdout" || fail "demo --help lacks --steps-per-epoch"
  grep -q -- "attn demo self-attention" "$S/stdout" || fail "demo --help lacks the subcommand"
  ok "$ATTN" demo self-attention --help
  grep -q -- "--sentence TEXT" "$S/stdout" || fail "demo self-attention --help lacks --sentence"
  grep -q -- "^usage: attn demo self-attention" "$S/stdout" || fail "demo self-attention usage line"
  # --help lists the keys of the --family given (every key applies to lm, the one family).
  ok "$ATTN" train --family lm --help
  grep -q -- "--family FAMILY" "$S/stdout" || fail "train --help lacks --family"
  grep -q -- "--norm KIND" "$S/stdout" || fail "train --family lm --help lacks --norm"
  # The choices start with lm; a family added to the registry adds to the list, not to this test.
  bad "--family: unknown family 'vit' (expected lm" "$ATTN" train --family vit --steps 0
  ;;

forward_reference)
  for c in demo h1 short dhead1_t1 dhead1 vocab160 layers2_residual layers3; do
    ok "$ATTN" forward --weights "$REF/$c.weights.safetensors" --input "$REF/$c.input.safetensors" \
      --output "$OUT"
    "$CMP" "$OUT" "$REF/$c.expected.safetensors" 1e-6 1e-4 || fail "$c differs from PyTorch"
  done
  ;;

forward_no_targets)
  ids64 "$S/in.st" 3 63
  ok fwd "$W" "$S/in.st"
  "$CMP" --list "$OUT" > "$S/list"
  printf 'attention F32 (1,4,2,2)\nlogits F32 (1,2,64)\n' | diff - "$S/list" || fail "tensors"
  ;;

forward_ids)
  # attn forward reads one sequence from --ids as from a file's ids (1,T); one of the two.
  ids64 "$S/in.st" 3 63
  ok fwd "$W" "$S/in.st"
  mv "$OUT" "$S/from-file.st"
  ok "$ATTN" forward --weights "$W" --ids 3,63 --output "$OUT"
  "$CMP" "$S/from-file.st" "$OUT" 0 0 || fail "--input FILE and --ids differ"
  bad "give --input PATH (a safetensors file with ids) or --ids LIST, one of them" \
    "$ATTN" forward --weights "$W" --output "$OUT"
  bad "give --input PATH (a safetensors file with ids) or --ids LIST, one of them" \
    "$ATTN" forward --weights "$W" --input "$S/in.st" --ids 3 --output "$OUT"
  bad "--ids: 'x' is not a token id" "$ATTN" forward --weights "$W" --ids 3,x --output "$OUT"
  bad "--ids: ids[0][1] = 64 is outside [0, 64)" "$ATTN" forward --weights "$W" --ids 3,64 --output "$OUT"
  bad "--ids: ids has T = 13 positions, more than the model's max_context_length (12)" \
    "$ATTN" forward --weights "$W" --ids 1,2,3,4,5,6,7,8,9,10,11,12,13 --output "$OUT"
  ;;

forward_i32_ids)
  mkst "$S/i32.st" '{"ids":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}' \
    '\x05\0\0\0\x07\0\0\0\x3f\0\0\0\0\0\0\0'
  mkst "$S/i64.st" '{"ids":{"dtype":"I64","shape":[2,2],"data_offsets":[0,32]}}' \
    '\x05\0\0\0\0\0\0\0\x07\0\0\0\0\0\0\0\x3f\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
  ok fwd "$W" "$S/i32.st"
  mv "$OUT" "$S/out32.st"
  ok fwd "$W" "$S/i64.st"
  "$CMP" "$S/out32.st" "$OUT" 0 0 || fail "I32 and I64 ids disagree"
  ;;

train_save_forward)
  ok "$ATTN" train --steps 3 --save "$S/w.st"
  ids64 "$S/in.st" 1 2
  ok fwd "$S/w.st" "$S/in.st"
  "$CMP" --list "$OUT" | grep -qxF 'logits F32 (1,2,64)' || fail "no logits from trained weights"
  ;;

attend_reference)
  ok "$ATTN" attend --input "$REF/attend.input.safetensors" --output "$OUT"
  "$CMP" "$OUT" "$REF/attend.expected.safetensors" 1e-5 1e-5 || fail "attend differs"
  ;;

attend_causal_reference)
  ok "$ATTN" attend --causal --input "$REF/attend.input.safetensors" --output "$OUT"
  "$CMP" "$OUT" "$REF/attend_causal.expected.safetensors" 1e-5 1e-5 || fail "causal differs"
  "$CMP" "$OUT" "$REF/attend.expected.safetensors" 1e-5 1e-5 > /dev/null &&
    fail "causal output equals the full one"
  ;;

bad_flags)
  bad "--output" "$ATTN" forward --weights "$W" --input "$REF/demo.input.safetensors"
  bad "--bogus" "$ATTN" forward --weights "$W" --input "$REF/demo.input.safetensors" \
    --output "$OUT" --bogus 1
  bad "--input" "$ATTN" attend --output "$OUT"
  bad "--causal" "$ATTN" attend --input "$REF/attend.input.safetensors" --output "$OUT" \
    --causal --causal
  ;;

missing_files)
  bad "$S/nope.st" fwd "$S/nope.st" "$REF/demo.input.safetensors"
  bad "$S/nope.st" fwd "$W" "$S/nope.st"
  bad "$S/nope.st" "$ATTN" attend --input "$S/nope.st" --output "$OUT"
  ;;

empty_file)
  : > "$S/empty.st"
  bad "the file is empty" fwd "$S/empty.st" "$REF/demo.input.safetensors"
  bad "the file is empty" fwd "$W" "$S/empty.st"
  bad "the file is empty" "$ATTN" attend --input "$S/empty.st" --output "$OUT"
  ;;

truncated_file)
  head -c 5 "$W" > "$S/t5.st"
  bad "truncated" fwd "$S/t5.st" "$REF/demo.input.safetensors"
  head -c 100 "$W" > "$S/t100.st"
  bad "runs past the end" fwd "$S/t100.st" "$REF/demo.input.safetensors"
  head -c -4 "$W" > "$S/tdata.st"
  bad "out of range" fwd "$S/tdata.st" "$REF/demo.input.safetensors"
  ;;

header_past_end)
  { le64 1000; printf '{}'; } > "$S/h.st"
  bad "header length 1000 runs past the end" fwd "$S/h.st" "$REF/demo.input.safetensors"
  ;;

header_too_big)
  { le64 200000000; printf '{}'; } > "$S/h.st"
  bad "header length 200000000 is over the limit" fwd "$S/h.st" "$REF/demo.input.safetensors"
  { le64 9223372036854775807; printf '{}'; } > "$S/h2.st"
  bad "over the limit" "$ATTN" attend --input "$S/h2.st" --output "$OUT"
  ;;

invalid_json)
  mkst "$S/j.st" '{"ids":'
  bad "invalid JSON" fwd "$W" "$S/j.st"
  patch "$W" "$S/dup.st" '"format":"pt"' '"format":"pt","format":"pt"'
  bad 'duplicate key "format"' fwd "$S/dup.st" "$REF/demo.input.safetensors"
  # A pre-existing output is left as it was.
  printf old > "$OUT"
  "$ATTN" forward --weights "$W" --input "$S/j.st" --output "$OUT" 2> /dev/null
  [[ $? -eq 2 && $(cat "$OUT") == old ]] || fail "existing output was changed"
  ;;

wrong_dtype)
  patch "$W" "$S/w.st" '"lm_head.bias":{"dtype":"F32"' '"lm_head.bias":{"dtype":"I32"'
  bad '"lm_head.bias" has dtype I32, expected F32' fwd "$S/w.st" "$REF/demo.input.safetensors"
  mkst "$S/in.st" '{"ids":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}' '\0\0\0\0'
  bad '"ids" has dtype F32, expected I64 or I32' fwd "$W" "$S/in.st"
  ;;

unknown_dtype)
  patch "$W" "$S/w.st" '"lm_head.bias":{"dtype":"F32"' '"lm_head.bias":{"dtype":"X32"'
  bad 'unknown dtype "X32"' fwd "$S/w.st" "$REF/demo.input.safetensors"
  ;;

missing_tensor)
  patch "$W" "$S/w.st" '"lm_head.bias"' '"lm_head.bogus"'
  bad 'missing tensor "lm_head.bias"' fwd "$S/w.st" "$REF/demo.input.safetensors"
  mkst "$S/in.st" '{"idz":{"dtype":"I64","shape":[1,1],"data_offsets":[0,8]}}' '\0\0\0\0\0\0\0\0'
  bad 'unexpected tensor "idz"' fwd "$W" "$S/in.st"
  ;;

extra_tensor)
  h=$(header "$W")
  h=${h%"${h##*[! ]}"}   # without the padding
  n=$(header_len "$W")
  end=$(($(stat -c %s "$W") - 8 - n))
  h="${h%\}},\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[$end,$((end + 4))]}}"
  { le64 ${#h}; printf '%s' "$h"; tail -c +$((9 + n)) "$W"; printf '\0\0\0\0'; } > "$S/w.st"
  bad 'unexpected tensor "extra.weight"' fwd "$S/w.st" "$REF/demo.input.safetensors"
  ;;

wrong_shape)
  patch "$W" "$S/w.st" '"attn.out_proj.weight":{"dtype":"F32","shape":[32,32]' \
    '"attn.out_proj.weight":{"dtype":"F32","shape":[16,64]'
  bad '"attn.out_proj.weight" has shape (16,64) but token_emb.embedding.weight (64,32) implies (32,32)' \
    fwd "$S/w.st" "$REF/demo.input.safetensors"
  patch "$W" "$S/h.st" '"n_heads":"4"' '"n_heads":"5"'
  bad 'd_model (32) must be divisible by n_heads (5)' fwd "$S/h.st" "$REF/demo.input.safetensors"
  ;;

bad_offsets)
  patch "$W" "$S/w.st" '"shape":[32],"data_offsets":[0,128]' '"shape":[32],"data_offsets":[0,124]'
  bad 'span 124 bytes but shape (32) x F32 needs 128' fwd "$S/w.st" "$REF/demo.input.safetensors"
  patch "$W" "$S/w2.st" '"data_offsets":[0,128]' '"data_offsets":[999872,1000000]'
  bad 'out of range' fwd "$S/w2.st" "$REF/demo.input.safetensors"
  ;;

overlapping_offsets)
  patch "$W" "$S/w.st" '"data_offsets":[0,128]' '"data_offsets":[128,256]'
  bad 'overlap' fwd "$S/w.st" "$REF/demo.input.safetensors"
  ;;

nonfinite_weights)
  cp "$W" "$S/w.st"
  # attn.out_proj.bias[0] (first in the data section) := NaN
  printf '\x00\x00\xc0\x7f' | dd of="$S/w.st" bs=1 seek=$((8 + $(header_len "$W"))) conv=notrunc \
    2> /dev/null
  bad '"attn.out_proj.bias" has a non-finite value (nan) at index 0' \
    fwd "$S/w.st" "$REF/demo.input.safetensors"
  ;;

ids_out_of_range)
  ids64 "$S/in.st" 5 64
  bad 'ids[0][1] = 64 is outside [0, 64)' fwd "$W" "$S/in.st"
  mkst "$S/neg.st" '{"ids":{"dtype":"I32","shape":[1,1],"data_offsets":[0,4]}}' '\xff\xff\xff\xff'
  bad 'ids[0][0] = -1 is outside [0, 64)' fwd "$W" "$S/neg.st"
  mkst "$S/big.st" '{"ids":{"dtype":"I64","shape":[1,1],"data_offsets":[0,8]}}' \
    '\0\0\0\0\x01\0\0\0'
  bad 'does not fit in int32' fwd "$W" "$S/big.st"
  ;;

targets_out_of_range)
  mkst "$S/in.st" '{"ids":{"dtype":"I32","shape":[1,2],"data_offsets":[0,8]},"targets":{"dtype":"I32","shape":[1,2],"data_offsets":[8,16]}}' \
    '\x01\0\0\0\x02\0\0\0\x9c\xff\xff\xff\x46\0\0\0'
  bad 'targets[0][1] = 70 is outside [0, 64) and is not -100' fwd "$W" "$S/in.st"
  mkst "$S/shape.st" '{"ids":{"dtype":"I32","shape":[1,2],"data_offsets":[0,8]},"targets":{"dtype":"I32","shape":[2,1],"data_offsets":[8,16]}}' \
    '\x01\0\0\0\x02\0\0\0\x01\0\0\0\x02\0\0\0'
  bad 'targets has shape (2,1) but ids has (1,2)' fwd "$W" "$S/shape.st"
  ;;

ids_too_long)
  mkst "$S/in.st" '{"ids":{"dtype":"I32","shape":[1,13],"data_offsets":[0,52]}}' \
    "$(printf '\\x01\\0\\0\\0%.0s' {1..13})"
  bad "T = 13 positions, more than the model's max_context_length (12)" fwd "$W" "$S/in.st"
  mkst "$S/flat.st" '{"ids":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}' '\0\0\0\0\0\0\0\0'
  bad 'must be 2-D' fwd "$W" "$S/flat.st"
  ;;

attend_bad_shapes)
  one='\0\0\x80\x3f'
  mkst "$S/a.st" '{"X":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"Wq":{"dtype":"F32","shape":[3,1],"data_offsets":[8,20]},"Wk":{"dtype":"F32","shape":[2,1],"data_offsets":[20,28]},"Wv":{"dtype":"F32","shape":[2,1],"data_offsets":[28,36]}}' \
    "$one$one$one$one$one$one$one$one$one"
  bad 'Wq has shape (3,1) but X (1,2) needs 2 rows' "$ATTN" attend --input "$S/a.st" --output "$OUT"
  mkst "$S/b.st" '{"X":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"Wq":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]},"Wk":{"dtype":"F32","shape":[2,1],"data_offsets":[16,24]}}' \
    "$one$one$one$one$one$one"
  bad 'missing tensor "Wv"' "$ATTN" attend --input "$S/b.st" --output "$OUT"
  ;;

attend_nonfinite)
  one='\0\0\x80\x3f' inf='\0\0\x80\x7f'
  mkst "$S/a.st" '{"X":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"Wq":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]},"Wk":{"dtype":"F32","shape":[2,1],"data_offsets":[16,24]},"Wv":{"dtype":"F32","shape":[2,1],"data_offsets":[24,32]}}' \
    "$one$inf$one$one$one$one$one$one"
  bad '"X" has a non-finite value (inf) at index 1' "$ATTN" attend --input "$S/a.st" --output "$OUT"
  ;;

unwritable_output)
  rm -f "$OUT"
  "$ATTN" forward --weights "$W" --input "$REF/demo.input.safetensors" \
    --output "$S/no/such/dir/o.st" > /dev/null 2> "$S/stderr"
  rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc (want 2)"
  grep -qF "cannot write '$S/no/such/dir/o.st'" "$S/stderr" || fail "stderr: $(cat "$S/stderr")"
  [[ $(wc -l < "$S/stderr") -eq 1 ]] || fail "more than one stderr line"
  ;;

selftest)
  # The page's self-test panel on the command line: a fresh model, then trained weights.
  ok "$ATTN" selftest --reference "$REF/short"
  [[ $(grep -c '^PASS ' "$S/stdout") -eq 6 ]] || fail "not 6 PASS lines: $(cat "$S/stdout")"
  grep -qx '# 6 of 6 checks passed' "$S/stdout" || fail "no summary line"
  for id in rows_and_mask future_invariance split_merge fused_qkv gradcheck pytorch_reference; do
    grep -q "^PASS $id " "$S/stdout" || fail "no PASS line for $id"
  done
  # Without --reference: the shipped case (cpp/attn/teach/selftest_case), not the test data.
  ok "$ATTN" selftest
  grep -q '; reference .*/cpp/attn/teach/selftest_case/short$' "$S/stdout" || fail "default reference: $(head -1 "$S/stdout")"
  grep -qx '# 6 of 6 checks passed' "$S/stdout" || fail "the shipped case: $(cat "$S/stdout")"
  ok "$ATTN" train --steps 40 --heads 2 --save "$S/w.st"
  ok "$ATTN" selftest --weights "$S/w.st" --reference "$REF/short"
  grep -q "H=2 C=12 ($S/w.st)" "$S/stdout" || fail "not the loaded model: $(head -1 "$S/stdout")"
  grep -qx '# 6 of 6 checks passed' "$S/stdout" || fail "trained weights: $(cat "$S/stdout")"
  ;;

selftest_bad_reference)
  # A corrupted PyTorch case fails that check (exit 1) and names the file; the others still pass.
  cp "$REF/short.weights.safetensors" "$REF/short.input.safetensors" "$S/"
  head -c 100 "$REF/short.expected.safetensors" > "$S/short.expected.safetensors"
  "$ATTN" selftest --reference "$S/short" > "$S/stdout" 2> "$S/stderr"
  rc=$?
  [[ $rc -eq 1 ]] || fail "exit $rc (want 1)"
  grep -q '^FAIL pytorch_reference .*expected' "$S/stdout" || fail "no FAIL line naming the file: $(cat "$S/stdout")"
  [[ $(grep -c '^PASS ' "$S/stdout") -eq 5 ]] || fail "the other five should pass"
  bad "cannot open '$S/none.weights.safetensors'" "$ATTN" selftest --reference "$S/none"
  bad "--weights" "$ATTN" selftest --weights
  ;;

train_ablation)
  # The future task needs the future: chance under the causal mask, solved once the mask leaks;
  # the intact layer on the same weights gives the cheat away.
  ok "$ATTN" train --task future --steps 400 --log-every 400
  acc=$(sed -n 's/^# eval accuracy \([0-9.]*\).*/\1/p' "$S/stdout")
  awk -v a="$acc" 'BEGIN { exit !(a < 0.1) }' || fail "causal future accuracy $acc (want < 0.1)"
  for mask in none inverted; do
    ok "$ATTN" train --task future --mask $mask --steps 400 --log-every 400
    grep -q "^# ablation: mask $mask" "$S/stdout" || fail "no ablation line for $mask"
    acc=$(sed -n 's/^# eval accuracy \([0-9.]*\).*/\1/p' "$S/stdout")
    intact=$(sed -n 's/^# intact layer: eval accuracy \([0-9.]*\).*/\1/p' "$S/stdout")
    awk -v a="$acc" 'BEGIN { exit !(a >= 0.99) }' || fail "$mask: accuracy $acc (want >= 0.99)"
    awk -v a="$intact" 'BEGIN { exit !(a < 0.1) }' || fail "$mask: intact accuracy $intact (want < 0.1)"
  done
  # Every head off: the copy task cannot be learned.
  ok "$ATTN" train --task copy --steps 300 --log-every 300 --heads-off 1,2,3,4
  acc=$(sed -n 's/^# eval accuracy \([0-9.]*\).*/\1/p' "$S/stdout")
  awk -v a="$acc" 'BEGIN { exit !(a < 0.2) }' || fail "copy with every head off: accuracy $acc"
  ;;

train_induction)
  # attn train prints, at the end, the phase change, every head's previous-token and
  # prefix-matching score (layer-major) and the K-composition matrix with its random baseline.
  # (The numbers themselves are checked against plain references in tests/cpp/test_circuits.cpp
  # and against the wasm build in tests/js-api/induction.test.mjs.)
  for L in 1 2 3; do
    ok "$ATTN" train --vocab-size 16 --d-model 16 --heads 2 --seq-len 16 --batch 8 --layers $L --residual \
      --task induction --steps 20 --log-every 20
    # The embedding (16,16) and lm_head (16,16)+(16), and per layer qkv (48,16)+(48), out (16,16)+(16).
    grep -qx "parameters: $((528 + 1088 * L))" "$S/stdout" || fail "L=$L: no parameters line"
    grep -q '^active parameters' "$S/stdout" && fail "L=$L: an active count equal to the total"
    grep -q '^# phase change at step -1 ' "$S/stdout" || fail "L=$L: no phase change line"
    heads=$(grep -c '^head L[0-9]\.H[0-9] previous-token ' "$S/stdout")
    [[ $heads -eq $((2 * L)) ]] || fail "L=$L: $heads head lines (want $((2 * L)))"
    awk '/^head /{ if (!($4 > 0 && $4 < 1 && $6 > 0 && $6 < 1)) { print "bad scores: " $0; bad = 1 } }
         END { exit bad }' "$S/stdout" || fail "L=$L: a head score outside (0, 1)"
    grep -q "^head L$L\.H2 previous-token " "$S/stdout" || fail "L=$L: no line for the last head"
    rows=$(grep -c '^composition L' "$S/stdout")
    [[ $rows -eq $((2 * (L - 1))) ]] || fail "L=$L: $rows composition rows (want $((2 * (L - 1))))"
    awk '/^composition /{ if (NF != 7 || !($5 > 0 && $5 <= 1 && $7 > 0 && $7 <= 1)) { print "bad row: " $0; bad = 1 } }
         END { exit bad }' "$S/stdout" || fail "L=$L: a composition entry outside (0, 1]"
    if [[ $L -gt 1 ]]; then
      base=$(sed -n 's/^# K-composition.*random baseline \([0-9.]*\)$/\1/p' "$S/stdout")
      awk -v b="$base" 'BEGIN { exit !(b > 0 && b < 1) }' || fail "L=$L: baseline '$base'"
      grep -q "^composition L$((L - 1))\.H2 -> L$L\.H1 [0-9.]* L$L\.H2 [0-9.]*$" "$S/stdout" ||
        fail "L=$L: no row for the last pair of layers"
    else
      grep -q '^# K-composition' "$S/stdout" && fail "L=1: a composition matrix"
    fi
  done
  ;;

ablation_bad_flags)
  bad "--mask: unknown mask 'triu'" "$ATTN" train --mask triu
  bad "--heads-off: '5' is not a head number in [1, 4]" "$ATTN" train --heads-off 5
  bad "--heads-frozen: 'x' is not a head number in [1, 2]" "$ATTN" train --heads 2 --heads-frozen 1,x
  bad "--heads-off: '' is not a head number" "$ATTN" train --heads-off 1,,2
  bad "--no-scale-scores given twice" "$ATTN" train --no-scale-scores --no-scale-scores
  # Names that never shipped are unknown flags.
  for old in --no-scale --freeze --vocab; do
    bad "unknown flag $old (see --help)" "$ATTN" train "$old" 1
  done
  ok "$ATTN" train --heads 2 --d-model 8 --steps 2 --log-every 2 --no-scale-scores --heads-frozen 2
  grep -q '^# ablation: mask causal, scaling off, heads off \[\], frozen \[2\]$' "$S/stdout" ||
    fail "ablation line: $(grep '^# ablation' "$S/stdout")"
  ok "$ATTN" train --task future --vocab-size 7 --d-model 4 --heads 1 --seq-len 4 --steps 1 --log-every 1
  grep -q '^# V=7 ' "$S/stdout" || fail "--vocab-size 7: header $(head -1 "$S/stdout")"
  ;;

demo_verdict)
  # The lesson's run on the DemoConfig: every check passes, three epochs, then the verdict.
  ok "$ATTN" demo
  [[ $(tail -1 "$S/stdout") == "Demo OK." ]] || fail "last line is not 'Demo OK.': $(tail -1 "$S/stdout")"
  [[ ! -s $S/stderr ]] || fail "stderr not empty: $(cat "$S/stderr")"
  [[ $(grep -c '^   epoch [0-9]*: mean loss ' "$S/stdout") -eq 3 ]] || fail "not 3 epoch lines"
  grep -q '^   ok: the loss fell from ' "$S/stdout" || fail "no loss-fell line"
  for line in 'q, k, v split into heads .*(B,H,T,Dh) = (16, 4, 12, 8)$' \
      'weights = softmax.*(B,H,T,T)  = (16, 4, 12, 12)$' 'logits = lm_head .*(B,T,V)    = (16, 12, 64)$' \
      '^   head 4: max |row sum - 1| = ' '^   weights above the diagonal: 0 of 4224 nonzero'; do
    grep -q -- "$line" "$S/stdout" || fail "no line matching '$line'"
  done
  # The contract follows the flags, not fixed shapes.
  ok "$ATTN" demo --vocab-size 10 --d-model 12 --heads 3 --seq-len 5 --batch 2 --epochs 2 \
    --steps-per-epoch 30
  grep -q 'Shape contract: B=2 T=5 D=12 H=3 Dh=4 V=10' "$S/stdout" || fail "contract header"
  grep -q '(B,H,T,Dh) = (2, 3, 5, 4)$' "$S/stdout" || fail "heads shape"
  grep -q '(B,T,3D)   = (2, 5, 36)$' "$S/stdout" || fail "qkv shape"
  grep -q '(B,T,V)    = (2, 5, 10)$' "$S/stdout" || fail "logits shape"
  [[ $(grep -c '^   head [0-9]: max |row sum - 1|' "$S/stdout") -eq 3 ]] || fail "not 3 row-sum lines"
  [[ $(tail -1 "$S/stdout") == "Demo OK." ]] || fail "small config: no 'Demo OK.'"
  ;;

demo_check_fails)
  # A mask that lets the future through fails the causal check: exit 1, one line on stderr, no
  # training and no verdict.
  for mask in none inverted; do
    "$ATTN" demo --mask $mask > "$S/stdout" 2> "$S/stderr"
    rc=$?
    [[ $rc -eq 1 ]] || fail "--mask $mask: exit $rc (want 1)"
    [[ $(wc -l < "$S/stderr") -eq 1 ]] || fail "--mask $mask: stderr not one line: $(cat "$S/stderr")"
    grep -q '^attn demo: causal check: .* above the diagonal are nonzero' "$S/stderr" ||
      fail "--mask $mask: stderr: $(cat "$S/stderr")"
    grep -q '^# ablation: mask '$mask "$S/stdout" || fail "--mask $mask: no ablation line"
    grep -q 'Demo OK' "$S/stdout" && fail "--mask $mask: printed Demo OK"
    grep -q 'epoch 1' "$S/stdout" && fail "--mask $mask: trained after a failed check"
    echo "ok: $(cat "$S/stderr")"
  done
  bad "--epochs (0) must be in [1, 1000]" "$ATTN" demo --epochs 0
  bad "--steps-per-epoch must be an integer" "$ATTN" demo --steps-per-epoch x
  bad "--d-model (10) must be divisible by --heads (3)" "$ATTN" demo --d-model 10 --heads 3
  ;;

demo_epoch_means)
  # Epoch means come from every step's loss (they came from the thinned history, so
  # 20,000 steps printed "mean loss 0.0000", and more steps than the history holds underflowed).
  # attn train --log-every 1 prints the loss of every step of the same run.
  cfg=(--task future --vocab-size 8 --d-model 4 --heads 1 --seq-len 4 --batch 2)
  ok "$ATTN" demo "${cfg[@]}" --epochs 1 --steps-per-epoch 2000
  m2k=$(sed -n 's/^   epoch 1: mean loss \([0-9.]*\)$/\1/p' "$S/stdout")
  ok "$ATTN" demo "${cfg[@]}" --epochs 1 --steps-per-epoch 20000
  m20k=$(sed -n 's/^   epoch 1: mean loss \([0-9.]*\)$/\1/p' "$S/stdout")
  [[ $(tail -1 "$S/stdout") == "Demo OK." ]] || fail "20000 steps: no 'Demo OK.'"
  ok "$ATTN" train "${cfg[@]}" --steps 20000 --log-every 1
  want=$(awk '/^step / { s += $4; n++ } END { if (n == 20000) printf "%.6f", s / n }' "$S/stdout")
  echo "2000 steps: $m2k; 20000 steps: $m20k; mean of attn train's 20000 losses: $want"
  awk -v m="$m20k" -v w="$want" 'BEGIN { exit !(w != "" && m - w < 6e-5 && w - m < 6e-5) }' ||
    fail "20000-step mean $m20k is not the mean of the per-step losses ($want)"
  # Nothing beats chance (ln 8 = 2.079) on the future task: both means stay near it, never 0.
  awk -v a="$m2k" -v b="$m20k" 'BEGIN { d = a - b; exit !(b > 2.0 && a > 2.0 && d < 0.05 && -d < 0.05) }' ||
    fail "20000-step mean $m20k is not close to the 2000-step mean $m2k"
  # Several epochs: each mean is its own slice of the per-step losses.
  ok "$ATTN" demo "${cfg[@]}" --epochs 3 --steps-per-epoch 7000
  grep '^   epoch [0-9]: mean loss ' "$S/stdout" | awk '{ print $5 }' > "$S/demo_means"
  ok "$ATTN" train "${cfg[@]}" --steps 21000 --log-every 1
  awk '/^step / { s[int(($2 - 1) / 7000)] += $4 } END { for (e = 0; e < 3; e++) printf "%.6f\n", s[e] / 7000 }' \
    "$S/stdout" > "$S/train_means"
  paste "$S/demo_means" "$S/train_means" | awk '{ d = $1 - $2; if (NF != 2 || d > 6e-5 || -d > 6e-5) bad = 1 }
    END { exit bad || NR != 3 }' || fail "epoch means differ: $(paste "$S/demo_means" "$S/train_means" | tr '\n' ' ')"
  ;;

layers_flags)
  # --layers and --residual reach the model, its weights file and attn forward.
  ok "$ATTN" train --layers 2 --residual --steps 3 --log-every 3 --save "$S/w2.st"
  "$CMP" --list "$S/w2.st" > "$S/list"
  for l in 0 1; do
    for p in qkv_proj.weight qkv_proj.bias out_proj.weight out_proj.bias; do
      grep -q "^layers\.$l\.$p F32 " "$S/list" || fail "no layers.$l.$p in $(tr '\n' ' ' < "$S/list")"
    done
  done
  grep -q '^attn\.' "$S/list" && fail "a 2-layer file has attn.* tensors"
  [[ $(wc -l < "$S/list") -eq 11 ]] || fail "not 11 tensors: $(cat "$S/list")"
  header "$S/w2.st" | grep -qF '"n_layers":"2","residual":"true"' || fail "metadata: $(header "$S/w2.st")"
  ids64 "$S/in.st" 3 63
  ok fwd "$S/w2.st" "$S/in.st"
  "$CMP" --list "$OUT" > "$S/list"
  printf 'attention F32 (2,1,4,2,2)\nlogits F32 (1,2,64)\n' | diff - "$S/list" || fail "forward tensors"
  grep -qF 'attention (2,1,4,2,2)' "$S/stdout" || fail "forward summary: $(cat "$S/stdout")"
  ok "$ATTN" selftest --weights "$S/w2.st" --reference "$REF/layers2_residual"
  grep -qx '# 6 of 6 checks passed' "$S/stdout" || fail "selftest of 2 layers: $(cat "$S/stdout")"
  grep -q '^PASS rows_and_mask .*all 2 layers' "$S/stdout" || fail "rows_and_mask not on every layer"
  # Without --residual: residual false in the file; one layer: the curriculum's file.
  ok "$ATTN" train --layers 3 --steps 0 --save "$S/w3.st"
  header "$S/w3.st" | grep -qF '"n_layers":"3","residual":"false"' || fail "metadata: $(header "$S/w3.st")"
  ok "$ATTN" train --layers 1 --steps 0 --save "$S/w1.st"
  ok "$ATTN" train --steps 0 --save "$S/w0.st"
  cmp -s "$S/w1.st" "$S/w0.st" || fail "--layers 1 is not the default model"
  header "$S/w1.st" | grep -q 'n_layers' && fail "a 1-layer file names n_layers"
  # Heads are global across layers (layer-major, 1-based): 2 layers x 4 heads = 8.
  ok "$ATTN" train --layers 2 --residual --heads-off 6 --heads-frozen 8 --steps 2 --log-every 2
  grep -q '^# ablation: mask causal, scaling on, heads off \[6\], frozen \[8\]$' "$S/stdout" ||
    fail "ablation line: $(grep '^# ablation' "$S/stdout")"
  bad "--heads-off: '9' is not a head number in [1, 8]" "$ATTN" train --layers 2 --heads-off 9
  bad "--layers (5) must be in [1, 4]" "$ATTN" train --layers 5
  bad "--layers (0) must be in [1, 4]" "$ATTN" demo --layers 0
  bad "--layers must be an integer" "$ATTN" train --layers two
  # Every config flag is bounded by the core's schema (attn/train/config.h), named as a flag.
  bad "--vocab-size (0) must be in [1, 65536]" "$ATTN" train --vocab-size 0
  bad "--heads (64) must be in [1, 32]" "$ATTN" train --heads 64
  bad "--batch (5000) must be in [1, 4096]" "$ATTN" train --batch 5000
  bad "--lr (-1) must be in (0, 10]" "$ATTN" train --lr -1
  bad "--out-dropout (1) must be in [0, 1)" "$ATTN" train --out-dropout 1
  bad "--task: unknown task 'x'" "$ATTN" train --task x
  bad "--residual given twice" "$ATTN" train --residual --residual
  bad "unexpected argument 'true'" "$ATTN" train --residual true
  # attn forward builds the model the file's metadata describes: a hostile or inconsistent
  # n_layers is refused in one line naming it.
  patch "$S/w2.st" "$S/w5.st" '"n_layers":"2"' '"n_layers":"7"'
  bad 'n_layers "7" must be an integer in [1, 4]' fwd "$S/w5.st" "$S/in.st"
  patch "$S/w2.st" "$S/wx.st" '"n_layers":"2"' '"n_layers":"abc"'
  bad 'n_layers "abc" must be an integer in [1, 4]' fwd "$S/wx.st" "$S/in.st"
  patch "$S/w2.st" "$S/w3x.st" '"n_layers":"2"' '"n_layers":"3"'
  bad 'layers.2.qkv_proj.weight' fwd "$S/w3x.st" "$S/in.st"
  ;;

demo_layers)
  # The lesson's checks on every layer: 2 layers x 4 heads of row sums, the causal check over
  # both layers, and a heatmap per head labelled by layer.
  ok "$ATTN" demo --layers 2 --residual --epochs 2 --steps-per-epoch 40
  [[ $(tail -1 "$S/stdout") == "Demo OK." ]] || fail "no 'Demo OK.': $(tail -3 "$S/stdout")"
  grep -q '^# attn demo: .* layers=2 residual$' "$S/stdout" || fail "header: $(head -1 "$S/stdout")"
  [[ $(grep -c '^   head [0-9] (layer [12], head [1-4]): max |row sum - 1|' "$S/stdout") -eq 8 ]] ||
    fail "not 8 row-sum lines: $(grep 'row sum' "$S/stdout")"
  grep -q '^   head 8 (layer 2, head 4): max |row sum - 1| = ' "$S/stdout" || fail "no line for head 8"
  # 2 layers x 16 sequences x 4 heads x 66 cells above the diagonal of a 12 x 12 row block.
  grep -q '^   weights above the diagonal: 0 of 8448 nonzero' "$S/stdout" || fail "causal line"
  grep -q '^   l2 h3  .*   l2 h4 ' "$S/stdout" || fail "no heatmaps for layer 2 heads 3 and 4"
  # A broken mask applies to every layer, and fails the check.
  "$ATTN" demo --layers 3 --mask none > "$S/stdout" 2> "$S/stderr"
  [[ $? -eq 1 ]] || fail "--layers 3 --mask none: not exit 1"
  grep -q '^attn demo: causal check: ' "$S/stderr" || fail "stderr: $(cat "$S/stderr")"
  ;;

block_flags)
  # The block's flags reach the model, its weights file, demo, selftest and bench.
  ok "$ATTN" train --residual --layers 2 --positions learned --norm layernorm --ffn swiglu \
    --kv-heads 2 --ffn-mult 2 --max-seq-len 16 --steps 3 --log-every 3 --save "$S/b.st"
  # token_emb (64,32), pos_emb (16,32); per layer attn_norm 2 (32), qkv (64,32)+(64) (GQA: 4+2+2
  # heads of 8), out (32,32)+(32), ffn_norm 2 (32), gate, up (64,32), down (32,64); final_norm 2 (32),
  # lm_head (64,32)+(64): 2048 + 512 + 2 (64 + 2112 + 1056 + 64 + 6144) + 64 + 2112.
  grep -qx 'parameters: 23616' "$S/stdout" || fail "block parameters: $(grep parameters "$S/stdout")"
  "$CMP" --list "$S/b.st" > "$S/list"
  for p in pos_emb.weight layers.1.attn_norm.bias layers.1.ffn.gate.weight final_norm.weight; do
    grep -q "^$p F32 " "$S/list" || fail "no $p in $(tr '\n' ' ' < "$S/list")"
  done
  grep -q '^layers\.0\.qkv_proj\.weight F32 (64,32)$' "$S/list" || fail "GQA qkv shape: $(grep qkv "$S/list")"
  grep -q '^pos_emb\.weight F32 (16,32)$' "$S/list" || fail "learned table: $(grep pos_emb "$S/list")"
  grep -q 'ffn\.up\.bias' "$S/list" && fail "a swiglu file has biases"
  for kv in '"ffn":"swiglu"' '"ffn_mult":"2"' '"kv_heads":"2"' '"max_seq_len":"16"' \
            '"norm":"layernorm"' '"norm_position":"pre"' '"positions":"learned"'; do
    header "$S/b.st" | grep -qF "$kv" || fail "metadata lacks $kv: $(header "$S/b.st")"
  done
  ok "$ATTN" selftest --weights "$S/b.st"
  grep -q '^FAIL' "$S/stdout" && fail "selftest of a block: $(grep FAIL "$S/stdout")"
  grep -q '^PASS gradcheck .*positions=learned .*norm=layernorm norm_position=pre ffn=swiglu' "$S/stdout" ||
    fail "gradcheck ignores the block: $(grep gradcheck "$S/stdout")"
  ok "$ATTN" selftest --residual --positions rope --norm rmsnorm --norm-position post --ffn relu --kv-heads 1
  grep -q '^FAIL' "$S/stdout" && fail "selftest of a rope block: $(grep FAIL "$S/stdout")"
  ok "$ATTN" demo --residual --positions alibi --ffn gelu --epochs 1 --steps-per-epoch 20
  grep -q '^# attn demo: .* positions=alibi .* ffn=gelu' "$S/stdout" || fail "demo header: $(head -1 "$S/stdout")"
  grep -q '(B,T,3D)' "$S/stdout" || fail "demo shape line"
  ok "$ATTN" bench --config custom --residual --norm rmsnorm --blocks 1 --block-seconds 0.02
  grep -q '"custom": {"steps_per_s": ' "$S/stdout" || fail "bench custom: $(cat "$S/stdout")"
  # Generation's tokens/s with and without the KV cache; the numbers are not asserted.
  ok "$ATTN" bench --config generate --blocks 1 --block-seconds 0.02
  grep -q '"cached_tokens_per_s": .*"uncached_tokens_per_s": .*"speedup": ' "$S/stdout" ||
    fail "bench generate: $(cat "$S/stdout")"
  # Bad values: one sentence, kind config, naming the flags.
  bad "--norm (rmsnorm) needs --residual" "$ATTN" train --norm rmsnorm --steps 1
  bad "--ffn (relu) needs --residual" "$ATTN" train --ffn relu --steps 1
  bad "--heads (4) must be divisible by --kv-heads (3)" "$ATTN" train --kv-heads 3 --steps 1
  bad "--max-seq-len (8) must be 0 or >= --seq-len (12)" "$ATTN" train --max-seq-len 8 --steps 1
  bad "unknown positions 'absolute'" "$ATTN" train --positions absolute --steps 1
  bad "--ffn-mult (9) must be in [1, 8]" "$ATTN" demo --ffn-mult 9
  ;;

block_eval)
  # attn eval: loss, accuracy and accuracy per position at another length.
  ok "$ATTN" train --residual --positions rope --task shift --steps 5 --log-every 5 --save "$S/r.st"
  ok "$ATTN" eval --weights "$S/r.st" --task shift --seq-len 24 --batches 2
  grep -q '^{"task":"shift","seq_len":24,"max_seq_len":12,"positions":"rope",.*"loss":[0-9.e-]*,"accuracy":[0-9.e-]*,"accuracy_per_position":\[null,' "$S/stdout" ||
    fail "eval JSON: $(cat "$S/stdout")"
  [[ $(grep -o '"accuracy_per_position":\[[^]]*\]' "$S/stdout" | tr ',' '\n' | wc -l) -eq 24 ]] ||
    fail "not 24 positions: $(cat "$S/stdout")"
  ok "$ATTN" eval --weights "$S/r.st" --task shift --seq-len 12 --batches 2
  grep -q '"seq_len":12' "$S/stdout" || fail "eval at the trained length: $(cat "$S/stdout")"
  ok "$ATTN" train --residual --positions learned --task shift --steps 1 --save "$S/l.st"
  bad "longer than the learned position table (max_seq_len 12)" \
    "$ATTN" eval --weights "$S/l.st" --task shift --seq-len 13
  bad "--seq-len" "$ATTN" eval --weights "$S/l.st" --task shift --seq-len 0
  bad "unknown task" "$ATTN" eval --weights "$S/l.st" --task nope --seq-len 8
  ;;

text_train)
  # attn train --task text: a corpus file or the default corpus, the validation loss
  # in bits per character on every report, the unigram entropy once, the vocab in the weights.
  for i in $(seq 1 40); do printf 'the cat sat on the mat. a dog ran.\n'; done > "$S/corpus.txt"
  ok "$ATTN" train --task text --text "$S/corpus.txt" --seq-len 16 --steps 40 --log-every 20 \
    --save "$S/t.st"
  o=$S/stdout
  grep -q '^# V=15 .* T=16 .* task=text$' "$o" || fail "header: $(head -1 "$o")"
  grep -q '^# text: 1400 characters (1260 train, 140 validation), vocab "\\n .acdeghmnorst"$' "$o" ||
    fail "text line: $(grep '^# text' "$o")"
  [[ $(grep -c '^# unigram entropy [0-9.]* bits per char ([0-9.]* nats)' "$o") -eq 1 ]] ||
    fail "no single unigram entropy line: $(cat "$o")"
  [[ $(grep -c '^step [0-9]* loss [0-9.e-]* accuracy [0-9.]* val_loss [0-9.]* val_bits_per_char [0-9.]*$' "$o") -eq 2 ]] ||
    fail "report lines: $(grep '^step' "$o")"
  header "$S/t.st" | grep -qF '"vocab":"\"\\n .acdeghmnorst\""' || fail "vocab metadata: $(header "$S/t.st")"
  # Without --text: the default corpus.
  ok "$ATTN" train --task text --steps 2 --log-every 2 --save "$S/d.st"
  grep -q '^# text: [0-9]* characters' "$o" || fail "default corpus: $(cat "$o")"
  header "$S/d.st" | grep -qF '"vocab":"\"\\n ,.?' || fail "default vocab metadata"
  # Another task writes no vocab.
  ok "$ATTN" train --steps 1 --save "$S/r.st"
  header "$S/r.st" | grep -qF '"vocab"' && fail "a repeat model has a vocab"
  ok "$ATTN" train --help
  grep -q -- '--text FILE' "$o" || fail "train --help lacks --text"
  ;;

train_threads)
  # --threads N splits the head loops and row layers: the same output on 1 and 3 threads (the
  # steps/s and "saved" lines aside), the same weights file; a bad count is one line, exit 2.
  t="$ATTN train --task text --d-model 32 --heads 4 --seq-len 16 --batch 6 --layers 2 --residual"
  t="$t --positions rope --norm layernorm --ffn gelu --steps 6 --log-every 3"
  ok $t --threads 1 --save "$S/t1.st"
  grep -v '^# \(6 steps in\|saved\)' "$S/stdout" > "$S/t1.out"
  ok $t --threads 3 --save "$S/t3.st"
  grep -v '^# \(6 steps in\|saved\)' "$S/stdout" > "$S/t3.out"
  cmp -s "$S/t1.out" "$S/t3.out" || fail "train output differs on 3 threads: $(diff "$S/t1.out" "$S/t3.out" | head -5)"
  cmp -s "$S/t1.st" "$S/t3.st" || fail "weights differ on 3 threads"
  bad "--threads" "$ATTN" train --threads 0 --save "$OUT"
  bad "--threads" "$ATTN" train --threads 65 --save "$OUT"
  ;;

text_bad_input)
  # Each bad corpus: one line naming the problem, exit 2, no weights written.
  : > "$S/empty.txt"
  printf 'too short\n' > "$S/short.txt"
  printf 'text\0with a NUL byte and more text after it to be long enough, really quite long.' > "$S/bin.txt"
  { for i in $(seq 1 20); do printf 'caf\xe9 au lait '; done; } > "$S/latin1.txt"
  head -c 2097153 /dev/zero | tr '\0' 'a' > "$S/big.txt"
  for cp in $(seq 256 512); do printf "\\x%02x\\x%02x" $((0xC0 | cp >> 6)) $((0x80 | (cp & 63))); done |
    xargs -0 printf > "$S/wide.txt"
  t="$ATTN train --task text --steps 1 --save $OUT --text"
  bad "empty.txt: the text is empty" $t "$S/empty.txt"
  bad "short.txt: the text has 10 characters, too few for seq_len 12" $t "$S/short.txt"
  bad "bin.txt: the text looks like a binary file" $t "$S/bin.txt"
  bad "latin1.txt: the text is not valid UTF-8 (byte 3" $t "$S/latin1.txt"
  bad "big.txt: the text is 2097153 bytes, more than the 2097152-byte (2 MB) limit" $t "$S/big.txt"
  bad "wide.txt: the text has 257 distinct characters" $t "$S/wide.txt"
  bad "cannot open" $t "$S/missing.txt"
  bad "--text needs --task text" "$ATTN" train --steps 1 --text "$S/short.txt"
  ;;

text_sample)
  # attn sample: the prompt, then exactly --tokens characters, then a newline; greedy
  # and seeded draws are deterministic.
  ok "$ATTN" train --task text --residual --layers 2 --positions rope --norm layernorm --ffn gelu \
    --seq-len 16 --steps 30 --log-every 30 --save "$S/t.st"
  smp="$ATTN sample --weights $S/t.st --prompt"
  ok $smp "the " --tokens 40 --temperature 0
  cp "$S/stdout" "$S/greedy1"
  ok $smp "the " --tokens 40 --temperature 0 --seed 9
  cmp -s "$S/stdout" "$S/greedy1" || fail "greedy differs between runs: $(cat "$S/stdout") vs $(cat "$S/greedy1")"
  [[ $(head -c 4 "$S/greedy1") == "the " ]] || fail "output does not start with the prompt: $(cat "$S/greedy1")"
  [[ $(wc -c < "$S/greedy1") -eq $((4 + 40 + 1)) ]] || fail "not 40 characters: $(cat "$S/greedy1")"
  [[ $(tail -c 1 "$S/greedy1" | od -An -c | tr -d ' ') == '\n' ]] || fail "no final newline"
  for seed in 1 2; do
    ok $smp "a" --tokens 80 --seed $seed
    cp "$S/stdout" "$S/seed$seed.a"
    ok $smp "a" --tokens 80 --seed $seed
    cmp -s "$S/stdout" "$S/seed$seed.a" || fail "seed $seed: two runs differ"
    [[ $(wc -c < "$S/stdout") -eq $((1 + 80 + 1)) ]] || fail "seed $seed: not 80 characters"
  done
  cmp -s "$S/seed1.a" "$S/seed2.a" && fail "seeds 1 and 2 give the same sample: $(cat "$S/seed1.a")"
  # Each strategy runs; top-k 1 and min-p 1 keep only the largest logit: greedy.
  ok $smp "the " --tokens 40 --top-k 1 --seed 5
  cmp -s "$S/stdout" "$S/greedy1" || fail "top-k 1 is not greedy: $(cat "$S/stdout")"
  ok $smp "the " --tokens 40 --min-p 1 --seed 5
  cmp -s "$S/stdout" "$S/greedy1" || fail "min-p 1 is not greedy: $(cat "$S/stdout")"
  ok $smp "the " --tokens 40 --top-p 0.5 --temperature 0.8 --window 8
  [[ $(wc -c < "$S/stdout") -eq 45 ]] || fail "--window 8: $(cat "$S/stdout")"
  ok $smp "the" --tokens 0
  [[ $(cat "$S/stdout") == "the" ]] || fail "--tokens 0: $(cat "$S/stdout")"
  ok "$ATTN" sample --help
  grep -q -- '--min-p M' "$S/stdout" || fail "sample --help lacks --min-p"
  ;;

text_sample_bad)
  # Each bad input of attn sample: one line naming it, exit 2.
  ok "$ATTN" train --task text --steps 1 --save "$S/t.st"
  smp="$ATTN sample --weights $S/t.st --prompt"
  bad "--prompt: the character 'Q' (U+0051) is not in the model's vocabulary" $smp "the Queen"
  bad "--prompt: the character U+0009 is not in the model's vocabulary" $smp "$(printf 'a\tb')"
  bad "--prompt: it is empty" $smp ""
  bad "--prompt: it has 10001 characters, more than the 10000 allowed" $smp "$(head -c 10001 /dev/zero | tr '\0' 'a')"
  bad "--prompt: the text is not valid UTF-8" $smp "$(printf 'a\xff')"
  bad "the model was not trained on text" "$ATTN" sample --weights "$W" --prompt "a"
  bad "--top-p (0) must be in (0, 1]" $smp "a" --top-p 0
  bad "--temperature (-1) must be in [0, 100]" $smp "a" --temperature -1
  bad "--min-p (2) must be in [0, 1]" $smp "a" --min-p 2
  bad "--top-k (999) must be in [0, " $smp "a" --top-k 999
  bad "--tokens (10001) must be in [0, 10000]" $smp "a" --tokens 10001
  bad "--window (13) must be in [0, 12]" $smp "a" --window 13
  bad "--seed must be a non-negative integer" $smp "a" --seed -1
  bad "cannot open" "$ATTN" sample --weights "$S/missing.st" --prompt a
  bad "--prompt" "$ATTN" sample --weights "$S/t.st"
  ;;

text_sample_speculative)
  # attn sample --draft: the same text as attn sample at temperature 0, for a trained draft and
  # for the bigram, within the window (16) and past it; then one line of figures. Bad drafts: one
  # line, exit 2.
  blk="--task text --residual --positions rope --seq-len 16 --log-every 40"
  ok "$ATTN" train $blk --layers 2 --norm layernorm --ffn gelu --steps 40 --save "$S/t.st"
  ok "$ATTN" train $blk --layers 1 --d-model 16 --heads 2 --steps 40 --save "$S/d.st"
  smp="$ATTN sample --weights $S/t.st --prompt"
  for prompt in "the " "a small dog and a big cat"; do
    ok $smp "$prompt" --tokens 40 --temperature 0
    cp "$S/stdout" "$S/plain"
    for draft in "$S/d.st" bigram; do
      for n in 1 4 16; do
        ok $smp "$prompt" --tokens 40 --temperature 0 --draft "$draft" --draft-tokens $n
        [[ $(wc -l < "$S/stdout") -eq 2 ]] || fail "not the text and one line: $(cat "$S/stdout")"
        head -n 1 "$S/stdout" | cmp -s - "$S/plain" ||
          fail "--draft $draft --draft-tokens $n: greedy differs from plain: $(cat "$S/stdout") vs $(cat "$S/plain")"
        tail -n 1 "$S/stdout" | grep -q "^speculative decoding (draft .*, N $n): 40 tokens in [0-9]* target passes ([0-9.]* per token) and [0-9]* draft passes; [0-9]* of [0-9]* judged draft tokens accepted: alpha [0-9.]*, mean sum min(p, q) [0-9.]*; [0-9.]* tokens per target pass, (1 - alpha^$((n + 1))) / (1 - alpha) = [0-9.]*; [0-9.]* ms, plain decoding [0-9.]* ms ([0-9.]* times as long)$" ||
          fail "figures line: $(tail -n 1 "$S/stdout")"
      done
    done
  done
  # Sampled: the same seed gives the same text; the bigram of another text says which.
  for i in $(seq 1 40); do printf 'the cat sat on the mat. a dog ran to the cat.\n'; done > "$S/cats.txt"
  ok $smp "the " --tokens 60 --seed 3 --top-k 10 --draft bigram --text "$S/cats.txt"
  cp "$S/stdout" "$S/a"
  grep -q "^speculative decoding (draft bigram of $S/cats.txt's training split, N 4): 60 tokens" "$S/a" ||
    fail "bigram source: $(tail -n 1 "$S/a")"
  ok $smp "the " --tokens 60 --seed 3 --top-k 10 --draft bigram --text "$S/cats.txt"
  head -n 1 "$S/stdout" | cmp -s - <(head -n 1 "$S/a") || fail "a seed gives two texts"
  ok $smp "the " --tokens 10 --draft bigram
  grep -q "draft bigram of the default corpus's training split" "$S/stdout" || fail "default corpus: $(cat "$S/stdout")"
  # A draft of another vocabulary: the cats text has 15 characters, the default corpus 35.
  ok "$ATTN" train --task text --text "$S/cats.txt" --seq-len 16 --steps 1 --save "$S/cats.st"
  bad "--draft $S/cats.st: the draft's vocabulary has 15 tokens but the target's has 35" \
    $smp "the " --draft "$S/cats.st"
  printf 'The Queen sat.\n%.0s' $(seq 1 20) > "$S/queen.txt"
  bad "$S/queen.txt: the character 'Q' (U+0051) is not in the model's vocabulary" \
    $smp "the " --draft bigram --text "$S/queen.txt"
  bad "--draft-tokens (0) must be in [1, 16]" $smp "the " --draft bigram --draft-tokens 0
  bad "--draft-tokens (17) must be in [1, 16]" $smp "the " --draft bigram --draft-tokens 17
  bad "--text needs --draft bigram" $smp "the " --draft "$S/d.st" --text "$S/cats.txt"
  bad "--draft-tokens needs --draft" $smp "the " --draft-tokens 2
  bad "--text needs --draft" $smp "the " --text "$S/cats.txt"
  bad "cannot open" $smp "the " --draft "$S/missing.st"
  printf hello > "$S/not-weights"
  bad "not-weights: " $smp "the " --draft "$S/not-weights"
  ok "$ATTN" sample --help
  grep -q -- '--draft-tokens N' "$S/stdout" || fail "sample --help lacks --draft-tokens"
  ;;

mlm_train_fill)
  # attn train --objective mlm: the masked-position accuracy on every report and at the end,
  # [MASK] as one more row, the objective in the metadata; attn fill fills the blanks.
  for i in $(seq 1 60); do printf 'abcdefgh '; done > "$S/corpus.txt"
  ok "$ATTN" train --task text --text "$S/corpus.txt" --objective mlm --mask-rate 0.15 --seq-len 16 \
    --residual --layers 2 --positions learned --lr 0.01 --steps 300 --log-every 150 --save "$S/m.st"
  o=$S/stdout
  grep -q '^# objective mlm: 0.15 of the tokens selected' "$o" || fail "mlm line: $(cat "$o")"
  [[ $(grep -c '^step [0-9]* loss [0-9.e-]* accuracy [0-9.]* val_loss [0-9.]* val_bits_per_char [0-9.]* val_masked_accuracy [0-9.]*$' "$o") -eq 2 ]] ||
    fail "report lines: $(grep '^step' "$o")"
  grep -q '^# eval masked-position accuracy [0-9.]* loss .* of the validation split, 0.15 of the tokens selected)$' "$o" ||
    fail "eval line: $(grep '^# eval' "$o")"
  header "$S/m.st" | grep -qF '"objective":"mlm"' || fail "objective metadata: $(header "$S/m.st")"
  "$CMP" --list "$S/m.st" | grep -qxF 'token_emb.embedding.weight F32 (10,32)' ||
    fail "9 characters and [MASK]: $("$CMP" --list "$S/m.st" | grep token_emb)"
  ok "$ATTN" fill --weights "$S/m.st" --text "abc_efgh a_cd"
  [[ $(cat "$o") == "abcdefgh abcd" ]] || fail "fill: $(cat "$o")"
  ok "$ATTN" fill --weights "$S/m.st" --text "abc*efgh" --blank '*' --top 3
  [[ $(head -1 "$o") == "abcdefgh" ]] || fail "fill --blank: $(cat "$o")"
  [[ $(wc -l < "$o") -eq 2 ]] || fail "one line per blank: $(cat "$o")"
  grep -q '^blank 3: "d" [01]\.[0-9]\{4\}, "[a-h ]" [01]\.[0-9]\{4\}, "[a-h ]" [01]\.[0-9]\{4\}$' "$o" || fail "top 3: $(cat "$o")"
  ok "$ATTN" fill --help
  grep -q -- '--blank C' "$o" || fail "fill --help lacks --blank"
  # Another task: the masked-position accuracy of the eval batches.
  ok "$ATTN" train --objective mlm --task copy --steps 4 --log-every 2
  [[ $(grep -c 'val_masked_accuracy' "$o") -eq 2 ]] || fail "copy reports: $(grep '^step' "$o")"
  ;;

mlm_fill_bad)
  # Each bad input of attn fill, and an mlm model asked to generate: one line, exit 2.
  ok "$ATTN" train --task text --objective mlm --steps 1 --save "$S/m.st"
  ok "$ATTN" train --task text --steps 1 --save "$S/c.st"
  fl="$ATTN fill --weights $S/m.st --text"
  bad "a causal model cannot see the right side of a blank" "$ATTN" fill --weights "$S/c.st" --text "a_c"
  bad "--blank: 'a' (U+0061) is a character of the model's vocabulary" $fl "a_c" --blank a
  bad "--text has no blank ('_' (U+005F))" $fl "abc"
  bad "--text is all blanks" $fl "___"
  bad "--text: the character 'Q' (U+0051) is not in the model's vocabulary" $fl "Q_c"
  bad "--blank (\"ab\") must be exactly one character" $fl "a_c" --blank ab
  bad "--top (99) must be in [0, " $fl "a_c" --top 99
  bad "the model was not trained on text" "$ATTN" fill --weights "$W" --text "a_c"
  bad "--text" "$ATTN" fill --weights "$S/m.st"
  bad "cannot generate left to right" "$ATTN" sample --weights "$S/m.st" --prompt "the"
  bad "--mask-rate (0.6) must be in [0.01, 0.5]" "$ATTN" train --objective mlm --mask-rate 0.6 --steps 1
  bad "unknown objective 'bert'" "$ATTN" train --objective bert --steps 1
  ;;

attention_flags)
  # --attention window/strided, --window, --stride and --differential reach the model, its
  # file, selftest, eval and sample; bad values name the flag.
  # A window at its default (4) is not written: absent, it reads as 4.
  ok "$ATTN" train --attention window --window 4 --task shift --steps 3 --log-every 3 --save "$S/w.st"
  grep -q '^# attention window window 4$' "$S/stdout" || fail "window line: $(head -3 "$S/stdout")"
  for kv in '"attention":"window"' '"kv_heads":"4"'; do
    header "$S/w.st" | grep -qF "$kv" || fail "metadata lacks $kv: $(header "$S/w.st")"
  done
  ! header "$S/w.st" | grep -qF '"window":' || fail "window 4 written: $(header "$S/w.st")"
  ok "$ATTN" train --attention strided --window 2 --stride 3 --differential --residual --layers 2 \
    --steps 3 --log-every 3 --save "$S/s.st"
  grep -q '^# attention strided window 2 stride 3, differential$' "$S/stdout" || fail "strided line"
  # Per layer diff_lambda (4), qkv (160,32)+(160) (q1 q2 k1 k2 v), out (32,32)+(32); token_emb and
  # lm_head (64,32), (64,32)+(64): 2 (4 + 5280 + 1056) + 2048 + 2112.
  grep -qx 'parameters: 16840' "$S/stdout" || fail "differential parameters: $(grep parameters "$S/stdout")"
  for kv in '"attention":"strided"' '"window":"2"' '"stride":"3"' '"differential":"true"'; do
    header "$S/s.st" | grep -qF "$kv" || fail "metadata lacks $kv: $(header "$S/s.st")"
  done
  "$CMP" --list "$S/s.st" > "$S/list"
  grep -q '^layers\.1\.diff_lambda F32 (4)$' "$S/list" || fail "no diff_lambda: $(tr '\n' ' ' < "$S/list")"
  grep -q '^layers\.0\.qkv_proj\.weight F32 (160,32)$' "$S/list" || fail "q1 q2 k1 k2 v rows: $(grep qkv "$S/list")"
  for w in w s; do
    ok "$ATTN" selftest --weights "$S/$w.st"
    grep -q '^FAIL' "$S/stdout" && fail "selftest of $w: $(grep FAIL "$S/stdout")"
  done
  grep -q '^PASS rows_and_mask .*outside the causal window of 2 with stride 3' "$S/stdout" ||
    fail "rows_and_mask ignores the pattern: $(grep rows_and_mask "$S/stdout")"
  ok "$ATTN" selftest --objective mlm --differential --residual --attention window --window 2
  grep -q '^FAIL' "$S/stdout" && fail "selftest of an mlm model: $(grep FAIL "$S/stdout")"
  ok "$ATTN" demo --objective mlm --differential --attention window --window 3 --epochs 2 --steps-per-epoch 20
  grep -q '^# attn demo: .* objective=mlm attention=window window=3 stride=4 differential=true family=lm tie_embeddings=false bias=true$' "$S/stdout" ||
    fail "demo header: $(head -1 "$S/stdout")"
  grep -q '(B,T,5D)' "$S/stdout" || fail "demo: the differential qkv shape"
  grep -q '^Demo OK\.$' "$S/stdout" || fail "demo of an mlm model: $(tail -3 "$S/stdout")"
  ok "$ATTN" eval --weights "$S/w.st" --task shift --seq-len 12
  grep -q '"accuracy_per_position"' "$S/stdout" || fail "eval: $(cat "$S/stdout")"
  ok "$ATTN" train --task text --attention window --window 3 --positions rope --residual \
    --layers 2 --seq-len 16 --steps 2 --save "$S/t.st"
  ok "$ATTN" sample --weights "$S/t.st" --prompt "the " --tokens 30 --temperature 0
  [[ $(wc -c < "$S/stdout") -eq 35 ]] || fail "sample of a window model: $(cat "$S/stdout")"
  bad "--window (0) must be in [1, 4096]" "$ATTN" train --attention window --window 0 --steps 1
  bad "--stride (0) must be in [1, 4096]" "$ATTN" train --attention strided --stride 0 --steps 1
  bad "unknown attention 'sparse'" "$ATTN" train --attention sparse --steps 1
  bad "--window" "$ATTN" train --attention window --window abc --steps 1
  ;;

text_eval)
  # attn eval --task text: the validation split of --text FILE, or of the default corpus.
  for i in $(seq 1 40); do printf 'the cat sat on the mat. a dog ran.\n'; done > "$S/corpus.txt"
  ok "$ATTN" train --task text --text "$S/corpus.txt" --seq-len 16 --steps 20 --log-every 20 --save "$S/c.st"
  ok "$ATTN" eval --weights "$S/c.st" --task text --text "$S/corpus.txt" --seq-len 16 --batches 2
  grep -q '^{"task":"text","seq_len":16,"max_seq_len":16,.*"loss":[0-9.e-]*,"accuracy":[0-9.e-]*,"accuracy_per_position":\[' "$S/stdout" ||
    fail "eval JSON: $(cat "$S/stdout")"
  ok "$ATTN" train --task text --positions rope --residual --steps 2 --log-every 2 --save "$S/d.st"
  ok "$ATTN" eval --weights "$S/d.st" --task text --seq-len 24 --batches 1
  grep -q '^{"task":"text","seq_len":24,"max_seq_len":12,"positions":"rope"' "$S/stdout" ||
    fail "default corpus at a longer length: $(cat "$S/stdout")"
  # The default corpus has characters the cat corpus's model lacks.
  bad "the default corpus: the character 'i' (U+0069) is not in the model's vocabulary" \
    "$ATTN" eval --weights "$S/c.st" --task text --seq-len 16
  bad "the model was not trained on text" "$ATTN" eval --weights "$W" --task text --seq-len 8
  printf 'too short\n' > "$S/short.txt"
  bad "short.txt: the text has 10 characters, too few for seq_len 16" \
    "$ATTN" eval --weights "$S/c.st" --task text --text "$S/short.txt" --seq-len 16
  bad "--text needs --task text" "$ATTN" eval --weights "$W" --task shift --seq-len 8 --text "$S/short.txt"
  ;;

demo_self_attention)
  ok "$ATTN" demo self-attention
  o=$S/stdout
  grep -q 'tokens (T=6, lower-cased words): the=0 cat=1 sat=2 on=3 the=0 mat=4$' "$o" || fail "tokens"
  for title in '^   X$' '^   Q$' '^   K$' '^   V$' '^   scores$' '^   scaled scores$' '^   weights$' \
      '^   output$' '^   Q_2$' '^   weights_2 ' '^   concat (T, H\*dv) = (6,8)' \
      '^   output = concat W_o (T,D) = (6,8)'; do
    grep -q "$title" "$o" || fail "no table '$title'"
  done
  # X rows of the two "the": the same word, different positions, different rows.
  the=$(grep -A8 '^   X$' "$o" | grep '^   the  |')
  [[ $(echo "$the" | wc -l) -eq 2 && $(echo "$the" | sort -u | wc -l) -eq 2 ]] ||
    fail "the two 'the' rows of X should differ: $the"
  # Every weights row sums to 1 (printed to 3 decimals: within 0.003).
  grep -A7 '^   weights$' "$o" | grep '|' | awk -F'|' '{ n = split($2, v, " "); s = 0;
    for (i = 1; i <= n; i++) s += v[i]; if (n != 6 || s < 0.997 || s > 1.003) bad = 1 }
    END { exit bad || NR != 6 }' || fail "weights rows do not sum to 1"
  grep -q '^   exp(x)  *\[      inf,      inf,      inf \]  sum = inf$' "$o" || fail "naive exp"
  grep -q '^   exp(x) / sum  *\[      NaN,      NaN,      NaN \]$' "$o" || fail "naive weights"
  grep -q '^   exp(x - max) / sum  *\[        0, 3.78e-44,        1 \]$' "$o" || fail "stable weights"
  # --causal: -inf above the diagonal of the scaled scores, zeros in the weights.
  ok "$ATTN" demo self-attention --causal --heads 1 --logits 1,2,3 --sentence "a b c"
  grep -A4 '^   scaled and masked scores$' "$o" | grep -q '^   a    | .*  -inf    -inf$' ||
    fail "no -inf in the first row of the masked scores"
  grep -A4 '^   weights$' "$o" | grep -q '^   a    |   1.000   0.000   0.000$' || fail "causal weights"
  grep -q 'No exp overflows here' "$o" || fail "1,2,3 should not overflow"
  bad "--sentence: no words in '...'" "$ATTN" demo self-attention --sentence ...
  bad "--sentence has 17 words; at most 16" "$ATTN" demo self-attention --sentence \
    "a b c d e f g h i j k l m n o p q"
  bad "--logits: 'x' is not a finite float32 number" "$ATTN" demo self-attention --logits 1,x
  bad "--logits: '1e39' is not a finite float32 number" "$ATTN" demo self-attention --logits 1e39
  bad "--d-model (7) must be even" "$ATTN" demo self-attention --d-model 7
  bad "--heads (9) must be in [1, 8]" "$ATTN" demo self-attention --heads 9
  bad "unexpected argument 'extra'" "$ATTN" demo self-attention extra
  ;;

inspect_reference)
  # attn inspect against PyTorch hooks (tests/reference/make_inspect_reference.py): every tensor,
  # ids and top tokens exactly; cases.json's "cli" holds each case's flags.
  I=$REF/inspect
  n=0
  while read -r name; do
    flags=$(grep -A6 "\"name\": \"$name\"" "$I/cases.json" | sed -n 's/.*"cli": "\(.*\)".*/\1/p')
    [[ -n $flags ]] || { fail "$name: no cli flags in cases.json"; continue; }
    # shellcheck disable=SC2086
    ok "$ATTN" inspect --weights "$I/$name.weights.safetensors" $flags --output "$OUT"
    grep -q "^wrote $OUT: lens yes, attribution .*, patching at position 7 " "$S/stdout" ||
      fail "$name: stdout $(cat "$S/stdout")"
    "$CMP" "$OUT" "$I/$name.expected.safetensors" > "$S/cmp" || fail "$name: $(grep -v '^ok' "$S/cmp")"
    n=$((n + 1))
  done < <(sed -n 's/.*"name": "\([^"]*\)".*/\1/p' "$I/cases.json")
  [[ $n -ge 4 ]] || fail "only $n cases"
  # Without --corrupted and --position: the induction corruption of the repeated segment, the
  # same runs (the file's input.corrupted is the reference's).
  name=l2_rope_rmsnorm_pre_gelu
  flags=$(grep -A6 "\"name\": \"$name\"" "$I/cases.json" | sed -n 's/.*"cli": "\(--ids [^ ]* --answers [^ ]*\) .*/\1/p')
  # shellcheck disable=SC2086
  ok "$ATTN" inspect --weights "$I/$name.weights.safetensors" $flags --output "$OUT"
  "$CMP" "$OUT" "$I/$name.expected.safetensors" > "$S/cmp" || fail "default corruption: $(grep -v '^ok' "$S/cmp")"
  ;;

inspect_bad)
  # attn inspect: what does not apply is said in the file; bad input is one line, no file.
  ok "$ATTN" inspect --weights "$W" --ids 1,2,3,4,5,9,1,2,3,4,5 --output "$OUT"
  grep -q "lens no, attribution no, patching at position 9 (answer 5 vs 0), circuits (1,4,64,64)" \
    "$S/stdout" || fail "no residual stream: $(cat "$S/stdout")"
  "$CMP" --list "$OUT" > "$S/list"
  grep -q '^lens' "$S/list" && fail "lens tensors without the residual stream"
  grep -q '^circuits.ov F32 (1,4,64,64)$' "$S/list" || fail "circuits.ov: $(cat "$S/list")"
  grep -q '^patching.heads F32 (1,4,11)$' "$S/list" || fail "patching.heads: $(cat "$S/list")"
  grep -q 'residual stream' "$OUT" || fail "the lens's reason is not in the metadata"
  ok "$ATTN" inspect --weights "$W" --ids 1,2,3 --output "$OUT"
  grep -q "patching no" "$S/stdout" || fail "no repeat, no patching: $(cat "$S/stdout")"
  bad "the corrupted input has 2 tokens but the clean input has 3" \
    "$ATTN" inspect --weights "$W" --ids 1,2,3 --corrupted 1,2 --output "$OUT"
  bad "token 64 at position 1 of the input is outside the vocabulary [0, 64)" \
    "$ATTN" inspect --weights "$W" --ids 1,64,3 --output "$OUT"
  bad "token -1 at position 0 of the corrupted input is outside the vocabulary" \
    "$ATTN" inspect --weights "$W" --ids 1,2,3 --corrupted -1,2,3 --output "$OUT"
  bad "answer 70 at position 2 is outside the vocabulary [0, 64)" \
    "$ATTN" inspect --weights "$W" --ids 1,2,3 --answers 1,2,70 --output "$OUT"
  bad "the answer position (3) must be in [0, 2]" \
    "$ATTN" inspect --weights "$W" --ids 1,2,3 --corrupted 1,2,4 --position 3 --output "$OUT"
  bad "the input has 13 tokens, but the model reads 1 to 12" \
    "$ATTN" inspect --weights "$W" --ids 1,2,3,4,5,6,7,8,9,10,11,12,13 --output "$OUT"
  bad "--ids: '2x' is not a token id" "$ATTN" inspect --weights "$W" --ids 1,2x --output "$OUT"
  bad "--answers: '' is not a token id" \
    "$ATTN" inspect --weights "$W" --ids 1,2 --answers 1, --output "$OUT"
  # The sequence comes as --input FILE (ids (1,T), as for attn forward) or --ids LIST, one of them.
  bad "give --input PATH (a safetensors file with ids) or --ids LIST, one of them" \
    "$ATTN" inspect --weights "$W" --output "$OUT"
  ids64 "$S/in.st" 3 5
  bad "give --input PATH (a safetensors file with ids) or --ids LIST, one of them" \
    "$ATTN" inspect --weights "$W" --input "$S/in.st" --ids 3,5 --output "$OUT"
  ok "$ATTN" inspect --weights "$W" --input "$S/in.st" --output "$OUT"
  mv "$OUT" "$S/from-file.st"
  ok "$ATTN" inspect --weights "$W" --ids 3,5 --output "$OUT"
  "$CMP" "$S/from-file.st" "$OUT" 0 0 || fail "inspect: --input FILE and --ids differ"
  mkst "$S/two.st" '{"ids":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}' \
    '\x05\0\0\0\x07\0\0\0\x3f\0\0\0\0\0\0\0'
  bad "--input $S/two.st: ids has 2 sequences; attn inspect looks at one, (1,T)" \
    "$ATTN" inspect --weights "$W" --input "$S/two.st" --output "$OUT"
  bad "--input $REF/demo.input.safetensors: unexpected tensor \"targets\" (expected ids)" \
    "$ATTN" inspect --weights "$W" --input "$REF/demo.input.safetensors" --output "$OUT"
  bad "$S/nope.st" "$ATTN" inspect --weights "$W" --input "$S/nope.st" --output "$OUT"
  bad "unknown flag --layer" "$ATTN" inspect --weights "$W" --ids 1 --layer 2 --output "$OUT"
  bad "--position" "$ATTN" inspect --weights "$W" --ids 1 --position x --output "$OUT"
  bad "the answer token (64) is outside the vocabulary [0, 64)" \
    "$ATTN" inspect --weights "$W" --ids 1,2 --corrupted 2,2 --corrupted-answer 64 --output "$OUT"
  ;;

capstone)
  # The course's capstone preset: its parameter count on the built-in excerpt, a flag over it, its
  # file in the lesson's names, PyTorch's files of the lesson's class, and the bad inputs.
  ok "$ATTN" train --preset capstone --steps 0
  grep -q '^parameters: 154560$' "$S/stdout" || fail "capstone: $(grep parameters "$S/stdout")"
  grep -q '^# text: 999 characters (899 train, 100 validation)' "$S/stdout" ||
    fail "capstone text: $(grep '^# text' "$S/stdout")"
  ok "$ATTN" train --preset capstone --layers 1 --steps 0 --save "$S/c.st"
  grep -q '^# V=46 D=64 H=4 T=64 B=16 lr=0.0003 ' "$S/stdout" || fail "capstone header: $(head -1 "$S/stdout")"
  grep -q '^parameters: 56256$' "$S/stdout" || fail "capstone --layers 1: $(grep parameters "$S/stdout")"
  for name in tok_emb.weight lm_head.weight pos_emb.weight blocks.0.attn.qkv.weight \
    blocks.0.ffn.w2.weight norm_f.weight; do
    [[ $(header "$S/c.st") == *"\"$name\""* ]] || fail "capstone file lacks $name"
  done
  ok "$ATTN" forward --weights "$S/c.st" --ids 1,2,3 --output "$OUT"
  for f in torch.state_dict torch.save_model; do
    ok "$ATTN" forward --weights "$REF/capstone/$f.safetensors" --ids 1,2,3 --output "$OUT"
    grep -q 'logits (1,3,46)' "$S/stdout" || fail "$f: $(cat "$S/stdout")"
  done
  bad 'unknown preset "gpt" (the presets are shift,' "$ATTN" train --preset gpt --steps 0
  bad "--bias must be true or false, got 'maybe'" "$ATTN" train --bias maybe --steps 0
  patch "$REF/capstone/torch.save_model.safetensors" "$S/noheads.st" '"n_heads"' '"n_headz"'
  bad '__metadata__ has no "n_heads"' "$ATTN" forward --weights "$S/noheads.st" --ids 1 --output "$OUT"
  ;;

scaling)
  # attn scaling: one line per size (total and non-embedding parameters, bits per token), the
  # fit, the markov chain's entropy rate; --json the same numbers as one object; --chinchilla the
  # course's grid optimum and the closed form.
  sweep="$ATTN scaling --sizes 8,12,16 --steps 30 --seq-len 8 --batch 4"
  ok $sweep
  o=$S/stdout
  grep -q '^# scaling: task markov (order 2, 8 symbols), 2 layers, T 8, B 4, lr 0.003, seed 42; 30 steps, 960 tokens per model$' "$o" ||
    fail "header: $(head -1 "$o")"
  [[ $(grep -cE '^d_model (8|12|16) heads [12] params [0-9]+ non_embedding_params [0-9]+ val_bits [0-9]+\.[0-9]{4} \([0-9.]+ s\)$' "$o") -eq 3 ]] ||
    fail "run lines: $(cat "$o")"
  # D 8: 1 head; D 12: 1 (12 / 8 = 1); D 16: 2.
  grep -q '^d_model 12 heads 1 ' "$o" || fail "heads of d_model 12: $(grep '^d_model 12' "$o")"
  grep -qE '^fit A [0-9.e+-]+ alpha [0-9.]+ E [0-9.-]+ bits residual [0-9.e-]+ bits ' "$o" || fail "fit line: $(cat "$o")"
  grep -qE '^entropy_rate [0-9]\.[0-9]{4} bits per symbol ' "$o" || fail "entropy rate line: $(cat "$o")"
  params=$(sed -n 's/^d_model \([0-9]*\) heads [0-9]* params \([0-9]*\) non_embedding_params \([0-9]*\) .*/\1 \2 \3/p' "$o")
  ok $sweep --json
  [[ $(wc -l < "$o") -eq 1 ]] || fail "--json is not one line: $(cat "$o")"
  grep -qE '^\{"runs": \[\{"d_model": 8, "params": [0-9]+, "non_embedding_params": [0-9]+, "val_bits": [0-9.e-]+\}, \{"d_model": 12, .*\}\], "fit": \{"A": [0-9.e+-]+, "alpha": [0-9.e+-]+, "E": [0-9.e+-]+, "residual": [0-9.e+-]+\}, "entropy_rate": [0-9.]+\}$' "$o" ||
    fail "--json: $(cat "$o")"
  jparams=$(grep -oE '"d_model": [0-9]+, "params": [0-9]+, "non_embedding_params": [0-9]+' "$o" | sed 's/[^0-9 ]//g; s/  */ /g; s/^ //')
  [[ "$params" == "$jparams" ]] || fail "the text and JSON parameter counts differ: '$params' vs '$jparams'"
  # Another task has no entropy rate; the same seed gives the same numbers.
  ok "$ATTN" scaling --task lag --lag 3 --sizes 8,16,24 --steps 5 --seq-len 8 --batch 4 --json
  grep -q '"entropy_rate"' "$o" && fail "lag has an entropy rate: $(cat "$o")"
  cp "$o" "$S/lag1.json"
  ok "$ATTN" scaling --task lag --lag 3 --sizes 8,16,24 --steps 5 --seq-len 8 --batch 4 --json
  cmp -s "$o" "$S/lag1.json" || fail "the same sweep twice differs"
  ok "$ATTN" scaling --chinchilla 1e24
  grep -q '^grid        N 4.24757e+10 D 3.92381e+12 D/N 92.38 L 1.911204$' "$o" || fail "grid: $(cat "$o")"
  grep -q '^closed_form N 4.12967e+10 D 4.03583e+12 D/N 97.73 L 1.911195$' "$o" || fail "closed form: $(cat "$o")"
  ok "$ATTN" scaling --chinchilla 1e18 --json
  grep -qE '^\{"C": 1e\+18, "grid": \{"N": 78428[0-9.e+]*, "D": [0-9.e+]+, "D_per_N": [0-9.]+, "L": 3.53536[0-9]*\}, "closed_form": \{"N": [0-9.e+]+, "D": [0-9.e+]+, "D_per_N": [0-9.]+, "L": [0-9.]+\}\}$' "$o" ||
    fail "--chinchilla --json: $(cat "$o")"
  ok "$ATTN" scaling --help
  grep -q -- '--chinchilla C' "$o" || fail "scaling --help lacks --chinchilla"
  ;;

scaling_bad)
  # Each bad flag: one line naming it, exit 2.
  s="$ATTN scaling --steps 1 --seq-len 8 --batch 2"
  bad "--sizes: 'x' is not a model width in [2, 4096]" $s --sizes 8,x,16
  bad "--sizes: 'x' is not a model width" $s --sizes x
  bad "--sizes: the sweep needs 3 to 16 sizes to fit A, alpha and E, got 2 (8,16)" $s --sizes 8,16
  bad "--sizes: the sizes (8,16,16) repeat 16" $s --sizes 8,16,16
  bad "--sizes 7: --d-model (7) must be even" $s --sizes 7,8,16
  bad "--sizes 4096: this config needs about" $s --sizes 8,16,4096
  bad "--markov-order (4) must be in [1, 3]" $s --markov-order 4
  bad "--markov-symbols (1) must be in [2, 32]" $s --markov-symbols 1
  bad "--lag (8) must be < --seq-len (8)" $s --task lag --lag 8
  bad "--task: unknown task 'bogus'" $s --task bogus
  bad "--lr: 'x' is not a number" $s --lr x
  bad "--steps" $s --steps 0
  bad "--chinchilla: '1e5' is not a compute budget in FLOPs of at least 6e11" "$ATTN" scaling --chinchilla 1e5
  bad "--chinchilla: 'abc'" "$ATTN" scaling --chinchilla abc
  printf 'short\n' > "$S/short.txt"
  bad "--text needs --task text (the task is repeat)" $s --task repeat --text "$S/short.txt"
  bad "short.txt: the text has 6 characters, too few for seq_len 8" $s --text "$S/short.txt"
  bad "unknown flag --d-model" $s --d-model 32
  ;;

*)
  echo "unknown case $CASE"
  exit 1
  ;;
esac

[[ $fails -eq 0 ]] && echo "PASS $CASE" || echo "FAILED $CASE ($fails)"
[[ $fails -eq 0 ]]
