# Sourced by scripts/test: `phase NAME CMD...` runs one phase, times it, and stops the run on the
# first failure. The table of phases and durations is printed when the script exits, pass or fail.
phase_names=()
phase_secs=()
phase_results=()
phase_start=$SECONDS

phase() {
  local name=$1 t0=$SECONDS status=0
  shift
  echo "== $name" >&2
  "$@" || status=$?
  phase_names+=("$name")
  phase_secs+=($((SECONDS - t0)))
  if [ "$status" -eq 0 ]; then phase_results+=(ok); else phase_results+=("FAILED ($status)"); fi
  [ "$status" -eq 0 ] || exit "$status"
}

phase_table() {
  local i total=$((SECONDS - phase_start))
  [ ${#phase_names[@]} -gt 0 ] || return 0
  printf '\n%-34s %8s  %s\n' phase seconds result
  for i in "${!phase_names[@]}"; do
    printf '%-34s %8d  %s\n' "${phase_names[$i]}" "${phase_secs[$i]}" "${phase_results[$i]}"
  done
  printf '%-34s %8d  (%d min %d s)\n' total "$total" $((total / 60)) $((total % 60))
}
trap phase_table EXIT
