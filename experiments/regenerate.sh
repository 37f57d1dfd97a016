#!/usr/bin/env bash
# Regenerates the committed results folders under results/ from the
# scenarios in experiments/: one `simulate run` per scenario (a scenario with
# a sweep: block runs its sweep), then the store comparison.
# Usage: ./experiments/regenerate.sh            every experiment
#        ./experiments/regenerate.sh NAME...    only these (death-spiral ...)
# (from the repository root)
# cmd/simulate's TestCommittedResultsRegenerate reruns them the same way and
# compares with the committed folders byte for byte, the wall-clock fields
# aside: two in `go test ./...`, every one with DEDUPSIM_REGENERATE=all. Keep
# its list of experiments (every experiments/*.yaml but production-day) and
# this one the same.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/simulate
go build -o "$bin" ./cmd/simulate
if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for f in experiments/*.yaml; do
    # production-day runs for a long time (not in CI, no committed results).
    [ "$(basename "$f" .yaml)" = production-day ] && continue
    names+=("$(basename "$f" .yaml)")
  done
fi
for name in "${names[@]}"; do
  if [ ! -f "experiments/$name.yaml" ]; then
    echo "regenerate.sh: no experiments/$name.yaml" >&2
    exit 2
  fi
  echo "== $name" >&2
  if [ "$name" = store-comparison ]; then
    "$bin" bench-stores experiments/store-comparison.yaml --quiet --out results/store-comparison >/dev/null
  else
    "$bin" run "experiments/$name.yaml" --quiet --out "results/$name" >/dev/null
  fi
  if [ "$name" = capacity-plan ]; then
    # The review document of plan --out, inside the run's folder (the run
    # replaces the folder, so it comes after). Exit 2 would mean no plan.
    "$bin" plan experiments/capacity-plan.yaml --query within-watermark --max-missed-rate 0.1% \
      --production-rate 20000/s --seeds 2 --partitions 200 --executors 4 --cores-per-executor 4 \
      --quiet --out results/capacity-plan/review >/dev/null
  fi
done
