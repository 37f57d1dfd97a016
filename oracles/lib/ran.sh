# Sourced by the suites' run scripts: a suite counts the cases its runner
# reports (one result line each: "ok   NAME", "FAIL NAME...", "skip NAME...")
# and fails when it ran none, or fewer than its case files, whatever the
# runner's exit status (a `java` that exits 0 without running anything must
# not pass).

# count_results LOG PREFIX: prints "RAN SKIPPED": the result lines of LOG
# whose name starts with PREFIX ("" for any).
count_results() {
  local log=$1 prefix=$2 ran skipped
  ran=$(grep -cE "^(ok   |FAIL )${prefix}" "$log" || true)
  skipped=$(grep -cE "^skip ${prefix}" "$log" || true)
  echo "$ran $skipped"
}

# require_ran SUITE RAN SKIPPED WANT: prints how many cases ran; returns 1
# when none ran or RAN + SKIPPED is below WANT (the case files given).
require_ran() {
  local suite=$1 ran=$2 skipped=$3 want=$4
  echo "$suite: ran $ran of $want case files ($skipped skipped)"
  if [ "$ran" -eq 0 ] || [ $((ran + skipped)) -lt "$want" ]; then
    echo "$suite: FAIL: ran $ran and skipped $skipped of $want case files" >&2
    return 1
  fi
}
